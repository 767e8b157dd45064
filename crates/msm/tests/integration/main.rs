//! The integration tests of the MSM engine, in one test binary. Each module was a binary of
//! its own, and each linked wgpu and arkworks and compiled the engines again: the test
//! build was most of a CI run. `cargo test -p zkgpu-msm --test integration MODULE::` runs
//! one module.

mod ark_gpu;
mod contexts_gpu;
mod fuzz_msm_gpu;
mod msm_gpu;
mod multi_gpu;
mod rank_cap_gpu;
mod webgpu_limits;
