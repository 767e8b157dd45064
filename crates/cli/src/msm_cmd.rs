//! `zkgpu msm`: one MSM on the GPU against arkworks on the CPU cores, same inputs, checked,
//! with a per-stage breakdown. Exits non-zero when the results differ.

use std::time::Instant;
use zkgpu_curves::distinct_bases;
use zkgpu_msm::{MsmOutput, MsmRequest};
use zkgpu_runtime::BlockOn;

use ark_ec::VariableBaseMSM;
use ark_ff::{PrimeField, UniformRand};
use ark_std::rand::{Rng, SeedableRng, rngs::StdRng};
use clap::{Args, ValueEnum};
use zkgpu_curves::{GpuCurve, Group};
use zkgpu_msm::{Fold, GpuMsm, MsmConfig, MsmTimings};
use zkgpu_runtime::GpuContext;

#[path = "msm_devices.rs"]
mod devices;
#[path = "msm_plan.rs"]
mod plan;

pub(crate) type BoxError = Box<dyn std::error::Error>;

/// A group by its name (`zkgpu_curves::Group::name`), for clap; a curve's name alone (as
/// `prove --curve` and `ntt --curve` take it, snarkjs' `bn128` too) means its G1.
pub fn parse_group(name: &str) -> Result<Group, String> {
    let name = name.to_lowercase().replace('_', "-");
    let name = name
        .strip_prefix("bn128")
        .map_or(name.clone(), |rest| format!("bn254{rest}"));
    match zkgpu_groth16::Pairing::from_name(&name) {
        Ok(p) => Ok(p.g1()),
        Err(_) => Group::from_name(&name),
    }
}

/// Scalar distributions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Distribution {
    /// Uniform in the scalar field.
    Uniform,
    /// 0/1-heavy, like real circuits' witnesses: 80% zero or one, the rest uniform.
    Skewed,
    /// Every scalar the same uniform value (a constant column): every point in one bucket of
    /// each window.
    Equal,
    /// 16 distinct uniform values, repeated (a witness with few distinct values).
    Few,
}

