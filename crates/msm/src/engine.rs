//! The MSM engine: its entry points and the run of one MSM over each part of the bases.

use ark_ff::{PrimeField, Zero};
use zkgpu_curves::GpuCurve;
use zkgpu_runtime::{GpuContext, GpuError, Pipeline, grid, wgpu};
use zkgpu_shaders::{msm_accumulate, msm_buckets, msm_scalars};

use crate::bases::*;
use crate::combine::combine_windows;
use crate::params::*;
use crate::record::*;
use crate::scalars::*;
use crate::scratch::Scratch;
use crate::shape::Shape;
use crate::timings::MsmTimings;
use crate::{MsmConfig, MsmError, Result};

/// The MSM engine of group `C` on one GPU context: pipelines and the formula program are
/// built once and reused by every call.
#[derive(Debug)]
pub struct GpuMsm<'c, C: GpuCurve> {
    pub(crate) ctx: &'c GpuContext,
    pub(crate) code: wgpu::Buffer,
    pub(crate) consts: u32,
    pub(crate) entries: [u32; 4],
    /// Composed once: the pipeline cache is keyed by module name, but composing copies the
    /// shader text.
    pub(crate) buckets_module: zkgpu_shaders::Composed,
    pub(crate) accumulate_module: zkgpu_shaders::Composed,
    /// Converts scalars from arkworks' Montgomery form on the GPU, where the scalar field has
    /// a module (not ed-on-bls12-377's).
    pub(crate) scalars_module: Option<zkgpu_shaders::Composed>,
    /// Working buffers of recent MSM shapes, reused (allocation and first-use clearing of
    /// ~0.5 GB at 2^20 cost about 20 ms a call). A call takes one out while it runs, so
    /// concurrent calls of one shape get their own.
    pub(crate) scratch: std::sync::Mutex<Vec<Scratch>>,
    /// Most points per part of prepared bases (None: the most that the device's binding limit
    /// allows).
    pub(crate) max_part: Option<usize>,
    pub(crate) _curve: std::marker::PhantomData<C>,
}

impl<'c, C: GpuCurve> GpuMsm<'c, C> {
    /// The engine for `C` on `ctx`.
    pub fn new(ctx: &'c GpuContext) -> Result<Self> {
        let prog = C::program();
        let (words, consts) = zkgpu_curves::program_words::<C>(prog);
        let entry = |name: &str| {
            prog.entry(name)
                .map_err(|e| MsmError::Config(e.to_string()))
        };
        Ok(Self {
            ctx,
            code: ctx.storage_buffer(&format!("{} msm program", C::ID), &words)?,
            consts,
            entries: [
                entry("identity")?,
                entry("madd")?,
                entry("add")?,
                entry("dbl")?,
            ],
            buckets_module: msm_buckets(),
            accumulate_module: msm_accumulate(C::SHADER),
            scalars_module: C::SHADER.scalar_field().map(msm_scalars),
            scratch: std::sync::Mutex::new(Vec::new()),
            max_part: None,
            _curve: std::marker::PhantomData,
        })
    }

    /// Stores bases prepared from now on in parts of at most `points` points (at least 1),
    /// below what the binding limit allows: tests use it to cross part boundaries with few
    /// points. Each part costs one more pass of the MSM's stages.
    pub fn with_max_part(mut self, points: usize) -> Self {
        self.max_part = Some(points.max(1));
        self
    }

    /// Most points per part of prepared bases: the bases, the scalars and every working
    /// buffer of a default-shaped MSM over one part fit in one storage binding.
    pub fn part_len(&self) -> usize {
        self.part_len_sets(1)
    }

    /// Most points per set and part of bases prepared as `sets` base sets.
    pub fn part_len_sets(&self, sets: usize) -> usize {
        let len = part_len::<C>(self.ctx.max_binding_bytes(), sets);
        self.max_part.map_or(len, |m| m.min(len))
    }

    /// `sum_i scalars[i] bases_k[i]` for every set `k` of bases prepared by
    /// [`GpuMsm::prepare_sets`], over the shorter length (as [`GpuMsm::msm_unchecked`]).
    pub async fn msm_sets(
        &self,
        bases: &PreparedBases<C>,
        scalars: ScalarSlice<'_, C::Scalar>,
        config: MsmConfig,
    ) -> Result<Vec<C::Projective>> {
        Ok(self
            .run_sets(bases, Scalars::Words(scalars.words), config, false)
            .await?
            .0)
    }

