//! Number-theoretic transforms over the scalar fields of BLS12-381 and BLS12-377 on the GPU,
//! equal bit for bit to ark-poly's `Radix2EvaluationDomain::{fft_in_place, ifft_in_place}`,
//! cosets included, plus the elementwise kernels of the Groth16 witness map.
//!
//! Elements travel in arkworks' own representation (the Montgomery words inside `Fp`, 8 `u32`
//! per element), so uploads and downloads are copies; the kernels unpack them into 13-bit
//! limbs and multiply by twiddles kept in the kernels' Montgomery form, which leaves products
//! in arkworks' form. A transform of `2^L` elements runs as `ceil(L / 9)` radix-`2^k` passes in
//! workgroup memory (the four-step decomposition, no bit-reversal pass); docs/ntt.md derives
//! it.
//!
//! Data that stays on the GPU between steps lives in a [`DeviceVec`]; [`GpuNtt::fft`] and
//! [`GpuNtt::ifft`] are the one-call host versions.

mod plan;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use ark_ff::{FftField, PrimeField};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use zkgpu_limbs::{PackedWords, unpack_into};
use zkgpu_runtime::wgpu;
use zkgpu_runtime::{Checks, GpuContext, GpuError, grid};
use zkgpu_shaders::{Composed, FieldModule};

use plan::{Plan, PlanKey};

/// Errors of the NTT engine.
#[derive(Debug, thiserror::Error)]
pub enum NttError {
    /// The domain is larger than the kernels address (2^31 elements) or the field's
    /// two-adicity.
    #[error("domain of size 2^{log_n} is not supported: {reason}")]
    Size {
        /// log2 of the domain size.
        log_n: u32,
        /// Why.
        reason: String,
    },
    /// A device vector does not hold what the operation needs.
    #[error("{0}")]
    Shape(String),
    /// The GPU failed, or the data does not fit on it.
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// `Result` with [`NttError`].
pub type Result<T, E = NttError> = std::result::Result<T, E>;

/// A scalar field the NTT kernels support: 8-word packed elements.
pub trait NttField: FftField + PrimeField + PackedWords {
    /// The field's WGSL module.
    const MODULE: FieldModule;
}

impl NttField for ark_bls12_381::Fr {
    const MODULE: FieldModule = FieldModule::Bls12_381Fr;
}

impl NttField for ark_bls12_377::Fr {
    const MODULE: FieldModule = FieldModule::Bls12_377Fr;
}

/// Bytes per element on the GPU.
pub const ELEMENT_BYTES: u64 = 32;

/// Storage bindings a batch may be paged across (the kernels declare this many per operand).
pub const MAX_PAGES: usize = 3;

/// Copies of one downloaded vector, recorded by [`GpuNtt::record_download`].
#[derive(Debug)]
#[must_use = "finish the download with GpuNtt::finish_download"]
pub struct PendingDownload {
    pieces: Vec<zkgpu_runtime::PendingReadback>,
    len: usize,
}

/// A command encoder of one engine's device ([`GpuNtt::encoder`]): engines of another context
/// refuse it, so that no work of one device is recorded into another's commands.
#[derive(Debug)]
pub struct NttEncoder {
    enc: wgpu::CommandEncoder,
    context: zkgpu_runtime::ContextId,
}

impl NttEncoder {
    /// The context it records for.
    pub fn context(&self) -> zkgpu_runtime::ContextId {
        self.context
    }

    /// The wgpu encoder, to record other work of the same device into the same submission.
    pub fn raw(&mut self) -> &mut wgpu::CommandEncoder {
        &mut self.enc
    }
}

/// `batch` vectors of `len` field elements each, resident on the GPU, with a scratch copy of
/// the same size for the passes to alternate with. The elements (vector after vector) are
/// paged across up to [`MAX_PAGES`] buffers of `2^page_log` elements, each within one storage
/// binding.
#[derive(Debug)]
pub struct DeviceVec<F> {
    /// The context whose device holds the buffers.
    context: zkgpu_runtime::ContextId,
    data: Vec<wgpu::Buffer>,
    scratch: Vec<wgpu::Buffer>,
    len: usize,
    batch: usize,
    page_log: u32,
    _field: std::marker::PhantomData<F>,
}

impl<F> DeviceVec<F> {
    /// The context that made it (engines of another refuse it).
    pub fn context(&self) -> zkgpu_runtime::ContextId {
        self.context
    }

