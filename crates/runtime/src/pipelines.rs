//! Pipelines: built once per context from composed modules (and wgpu's persistent cache),
//! with their creation times, and bind groups over them.

use crate::GpuContext;
use crate::error::{GpuError, Result};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, PoisonError};
use web_time::Instant;
use zkgpu_shaders::Composed;

/// Shader runtime checks for a module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Checks {
    /// wgpu's defaults: bounds checks and loop bounding.
    #[default]
    Default,
    /// Bounds checks kept, loop bounding off. NVIDIA runs loop-heavy kernels about 23 times
    /// faster without it (docs/gpu.md). Only for modules whose every loop provably
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
    /// Seconds of them spent making the shader module (wgpu's WGSL front end: naga parses
    /// and validates the text), zero where the module was made already for another entry
    /// point, and where another thread was making it (this one waited for it: counted in
    /// `seconds` only).
    pub module_seconds: f64,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PipelineKey {
    pub(crate) module: String,
    pub(crate) entry: String,
    pub(crate) checks: Checks,
    pub(crate) constants: Vec<(String, u64)>,
}

impl PipelineKey {
    fn new(module: &Composed, entry: &str, checks: Checks, constants: &[(&str, f64)]) -> Self {
        Self {
            module: module.name.clone(),
            entry: entry.to_owned(),
            checks,
            constants: constants
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.to_bits()))
                .collect(),
        }
    }
}

/// One pipeline of [`GpuContext::pipelines`]: the arguments of [`GpuContext::pipeline`].
#[derive(Clone, Copy, Debug)]
pub struct PipelineRequest<'a> {
    /// The composed module.
    pub module: &'a Composed,
    /// Its entry point.
    pub entry: &'a str,
    /// Runtime checks.
    pub checks: Checks,
    /// WGSL `override` values.
    pub constants: &'a [(&'a str, f64)],
}

/// A compiled compute pipeline and its first bind group layout.
#[derive(Debug)]
pub struct Pipeline {
    /// The pipeline.
    pub pipeline: wgpu::ComputePipeline,
    /// Layout of `@group(0)`.
    pub layout: wgpu::BindGroupLayout,
}

/// Shader modules of a context by name and checks, each made once under its own cell
/// ([`GpuContext::shader_module`]).
pub(crate) type Modules = HashMap<(String, Checks), Arc<OnceLock<wgpu::ShaderModule>>>;

