//! The NTT engine: transforms planned per domain and recorded as passes, elementwise
//! operations, and the one-call host versions.

use crate::Radix2Domain;
use crate::data::{DeviceVec, NttEncoder};
use crate::params::*;
use crate::plan;
use crate::plan::{Plan, PlanKey};
use crate::pool::PagePool;
use crate::{
    DEFAULT_MAX_PASS_BITS, Direction, ELEMENT_BYTES, NttError, NttField, Result, kernel_form,
};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use web_time::Instant;
#[cfg(not(target_arch = "wasm32"))]
use zkgpu_runtime::BlockOn;
use zkgpu_runtime::wgpu;
use zkgpu_runtime::{Checks, GpuContext, PipelineRequest, dispatch, grid};
use zkgpu_shaders::Composed;
use zkgpu_shaders::contract::{ntt, ntt_elementwise as ew};

/// [`GpuNtt::kernels`]' butterfly passes.
pub(crate) const PASS: usize = 0;
/// [`GpuNtt::kernels`]' elementwise kernel.
pub(crate) const ELEMENTWISE: usize = 1;

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

/// How a [`GpuNtt`] transforms: every field has a default, and [`GpuNtt::with_config`] takes
/// one (the builders `with_max_pass_bits`, `with_max_twist_log`, `with_max_page_log` and
/// `with_arith` set single fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NttConfig {
    /// Bits one pass transforms at most, 1..=8 (default [`DEFAULT_MAX_PASS_BITS`]): smaller
    /// passes give each workgroup longer contiguous runs at the cost of more passes.
    pub max_pass_bits: u32,
    /// Largest transform (log2) given a table of all its twists (default
    /// [`crate::DEFAULT_MAX_TWIST_LOG`]; 0: none, every twist from two small tables).
    pub max_twist_log: u32,
    /// Most elements per page of device vectors, log2 (default: what one storage binding
    /// holds).
    pub max_page_log: Option<u32>,
    /// The field arithmetic (default: the context's, [`GpuContext::arith`]).
    pub arith: Option<zkgpu_runtime::Arith>,
    /// Keep the device buffers (of 16 MiB and more) of dropped [`DeviceVec`]s for the next
    /// vectors of the same page sizes, at most as many bytes as the largest vector has held
    /// (default `true`; [`GpuNtt::release_buffers`] frees them; docs/ntt.md, "Device
    /// buffers").
    pub keep_buffers: bool,
}

impl Default for NttConfig {
    fn default() -> Self {
        Self {
            max_pass_bits: DEFAULT_MAX_PASS_BITS,
            max_twist_log: plan::DEFAULT_MAX_TWIST_LOG,
            max_page_log: None,
            arith: None,
            keep_buffers: true,
        }
    }
}

/// What [`GpuNtt::prepare`] spent on each step, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Prepared {
    /// Compiling the pipelines (or loading them from the persistent pipeline cache).
    pub pipelines: f64,
    /// Building both directions' twiddle tables and uploading them.
    pub tables: f64,
    /// One transform each way of the full size (allocating its device and staging memory).
    pub transforms: f64,
}

/// The NTT engine of field `F` on one GPU context. Pipelines are built on first use and
/// cached by the context; twiddle tables are built once per domain and cached here.
#[derive(Debug)]
pub struct GpuNtt<F: NttField> {
    pub(crate) ctx: GpuContext,
    pub(crate) pass_module: Composed,
    pub(crate) ew_module: Composed,
    pub(crate) plans: Mutex<HashMap<PlanKey, Arc<Plan>>>,
    pub(crate) config: NttConfig,
    /// Placeholders bound where a batch has fewer than [`MAX_PAGES`] pages: one read-only,
    /// two read-write (distinct, so no writable binding aliases another).
    pub(crate) placeholders: [wgpu::Buffer; 3],
    /// Pages of dropped vectors, kept for the next vector of the same sizes.
    pub(crate) pool: Arc<PagePool>,
    pub(crate) _field: std::marker::PhantomData<F>,
}

