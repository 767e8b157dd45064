//! The integration tests of the NTT engine, in one test binary. Each module was a binary of
//! its own, and each linked wgpu and arkworks and compiled the engines again: the test
//! build was most of a CI run. `cargo test -p zkgpu-ntt --test integration MODULE::` runs
//! one module.

mod contexts_gpu;
mod domain_gpu;
mod fuzz_ntt_gpu;
mod kept_buffers_gpu;
mod ntt_gpu;
mod webgpu_limits;
