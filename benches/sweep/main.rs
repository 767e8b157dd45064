//! `sweep`: the MSM's automatic choices against the plain layout, and adversarial scalars
//! against uniform ones, over groups, sizes and scalar patterns, in one run: every group x
//! n x {plain, auto} x {uniform, equal, few, skewed}. A cell where the planner's layout is
//! measured slower than the plain one by more than 5%, or a pattern costs more than 1.2
//! times uniform scalars on the same layout, is marked and makes the run fail. Every result
//! of the auto layout equals the plain one's, and arkworks' up to `--check-max`.
//!
//! `cargo run --release -p zkgpu-benches --bin sweep -- --log-n 16,18,20 [--group ...]`

#![allow(clippy::print_stdout)]

use std::process::ExitCode;
use std::time::Instant;

use ark_ec::VariableBaseMSM;
use ark_ff::UniformRand;
use ark_std::rand::{Rng, SeedableRng, rngs::StdRng};
use clap::Parser;
use zkgpu_curves::{GpuCurve, Group};
use zkgpu_msm::{GpuMsm, MsmRequest, PreparedBases};
use zkgpu_runtime::{BlockOn, GpuContext};
use zkgpu_testing::distinct_bases;

/// Most a layout chosen by the planner may be measured slower than the plain one.
const AUTO_SLACK: f64 = 1.05;
/// Most a scalar pattern may cost over uniform scalars on the same layout.
const PATTERN_SLACK: f64 = 1.2;
/// GPU work before each size's first cell.
const CLOCK_WARMUP: std::time::Duration = std::time::Duration::from_millis(500);

#[derive(Parser, Debug)]
#[command(
    name = "sweep",
    about = "The MSM planner and scalar patterns, against the plain layout"
)]
struct Args {
    /// Groups (repeatable; every group by default).
    #[arg(long, value_parser = Group::from_name)]
    group: Vec<Group>,
    /// log2 sizes, comma-separated [default: 16,18,20,22,24 on a GPU, 8,10 on a software adapter].
    #[arg(long, value_delimiter = ',')]
    log_n: Vec<u32>,
    /// Timed runs per cell and layout (at least 15 up to 2^16 points, 7 up to 2^18); the
    /// median is reported.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Largest log2 size checked against arkworks (the auto layout is always checked against
    /// the plain one).
    #[arg(long, default_value_t = 16)]
    check_max: u32,
    /// Measure the planner's cost model on the device first (`GpuMsm::calibrate`).
    #[arg(long)]
    calibrate: bool,
}

const PATTERNS: [&str; 4] = ["uniform", "equal", "few", "skewed"];

/// `n` scalars of a pattern: uniform, all one value, 16 distinct values, or 80% zero or one.
fn scalars<C: GpuCurve>(pattern: &str, n: usize, rng: &mut StdRng) -> Vec<C::Scalar> {
    let few: Vec<C::Scalar> = (0..16).map(|_| C::Scalar::rand(rng)).collect();
    (0..n)
        .map(|_| match pattern {
            "equal" => few[0],
            "few" => few[rng.gen_range(0..16)],
            "skewed" if rng.gen_bool(0.8) => C::Scalar::from(rng.gen_range(0..2u64)),
            _ => C::Scalar::rand(rng),
        })
        .collect()
}

/// A layout's median seconds and its result.
type Timed<C> = (f64, <C as GpuCurve>::Projective);

