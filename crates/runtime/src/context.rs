//! [`GpuContext`]: the options that pick an adapter (`adapter.rs` picks it), the device,
//! the pipeline cache, buffers and readback.

use crate::error::{GpuError, Result};
use crate::pipelines::{Modules, Pipeline, PipelineKey, PipelineTiming};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use web_time::Instant;

/// Which limits to request from the adapter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LimitsChoice {
    /// Everything the adapter offers (wgpu's defaults would cap a storage binding at 128 MiB).
    #[default]
    Adapter,
    /// Exactly WebGPU's default limits, as a browser grants without asking: for testing that
    /// the engines run within them.
    WebGpuDefault,
}

/// How to pick an adapter. [`ContextOptions::from_env`] reads the environment.
#[derive(Clone, Debug)]
pub struct ContextOptions {
    /// Case-insensitive substring of the adapter's name (`ZKGPU_ADAPTER`). `None`: prefer a
    /// discrete GPU, then integrated, virtual, and last a CPU (software) adapter.
    pub adapter_name: Option<String>,
    /// Backends to consider (`ZKGPU_BACKEND`, else wgpu's `WGPU_BACKEND`, else all). Values:
    /// comma list of `vulkan`, `metal`, `dx12`, `webgpu`. wgpu's GL backend is not built in
    /// (`gl` is a [`GpuError::BadEnv`]): the test suite is not run on it (docs/gpu.md).
    pub backends: wgpu::Backends,
    /// Limits to request (`ZKGPU_LIMITS=adapter|webgpu-default`).
    pub limits: LimitsChoice,
    /// A directory to keep wgpu's pipeline cache in across processes
    /// (`ZKGPU_PIPELINE_CACHE`; Vulkan only, native only): pipelines compiled by an earlier
    /// process are then loaded, not compiled. [`GpuContext::save_pipeline_cache`] writes it.
    pub pipeline_cache_dir: Option<std::path::PathBuf>,
    /// The adapter at this place of the list wgpu enumerates on `backends` (the numbers
    /// `zkgpu info` prints), before `adapter_name` and the type preference; set by
    /// [`crate::DeviceSet`] for each device it opens. `None`: pick by name and type.
    pub adapter_index: Option<usize>,
    /// The field arithmetic engines multiply with (`ZKGPU_ARITH=auto|portable|int64|f64`;
    /// default automatic: docs/limbs.md, "The 64-bit arithmetics").
    pub arith: crate::ArithChoice,
}

impl Default for ContextOptions {
    fn default() -> Self {
        Self {
            adapter_name: None,
            backends: wgpu::Backends::all(),
            limits: LimitsChoice::Adapter,
            pipeline_cache_dir: None,
            adapter_index: None,
            arith: crate::ArithChoice::Auto,
        }
    }
}

impl ContextOptions {
    /// [`ContextOptions::from_env`], but with exactly WebGPU's default limits (what a
    /// browser grants without asking), whatever `ZKGPU_LIMITS` says: for tests that the
    /// engines stay within them.
    pub fn webgpu_default_from_env() -> Result<Self> {
        Ok(Self {
            limits: LimitsChoice::WebGpuDefault,
            ..Self::from_env()?
        })
    }