/// Arguments of `zkgpu msm`.
#[derive(Args, Clone, Debug)]
pub struct MsmArgs {
    /// The group.
    #[arg(long, value_parser = parse_group, default_value = "bls12-381-g1")]
    curve: Group,
    /// log2 of the number of points.
    #[arg(long, default_value_t = 16)]
    log_n: u32,
    /// Scalar distribution.
    #[arg(long, value_enum, default_value = "uniform")]
    distribution: Distribution,
    /// Window width in bits [default: from n].
    #[arg(long)]
    window_bits: Option<u32>,
    /// Bucket-reduction segments per window [default: about 16384 / windows, at least 4
    /// buckets each].
    #[arg(long)]
    reduce_segments: Option<u32>,
    /// Most entries one invocation accumulates [default: 4 n / 2^(c-1), at least entries / 2^18
    /// within 16..=48, at most 192].
    #[arg(long)]
    chunk: Option<u32>,
    /// Entries per chunk of a large bucket (more than chunk x chunk-group entries and eight
    /// mean buckets) [default: chunk / (2 x the group's extension degree), at least 16].
    #[arg(long)]
    large_chunk: Option<u32>,
    /// Segment sums per invocation and level of the reduction's tree [default: 4].
    #[arg(long)]
    tree_group: Option<u32>,
    /// Chunk sums per invocation and level of a large bucket's tree [default: 4,
    /// `zkgpu_msm::DEFAULT_CHUNK_GROUP`].
    #[arg(long)]
    chunk_group: Option<u32>,
    /// Scalars of at most this many bits (uniform below 2^bits, or the skewed mix with its
    /// uniform part so bounded), and the MSM told so (`MsmConfig::scalar_bits`: fewer
    /// windows). E.g. 128: the half-width scalars of a GLV decomposition. [default: the
    /// field's]
    #[arg(long)]
    scalar_bits: Option<u32>,
    /// Timed GPU runs after a warm-up; the median is reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Base sets sharing the scalars (one `GpuMsm::run` over prepared sets, as Groth16's A, B and L): times one
    /// MSM over this many sets of n points against as many separate MSMs, in the same run,
    /// and checks every set against arkworks.
    #[arg(long, default_value_t = 1)]
    sets: usize,
    /// Fold the windows: store this many window multiples of every base
    /// (`GpuMsm::prepare_sets_folded`), so fewer bucket windows are reduced; 0 lets the
    /// planner choose levels and width (`GpuMsm::plan`); 1 stores the bases only.
    #[arg(long, default_value_t = 1)]
    folds: u32,
    /// Untimed MSMs for at least this long before the timed runs, so that they run at the
    /// GPU's working clock: an idle GPU drops its clock (the H100 from 1980 to 345 MHz) and
    /// needs a few hundred milliseconds of work to raise it. 0 times a cold clock.
    #[arg(long, default_value_t = 1000)]
    clock_warmup_ms: u64,
    /// Split the MSM across these devices (`all` suitable adapters, a count, or
    /// `adapters:I,J,...`, numbers of `zkgpu info`), in proportion to their speed measured on
    /// a sample, and time it against the first device alone in the same run.
    #[arg(long)]
    devices: Option<zkgpu_runtime::DeviceChoice>,
    /// Store the bases in parts of at most this many points (`GpuMsm::with_max_part`), below
    /// what a binding holds: runs the two-part paths (one MSM over two parts where the device
    /// binds eight storage buffers to a kernel, as WebGPU guarantees) at small sizes, to time
    /// them or their pipelines.
    #[arg(long)]
    max_part: Option<usize>,
    /// Print the planner's candidate layouts with their predicted times (the cost model
    /// measured first, `GpuMsm::calibrate`), and measure the plain, the chosen and the next
    /// best ones.
    #[arg(long)]
    plan: bool,
    /// Print every compute pass's GPU time of the median timed run (which dispatch of a
    /// stage takes the time).
    #[arg(long)]
    passes: bool,
    /// Where the pipeline cache and the planner's measured cost model are kept
    /// (`pipelines/` below it) [default: `$ZKGPU_CACHE`, else ~/.cache/zkgpu;
    /// `ZKGPU_PIPELINE_CACHE` names the pipeline cache itself].
    #[arg(long)]
    cache_dir: Option<std::path::PathBuf>,
}

/// The engine the flags ask for.
fn engine<C: GpuCurve>(ctx: &GpuContext, args: &MsmArgs) -> Result<GpuMsm<C>, BoxError> {
    let msm = GpuMsm::<C>::new(ctx)?;
    Ok(match args.max_part {
        Some(points) => msm.with_max_part(points),
        None => msm,
    })
}

/// The MSM configuration the flags ask for.
fn config_of(args: &MsmArgs) -> MsmConfig {
    MsmConfig {
        window_bits: args.window_bits,
        reduce_segments: args.reduce_segments,
        chunk: args.chunk,
        large_chunk: args.large_chunk,
        scalar_bits: args.scalar_bits,
        tree_group: args.tree_group,
        chunk_group: args.chunk_group,
        ..MsmConfig::from_env()
    }
}

/// The bases as `--folds` asks (with `--window-bits` as the folding's width).
fn prepare_folded<C: GpuCurve>(
    msm: &GpuMsm<C>,
    sets: &[&[C::Affine]],
    args: &MsmArgs,
) -> Result<zkgpu_msm::PreparedBases<C>, zkgpu_msm::MsmError> {
    if args.folds == 0 {
        return msm.prepare_sets_planned(sets).block_on();
    }
    msm.prepare_sets_folded(
        sets,
        Fold {
            folds: args.folds,
            window_bits: args.window_bits,
        },
    )
    .block_on()
}

