//! The integration tests of the Groth16 prover, in one test binary. Each module was a binary of
//! its own, and each linked wgpu and arkworks and compiled the engines again: the test
//! build was most of a CI run. `cargo test -p zkgpu-groth16 --test integration MODULE::` runs
//! one module.

mod async_gpu;
mod buffer_plans;
mod cache_gpu;
mod circuits_gpu;
mod common;
mod contexts_gpu;
mod faults_gpu;
mod multi_gpu;
mod prover_gpu;
mod reduction_gpu;
mod stream_gpu;