    /// [`GpuMsm::msm_sets`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm_sets_blocking(
        &self,
        bases: &PreparedBases<C>,
        scalars: ScalarSlice<'_, C::Scalar>,
        config: MsmConfig,
    ) -> Result<Vec<C::Projective>> {
        pollster::block_on(self.msm_sets(bases, scalars, config))
    }

    /// [`GpuMsm::msm_sets_timed`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm_sets_timed_blocking(
        &self,
        bases: &PreparedBases<C>,
        scalars: &[C::Scalar],
        config: MsmConfig,
    ) -> Result<(Vec<C::Projective>, MsmTimings)> {
        pollster::block_on(self.msm_sets_timed(bases, scalars, config))
    }

    /// [`GpuMsm::msm_sets`] from field elements, also reporting where the time went.
    pub async fn msm_sets_timed(
        &self,
        bases: &PreparedBases<C>,
        scalars: &[C::Scalar],
        config: MsmConfig,
    ) -> Result<(Vec<C::Projective>, MsmTimings)> {
        self.run_sets(bases, Scalars::Field(scalars), config, true)
            .await
    }

    /// `sum_i scalars[i] bases[i]`; errors when the lengths differ.
    pub async fn msm(&self, bases: &[C::Affine], scalars: &[C::Scalar]) -> Result<C::Projective> {
        if bases.len() != scalars.len() {
            return Err(MsmError::LengthMismatch {
                bases: bases.len(),
                scalars: scalars.len(),
            });
        }
        self.msm_unchecked(bases, scalars).await
    }

    /// `sum_i scalars[i] bases[i]` over the shorter of the two slices (arkworks'
    /// `msm_unchecked`, which Groth16 relies on).
    pub async fn msm_unchecked(
        &self,
        bases: &[C::Affine],
        scalars: &[C::Scalar],
    ) -> Result<C::Projective> {
        let n = bases.len().min(scalars.len());
        if n == 0 {
            return Ok(C::Projective::zero());
        }
        let prepared = self.prepare(&bases[..n])?;
        self.msm_prepared(&prepared, &scalars[..n], MsmConfig::default())
            .await
    }

    /// `sum_i scalars[i] bases[i]` against prepared bases, over the shorter length.
    pub async fn msm_prepared(
        &self,
        bases: &PreparedBases<C>,
        scalars: &[C::Scalar],
        config: MsmConfig,
    ) -> Result<C::Projective> {
        Ok(self
            .run(bases, Scalars::Field(scalars), config, false)
            .await?
            .0)
    }

    /// `sum_i scalars[i] bases[i]` against prepared bases with scalars converted beforehand
    /// ([`PreparedScalars`]: one conversion for several MSMs), over the shorter length.
    pub async fn msm_prepared_scalars(
        &self,
        bases: &PreparedBases<C>,
        scalars: ScalarSlice<'_, C::Scalar>,
        config: MsmConfig,
    ) -> Result<C::Projective> {
        Ok(self
            .run(bases, Scalars::Words(scalars.words), config, false)
            .await?
            .0)
    }

    /// [`GpuMsm::msm_prepared_scalars`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm_prepared_scalars_blocking(
        &self,
        bases: &PreparedBases<C>,
        scalars: ScalarSlice<'_, C::Scalar>,
        config: MsmConfig,
    ) -> Result<C::Projective> {
        pollster::block_on(self.msm_prepared_scalars(bases, scalars, config))
    }

    /// [`GpuMsm::msm_prepared`], also reporting where the time went.
    pub async fn msm_prepared_timed(
        &self,
        bases: &PreparedBases<C>,
        scalars: &[C::Scalar],
        config: MsmConfig,
    ) -> Result<(C::Projective, MsmTimings)> {
        self.run(bases, Scalars::Field(scalars), config, true).await
    }

    /// One MSM over bases of one set; with `stamps`, GPU stages are timed by timestamp
    /// queries (where the device has them: a second readback).
    pub(crate) async fn run(
        &self,
        bases: &PreparedBases<C>,
        scalars: Scalars<'_, C::Scalar>,
        config: MsmConfig,
        stamps: bool,
    ) -> Result<(C::Projective, MsmTimings)> {
        if bases.sets != 1 {
            return Err(MsmError::Config(format!(
                "the bases hold {} sets: use msm_sets",
                bases.sets
            )));
        }
        let (sums, timings) = self.run_sets(bases, scalars, config, stamps).await?;
        Ok((sums.into_iter().next().unwrap_or_default(), timings))
    }

    /// One MSM per base set.
    pub(crate) async fn run_sets(
        &self,
        bases: &PreparedBases<C>,
        scalars: Scalars<'_, C::Scalar>,
        config: MsmConfig,
        stamps: bool,
    ) -> Result<(Vec<C::Projective>, MsmTimings)> {
        bases.context.check(self.ctx.id(), "these prepared bases")?;
        self.ctx.check_device()?;
        let mut timings = MsmTimings::default();
        let mut result = vec![C::Projective::zero(); bases.sets];
        let n = bases.len.min(scalars.len());
        for part in bases.parts.iter().take_while(|p| p.start < n) {
            let end = n.min(part.start + part.len);
            let scalars = scalars.range(part.start, end);
            let sums = self
                .run_part(
                    &part.buffer,
                    (part.start, bases.sets as u32, part.len, bases.fold),
                    scalars,
                    config,
                    stamps,
                    &mut timings,
                )
                .await?;
            for (r, s) in result.iter_mut().zip(sums) {
                *r += s;
            }
        }
        Ok((result, timings))
    }

    /// The MSMs of one part of the bases (`layout`: its first point, its sets, and the points
    /// per set in its buffer) against its scalars, one per set, adding to `timings`.
    pub(crate) async fn run_part(
        &self,
        bases: &wgpu::Buffer,
        layout: (usize, u32, usize, Option<FoldLayout>),
        scalars: Scalars<'_, C::Scalar>,
        config: MsmConfig,
        stamps: bool,
        timings: &mut MsmTimings,
    ) -> Result<Vec<C::Projective>> {
        let (part_start, sets, set_stride, fold) = layout;
        let set_stride = u32::try_from(set_stride)
            .map_err(|_| MsmError::Config(format!("{set_stride} points exceed 2^32")))?;
        let shape = Shape::new::<C>(
            scalars.len(),
            (sets, set_stride),
            fold,
            config,
            self.ctx.max_binding_bytes(),
        )?;
        if timings.window_bits == 0 {
            timings.window_bits = shape.c;
            timings.segments = shape.segments;
            timings.chunk = shape.chunk;
        }
        let t = web_time::Instant::now();
        let ctx = self.ctx;
        let p = self.pipelines().await?;
        let taken = {
            let mut pool = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
            pool.iter()
                .position(|s| s.shape == shape)
                .map(|k| pool.remove(k))
        };
        let s = match taken {
            Some(s) => s,
            None => self.scratch_for(shape)?,
        };
        // Scalars to words on the host's threads, straight into the staging memory: field
        // elements as stored (Montgomery form), converted on the GPU where the scalar field
        // has a module and no width is to be checked, else canonical.
        let t_scalars = web_time::Instant::now();
        let limit = shape.scalar_bits;
        // ZKGPU_MSM_HOST_SCALARS=1 (a developer's switch) converts on the host regardless,
        // to compare the two in one run.
        let convert = match (&p.convert, scalars) {
            (Some(pipeline), Scalars::Field(_))
                if limit >= C::Scalar::MODULUS_BIT_SIZE && !host_scalars_forced() =>
            {
                Some(pipeline)
            }
            _ => None,
        };
        let too_wide = std::sync::Mutex::new(None);
        ctx.write_par(&s.scalars, 0, 32 * scalars.len() as u64, 32, |at, block| {
            if convert.is_some() {
                scalars.write_montgomery(at / 32, block);
                return;
            }
            scalars.write_words(at / 32, block);
            if limit < 256 {
                let words: &[u32] = bytemuck::cast_slice(block);
                for (k, w) in words.chunks_exact(8).enumerate() {
                    let bits = scalar_bits(w);
                    if bits > limit {
                        let mut first = too_wide.lock().unwrap_or_else(|e| e.into_inner());
                        first.get_or_insert((at / 32 + k, bits));
                        break;
                    }
                }
            }
        })?;
        if let Some((index, bits)) = too_wide.into_inner().unwrap_or_else(|e| e.into_inner()) {
            self.return_scratch(s);
            return Err(MsmError::ScalarTooWide {
                index: index + part_start,
                bits,
                limit,
            });
        }
        let scalar_time = t_scalars.elapsed().as_secs_f64();
        timings.host_scalars += scalar_time;
        timings.scalars_on_gpu = convert.is_some();
        let Shape {
            n: n32,
            windows,
            slots,
            chunk_slots,
            ..
        } = shape;
        let max = ctx.limits().max_compute_workgroups_per_dimension;
        let (sx, sy, _) = grid(n32, WORKGROUP_SIZE, max);
        let (cx, cy, _) = grid(slots, WORKGROUP_SIZE, max);
        let (ax, ay, _) = grid(chunk_slots, WORKGROUP_SIZE, max);
        let (rx, ry, _) = grid(windows * shape.segments, WORKGROUP_SIZE, max);
        // Layouts derived from the shaders hold only the bindings each entry point uses.
        let bg_convert =
            convert.map(|pipeline| ctx.bind_group(pipeline, &[(0, &s.scalars), (5, &s.bparams)]));
        let bg_digits = ctx.bind_group(
            &p.digits,
            &[
                (0, &s.scalars),
                (1, &s.digits),
                (2, &s.counts),
                (5, &s.bparams),
            ],
        );
        // Each scan is two dispatches over (blocks, windows): block totals, then offsets.
        let scan_groups = |counts: &wgpu::Buffer, offsets: &wgpu::Buffer, params: &wgpu::Buffer| {
            (
                ctx.bind_group(
                    &p.scan_blocks,
                    &[(2, counts), (5, params), (7, &s.block_sums)],
                ),
                ctx.bind_group(
                    &p.scan,
                    &[(2, counts), (3, offsets), (5, params), (7, &s.block_sums)],
                ),
            )
        };
        let bg_scan = scan_groups(&s.counts, &s.offsets, &s.bparams);
        let bg_scatter = ctx.bind_group(
            &p.scatter,
            &[
                (1, &s.digits),
                (2, &s.cursors),
                (3, &s.offsets),
                (4, &s.entries),
                (5, &s.bparams),
            ],
        );
        // The scatter's cursors end equal to the bucket sizes of every window of every set (the
        // histogram `counts` holds the digit windows only).
        let bg_chunks = ctx.bind_group(
            &p.chunks,
            &[
                (2, &s.cursors),
                (3, &s.chunk_counts),
                (5, &s.ccparams),
                (6, &s.chunk_hist),
                (8, &s.combine_list),
            ],
        );
        let bg_args = ctx.bind_group(
            &p.args,
            &[
                (8, &s.combine_list),
                (9, &s.dispatch_args),
                (10, &s.gparams),
            ],
        );
        let bg_chunk_scan = scan_groups(&s.chunk_counts, &s.chunk_offsets, &s.csparams);
        let bg_bin_scan = scan_groups(&s.chunk_hist, &s.bin_offsets, &s.hsparams);
        let bucket_blocks = scan_blocks(shape.buckets);
        let bg_order = ctx.bind_group(
            &p.order,
            &[
                (2, &s.cursors),
                (3, &s.bin_offsets),
                (4, &s.chunk_order),
                (5, &s.ccparams),
                (6, &s.bin_cursors),
            ],
        );
        let bg_acc = ctx.bind_group(
            &p.acc,
            &[
                (0, &self.code),
                (1, bases),
                (2, &s.entries),
                (3, &s.offsets),
                (4, &s.cursors),
                (6, &s.aparams),
                (9, &s.chunk_offsets),
                (11, &s.partials),
                (12, &s.chunk_order),
            ],
        );
        let combine_group = |params: &wgpu::Buffer| {
            ctx.bind_group(
                &p.combine,
                &[
                    (0, &self.code),
                    (5, &s.sums),
                    (6, params),
                    (9, &s.chunk_offsets),
                    (10, &s.chunk_counts),
                    (11, &s.partials),
                    (12, &s.chunk_order),
                    (15, &s.combine_list),
                ],
            )
        };
        let bg_chunk_levels: Vec<wgpu::BindGroup> =
            s.chunk_levels.iter().map(combine_group).collect();
        let bg_combine = combine_group(&s.mparams);
        let bg_reduce = ctx.bind_group(
            &p.reduce,
            &[
                (0, &self.code),
                (5, &s.sums),
                (7, &s.rparams),
                (8, &s.seg_out),
                (9, &s.chunk_offsets),
                (10, &s.chunk_counts),
                (11, &s.partials),
            ],
        );
        // Tree levels: each window's segment sums added up in groups.
        let mut level_in = &s.seg_out;
        let mut level_groups = Vec::new();
        for level in &s.levels {
            let bg = ctx.bind_group(
                &p.combine,
                &[
                    (0, &self.code),
                    (5, &level.out),
                    (6, &level.params),
                    (9, &level.first),
                    (10, &level.count),
                    (11, level_in),
                    (12, &s.chunk_order),
                    (15, &s.combine_list),
                ],
            );
            level_groups.push((bg, grid(level.groups, WORKGROUP_SIZE, max)));
            level_in = &level.out;
        }
        timings.upload += t.elapsed().as_secs_f64() - scalar_time;

        let device = ctx.device();
        // (stage kind, pipeline, bind group, dispatch): kinds index MsmTimings' GPU fields.
        let mut stages: Vec<(Stage, &Pipeline, &wgpu::BindGroup, Dispatch)> = Vec::new();
        if let (Some(pipeline), Some(bg)) = (convert, &bg_convert) {
            stages.push((Stage::Digits, pipeline, bg, Dispatch::Grid(sx, sy)));
        }
        stages.push((Stage::Digits, &p.digits, &bg_digits, Dispatch::Grid(sx, sy)));
        stages.extend(scan_stages(&p, &bg_scan, bucket_blocks, windows));
        stages.extend([
            (
                Stage::Scatter,
                &*p.scatter,
                &bg_scatter,
                Dispatch::Grid(sx, sy),
            ),
            (Stage::Scan, &*p.chunks, &bg_chunks, Dispatch::Grid(cx, cy)),
            (Stage::Scan, &*p.args, &bg_args, Dispatch::Grid(1, 1)),
        ]);
        stages.extend(scan_stages(&p, &bg_chunk_scan, bucket_blocks, windows));
        stages.extend(scan_stages(&p, &bg_bin_scan, scan_blocks(CHUNK_BINS), 1));
        stages.extend([
            (Stage::Scan, &*p.order, &bg_order, Dispatch::Grid(cx, cy)),
            (Stage::Accumulate, &*p.acc, &bg_acc, Dispatch::Grid(ax, ay)),
        ]);
        // The chunk sums' dispatches are sized on the GPU (msm_combine_args): the tree levels
        // only where some bucket has that many chunks, the last pass only over the buckets of
        // zero or several chunks.
        for (l, bg) in bg_chunk_levels.iter().enumerate() {
            let offset = 12 * (l as u64 + 1);
            stages.push((Stage::Combine, &p.combine, bg, Dispatch::Indirect(offset)));
        }
        stages.push((
            Stage::Combine,
            &p.combine,
            &bg_combine,
            Dispatch::Indirect(0),
        ));
        stages.push((Stage::Reduce, &p.reduce, &bg_reduce, Dispatch::Grid(rx, ry)));
        for (bg, (x, y, _)) in &level_groups {
            stages.push((Stage::Reduce, &p.combine, bg, Dispatch::Grid(*x, *y)));
        }
        let n_stamps = 2 * stages.len() as u32;
        let stamps = (stamps && ctx.has_timestamps()).then(|| {
            device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("msm stages"),
                ty: wgpu::QueryType::Timestamp,
                count: n_stamps,
            })
        });
        let mut enc =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("msm") });
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
        // The combine list's count and maximum.
        enc.clear_buffer(&s.combine_list, 0, Some(8));
        for (k, (_, pipeline, bind, dispatch)) in stages.iter().enumerate() {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("msm stage"),
                timestamp_writes: stamps.as_ref().map(|q| wgpu::ComputePassTimestampWrites {
                    query_set: q,
                    beginning_of_pass_write_index: Some(2 * k as u32),
                    end_of_pass_write_index: Some(2 * k as u32 + 1),
                }),
            });
            pass.set_pipeline(&pipeline.pipeline);
            pass.set_bind_group(0, *bind, &[]);
            match *dispatch {
                Dispatch::Grid(x, y) => pass.dispatch_workgroups(x, y, 1),
                Dispatch::Indirect(offset) => {
                    pass.dispatch_workgroups_indirect(&s.dispatch_args, offset)
                }
            }
        }
        let resolve = stamps.as_ref().map(|q| {
            let buf = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("msm timestamps"),
                size: 8 * u64::from(n_stamps),
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            enc.resolve_query_set(q, 0..n_stamps, &buf, 0);
            buf
        });
        // The download of the window sums rides in the same submission as the kernels, so it
        // does not wait behind work another thread queues meanwhile (the queue is FIFO; the
        // Groth16 prover's transforms are submitted while its MSMs run).
        let per: u32 = s.left.iter().sum();
        let result_words = (windows * per) as usize * C::acc_words();
        let pending = ctx.record_read_back(&mut enc, level_in, 0, result_words, 4);
        let t = web_time::Instant::now();
        let index = ctx.queue().submit([enc.finish()]);
        let mut sum_words = vec![0u32; result_words];
        ctx.finish_read_back(
            pending,
            index,
            &mut sum_words,
            |bytes, out: &mut [u32], _| {
                bytemuck::cast_slice_mut::<u32, u8>(out).copy_from_slice(bytes);
                Ok::<(), std::convert::Infallible>(())
            },
        )
        .await?
        .unwrap_or_else(|never| match never {});
        timings.gpu_total += t.elapsed().as_secs_f64();
        if let Some(buf) = &resolve {
            let ticks: Vec<u64> = ctx.read_back(buf, 8 * u64::from(n_stamps)).await?;
            let period = f64::from(ctx.queue().get_timestamp_period()) * 1e-9;
            // A developer's view of every pass (ZKGPU_MSM_PASSES=1): which dispatch of a
            // stage takes the time.
            let passes = std::env::var_os("ZKGPU_MSM_PASSES").is_some();
            for (k, (kind, _, _, dispatch)) in stages.iter().enumerate() {
                let secs = ticks[2 * k + 1].saturating_sub(ticks[2 * k]) as f64 * period;
                if passes {
                    eprintln!("pass {k:2} {kind:?} {dispatch:?}: {:.3} ms", secs * 1e3);
                }
                *match kind {
                    Stage::Digits => &mut timings.digits,
                    Stage::Scan => &mut timings.scan,
                    Stage::Scatter => &mut timings.scatter,
                    Stage::Accumulate => &mut timings.accumulate,
                    Stage::Combine => &mut timings.combine,
                    Stage::Reduce => &mut timings.reduce,
                } += secs;
            }
        }
        drop(stages);
        drop(level_groups);
        drop(bg_chunk_levels);
        let left = s.left.clone();
        let seg_bits = (shape.c - 1) - shape.segments.trailing_zeros();
        self.return_scratch(s);
        let t = web_time::Instant::now();
        let set_words = sum_words.len() / sets as usize;
        let result = sum_words
            .chunks(set_words.max(1))
            .map(|w| combine_windows::<C>(w, &left, seg_bits, shape.c))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| GpuError::Device(format!("window sums do not decode: {e}")))?;
        timings.host_combine += t.elapsed().as_secs_f64();
        Ok(result)
    }

    /// [`GpuMsm::msm`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm_blocking(
        &self,
        bases: &[C::Affine],
        scalars: &[C::Scalar],
    ) -> Result<C::Projective> {
        pollster::block_on(self.msm(bases, scalars))
    }

    /// [`GpuMsm::msm_unchecked`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm_unchecked_blocking(
        &self,
        bases: &[C::Affine],
        scalars: &[C::Scalar],
    ) -> Result<C::Projective> {
        pollster::block_on(self.msm_unchecked(bases, scalars))
    }

    /// [`GpuMsm::msm_prepared_timed`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm_prepared_timed_blocking(
        &self,
        bases: &PreparedBases<C>,
        scalars: &[C::Scalar],
        config: MsmConfig,
    ) -> Result<(C::Projective, MsmTimings)> {
        pollster::block_on(self.msm_prepared_timed(bases, scalars, config))
    }

    /// [`GpuMsm::msm_prepared`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm_prepared_blocking(
        &self,
        bases: &PreparedBases<C>,
        scalars: &[C::Scalar],
        config: MsmConfig,
    ) -> Result<C::Projective> {
        pollster::block_on(self.msm_prepared(bases, scalars, config))
    }
}
