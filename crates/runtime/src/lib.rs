//! The GPU runtime of zkgpu: one [`GpuContext`] per device (adapter selection, device,
//! pipeline cache, buffers, uploads and readback, [`PassTimer`] for timestamped passes),
//! natively a `DeviceSet` of every device of a host, and typed errors:
//! plumbing only; the engines (`zkgpu-kernels`, `zkgpu-msm`, `zkgpu-ntt`) stand above it.
//!
//! Async at its core so the same code runs on `wasm32` (WebGPU); native callers wait
//! with [`BlockOn::block_on`]. This is the lowest crate that imports wgpu.
//!
//! # Example
//!
//! ```no_run
//! use zkgpu_runtime::GpuContext;
//!
//! // The adapter from ZKGPU_ADAPTER / ZKGPU_BACKEND / ZKGPU_ARITH, else the best one found.
//! let ctx = GpuContext::from_env_blocking()?;
//! println!("{} ({:?}), arithmetic {:?}", ctx.info().name, ctx.info().backend, ctx.arith());
//! # Ok::<(), zkgpu_runtime::GpuError>(())
//! ```

mod adapter;
mod arith;
#[cfg(not(target_arch = "wasm32"))]
mod block;
mod buffers;
mod context;
#[cfg(not(target_arch = "wasm32"))]
mod devices;
mod error;
#[cfg(not(target_arch = "wasm32"))]
mod pipeline_cache;
mod pipelines;
mod readback;
mod timer;
mod upload;

pub use arith::{ArithChoice, ArithReport, arith_features, known_answer_vectors};
#[cfg(not(target_arch = "wasm32"))]
pub use block::BlockOn;
pub use context::{ContextId, ContextOptions, GpuContext, LimitsChoice, grid};
#[cfg(not(target_arch = "wasm32"))]
pub use devices::{DeviceChoice, DeviceSet};
pub use error::{GpuError, Result};
pub use pipelines::{Checks, Pipeline, PipelineRequest, PipelineTiming, dispatch};
pub use readback::PendingReadback;
pub use timer::PassTimer;
pub use wgpu;
pub use zkgpu_shaders::Arith;
