//! The engine's side of the planner (`plan.rs`): the cost model it plans with (measured on
//! this device, kept beside the pipeline cache, or the defaults), and bases prepared as the
//! plan chooses.

use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::PrimeField;
use std::sync::PoisonError;
use zkgpu_curves::GpuCurve;

use crate::plan::{Limits, plan};
use crate::{CostModel, GpuMsm, MsmPlan, MsmRequest, PreparedBases, Result, window_count};

/// GPU work before the calibration MSMs, to raise an idle GPU's clock.
const CALIBRATION_WARMUP: std::time::Duration = std::time::Duration::from_millis(500);

/// log2 sizes of the calibration MSMs on a GPU, and on a software adapter.
const CALIBRATION_LOGS: ([u32; 2], [u32; 2]) = ([16, 19], [8, 10]);

impl<C: GpuCurve> GpuMsm<C> {
    /// The cost model this engine plans with: measured by [`GpuMsm::calibrate`] in this
    /// process or an earlier one (kept beside the pipeline cache, per adapter, group and
    /// arithmetic), else [`CostModel::defaults`].
    pub fn cost_model(&self) -> CostModel {
        let mut slot = self.model.lock().unwrap_or_else(PoisonError::into_inner);
        *slot.get_or_insert_with(|| {
            self.model_file()
                .and_then(|p| std::fs::read_to_string(p).ok())
                .and_then(|t| CostModel::from_text(&t))
                .unwrap_or_else(|| CostModel::defaults::<C>(self.ctx.max_binding_bytes()))
        })
    }

    /// Plans with `model` from now on (a caller's own measurements, or tests forcing a
    /// branch of the planner).
    pub fn with_cost_model(self, model: CostModel) -> Self {
        *self.model.lock().unwrap_or_else(PoisonError::into_inner) = Some(model);
        self
    }

    fn model_file(&self) -> Option<std::path::PathBuf> {
        self.ctx
            .cache_file(&format!("msm-model-{}-{}", C::ID, self.arith()))
    }

    /// The planner's weighing of every layout of `sets` base sets of `len` points, and its
    /// choice ([`MsmPlan`]).
    pub fn plan(&self, len: usize, sets: usize) -> MsmPlan {
        plan::<C>(
            len,
            sets,
            self.cost_model(),
            Limits {
                max_binding: self.ctx.max_binding_bytes(),
                splits_parts: self.splits_parts(),
                max_part: self.max_part,
            },
        )
    }

    /// Prepares base sets in the layout the planner chooses for them: plain, or folded.
    pub async fn prepare_sets_planned(&self, sets: &[&[C::Affine]]) -> Result<PreparedBases<C>> {
        let len = sets.iter().map(|s| s.len()).max().unwrap_or(0);
        let fold = self.plan(len, sets.len()).fold();
        if fold.folds <= 1 {
            self.prepare_sets(sets)
        } else {
            self.prepare_sets_folded(sets, fold).await
        }
    }

    /// Keeps the GPU busy for `duration` so that the MSMs after it start at the GPU's working
    /// clock ([`zkgpu_runtime::GpuContext::warm_clock`]; costs `duration`).
    pub async fn warm_clock(&self, duration: std::time::Duration) -> Result<()> {
        Ok(self.ctx.warm_clock(duration).await?)
    }

