//! The working buffers and uniform parameters of one MSM shape, pooled between calls.

use zkgpu_curves::GpuCurve;
use zkgpu_runtime::{grid, wgpu};

use crate::config::*;
use crate::params::*;
use crate::shape::{RowLayout, Shape};
use crate::{GpuMsm, Result};

/// Working buffers and parameters of one MSM shape (see [`GpuMsm::scratch_for`]).
#[derive(Debug)]
pub(crate) struct Scratch {
    pub(crate) shape: Shape,
    pub(crate) scalars: wgpu::Buffer,
    pub(crate) digits: wgpu::Buffer,
    pub(crate) counts: wgpu::Buffer,
    pub(crate) cursors: wgpu::Buffer,
    pub(crate) offsets: wgpu::Buffer,
    pub(crate) entries: wgpu::Buffer,
    pub(crate) sums: wgpu::Buffer,
    pub(crate) chunk_counts: wgpu::Buffer,
    pub(crate) chunk_offsets: wgpu::Buffer,
    pub(crate) chunk_hist: wgpu::Buffer,
    /// The scans' block totals: `windows x scan_blocks(buckets)` (each scan reuses it).
    pub(crate) block_sums: wgpu::Buffer,
    pub(crate) bin_offsets: wgpu::Buffer,
    pub(crate) bin_cursors: wgpu::Buffer,
    pub(crate) chunk_order: wgpu::Buffer,
    pub(crate) partials: wgpu::Buffer,
    /// Buckets whose sums the chunk sums pass writes: count, most chunks, slots.
    pub(crate) combine_list: wgpu::Buffer,
    /// Indirect dispatch sizes of the chunk sums (`msm_combine_args`).
    pub(crate) dispatch_args: wgpu::Buffer,
    pub(crate) gparams: wgpu::Buffer,
    pub(crate) seg_out: wgpu::Buffer,
    pub(crate) bparams: wgpu::Buffer,
    /// Whether digit words keep ranks (`GpuMsm::rank_cap`), so that `msm_bucket_sizes` runs.
    pub(crate) ranked: bool,
    pub(crate) ccparams: wgpu::Buffer,
    pub(crate) csparams: wgpu::Buffer,
    pub(crate) hsparams: wgpu::Buffer,
    pub(crate) aparams: wgpu::Buffer,
    pub(crate) mparams: wgpu::Buffer,
    /// Parameters of the tree levels over large buckets' chunks (msm_combine_chunks, mode 1).
    pub(crate) chunk_levels: Vec<wgpu::Buffer>,
    pub(crate) rparams: wgpu::Buffer,
    pub(crate) levels: Vec<TreeLevel>,
    /// Sums per row of a window's block that the tree levels leave for the host.
    pub(crate) left: Vec<u32>,
}

/// One level of the tree that sums each window's segment sums.
#[derive(Debug)]
pub(crate) struct TreeLevel {
    pub(crate) first: wgpu::Buffer,
    pub(crate) count: wgpu::Buffer,
    pub(crate) out: wgpu::Buffer,
    pub(crate) params: wgpu::Buffer,
    /// Groups over all windows.
    pub(crate) groups: u32,
}

impl<C: GpuCurve> GpuMsm<C> {
    /// Working buffers for `shape`: a pooled set of that shape, else new ones.
    pub(crate) fn take_scratch(&self, shape: Shape) -> Result<Scratch> {
        let taken = {
            let mut pool = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
            pool.iter()
                .position(|s| s.shape == shape)
                .map(|k| pool.remove(k))
        };
        match taken {
            Some(s) => Ok(s),
            None => self.scratch_for(shape),
        }
    }

    /// Puts `s` back for the next MSM of its shape, keeping at most [`SCRATCH_POOL`].
    pub(crate) fn return_scratch(&self, s: Scratch) {
        let mut pool = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() >= SCRATCH_POOL {
            pool.remove(0);
        }
        pool.push(s);
    }

