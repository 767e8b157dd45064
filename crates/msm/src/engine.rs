//! The MSM engine: its entry points and the run of one MSM over each part of the bases.

use ark_ec::VariableBaseMSM;
use ark_ff::{PrimeField, Zero};
use zkgpu_curves::GpuCurve;
#[cfg(not(target_arch = "wasm32"))]
use zkgpu_runtime::BlockOn;
use zkgpu_runtime::{Arith, GpuContext, GpuError, wgpu};
use zkgpu_shaders::{msm_accumulate, msm_accumulate_split, msm_buckets, msm_scalars};

use crate::bases::*;
use crate::combine::{CombineError, combine_windows};
use crate::record::*;
use crate::request::{MsmOutput, MsmRequest, MsmScalars};
use crate::scalars::*;
use crate::scratch::Scratch;
use crate::shape::{Shape, default_rank_cap};
use crate::timings::MsmTimings;
use crate::{MsmConfig, MsmError, Result};

/// The MSM engine of group `C` on one GPU context: pipelines and the formula program are
/// built once and reused by every call.
#[derive(Debug)]
pub struct GpuMsm<C: GpuCurve> {
    pub(crate) ctx: GpuContext,
    /// `C::program(arith)` of the engine's arithmetic, uploaded: its code and constants.
    pub(crate) code: wgpu::Buffer,
    /// The constants' word offset in `code`.
    pub(crate) consts: u32,
    /// Where `identity`, `madd`, `add`, `dbl` and `to_affine` start.
    pub(crate) entries: [u32; 5],
    /// Composed once: the pipeline cache is keyed by module name, but composing copies the
    /// shader text.
    pub(crate) buckets_module: zkgpu_shaders::Composed,
    pub(crate) accumulate_module: zkgpu_shaders::Composed,
    /// The accumulation over two parts of the bases (its pipeline built on first use).
    pub(crate) accumulate_split_module: zkgpu_shaders::Composed,
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
    /// Ranks a digit word holds where a test set them ([`GpuMsm::with_rank_cap`]).
    pub(crate) rank_cap: Option<u32>,
    /// The planner's constants, once loaded or measured ([`GpuMsm::cost_model`]).
    pub(crate) model: std::sync::Mutex<Option<crate::CostModel>>,
    pub(crate) _curve: std::marker::PhantomData<C>,
}

/// `C`'s formula program for `arith` (the one its modules run, `GpuCurve::program`) in a
/// storage buffer: the buffer, the constants' word offset, and the entries `identity`,
/// `madd`, `add`, `dbl`, `to_affine`.
fn upload_program<C: GpuCurve>(
    ctx: &GpuContext,
    arith: Arith,
) -> Result<(wgpu::Buffer, u32, [u32; 5])> {
    let prog = C::program(arith);
    let (words, consts) = zkgpu_curves::program_words::<C>(prog);
    let mut entries = [0; 5];
    for (e, name) in entries
        .iter_mut()
        .zip(["identity", "madd", "add", "dbl", "to_affine"])
    {
        *e = prog
            .entry(name)
            .map_err(|e| MsmError::Config(e.to_string()))?;
    }
    let code = ctx.storage_buffer(&format!("{} msm program ({arith})", C::ID), &words)?;
    Ok((code, consts, entries))
}

