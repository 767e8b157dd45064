//! The MSM's pipelines and its passes: which kernel runs over which buffers, in order.

use zkgpu_curves::GpuCurve;
use zkgpu_runtime::{Checks, GpuContext, PassTimer, Pipeline, PipelineRequest, grid, wgpu};

use crate::params::{CHUNK_BINS, OVERRIDES, WORKGROUP_SIZE, scan_blocks};
use crate::scratch::Scratch;
use crate::shape::Shape;
use crate::{GpuMsm, Result};
use zkgpu_shaders::contract::{msm_accumulate as acc, msm_buckets as bk};

/// The pipelines of one MSM.
pub(crate) struct Pipelines {
    pub(crate) digits: std::sync::Arc<Pipeline>,
    pub(crate) scan_blocks: std::sync::Arc<Pipeline>,
    pub(crate) scan: std::sync::Arc<Pipeline>,
    pub(crate) scatter: std::sync::Arc<Pipeline>,
    pub(crate) sizes: std::sync::Arc<Pipeline>,
    pub(crate) chunks: std::sync::Arc<Pipeline>,
    pub(crate) order: std::sync::Arc<Pipeline>,
    pub(crate) args: std::sync::Arc<Pipeline>,
    pub(crate) acc: std::sync::Arc<Pipeline>,
    pub(crate) combine: std::sync::Arc<Pipeline>,
    pub(crate) reduce: std::sync::Arc<Pipeline>,
    /// `msm_digits_from_montgomery` (digits of scalars as arkworks stores them), where the
    /// scalar field has a module.
    pub(crate) convert: Option<std::sync::Arc<Pipeline>>,
    /// The accumulation reading two parts of the bases (`msm_accumulate/<group>/split`), for
    /// an MSM over two parts only ([`GpuMsm::split_plan`]).
    pub(crate) acc_split: Option<std::sync::Arc<Pipeline>>,
}

impl Pipelines {
    /// The accumulation pipeline this MSM runs.
    fn accumulate(&self) -> &Pipeline {
        self.acc_split.as_deref().unwrap_or(&self.acc)
    }
}

impl<C: GpuCurve> GpuMsm<C> {
    /// Builds this group's MSM pipelines now (they are otherwise built by the first MSM).
    /// Calls from two threads that both miss the context's cache would each build them.
    pub async fn build_pipelines(&self) -> Result<()> {
        self.pipelines().await.map(|_| ())
    }

    /// The MSM pipelines, built on first use and cached by the context (side by side on
    /// native targets: [`GpuContext::pipelines`]).
    pub(crate) async fn pipelines(&self) -> Result<Pipelines> {
        let b = &self.buckets_module;
        let a = &self.accumulate_module;
        let req = |module, entry, checks| PipelineRequest {
            module,
            entry,
            checks,
            constants: OVERRIDES,
        };
        // The VM's loops end (forward jumps only, HALT); the accumulation kernels' loops count
        // to bucket sizes, bit lengths and uniforms: see shaders/kernels/msm_accumulate.wgsl.
        let trusted = Checks::TrustedLoops;
        let mut requests = vec![
            req(a, acc::entry::MSM_BUCKET_ACCUMULATE, trusted),
            req(a, acc::entry::MSM_COMBINE_CHUNKS, trusted),
            req(a, acc::entry::MSM_REDUCE_SEGMENTS, trusted),
            req(b, bk::entry::MSM_DIGITS, Checks::Default),
            req(b, bk::entry::MSM_SCAN_BLOCKS, Checks::Default),
            req(b, bk::entry::MSM_SCAN, Checks::Default),
            req(b, bk::entry::MSM_SCATTER, Checks::Default),
            req(b, bk::entry::MSM_BUCKET_SIZES, Checks::Default),
            req(b, bk::entry::MSM_CHUNK_COUNTS, Checks::Default),
            req(b, bk::entry::MSM_CHUNK_ORDER, Checks::Default),
            req(b, bk::entry::MSM_COMBINE_ARGS, Checks::Default),
        ];
        if let Some(m) = &self.scalars_module {
            requests.push(req(
                m,
                zkgpu_shaders::contract::msm_scalars::entry::MSM_DIGITS_FROM_MONTGOMERY,
                Checks::Default,
            ));
        }
        let mut built = self.ctx.pipelines(&requests).await?.into_iter();
        let mut next = || built.next().expect("one pipeline per request");
        Ok(Pipelines {
            acc: next(),
            combine: next(),
            reduce: next(),
            digits: next(),
            scan_blocks: next(),
            scan: next(),
            scatter: next(),
            sizes: next(),
            chunks: next(),
            order: next(),
            args: next(),
            convert: self.scalars_module.as_ref().map(|_| next()),
            acc_split: None,
        })
    }
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

/// One compute pass: its stage (for the timings), kernel, bindings and dispatch.
pub(crate) struct Pass<'a> {
    pub(crate) stage: Stage,
    pipeline: &'a Pipeline,
    bind: &'a wgpu::BindGroup,
    pub(crate) dispatch: Dispatch,
}

