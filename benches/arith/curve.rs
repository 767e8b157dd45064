//! `arith curve`: mixed additions and doublings per second of each group on the curve VM,
//! beside the base field's multiplication rate measured in the same run (the kernel's ceiling),
//! and arkworks on all CPU cores. GPU results are checked against arkworks first.

use std::time::Instant;

use ark_ec::{AdditiveGroup, CurveGroup};
use ark_ff::{UniformRand, Zero};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use clap::Args;
use rayon::prelude::*;
use zkgpu_curves::{GpuCurve, decode_projective, encode_affine_packed, encode_projective};
use zkgpu_kernels::curve::{CurveVm, VmJob};
use zkgpu_kernels::field::FieldKernels;
use zkgpu_runtime::{Checks, GpuContext};

use crate::{ChecksArg, parse_group};
use zkgpu_curves::Group;

/// Arguments of `arith curve`.
#[derive(Args, Debug)]
pub struct CurveArgs {
    /// Groups to run (repeatable); all five by default.
    #[arg(long, value_parser = parse_group)]
    curve: Vec<Group>,
    /// log2 of the number of invocations [default: 16 on a GPU, 8 on a software adapter].
    #[arg(long)]
    log_n: Option<u32>,
    /// Formula applications per invocation [default: 64 on a GPU, 8 on a software adapter].
    #[arg(long)]
    steps: Option<u32>,
    /// Timed runs after a warm-up; the median is reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Shader runtime checks.
    #[arg(long, value_enum, default_value = "both")]
    checks: ChecksArg,
    /// Invocations per workgroup (repeatable: one table block each).
    #[arg(long, default_value = "64")]
    workgroup_size: Vec<u32>,
    /// Keep the GPU busy this long before each timed series (`GpuContext::warm_clock`): the
    /// arkworks chains between them leave it idle, and an idle GPU drops its clock
    /// [default: 1000 on a GPU, 0 on a software adapter].
    #[arg(long)]
    clock_warmup_ms: Option<u64>,
}

struct Row {
    id: &'static str,
    workgroup_size: u32,
    op: &'static str,
    checks: Checks,
    pipeline_s: f64,
    gpu_rate: f64,
    muls: usize,
    field_rate: f64,
    cpu_rate: f64,
}

/// Per invocation: an accumulator from `init`, then `steps` mixed additions of stream points.
fn madd_job<'a, C: GpuCurve>(init: &'a [u32], stream: &'a [u32], steps: u32) -> VmJob<'a> {
    let acc_regs = CurveVm::<C>::acc_regs();
    VmJob {
        entry: "madd",
        init,
        n_load: acc_regs,
        stream_regs: CurveVm::<C>::affine_regs(),
        stream_reg: acc_regs,
        stream,
        steps,
        n_store: acc_regs,
    }
}

/// Base-field multiplications of one general-case application of `entry`.
fn muls_of<C: GpuCurve>(entry: &str, rng: &mut StdRng) -> usize {
    // Every arithmetic's program multiplies as often (they differ in additions only).
    let prog = C::program(zkgpu_curves::Arith::Portable);
    let mut regs = vec![<C::Base as Zero>::zero(); prog.n_regs as usize];
    let mut r = Vec::new();
    C::projective_regs(&C::Projective::rand(rng), &mut r);
    C::affine_regs(&C::Projective::rand(rng).into_affine(), &mut r);
    regs[..r.len()].copy_from_slice(&r);
    prog.run_cpu(entry, &mut regs).map_or(0, |s| s.muls)
}

/// The base field's multiplication rate on this device, measured first and long enough for
/// the clocks to ramp up: the ceiling of every formula.
fn field_rate(
    ctx: &GpuContext,
    field: zkgpu_shaders::FieldModule,
    runs: usize,
) -> Result<f64, Box<dyn std::error::Error>> {
    let fk = FieldKernels::new(ctx, field);
    let fw = field.words() as usize;
    let software = ctx.info().device_type == zkgpu_runtime::wgpu::DeviceType::Cpu;
    let (elems, reps) = if software {
        (1usize << 10, 16)
    } else {
        (1usize << 20, 256)
    };
    // Throughput inputs only (not checked): pseudo-random limbs, top limb zero (so below 2p).
    let fa: Vec<u32> = (0..elems * fw)
        .map(|i| {
            if i % fw == fw - 1 {
                0
            } else {
                (i as u32).wrapping_mul(2_654_435_761) % 8191
            }
        })
        .collect();
    Ok(
        pollster::block_on(fk.bench_mul_chain(&fa, &fa, reps, runs.max(3), Checks::Default))?
            .mults_per_second,
    )
}

