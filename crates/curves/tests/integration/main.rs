//! The integration tests of the curves, in one test binary. Each module was a binary of
//! its own, and each linked wgpu and arkworks and compiled the engines again: the test
//! build was most of a CI run. `cargo test -p zkgpu-curves --test integration MODULE::` runs
//! one module.

mod formulas;
mod host_sums;
