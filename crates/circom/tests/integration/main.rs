//! The integration tests of the circom readers and prover, in one test binary. Each module was a binary of
//! its own, and each linked wgpu and arkworks and compiled the engines again: the test
//! build was most of a CI run. `cargo test -p zkgpu-circom --test integration MODULE::` runs
//! one module.

mod common;
mod prove_gpu;
mod readers;
mod setup;
