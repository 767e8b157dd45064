//! The five groups of zkgpu on the GPU: BLS12-381 and BLS12-377 G1 and G2, and
//! ed-on-bls12-377.
//!
//! Curve formulas are programs of a small register VM ([`vm`]), written once in
//! [`formulas`], checked on the CPU against ark-ec, and run on the GPU by one interpreter loop
//! with a single field-multiplication call site (`shaders/kernels/curve_vm.wgsl`). [`GpuCurve`]
//! maps an arkworks group to its shader module, its program and its register encoding, so
//! engines are generic over the groups. No wgpu here.

mod bases;
pub mod coords;
pub mod curve;
pub mod formulas;
mod registry;
mod te_map;
pub mod vm;

pub use bases::distinct_bases;
pub use coords::{TeExtended, Xyzz};
pub use curve::{
    Bls12_377G1, Bls12_377G2, Bls12_381G1, Bls12_381G2, Bn254G1, Bn254G2, Coord, EdOnBls12_377,
    GpuCurve, decode_projective, decode_projective_packed, encode_affine, encode_affine_packed,
    encode_projective, program_words,
};
pub use registry::{Group, OnGpu};
pub use te_map::{TeMap, te_add};
pub use vm::{Program, RunStats, VmError};
pub use zkgpu_shaders::Arith;
/// The registry's list of groups (`zkgpu_shaders::for_each_group!`): each variant of [`Group`] names
/// its [`GpuCurve`] type here.
pub use zkgpu_shaders::for_each_group;