    /// Elements per vector.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the vectors are empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of vectors.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// The buffers holding the data (packed elements, vector after vector, `2^page_log`
    /// elements per buffer).
    pub fn pages(&self) -> &[wgpu::Buffer] {
        &self.data
    }

    /// log2 of the elements per page.
    pub fn page_log(&self) -> u32 {
        self.page_log
    }

    /// `(page, byte offset in it, bytes)` pieces of elements `start..end` of the batch.
    fn pieces(&self, start: u64, end: u64) -> Vec<(usize, u64, u64)> {
        let page = 1u64 << self.page_log;
        let mut out = Vec::new();
        let mut e = start;
        while e < end {
            let k = e >> self.page_log;
            let stop = end.min((k + 1) * page);
            out.push((
                k as usize,
                (e - k * page) * ELEMENT_BYTES,
                (stop - e) * ELEMENT_BYTES,
            ));
            e = stop;
        }
        out
    }
}

/// Which way a transform goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Coefficients to evaluations (`fft_in_place`).
    Forward,
    /// Evaluations to coefficients (`ifft_in_place`).
    Inverse,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct PassParams {
    n_log: u32,
    k: u32,
    s_log: u32,
    out_mode: u32,
    in_mode: u32,
    h: u32,
    out_hi: u32,
    out_lo: u32,
    in_hi: u32,
    in_lo: u32,
    roots: u32,
    roots_log: u32,
    per_transform: u32,
    batch: u32,
    grid_x: u32,
    page_log: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct EwParams {
    op: u32,
    len: u32,
    grid_x: u32,
    a_off: u32,
    b_off: u32,
    d_off: u32,
    page_log: u32,
    _pad: u32,
    c: [u32; 8],
}

/// An elementwise operation on vectors of one [`DeviceVec`] (indices are vectors of the
/// batch; the result replaces vector `a`).
#[derive(Clone, Copy, Debug)]
pub enum Elementwise<F> {
    /// `a = a * b`
    Mul {
        /// Written.
        a: usize,
        /// Read.
        b: usize,
    },
    /// `a = a - b`
    Sub {
        /// Written.
        a: usize,
        /// Read.
        b: usize,
    },
    /// `a = a * c`
    Scale {
        /// Written.
        a: usize,
        /// The constant.
        c: F,
    },
    /// `a = (a * b - d) * c`: the quotient step of the Groth16 witness map.
    MulSubScale {
        /// Written.
        a: usize,
        /// Read.
        b: usize,
        /// Read.
        d: usize,
        /// The constant.
        c: F,
    },
}

/// The NTT engine of field `F` on one GPU context. Pipelines are built on first use and
/// cached by the context; twiddle tables are built once per domain and cached here.
#[derive(Debug)]
pub struct GpuNtt<'c, F: NttField> {
    ctx: &'c GpuContext,
    pass_module: Composed,
    ew_module: Composed,
    plans: Mutex<HashMap<PlanKey, Arc<Plan>>>,
    max_pass_bits: u32,
    /// Largest transform (log2) given a table of all its twists.
    max_twist_log: u32,
    /// Most elements per page, log2 (None: what the binding limit allows).
    max_page_log: Option<u32>,
    /// Placeholders bound where a batch has fewer than [`MAX_PAGES`] pages: one read-only,
    /// two read-write (distinct, so no writable binding aliases another).
    placeholders: [wgpu::Buffer; 3],
    _field: std::marker::PhantomData<F>,
}

/// The default largest pass (bits): chosen by measurement, see docs/PERFORMANCE.md.
pub const DEFAULT_MAX_PASS_BITS: u32 = 8;
pub use plan::DEFAULT_MAX_TWIST_LOG;

/// Elements per workgroup tile (`NTT_TILE` in shaders/kernels/ntt.wgsl).
const TILE: u64 = 256;
const EW_WG: u32 = 256;

impl<'c, F: NttField> GpuNtt<'c, F> {
    /// The engine on `ctx`.
    pub fn new(ctx: &'c GpuContext) -> Self {
        let placeholder = || {
            ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("ntt page placeholder"),
                size: 2 * ELEMENT_BYTES,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        };
        Self {
            ctx,
            pass_module: zkgpu_shaders::ntt(F::MODULE),
            ew_module: zkgpu_shaders::ntt_elementwise(F::MODULE),
            plans: Mutex::new(HashMap::new()),
            max_pass_bits: DEFAULT_MAX_PASS_BITS,
            max_twist_log: plan::DEFAULT_MAX_TWIST_LOG,
            max_page_log: None,
            placeholders: [placeholder(), placeholder(), placeholder()],
            _field: std::marker::PhantomData,
        }
    }

