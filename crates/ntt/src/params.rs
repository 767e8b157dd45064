//! The Rust side of the NTT kernels' contract: tile and workgroup sizes, and the uniform
//! structs shaders/kernels/ntt.wgsl and ntt_elementwise.wgsl read.

pub(crate) use zkgpu_shaders::contract::ntt::NttParams as PassParams;
pub(crate) use zkgpu_shaders::contract::ntt_elementwise::EwParams;

/// Elements per workgroup tile of a pass.
pub(crate) const TILE: u64 = zkgpu_shaders::contract::ntt::NTT_TILE as u64;

pub(crate) use zkgpu_shaders::contract::ntt_elementwise::EW_WG;