/// The chains of the benchmark: `n` accumulators starting at a pool's points, each adding
/// `steps` of the pool's affine points (cycled), or doubling `steps` times.
struct Chains<C: GpuCurve> {
    pool: Vec<C::Affine>,
    starts: Vec<C::Projective>,
    steps: usize,
}

impl<C: GpuCurve> Chains<C> {
    fn madd(&self, i: usize) -> C::Projective {
        let records = self.pool.len();
        (0..self.steps).fold(self.starts[i], |acc, s| {
            acc + self.pool[(i * self.steps + s) % records]
        })
    }

    fn dbl(&self, i: usize) -> C::Projective {
        (0..self.steps).fold(self.starts[i], |acc, _| acc.double())
    }

    /// arkworks' rates (chain steps per second) for the madd and the doubling chains, on
    /// every core, over a slice of the work.
    fn cpu_rates(&self, n: usize) -> (f64, f64) {
        let chains = n.min(1 << 12);
        let rate = |f: &(dyn Fn(usize) -> C::Projective + Sync)| {
            let t = Instant::now();
            let sums: Vec<C::Projective> = (0..chains).into_par_iter().map(f).collect();
            std::hint::black_box(sums);
            (chains * self.steps) as f64 / t.elapsed().as_secs_f64()
        };
        (rate(&|i| self.madd(i)), rate(&|i| self.dbl(i)))
    }
}

/// A job's `dbl` twin: the same accumulators, no stream.
fn dbl_of(job: VmJob<'_>) -> VmJob<'_> {
    VmJob {
        entry: "dbl",
        stream_regs: 0,
        stream_reg: 0,
        stream: &[],
        ..job
    }
}

/// What every group's benchmark runs with.
struct Setup<'a> {
    ctx: &'a GpuContext,
    workgroup_size: u32,
    n: u32,
    steps: u32,
    runs: usize,
    checks: &'a [Checks],
    warmup: std::time::Duration,
}

impl Setup<'_> {
    /// Raises the GPU's clock before a timed series.
    fn warm(&self) -> Result<(), Box<dyn std::error::Error>> {
        Ok(pollster::block_on(self.ctx.warm_clock(self.warmup))?)
    }
}

fn bench_curve<C: GpuCurve>(s: &Setup<'_>) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let Setup {
        ctx,
        workgroup_size,
        n,
        steps,
        runs,
        checks,
        ..
    } = *s;
    s.warm()?;
    let field_rate = field_rate(ctx, C::GROUP.field(), runs)?;
    let mut rng = StdRng::seed_from_u64(7);
    let vm = CurveVm::<C>::with_workgroup_size(ctx, workgroup_size)?;
    let records = 256usize;
    let pool: Vec<C::Projective> = (0..records)
        .map(|_| C::Projective::rand(&mut rng))
        .collect();
    let chains = Chains::<C> {
        pool: C::Projective::normalize_batch(&pool),
        // Starting accumulators: the pool's points, cycled.
        starts: (0..n as usize).map(|i| pool[i % records]).collect(),
        steps: steps as usize,
    };
    let stream = encode_affine_packed::<C>(&chains.pool);
    let init = encode_projective::<C>(&chains.starts);
    let madd_job = |init| madd_job::<C>(init, &stream, steps);
    // Correctness of a sample (the first 4 invocations) against arkworks.
    let small = &init[..4 * C::acc_words()];
    for &c in checks {
        for (op, job) in [
            ("madd", madd_job(small)),
            ("doubling", dbl_of(madd_job(small))),
        ] {
            let out = decode_projective::<C>(&pollster::block_on(vm.exec(&job, c))?)?;
            for (i, got) in out.iter().enumerate() {
                let want = if op == "madd" {
                    chains.madd(i)
                } else {
                    chains.dbl(i)
                };
                if *got != want {
                    return Err(format!(
                        "{}: GPU {op} chain {i} differs from arkworks ({c:?})",
                        C::ID
                    )
                    .into());
                }
            }
        }
    }
    let (cpu_madd, cpu_dbl) = chains.cpu_rates(n as usize);
    let madd_muls = muls_of::<C>("madd", &mut rng);
    let dbl_muls = muls_of::<C>("dbl", &mut rng);
    let mut rows = Vec::new();
    for &c in checks {
        s.warm()?;
        let madd = pollster::block_on(vm.bench(&madd_job(&init), runs, c))?;
        s.warm()?;
        let dbl = pollster::block_on(vm.bench(&dbl_of(madd_job(&init)), runs, c))?;
        for (op, r, muls, cpu) in [
            ("madd", madd, madd_muls, cpu_madd),
            ("dbl", dbl, dbl_muls, cpu_dbl),
        ] {
            eprintln!("  {} {op} {c:?}: {:.3e}/s", C::ID, r.ops_per_second);
            rows.push(Row {
                id: C::ID,
                workgroup_size,
                op,
                checks: c,
                pipeline_s: r.pipeline_seconds,
                gpu_rate: r.ops_per_second,
                muls,
                field_rate,
                cpu_rate: cpu,
            });
        }
    }
    Ok(rows)
}