/// Every pass of a timed MSM, in order.
fn print_passes(tm: &MsmTimings) {
    for (k, p) in tm.passes.iter().enumerate() {
        println!(
            "pass {k:2} {} {}: {:.3} ms",
            p.stage,
            p.dispatch,
            p.seconds * 1e3
        );
    }
}

/// The per-stage table of one MSM's timings, in ms.
fn print_stages(title: &str, tm: &MsmTimings) {
    println!("{title:<34} {:>12}", "ms");
    let scalars = if tm.scalars_on_gpu {
        "host: scalars copied, GPU converts"
    } else {
        "host: scalars converted to staging"
    };
    for (name, s) in [
        (scalars, tm.host_scalars),
        ("host: passes recorded (beside)", tm.upload),
        ("gpu: digits + histogram", tm.digits),
        ("gpu: bucket offsets (scan)", tm.scan),
        ("gpu: scatter into buckets", tm.scatter),
        ("gpu: bucket accumulation (chunks)", tm.accumulate),
        ("gpu: chunk sums per bucket", tm.combine),
        ("gpu: bucket reduction", tm.reduce),
        ("gpu total (submit to readback)", tm.gpu_total),
        ("host: combine windows", tm.host_combine),
    ] {
        println!("{name:<34} {:>12.3}", s * 1e3);
    }
}

/// `n` scalars of `--scalar-bits` bits (uniform below `2^bits`), in `--distribution`.
fn scalars_of<C: GpuCurve>(
    args: &MsmArgs,
    n: usize,
    rng: &mut StdRng,
) -> Result<Vec<C::Scalar>, BoxError> {
    let field_bits = C::Scalar::MODULUS_BIT_SIZE;
    let bits = args.scalar_bits.unwrap_or(field_bits);
    if !(1..=field_bits).contains(&bits) {
        return Err(format!("--scalar-bits {bits} is outside 1..={field_bits}").into());
    }
    let uniform = |rng: &mut StdRng| {
        if bits == field_bits {
            C::Scalar::rand(rng)
        } else {
            // Uniform below 2^bits: random limbs, masked.
            let mut limbs = <C::Scalar as PrimeField>::BigInt::rand(rng);
            let words = limbs.as_mut();
            for (k, w) in words.iter_mut().enumerate() {
                let lo = 64 * k as u32;
                if lo >= bits {
                    *w = 0;
                } else if bits - lo < 64 {
                    *w &= (1u64 << (bits - lo)) - 1;
                }
            }
            C::Scalar::from_bigint(limbs).unwrap_or_default()
        }
    };
    let few: Vec<C::Scalar> = (0..16).map(|_| uniform(rng)).collect();
    Ok((0..n)
        .map(|_| match args.distribution {
            Distribution::Uniform => uniform(rng),
            Distribution::Equal => few[0],
            Distribution::Few => few[rng.gen_range(0..few.len())],
            Distribution::Skewed => {
                if rng.gen_bool(0.8) {
                    C::Scalar::from(rng.gen_range(0..2u64))
                } else {
                    uniform(rng)
                }
            }
        })
        .collect())
}

/// The MSM's result from a warm-up (which builds the pipelines), then `--clock-warmup-ms` of
/// MSMs, then `--runs` pairs of runs: one end to end without timestamp queries (what users
/// call), one with the stage profile. The result, and the median run's wall time and
/// profile.
pub(crate) fn timed_runs<C: GpuCurve>(
    msm: &GpuMsm<C>,
    prepared: &zkgpu_msm::PreparedBases<C>,
    scalars: &[C::Scalar],
    args: &MsmArgs,
) -> Result<(C::Projective, f64, MsmTimings), BoxError> {
    let config = config_of(args);
    let request = || MsmRequest::new(prepared, scalars).config(config);
    eprintln!("warm-up (builds the pipelines) ...");
    let (gpu_result, _) = msm.run(request().timed()).and_then(MsmOutput::sum_timed)?;
    let t = Instant::now();
    while t.elapsed().as_millis() < u128::from(args.clock_warmup_ms) {
        msm.run(request()).and_then(MsmOutput::sum)?;
    }
    let mut runs: Vec<(f64, MsmTimings)> = Vec::new();
    for _ in 0..args.runs.max(1) {
        let t = Instant::now();
        let r = msm.run(request()).and_then(MsmOutput::sum)?;
        let wall = t.elapsed().as_secs_f64();
        let (r2, timings) = msm.run(request().timed()).and_then(MsmOutput::sum_timed)?;
        runs.push((wall, timings));
        if r != gpu_result || r2 != gpu_result {
            return Err("GPU results differ between runs".into());
        }
    }
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (gpu_s, tm) = runs.swap_remove(runs.len() / 2);
    Ok((gpu_result, gpu_s, tm))
}