/// A shader module with loop bounding off and bounds checks on.
#[allow(unsafe_code)]
pub(crate) fn trusted_module(
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

impl GpuContext {
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
        let key = PipelineKey::new(module, entry, checks, constants);
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
        let (shader, module_seconds) = self.shader_module(module, checks);
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
        tracing::debug!(
            module = %module.name,
            entry,
            ?checks,
            seconds,
            module_seconds,
            "created pipeline"
        );
        self.timings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(PipelineTiming {
                module: module.name.clone(),
                entry: entry.to_owned(),
                checks,
                seconds,
                module_seconds,
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

    /// The pipelines of `requests`, in order: [`GpuContext::pipeline`] for each, except that
    /// on native targets those not cached yet are compiled side by side, one thread each
    /// (a driver compiles one pipeline on one core, so the wait is the slowest pipeline's,
    /// not their sum: docs/log/2026-11.md, 2026-11-27), and those another thread is already
    /// compiling here (two engines of one context, such as the prover's G1 and G2 MSMs,
    /// share pipelines) are waited for, not compiled twice. In a browser they are built one
    /// after the other.
    pub async fn pipelines(&self, requests: &[PipelineRequest<'_>]) -> Result<Vec<Arc<Pipeline>>> {
        #[cfg(not(target_arch = "wasm32"))]
        {
            let missing: Vec<&PipelineRequest<'_>> =
                requests.iter().filter(|r| !self.is_cached(r)).collect();
            let (claim, others) = self.claim(&missing);
            if claim.requests.len() > 1 {
                std::thread::scope(|s| {
                    let built: Vec<_> = claim
                        .requests
                        .iter()
                        .map(|r| s.spawn(move || pollster::block_on(self.request(r))))
                        .collect();
                    built
                        .into_iter()
                        .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                        .try_for_each(|r| r.map(|_| ()))
                })?;
            } else if let Some(r) = claim.requests.first() {
                self.request(r).await?;
            }
            drop(claim);
            self.wait_for_builds(&others);
        }
        let mut out = Vec::with_capacity(requests.len());
        for r in requests {
            out.push(self.request(r).await?);
        }
        Ok(out)
    }

    /// Splits `missing` into the requests this thread claims to compile (returned with the
    /// claim, which releases them when dropped, built or not) and the keys another thread has
    /// claimed.
    #[cfg(not(target_arch = "wasm32"))]
    fn claim<'r, 'a>(
        &'a self,
        missing: &[&'r PipelineRequest<'r>],
    ) -> (Claim<'a, 'r>, Vec<PipelineKey>) {
        let mut building = self.building.lock().unwrap_or_else(PoisonError::into_inner);
        let mut claim = Claim {
            ctx: self,
            keys: Vec::new(),
            requests: Vec::new(),
        };
        let mut others = Vec::new();
        for &r in missing {
            let key = PipelineKey::new(r.module, r.entry, r.checks, r.constants);
            if building.insert(key.clone()) {
                claim.keys.push(key);
                claim.requests.push(r);
            } else {
                others.push(key);
            }
        }
        (claim, others)
    }

    /// Waits until no thread is compiling any of `keys` (then each is cached, or its build
    /// failed and the caller's own request builds it again and reports the error).
    #[cfg(not(target_arch = "wasm32"))]
    fn wait_for_builds(&self, keys: &[PipelineKey]) {
        let mut building = self.building.lock().unwrap_or_else(PoisonError::into_inner);
        while keys.iter().any(|k| building.contains(k)) {
            building = self
                .built
                .wait(building)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    async fn request(&self, r: &PipelineRequest<'_>) -> Result<Arc<Pipeline>> {
        self.pipeline(r.module, r.entry, r.checks, r.constants)
            .await
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn is_cached(&self, r: &PipelineRequest<'_>) -> bool {
        let key = PipelineKey::new(r.module, r.entry, r.checks, r.constants);
        self.pipelines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&key)
    }

    /// The pipeline cache to compile through, if any.
    pub(crate) fn cache(&self) -> Option<&wgpu::PipelineCache> {
        #[cfg(not(target_arch = "wasm32"))]
        return self.pipeline_cache.as_ref().map(|c| &c.cache);
        #[cfg(target_arch = "wasm32")]
        None
    }

    /// The shader module of `module` with `checks`, made on first use, and the seconds this
    /// call spent making it (zero when it was made already). Each module is made under its
    /// own once-cell, outside the context's map lock: pipelines compiled side by side
    /// ([`GpuContext::pipelines`]) parse their modules side by side too (a large module's
    /// WGSL front end takes tens of milliseconds), and two entry points of one module wait
    /// for one parse instead of doing two.
    pub(crate) fn shader_module(
        &self,
        module: &Composed,
        checks: Checks,
    ) -> (wgpu::ShaderModule, f64) {
        let cell = self
            .modules
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry((module.name.clone(), checks))
            .or_default()
            .clone();
        let mut made = 0.0;
        let m = cell.get_or_init(|| {
            let start = Instant::now();
            let desc = wgpu::ShaderModuleDescriptor {
                label: Some(&module.name),
                source: wgpu::ShaderSource::Wgsl(module.source().into()),
            };
            let m = match checks {
                Checks::Default => self.device.create_shader_module(desc),
                Checks::TrustedLoops => trusted_module(&self.device, desc),
            };
            made = start.elapsed().as_secs_f64();
            m
        });
        (m.clone(), made)
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
}

/// Pipelines one thread compiles for [`GpuContext::pipelines`]; dropping it (after the builds,
/// or on an error or a panic) releases their keys and wakes the threads waiting for them.
#[cfg(not(target_arch = "wasm32"))]
struct Claim<'a, 'r> {
    ctx: &'a GpuContext,
    keys: Vec<PipelineKey>,
    requests: Vec<&'r PipelineRequest<'r>>,
}

#[cfg(not(target_arch = "wasm32"))]
impl Drop for Claim<'_, '_> {
    fn drop(&mut self) {
        let mut building = self
            .ctx
            .building
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for k in &self.keys {
            building.remove(k);
        }
        self.ctx.built.notify_all();
    }
}

/// Records one compute pass: `pipeline` over `bind` (group 0) on a `grid` of workgroups,
/// with `timestamps` where given ([`crate::PassTimer::writes`]).
pub fn dispatch(
    enc: &mut wgpu::CommandEncoder,
    label: &str,
    pipeline: &Pipeline,
    bind: &wgpu::BindGroup,
    grid: (u32, u32),
    timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>,
) {
    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(label),
        timestamp_writes: timestamps,
    });
    pass.set_pipeline(&pipeline.pipeline);
    pass.set_bind_group(0, bind, &[]);
    pass.dispatch_workgroups(grid.0, grid.1, 1);
}