impl<F: NttField> GpuNtt<F> {
    /// The engine on `ctx`.
    pub fn new(ctx: &GpuContext) -> Self {
        let placeholder = || {
            ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("ntt page placeholder"),
                size: 2 * ELEMENT_BYTES,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        };
        Self {
            ctx: ctx.clone(),
            pass_module: zkgpu_shaders::ntt(F::MODULE, ctx.arith()),
            ew_module: zkgpu_shaders::ntt_elementwise(F::MODULE, ctx.arith()),
            plans: Mutex::new(HashMap::new()),
            config: NttConfig::default(),
            placeholders: [placeholder(), placeholder(), placeholder()],
            pool: Arc::default(),
            _field: std::marker::PhantomData,
        }
    }

    /// Multiplies with `arith` instead of the context's arithmetic ([`GpuContext::arith`]):
    /// for comparing arithmetics on one device. [`GpuError::Arith`] where the context found
    /// `arith` unusable.
    ///
    /// [`GpuError::Arith`]: zkgpu_runtime::GpuError::Arith
    pub fn with_arith(mut self, arith: zkgpu_runtime::Arith) -> zkgpu_runtime::Result<Self> {
        self.ctx.check_arith(arith)?;
        self.pass_module = zkgpu_shaders::ntt(F::MODULE, arith);
        self.ew_module = zkgpu_shaders::ntt_elementwise(F::MODULE, arith);
        Ok(self)
    }

    /// The engine on `ctx` configured by `config` ([`NttConfig`]): [`GpuError::Arith`] where
    /// the context found `config.arith` unusable.
    ///
    /// [`GpuError::Arith`]: zkgpu_runtime::GpuError::Arith
    pub fn with_config(ctx: &GpuContext, config: NttConfig) -> Result<Self> {
        let mut e = Self::new(ctx);
        if let Some(arith) = config.arith {
            e = e.with_arith(arith)?;
        }
        e.config = NttConfig {
            max_pass_bits: config.max_pass_bits.clamp(1, plan::MAX_PASS_BITS),
            max_page_log: config.max_page_log.map(|b| b.max(1)),
            ..config
        };
        e.pool.set_enabled(config.keep_buffers);
        Ok(e)
    }

    /// Whether to keep the device buffers of dropped vectors ([`NttConfig::keep_buffers`];
    /// `false` frees those kept).
    pub fn with_kept_buffers(mut self, keep: bool) -> Self {
        self.config.keep_buffers = keep;
        self.pool.set_enabled(keep);
        self
    }

    /// Frees the device buffers kept from dropped vectors; returns their bytes.
    pub fn release_buffers(&self) -> u64 {
        self.pool.release()
    }

    /// Bytes of device buffers kept from dropped vectors now.
    pub fn kept_buffer_bytes(&self) -> u64 {
        self.pool.bytes()
    }

    /// The engine's configuration.
    pub fn config(&self) -> NttConfig {
        NttConfig {
            arith: Some(self.pass_module.arith),
            ..self.config
        }
    }

    /// Pages device vectors made from now on into buffers of at most `2^bits` elements
    /// (at least 2^1), below what the binding limit allows: tests use it to cross pages with
    /// small transforms.
    pub fn with_max_page_log(mut self, bits: u32) -> Self {
        self.config.max_page_log = Some(bits.max(1));
        self
    }

    /// log2 of the elements per page: the largest power of two whose bytes fit one storage
    /// binding (and one buffer), at most 2^31.
    pub fn page_log(&self) -> u32 {
        let fit = crate::budget::page_log_for(self.ctx.max_binding_bytes());
        self.config.max_page_log.map_or(fit, |m| m.min(fit))
    }

