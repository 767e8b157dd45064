//! The integration tests of the runtime, in one test binary. Each module was a binary of
//! its own, and each linked wgpu and arkworks and compiled the engines again: the test
//! build was most of a CI run. `cargo test -p zkgpu-runtime --test integration MODULE::` runs
//! one module.

mod arith;
mod devices;
mod pipelines;
mod uploads;
