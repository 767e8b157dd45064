//! Buffers with the device's limits checked: storage (filled or zeroed, out of memory caught
//! as a typed error), uniform and indirect-dispatch buffers.

use crate::GpuContext;
use crate::error::{GpuError, Result};

impl GpuContext {
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
    pub(crate) fn zeroed(
        &self,
        label: &str,
        bytes: u64,
        extra: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer> {
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
}