    /// Limits each pass to `bits` (1..=8) bits of the transform: smaller passes give each
    /// workgroup more consecutive columns (longer contiguous memory runs) at the cost of more
    /// passes and twist multiplications.
    pub fn with_max_pass_bits(mut self, bits: u32) -> Self {
        self.config.max_pass_bits = bits.clamp(1, plan::MAX_PASS_BITS);
        self
    }

    /// Gives transforms of at most `2^bits` elements a table of all `N` twists (one
    /// multiplication per element and pass, `32 N` bytes per domain and direction; default
    /// [`DEFAULT_MAX_TWIST_LOG`], and never beyond one storage binding); larger ones compute
    /// each twist from two tables of about `sqrt(N)` entries (two multiplications). 0 turns the
    /// tables off.
    ///
    /// [`DEFAULT_MAX_TWIST_LOG`]: crate::DEFAULT_MAX_TWIST_LOG
    pub fn with_max_twist_log(mut self, bits: u32) -> Self {
        self.config.max_twist_log = bits;
        self
    }

    /// The context.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// The butterfly passes' pipeline and the elementwise kernel's: `(module, entry point)`.
    pub(crate) fn kernels(&self) -> [(&Composed, &'static str); 2] {
        [
            (&self.pass_module, ntt::entry::NTT_PASS),
            (&self.ew_module, ew::entry::NTT_ELEMENTWISE),
        ]
    }

    /// Kernel `k` of [`GpuNtt::kernels`]' pipeline (compiled on first use).
    pub(crate) async fn kernel(&self, k: usize) -> Result<Arc<zkgpu_runtime::Pipeline>> {
        let (module, entry) = self.kernels()[k];
        Ok(self
            .ctx
            .pipeline(module, entry, Checks::Default, &[])
            .await?)
    }

    /// Compiles the pipelines now (otherwise the first transform does), side by side on
    /// native targets; returns the seconds each took, `(entry, seconds)`.
    pub async fn warm_up(&self) -> Result<Vec<(&'static str, f64)>> {
        let requests = self.kernels().map(|(module, entry)| PipelineRequest {
            module,
            entry,
            checks: Checks::Default,
            constants: &[],
        });
        self.ctx.pipelines(&requests).await?;
        Ok(self
            .kernels()
            .into_iter()
            .map(|(module, entry)| {
                let s = self
                    .ctx
                    .pipeline_seconds(&module.name, entry, Checks::Default);
                (entry, s.unwrap_or(0.0))
            })
            .collect())
    }

    /// Prepares everything a transform over `domain` needs, both directions, so that the
    /// first [`GpuNtt::fft`] / [`GpuNtt::ifft`] of it costs what later ones do: the pipelines
    /// (compiled, or loaded from the context's persistent pipeline cache), the twiddle plans
    /// with their tables uploaded, and one transform each way of the full size on zeros, so
    /// that the device buffers and staging memory of that size exist and the driver has
    /// finished the pipelines' first dispatches. Costs about two warm transforms beyond the
    /// pipelines and tables; returns what each step took ([`Prepared`]). A coset domain
    /// prepares its coset's transforms. Blocks (native only; [`GpuNtt::prepare_async`] is the
    /// future).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn prepare(&self, domain: &impl Radix2Domain<F>) -> Result<Prepared> {
        self.prepare_async(domain).block_on()
    }

    /// [`GpuNtt::prepare`] as a future.
    pub async fn prepare_async(&self, domain: &impl Radix2Domain<F>) -> Result<Prepared> {
        let domain = domain.radix2()?;
        let t = Instant::now();
        self.warm_up().await?;
        let pipelines = t.elapsed().as_secs_f64();
        let t = Instant::now();
        for dir in [Direction::Forward, Direction::Inverse] {
            self.plan(domain, dir).await?;
        }
        self.ctx.wait()?;
        let tables = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut v = vec![F::zero(); domain.size()];
        self.fft_async(domain, &mut v).await?;
        self.ifft_async(domain, &mut v).await?;
        Ok(Prepared {
            pipelines,
            tables,
            transforms: t.elapsed().as_secs_f64(),
        })
    }

