//! Multi-scalar multiplication on the GPU for the arkworks groups of [`zkgpu_curves`].
//!
//! Pippenger's bucket method with signed `c`-bit window digits, all on the GPU but the last
//! few hundred sums: digit decomposition with a bucket-size histogram, per-window prefix sums
//! and a scatter that sort point indices into buckets (a counting sort), accumulation of
//! bucket chunks with the group's mixed addition on the curve VM, chunk sums, and the weighted
//! bucket reduction in segments summed by tree levels; the host decodes what is left and
//! combines the windows (Horner). docs/msm.md describes the pipeline.
//!
//! One way to ask: [`GpuMsm::prepare`] bases once, then [`GpuMsm::run`] an [`MsmRequest`]
//! (scalars plain or prepared, a config, timings when asked). [`GpuMsm::msm`] and
//! [`GpuMsm::msm_unchecked`] are arkworks' `VariableBaseMSM` helpers over it: `msm` errors
//! when the lengths differ, `msm_unchecked` uses the shorter length, empty input gives the
//! identity. On arkworks' own types, [`GpuVariableBaseMsm`] is the same call:
//! `G1Projective::msm_gpu(&ctx, &bases, &scalars)`. Every entry point that waits for the GPU
//! has a blocking form (native) and an `_async` form (the future, for the browser).
//!
//! The modules follow one MSM: [`config`](MsmConfig) (defaults from the size), `bases`
//! (preparing, folding), `scalars`, `shape` (what follows from size and config), `scratch`
//! (working buffers and uniforms), `params` (the uniforms' Rust side), `record` (pipelines,
//! bind groups, passes), `engine` (plan -> record -> submit -> finish), `combine` (the host's
//! part), `stored` (prepared bases to and from disk), and natively `multi` ([`MultiMsm`]:
//! one MSM split across the devices of a `zkgpu_runtime::DeviceSet`).
//!
//! # Example
//!
//! ```no_run
//! use ark_bn254::{Fr, G1Affine, G1Projective};
//! use ark_ec::{CurveGroup, PrimeGroup, VariableBaseMSM};
//! use zkgpu_msm::GpuVariableBaseMsm;
//! use zkgpu_runtime::GpuContext;
//!
//! let ctx = GpuContext::from_env_blocking()?;
//! let g = G1Projective::generator();
//! let bases: Vec<G1Affine> = (1..=1000u64).map(|k| (g * Fr::from(k)).into_affine()).collect();
//! let scalars: Vec<Fr> = (0..1000u64).map(|k| Fr::from(k * k + 7)).collect();
//! let sum = G1Projective::msm_gpu(&ctx, &bases, &scalars)?; // blocks; `msm_gpu_async` is the future
//! assert_eq!(sum, G1Projective::msm(&bases, &scalars).unwrap());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod ark;
mod bases;
mod budget;
mod combine;
mod config;
mod digits;
mod engine;
#[cfg(not(target_arch = "wasm32"))]
mod multi;
mod params;
mod plan;
mod planner;
mod record;
mod request;
mod scalars;
mod scratch;
mod shape;
mod split;
mod stored;
#[cfg(test)]
mod tests;
mod timings;

use zkgpu_runtime::GpuError;

pub use ark::GpuVariableBaseMsm;
pub use bases::{Fold, MAX_FOLDS, PreparedBases};
pub use budget::buffer_plan;
pub use config::{
    DEFAULT_CHUNK_GROUP, DEFAULT_TREE_GROUP, MAX_CHUNK, MAX_DEFAULT_CHUNK,
    MAX_FOLDED_DEFAULT_WINDOW, MAX_WINDOW_BITS, MsmConfig, SCRATCH_POOL, WIDE_UNFOLDED_MIN,
    default_chunk, default_folded_window_bits, default_large_chunk, default_reduce_segments,
    default_unfolded_window_bits, default_window_bits,
};
pub use digits::{signed_digits, window_count};
pub use engine::GpuMsm;
#[cfg(not(target_arch = "wasm32"))]
pub use multi::{MultiMsm, MultiOutput, SplitBases};
pub use plan::{Candidate, CostModel, Layout, MsmPlan, PLAN_MARGIN};
pub use request::{MsmOutput, MsmRequest, MsmScalars};
pub use scalars::{PreparedScalars, ScalarSlice};
pub use stored::{BasesLayout, StoredFold};
pub use timings::{MsmTimings, PassTiming};

/// Errors of an MSM.
#[derive(Debug, thiserror::Error)]
pub enum MsmError {
    /// `msm` was given different numbers of bases and scalars.
    #[error("{bases} bases but {scalars} scalars (msm_unchecked uses the shorter length)")]
    LengthMismatch {
        /// Bases given.
        bases: usize,
        /// Scalars given.
        scalars: usize,
    },
    /// A configuration value is out of range.
    #[error("invalid MSM configuration: {0}")]
    Config(String),
    /// A scalar is wider than `MsmConfig::scalar_bits` promised.
    #[error("scalar {index} has {bits} bits, more than the configured scalar_bits {limit}")]
    ScalarTooWide {
        /// Index of a scalar that is too wide (the first one found, not necessarily the
        /// lowest index).
        index: usize,
        /// Its bit length.
        bits: u32,
        /// The configured bound.
        limit: u32,
    },
    /// BLS12-377 G1 runs on the GPU in a twisted Edwards form whose formulas divide by zero
    /// for some points outside the prime-order subgroup (which arkworks' checked constructors
    /// never make; crates/curves/src/te_map.rs), and these bases met such a case: the GPU's
    /// sum is not to be trusted. [`GpuMsm::msm`] then sums on the host with arkworks; requests
    /// on prepared bases return this error.
    #[error(
        "the bases include points outside the prime-order subgroup that BLS12-377 G1's twisted \
         Edwards form cannot add; sum them with arkworks"
    )]
    ExceptionalBases,
    /// The GPU failed, or the input does not fit on it.
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// `Result` with [`MsmError`].
pub type Result<T, E = MsmError> = std::result::Result<T, E>;
