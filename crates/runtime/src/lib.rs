//! The GPU runtime of zkgpu: one [`GpuContext`] (adapter selection, device, pipeline cache,
//! buffers, readback, timing), typed errors, and the elementwise field kernels.
//!
//! Async at its core so the same code runs on `wasm32` (WebGPU); `*_blocking` wrappers serve
//! native callers. This is the lowest crate that imports wgpu.

mod context;
pub mod curve;
mod error;
pub mod field;
#[cfg(not(target_arch = "wasm32"))]
mod pipeline_cache;

pub use context::{
    Checks, ContextId, ContextOptions, GpuContext, LimitsChoice, PendingReadback, Pipeline,
    PipelineTiming, grid,
};
pub use error::{GpuError, Result};
pub use wgpu;