/// The bind groups of one MSM over one part of the bases. Layouts derived from the shaders
/// hold only the bindings each entry point uses; bindings are named by the kernels'
/// variables (`zkgpu_shaders::contract`).
pub(crate) struct BindGroups {
    /// Whether the digits come from `msm_digits_from_montgomery` ([`digit_pipeline`]).
    convert: bool,
    digits: wgpu::BindGroup,
    /// Each scan is two dispatches over (blocks, windows): block totals, then offsets.
    bucket_scan: (wgpu::BindGroup, wgpu::BindGroup),
    scatter: wgpu::BindGroup,
    sizes: Option<wgpu::BindGroup>,
    chunks: wgpu::BindGroup,
    args: wgpu::BindGroup,
    chunk_scan: (wgpu::BindGroup, wgpu::BindGroup),
    bin_scan: (wgpu::BindGroup, wgpu::BindGroup),
    order: wgpu::BindGroup,
    accumulate: wgpu::BindGroup,
    /// The tree levels over large buckets' chunks, then the last chunk sums pass.
    chunk_levels: Vec<wgpu::BindGroup>,
    combine: wgpu::BindGroup,
    reduce: wgpu::BindGroup,
    /// The tree levels over each window's segment sums, with their grids.
    levels: Vec<(wgpu::BindGroup, (u32, u32))>,
}