/// The median end-to-end seconds of `runs` MSMs on each of `plain` and `auto` (after a
/// warm-up of both), timed alternately so that a clock change or a first-use cost falls on
/// both alike, and their results, each checked equal across its runs.
fn time_pair<C: GpuCurve>(
    msm: &GpuMsm<C>,
    plain: &PreparedBases<C>,
    auto: &PreparedBases<C>,
    s: &[C::Scalar],
    runs: usize,
) -> Result<[Timed<C>; 2], Box<dyn std::error::Error>> {
    let run = |bases: &PreparedBases<C>| -> Result<(f64, C::Projective), zkgpu_msm::MsmError> {
        let start = Instant::now();
        let sum = msm.run(MsmRequest::new(bases, s))?.sum()?;
        Ok((start.elapsed().as_secs_f64(), sum))
    };
    let layouts = [plain, auto];
    let first = [run(plain)?.1, run(auto)?.1];
    let mut times = [Vec::new(), Vec::new()];
    for _ in 0..runs.max(1) {
        for (k, bases) in layouts.iter().enumerate() {
            let (secs, got) = run(bases)?;
            if got != first[k] {
                return Err("results differ between runs".into());
            }
            times[k].push(secs);
        }
    }
    let median = |mut t: Vec<f64>| {
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    let [tp, ta] = times;
    Ok([(median(tp), first[0]), (median(ta), first[1])])
}

/// Timed runs for `n` points: at least `runs`, more for small MSMs, whose few milliseconds
/// vary more from run to run.
fn runs_for(n: usize, runs: usize) -> usize {
    match n {
        0..=65_536 => runs.max(15),
        65_537..=262_144 => runs.max(7),
        _ => runs,
    }
}

/// One group over every size: its table rows and whether every cell held.
fn sweep_group<C: GpuCurve>(
    ctx: &GpuContext,
    args: &Args,
    sizes: &[u32],
) -> Result<bool, Box<dyn std::error::Error>>
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let msm = GpuMsm::<C>::new(ctx)?;
    if args.calibrate {
        msm.calibrate().block_on()?;
    }
    let mut ok = true;
    let mut rng = StdRng::seed_from_u64(7);
    for &log in sizes {
        let n = 1usize << log;
        let bases = distinct_bases::<C>(n, &mut rng);
        let plan = msm.plan(n, 1);
        let plain = msm.prepare(&bases)?;
        let auto = msm.prepare_sets_planned(&[&bases]).block_on()?;
        // The GPU idled while the host made and prepared the bases: bring its clock up
        // before the first (uniform) cell, the base of every pattern's ratio. Without it the
        // 2^16 uniform cells read 1.3-2x direct runs (docs/log/2026-11-28-first-calls.md).
        msm.warm_clock(CLOCK_WARMUP).block_on()?;
        let mut base_time = [0.0f64; 2];
        for pattern in PATTERNS {
            let s = scalars::<C>(pattern, n, &mut rng);
            let [(tp, rp), (ta, ra)] = time_pair(&msm, &plain, &auto, &s, runs_for(n, args.runs))?;
            let mut notes = Vec::new();
            if ra != rp {
                notes.push("AUTO DIFFERS FROM PLAIN".to_owned());
            }
            if log <= args.check_max
                && rp != C::Projective::msm(&bases, &s).map_err(|e| format!("{e}"))?
            {
                notes.push("DIFFERS FROM ARKWORKS".to_owned());
            }
            if pattern == "uniform" {
                base_time = [tp, ta];
            }
            if ta > AUTO_SLACK * tp {
                notes.push(format!("auto slower than plain ({:.2}x)", ta / tp));
            }
            for (label, t, b) in [("plain", tp, base_time[0]), ("auto", ta, base_time[1])] {
                if t > PATTERN_SLACK * b {
                    notes.push(format!("{label} {pattern} {:.2}x uniform", t / b));
                }
            }
            ok &= notes.is_empty();
            println!(
                "| {} | 2^{log} | {pattern} | {:.3} | {} levels, c = {} | {:.3} | {:.3} | {:.2} | {:.2} | {} |",
                C::ID,
                tp * 1e3,
                plan.layout().folds,
                plan.layout().window_bits,
                ta * 1e3,
                ta / tp,
                tp / base_time[0],
                ta / base_time[1],
                if notes.is_empty() {
                    "ok".to_owned()
                } else {
                    notes.join("; ")
                }
            );
        }
    }
    Ok(ok)
}

fn main() -> ExitCode {
    let args = Args::parse();
    let result = (|| -> Result<bool, Box<dyn std::error::Error>> {
        let ctx = GpuContext::from_env_blocking()?;
        let sizes = if args.log_n.is_empty() {
            if ctx.is_software() {
                vec![8, 10]
            } else {
                vec![16, 18, 20, 22, 24]
            }
        } else {
            args.log_n.clone()
        };
        let groups = if args.group.is_empty() {
            Group::ALL.to_vec()
        } else {
            args.group.clone()
        };
        println!(
            "adapter: {} ({:?}), {} arithmetic; end-to-end ms, median of at least {} runs a \
             layout, plain and auto alternated",
            ctx.info().name,
            ctx.info().backend,
            ctx.arith(),
            args.runs
        );
        println!(
            "| group | n | scalars | plain ms | auto layout | auto ms | auto/plain | plain/uniform | auto/uniform | check |"
        );
        println!("|---|---|---|---|---|---|---|---|---|---|");
        let mut ok = true;
        for g in groups {
            ok &= zkgpu_curves::with_group!(g, C => sweep_group::<C>(&ctx, &args, &sizes))?;
        }
        Ok(ok)
    })();
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("sweep: some cells broke a bar (marked above)");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