    /// Pages device vectors made from now on into buffers of at most `2^bits` elements
    /// (at least 2^1), below what the binding limit allows: tests use it to cross pages with
    /// small transforms.
    pub fn with_max_page_log(mut self, bits: u32) -> Self {
        self.max_page_log = Some(bits.max(1));
        self
    }

    /// log2 of the elements per page: the largest power of two whose bytes fit one storage
    /// binding (and one buffer), at most 2^31.
    pub fn page_log(&self) -> u32 {
        let max = self.ctx.max_binding_bytes() / ELEMENT_BYTES;
        let fit = (63 - max.max(2).leading_zeros()).min(31);
        self.max_page_log.map_or(fit, |m| m.min(fit))
    }

    /// Limits each pass to `bits` (1..=8) bits of the transform: smaller passes give each
    /// workgroup more consecutive columns (longer contiguous memory runs) at the cost of more
    /// passes and twist multiplications.
    pub fn with_max_pass_bits(mut self, bits: u32) -> Self {
        self.max_pass_bits = bits.clamp(1, plan::MAX_PASS_BITS);
        self
    }

    /// Gives transforms of at most `2^bits` elements a table of all `N` twists (one
    /// multiplication per element and pass, `32 N` bytes per domain and direction; default
    /// [`DEFAULT_MAX_TWIST_LOG`], and never beyond one storage binding); larger ones compute
    /// each twist from two tables of about `sqrt(N)` entries (two multiplications). 0 turns the
    /// tables off.
    pub fn with_max_twist_log(mut self, bits: u32) -> Self {
        self.max_twist_log = bits;
        self
    }

    /// The context.
    pub fn context(&self) -> &'c GpuContext {
        self.ctx
    }

    /// Compiles the pipelines now (otherwise the first transform does); returns the seconds
    /// each took, `(entry, seconds)`.
    pub async fn warm_up(&self) -> Result<Vec<(&'static str, f64)>> {
        self.ctx
            .pipeline(&self.pass_module, "ntt_pass", Checks::Default, &[])
            .await?;
        self.ctx
            .pipeline(&self.ew_module, "ntt_elementwise", Checks::Default, &[])
            .await?;
        Ok(vec![
            (
                "ntt_pass",
                self.ctx
                    .pipeline_seconds(&self.pass_module.name, "ntt_pass", Checks::Default)
                    .unwrap_or(0.0),
            ),
            (
                "ntt_elementwise",
                self.ctx
                    .pipeline_seconds(&self.ew_module.name, "ntt_elementwise", Checks::Default)
                    .unwrap_or(0.0),
            ),
        ])
    }

    /// Uploads `vectors` (all of one length) as one batch.
    pub fn upload_batch(&self, vectors: &[&[F]]) -> Result<DeviceVec<F>> {
        let len = vectors.first().map_or(0, |v| v.len());
        if vectors.iter().any(|v| v.len() != len) {
            return Err(NttError::Shape(
                "every vector of a batch must have the same length".into(),
            ));
        }
        let dv = self.zeroed(len, vectors.len())?;
        for (i, v) in vectors.iter().enumerate() {
            self.write(&dv, i, v)?;
        }
        Ok(dv)
    }

    /// Uploads one vector.
    pub fn upload(&self, values: &[F]) -> Result<DeviceVec<F>> {
        self.upload_batch(&[values])
    }