/// `arith curve`.
pub fn run(args: &CurveArgs) -> Result<(), Box<dyn std::error::Error>> {
    let ctx = GpuContext::from_env_blocking()?;
    let software = ctx.info().device_type == zkgpu_runtime::wgpu::DeviceType::Cpu;
    let log_n = args.log_n.unwrap_or(if software { 8 } else { 16 });
    if log_n > 24 {
        return Err("--log-n must be at most 24".into());
    }
    let steps = args.steps.unwrap_or(if software { 8 } else { 64 });
    if steps == 0 {
        return Err("--steps must be at least 1".into());
    }
    let checks: Vec<Checks> = match args.checks {
        ChecksArg::Default => vec![Checks::Default],
        ChecksArg::Trusted => vec![Checks::TrustedLoops],
        ChecksArg::Both => vec![Checks::Default, Checks::TrustedLoops],
    };
    let curves = if args.curve.is_empty() {
        Group::ALL.to_vec()
    } else {
        args.curve.clone()
    };
    let n = 1u32 << log_n;
    eprintln!(
        "adapter: {} ({:?}); {n} invocations x {steps} steps; arkworks on {} CPU threads",
        ctx.info().name,
        ctx.info().backend,
        rayon::current_num_threads()
    );
    let warmup_ms = args
        .clock_warmup_ms
        .unwrap_or(if software { 0 } else { 1000 });
    let mut rows = Vec::new();
    for &wg in &args.workgroup_size {
        for &c in &curves {
            let setup = Setup {
                ctx: &ctx,
                workgroup_size: wg,
                n,
                steps,
                runs: args.runs,
                checks: &checks,
                warmup: std::time::Duration::from_millis(warmup_ms),
            };
            let r = zkgpu_curves::with_group!(c, C => bench_curve::<C>(&setup))?;
            rows.extend(r);
        }
    }
    println!();
    println!("adapter: {} ({:?})", ctx.info().name, ctx.info().backend);
    println!(
        "{:<16} {:>4} {:>5} {:>8} {:>9} {:>11} {:>6} {:>12} {:>11} {:>7} {:>11} {:>8}",
        "group",
        "wg",
        "op",
        "checks",
        "pipeline",
        "gpu op/s",
        "muls",
        "implied m/s",
        "field m/s",
        "of fld",
        "cpu op/s",
        "gpu/cpu"
    );
    for r in &rows {
        let implied = r.gpu_rate * r.muls as f64;
        println!(
            "{:<16} {:>4} {:>5} {:>8} {:>8.3}s {:>11.3e} {:>6} {:>12.3e} {:>11.3e} {:>6.1}% {:>11.3e} {:>8.1}",
            r.id,
            r.workgroup_size,
            r.op,
            match r.checks {
                Checks::Default => "default",
                Checks::TrustedLoops => "trusted",
            },
            r.pipeline_s,
            r.gpu_rate,
            r.muls,
            implied,
            r.field_rate,
            100.0 * implied / r.field_rate,
            r.cpu_rate,
            r.gpu_rate / r.cpu_rate
        );
    }
    println!(
        "muls: base-field multiplications per operation (general case); implied m/s: op/s x muls; \
         field m/s: the base field's multiplication chain measured in this run; of fld: their ratio. \
         GPU results were checked against arkworks."
    );
    Ok(())
}
