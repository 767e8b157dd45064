//! The Rust side of the MSM kernels' contract: workgroup and block sizes, and the uniform
//! structs the kernels of shaders/kernels/msm_buckets.wgsl and msm_accumulate.wgsl read.

use ark_ff::PrimeField;

use crate::shape::Shape;
pub(crate) use zkgpu_shaders::contract::msm_accumulate::{
    AccumulateParams, FoldParams, ReduceParams,
};
pub(crate) use zkgpu_shaders::contract::msm_buckets::{ArgsParams, BucketParams};

/// Invocations per workgroup of the MSM kernels: set as their `WORKGROUP_SIZE` override
/// ([`OVERRIDES`]) and used to size their grids.
pub(crate) const WORKGROUP_SIZE: u32 = 64;

/// The pipeline overrides of every MSM kernel.
pub(crate) const OVERRIDES: &[(&str, f64)] = &[("WORKGROUP_SIZE", WORKGROUP_SIZE as f64)];

/// Bins of the chunk-size histogram that orders chunks for accumulation (at most; one per
/// size when `chunk` is at most this).
pub(crate) const CHUNK_BINS: u32 = 1024;

pub(crate) use crate::shape::scan_blocks;

/// `F`'s modulus as 8 little-endian `u32` words.
pub(crate) fn modulus_words<F: PrimeField>() -> [u32; 8] {
    let mut w = [0u32; 8];
    for (k, limb) in F::MODULUS.as_ref().iter().enumerate().take(4) {
        w[2 * k] = *limb as u32;
        w[2 * k + 1] = (*limb >> 32) as u32;
    }
    w
}

/// Workgroups in x of the indirect dispatch over the combine list (its row stride is this
/// times [`WORKGROUP_SIZE`]); within WebGPU's default 65,535.
pub(crate) const LIST_X: u32 = 32_768;

/// The chunk-size histogram that orders chunks for accumulation: chunk sizes
/// `chunk - key_div k ..` fall in bin `k`, `bins` bins in all (at most [`CHUNK_BINS`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChunkBins {
    pub(crate) key_div: u32,
    pub(crate) bins: u32,
}

impl ChunkBins {
    pub(crate) fn new(chunk: u32) -> Self {
        let key_div = chunk.div_ceil(CHUNK_BINS);
        Self {
            key_div,
            bins: chunk.div_ceil(key_div),
        }
    }
}

/// Parameters of a pass over `windows` windows of `buckets` buckets of one set, from
/// `base` (a count or offset, by pass), on a grid of `row_stride` invocations per row.
pub(crate) fn bucket_params<F: PrimeField>(
    shape: &Shape,
    bins: ChunkBins,
    base: u32,
    row_stride: u32,
    windows: u32,
    buckets: u32,
) -> BucketParams {
    BucketParams {
        n: base,
        row_stride,
        c: shape.c,
        windows,
        buckets,
        chunk: shape.chunk,
        key_div: bins.key_div,
        sets: 1,
        set_stride: 0,
        set_windows: windows,
        fold_windows: windows,
        folds: 1,
        load: 1,
        chunk_group: shape.chunk_group,
        large_chunk: shape.large_chunk,
        large_at: shape.large_at,
        modulus: modulus_words::<F>(),
        ..BucketParams::default()
    }
}

/// Parameters of the digits, the histogram scan and the scatter: the digit windows of
/// every set, folded as the shape says, and the largest rank a digit word holds
/// ([`crate::GpuMsm::with_rank_cap`]; the shaders cap it at `2^(31 - c) - 1` too).
pub(crate) fn digit_params<F: PrimeField>(
    shape: &Shape,
    bins: ChunkBins,
    row_stride: u32,
    rank_cap: u32,
) -> BucketParams {
    BucketParams {
        sets: shape.sets,
        set_stride: shape.set_stride,
        set_windows: shape.set_windows,
        fold_windows: shape.fold_windows,
        folds: shape.folds,
        load: shape.load,
        rank_cap,
        split: shape.split.0,
        hi_base: shape.split.1,
        hi_stride: shape.split.2,
        ..bucket_params::<F>(
            shape,
            bins,
            shape.n,
            row_stride,
            shape.digit_windows,
            shape.buckets,
        )
    }
}