    /// Options from `ZKGPU_ADAPTER`, `ZKGPU_BACKEND` (or `WGPU_BACKEND`) and `ZKGPU_LIMITS`.
    pub fn from_env() -> Result<Self> {
        let mut o = Self::default();
        if let Some(name) = env("ZKGPU_ADAPTER").filter(|s| !s.is_empty()) {
            o.adapter_name = Some(name);
        }
        let backend_var = if env("ZKGPU_BACKEND").is_some() {
            "ZKGPU_BACKEND"
        } else {
            "WGPU_BACKEND"
        };
        if let Some(list) = env(backend_var).filter(|s| !s.is_empty()) {
            o.backends = parse_backends(backend_var, &list)?;
        }
        if let Some(dir) = env("ZKGPU_PIPELINE_CACHE").filter(|s| !s.is_empty()) {
            o.pipeline_cache_dir = Some(dir.into());
        }
        if let Some(name) = env("ZKGPU_ARITH").filter(|s| !s.is_empty()) {
            o.arith = crate::ArithChoice::from_name(&name).ok_or_else(|| GpuError::BadEnv {
                var: "ZKGPU_ARITH",
                value: name.clone(),
                reason: "expected `auto`, `portable`, `int64` or `f64`".into(),
            })?;
        }
        match env("ZKGPU_LIMITS").as_deref() {
            None | Some("") | Some("adapter") => {}
            Some("webgpu-default") => o.limits = LimitsChoice::WebGpuDefault,
            Some(v) => {
                return Err(GpuError::BadEnv {
                    var: "ZKGPU_LIMITS",
                    value: v.into(),
                    reason: "expected `adapter` or `webgpu-default`".into(),
                });
            }
        }
        Ok(o)
    }
}

/// The backends of a comma list (`var`'s value): wgpu's names, less the GL backend, which
/// zkgpu is built without.
fn parse_backends(var: &'static str, list: &str) -> Result<wgpu::Backends> {
    let bad = |reason: &str| GpuError::BadEnv {
        var,
        value: list.to_owned(),
        reason: reason.to_owned(),
    };
    if list
        .split(',')
        .any(|b| matches!(b.trim().to_lowercase().as_str(), "gl" | "gles" | "opengl"))
    {
        return Err(bad(
            "zkgpu is built without wgpu's GL backend (the GPU tests do not run on it); use \
             vulkan (Mesa's lavapipe where there is no GPU), metal or dx12",
        ));
    }
    let b = wgpu::Backends::from_comma_list(list);
    if b.is_empty() {
        return Err(bad("expected a comma list of vulkan, metal, dx12, webgpu"));
    }
    Ok(b)
}

fn env(name: &str) -> Option<String> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::env::var(name).ok()
    }
    #[cfg(target_arch = "wasm32")]
    {
        let _ = name;
        None
    }
}

/// Which [`GpuContext`] made a GPU object: buffers of one device cannot be used by another,
/// so engines check this before recording anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ContextId(u64);

impl std::fmt::Display for ContextId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GPU context #{}", self.0)
    }
}

impl ContextId {
    /// A new id, unique in the process.
    fn next() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }

    /// `Ok` when `self` (an object's context) is `engine` (the engine's), else
    /// [`GpuError::ForeignContext`] naming `what`.
    pub fn check(self, engine: ContextId, what: &str) -> Result<()> {
        if self == engine {
            Ok(())
        } else {
            Err(GpuError::ForeignContext {
                what: what.to_owned(),
                made: self,
                used: engine,
            })
        }
    }
}

/// Adapter selection, device, queue, and the caches around them: a handle, cheap to clone,
/// and every clone is the same context (same [`ContextId`], device, pipelines and pools).
/// Engines keep a clone, so they borrow nothing and can live in a `static`, a struct or
/// another thread. Create one per process (or per test binary) and clone it: every pipeline
/// is compiled once per context.
#[derive(Clone, Debug)]
pub struct GpuContext(Arc<ContextState>);

impl std::ops::Deref for GpuContext {
    type Target = ContextState;
    fn deref(&self) -> &ContextState {
        &self.0
    }
}

