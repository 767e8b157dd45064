//! The engine's side of the planner (`plan.rs`): the cost model it plans with (measured on
//! this device, kept beside the pipeline cache, or the defaults), and bases prepared as the
//! plan chooses.

use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::PrimeField;
use std::sync::PoisonError;
use zkgpu_curves::GpuCurve;

use crate::plan::{Limits, plan};
use crate::{CostModel, GpuMsm, MsmPlan, MsmRequest, PreparedBases, Result, window_count};

/// Points of the calibration MSM on a GPU, and on a software adapter.
const CALIBRATION_LOG: (u32, u32) = (18, 10);

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

    /// Measures the cost model on this device: an MSM of 2^18 points (2^10 on a software
    /// adapter) with its stages timed, the constants being each stage's seconds per unit of
    /// its work. Kept for this engine, and in a file beside the pipeline cache where the
    /// context has one. The reach of the GPU's address translation is not measured (it
    /// would take gigabytes): the model keeps [`CostModel::reach_bytes`] as it was.
    pub async fn calibrate(&self) -> Result<CostModel> {
        let log = if self.ctx.is_software() {
            CALIBRATION_LOG.1
        } else {
            CALIBRATION_LOG.0
        };
        let n = 1usize << log;
        let (bases, scalars) = calibration_inputs::<C>(n);
        let prepared = self.prepare(&bases)?;
        // The first run builds pipelines and raises the clock; the second is measured.
        let mut t = None;
        for _ in 0..3 {
            t = Some(
                self.run(MsmRequest::new(&prepared, &scalars).timed())
                    .await?
                    .timings,
            );
        }
        let t = t.expect("three runs");
        let digits = n as f64 * f64::from(window_count(C::Scalar::MODULUS_BIT_SIZE, t.window_bits));
        let buckets = f64::from(window_count(C::Scalar::MODULUS_BIT_SIZE, t.window_bits))
            * f64::from(1u32 << (t.window_bits - 1));
        let stages = t.digits + t.scan + t.scatter + t.accumulate + t.combine + t.reduce;
        let model = CostModel {
            entry_s: t.accumulate / digits,
            bucket_s: (t.reduce + t.combine) / buckets,
            digit_s: (t.digits + t.scan + t.scatter) / digits,
            run_s: (t.gpu_total - stages).max(0.0),
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