/// arkworks' MSM of each base set with `scalars`, and its seconds.
pub(crate) fn arkworks<C: GpuCurve>(
    sets: &[&[C::Affine]],
    scalars: &[C::Scalar],
) -> Result<(Vec<C::Projective>, f64), BoxError>
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    eprintln!("arkworks on {} threads ...", rayon::current_num_threads());
    let t = Instant::now();
    let sums = sets
        .iter()
        .map(|s| <C::Projective as VariableBaseMSM>::msm(s, scalars))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("arkworks: {e}"))?;
    Ok((sums, t.elapsed().as_secs_f64()))
}

/// One line of the table: a label and milliseconds.
fn row_ms(label: &str, seconds: f64) {
    println!("{label:<34} {:>12.3}", seconds * 1e3);
}

/// The closing line: whether the GPU's result is arkworks'.
fn verdict(ok: bool) -> bool {
    let what = if ok {
        "matches arkworks"
    } else {
        "DIFFERS from arkworks"
    };
    println!("result {what}");
    ok
}

fn run_one<C: GpuCurve>(ctx: &GpuContext, args: &MsmArgs) -> Result<bool, BoxError>
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let n = 1usize << args.log_n;
    let mut rng = StdRng::seed_from_u64(42);
    eprintln!("generating {n} bases and scalars ...");
    let t = Instant::now();
    let bases = distinct_bases::<C>(n, &mut rng);
    let scalars = scalars_of::<C>(args, n, &mut rng)?;
    eprintln!("  {:.1} s", t.elapsed().as_secs_f64());
    if args.sets > 1 {
        return run_sets::<C>(ctx, args, bases, &scalars);
    }
    let msm = engine::<C>(ctx, args)?;
    if args.plan {
        return plan::run_plan(&msm, &bases, &scalars, args);
    }
    eprintln!("preparing bases ...");
    let t = Instant::now();
    let prepared = prepare_folded(&msm, &[&bases], args)?;
    ctx.wait()?;
    let prepare_s = t.elapsed().as_secs_f64();
    let (gpu_result, gpu_s, tm) = timed_runs(&msm, &prepared, &scalars, args)?;
    let (cpu_result, cpu_s) = arkworks::<C>(&[&bases], &scalars)?;

    println!("adapter: {} ({:?})", ctx.info().name, ctx.info().backend);
    println!(
        "msm {} n = 2^{} ({n}), {:?} scalars, c = {}, {} reduction segments/window",
        C::ID,
        args.log_n,
        args.distribution,
        tm.window_bits,
        tm.segments
    );
    println!(
        "accumulation chunk: {} entries; bases in {} part(s) of at most {} points, {} fold level(s)",
        tm.chunk,
        prepared.parts(),
        msm.part_len_sets(prepared.folds() as usize),
        prepared.folds()
    );
    let stored = prepared.layout().bytes();
    println!(
        "bases on the GPU: {} bytes a point ({} level(s)), {:.3} GB in all",
        stored / (n as u64).max(1),
        prepared.folds(),
        stored as f64 / 1e9
    );
    print_stages("stage", &tm);
    if args.passes {
        print_passes(&tm);
    }
    row_ms("GPU MSM, end to end (median)", gpu_s);
    row_ms("arkworks MSM (CPU)", cpu_s);
    println!("{:<34} {:>12.2}", "speed-up (CPU / GPU)", cpu_s / gpu_s);
    row_ms("(bases prepared once, ms)", prepare_s);
    for t in ctx.pipeline_timings() {
        if t.module.starts_with("msm") {
            println!(
                "pipeline {}::{} created in {:.3} s (its module's WGSL front end {:.3} s)",
                t.module, t.entry, t.seconds, t.module_seconds
            );
        }
    }
    Ok(verdict(cpu_result == [gpu_result]))
}