impl BindGroups {
    /// The bind groups over `s`'s buffers, the formula program `code` and the part's `bases`
    /// (and a second part's, for [`Pipelines::acc_split`]).
    pub(crate) fn new(
        ctx: &GpuContext,
        p: &Pipelines,
        s: &Scratch,
        code: &wgpu::Buffer,
        bases: (&wgpu::Buffer, Option<&wgpu::Buffer>),
        convert: bool,
    ) -> Self {
        let (bucket_scan, chunk_scan, bin_scan) = (
            scan_groups(ctx, p, s, &s.counts, &s.offsets, &s.bparams),
            scan_groups(ctx, p, s, &s.chunk_counts, &s.chunk_offsets, &s.csparams),
            scan_groups(ctx, p, s, &s.chunk_hist, &s.bin_offsets, &s.hsparams),
        );
        let (accumulate, chunk_levels, combine, reduce, levels) =
            sum_groups(ctx, p, s, code, bases);
        Self {
            convert,
            // Both digit kernels take their bindings from msm_digits.wgsl.
            digits: ctx.bind_group(
                digit_pipeline(p, convert),
                &[
                    (bk::SCALARS, &s.scalars),
                    (bk::DIGITS, &s.digits),
                    (bk::COUNTS, &s.counts),
                    (bk::BP, &s.bparams),
                ],
            ),
            bucket_scan,
            scatter: ctx.bind_group(
                &p.scatter,
                &[
                    (bk::DIGITS, &s.digits),
                    (bk::COUNTS, &s.cursors),
                    (bk::OFFSETS, &s.offsets),
                    (bk::ENTRIES, &s.entries),
                    (bk::BP, &s.bparams),
                ],
            ),
            // Where digit words keep ranks, every bucket's size into `cursors` (the scatter's
            // cursors then count only ranks past the cap), from the histogram of its digit
            // window; without ranks the scatter's cursors end equal to the sizes.
            sizes: s.ranked.then(|| {
                ctx.bind_group(
                    &p.sizes,
                    &[
                        (bk::COUNTS, &s.counts),
                        (bk::OFFSETS, &s.cursors),
                        (bk::BP, &s.ccparams),
                    ],
                )
            }),
            chunks: ctx.bind_group(
                &p.chunks,
                &[
                    (bk::COUNTS, &s.cursors),
                    (bk::OFFSETS, &s.chunk_counts),
                    (bk::BP, &s.ccparams),
                    (bk::CHUNK_BINS, &s.chunk_hist),
                    (bk::COMBINE_LIST, &s.combine_list),
                ],
            ),
            args: ctx.bind_group(
                &p.args,
                &[
                    (bk::COMBINE_LIST, &s.combine_list),
                    (bk::DISPATCH_ARGS, &s.dispatch_args),
                    (bk::GP, &s.gparams),
                ],
            ),
            chunk_scan,
            bin_scan,
            order: ctx.bind_group(
                &p.order,
                &[
                    (bk::COUNTS, &s.cursors),
                    (bk::OFFSETS, &s.bin_offsets),
                    (bk::ENTRIES, &s.chunk_order),
                    (bk::BP, &s.ccparams),
                    (bk::CHUNK_BINS, &s.bin_cursors),
                ],
            ),
            accumulate,
            chunk_levels,
            combine,
            reduce,
            levels,
        }
    }

    /// The passes in order: digits, the bucket sort, accumulation, chunk sums, reduction.
    pub(crate) fn passes<'a>(&'a self, p: &'a Pipelines, shape: &Shape, max: u32) -> Vec<Pass<'a>> {
        let pass = |stage, pipeline: &'a Pipeline, bind, dispatch| Pass {
            stage,
            pipeline,
            bind,
            dispatch,
        };
        let scan = |bind: &'a (wgpu::BindGroup, wgpu::BindGroup), blocks, windows| {
            let grid = Dispatch::Grid(blocks, windows);
            [
                pass(Stage::Scan, &p.scan_blocks, &bind.0, grid),
                pass(Stage::Scan, &p.scan, &bind.1, grid),
            ]
        };
        let on = |count: u32| {
            let (x, y, _) = grid(count, WORKGROUP_SIZE, max);
            Dispatch::Grid(x, y)
        };
        let (points, slots, chunks) = (on(shape.n), on(shape.slots), on(shape.chunk_slots));
        // One invocation per digit; `Shape::new` refuses more than 2^32 entries, so no overflow.
        let digits = on(shape.n.saturating_mul(shape.digit_windows));
        let (windows, blocks) = (shape.windows, scan_blocks(shape.buckets));
        let mut out = Vec::new();
        let digit_kernel = digit_pipeline(p, self.convert);
        out.push(pass(Stage::Digits, digit_kernel, &self.digits, points));
        out.extend(scan(&self.bucket_scan, blocks, windows));
        out.push(pass(Stage::Scatter, &p.scatter, &self.scatter, digits));
        if let Some(sizes) = &self.sizes {
            out.push(pass(Stage::Scatter, &p.sizes, sizes, slots));
        }
        out.push(pass(Stage::Scan, &p.chunks, &self.chunks, slots));
        out.push(pass(Stage::Scan, &p.args, &self.args, Dispatch::Grid(1, 1)));
        out.extend(scan(&self.chunk_scan, blocks, windows));
        out.extend(scan(&self.bin_scan, scan_blocks(CHUNK_BINS), 1));
        out.push(pass(Stage::Scan, &p.order, &self.order, slots));
        out.push(pass(
            Stage::Accumulate,
            p.accumulate(),
            &self.accumulate,
            chunks,
        ));
        // The chunk sums' dispatches are sized on the GPU (msm_combine_args): the tree levels
        // only where some bucket has that many chunks, the last pass only over the buckets of
        // zero or several chunks.
        for (l, bind) in self.chunk_levels.iter().enumerate() {
            let offset = 4 * u64::from(bk::DISPATCH_WORDS) * (l as u64 + 1);
            out.push(pass(
                Stage::Combine,
                &p.combine,
                bind,
                Dispatch::Indirect(offset),
            ));
        }
        out.push(pass(
            Stage::Combine,
            &p.combine,
            &self.combine,
            Dispatch::Indirect(0),
        ));
        out.push(pass(
            Stage::Reduce,
            &p.reduce,
            &self.reduce,
            on(windows * shape.segments),
        ));
        for (bind, (x, y)) in &self.levels {
            out.push(pass(
                Stage::Reduce,
                &p.combine,
                bind,
                Dispatch::Grid(*x, *y),
            ));
        }
        out
    }
}