/// What a [`GpuContext`] handle shares: read through the handle's methods.
#[derive(Debug)]
pub struct ContextState {
    pub(crate) id: ContextId,
    pub(crate) adapter: wgpu::Adapter,
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) info: wgpu::AdapterInfo,
    pub(crate) limits: wgpu::Limits,
    pub(crate) features: wgpu::Features,
    pub(crate) modules: Mutex<Modules>,
    pub(crate) pipelines: Mutex<HashMap<PipelineKey, Arc<Pipeline>>>,
    pub(crate) timings: Mutex<Vec<PipelineTiming>>,
    pub(crate) device_error: Arc<Mutex<Option<String>>>,
    /// The field arithmetic engines use, and what was found out about each: set once, by
    /// [`GpuContext::new`] before it returns the context.
    pub(crate) arith: std::sync::OnceLock<(crate::Arith, Vec<crate::ArithReport>)>,
    /// Where the pipeline cache (and the arithmetics' measured rates) are kept.
    pub(crate) pipeline_cache_dir: Option<std::path::PathBuf>,
    /// Readback staging buffers of [`READBACK_PIECE`] bytes, unmapped, kept for reuse.
    pub(crate) readback_pool: Mutex<Vec<wgpu::Buffer>>,
    /// Upload staging buffers of [`UPLOAD_PIECE`] bytes, mapped for writing, kept for reuse
    /// (shared with their map callbacks, which put them back).
    pub(crate) upload_pool: Arc<Mutex<Vec<wgpu::Buffer>>>,
    /// wgpu's pipeline cache and its file, where asked for and supported.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) pipeline_cache: Option<crate::pipeline_cache::PersistentCache>,
    /// Readbacks poll the device and yield instead of blocking in it
    /// ([`GpuContext::set_yielding_waits`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) yielding_waits: std::sync::atomic::AtomicBool,
    /// Pipelines a thread is compiling for [`GpuContext::pipelines`], and the signal that one
    /// finished: another thread asking for the same waits instead of compiling it again.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) building: Mutex<std::collections::HashSet<PipelineKey>>,
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) built: std::sync::Condvar,
}