    /// `batch` zero vectors of `len` elements.
    pub fn zeroed(&self, len: usize, batch: usize) -> Result<DeviceVec<F>> {
        let total = (len as u64)
            .checked_mul(batch as u64)
            .filter(|&t| t <= u64::from(u32::MAX))
            .ok_or_else(|| {
                NttError::Shape(format!(
                    "{batch} x {len} elements exceed the kernels' 2^32 element indices"
                ))
            })?;
        let page_log = self.page_log();
        let page = 1u64 << page_log;
        let pages = total.div_ceil(page).max(1) as usize;
        if pages > MAX_PAGES {
            return Err(NttError::Shape(format!(
                "{batch} x {len} elements need {pages} storage bindings of 2^{page_log} \
                 elements ({} bytes each); the kernels bind at most {MAX_PAGES}",
                page * ELEMENT_BYTES
            )));
        }
        let alloc = |label: &str| -> Result<Vec<wgpu::Buffer>> {
            (0..pages as u64)
                .map(|k| {
                    let elems = page.min(total - (k * page).min(total));
                    Ok(self.ctx.storage_zeroed(label, elems * ELEMENT_BYTES)?)
                })
                .collect()
        };
        Ok(DeviceVec {
            context: self.ctx.id(),
            data: alloc("ntt data")?,
            scratch: alloc("ntt scratch")?,
            len,
            batch,
            page_log,
            _field: std::marker::PhantomData,
        })
    }

