//! [`GpuContext`]: adapter selection, the device, the pipeline cache, buffers and readback.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

#[cfg(not(target_arch = "wasm32"))]
use rayon::prelude::*;
use web_time::Instant;
use zkgpu_shaders::Composed;

use crate::error::{GpuError, Result};

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
    /// comma list of `vulkan`, `metal`, `dx12`, `gl`, `webgpu`.
    pub backends: wgpu::Backends,
    /// Limits to request (`ZKGPU_LIMITS=adapter|webgpu-default`).
    pub limits: LimitsChoice,
    /// A directory to keep wgpu's pipeline cache in across processes
    /// (`ZKGPU_PIPELINE_CACHE`; Vulkan only, native only): pipelines compiled by an earlier
    /// process are then loaded, not compiled. [`GpuContext::save_pipeline_cache`] writes it.
    pub pipeline_cache_dir: Option<std::path::PathBuf>,
}

impl Default for ContextOptions {
    fn default() -> Self {
        Self {
            adapter_name: None,
            backends: wgpu::Backends::all(),
            limits: LimitsChoice::Adapter,
            pipeline_cache_dir: None,
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
            let b = wgpu::Backends::from_comma_list(&list);
            if b.is_empty() {
                return Err(GpuError::BadEnv {
                    var: if backend_var == "ZKGPU_BACKEND" {
                        "ZKGPU_BACKEND"
                    } else {
                        "WGPU_BACKEND"
                    },
                    value: list,
                    reason: "expected a comma list of vulkan, metal, dx12, gl, webgpu".into(),
                });
            }
            o.backends = b;
        }
        if let Some(dir) = env("ZKGPU_PIPELINE_CACHE").filter(|s| !s.is_empty()) {
            o.pipeline_cache_dir = Some(dir.into());
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

/// Shader runtime checks for a module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Checks {
    /// wgpu's defaults: bounds checks and loop bounding.
    #[default]
    Default,
    /// Bounds checks kept, loop bounding off. NVIDIA runs loop-heavy kernels about 23 times
    /// faster without it (shared/gpu/README.md). Only for modules whose every loop provably
    /// terminates: each such kernel says why in a comment.
    TrustedLoops,
}

/// How long one pipeline took to create.
#[derive(Clone, Debug)]
pub struct PipelineTiming {
    /// Module name.
    pub module: String,
    /// Entry point.
    pub entry: String,
    /// Runtime checks it was built with.
    pub checks: Checks,
    /// Seconds spent in shader-module and pipeline creation (driver compile included).
    pub seconds: f64,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PipelineKey {
    module: String,
    entry: String,
    checks: Checks,
    constants: Vec<(String, u64)>,
}

/// A compiled compute pipeline and its first bind group layout.
#[derive(Debug)]
pub struct Pipeline {
    /// The pipeline.
    pub pipeline: wgpu::ComputePipeline,
    /// Layout of `@group(0)`.
    pub layout: wgpu::BindGroupLayout,
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

/// Adapter selection, device, queue, and the caches around them. Create one per process (or
/// per test binary) and share it: every pipeline is compiled once per context.
#[derive(Debug)]
pub struct GpuContext {
    id: ContextId,
    adapter: wgpu::Adapter,
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    features: wgpu::Features,
    modules: Mutex<HashMap<(String, Checks), wgpu::ShaderModule>>,
    pipelines: Mutex<HashMap<PipelineKey, Arc<Pipeline>>>,
    timings: Mutex<Vec<PipelineTiming>>,
    device_error: Arc<Mutex<Option<String>>>,
    /// Readback staging buffers of [`READBACK_PIECE`] bytes, unmapped, kept for reuse.
    readback_pool: Mutex<Vec<wgpu::Buffer>>,
    /// Upload staging buffers of [`UPLOAD_PIECE`] bytes, mapped for writing, kept for reuse
    /// (shared with their map callbacks, which put them back).
    upload_pool: Arc<Mutex<Vec<wgpu::Buffer>>>,
    /// wgpu's pipeline cache and its file, where asked for and supported.
    #[cfg(not(target_arch = "wasm32"))]
    pipeline_cache: Option<crate::pipeline_cache::PersistentCache>,
}

/// Bytes of a pooled readback staging buffer. Reusing staging memory matters: a fresh
/// host-visible allocation is faulted in page by page on the first read, which measured
/// 1-2 GB/s on the H100's host.
const READBACK_PIECE: u64 = 8 << 20;

/// Pooled readback buffers kept at most (512 MiB).
const READBACK_POOL_MAX: usize = 64;

/// Where [`GpuContext::write_par_zip`] writes one piece of one region: wgpu's staging
/// memory for a queued write, or a pooled staging buffer's mapping.
enum UploadView {
    Queue(wgpu::QueueWriteBufferView),
    Mapped(wgpu::BufferViewMut),
}

impl UploadView {
    /// Writes `bytes` at byte `at` of the piece.
    fn write(&mut self, at: usize, bytes: &[u8]) {
        let range = at..at + bytes.len();
        match self {
            Self::Queue(v) => v.slice(range).copy_from_slice(bytes),
            Self::Mapped(v) => v.slice(range).copy_from_slice(bytes),
        }
    }
}

/// Bytes of one pooled upload staging buffer: [`GpuContext::write_par_zip`] writes of at
/// least this size go through pooled, persistently allocated staging memory in pieces of it.
const UPLOAD_PIECE: u64 = 4 << 20;

/// Pooled upload staging buffers kept at most (512 MiB).
const UPLOAD_POOL_MAX: usize = 128;

/// Bytes from which [`GpuContext::write_par_zip`] writes through the pooled staging buffers
/// (one partly filled buffer below [`UPLOAD_PIECE`]): wgpu's queued writes allocate fresh
/// staging memory per call, whose first touch costs page faults.
const UPLOAD_POOLED_MIN: u64 = 256 << 10;

/// Copies into staging memory recorded by [`GpuContext::record_read_back`], to be finished
/// by [`GpuContext::finish_read_back`] once their submission is made.
#[derive(Debug)]
#[must_use = "finish the readback, or its staging memory is lost to the pool"]
pub struct PendingReadback {
    /// Staging buffer, bytes used, whether it returns to the pool.
    stagings: Vec<(wgpu::Buffer, usize, bool)>,
    /// Elements per staging piece.
    per: usize,
    /// Elements in all.
    len: usize,
}

impl PendingReadback {
    /// Elements it reads back.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it reads nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Orders adapter types by preference: discrete first, software last.
#[cfg(not(target_arch = "wasm32"))]
fn type_rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

/// The hint of a [`GpuError::NoAdapter`].
#[cfg(not(target_arch = "wasm32"))]
fn no_adapter_hint(opts: &ContextOptions, seen: &[wgpu::AdapterInfo]) -> String {
    let mut h = String::new();
    if let Some(name) = &opts.adapter_name {
        h.push_str(&format!(
            "no adapter's name contains {name:?} (ZKGPU_ADAPTER)"
        ));
    } else {
        h.push_str(&format!("no adapter on backends {:?}", opts.backends));
    }
    if !seen.is_empty() {
        let names: Vec<String> = seen
            .iter()
            .map(|i| format!("{} ({:?})", i.name, i.backend))
            .collect();
        h.push_str(&format!("; adapters present: {}", names.join(", ")));
    }
    h.push_str(
        ". Without a GPU on Linux, install Mesa's software Vulkan driver: \
         `sudo apt-get install -y mesa-vulkan-drivers` (Debian/Ubuntu), then run again; \
         `zkgpu info` lists the adapters wgpu sees",
    );
    h
}

impl GpuContext {
    /// Lists the adapters wgpu finds on `backends` (native targets only).
    #[cfg(not(target_arch = "wasm32"))]
    pub async fn adapters(backends: wgpu::Backends) -> Vec<(wgpu::AdapterInfo, wgpu::Limits)> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        instance
            .enumerate_adapters(backends)
            .await
            .into_iter()
            .map(|a| (a.get_info(), a.limits()))
            .collect()
    }

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
        Ok(Self {
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
            readback_pool: Mutex::default(),
            upload_pool: Arc::default(),
            #[cfg(not(target_arch = "wasm32"))]
            pipeline_cache,
        })
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

    #[cfg(not(target_arch = "wasm32"))]
    async fn pick_adapter(
        instance: &wgpu::Instance,
        opts: &ContextOptions,
    ) -> Result<wgpu::Adapter> {
        let all = instance.enumerate_adapters(opts.backends).await;
        let seen: Vec<wgpu::AdapterInfo> = all.iter().map(wgpu::Adapter::get_info).collect();
        let wanted = opts.adapter_name.as_ref().map(|n| n.to_lowercase());
        all.into_iter()
            .filter(|a| match &wanted {
                Some(n) => a.get_info().name.to_lowercase().contains(n),
                None => true,
            })
            .min_by_key(|a| type_rank(a.get_info().device_type))
            .ok_or_else(|| GpuError::NoAdapter {
                hint: no_adapter_hint(opts, &seen),
            })
    }

    #[cfg(target_arch = "wasm32")]
    async fn pick_adapter(
        instance: &wgpu::Instance,
        opts: &ContextOptions,
    ) -> Result<wgpu::Adapter> {
        // The browser picks the adapter: name and backend filters do not apply.
        let _ = opts;
        instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::NoAdapter {
                hint: format!(
                    "{e}; the browser offers no WebGPU adapter (Chromium: --enable-unsafe-webgpu)"
                ),
            })
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

    /// Creation times of every pipeline built so far, in order.
    pub fn pipeline_timings(&self) -> Vec<PipelineTiming> {
        self.timings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Creation time of the pipeline for `entry` of `module` (the first one built, if several
    /// differ in constants), if it was built in this context.
    pub fn pipeline_seconds(&self, module: &str, entry: &str, checks: Checks) -> Option<f64> {
        self.timings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|t| t.module == module && t.entry == entry && t.checks == checks)
            .map(|t| t.seconds)
    }

    /// The pipeline for `entry` of `module`, compiled on first use and cached for the
    /// context's lifetime. `constants` set WGSL `override`s (`WORKGROUP_SIZE`, ...).
    pub async fn pipeline(
        &self,
        module: &Composed,
        entry: &str,
        checks: Checks,
        constants: &[(&str, f64)],
    ) -> Result<Arc<Pipeline>> {
        if !module.entry_points.contains(&entry) {
            return Err(GpuError::NoEntryPoint {
                module: module.name.clone(),
                entry: entry.to_owned(),
            });
        }
        let key = PipelineKey {
            module: module.name.clone(),
            entry: entry.to_owned(),
            checks,
            constants: constants
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.to_bits()))
                .collect(),
        };
        if let Some(p) = self
            .pipelines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return Ok(p.clone());
        }
        let start = Instant::now();
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let shader = self.shader_module(module, checks);
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&format!("{}::{entry}", module.name)),
                layout: None,
                module: &shader,
                entry_point: Some(entry),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants,
                    zero_initialize_workgroup_memory: true,
                },
                cache: self.cache(),
            });
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Pipeline {
                module: module.name.clone(),
                entry: entry.to_owned(),
                message: e.to_string(),
            });
        }
        let seconds = start.elapsed().as_secs_f64();
        tracing::debug!(module = %module.name, entry, ?checks, seconds, "created pipeline");
        self.timings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(PipelineTiming {
                module: module.name.clone(),
                entry: entry.to_owned(),
                checks,
                seconds,
            });
        let p = Arc::new(Pipeline {
            layout: pipeline.get_bind_group_layout(0),
            pipeline,
        });
        self.pipelines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, p.clone());
        Ok(p)
    }

    /// [`GpuContext::pipeline`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn pipeline_blocking(
        &self,
        module: &Composed,
        entry: &str,
        checks: Checks,
        constants: &[(&str, f64)],
    ) -> Result<Arc<Pipeline>> {
        pollster::block_on(self.pipeline(module, entry, checks, constants))
    }

    /// The pipeline cache to compile through, if any.
    fn cache(&self) -> Option<&wgpu::PipelineCache> {
        #[cfg(not(target_arch = "wasm32"))]
        return self.pipeline_cache.as_ref().map(|c| &c.cache);
        #[cfg(target_arch = "wasm32")]
        None
    }

    fn shader_module(&self, module: &Composed, checks: Checks) -> wgpu::ShaderModule {
        let key = (module.name.clone(), checks);
        let mut cache = self.modules.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(m) = cache.get(&key) {
            return m.clone();
        }
        let desc = wgpu::ShaderModuleDescriptor {
            label: Some(&module.name),
            source: wgpu::ShaderSource::Wgsl(module.source().into()),
        };
        let m = match checks {
            Checks::Default => self.device.create_shader_module(desc),
            Checks::TrustedLoops => trusted_module(&self.device, desc),
        };
        cache.insert(key, m.clone());
        m
    }

    /// Checks `bytes` against the binding and buffer limits.
    pub fn check_binding_size(&self, label: &str, bytes: u64) -> Result<()> {
        let check = |limit: u64, which| {
            if bytes > limit {
                Err(GpuError::BufferTooLarge {
                    label: label.to_owned(),
                    bytes,
                    limit,
                    which,
                })
            } else {
                Ok(())
            }
        };
        check(self.limits.max_buffer_size, "max_buffer_size")?;
        check(
            self.limits.max_storage_buffer_binding_size,
            "max_storage_buffer_binding_size",
        )
    }

    /// A storage buffer holding `data` (at least 4 bytes, so empty inputs still bind).
    pub fn storage_buffer<T: bytemuck::Pod>(
        &self,
        label: &str,
        data: &[T],
    ) -> Result<wgpu::Buffer> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let buf = self.storage_zeroed(label, bytes.len() as u64)?;
        if !bytes.is_empty() {
            self.queue.write_buffer(&buf, 0, bytes);
        }
        Ok(buf)
    }

    /// Writes `bytes` bytes into `buffer` from `offset`, produced by `fill` on the host's
    /// threads straight into wgpu's mapped staging memory: no intermediate vector and no
    /// single-threaded copy. `fill(at, block)` writes bytes `at .. at + block.len()` of the
    /// range; `at` and `block.len()` are multiples of `align` (the caller's element size),
    /// blocks are small (tens of KiB, so they stay in cache) and run in any order.
    /// `offset`, `bytes` and `align` must be multiples of 4 (wgpu's copy alignment).
    /// [`GpuContext::write_par_zip`] with one region.
    pub fn write_par(
        &self,
        buffer: &wgpu::Buffer,
        offset: u64,
        bytes: u64,
        align: usize,
        fill: impl Fn(usize, &mut [u8]) + Sync,
    ) -> Result<()> {
        if !bytes.is_multiple_of(4) || !align.is_multiple_of(4) {
            return Err(GpuError::Device(format!(
                "a parallel write of {bytes} bytes in elements of {align}: both must be \
                 multiples of 4"
            )));
        }
        self.write_par_zip(&[(buffer, offset)], bytes / 4, align / 4, |at, blocks| {
            fill(4 * at, bytemuck::cast_slice_mut(&mut *blocks[0]))
        })
    }

    /// [`GpuContext::write_par`] for several regions filled in one pass: `regions[v]` is a
    /// `(buffer, offset)` pair, each region `words` u32 words long, and `fill(at, blocks)`
    /// writes words `at .. at + len` of every region at once (`blocks[v]` for region `v`, all
    /// of length `len`; `at` and `len` multiples of `align` words). Values computed together
    /// (the three sparse products of one constraint row) go straight into each region's
    /// staging memory without an intermediate vector. Offsets must be multiples of 4.
    pub fn write_par_zip(
        &self,
        regions: &[(&wgpu::Buffer, u64)],
        words: u64,
        align: usize,
        fill: impl Fn(usize, &mut [&mut [u32]]) + Sync,
    ) -> Result<()> {
        if words == 0 || regions.is_empty() {
            return Ok(());
        }
        let align = align.max(1);
        // Blocks of at most 16 Ki words (64 KiB) per region, small enough to stay in cache;
        // about four pieces per thread, since the fill may be the expensive part and rows can
        // cost unevenly.
        let block = ((16 << 10) / align).max(1) * align;
        let threads = rayon::current_num_threads().max(1) as u64;
        let piece = (words / (4 * threads))
            .max(1 << 16)
            .next_multiple_of(block as u64);
        // Large writes (native) go through pooled staging buffers of UPLOAD_PIECE bytes,
        // allocated once and kept mapped (wgpu's own staging, write_buffer_with, allocates
        // host-visible memory for every write): each holds a whole number of pieces, every
        // piece its own sub-range view, so the fill keeps its parallelism.
        let unit = if block.is_multiple_of(2) {
            block
        } else {
            2 * block
        } as u64;
        let stage_words = (UPLOAD_PIECE / 4 / unit) * unit;
        let pooled =
            cfg!(not(target_arch = "wasm32")) && stage_words > 0 && 4 * words >= UPLOAD_POOLED_MIN;
        let (piece, stage_words) = if pooled {
            let piece = piece.next_multiple_of(unit).min(stage_words);
            (piece, (stage_words / piece) * piece)
        } else {
            (piece, 0)
        };
        let mut pieces = Vec::new();
        // Pooled staging buffers in use: (buffer, destination, offset, bytes); the current
        // ones (one per region) and the word where they start.
        let mut staged: Vec<(wgpu::Buffer, &wgpu::Buffer, u64, u64)> = Vec::new();
        let mut current: Vec<wgpu::Buffer> = Vec::new();
        let mut stage_at = 0u64;
        let mut at = 0u64;
        while at < words {
            let len = piece.min(words - at);
            let size = wgpu::BufferSize::new(4 * len)
                .ok_or_else(|| GpuError::Device("empty piece of a parallel write".into()))?;
            if pooled && (current.is_empty() || at == stage_at + stage_words) {
                stage_at = at;
                let bytes = 4 * stage_words.min(words - at);
                current.clear();
                for &(buffer, offset) in regions {
                    let staging = self.upload_staging();
                    current.push(staging.clone());
                    staged.push((staging, buffer, offset + 4 * at, bytes));
                }
            }
            let mut views = Vec::with_capacity(regions.len());
            for (v, &(buffer, offset)) in regions.iter().enumerate() {
                let refused = || {
                    GpuError::Device(format!(
                        "writing {} bytes at {} into a buffer of {} bytes was refused",
                        4 * len,
                        offset + 4 * at,
                        buffer.size()
                    ))
                };
                if offset + 4 * (at + len) > buffer.size() {
                    return Err(refused());
                }
                if pooled {
                    let from = 4 * (at - stage_at);
                    let view = current[v]
                        .slice(from..from + 4 * len)
                        .get_mapped_range_mut()
                        .map_err(|e| GpuError::Device(format!("upload staging: {e}")))?;
                    views.push(UploadView::Mapped(view));
                } else {
                    let view = self
                        .queue
                        .write_buffer_with(buffer, offset + 4 * at, size)
                        .ok_or_else(refused)?;
                    views.push(UploadView::Queue(view));
                }
            }
            pieces.push((at as usize, len as usize, views));
            at += len;
        }
        drop(current);
        let fill_piece = |(start, total, mut views): (usize, usize, Vec<UploadView>)| {
            let mut tmp: Vec<Vec<u32>> = vec![vec![0u32; block]; views.len()];
            let mut done = 0usize;
            while done < total {
                let n = block.min(total - done);
                let mut blocks: Vec<&mut [u32]> = tmp.iter_mut().map(|t| &mut t[..n]).collect();
                fill(start + done, &mut blocks);
                for (view, t) in views.iter_mut().zip(&tmp) {
                    view.write(4 * done, bytemuck::cast_slice(&t[..n]));
                }
                done += n;
            }
        };
        #[cfg(not(target_arch = "wasm32"))]
        pieces.into_par_iter().for_each(fill_piece);
        #[cfg(target_arch = "wasm32")]
        pieces.into_iter().for_each(fill_piece);
        if !staged.is_empty() {
            // Copies submitted now: every later submission sees the data.
            let mut enc = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("upload"),
                });
            for (staging, buffer, offset, bytes) in &staged {
                staging.unmap();
                enc.copy_buffer_to_buffer(staging, 0, buffer, *offset, *bytes);
            }
            self.queue.submit([enc.finish()]);
            // Mapped again once the copies are done (at a later poll), then back in the pool.
            for (staging, ..) in staged {
                let pool = Arc::clone(&self.upload_pool);
                let buffer = staging.clone();
                staging.map_async(wgpu::MapMode::Write, .., move |r| {
                    let mut pool = pool.lock().unwrap_or_else(PoisonError::into_inner);
                    if r.is_ok() && pool.len() < UPLOAD_POOL_MAX {
                        pool.push(buffer);
                    }
                });
            }
        }
        Ok(())
    }

    /// Upload staging buffers in the pool now, ready for reuse (each [`UPLOAD_PIECE`] bytes;
    /// large writes return theirs once their copies complete and the device is polled).
    pub fn pooled_upload_buffers(&self) -> usize {
        self.upload_pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// A pooled upload staging buffer of [`UPLOAD_PIECE`] bytes, mapped for writing: one
    /// from the pool, else a new one.
    fn upload_staging(&self) -> wgpu::Buffer {
        let reused = self
            .upload_pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        reused.unwrap_or_else(|| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("upload (pooled)"),
                size: UPLOAD_PIECE,
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            })
        })
    }

    /// A zero-filled storage buffer of `bytes` bytes (rounded up to 4).
    pub fn storage_zeroed(&self, label: &str, bytes: u64) -> Result<wgpu::Buffer> {
        self.zeroed(label, bytes, wgpu::BufferUsages::COPY_SRC)
    }

    /// A zero-filled buffer of `words` u32 words that kernels write (storage) and indirect
    /// dispatches read their workgroup counts from (three words each).
    pub fn indirect_buffer(&self, label: &str, words: u64) -> Result<wgpu::Buffer> {
        self.zeroed(label, words * 4, wgpu::BufferUsages::INDIRECT)
    }

    /// A zero-filled storage buffer (new wgpu buffers are zeroed) of `bytes` bytes rounded up
    /// to 4, checked against the binding limit, with `extra` usages.
    /// Natively, a device out of memory is [`GpuError::OutOfMemory`] here, caught in an error
    /// scope: the device records no error, so the context stays usable once memory is freed.
    fn zeroed(&self, label: &str, bytes: u64, extra: wgpu::BufferUsages) -> Result<wgpu::Buffer> {
        let size = bytes.max(4).next_multiple_of(4);
        self.check_binding_size(label, size)?;
        #[cfg(not(target_arch = "wasm32"))]
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | extra,
            mapped_at_creation: false,
        });
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::OutOfMemory {
                context: format!("allocating `{label}` ({size} bytes): {e}"),
            });
        }
        Ok(buffer)
    }

    /// A uniform buffer holding `value`.
    pub fn uniform_buffer<T: bytemuck::Pod>(&self, label: &str, value: &T) -> wgpu::Buffer {
        let bytes = bytemuck::bytes_of(value);
        let buf = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: (bytes.len() as u64).next_multiple_of(16),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.queue.write_buffer(&buf, 0, bytes);
        buf
    }

    /// A bind group of `@group(0)` binding each `(index, buffer)` pair (whole buffers).
    /// Pipelines use layouts derived from the shader, which hold only the bindings their entry
    /// point uses: pass exactly those.
    pub fn bind_group(
        &self,
        pipeline: &Pipeline,
        buffers: &[(u32, &wgpu::Buffer)],
    ) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
            .iter()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: *i,
                resource: b.as_entire_binding(),
            })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.layout,
            entries: &entries,
        })
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

    /// Copies the first `bytes` bytes of `buffer` (which needs `COPY_SRC`) back to the host.
    pub async fn read_back<T: bytemuck::Pod + Send>(
        &self,
        buffer: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<Vec<T>> {
        self.read_back_range(buffer, 0, bytes).await
    }

    /// Copies `bytes` bytes of `buffer` from `offset` (a multiple of 4) back to the host.
    pub async fn read_back_range<T: bytemuck::Pod + Send>(
        &self,
        buffer: &wgpu::Buffer,
        offset: u64,
        bytes: u64,
    ) -> Result<Vec<T>> {
        let size = std::mem::size_of::<T>();
        let mut out = vec![T::zeroed(); bytes as usize / size];
        self.read_back_par(buffer, offset, &mut out, size, |bytes, out: &mut [T], _| {
            bytemuck::cast_slice_mut::<T, u8>(out).copy_from_slice(bytes);
            Ok::<(), std::convert::Infallible>(())
        })
        .await?
        .unwrap_or_else(|never| match never {});
        Ok(out)
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

    /// Reads `out.len()` elements of `elem_bytes` bytes each from `buffer` at `offset` (a
    /// multiple of 4): the GPU copies them into staging pieces of 8 MiB (pooled and reused
    /// across calls, see [`GpuContext::release_staging`]), and the host's
    /// threads hand each mapped piece to `read(bytes, elements, first_index)`, which fills
    /// the matching run of `out` (no intermediate copy). The first error `read` returns is
    /// returned.
    pub async fn read_back_par<T: Send, E: Send>(
        &self,
        buffer: &wgpu::Buffer,
        offset: u64,
        out: &mut [T],
        elem_bytes: usize,
        read: impl Fn(&[u8], &mut [T], usize) -> std::result::Result<(), E> + Sync,
    ) -> Result<std::result::Result<(), E>> {
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("readback"),
            });
        let pending = self.record_read_back(&mut enc, buffer, offset, out.len(), elem_bytes);
        let index = self.queue.submit([enc.finish()]);
        self.finish_read_back(pending, index, out, read).await
    }

    /// The first half of [`GpuContext::read_back_par`]: records into `enc` the copies of
    /// `len` elements of `elem_bytes` bytes from `offset` of `buffer` into staging memory, so
    /// that a download can ride in the same submission as the work that produces the data
    /// (behind nothing another thread queues meanwhile). Submit `enc`, then pass the
    /// submission's index to [`GpuContext::finish_read_back`].
    pub fn record_read_back(
        &self,
        enc: &mut wgpu::CommandEncoder,
        buffer: &wgpu::Buffer,
        offset: u64,
        len: usize,
        elem_bytes: usize,
    ) -> PendingReadback {
        let label = "readback";
        let bytes = (len * elem_bytes) as u64;
        // Pieces of the pool's size (a whole number of elements), each its own staging buffer:
        // pooled ones where a piece fills one, else fresh ones of the piece's size.
        let per = ((READBACK_PIECE as usize) / elem_bytes.max(1)).max(1);
        let piece = (per * elem_bytes) as u64;
        let mut stagings = Vec::new();
        let mut at = 0u64;
        while at < bytes {
            let len = piece.min(bytes - at);
            let size = len.next_multiple_of(4);
            let pooled = if size <= READBACK_PIECE && len >= READBACK_PIECE / 8 {
                let buf = self
                    .readback_pool
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .pop();
                Some(buf.unwrap_or_else(|| {
                    self.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("readback (pooled)"),
                        size: READBACK_PIECE,
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    })
                }))
            } else {
                None
            };
            let is_pooled = pooled.is_some();
            let staging = pooled.unwrap_or_else(|| {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            });
            enc.copy_buffer_to_buffer(buffer, offset + at, &staging, 0, size);
            stagings.push((staging, len as usize, is_pooled));
            at += len;
        }
        PendingReadback { stagings, per, len }
    }

    /// The second half of [`GpuContext::read_back_par`]: waits for submission `index` (which
    /// holds the copies `pending` recorded), maps the staging memory and hands it to `read` on
    /// the host's threads, as `read_back_par` does. `out` must have the recorded length.
    pub async fn finish_read_back<T: Send, E: Send>(
        &self,
        pending: PendingReadback,
        index: wgpu::SubmissionIndex,
        out: &mut [T],
        read: impl Fn(&[u8], &mut [T], usize) -> std::result::Result<(), E> + Sync,
    ) -> Result<std::result::Result<(), E>> {
        let label = "readback";
        let PendingReadback { stagings, per, len } = pending;
        if out.len() != len {
            return Err(GpuError::InvalidInput(format!(
                "a readback of {len} elements into {} places",
                out.len()
            )));
        }
        if stagings.is_empty() {
            return Ok(Ok(()));
        }
        let mut receivers = Vec::new();
        for (staging, _, _) in &stagings {
            let (tx, rx) = futures_channel::oneshot::channel();
            staging.map_async(wgpu::MapMode::Read, .., move |r| {
                let _ = tx.send(r);
            });
            receivers.push(rx);
        }
        let t_wait = Instant::now();
        self.wait_for(index)?;
        let waited = t_wait.elapsed().as_secs_f64();
        for rx in receivers {
            rx.await
                .map_err(|_| GpuError::Readback {
                    label: label.into(),
                    message: "map callback dropped".into(),
                })?
                .map_err(|e| GpuError::Readback {
                    label: label.into(),
                    message: e.to_string(),
                })?;
        }
        let mut views = Vec::with_capacity(stagings.len());
        for (staging, len, _) in &stagings {
            let view = staging
                .slice(..)
                .get_mapped_range()
                .map_err(|e| GpuError::Readback {
                    label: label.into(),
                    message: e.to_string(),
                })?;
            views.push((view, *len));
        }
        let t_read = Instant::now();
        let read_view =
            |(k, ((view, len), out)): (usize, (&(wgpu::BufferView, usize), &mut [T]))| {
                read(&view[..*len], out, k * per)
            };
        #[cfg(not(target_arch = "wasm32"))]
        let result = views
            .par_iter()
            .zip(out.par_chunks_mut(per))
            .enumerate()
            .try_for_each(read_view);
        #[cfg(target_arch = "wasm32")]
        let result = views
            .iter()
            .zip(out.chunks_mut(per))
            .enumerate()
            .try_for_each(read_view);
        drop(views);
        tracing::debug!(
            bytes = stagings.iter().map(|s| s.1).sum::<usize>(),
            pieces = stagings.len(),
            wait_ms = waited * 1e3,
            map_ms = (t_read - t_wait).as_secs_f64() * 1e3 - waited * 1e3,
            read_ms = t_read.elapsed().as_secs_f64() * 1e3,
            "readback"
        );
        let mut pool = self
            .readback_pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for (staging, _, is_pooled) in stagings {
            staging.unmap();
            if is_pooled && pool.len() < READBACK_POOL_MAX {
                pool.push(staging);
            }
        }
        Ok(result)
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
        let queries = self.has_timestamps().then(|| {
            let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some(label),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let resolve = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            (set, resolve)
        });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: queries.as_ref().map(|(set, _)| {
                    wgpu::ComputePassTimestampWrites {
                        query_set: set,
                        beginning_of_pass_write_index: Some(0),
                        end_of_pass_write_index: Some(1),
                    }
                }),
            });
            record(&mut pass);
        }
        if let Some((set, resolve)) = &queries {
            enc.resolve_query_set(set, 0..2, resolve, 0);
        }
        let start = Instant::now();
        self.queue.submit([enc.finish()]);
        self.wait()?;
        let wall = start.elapsed().as_secs_f64();
        match &queries {
            Some((_, resolve)) => {
                let ticks: Vec<u64> = self.read_back(resolve, 16).await?;
                let period = f64::from(self.queue.get_timestamp_period());
                let gpu = ticks[1].saturating_sub(ticks[0]) as f64 * period * 1e-9;
                // Some drivers report zeros; fall back to the wall time then.
                Ok(if gpu > 0.0 { gpu } else { wall })
            }
            None => Ok(wall),
        }
    }
}

/// A shader module with loop bounding off and bounds checks on.
#[allow(unsafe_code)]
fn trusted_module(
    device: &wgpu::Device,
    desc: wgpu::ShaderModuleDescriptor<'_>,
) -> wgpu::ShaderModule {
    // SAFETY: only modules built with `Checks::TrustedLoops` come here, and each such kernel
    // documents why every loop terminates (counters rising to uniform or constant bounds).
    // Bounds checks stay on, so no access can leave its binding.
    unsafe {
        device.create_shader_module_trusted(
            desc,
            wgpu::ShaderRuntimeChecks {
                bounds_checks: true,
                force_loop_bounding: false,
                ..Default::default()
            },
        )
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
    fn no_adapter_hint_says_how_to_get_one() {
        let h = no_adapter_hint(&ContextOptions::default(), &[]);
        assert!(h.contains("apt-get install -y mesa-vulkan-drivers"));
    }
}