/// The digits kernel: `msm_digits_from_montgomery` for scalars as arkworks stores them
/// (`convert`, where the scalar field has a module), else `msm_digits`.
fn digit_pipeline(p: &Pipelines, convert: bool) -> &Pipeline {
    match &p.convert {
        Some(montgomery) if convert => montgomery,
        _ => &p.digits,
    }
}

/// The two bind groups of a scan of `counts` into `offsets` with `params`.
fn scan_groups(
    ctx: &GpuContext,
    p: &Pipelines,
    s: &Scratch,
    counts: &wgpu::Buffer,
    offsets: &wgpu::Buffer,
    params: &wgpu::Buffer,
) -> (wgpu::BindGroup, wgpu::BindGroup) {
    (
        ctx.bind_group(
            &p.scan_blocks,
            &[
                (bk::COUNTS, counts),
                (bk::BP, params),
                (bk::BLOCK_SUMS, &s.block_sums),
            ],
        ),
        ctx.bind_group(
            &p.scan,
            &[
                (bk::COUNTS, counts),
                (bk::OFFSETS, offsets),
                (bk::BP, params),
                (bk::BLOCK_SUMS, &s.block_sums),
            ],
        ),
    )
}

type SumGroups = (
    wgpu::BindGroup,
    Vec<wgpu::BindGroup>,
    wgpu::BindGroup,
    wgpu::BindGroup,
    Vec<(wgpu::BindGroup, (u32, u32))>,
);

