//! zkgpu's arithmetic kernels over a [`zkgpu_runtime::GpuContext`]: the elementwise field
//! kernels ([`field::FieldKernels`]) and the curve VM ([`curve::CurveVm`]), which runs a
//! group's formula programs on many points at once. The GPU side of the field and curve tests
//! and of the arithmetic benchmarks; the MSM runs the same VM inside its own kernels.

pub mod chain;
pub mod curve;
pub mod field;