    /// Measures the cost model on this device: MSMs of two sizes (2^16 and 2^19 points;
    /// 2^8 and 2^10 on a software adapter) with their stages timed, each stage's cost fitted
    /// as a fixed part and a part per unit of its work (entries, buckets, digits); the slopes
    /// are the model's constants and the fixed parts its cost of a run. Kept for this engine,
    /// and in a file beside the pipeline cache where the context has one. The reach of the
    /// GPU's address translation is not measured (it would take gigabytes): the model keeps
    /// [`CostModel::reach_bytes`] as it was.
    pub async fn calibrate(&self) -> Result<CostModel> {
        let logs = if self.ctx.is_software() {
            CALIBRATION_LOGS.1
        } else {
            CALIBRATION_LOGS.0
        };
        let (bases, scalars) = calibration_inputs::<C>(1 << logs[1]);
        if !self.ctx.is_software() {
            // Timings at a lowered clock would make every constant too large.
            self.ctx.warm_clock(CALIBRATION_WARMUP).await?;
        }
        let mut points = Vec::new();
        for log in logs {
            let n = 1usize << log;
            let prepared = self.prepare(&bases[..n])?;
            // The first runs build pipelines and raise the clock; the last is measured.
            let mut t = None;
            for _ in 0..3 {
                let request = MsmRequest::new(&prepared, &scalars[..n]).timed();
                t = Some(self.run_async(request).await?.timings);
            }
            points.push(StagePoint::of::<C>(n, &t.expect("three runs")));
        }
        let fit = |f: fn(&StagePoint) -> (f64, f64)| {
            let ((u1, t1), (u2, t2)) = (f(&points[0]), f(&points[1]));
            let slope = ((t2 - t1) / (u2 - u1)).max(0.0);
            (slope, (t1 - slope * u1).max(0.0))
        };
        let (entry_s, acc0) = fit(|p| (p.entries, p.accumulate));
        let (bucket_s, red0) = fit(|p| (p.buckets, p.reduce));
        let (digit_s, dig0) = fit(|p| (p.digits, p.digit_stages));
        let (_, other0) = fit(|p| (p.digits, p.other));
        let model = CostModel {
            entry_s,
            bucket_s,
            digit_s,
            run_s: acc0 + red0 + dig0 + other0,
            reach_bytes: self.cost_model().reach_bytes,
            measured: true,
        };
        *self.model.lock().unwrap_or_else(PoisonError::into_inner) = Some(model);
        if let Some(path) = self.model_file() {
            let written = path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&path, model.to_text()));
            if let Err(e) = written {
                tracing::warn!(path = %path.display(), "keeping the MSM cost model: {e}");
            }
        }
        Ok(model)
    }
}

/// One calibration MSM: its units of work and its stages' seconds.
struct StagePoint {
    entries: f64,
    buckets: f64,
    digits: f64,
    accumulate: f64,
    reduce: f64,
    digit_stages: f64,
    other: f64,
}

impl StagePoint {
    fn of<C: GpuCurve>(n: usize, t: &crate::MsmTimings) -> Self {
        let windows = f64::from(window_count(C::Scalar::MODULUS_BIT_SIZE, t.window_bits));
        let digit_stages = t.digits + t.scan + t.scatter;
        let reduce = t.reduce + t.combine;
        Self {
            entries: n as f64 * windows,
            buckets: windows * f64::from(1u32 << (t.window_bits - 1)),
            digits: n as f64 * windows,
            accumulate: t.accumulate,
            reduce,
            digit_stages,
            other: (t.gpu_total - t.accumulate - reduce - digit_stages).max(0.0),
        }
    }
}

/// `n` distinct points (consecutive multiples of the generator from a fixed start) and `n`
/// scalars spread over the field, the same every time.
fn calibration_inputs<C: GpuCurve>(n: usize) -> (Vec<C::Affine>, Vec<C::Scalar>) {
    let g = C::Projective::generator();
    let mut p = g * C::Scalar::from(0x9e37_79b9_7f4a_7c15u64);
    let mut points = Vec::with_capacity(n);
    for _ in 0..n {
        points.push(p);
        p += g;
    }
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let scalars = (0..n)
        .map(|_| {
            let bytes: Vec<u8> = (0..4)
                .flat_map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x.to_le_bytes()
                })
                .collect();
            C::Scalar::from_le_bytes_mod_order(&bytes)
        })
        .collect();
    (C::Projective::normalize_batch(&points), scalars)
}