impl GpuContext {
    /// Picks an adapter by `opts`, and opens a device with its limits (or WebGPU's defaults).
    pub async fn new(opts: ContextOptions) -> Result<Self> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: opts.backends,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapter = Self::pick_adapter(&instance, &opts).await?;
        let info = adapter.get_info();
        let mut wanted = wgpu::Features::TIMESTAMP_QUERY;
        if opts.pipeline_cache_dir.is_some() {
            wanted |= wgpu::Features::PIPELINE_CACHE;
        }
        // The 64-bit arithmetics' features, except within WebGPU's defaults (a browser's).
        if opts.limits == LimitsChoice::Adapter {
            for arith in crate::Arith::WIDE {
                wanted |= crate::arith_features(arith);
            }
        }
        let features = adapter.features() & wanted;
        let limits = match opts.limits {
            LimitsChoice::Adapter => adapter.limits(),
            LimitsChoice::WebGpuDefault => wgpu::Limits::default(),
        };
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("zkgpu"),
                required_features: features,
                required_limits: limits.clone(),
                experimental_features: wgpu::ExperimentalFeatures::disabled(),
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            })
            .await
            .map_err(|source| GpuError::RequestDevice {
                adapter: info.name.clone(),
                source,
            })?;
        // wgpu's default handler panics on an uncaptured error; record it instead, so the next
        // call returns a GpuError.
        let device_error: Arc<Mutex<Option<String>>> = Arc::default();
        {
            let slot = device_error.clone();
            device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
                tracing::error!("uncaptured GPU error: {e}");
                let mut s = slot.lock().unwrap_or_else(PoisonError::into_inner);
                s.get_or_insert_with(|| e.to_string());
            }));
            let slot = device_error.clone();
            device.set_device_lost_callback(move |reason, msg| {
                tracing::error!("GPU device lost ({reason:?}): {msg}");
                let mut s = slot.lock().unwrap_or_else(PoisonError::into_inner);
                s.get_or_insert_with(|| format!("device lost ({reason:?}): {msg}"));
            });
        }
        tracing::info!(adapter = %info.name, backend = ?info.backend, "opened GPU device");
        #[cfg(not(target_arch = "wasm32"))]
        let pipeline_cache = opts
            .pipeline_cache_dir
            .as_deref()
            .and_then(|dir| crate::pipeline_cache::PersistentCache::open(&device, &info, dir));
        // On wasm32 wgpu's handles are neither Send nor Sync (the page is one thread), so
        // the Arc is only ever shared on that thread there.
        #[allow(clippy::arc_with_non_send_sync)]
        let state = Arc::new(ContextState {
            id: ContextId::next(),
            adapter,
            device,
            queue,
            info,
            limits,
            features,
            modules: Mutex::default(),
            pipelines: Mutex::default(),
            timings: Mutex::default(),
            device_error,
            arith: std::sync::OnceLock::new(),
            pipeline_cache_dir: opts.pipeline_cache_dir.clone(),
            readback_pool: Mutex::default(),
            upload_pool: Arc::default(),
            #[cfg(not(target_arch = "wasm32"))]
            pipeline_cache,
            #[cfg(not(target_arch = "wasm32"))]
            yielding_waits: std::sync::atomic::AtomicBool::new(false),
            #[cfg(not(target_arch = "wasm32"))]
            building: Mutex::default(),
            #[cfg(not(target_arch = "wasm32"))]
            built: std::sync::Condvar::new(),
        });
        let ctx = Self(state);
        let arith = ctx.select_arith(opts.arith).await?;
        let _ = ctx.arith.set(arith);
        Ok(ctx)
    }

    /// Natively, makes readbacks wait as a browser does: poll the device without blocking and
    /// yield to the other futures of this thread until the data is there, instead of blocking
    /// the thread in the driver. Futures joined on one thread (the single-threaded prover,
    /// [`crate::BlockOn`]) then overlap one's host work with another's GPU work, as they do
    /// on a page; the waiting thread spins meanwhile. Off by default. No effect on wasm32,
    /// where waits always yield to the page's event loop.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn set_yielding_waits(&self, on: bool) {
        self.yielding_waits
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Writes the pipeline cache to its directory ([`ContextOptions::pipeline_cache_dir`]):
    /// the file written, or None where there is no cache (not asked for, or a backend
    /// without one). Call it once the pipelines a process needs are built.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn save_pipeline_cache(&self) -> Result<Option<std::path::PathBuf>> {
        match &self.pipeline_cache {
            None => Ok(None),
            Some(c) => c
                .save()
                .map_err(|e| GpuError::Device(format!("writing the pipeline cache: {e}"))),
        }
    }

    /// Whether pipelines go through a persistent pipeline cache.
    pub fn has_pipeline_cache(&self) -> bool {
        #[cfg(not(target_arch = "wasm32"))]
        return self.pipeline_cache.is_some();
        #[cfg(target_arch = "wasm32")]
        false
    }

    /// [`GpuContext::new`] with options from the environment, blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn from_env_blocking() -> Result<Self> {
        pollster::block_on(Self::new(ContextOptions::from_env()?))
    }

    /// [`GpuContext::new`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new_blocking(opts: ContextOptions) -> Result<Self> {
        pollster::block_on(Self::new(opts))
    }

    /// This context's id: objects it made carry it, and engines refuse objects of another.
    pub fn id(&self) -> ContextId {
        self.id
    }

    /// The device.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The adapter.
    pub fn adapter(&self) -> &wgpu::Adapter {
        &self.adapter
    }

    /// The adapter's description.
    pub fn info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    /// Whether the adapter is a software one (device type `Cpu`, e.g. Mesa's lavapipe): the
    /// engines then skip work that pays only on a real GPU.
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// The limits the device was opened with.
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// The most bytes one storage buffer binding may hold: the binding limit, or the buffer
    /// limit where that is lower. Engines size their parts and pages by it.
    pub fn max_binding_bytes(&self) -> u64 {
        self.limits
            .max_storage_buffer_binding_size
            .min(self.limits.max_buffer_size)
    }

    /// Frees the pooled staging buffers (up to 512 MiB of host-visible memory each that large
    /// downloads and large uploads keep for reuse).
    pub fn release_staging(&self) {
        self.readback_pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.upload_pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Whether the device records GPU timestamps.
    pub fn has_timestamps(&self) -> bool {
        self.features.contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// An error the device reported outside any error scope, or its loss, if any.
    pub fn check_device(&self) -> Result<()> {
        match self
            .device_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            Some(e) => Err(GpuError::Device(e.clone())),
            None => Ok(()),
        }
    }

    /// Waits until the GPU has finished all submitted work (native), then reports any device
    /// error.
    pub fn wait(&self) -> Result<()> {
        #[cfg(not(target_arch = "wasm32"))]
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: None,
            })
            .map_err(|e| GpuError::Poll(e.to_string()))?;
        self.check_device()
    }

    /// Waits until the submission `index` (and everything submitted before it) is done, not
    /// for work submitted after it (another thread's).
    pub fn wait_for(&self, index: wgpu::SubmissionIndex) -> Result<()> {
        #[cfg(not(target_arch = "wasm32"))]
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: None,
            })
            .map_err(|e| GpuError::Poll(e.to_string()))?;
        #[cfg(target_arch = "wasm32")]
        let _ = index;
        self.check_device()
    }

    /// Submits `enc` and waits for it alone ([`GpuContext::wait_for`]).
    pub fn submit_and_wait(&self, enc: wgpu::CommandEncoder) -> Result<wgpu::SubmissionIndex> {
        let index = self.queue.submit([enc.finish()]);
        self.wait_for(index.clone())?;
        Ok(index)
    }

    /// Runs `record` in one compute pass, submits it and waits; returns the pass's GPU time
    /// from timestamp queries where the device has them, else the wall time of submit-to-done.
    pub async fn timed_pass(
        &self,
        label: &str,
        record: impl FnOnce(&mut wgpu::ComputePass<'_>),
    ) -> Result<f64> {
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
        let timer = self.pass_timer(label, 1);
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: timer.as_ref().map(|t| t.writes(0, true, true)),
            });
            record(&mut pass);
        }
        if let Some(timer) = &timer {
            timer.resolve(&mut enc);
        }
        let start = Instant::now();
        self.queue.submit([enc.finish()]);
        self.wait()?;
        let wall = start.elapsed().as_secs_f64();
        let gpu = match &timer {
            Some(timer) => timer.seconds(self).await?[0],
            None => 0.0,
        };
        // Some drivers report zeros; the wall time stands in then.
        Ok(if gpu > 0.0 { gpu } else { wall })
    }
}