    /// Frees the working buffers kept between MSMs (up to [`SCRATCH_POOL`] shapes, about
    /// `n x (32 + 2 x windows x 4) + 2 x windows x 2^(c-1) x point` bytes each).
    pub fn release_scratch(&self) {
        self.scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Allocates the working buffers and writes the parameters of one MSM shape.
    pub(crate) fn scratch_for(&self, shape: Shape) -> Result<Scratch> {
        let ctx = &self.ctx;
        let Shape {
            n,
            windows,
            buckets,
            slots,
            ..
        } = shape;
        let max = ctx.limits().max_compute_workgroups_per_dimension;
        let (_, _, stride) = grid(n, WORKGROUP_SIZE, max);
        let (_, _, cstride) = grid(slots, WORKGROUP_SIZE, max);
        let bins = ChunkBins::new(shape.chunk);
        let bucket_params = |base, row_stride, windows, buckets| {
            bucket_params::<C::Scalar>(&shape, bins, base, row_stride, windows, buckets)
        };
        let accumulate = self.accumulate_params(&shape);
        let (chunk_levels, chunk_stride) = self.chunk_levels(&shape, accumulate);
        let (levels, left) = self.tree_levels(&shape, accumulate)?;
        let bytes = shape.buffer_bytes::<C>();
        let zeroed = |label: &str, bytes: u64| ctx.storage_zeroed(label, bytes);
        let rank_cap = self.rank_cap(&shape);
        Ok(Scratch {
            shape,
            scalars: zeroed("msm scalars", bytes.scalars)?,
            digits: zeroed("msm digits", bytes.digits)?,
            counts: zeroed("msm bucket sizes", bytes.slots)?,
            cursors: zeroed("msm bucket cursors", bytes.slots)?,
            offsets: zeroed("msm bucket offsets", bytes.slots)?,
            entries: zeroed("msm entries", bytes.entries)?,
            sums: zeroed("msm bucket sums", bytes.sums)?,
            chunk_counts: zeroed("msm chunk counts", bytes.slots)?,
            chunk_offsets: zeroed("msm chunk offsets", bytes.slots)?,
            chunk_hist: zeroed("msm chunk size histogram", u64::from(bins.bins) * 4)?,
            block_sums: zeroed("msm scan block sums", bytes.block_sums)?,
            bin_offsets: zeroed("msm chunk bin offsets", u64::from(bins.bins) * 4)?,
            bin_cursors: zeroed("msm chunk bin cursors", u64::from(bins.bins) * 4)?,
            chunk_order: zeroed("msm chunk order", bytes.chunk_order)?,
            partials: zeroed("msm chunk sums", bytes.partials)?,
            seg_out: zeroed("msm segment sums", bytes.seg_out)?,
            // Digits, histogram scan and scatter: the digit windows, and the sets.
            bparams: ctx.uniform_buffer(
                "msm bucket params",
                &digit_params::<C::Scalar>(&shape, bins, stride, rank_cap),
            ),
            ranked: rank_cap != 0,
            // Bucket sizes and chunk counts, over every set's windows (msm_bucket_sizes reads
            // the histogram of window w mod set_windows).
            ccparams: ctx.uniform_buffer(
                "msm chunk count params",
                &BucketParams {
                    set_windows: shape.set_windows,
                    ..bucket_params(n, cstride, windows, buckets)
                },
            ),
            // The chunk scan: window w's chunks start at w * cap.
            csparams: ctx.uniform_buffer(
                "msm chunk scan params",
                &bucket_params(shape.cap, stride, windows, buckets),
            ),
            // The histogram scan: one "window" of `bins` bins.
            hsparams: ctx.uniform_buffer(
                "msm chunk bin scan params",
                &bucket_params(0, 1, 1, bins.bins),
            ),
            aparams: ctx.uniform_buffer("msm accumulate params", &accumulate),
            mparams: ctx.uniform_buffer(
                "msm combine params",
                &AccumulateParams {
                    row_stride: LIST_X * WORKGROUP_SIZE,
                    stride: chunk_stride,
                    level_mode: 2,
                    ..accumulate
                },
            ),
            combine_list: zeroed("msm combine list", bytes.combine_list)?,
            dispatch_args: ctx.indirect_buffer(
                "msm chunk sums dispatch",
                u64::from(zkgpu_shaders::contract::msm_buckets::DISPATCH_WORDS)
                    * (1 + chunk_levels.len() as u64),
            )?,
            gparams: ctx.uniform_buffer(
                "msm combine args params",
                &self.args_params(&shape, chunk_levels.len() as u32),
            ),
            chunk_levels,
            rparams: ctx.uniform_buffer("msm reduce params", &self.reduce_params(&shape)),
            levels,
            left,
        })
    }

    /// `msm_bucket_accumulate`'s parameters, which the chunk sums and tree levels start from.
    fn accumulate_params(&self, shape: &Shape) -> AccumulateParams {
        let max = self.ctx.limits().max_compute_workgroups_per_dimension;
        let (_, _, row_stride) = grid(shape.chunk_slots, WORKGROUP_SIZE, max);
        AccumulateParams {
            cap: shape.cap,
            row_stride,
            consts: self.consts,
            entry_identity: self.entries[0],
            entry_madd: self.entries[1],
            neg_reg: (C::AFFINE_NEG_COORD * C::DEGREE) as u32,
            acc_regs: 4 * C::DEGREE as u32,
            neg_regs: C::DEGREE as u32,
            neg_swap: u32::from(C::AFFINE_NEG_SWAP),
            windows: shape.windows,
            buckets: shape.buckets,
            chunk: shape.chunk,
            entry_add: self.entries[2],
            stride: 1,
            group: shape.chunk_group,
            level_mode: 0,
            split_words: shape.split.1 * C::affine_packed_words() as u32,
            ..AccumulateParams::default()
        }
    }

    /// `msm_combine_args`' parameters for `levels` chunk tree levels.
    fn args_params(&self, shape: &Shape, levels: u32) -> ArgsParams {
        ArgsParams {
            x_max: LIST_X,
            levels,
            group: shape.chunk_group,
            y_max: self.ctx.limits().max_compute_workgroups_per_dimension,
        }
    }

    /// `msm_reduce_segments`' parameters.
    fn reduce_params(&self, shape: &Shape) -> ReduceParams {
        let max = self.ctx.limits().max_compute_workgroups_per_dimension;
        let threads = shape.windows * shape.segments;
        let (_, _, row_stride) = grid(threads, WORKGROUP_SIZE, max);
        ReduceParams {
            threads,
            row_stride,
            consts: self.consts,
            entry_identity: self.entries[0],
            entry_add: self.entries[2],
            acc_regs: 4 * C::DEGREE as u32,
            buckets: shape.buckets,
            segments: shape.segments,
            seg_len: (shape.buckets - 1) / shape.segments,
            bits: shape.segments.trailing_zeros(),
            block: RowLayout::new(shape.segments, shape.windows, shape.host_sums).block(),
            ..ReduceParams::default()
        }
    }

    /// Tree levels over the chunks of large buckets: a bucket has at most
    /// ceil(n load / chunk) chunks; level l adds groups of chunk_group partials
    /// chunk_group^l apart, until the final combine has at most chunk_group left. Returns
    /// each level's parameters and the final combine's stride.
    fn chunk_levels(
        &self,
        shape: &Shape,
        accumulate: AccumulateParams,
    ) -> (Vec<wgpu::Buffer>, u32) {
        let mut levels = Vec::new();
        let mut stride = 1u32;
        let most = (shape.n * shape.load).div_ceil(shape.chunk);
        while most.div_ceil(stride) > shape.chunk_group {
            levels.push(self.ctx.uniform_buffer(
                "msm chunk tree params",
                &AccumulateParams {
                    // msm_combine_args sizes the levels' grids (the kernel reads their
                    // shape from its builtins).
                    stride,
                    level_mode: 1,
                    ..accumulate
                },
            ));
            stride *= shape.chunk_group;
        }
        (levels, stride)
    }

    /// Tree levels: every row of each window's block of segment sums (docs/msm.md) added up
    /// in groups of tree_group until each row has at most `target` sums left, by
    /// msm_combine_chunks over (offset, count) groups. Returns the levels and the sums per
    /// row they leave.
    fn tree_levels(
        &self,
        shape: &Shape,
        accumulate: AccumulateParams,
    ) -> Result<(Vec<TreeLevel>, Vec<u32>)> {
        let ctx = &self.ctx;
        let (windows, group) = (shape.windows, shape.tree_group);
        let max = ctx.limits().max_compute_workgroups_per_dimension;
        let layout = RowLayout::new(shape.segments, windows, shape.host_sums);
        let mut levels = Vec::new();
        let mut runs = layout.rows.clone();
        while runs.iter().any(|&len| len > layout.target) {
            let next: Vec<u32> = runs.iter().map(|len| len.div_ceil(group)).collect();
            let per: u32 = runs.iter().sum();
            let groups = windows * next.iter().sum::<u32>();
            let mut first = Vec::with_capacity(groups as usize);
            let mut count = Vec::with_capacity(groups as usize);
            for w in 0..windows {
                let mut at = w * per;
                for &len in &runs {
                    for q in 0..len.div_ceil(group) {
                        first.push(at + q * group);
                        count.push(group.min(len - q * group));
                    }
                    at += len;
                }
            }
            let (_, _, row_stride) = grid(groups, WORKGROUP_SIZE, max);
            let point_bytes = C::acc_packed_words() as u64 * 4;
            levels.push(TreeLevel {
                first: ctx.storage_buffer("msm tree group offsets", &first)?,
                count: ctx.storage_buffer("msm tree group sizes", &count)?,
                out: ctx.storage_zeroed("msm tree sums", u64::from(groups) * point_bytes)?,
                params: ctx.uniform_buffer(
                    "msm tree params",
                    &AccumulateParams {
                        row_stride,
                        windows: 1,
                        buckets: groups,
                        ..accumulate
                    },
                ),
                groups,
            });
            runs = next;
        }
        Ok((levels, runs))
    }
}