    /// Keeps the GPU busy for `duration` so that the transforms after it start at the GPU's
    /// working clock ([`GpuContext::warm_clock`]; costs `duration`).
    pub async fn warm_clock(&self, duration: std::time::Duration) -> Result<()> {
        Ok(self.ctx.warm_clock(duration).await?)
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
    pub(crate) async fn record_transform_stamped(
        &self,
        enc: &mut NttEncoder,
        dv: &mut DeviceVec<F>,
        domain: &Radix2EvaluationDomain<F>,
        dir: Direction,
        count: Option<usize>,
        stamps: Option<&zkgpu_runtime::PassTimer>,
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
        let plan = self.plan(domain, dir).await?;
        let pipeline = self.kernel(PASS).await?;
        let per_transform = (n as u64).div_ceil(TILE) as u32;
        let total = u32::try_from(u64::from(per_transform) * batch as u64).map_err(|_| {
            NttError::Shape(format!(
                "{batch} transforms of size {n} need too many workgroups"
            ))
        })?;
        let max = self.ctx.limits().max_compute_workgroups_per_dimension;
        let (gx, gy, _) = grid(total, 1, max);
        // Every pass's bindings first, then all dispatches in one compute pass (wgpu orders
        // them with barriers; separate compute passes cost the GPU a gap each).
        let mut binds = Vec::with_capacity(plan.passes.len());
        for pass in &plan.passes {
            let mut p = *pass;
            p.per_transform = per_transform;
            p.batch = batch as u32;
            p.grid_x = gx;
            p.page_log = dv.page_log;
            let params = self.ctx.uniform_buffer("ntt pass params", &p);
            let [s0, s1, s2] = self.page_bindings(&dv.data, false);
            let [d0, d1, d2] = self.page_bindings(&dv.scratch, true);
            binds.push(self.ctx.bind_group(
                &pipeline,
                &[
                    (ntt::SRC, s0),
                    (ntt::SRC1, s1),
                    (ntt::SRC2, s2),
                    (ntt::DST, d0),
                    (ntt::DST1, d1),
                    (ntt::DST2, d2),
                    (ntt::TABLES, &plan.tables),
                    (ntt::PARAMS, &params),
                    (
                        ntt::TWISTS,
                        plan.twists.as_ref().unwrap_or(&self.placeholders[0]),
                    ),
                ],
            ));
            std::mem::swap(&mut dv.data, &mut dv.scratch);
        }
        {
            let mut cp = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("ntt passes"),
                timestamp_writes: stamps.map(|timer| timer.writes(0, true, true)),
            });
            cp.set_pipeline(&pipeline.pipeline);
            for bind in &binds {
                cp.set_bind_group(0, bind, &[]);
                cp.dispatch_workgroups(gx, gy, 1);
            }
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
        let pipeline = self.kernel(ELEMENTWISE).await?;
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
                c: cw,
                ..EwParams::default()
            },
        );
        let [p0, p1, p2] = self.page_bindings(&dv.data, true);
        let bind = self.ctx.bind_group(
            &pipeline,
            &[
                (ew::EW_DATA, p0),
                (ew::EW_DATA1, p1),
                (ew::EW_DATA2, p2),
                (ew::EW, &params),
            ],
        );
        dispatch(enc, "ntt elementwise", &pipeline, &bind, (gx, gy), None);
        Ok(())
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
        let timer = match self.ctx.pass_timer("ntt timestamps", 1) {
            Some(timer) if domain.size() > 1 => timer,
            _ => return self.transform(dv, domain, dir).await,
        };
        let mut enc = self.encoder();
        self.record_transform_stamped(&mut enc, dv, domain, dir, None, Some(&timer))
            .await?;
        timer.resolve(enc.raw());
        let wall = self.submit(enc)?;
        let gpu = timer.seconds(&self.ctx).await?[0];
        Ok(if gpu > 0.0 { gpu } else { wall })
    }
}
