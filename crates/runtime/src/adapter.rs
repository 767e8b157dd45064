//! Choosing an adapter: the list wgpu sees, the preference by type, and the hint when
//! there is none.

use crate::context::{ContextOptions, GpuContext};
use crate::error::{GpuError, Result};

/// Orders adapter types by preference: discrete first, software last.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn type_rank(t: wgpu::DeviceType) -> u8 {
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

    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) async fn pick_adapter(
        instance: &wgpu::Instance,
        opts: &ContextOptions,
    ) -> Result<wgpu::Adapter> {
        let mut all = instance.enumerate_adapters(opts.backends).await;
        let seen: Vec<wgpu::AdapterInfo> = all.iter().map(wgpu::Adapter::get_info).collect();
        if let Some(i) = opts.adapter_index {
            if i >= all.len() {
                return Err(GpuError::NoAdapter {
                    hint: format!(
                        "no adapter {i}: {} adapter(s) on backends {:?} (`zkgpu info` lists them)",
                        all.len(),
                        opts.backends
                    ),
                });
            }
            return Ok(all.swap_remove(i));
        }
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
    pub(crate) async fn pick_adapter(
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
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn no_adapter_hint_says_how_to_get_one() {
        let h = no_adapter_hint(&ContextOptions::default(), &[]);
        assert!(h.contains("apt-get install -y mesa-vulkan-drivers"));
    }
}
