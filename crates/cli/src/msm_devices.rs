//! `zkgpu msm --devices ...`: the MSM on the first device alone and split across the set
//! (`MultiMsm`), same inputs, same run, both checked against arkworks.

use std::time::{Duration, Instant};

use ark_ec::VariableBaseMSM;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_curves::GpuCurve;
use zkgpu_curves::distinct_bases;
use zkgpu_msm::{Fold, GpuMsm, MultiMsm, MultiOutput};
use zkgpu_runtime::DeviceSet;

use super::{BoxError, MsmArgs, arkworks, config_of, prepare_folded, row_ms, scalars_of};
use super::{timed_runs, verdict};

/// Points of the sample that measures the devices' speeds.
const SAMPLE: usize = 1 << 19;

pub(super) fn run_split<C: GpuCurve>(set: &DeviceSet, args: &MsmArgs) -> Result<bool, BoxError>
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let n = 1usize << args.log_n;
    let mut rng = StdRng::seed_from_u64(42);
    eprintln!("generating {n} bases and scalars ...");
    let bases = distinct_bases::<C>(n, &mut rng);
    let scalars = scalars_of::<C>(args, n, &mut rng)?;

    eprintln!("one device: {} ...", set.contexts()[0].info().name);
    let one = GpuMsm::<C>::new(&set.contexts()[0])?;
    let prepared = prepare_folded(&one, &[&bases], args)?;
    let (one_sum, one_s, _) = timed_runs(&one, &prepared, &scalars, args)?;
    drop(prepared);

    let mut multi = MultiMsm::<C>::new(set)?;
    let sample = n.min(SAMPLE);
    let warmup = Duration::from_millis(args.clock_warmup_ms);
    eprintln!(
        "measuring {} devices on 2^{} points ...",
        set.len(),
        sample.trailing_zeros()
    );
    let weights = multi.calibrate(&bases[..sample], &scalars[..sample], warmup, 5)?;
    let folds = match args.folds {
        0 => multi.folds_in_one_part(n),
        f => f,
    };
    let fold = Fold {
        folds,
        window_bits: args.window_bits,
    };
    eprintln!("preparing the split bases ...");
    let t = Instant::now();
    let split = multi.prepare_folded(&bases, fold)?;
    let prepare_s = t.elapsed().as_secs_f64();
    let (split_sum, split_s, per_device) = timed_split(&multi, &split, &scalars, args)?;
    let (cpu, cpu_s) = arkworks::<C>(&[&bases], &scalars)?;

    println!(
        "msm {} n = 2^{} ({n}), {:?} scalars, {} fold level(s), {} devices",
        C::ID,
        args.log_n,
        args.distribution,
        folds,
        set.len()
    );
    println!(
        "{:<34} {:>12} {:>10} {:>12}",
        "device", "weight", "points", "ms (median run)"
    );
    for (((ctx, w), r), s) in set
        .contexts()
        .iter()
        .zip(&weights)
        .zip(split.ranges())
        .zip(&per_device)
    {
        let name: String = ctx.info().name.chars().take(34).collect();
        println!("{name:<34} {w:>12.1} {:>10} {:>12.3}", r.len(), s * 1e3);
    }
    row_ms("GPU MSM, first device alone", one_s);
    row_ms(&format!("GPU MSM across {} devices", set.len()), split_s);
    println!(
        "{:<34} {:>12.2}",
        "speed-up (one device / all)",
        one_s / split_s
    );
    row_ms("arkworks MSM (CPU)", cpu_s);
    row_ms("(split bases prepared once, ms)", prepare_s);
    Ok(verdict(cpu == [one_sum] && cpu == [split_sum]))
}

/// A warm-up, `--clock-warmup-ms` of split MSMs, then `--runs` timed ones: the sum, the
/// median run's wall seconds and each device's seconds in it.
fn timed_split<C: GpuCurve>(
    multi: &MultiMsm<C>,
    split: &zkgpu_msm::SplitBases<C>,
    scalars: &[C::Scalar],
    args: &MsmArgs,
) -> Result<(C::Projective, f64, Vec<f64>), BoxError> {
    let config = config_of(args);
    let first = multi.run(split, scalars, config)?.sum;
    let t = Instant::now();
    while t.elapsed().as_millis() < u128::from(args.clock_warmup_ms) {
        multi.run(split, scalars, config)?;
    }
    let mut runs: Vec<(f64, Vec<f64>)> = Vec::new();
    for _ in 0..args.runs.max(1) {
        let t = Instant::now();
        let MultiOutput {
            sum,
            device_seconds,
        } = multi.run(split, scalars, config)?;
        runs.push((t.elapsed().as_secs_f64(), device_seconds));
        if sum != first {
            return Err("split GPU results differ between runs".into());
        }
    }
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (wall, per_device) = runs.swap_remove(runs.len() / 2);
    Ok((first, wall, per_device))
}