/// The bind groups of the summing passes: accumulation, chunk tree levels, the last chunk
/// sums, the reduction, and the segment tree levels.
fn sum_groups(
    ctx: &GpuContext,
    p: &Pipelines,
    s: &Scratch,
    code: &wgpu::Buffer,
    bases: (&wgpu::Buffer, Option<&wgpu::Buffer>),
) -> SumGroups {
    let mut acc_bindings = vec![
        (acc::VM_CODE, code),
        (acc::BASES, bases.0),
        (acc::ENTRIES, &s.entries),
        (acc::OFFSETS, &s.offsets),
        (acc::AP, &s.aparams),
        (acc::CHUNK_OFFSETS, &s.chunk_offsets),
        (acc::PARTIALS, &s.partials),
        (acc::CHUNK_ORDER, &s.chunk_order),
    ];
    // A second part binds only to the split pipeline's layout (the engine sets both).
    if let Some(hi) = bases.1 {
        acc_bindings.push((acc::BASES_HI, hi));
    }
    let accumulate = ctx.bind_group(p.accumulate(), &acc_bindings);
    let combine = |out: &wgpu::Buffer, params, first, count, input| {
        ctx.bind_group(
            &p.combine,
            &[
                (acc::VM_CODE, code),
                (acc::BUCKET_SUMS, out),
                (acc::AP, params),
                (acc::CHUNK_OFFSETS, first),
                (acc::CHUNK_COUNTS, count),
                (acc::PARTIALS, input),
                (acc::COMBINE_LIST, &s.combine_list),
            ],
        )
    };
    let chunk = |params| {
        combine(
            &s.sums,
            params,
            &s.chunk_offsets,
            &s.chunk_counts,
            &s.partials,
        )
    };
    let reduce = ctx.bind_group(
        &p.reduce,
        &[
            (acc::VM_CODE, code),
            (acc::BUCKET_SUMS, &s.sums),
            (acc::RP, &s.rparams),
            (acc::SEG_OUT, &s.seg_out),
            (acc::CHUNK_OFFSETS, &s.chunk_offsets),
            (acc::CHUNK_COUNTS, &s.chunk_counts),
            (acc::PARTIALS, &s.partials),
        ],
    );
    // Tree levels: each window's segment sums added up in groups.
    let max = ctx.limits().max_compute_workgroups_per_dimension;
    let mut input = &s.seg_out;
    let mut levels = Vec::new();
    for level in &s.levels {
        let bind = combine(&level.out, &level.params, &level.first, &level.count, input);
        let (x, y, _) = grid(level.groups, WORKGROUP_SIZE, max);
        levels.push((bind, (x, y)));
        input = &level.out;
    }
    (
        accumulate,
        s.chunk_levels.iter().map(chunk).collect(),
        chunk(&s.mparams),
        reduce,
        levels,
    )
}

/// Records `passes` into a new encoder, after clearing the buffers the kernels count into,
/// each pass timed by `timer` where given.
pub(crate) fn encode(
    ctx: &GpuContext,
    passes: &[Pass<'_>],
    s: &Scratch,
    timer: Option<&PassTimer>,
    separate: bool,
) -> wgpu::CommandEncoder {
    let mut enc = ctx
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("msm") });
    // Reused buffers that the kernels count into or read past what they write.
    for buf in [
        &s.counts,
        &s.cursors,
        &s.chunk_hist,
        &s.bin_cursors,
        &s.chunk_order,
    ] {
        enc.clear_buffer(buf, 0, None);
    }
    // The combine list's count, maximum and first-bin chunks.
    enc.clear_buffer(
        &s.combine_list,
        0,
        Some(4 * u64::from(bk::COMBINE_LIST_HEADER)),
    );
    // Untimed, every dispatch goes into one compute pass (wgpu orders them with the same
    // barriers); timed, each pass gets its own, with its timestamps.
    let dispatch = |cp: &mut wgpu::ComputePass<'_>, pass: &Pass<'_>| {
        cp.set_pipeline(&pass.pipeline.pipeline);
        cp.set_bind_group(0, pass.bind, &[]);
        match pass.dispatch {
            Dispatch::Grid(x, y) => cp.dispatch_workgroups(x, y, 1),
            Dispatch::Indirect(offset) => cp.dispatch_workgroups_indirect(&s.dispatch_args, offset),
        }
    };
    if timer.is_none() && !separate {
        let mut cp = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("msm"),
            timestamp_writes: None,
        });
        for pass in passes {
            dispatch(&mut cp, pass);
        }
    } else {
        for (k, pass) in passes.iter().enumerate() {
            let mut cp = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("msm stage"),
                timestamp_writes: timer.map(|t| t.writes(k as u32, true, true)),
            });
            dispatch(&mut cp, pass);
        }
    }
    if let Some(timer) = timer {
        timer.resolve(&mut enc);
    }
    enc
}