/// What [`timed_sets`] measured: the sums, the median wall seconds of the sets as one MSM
/// and as separate MSMs, and the one MSM's profile.
struct SetsRun<C: GpuCurve> {
    sums: Vec<C::Projective>,
    together: f64,
    separate: f64,
    timings: MsmTimings,
}

/// The sets as one MSM and as separate MSMs, after a warm-up and `--clock-warmup-ms`: the
/// sums, and the median run's wall time of each way with the one MSM's profile.
fn timed_sets<C: GpuCurve>(
    msm: &GpuMsm<C>,
    together: &zkgpu_msm::PreparedBases<C>,
    separate: &[zkgpu_msm::PreparedBases<C>],
    scalars: &[C::Scalar],
    args: &MsmArgs,
) -> Result<SetsRun<C>, BoxError> {
    let config = config_of(args);
    let words = zkgpu_msm::PreparedScalars::new(scalars);
    eprintln!("warm-up (builds the pipelines) ...");
    let (gpu_result, _) = msm
        .run(MsmRequest::new(together, scalars).config(config).timed())
        .map(MsmOutput::sums_timed)?;
    let t = Instant::now();
    while t.elapsed().as_millis() < u128::from(args.clock_warmup_ms) {
        msm.run(MsmRequest::new(together, words.all()).config(config))
            .map(MsmOutput::into_sums)?;
    }
    let mut runs: Vec<(f64, f64, MsmTimings)> = Vec::new();
    for _ in 0..args.runs.max(1) {
        let t = Instant::now();
        let r = msm
            .run(MsmRequest::new(together, words.all()).config(config))
            .map(MsmOutput::into_sums)?;
        let wall = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut one_by_one = Vec::new();
        for p in separate {
            one_by_one.push(
                msm.run(MsmRequest::new(p, words.all()).config(config))
                    .and_then(MsmOutput::sum)?,
            );
        }
        let wall_separate = t.elapsed().as_secs_f64();
        let (_, timings) = msm
            .run(MsmRequest::new(together, scalars).config(config).timed())
            .map(MsmOutput::sums_timed)?;
        runs.push((wall, wall_separate, timings));
        if r != gpu_result || one_by_one != gpu_result {
            return Err("GPU results differ between runs or between the two ways".into());
        }
    }
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (gpu_s, _, tm) = runs.swap_remove(runs.len() / 2);
    let mut sep: Vec<f64> = runs.iter().map(|r| r.1).collect();
    sep.sort_by(f64::total_cmp);
    Ok(SetsRun {
        sums: gpu_result,
        together: gpu_s,
        separate: sep[sep.len() / 2],
        timings: tm,
    })
}

