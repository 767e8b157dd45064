//! wgpu's pipeline cache persisted in a directory (Vulkan; other backends have none, and a
//! driver's own shader cache may already serve them).
//!
//! The file is named by `wgpu::util::pipeline_cache_key` (vendor and device): data from
//! another device or driver version is ignored by wgpu and the driver. wgpu checks the data's
//! header but not its bytes, so the file also holds a blake3 digest of them: a damaged file
//! is ignored, never handed to the driver.

use std::path::{Path, PathBuf};

/// A pipeline cache and the file it is kept in.
#[derive(Debug)]
pub(crate) struct PersistentCache {
    pub(crate) cache: wgpu::PipelineCache,
    path: PathBuf,
}

impl PersistentCache {
    /// The cache of `dir` for this adapter (empty if there is no file yet), or None where the
    /// backend keeps no pipeline cache or the device lacks the feature.
    pub(crate) fn open(
        device: &wgpu::Device,
        info: &wgpu::AdapterInfo,
        dir: &Path,
    ) -> Option<Self> {
        if !device.features().contains(wgpu::Features::PIPELINE_CACHE) {
            return None;
        }
        let path = dir.join(wgpu::util::pipeline_cache_key(info)?);
        let data = read(&path);
        let cache = create(device, data.as_deref());
        tracing::debug!(path = %path.display(), bytes = data.map_or(0, |d| d.len()), "pipeline cache");
        Some(Self { cache, path })
    }

    /// Writes the cache's data to its file (a temporary file renamed over it).
    pub(crate) fn save(&self) -> std::io::Result<Option<PathBuf>> {
        let Some(data) = self.cache.get_data() else {
            return Ok(None);
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = self
            .path
            .with_extension(format!("tmp{}", std::process::id()));
        let mut file = blake3::hash(&data).as_bytes().to_vec();
        file.extend_from_slice(&data);
        std::fs::write(&tmp, &file)?;
        std::fs::rename(&tmp, &self.path)?;
        Ok(Some(self.path.clone()))
    }
}

/// The data of the file at `path`, if it is there and matches its digest.
fn read(path: &Path) -> Option<Vec<u8>> {
    let file = std::fs::read(path).ok()?;
    let (digest, data) = file.split_at_checked(32)?;
    if blake3::hash(data).as_bytes() != digest {
        tracing::warn!(path = %path.display(), "pipeline cache damaged: ignored");
        return None;
    }
    Some(data.to_vec())
}

/// A pipeline cache from `data` (or empty).
#[allow(unsafe_code)]
fn create(device: &wgpu::Device, data: Option<&[u8]>) -> wgpu::PipelineCache {
    // SAFETY: wgpu requires `data` to come from `PipelineCache::get_data` of an adapter with
    // the same `pipeline_cache_key`. The file is named by that key and written only by
    // `save` from `get_data`; wgpu checks its header (adapter, driver, wgpu's own format) and
    // with `fallback: true` starts an empty cache from data it cannot use.
    unsafe {
        device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
            label: Some("zkgpu pipeline cache"),
            data,
            fallback: true,
        })
    }
}
