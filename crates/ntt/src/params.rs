//! The Rust side of the NTT kernels' contract: the elementwise kernel's workgroup size and the
//! uniform structs shaders/kernels/ntt.wgsl and ntt_elementwise.wgsl read (the pass's tile
//! comes with its module: `zkgpu_shaders::NttTile`).

pub(crate) use zkgpu_shaders::contract::ntt::NttParams as PassParams;
pub(crate) use zkgpu_shaders::contract::ntt_elementwise::EwParams;

pub(crate) use zkgpu_shaders::contract::ntt_elementwise::EW_WG;
