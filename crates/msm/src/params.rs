//! The Rust side of the MSM kernels' contract: workgroup and block sizes, and the uniform
//! structs the kernels of shaders/kernels/msm_buckets.wgsl and msm_accumulate.wgsl read.

use ark_ff::PrimeField;

pub(crate) const WORKGROUP_SIZE: u32 = 64;

/// Bins of the chunk-size histogram that orders chunks for accumulation (at most; one per
/// size when `chunk` is at most this).
pub(crate) const CHUNK_BINS: u32 = 1024;

/// Buckets per workgroup of the scans (`SCAN_BLOCK` in shaders/kernels/msm_buckets.wgsl).
pub(crate) const SCAN_BLOCK: u32 = 2048;

/// Workgroups per window of a scan over `buckets` entries.
pub(crate) fn scan_blocks(buckets: u32) -> u32 {
    buckets.div_ceil(SCAN_BLOCK).max(1)
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct BucketParams {
    pub(crate) n: u32,
    pub(crate) row_stride: u32,
    pub(crate) c: u32,
    pub(crate) windows: u32,
    pub(crate) buckets: u32,
    pub(crate) chunk: u32,
    pub(crate) key_div: u32,
    pub(crate) sets: u32,
    pub(crate) set_stride: u32,
    pub(crate) set_windows: u32,
    pub(crate) fold_windows: u32,
    pub(crate) folds: u32,
    pub(crate) load: u32,
    pub(crate) _pad: [u32; 3],
    /// The scalar field's modulus, little-endian words (`msm_digits` takes scalars within
    /// 2^64 below it as negative, as arkworks' `msm` does).
    pub(crate) modulus: [u32; 8],
}

/// `F`'s modulus as 8 little-endian `u32` words.
pub(crate) fn modulus_words<F: PrimeField>() -> [u32; 8] {
    let mut w = [0u32; 8];
    for (k, limb) in F::MODULUS.as_ref().iter().enumerate().take(4) {
        w[2 * k] = *limb as u32;
        w[2 * k + 1] = (*limb >> 32) as u32;
    }
    w
}

/// `msm_combine_args`' parameters (shaders/kernels/msm_buckets.wgsl).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct ArgsParams {
    pub(crate) x_max: u32,
    pub(crate) levels: u32,
    pub(crate) group: u32,
    pub(crate) full_x: u32,
    pub(crate) full_y: u32,
    pub(crate) _pad: [u32; 3],
}

/// Workgroups in x of the indirect dispatch over the combine list (its row stride is this
/// times [`WORKGROUP_SIZE`]); within WebGPU's default 65,535.
pub(crate) const LIST_X: u32 = 32_768;

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct FoldParams {
    pub(crate) stride: u32,
    pub(crate) count: u32,
    pub(crate) row_stride: u32,
    pub(crate) consts: u32,
    pub(crate) folds: u32,
    pub(crate) doublings: u32,
    pub(crate) entry_identity: u32,
    pub(crate) entry_madd: u32,
    pub(crate) entry_dbl: u32,
    pub(crate) entry_to_affine: u32,
    pub(crate) acc_regs: u32,
    pub(crate) affine_regs: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct ReduceParams {
    pub(crate) threads: u32,
    pub(crate) row_stride: u32,
    pub(crate) consts: u32,
    pub(crate) entry_identity: u32,
    pub(crate) entry_add: u32,
    pub(crate) acc_regs: u32,
    pub(crate) buckets: u32,
    pub(crate) segments: u32,
    pub(crate) seg_len: u32,
    pub(crate) bits: u32,
    pub(crate) block: u32,
    pub(crate) _pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct AccumulateParams {
    pub(crate) cap: u32,
    pub(crate) row_stride: u32,
    pub(crate) consts: u32,
    pub(crate) entry_identity: u32,
    pub(crate) entry_madd: u32,
    pub(crate) neg_reg: u32,
    pub(crate) acc_regs: u32,
    pub(crate) affine_regs: u32,
    pub(crate) neg_regs: u32,
    pub(crate) windows: u32,
    pub(crate) buckets: u32,
    pub(crate) chunk: u32,
    pub(crate) entry_add: u32,
    pub(crate) stride: u32,
    pub(crate) group: u32,
    pub(crate) level_mode: u32,
}