/// `zkgpu msm --sets K`: one MSM over K base sets sharing the scalars against K separate MSMs.
fn run_sets<C: GpuCurve>(
    ctx: &GpuContext,
    args: &MsmArgs,
    first: Vec<C::Affine>,
    scalars: &[C::Scalar],
) -> Result<bool, BoxError>
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let n = first.len();
    let k = args.sets;
    eprintln!("generating {} more base vectors ...", k - 1);
    let mut rng = StdRng::seed_from_u64(43);
    let mut sets = vec![first];
    for _ in 1..k {
        sets.push(distinct_bases::<C>(n, &mut rng));
    }
    let msm = engine::<C>(ctx, args)?;
    let refs: Vec<&[C::Affine]> = sets.iter().map(|s| s.as_slice()).collect();
    let t = Instant::now();
    let together = prepare_folded(&msm, &refs, args)?;
    let separate = sets
        .iter()
        .map(|s| msm.prepare(s))
        .collect::<Result<Vec<_>, _>>()?;
    ctx.wait()?;
    let prepare_s = t.elapsed().as_secs_f64();
    let SetsRun {
        sums: gpu_result,
        together: gpu_s,
        separate: sep_s,
        timings: tm,
    } = timed_sets(&msm, &together, &separate, scalars, args)?;
    let (cpu, cpu_s) = arkworks::<C>(&refs, scalars)?;
    println!("adapter: {} ({:?})", ctx.info().name, ctx.info().backend);
    println!(
        "msm {} {k} base sets x n = 2^{} ({n}), {:?} scalars, c = {}, {} reduction segments/window",
        C::ID,
        args.log_n,
        args.distribution,
        tm.window_bits,
        tm.segments
    );
    println!(
        "sets stored with {} fold level(s) in {} part(s) of {} set(s)",
        together.folds(),
        together.parts(),
        together.sets_per_part()
    );
    print_stages("stage (one MSM over the sets)", &tm);
    if args.passes {
        print_passes(&tm);
    }
    row_ms("GPU, the sets as one MSM (median)", gpu_s);
    row_ms("GPU, as separate MSMs (median)", sep_s);
    row_ms("arkworks, separate MSMs (CPU)", cpu_s);
    println!(
        "{:<34} {:>12.2}",
        "speed-up (CPU / GPU sets)",
        cpu_s / gpu_s
    );
    row_ms("(bases prepared once, ms)", prepare_s);
    Ok(verdict(cpu == gpu_result))
}

/// `zkgpu msm`.
pub fn run(args: &MsmArgs) -> Result<(), BoxError> {
    if args.log_n > 26 {
        return Err("--log-n must be at most 26".into());
    }
    let ok = if let Some(choice) = &args.devices {
        if args.sets > 1 {
            return Err("--devices takes one base set (--sets 1)".into());
        }
        let opts = zkgpu_runtime::ContextOptions::from_env()?;
        let set = zkgpu_runtime::DeviceSet::open_blocking(opts, choice)?;
        zkgpu_curves::with_group!(args.curve, C => devices::run_split::<C>(&set, args))?
    } else {
        let dir = crate::prove_keys::cache_dir(args.cache_dir.as_deref());
        let ctx = GpuContext::new_blocking(crate::prove_keys::context_options(dir.as_deref())?)?;
        let ok = zkgpu_curves::with_group!(args.curve, C => run_one::<C>(&ctx, args))?;
        ctx.save_pipeline_cache()?;
        ok
    };
    if ok {
        Ok(())
    } else {
        Err("the GPU result differs from arkworks".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_are_spelled_as_prove_and_ntt_spell_them() {
        let cases = [
            ("bls12-381-g1", Group::Bls12_381G1),
            ("BLS12_381_G2", Group::Bls12_381G2),
            ("bls12-377", Group::Bls12_377G1),
            ("bn254", Group::Bn254G1),
            ("bn128", Group::Bn254G1),
            ("bn128-g2", Group::Bn254G2),
            ("ed-on-bls12-377", Group::EdOnBls12_377),
        ];
        for (name, want) in cases {
            assert_eq!(parse_group(name), Ok(want), "{name}");
        }
        let e = parse_group("bn254-g3").unwrap_err();
        assert!(e.contains("one of"), "{e}");
        assert_eq!(
            zkgpu_groth16::Pairing::from_name("BN128"),
            zkgpu_groth16::Pairing::from_name("bn254")
        );
    }
}
