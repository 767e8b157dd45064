//! Multi-scalar multiplication on the GPU for the arkworks groups of [`zkgpu_curves`].
//!
//! Pippenger's bucket method with signed `c`-bit window digits. On the GPU: digit
//! decomposition with a bucket-size histogram, a per-window prefix sum and a scatter that sort
//! point indices into buckets (a counting sort), and bucket accumulation with the group's mixed
//! addition on the curve VM. On the host, for now: the weighted bucket sums (running sums) and
//! the combination of windows (Horner). docs/msm.md describes the pipeline.
//!
//! Semantics follow arkworks' `VariableBaseMSM`: [`GpuMsm::msm`] errors when the lengths
//! differ, [`GpuMsm::msm_unchecked`] uses the shorter length, empty input gives the identity.

mod digits;

use ark_ec::AdditiveGroup;
use ark_ff::{BigInteger, PrimeField, Zero};
use rayon::prelude::*;
use zkgpu_curves::{GpuCurve, decode_projective, encode_affine};
use zkgpu_limbs::encode_slice;
use zkgpu_runtime::wgpu;
use zkgpu_runtime::{Checks, GpuContext, GpuError, Pipeline, grid};
use zkgpu_shaders::{msm_accumulate, msm_buckets};

pub use digits::{signed_digits, window_count};

