//! One MSM over two parts of the bases: where one set's bases (with their fold levels) need
//! two storage bindings, the accumulation reads both (`msm_accumulate/<group>/split`), so the
//! whole MSM runs its stages once and reduces its buckets once, instead of once per part
//! (docs/msm.md "Limits").

use std::sync::Arc;

use zkgpu_curves::GpuCurve;
use zkgpu_runtime::{Checks, Pipeline};

use crate::bases::PreparedBases;
use crate::params::OVERRIDES;
use crate::shape::Shape;
use crate::{GpuMsm, MsmConfig, Result};

/// Storage bindings the split accumulation uses: the one-part kernel's seven and
/// `bases_hi`, within WebGPU's default of eight.
const SPLIT_STORAGE_BINDINGS: u32 = 8;

impl<C: GpuCurve> GpuMsm<C> {
    /// The split of an MSM over `n` scalars of `bases` as one MSM over two parts (the first
    /// scalar of the second part, its first point, its points per fold level), or `None`
    /// where it runs part by part: more or fewer than two parts in use, several base sets,
    /// a device that binds fewer storage buffers to a kernel than WebGPU's default 8, a
    /// whole-MSM shape whose working buffers do not fit a binding, or
    /// [`MsmConfig::part_by_part`].
    pub(crate) fn split_plan(
        &self,
        bases: &PreparedBases<C>,
        n: usize,
        config: MsmConfig,
    ) -> Option<(u32, u32, u32)> {
        let [lo, hi] = bases.parts.as_slice() else {
            return None;
        };
        if config.part_by_part
            || bases.sets != 1
            || lo.start != 0
            || n <= hi.start
            || !self.splits_parts()
        {
            return None;
        }
        let folds = bases.fold.map_or(1, |f| f.folds as usize);
        let hi_base = u32::try_from(folds * lo.len).ok()?;
        // Point references keep bit 31 for the sign.
        let last = u64::from(hi_base) + (folds * hi.len) as u64;
        if last >= 1 << 31 {
            return None;
        }
        Shape::new::<C>(
            n,
            (1, u32::try_from(lo.len).ok()?),
            bases.fold,
            config,
            self.ctx.max_binding_bytes(),
        )
        .ok()?;
        Some((
            u32::try_from(hi.start).ok()?,
            hi_base,
            u32::try_from(hi.len).ok()?,
        ))
    }

    /// Whether this device can bind the split accumulation's storage buffers.
    pub(crate) fn splits_parts(&self) -> bool {
        self.ctx.limits().max_storage_buffers_per_shader_stage >= SPLIT_STORAGE_BINDINGS
    }

    /// `msm_bucket_accumulate` of the split module, built on first use.
    pub(crate) async fn split_pipeline(&self) -> Result<Arc<Pipeline>> {
        // The same loops as the one-part kernel (shaders/kernels/msm_accumulate.wgsl).
        Ok(self
            .ctx
            .pipeline(
                &self.accumulate_split_module,
                zkgpu_shaders::contract::msm_accumulate::entry::MSM_BUCKET_ACCUMULATE,
                Checks::TrustedLoops,
                OVERRIDES,
            )
            .await?)
    }
}
