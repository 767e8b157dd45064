//! `zkgpu msm --plan`: the planner's candidate layouts for the MSM, each with its predicted
//! time (after measuring the cost model on this device), and the plain layout, the chosen one
//! and the next best ones measured, their results compared with arkworks'.

use std::time::Instant;

use ark_ec::VariableBaseMSM;
use zkgpu_curves::GpuCurve;
use zkgpu_msm::{Candidate, GpuMsm};
use zkgpu_runtime::BlockOn;

use super::{BoxError, MsmArgs, arkworks, timed_runs};

/// Candidates measured besides the plain and the chosen one: the best predicted others.
const MEASURED_OTHERS: usize = 2;

/// Prints the plan for `bases` and measures its best candidates; whether every measured
/// result equals arkworks'.
pub(super) fn run_plan<C: GpuCurve>(
    msm: &GpuMsm<C>,
    bases: &[C::Affine],
    scalars: &[C::Scalar],
    args: &MsmArgs,
) -> Result<bool, BoxError>
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    eprintln!("calibrating the cost model ...");
    let model = msm.calibrate().block_on()?;
    let plan = msm.plan(bases.len(), 1);
    println!(
        "cost model ({} arithmetic, measured): {:.3} ns an entry, {:.3} ns a bucket, {:.3} ns a digit, {:.3} ms a run, reach {:.2} GB",
        msm.arith(),
        model.entry_s * 1e9,
        model.bucket_s * 1e9,
        model.digit_s * 1e9,
        model.run_s * 1e3,
        model.reach_bytes as f64 / 1e9
    );
    let mut order: Vec<usize> = (1..plan.candidates.len())
        .filter(|&i| plan.candidates[i].excluded.is_none() && i != plan.chosen)
        .collect();
    order.sort_by(|&a, &b| {
        plan.candidates[a]
            .predicted_s
            .total_cmp(&plan.candidates[b].predicted_s)
    });
    let mut measure = vec![0, plan.chosen];
    measure.extend(order.into_iter().take(MEASURED_OTHERS));
    measure.dedup();
    let (cpu, _) = arkworks::<C>(&[bases], scalars)?;
    let mut measured = vec![None; plan.candidates.len()];
    let mut ok = true;
    for &i in &measure {
        let k = &plan.candidates[i];
        eprintln!(
            "measuring {} level(s) at c = {} ...",
            k.layout.folds, k.layout.window_bits
        );
        let t = Instant::now();
        let prepared = if k.layout.folds > 1 {
            msm.prepare_sets_folded(&[bases], k.layout.fold())
                .block_on()?
        } else {
            msm.prepare(bases)?
        };
        let prepare_s = t.elapsed().as_secs_f64();
        let plain_args = MsmArgs {
            window_bits: (k.layout.folds == 1).then_some(k.layout.window_bits),
            ..args.clone()
        };
        let (sum, wall, tm) = timed_runs(msm, &prepared, scalars, &plain_args)?;
        ok &= sum == cpu[0];
        measured[i] = Some((tm.gpu_total, wall, prepare_s));
    }
    print_plan(&plan.candidates, plan.chosen, &measured);
    println!(
        "predicted: the model's GPU seconds; measured: GPU total and end to end (median), and preparing the bases. \
         Every measured result {} arkworks'.",
        if ok { "equals" } else { "does NOT equal" }
    );
    Ok(ok)
}

type Measured = Option<(f64, f64, f64)>;

fn print_plan(candidates: &[Candidate], chosen: usize, measured: &[Measured]) {
    println!(
        "{:>2} {:>6} {:>3} {:>5} {:>4} {:>8} {:>12} {:>12} {:>12} {:>10}  note",
        "",
        "levels",
        "c",
        "parts",
        "runs",
        "bases GB",
        "predicted ms",
        "measured ms",
        "end to end",
        "prepare s"
    );
    for (i, k) in candidates.iter().enumerate() {
        let mark = match (i == chosen, i == 0) {
            (true, true) => "*=",
            (true, false) => "* ",
            (false, true) => " =",
            _ => "  ",
        };
        let (gpu, e2e, prep) = match measured[i] {
            Some((g, w, p)) => (
                format!("{:.3}", g * 1e3),
                format!("{:.3}", w * 1e3),
                format!("{p:.2}"),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        println!(
            "{mark} {:>6} {:>3} {:>5} {:>4} {:>8.3} {:>12.3} {:>12} {:>12} {:>10}  {}",
            k.layout.folds,
            k.layout.window_bits,
            k.parts,
            k.runs,
            k.bases_bytes as f64 / 1e9,
            k.predicted_s * 1e3,
            gpu,
            e2e,
            prep,
            k.excluded.as_deref().unwrap_or("")
        );
    }
    println!(
        "*: chosen; =: the plain layout (the reference no choice may be predicted slower than)"
    );
}