/// A 2-D dispatch grid covering `n` invocations in workgroups of `wg` (WebGPU allows 65,535
/// workgroups per dimension): returns (workgroups in x, workgroups in y, invocations per row).
pub fn grid(n: u32, wg: u32, max_per_dim: u32) -> (u32, u32, u32) {
    let groups = n.div_ceil(wg).max(1);
    if groups <= max_per_dim {
        (groups, 1, groups * wg)
    } else {
        let y = groups.div_ceil(max_per_dim);
        let x = groups.div_ceil(y);
        (x, y, x * wg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_covers_every_invocation() {
        for n in [1u32, 63, 64, 65, 65535 * 64, 65535 * 64 + 1, 1 << 26] {
            let (x, y, stride) = grid(n, 64, 65535);
            assert!(x <= 65535 && y <= 65535);
            assert_eq!(stride, x * 64);
            assert!(u64::from(x) * u64::from(y) * 64 >= u64::from(n));
        }
    }

    #[test]
    fn backend_lists_parse_and_gl_is_refused() {
        let b = parse_backends("ZKGPU_BACKEND", "vulkan, metal").unwrap();
        assert_eq!(b, wgpu::Backends::VULKAN | wgpu::Backends::METAL);
        for list in ["gl", "vulkan,GL", "gles"] {
            match parse_backends("ZKGPU_BACKEND", list) {
                Err(GpuError::BadEnv { var, reason, .. }) => {
                    assert_eq!(var, "ZKGPU_BACKEND");
                    assert!(reason.contains("without wgpu's GL backend"), "{reason}");
                }
                other => panic!("{list}: {other:?}"),
            }
        }
        assert!(matches!(
            parse_backends("WGPU_BACKEND", "cuda"),
            Err(GpuError::BadEnv {
                var: "WGPU_BACKEND",
                ..
            })
        ));
    }
}
