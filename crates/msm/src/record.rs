//! The MSM's pipelines and its passes: which kernel runs over which buffers, in order.

use zkgpu_curves::GpuCurve;
use zkgpu_runtime::{Checks, Pipeline, wgpu};

use crate::{GpuMsm, Result};

/// The pipelines of one MSM.
pub(crate) struct Pipelines {
    pub(crate) digits: std::sync::Arc<Pipeline>,
    pub(crate) scan_blocks: std::sync::Arc<Pipeline>,
    pub(crate) scan: std::sync::Arc<Pipeline>,
    pub(crate) scatter: std::sync::Arc<Pipeline>,
    pub(crate) chunks: std::sync::Arc<Pipeline>,
    pub(crate) order: std::sync::Arc<Pipeline>,
    pub(crate) args: std::sync::Arc<Pipeline>,
    pub(crate) acc: std::sync::Arc<Pipeline>,
    pub(crate) combine: std::sync::Arc<Pipeline>,
    pub(crate) reduce: std::sync::Arc<Pipeline>,
    /// `msm_scalars_from_montgomery`, where the scalar field has a module.
    pub(crate) convert: Option<std::sync::Arc<Pipeline>>,
}

impl<'c, C: GpuCurve> GpuMsm<'c, C> {
    /// Builds this group's MSM pipelines now (they are otherwise built by the first MSM).
    /// Calls from two threads that both miss the context's cache would each build them.
    pub async fn build_pipelines(&self) -> Result<()> {
        self.pipelines().await.map(|_| ())
    }

    /// The MSM pipelines, built on first use and cached by the context.
    pub(crate) async fn pipelines(&self) -> Result<Pipelines> {
        let ctx = self.ctx;
        let b = &self.buckets_module;
        let a = &self.accumulate_module;
        // The VM's loops end (forward jumps only, HALT); the accumulation kernels' loops count
        // to bucket sizes, bit lengths and uniforms: see shaders/kernels/msm_accumulate.wgsl.
        let trusted = Checks::TrustedLoops;
        Ok(Pipelines {
            digits: ctx.pipeline(b, "msm_digits", Checks::Default, &[]).await?,
            scan_blocks: ctx
                .pipeline(b, "msm_scan_blocks", Checks::Default, &[])
                .await?,
            scan: ctx.pipeline(b, "msm_scan", Checks::Default, &[]).await?,
            scatter: ctx.pipeline(b, "msm_scatter", Checks::Default, &[]).await?,
            chunks: ctx
                .pipeline(b, "msm_chunk_counts", Checks::Default, &[])
                .await?,
            order: ctx
                .pipeline(b, "msm_chunk_order", Checks::Default, &[])
                .await?,
            args: ctx
                .pipeline(b, "msm_combine_args", Checks::Default, &[])
                .await?,
            acc: ctx
                .pipeline(a, "msm_bucket_accumulate", trusted, &[])
                .await?,
            combine: ctx.pipeline(a, "msm_combine_chunks", trusted, &[]).await?,
            reduce: ctx.pipeline(a, "msm_reduce_segments", trusted, &[]).await?,
            convert: match &self.scalars_module {
                Some(m) => Some(
                    ctx.pipeline(m, "msm_scalars_from_montgomery", Checks::Default, &[])
                        .await?,
                ),
                None => None,
            },
        })
    }
}

/// The two dispatches of one scan over a grid of (blocks, windows): block totals, then
/// offsets (`bind` holds the two bind groups).
pub(crate) fn scan_stages<'a>(
    p: &'a Pipelines,
    bind: &'a (wgpu::BindGroup, wgpu::BindGroup),
    blocks: u32,
    windows: u32,
) -> [(Stage, &'a Pipeline, &'a wgpu::BindGroup, Dispatch); 2] {
    let grid = Dispatch::Grid(blocks, windows);
    [
        (Stage::Scan, &p.scan_blocks, &bind.0, grid),
        (Stage::Scan, &p.scan, &bind.1, grid),
    ]
}

/// How a pass is dispatched: a grid of workgroups, or indirectly from `dispatch_args` at a
/// byte offset.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Dispatch {
    Grid(u32, u32),
    Indirect(u64),
}

/// GPU stages, as [`MsmTimings`] groups them.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Stage {
    Digits,
    Scan,
    Scatter,
    Accumulate,
    Combine,
    Reduce,
}