    /// The three bindings of `pages`, placeholders where there are fewer.
    fn page_bindings<'a>(
        &'a self,
        pages: &'a [wgpu::Buffer],
        writable: bool,
    ) -> [&'a wgpu::Buffer; 3] {
        let [ro, rw1, rw2] = &self.placeholders;
        let spare = if writable { [rw1, rw2] } else { [ro, ro] };
        [
            pages.first().unwrap_or(spare[0]),
            pages.get(1).unwrap_or(spare[0]),
            pages.get(2).unwrap_or(spare[1]),
        ]
    }

    /// `Ok` when `dv` was made by this engine's context: buffers of another device are
    /// refused before anything is recorded.
    fn own(&self, dv: &DeviceVec<F>) -> Result<()> {
        Ok(dv.context.check(self.ctx.id(), "these device vectors")?)
    }

    /// Overwrites the start of vector `index` with `values` (the rest keeps its contents).
    pub fn write(&self, dv: &DeviceVec<F>, index: usize, values: &[F]) -> Result<()> {
        self.own(dv)?;
        if index >= dv.batch || values.len() > dv.len {
            return Err(NttError::Shape(format!(
                "writing {} elements into vector {index} of a {} x {} batch",
                values.len(),
                dv.batch,
                dv.len
            )));
        }
        let start = (index * dv.len) as u64;
        let mut at = 0usize;
        for (page, offset, bytes) in dv.pieces(start, start + values.len() as u64) {
            let piece = &values[at..at + (bytes / ELEMENT_BYTES) as usize];
            // Packed on the host's threads straight into the staging memory.
            self.ctx.write_par(
                &dv.data[page],
                offset,
                bytes,
                ELEMENT_BYTES as usize,
                |first, block| {
                    let words: &mut [u32] = bytemuck::cast_slice_mut(block);
                    let first = first / ELEMENT_BYTES as usize;
                    for (w, x) in words.chunks_exact_mut(8).zip(&piece[first..]) {
                        x.write_packed(w);
                    }
                },
            )?;
            at += piece.len();
        }
        Ok(())
    }

    /// Writes every vector of `dv` in one pass over its rows, from the host's threads straight
    /// into the upload's staging memory: `fill(row, blocks)` writes rows `row .. row + k` of
    /// each vector, `blocks[v]` holding vector `v`'s `8 k` words (arkworks' packed words,
    /// [`PackedWords::write_packed`]). For values computed row by row for all vectors at once
    /// (the witness map's sparse products), with no intermediate vectors.
    pub fn write_rows(
        &self,
        dv: &DeviceVec<F>,
        fill: impl Fn(usize, &mut [&mut [u32]]) + Sync,
    ) -> Result<()> {
        self.own(dv)?;
        let len = dv.len as u64;
        let page = 1u64 << dv.page_log;
        // Rows where some vector crosses into its next page: the pieces must not span one.
        let mut cuts: Vec<u64> = (0..dv.batch as u64)
            .flat_map(|v| {
                let start = v * len;
                let first = start.next_multiple_of(page);
                (first..start + len)
                    .step_by(page as usize)
                    .map(move |g| g - start)
            })
            .filter(|&r| r > 0)
            .chain([0, len])
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        let fill = &fill;
        for w in cuts.windows(2) {
            let (r0, r1) = (w[0], w[1]);
            let regions: Vec<(&wgpu::Buffer, u64)> = (0..dv.batch as u64)
                .map(|v| {
                    let g = v * len + r0;
                    (
                        &dv.data[(g >> dv.page_log) as usize],
                        (g & (page - 1)) * ELEMENT_BYTES,
                    )
                })
                .collect();
            self.ctx
                .write_par_zip(&regions, 8 * (r1 - r0), 8, |at, blocks| {
                    fill(r0 as usize + at / 8, blocks)
                })?;
        }
        Ok(())
    }

    /// Downloads vector `index`.
    pub async fn download(&self, dv: &DeviceVec<F>, index: usize) -> Result<Vec<F>> {
        let mut enc = self.encoder();
        let pending = self.record_download(&mut enc, dv, index)?;
        let submission = self.ctx.queue().submit([enc.enc.finish()]);
        self.finish_download(pending, submission).await
    }

    /// Records into `enc` the copies that download vector `index` of `dv`: put them in the
    /// encoder of the transforms that produce it, so the download rides in their submission
    /// rather than queueing behind another thread's work; then [`GpuNtt::finish_download`]
    /// with that submission's index (from [`GpuNtt::submit_indexed`]).
    pub fn record_download(
        &self,
        enc: &mut NttEncoder,
        dv: &DeviceVec<F>,
        index: usize,
    ) -> Result<PendingDownload> {
        self.own(dv)?;
        self.own_encoder(enc)?;
        let enc = &mut enc.enc;
        if index >= dv.batch {
            return Err(NttError::Shape(format!(
                "vector {index} of a batch of {}",
                dv.batch
            )));
        }
        let start = (index * dv.len) as u64;
        let pieces = dv
            .pieces(start, start + dv.len as u64)
            .into_iter()
            .map(|(page, offset, bytes)| {
                let n = (bytes / ELEMENT_BYTES) as usize;
                self.ctx
                    .record_read_back(enc, &dv.data[page], offset, n, ELEMENT_BYTES as usize)
            })
            .collect();
        Ok(PendingDownload {
            pieces,
            len: dv.len,
        })
    }

    /// Waits for `submission` (which holds the copies `pending` recorded) and unpacks the
    /// vector on the host's threads straight from the mapped staging memory.
    pub async fn finish_download(
        &self,
        pending: PendingDownload,
        submission: wgpu::SubmissionIndex,
    ) -> Result<Vec<F>> {
        let mut out = zkgpu_limbs::filled_par(pending.len, F::zero());
        let mut at = 0usize;
        for piece in pending.pieces {
            let n = piece.len();
            self.ctx
                .finish_read_back(
                    piece,
                    submission.clone(),
                    &mut out[at..at + n],
                    |bytes, out, first| unpack_into(bytemuck::cast_slice(bytes), out, at + first),
                )
                .await?
                .map_err(|e| {
                    NttError::Gpu(GpuError::Device(format!(
                        "the GPU returned a non-canonical element: {e}"
                    )))
                })?;
            at += n;
        }
        Ok(out)
    }

    fn plan(&self, domain: &Radix2EvaluationDomain<F>, dir: Direction) -> Result<Arc<Plan>> {
        let log_n = domain.log_size_of_group;
        if log_n > 31 {
            return Err(NttError::Size {
                log_n,
                reason: "the kernels index elements with u32".into(),
            });
        }
        let key = PlanKey::new(domain, dir, self.max_pass_bits, self.max_twist_log);
        if let Some(p) = self
            .plans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return Ok(p.clone());
        }
        // On wasm32 wgpu's types are neither Send nor Sync (the browser's WebGPU is
        // single-threaded), so neither is the Arc there; natively it is both.
        #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
        let plan = Arc::new(Plan::new(
            self.ctx,
            domain,
            dir,
            self.max_pass_bits,
            self.max_twist_log,
        )?);
        self.plans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, plan.clone());
        Ok(plan)
    }

    /// Records the transform of the first `count` vectors of `dv` over `domain` (`count`
    /// `None`: all). The vectors must have exactly the domain's size.
    pub async fn record_transform(
        &self,
        enc: &mut NttEncoder,
        dv: &mut DeviceVec<F>,
        domain: &Radix2EvaluationDomain<F>,
        dir: Direction,
        count: Option<usize>,
    ) -> Result<()> {
        self.record_transform_stamped(enc, dv, domain, dir, count, None)
            .await
    }

    /// [`GpuNtt::record_transform`], writing timestamps 0 and 1 of `stamps` at the start of
    /// the first pass and the end of the last.
    async fn record_transform_stamped(
        &self,
        enc: &mut NttEncoder,
        dv: &mut DeviceVec<F>,
        domain: &Radix2EvaluationDomain<F>,
        dir: Direction,
        count: Option<usize>,
        stamps: Option<&wgpu::QuerySet>,
    ) -> Result<()> {
        self.own(dv)?;
        self.own_encoder(enc)?;
        let enc = &mut enc.enc;
        let n = domain.size();
        if dv.len != n {
            return Err(NttError::Shape(format!(
                "vectors of {} elements over a domain of size {n}",
                dv.len
            )));
        }
        let batch = count.unwrap_or(dv.batch);
        if batch > dv.batch {
            return Err(NttError::Shape(format!(
                "transforming {batch} vectors of a batch of {}",
                dv.batch
            )));
        }
        // A transform of size 1 is the identity in both directions, cosets included.
        if batch == 0 || n == 1 {
            return Ok(());
        }
        let plan = self.plan(domain, dir)?;
        let pipeline = self
            .ctx
            .pipeline(&self.pass_module, "ntt_pass", Checks::Default, &[])
            .await?;
        let per_transform = (n as u64).div_ceil(TILE) as u32;
        let total = u32::try_from(u64::from(per_transform) * batch as u64).map_err(|_| {
            NttError::Shape(format!(
                "{batch} transforms of size {n} need too many workgroups"
            ))
        })?;
        let max = self.ctx.limits().max_compute_workgroups_per_dimension;
        let (gx, gy, _) = grid(total, 1, max);
        let last = plan.passes.len().saturating_sub(1);
        for (i, pass) in plan.passes.iter().enumerate() {
            let mut p = *pass;
            p.per_transform = per_transform;
            p.batch = batch as u32;
            p.grid_x = gx;
            p.page_log = dv.page_log;
            let params = self.ctx.uniform_buffer("ntt pass params", &p);
            let [s0, s1, s2] = self.page_bindings(&dv.data, false);
            let [d0, d1, d2] = self.page_bindings(&dv.scratch, true);
            let bind = self.ctx.bind_group(
                &pipeline,
                &[
                    (0, s0),
                    (4, s1),
                    (5, s2),
                    (1, d0),
                    (6, d1),
                    (7, d2),
                    (2, &plan.tables),
                    (3, &params),
                    (8, plan.twists.as_ref().unwrap_or(&self.placeholders[0])),
                ],
            );
            {
                let mut cp = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("ntt pass"),
                    timestamp_writes: stamps.filter(|_| i == 0 || i == last).map(|q| {
                        wgpu::ComputePassTimestampWrites {
                            query_set: q,
                            beginning_of_pass_write_index: (i == 0).then_some(0),
                            end_of_pass_write_index: (i == last).then_some(1),
                        }
                    }),
                });
                cp.set_pipeline(&pipeline.pipeline);
                cp.set_bind_group(0, &bind, &[]);
                cp.dispatch_workgroups(gx, gy, 1);
            }
            std::mem::swap(&mut dv.data, &mut dv.scratch);
        }
        if batch < dv.batch && plan.passes.len() % 2 == 1 {
            // The untouched vectors are in the other buffers now: copy them across.
            let (start, end) = ((batch * n) as u64, (dv.batch * n) as u64);
            for (page, offset, bytes) in dv.pieces(start, end) {
                enc.copy_buffer_to_buffer(&dv.scratch[page], offset, &dv.data[page], offset, bytes);
            }
        }
        Ok(())
    }

    /// Records an elementwise operation on the vectors of `dv`.
    pub async fn record_elementwise(
        &self,
        enc: &mut NttEncoder,
        dv: &DeviceVec<F>,
        op: Elementwise<F>,
    ) -> Result<()> {
        self.own(dv)?;
        self.own_encoder(enc)?;
        let enc = &mut enc.enc;
        let (code, a, b, d, c) = match op {
            Elementwise::Mul { a, b } => (0, a, b, a, F::one()),
            Elementwise::Sub { a, b } => (1, a, b, a, F::one()),
            Elementwise::Scale { a, c } => (2, a, a, a, c),
            Elementwise::MulSubScale { a, b, d, c } => (3, a, b, d, c),
        };
        if [a, b, d].iter().any(|&i| i >= dv.batch) {
            return Err(NttError::Shape(format!(
                "operands {a}, {b}, {d} of a batch of {}",
                dv.batch
            )));
        }
        if dv.len == 0 {
            return Ok(());
        }
        let len = u32::try_from(dv.len)
            .map_err(|_| NttError::Shape(format!("{} elements exceed 2^32", dv.len)))?;
        let pipeline = self
            .ctx
            .pipeline(&self.ew_module, "ntt_elementwise", Checks::Default, &[])
            .await?;
        let max = self.ctx.limits().max_compute_workgroups_per_dimension;
        let (gx, gy, _) = grid(len, EW_WG, max);
        let mut cw = [0u32; 8];
        kernel_form(c).write_packed(&mut cw);
        let off = |i: usize| (i * dv.len) as u32;
        let params = self.ctx.uniform_buffer(
            "ntt elementwise params",
            &EwParams {
                op: code,
                len,
                grid_x: gx,
                a_off: off(a),
                b_off: off(b),
                d_off: off(d),
                page_log: dv.page_log,
                _pad: 0,
                c: cw,
            },
        );
        let [p0, p1, p2] = self.page_bindings(&dv.data, true);
        let bind = self
            .ctx
            .bind_group(&pipeline, &[(0, p0), (2, p1), (3, p2), (1, &params)]);
        let mut cp = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("ntt elementwise"),
            timestamp_writes: None,
        });
        cp.set_pipeline(&pipeline.pipeline);
        cp.set_bind_group(0, &bind, &[]);
        cp.dispatch_workgroups(gx, gy, 1);
        Ok(())
    }

    /// A command encoder on this engine's device, for `record_*` and `submit`.
    pub fn encoder(&self) -> NttEncoder {
        NttEncoder {
            enc: self
                .ctx
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("ntt") }),
            context: self.ctx.id(),
        }
    }

    /// Submits `enc` and waits for the GPU; returns the wall seconds from submit to done.
    pub fn submit(&self, enc: NttEncoder) -> Result<f64> {
        self.submit_indexed(enc).map(|(t, _)| t)
    }

    /// [`GpuNtt::submit`], also returning the submission's index. Waits for this submission
    /// only, not for work another thread submits after it.
    pub fn submit_indexed(&self, enc: NttEncoder) -> Result<(f64, wgpu::SubmissionIndex)> {
        self.own_encoder(&enc)?;
        let t = web_time::Instant::now();
        let index = self.ctx.submit_and_wait(enc.enc)?;
        Ok((t.elapsed().as_secs_f64(), index))
    }

    /// `Ok` when `enc` records for this engine's device.
    fn own_encoder(&self, enc: &NttEncoder) -> Result<()> {
        Ok(enc.context.check(self.ctx.id(), "this command encoder")?)
    }

    /// Transforms every vector of `dv` in place over `domain` and waits.
    pub async fn transform(
        &self,
        dv: &mut DeviceVec<F>,
        domain: &Radix2EvaluationDomain<F>,
        dir: Direction,
    ) -> Result<f64> {
        let mut enc = self.encoder();
        self.record_transform(&mut enc, dv, domain, dir, None)
            .await?;
        self.submit(enc)
    }

    /// [`GpuNtt::transform`], returning the GPU time of the passes from timestamp queries
    /// where the device has them (else the wall time of submit to done).
    pub async fn transform_timed(
        &self,
        dv: &mut DeviceVec<F>,
        domain: &Radix2EvaluationDomain<F>,
        dir: Direction,
    ) -> Result<f64> {
        // Finish pending uploads first: a pass's beginning timestamp can be written while an
        // earlier `write_buffer` copy is still running, which would count the upload.
        self.ctx.queue().submit([]);
        self.ctx.wait()?;
        if !self.ctx.has_timestamps() || domain.size() == 1 {
            return self.transform(dv, domain, dir).await;
        }
        let device = self.ctx.device();
        let set = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("ntt timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("ntt timestamps"),
            size: 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let mut enc = self.encoder();
        self.record_transform_stamped(&mut enc, dv, domain, dir, None, Some(&set))
            .await?;
        enc.raw().resolve_query_set(&set, 0..2, &resolve, 0);
        let wall = self.submit(enc)?;
        let ticks: Vec<u64> = self.ctx.read_back(&resolve, 16).await?;
        let period = f64::from(self.ctx.queue().get_timestamp_period()) * 1e-9;
        let gpu = ticks[1].saturating_sub(ticks[0]) as f64 * period;
        Ok(if gpu > 0.0 { gpu } else { wall })
    }

    /// `domain.fft_in_place(values)` on the GPU: the same resizing (to the domain's size,
    /// zero-padding a shorter input and, as arkworks does, dropping the elements of a longer
    /// one) and the same result.
    pub async fn fft(&self, domain: &Radix2EvaluationDomain<F>, values: &mut Vec<F>) -> Result<()> {
        self.host_transform(domain, values, Direction::Forward)
            .await
    }

    /// `domain.ifft_in_place(values)` on the GPU (same resizing and result).
    pub async fn ifft(
        &self,
        domain: &Radix2EvaluationDomain<F>,
        values: &mut Vec<F>,
    ) -> Result<()> {
        self.host_transform(domain, values, Direction::Inverse)
            .await
    }

    async fn host_transform(
        &self,
        domain: &Radix2EvaluationDomain<F>,
        values: &mut Vec<F>,
        dir: Direction,
    ) -> Result<()> {
        values.resize(domain.size(), F::zero());
        let mut dv = self.upload(values)?;
        self.transform(&mut dv, domain, dir).await?;
        *values = self.download(&dv, 0).await?;
        Ok(())
    }

    /// [`GpuNtt::fft`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn fft_blocking(
        &self,
        domain: &Radix2EvaluationDomain<F>,
        values: &mut Vec<F>,
    ) -> Result<()> {
        pollster::block_on(self.fft(domain, values))
    }

    /// [`GpuNtt::ifft`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn ifft_blocking(
        &self,
        domain: &Radix2EvaluationDomain<F>,
        values: &mut Vec<F>,
    ) -> Result<()> {
        pollster::block_on(self.ifft(domain, values))
    }

    /// [`GpuNtt::download`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn download_blocking(&self, dv: &DeviceVec<F>, index: usize) -> Result<Vec<F>> {
        pollster::block_on(self.download(dv, index))
    }

    /// [`GpuNtt::transform_timed`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn transform_timed_blocking(
        &self,
        dv: &mut DeviceVec<F>,
        domain: &Radix2EvaluationDomain<F>,
        dir: Direction,
    ) -> Result<f64> {
        pollster::block_on(self.transform_timed(dv, domain, dir))
    }

    /// [`GpuNtt::warm_up`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn warm_up_blocking(&self) -> Result<Vec<(&'static str, f64)>> {
        pollster::block_on(self.warm_up())
    }

    /// [`GpuNtt::transform`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn transform_blocking(
        &self,
        dv: &mut DeviceVec<F>,
        domain: &Radix2EvaluationDomain<F>,
        dir: Direction,
    ) -> Result<f64> {
        pollster::block_on(self.transform(dv, domain, dir))
    }
}

/// `x` in the kernels' Montgomery form, as an arkworks element: `x 2^(13 n - 64 N)`, whose
/// internal words are `x 2^(13 n) mod p`. A kernel multiplication of arkworks' words by these
/// words yields arkworks' words of the product.
pub fn kernel_form<F: NttField>(x: F) -> F {
    let shift = 13 * u64::from(F::MODULE.words()) - 32 * F::PACKED_WORDS as u64;
    x * F::from(2u64).pow([shift])
}