/// Errors of an MSM.
#[derive(Debug, thiserror::Error)]
pub enum MsmError {
    /// `msm` was given different numbers of bases and scalars.
    #[error("{bases} bases but {scalars} scalars (msm_unchecked uses the shorter length)")]
    LengthMismatch {
        /// Bases given.
        bases: usize,
        /// Scalars given.
        scalars: usize,
    },
    /// A configuration value is out of range.
    #[error("invalid MSM configuration: {0}")]
    Config(String),
    /// The GPU failed, or the input does not fit on it.
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// `Result` with [`MsmError`].
pub type Result<T, E = MsmError> = std::result::Result<T, E>;

/// Tuning knobs of one MSM. Every field defaults to a choice made from the input size.
#[derive(Clone, Copy, Debug, Default)]
pub struct MsmConfig {
    /// Window width `c` in bits, 2..=16 (default: from `n`, see [`default_window_bits`]).
    pub window_bits: Option<u32>,
    /// Segments per window of the GPU bucket reduction, a power of two up to the window's
    /// `2^(c-1)` buckets (default: as many as that, at most 256). The host combines
    /// `2 x segments` points per window.
    pub reduce_segments: Option<u32>,
    /// Most entries one invocation adds during bucket accumulation; larger buckets are split
    /// into chunks summed in parallel (default: from `n`, see [`default_chunk`]).
    pub chunk: Option<u32>,
}

/// The default accumulation chunk for `n` points: about `sqrt(n)` (at least 32), which bounds
/// the serial work of a bucket holding every point by about `2 sqrt(n)` additions.
pub fn default_chunk(n: usize) -> u32 {
    let bits = usize::BITS - n.max(1).leading_zeros();
    (1u32 << bits.div_ceil(2)).max(32)
}

/// The default window width for `n` points: about `ln n`, as arkworks chooses, within 2..=16,
/// from `ceil(log2 n) + 1`, so that sizes just below a power of two (a Groth16 H query has
/// `2^k - 1` points) get the window of the power of two: on the H100, 2^20 points take
/// 65.9 ms of GPU time with c = 16 and 127.6 ms with c = 15 (docs/PERFORMANCE.md).
pub fn default_window_bits(n: usize) -> u32 {
    if n < 32 {
        3
    } else {
        // ln n = log2 n * 0.693
        let ceil_log2 = usize::BITS - (n - 1).leading_zeros();
        ((ceil_log2 + 1) * 69 / 100 + 2).clamp(2, 16)
    }
}

const WORKGROUP_SIZE: u32 = 64;

/// GPU stages of one MSM (timestamp pairs).
const STAGES: usize = 8;

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct BucketParams {
    n: u32,
    row_stride: u32,
    c: u32,
    windows: u32,
    buckets: u32,
    chunk: u32,
    _pad: [u32; 2],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct ReduceParams {
    threads: u32,
    row_stride: u32,
    consts: u32,
    entry_identity: u32,
    entry_add: u32,
    acc_regs: u32,
    buckets: u32,
    segments: u32,
    seg_len: u32,
    _pad: [u32; 3],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct AccumulateParams {
    cap: u32,
    row_stride: u32,
    consts: u32,
    entry_identity: u32,
    entry_madd: u32,
    neg_reg: u32,
    acc_regs: u32,
    affine_regs: u32,
    neg_regs: u32,
    windows: u32,
    buckets: u32,
    chunk: u32,
    entry_add: u32,
    _pad: [u32; 3],
}

/// Where the time of one MSM went (seconds). GPU stages come from timestamp queries where the
/// device has them (else they are zero and `gpu_total` is the wall time of the GPU work).
#[derive(Clone, Copy, Debug, Default)]
pub struct MsmTimings {
    /// Scalars to canonical integers on the host.
    pub host_scalars: f64,
    /// Scalar upload and buffer set-up.
    pub upload: f64,
    /// Signed digits and bucket histogram.
    pub digits: f64,
    /// Per-window prefix sums of bucket sizes and of chunk counts, and the chunk counts.
    pub scan: f64,
    /// Scatter into buckets.
    pub scatter: f64,
    /// Bucket accumulation in chunks (mixed additions).
    pub accumulate: f64,
    /// Sums of the chunks of each bucket (full additions; copies for one-chunk buckets).
    pub combine: f64,
    /// Bucket reduction, phase 1.
    pub reduce: f64,
    /// Submit to readback complete, wall time.
    pub gpu_total: f64,
    /// Decoding and combining segment sums and windows on the host.
    pub host_combine: f64,
    /// Window width used.
    pub window_bits: u32,
    /// Reduction segments per window used.
    pub segments: u32,
    /// Accumulation chunk used (entries per invocation at most).
    pub chunk: u32,
}

/// Bases uploaded once, in GPU form, for many MSMs (a proving key's bases are fixed).
#[derive(Debug)]
pub struct PreparedBases<C: GpuCurve> {
    buffer: wgpu::Buffer,
    len: usize,
    _curve: std::marker::PhantomData<C>,
}

impl<C: GpuCurve> PreparedBases<C> {
    /// Number of bases.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The MSM engine of group `C` on one GPU context: pipelines and the formula program are
/// built once and reused by every call.
#[derive(Debug)]
pub struct GpuMsm<'c, C: GpuCurve> {
    ctx: &'c GpuContext,
    code: wgpu::Buffer,
    consts: u32,
    entries: [u32; 3],
    /// Composed once: the pipeline cache is keyed by module name, but composing copies the
    /// shader text.
    buckets_module: zkgpu_shaders::Composed,
    accumulate_module: zkgpu_shaders::Composed,
    _curve: std::marker::PhantomData<C>,
}

impl<'c, C: GpuCurve> GpuMsm<'c, C> {
    /// The engine for `C` on `ctx`.
    pub fn new(ctx: &'c GpuContext) -> Result<Self> {
        let prog = C::program();
        let mut words = prog.code.clone();
        let consts = words.len() as u32;
        words.extend(encode_slice(&prog.consts));
        let entry = |name: &str| {
            prog.entry(name)
                .map_err(|e| MsmError::Config(e.to_string()))
        };
        Ok(Self {
            ctx,
            code: ctx.storage_buffer(&format!("{} msm program", C::ID), &words)?,
            consts,
            entries: [entry("identity")?, entry("madd")?, entry("add")?],
            buckets_module: msm_buckets(),
            accumulate_module: msm_accumulate(C::SHADER),
            _curve: std::marker::PhantomData,
        })
    }

    /// Uploads `bases` in GPU form.
    pub fn prepare(&self, bases: &[C::Affine]) -> Result<PreparedBases<C>> {
        let words = encode_affine::<C>(bases);
        Ok(PreparedBases {
            buffer: self
                .ctx
                .storage_buffer(&format!("{} bases", C::ID), &words)?,
            len: bases.len(),
            _curve: std::marker::PhantomData,
        })
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
        Ok(self.msm_prepared_timed(bases, scalars, config).await?.0)
    }

    /// [`GpuMsm::msm_prepared`], also reporting where the time went.
    pub async fn msm_prepared_timed(
        &self,
        bases: &PreparedBases<C>,
        scalars: &[C::Scalar],
        config: MsmConfig,
    ) -> Result<(C::Projective, MsmTimings)> {
        let mut timings = MsmTimings::default();
        let n = bases.len.min(scalars.len());
        if n == 0 {
            return Ok((C::Projective::zero(), timings));
        }
        let c = config.window_bits.unwrap_or_else(|| default_window_bits(n));
        if !(2..=16).contains(&c) {
            return Err(MsmError::Config(format!(
                "window_bits {c} is outside 2..=16"
            )));
        }
        let n32 =
            u32::try_from(n).map_err(|_| MsmError::Config(format!("{n} points exceed 2^32")))?;
        let bits = C::Scalar::MODULUS_BIT_SIZE;
        let windows = window_count(bits, c);
        let buckets = (1u32 << (c - 1)) + 1;
        let slots = windows * buckets;
        let per_window = buckets - 1;
        let segments = config.reduce_segments.unwrap_or(per_window.min(256));
        if !segments.is_power_of_two() || segments > per_window {
            return Err(MsmError::Config(format!(
                "reduce_segments {segments} must be a power of two up to {per_window}"
            )));
        }
        let seg_len = per_window / segments;
        timings.window_bits = c;
        timings.segments = segments;
        let t = web_time::Instant::now();
        let words = scalar_words(&scalars[..n]);
        timings.host_scalars = t.elapsed().as_secs_f64();
        let t = web_time::Instant::now();
        let ctx = self.ctx;

        let bucket_mod = &self.buckets_module;
        let p_digits = ctx
            .pipeline(bucket_mod, "msm_digits", Checks::Default, &[])
            .await?;
        let p_scan = ctx
            .pipeline(bucket_mod, "msm_scan", Checks::Default, &[])
            .await?;
        let p_scatter = ctx
            .pipeline(bucket_mod, "msm_scatter", Checks::Default, &[])
            .await?;
        let p_chunks = ctx
            .pipeline(bucket_mod, "msm_chunk_counts", Checks::Default, &[])
            .await?;
        let acc_mod = &self.accumulate_module;
        // The VM's loops end (forward jumps only, HALT); the kernel's loops count to bucket
        // sizes and uniforms: see shaders/kernels/msm_accumulate.wgsl.
        let p_acc = ctx
            .pipeline(acc_mod, "msm_bucket_accumulate", Checks::TrustedLoops, &[])
            .await?;
        let p_combine = ctx
            .pipeline(acc_mod, "msm_combine_chunks", Checks::TrustedLoops, &[])
            .await?;
        let p_reduce = ctx
            .pipeline(acc_mod, "msm_reduce_segments", Checks::TrustedLoops, &[])
            .await?;

        let max = ctx.limits().max_compute_workgroups_per_dimension;
        let (sx, sy, stride) = grid(n32, WORKGROUP_SIZE, max);
        let scalars_buf = ctx.storage_buffer("msm scalars", &words)?;
        let digits = ctx.storage_zeroed("msm digits", u64::from(windows) * u64::from(n32) * 4)?;
        let counts = ctx.storage_zeroed("msm bucket sizes", u64::from(slots) * 4)?;
        let cursors = ctx.storage_zeroed("msm bucket cursors", u64::from(slots) * 4)?;
        let offsets = ctx.storage_zeroed("msm bucket offsets", u64::from(slots) * 4)?;
        let entries = ctx.storage_zeroed("msm entries", u64::from(windows) * u64::from(n32) * 4)?;
        let acc_words = C::acc_words() as u64;
        let sums = ctx.storage_zeroed("msm bucket sums", u64::from(slots) * acc_words * 4)?;
        let chunk = config.chunk.unwrap_or_else(|| default_chunk(n));
        if chunk == 0 {
            return Err(MsmError::Config("chunk must be at least 1".into()));
        }
        // Chunks per window: sum_b ceil(s_b / L) <= n / L + (non-empty buckets).
        let cap = n32.div_ceil(chunk) + buckets;
        let chunk_slots = u32::try_from(u64::from(windows) * u64::from(cap))
            .map_err(|_| MsmError::Config(format!("{windows} x {cap} chunks exceed 2^32")))?;
        timings.chunk = chunk;
        let bucket_params = |base: u32, row_stride: u32| BucketParams {
            n: base,
            row_stride,
            c,
            windows,
            buckets,
            chunk,
            _pad: [0; 2],
        };
        let bparams = ctx.uniform_buffer("msm bucket params", &bucket_params(n32, stride));
        let (cx, cy, cstride) = grid(slots, WORKGROUP_SIZE, max);
        let ccparams = ctx.uniform_buffer("msm chunk count params", &bucket_params(n32, cstride));
        // The chunk scan: window w's chunks start at w * cap.
        let csparams = ctx.uniform_buffer("msm chunk scan params", &bucket_params(cap, stride));
        let chunk_counts = ctx.storage_zeroed("msm chunk counts", u64::from(slots) * 4)?;
        let chunk_offsets = ctx.storage_zeroed("msm chunk offsets", u64::from(slots) * 4)?;
        let partials = ctx.storage_zeroed(
            "msm chunk sums",
            u64::from(chunk_slots) * C::acc_words() as u64 * 4,
        )?;
        let (ax, ay, astride) = grid(chunk_slots, WORKGROUP_SIZE, max);
        let acc_regs = 4 * C::DEGREE as u32;
        let accumulate = AccumulateParams {
            cap,
            row_stride: astride,
            consts: self.consts,
            entry_identity: self.entries[0],
            entry_madd: self.entries[1],
            neg_reg: (C::AFFINE_NEG_COORD * C::DEGREE) as u32,
            acc_regs,
            affine_regs: 2 * C::DEGREE as u32,
            neg_regs: C::DEGREE as u32,
            windows,
            buckets,
            chunk,
            entry_add: self.entries[2],
            _pad: [0; 3],
        };
        let aparams = ctx.uniform_buffer("msm accumulate params", &accumulate);
        let (mx, my, mstride) = grid(slots, WORKGROUP_SIZE, max);
        let mparams = ctx.uniform_buffer(
            "msm combine params",
            &AccumulateParams {
                row_stride: mstride,
                ..accumulate
            },
        );
        // Layouts derived from the shaders hold only the bindings each entry point uses.
        let bg_digits = ctx.bind_group(
            &p_digits,
            &[(0, &scalars_buf), (1, &digits), (2, &counts), (5, &bparams)],
        );
        let bg_scan = ctx.bind_group(&p_scan, &[(2, &counts), (3, &offsets), (5, &bparams)]);
        let bg_scatter = ctx.bind_group(
            &p_scatter,
            &[
                (1, &digits),
                (2, &cursors),
                (3, &offsets),
                (4, &entries),
                (5, &bparams),
            ],
        );
        let bg_chunks = ctx.bind_group(
            &p_chunks,
            &[(2, &counts), (3, &chunk_counts), (5, &ccparams)],
        );
        let bg_chunk_scan = ctx.bind_group(
            &p_scan,
            &[(2, &chunk_counts), (3, &chunk_offsets), (5, &csparams)],
        );
        let bg_acc = ctx.bind_group(
            &p_acc,
            &[
                (0, &self.code),
                (1, &bases.buffer),
                (2, &entries),
                (3, &offsets),
                (4, &counts),
                (6, &aparams),
                (9, &chunk_offsets),
                (10, &chunk_counts),
                (11, &partials),
            ],
        );
        let bg_combine = ctx.bind_group(
            &p_combine,
            &[
                (0, &self.code),
                (5, &sums),
                (6, &mparams),
                (9, &chunk_offsets),
                (10, &chunk_counts),
                (11, &partials),
            ],
        );
        let threads = windows * segments;
        let (rx, ry, rstride) = grid(threads, WORKGROUP_SIZE, max);
        let rparams = ctx.uniform_buffer(
            "msm reduce params",
            &ReduceParams {
                threads,
                row_stride: rstride,
                consts: self.consts,
                entry_identity: self.entries[0],
                entry_add: self.entries[2],
                acc_regs,
                buckets,
                segments,
                seg_len,
                _pad: [0; 3],
            },
        );
        let seg_bytes = u64::from(threads) * 2 * acc_words * 4;
        let seg_out = ctx.storage_zeroed("msm segment sums", seg_bytes)?;
        let bg_reduce = ctx.bind_group(
            &p_reduce,
            &[(0, &self.code), (5, &sums), (7, &rparams), (8, &seg_out)],
        );

        timings.upload = t.elapsed().as_secs_f64();
        let device = ctx.device();
        let stamps = ctx.has_timestamps().then(|| {
            device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("msm stages"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * STAGES as u32,
            })
        });
        let mut enc =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("msm") });
        let stages: [(&Pipeline, &wgpu::BindGroup, (u32, u32)); STAGES] = [
            (&p_digits, &bg_digits, (sx, sy)),
            (&p_scan, &bg_scan, (windows, 1)),
            (&p_scatter, &bg_scatter, (sx, sy)),
            (&p_chunks, &bg_chunks, (cx, cy)),
            (&p_scan, &bg_chunk_scan, (windows, 1)),
            (&p_acc, &bg_acc, (ax, ay)),
            (&p_combine, &bg_combine, (mx, my)),
            (&p_reduce, &bg_reduce, (rx, ry)),
        ];
        for (k, (pipeline, bind, (x, y))) in stages.iter().enumerate() {
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
            pass.dispatch_workgroups(*x, *y, 1);
        }
        let resolve = stamps.as_ref().map(|q| {
            let buf = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("msm timestamps"),
                size: 16 * STAGES as u64,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            enc.resolve_query_set(q, 0..2 * STAGES as u32, &buf, 0);
            buf
        });
        let t = web_time::Instant::now();
        ctx.queue().submit([enc.finish()]);
        let seg_words: Vec<u32> = ctx.read_back(&seg_out, seg_bytes).await?;
        timings.gpu_total = t.elapsed().as_secs_f64();
        if let Some(buf) = &resolve {
            let ticks: Vec<u64> = ctx.read_back(buf, 16 * STAGES as u64).await?;
            let period = f64::from(ctx.queue().get_timestamp_period()) * 1e-9;
            let stage = |k: usize| ticks[2 * k + 1].saturating_sub(ticks[2 * k]) as f64 * period;
            timings.digits = stage(0);
            timings.scan = stage(1) + stage(3) + stage(4);
            timings.scatter = stage(2);
            timings.accumulate = stage(5);
            timings.combine = stage(6);
            timings.reduce = stage(7);
        }
        let t = web_time::Instant::now();
        let seg = decode_projective::<C>(&seg_words)
            .map_err(|e| GpuError::Device(format!("segment sums do not decode: {e}")))?;
        let result = combine::<C>(&seg, windows as usize, segments as usize, seg_len, c);
        timings.host_combine = t.elapsed().as_secs_f64();
        Ok((result, timings))
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

/// Canonical scalars as 8 little-endian u32 words each.
fn scalar_words<F: PrimeField>(scalars: &[F]) -> Vec<u32> {
    let mut out = vec![0u32; scalars.len() * 8];
    out.par_chunks_mut(8)
        .zip(scalars.par_iter())
        .for_each(|(o, s)| {
            let bytes = s.into_bigint().to_bytes_le();
            for (k, w) in o.iter_mut().enumerate() {
                let mut b = [0u8; 4];
                for (j, x) in b.iter_mut().enumerate() {
                    *x = bytes.get(4 * k + j).copied().unwrap_or(0);
                }
                *w = u32::from_le_bytes(b);
            }
        });
    out
}

/// Phase 2 of the reduction and the window combination. `seg` holds, per window and segment
/// `t`, the segment's weighted sum `S_t` and plain sum `R_t`; the window's total is
/// `sum_t S_t + (lo_t - 1) R_t = sum_t S_t + L sum_t t R_t` with `L` buckets per segment
/// (`lo_t = 1 + t L`). Then Horner over windows: `sum_w 2^(c w) W_w`.
fn combine<C: GpuCurve>(
    seg: &[C::Projective],
    windows: usize,
    segments: usize,
    seg_len: u32,
    c: u32,
) -> C::Projective {
    let window_sums: Vec<C::Projective> = (0..windows)
        .into_par_iter()
        .map(|w| {
            let s = &seg[2 * w * segments..2 * (w + 1) * segments];
            let mut weighted = C::Projective::zero();
            let mut running = C::Projective::zero();
            let mut tot = C::Projective::zero();
            for t in (0..segments).rev() {
                weighted += s[2 * t];
                if t > 0 {
                    running += s[2 * t + 1];
                    tot += running;
                }
            }
            weighted + tot * C::Scalar::from(u64::from(seg_len))
        })
        .collect();
    let mut acc = C::Projective::zero();
    for s in window_sums.iter().rev() {
        for _ in 0..c {
            acc.double_in_place();
        }
        acc += s;
    }
    acc
}
