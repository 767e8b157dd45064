//! The integration tests of the kernels, in one test binary. Each module was a binary of
//! its own, and each linked wgpu and arkworks and compiled the engines again: the test
//! build was most of a CI run. `cargo test -p zkgpu-kernels --test integration MODULE::` runs
//! one module.

mod curve_gpu;
mod field_gpu;