impl<C: GpuCurve> GpuMsm<C> {
    /// The engine for `C` on `ctx`.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        let (code, consts, entries) = upload_program::<C>(ctx, ctx.arith())?;
        Ok(Self {
            ctx: ctx.clone(),
            code,
            consts,
            entries,
            buckets_module: msm_buckets(),
            accumulate_module: msm_accumulate(C::GROUP, ctx.arith()),
            accumulate_split_module: msm_accumulate_split(C::GROUP, ctx.arith()),
            scalars_module: C::GROUP.scalar_field().map(|f| msm_scalars(f, ctx.arith())),
            scratch: std::sync::Mutex::new(Vec::new()),
            max_part: None,
            rank_cap: None,
            model: std::sync::Mutex::new(None),
            _curve: std::marker::PhantomData,
        })
    }

    /// Multiplies with `arith` instead of the context's arithmetic ([`GpuContext::arith`]):
    /// for comparing arithmetics on one device (bases prepared by any arithmetic serve all:
    /// they share one Montgomery form). [`MsmError::Gpu`] with [`GpuError::Arith`] where the
    /// context found `arith` unusable.
    pub fn with_arith(mut self, arith: Arith) -> Result<Self> {
        self.ctx.check_arith(arith)?;
        (self.code, self.consts, self.entries) = upload_program::<C>(&self.ctx, arith)?;
        self.accumulate_module = msm_accumulate(C::GROUP, arith);
        self.accumulate_split_module = msm_accumulate_split(C::GROUP, arith);
        self.scalars_module = C::GROUP.scalar_field().map(|f| msm_scalars(f, arith));
        Ok(self)
    }

    /// The arithmetic this engine multiplies with.
    pub fn arith(&self) -> Arith {
        self.accumulate_module.arith
    }

    /// Stores bases prepared from now on in parts of at most `points` points (at least 1),
    /// below what the binding limit allows: tests use it to cross part boundaries with few
    /// points. Each part costs one more pass of the MSM's stages.
    pub fn with_max_part(mut self, points: usize) -> Self {
        self.max_part = Some(points.max(1));
        self
    }

    /// Digit words hold a digit's rank in its bucket below `ranks` from now on, fewer than
    /// the window width leaves room for (`2^(31 - c) - 1`), whatever the MSM's shape (by
    /// default only shapes of many digits per bucket keep ranks; docs/msm.md): tests
    /// use it to send digits down both of the scatter's paths with few points. MSMs already
    /// run keep their working buffers' setting.
    pub fn with_rank_cap(mut self, ranks: u32) -> Self {
        self.rank_cap = Some(ranks);
        self
    }

    /// The ranks `shape`'s digit words hold ([`default_rank_cap`] unless a test set them).
    pub(crate) fn rank_cap(&self, shape: &Shape) -> u32 {
        self.rank_cap.unwrap_or_else(|| default_rank_cap(shape))
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

    /// Runs one MSM request: a sum per base set, over the shorter of the bases' and the
    /// scalars' lengths (arkworks' `msm_unchecked`), and where the time went. Blocks this
    /// thread until the GPU is done (native only; [`GpuMsm::run_async`] is the future).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn run(&self, request: MsmRequest<'_, C>) -> Result<MsmOutput<C>> {
        self.run_async(request).block_on()
    }

    /// [`GpuMsm::run`] as a future.
    pub async fn run_async(&self, request: MsmRequest<'_, C>) -> Result<MsmOutput<C>> {
        let MsmRequest {
            bases,
            scalars,
            config,
            timed,
        } = request;
        let scalars = match scalars {
            MsmScalars::Field(f) => Scalars::Field(f),
            MsmScalars::Prepared(p) => Scalars::Words(p.words),
        };
        bases.context.check(self.ctx.id(), "these prepared bases")?;
        self.ctx.check_device()?;
        let mut timings = MsmTimings::default();
        let mut sums = vec![C::Projective::zero(); bases.sets];
        let n = bases.len.min(scalars.len());
        // Two parts of one set run as one MSM where the device allows (one reduction).
        if let Some(split) = self.split_plan(bases, n, config) {
            let (lo, hi) = (&bases.parts[0], &bases.parts[1]);
            sums = self
                .run_part(
                    (&lo.buffer, Some(&hi.buffer)),
                    (0, 1, lo.len, bases.fold),
                    scalars.range(0, n),
                    (config, Some(split)),
                    timed,
                    &mut timings,
                )
                .await?;
            return Ok(MsmOutput { sums, timings });
        }
        // Parts of one set each (sets that did not fit one part together) run as that set's
        // MSM; its sum goes to the set's place.
        for part in bases.parts.iter().filter(|p| p.start < n) {
            let end = n.min(part.start + part.len);
            let part_sums = self
                .run_part(
                    (&part.buffer, None),
                    (part.start, bases.sets_per_part as u32, part.len, bases.fold),
                    scalars.range(part.start, end),
                    (config, None),
                    timed,
                    &mut timings,
                )
                .await?;
            for (r, s) in sums[part.first_set..].iter_mut().zip(part_sums) {
                *r += s;
            }
        }
        Ok(MsmOutput { sums, timings })
    }

    /// `sum_i scalars[i] bases[i]`; errors when the lengths differ (arkworks' `msm`). Blocks
    /// this thread until the GPU is done (native only; [`GpuMsm::msm_async`] is the same
    /// as a future, for the browser).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm(&self, bases: &[C::Affine], scalars: &[C::Scalar]) -> Result<C::Projective> {
        self.msm_async(bases, scalars).block_on()
    }

    /// [`GpuMsm::msm`] as a future.
    pub async fn msm_async(
        &self,
        bases: &[C::Affine],
        scalars: &[C::Scalar],
    ) -> Result<C::Projective> {
        if bases.len() != scalars.len() {
            return Err(MsmError::LengthMismatch {
                bases: bases.len(),
                scalars: scalars.len(),
            });
        }
        self.msm_unchecked_async(bases, scalars).await
    }

    /// `sum_i scalars[i] bases[i]` over the shorter of the two slices (arkworks'
    /// `msm_unchecked`, which Groth16 relies on). Prepares the bases for this one call: for
    /// bases used again, [`GpuMsm::prepare`] them once and [`GpuMsm::run`] requests.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm_unchecked(
        &self,
        bases: &[C::Affine],
        scalars: &[C::Scalar],
    ) -> Result<C::Projective> {
        self.msm_unchecked_async(bases, scalars).block_on()
    }

    /// [`GpuMsm::msm_unchecked`] as a future.
    pub async fn msm_unchecked_async(
        &self,
        bases: &[C::Affine],
        scalars: &[C::Scalar],
    ) -> Result<C::Projective> {
        let n = bases.len().min(scalars.len());
        if n == 0 {
            return Ok(C::Projective::zero());
        }
        let prepared = self.prepare(&bases[..n])?;
        match self
            .run_async(MsmRequest::new(&prepared, &scalars[..n]))
            .await
        {
            // Bases outside the prime-order subgroup met an exception of BLS12-377 G1's
            // twisted Edwards form: arkworks sums them on the host instead.
            Err(MsmError::ExceptionalBases) => {
                Ok(C::Projective::msm_unchecked(&bases[..n], &scalars[..n]))
            }
            r => r?.sum(),
        }
    }

    /// The MSMs of one part of the bases (`layout`: its first point, its sets, and the points
    /// per set in its buffer) against its scalars, one per set, adding to `timings`: plan the
    /// shape, write the scalars, record the passes, submit with the download of the window
    /// sums, and combine the windows on the host.
    pub(crate) async fn run_part(
        &self,
        bases: (&wgpu::Buffer, Option<&wgpu::Buffer>),
        layout: (usize, u32, usize, Option<FoldLayout>),
        scalars: Scalars<'_, C::Scalar>,
        (config, split): (MsmConfig, Option<(u32, u32, u32)>),
        stamps: bool,
        timings: &mut MsmTimings,
    ) -> Result<Vec<C::Projective>> {
        let (part_start, sets, set_stride, fold) = layout;
        let set_stride = u32::try_from(set_stride)
            .map_err(|_| MsmError::Config(format!("{set_stride} points exceed 2^32")))?;
        let mut shape = Shape::new::<C>(
            scalars.len(),
            (sets, set_stride),
            fold,
            config,
            self.ctx.max_binding_bytes(),
        )?;
        if let Some(split) = split {
            shape = shape.with_split(split);
        }
        timings.runs += 1;
        if timings.window_bits == 0 {
            timings.window_bits = shape.c;
            timings.segments = shape.segments;
            timings.chunk = shape.chunk;
        }
        let t = web_time::Instant::now();
        let mut p = self.pipelines().await?;
        if split.is_some() {
            p.acc_split = Some(self.split_pipeline().await?);
        }
        let s = self.take_scratch(shape)?;
        tracing::debug!(group = C::ID, "msm: scratch ready");
        // Field elements as stored (Montgomery form), converted on the GPU where the scalar
        // field has a module and no width is to be checked, else canonical.
        // `MsmConfig::host_scalars` converts on the host regardless.
        let convert = p.convert.is_some()
            && matches!(scalars, Scalars::Field(_))
            && shape.scalar_bits >= C::Scalar::MODULUS_BIT_SIZE
            && !config.host_scalars;
        let setup = t.elapsed().as_secs_f64();
        // The host's threads write the scalars while one of them records the passes: bind
        // groups and command encoding then cost the MSM no wall time.
        let write = || {
            let t = web_time::Instant::now();
            let wide = write_scalars(&self.ctx, &s.scalars, scalars, convert, shape.scalar_bits);
            (wide, t.elapsed().as_secs_f64())
        };
        let record = || {
            let t = web_time::Instant::now();
            let binds = BindGroups::new(&self.ctx, &p, &s, &self.code, bases, convert);
            let max = self.ctx.limits().max_compute_workgroups_per_dimension;
            let recorded = self.record(
                &binds.passes(&p, &shape, max),
                &s,
                (stamps, config.separate_passes),
            );
            (recorded, t.elapsed().as_secs_f64())
        };
        #[cfg(not(target_arch = "wasm32"))]
        let ((too_wide, write_time), (recorded, record_time)) = rayon::join(write, record);
        #[cfg(target_arch = "wasm32")]
        let ((too_wide, write_time), (recorded, record_time)) = (write(), record());
        timings.host_scalars += write_time;
        timings.scalars_on_gpu = convert;
        timings.upload += setup + record_time;
        if let Some((index, bits)) = too_wide? {
            self.return_scratch(s);
            return Err(MsmError::ScalarTooWide {
                index: index + part_start,
                bits,
                limit: shape.scalar_bits,
            });
        }
        tracing::debug!(
            group = C::ID,
            n = scalars.len(),
            sets,
            c = shape.c,
            write_ms = write_time * 1e3,
            record_ms = record_time * 1e3,
            "msm: submitting"
        );
        let sums = self.finish(recorded, timings).await;
        tracing::debug!(group = C::ID, "msm: window sums read back");
        let (left, seg_bits) = (
            s.left.clone(),
            (shape.c - 1) - shape.segments.trailing_zeros(),
        );
        self.return_scratch(s);
        let sum_words = sums?;
        let t = web_time::Instant::now();
        let set_words = sum_words.len() / sets as usize;
        let result = sum_words
            .chunks(set_words.max(1))
            .map(|w| combine_windows::<C>(w, &left, seg_bits, shape.c))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| match e {
                CombineError::Exceptional => MsmError::ExceptionalBases,
                CombineError::Decode(e) => {
                    GpuError::Device(format!("window sums do not decode: {e}")).into()
                }
            })?;
        timings.host_combine += t.elapsed().as_secs_f64();
        tracing::debug!(group = C::ID, "msm: windows combined");
        Ok(result)
    }

    /// Records `passes` over `s` with the download of the window sums (in the same
    /// submission, so that the download does not wait behind work another thread queues
    /// meanwhile: the queue is FIFO, and the Groth16 prover's transforms are submitted while
    /// its MSMs run), each pass timed where `stamps` asks and the device has timestamps.
    fn record(
        &self,
        passes: &[Pass<'_>],
        s: &Scratch,
        (stamps, separate): (bool, bool),
    ) -> Recorded {
        let ctx = &self.ctx;
        let timer = stamps
            .then(|| ctx.pass_timer("msm stages", passes.len() as u32))
            .flatten();
        let mut enc = encode(ctx, passes, s, timer.as_ref(), separate);
        let (windows, per) = (s.shape.windows, s.left.iter().sum::<u32>());
        let result_words = (windows * per) as usize * C::acc_packed_words();
        let sums = s.levels.last().map_or(&s.seg_out, |level| &level.out);
        let pending = ctx.record_read_back(&mut enc, sums, 0, result_words, 4);
        Recorded {
            commands: enc.finish(),
            pending,
            result_words,
            timer,
            passes: passes.iter().map(|p| (p.stage, p.dispatch)).collect(),
        }
    }

    /// Submits `recorded` and returns the window sums' words, adding the GPU's time to
    /// `timings` (each pass's where it was timed).
    async fn finish(&self, recorded: Recorded, timings: &mut MsmTimings) -> Result<Vec<u32>> {
        let ctx = &self.ctx;
        let Recorded {
            commands,
            pending,
            result_words,
            timer,
            passes,
        } = recorded;
        let t = web_time::Instant::now();
        let index = ctx.queue().submit([commands]);
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
        if let Some(timer) = &timer {
            for ((stage, dispatch), secs) in passes.iter().zip(timer.seconds(ctx).await?) {
                timings.add(*stage, secs);
                timings.passes.push(crate::PassTiming {
                    stage: format!("{stage:?}"),
                    dispatch: format!("{dispatch:?}"),
                    seconds: secs,
                });
            }
        }
        Ok(sum_words)
    }
}

/// An MSM's passes recorded into one command buffer with the download of its window sums,
/// ready to submit.
struct Recorded {
    commands: wgpu::CommandBuffer,
    pending: zkgpu_runtime::PendingReadback,
    result_words: usize,
    timer: Option<zkgpu_runtime::PassTimer>,
    /// Each pass's stage and dispatch, for the timings.
    passes: Vec<(Stage, Dispatch)>,
}
