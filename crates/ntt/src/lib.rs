//! Number-theoretic transforms over the scalar fields of BLS12-381, BLS12-377 and BN254 on the
//! GPU,
//! equal bit for bit to ark-poly's `Radix2EvaluationDomain::{fft_in_place, ifft_in_place}`,
//! cosets included, plus the elementwise kernels of the Groth16 witness map.
//!
//! Elements travel in arkworks' own representation (the Montgomery words inside `Fp`, 8 `u32`
//! per element), so uploads and downloads are copies; the kernels unpack them into 13-bit
//! limbs and multiply by twiddles kept in the kernels' Montgomery form, which leaves products
//! in arkworks' form. A transform of `2^L` elements runs as `ceil(L / b)` radix-`2^k` passes in
//! workgroup memory (`b` = [`DEFAULT_MAX_PASS_BITS`] unless set) (the four-step decomposition, no bit-reversal pass); docs/ntt.md derives
//! it.
//!
//! Data that stays on the GPU between steps lives in a [`DeviceVec`]; [`GpuNtt::fft`] and
//! [`GpuNtt::ifft`] are the one-call host versions.
//!
//! # Example
//!
//! ```no_run
//! use ark_bls12_381::Fr;
//! use ark_poly::{EvaluationDomain, GeneralEvaluationDomain};
//! use zkgpu_ntt::GpuNtt;
//! use zkgpu_runtime::GpuContext;
//!
//! let ctx = GpuContext::from_env_blocking()?;
//! let ntt = GpuNtt::<Fr>::new(&ctx);
//! let domain = GeneralEvaluationDomain::<Fr>::new(1 << 16).expect("a radix-2 size");
//! let values: Vec<Fr> = (0..1u64 << 16).map(Fr::from).collect();
//! let mut on_gpu = values.clone();
//! ntt.fft(&domain, &mut on_gpu)?; // blocks; `fft_async` is the future
//! assert_eq!(on_gpu, domain.fft(&values));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod budget;
mod data;
mod domain;
mod engine;
mod host;
mod params;
mod plan;
mod pool;
mod twists;

use ark_ff::{FftField, PrimeField};
use zkgpu_limbs::PackedWords;
use zkgpu_runtime::GpuError;
use zkgpu_shaders::FieldModule;

pub use budget::buffer_plan;
pub use data::{DeviceVec, NttEncoder, PendingDownload};
pub use domain::Radix2Domain;
pub use engine::{Elementwise, GpuNtt, NttConfig, Prepared};

/// Errors of the NTT engine.
#[derive(Debug, thiserror::Error)]
pub enum NttError {
    /// The domain is larger than the kernels address (2^31 elements) or the field's
    /// two-adicity.
    #[error("domain of size 2^{log_n} is not supported: {reason}")]
    Size {
        /// log2 of the domain size.
        log_n: u32,
        /// Why.
        reason: String,
    },
    /// A mixed-radix domain (`GeneralEvaluationDomain::MixedRadix`): the kernels transform
    /// radix-2 domains only.
    #[error(
        "a mixed-radix domain of size {size}: the GPU transforms radix-2 domains only (sizes a power of two up to the field's two-adicity)"
    )]
    NotRadix2 {
        /// The domain's size.
        size: usize,
    },
    /// A device vector does not hold what the operation needs.
    #[error("{0}")]
    Shape(String),
    /// The GPU failed, or the data does not fit on it.
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// `Result` with [`NttError`].
pub type Result<T, E = NttError> = std::result::Result<T, E>;

/// A scalar field the NTT kernels support: 8-word packed elements.
pub trait NttField: FftField + PrimeField + PackedWords {
    /// The field's WGSL module.
    const MODULE: FieldModule;
}

/// Every pairing's scalar field is an [`NttField`] (the registry of
/// `zkgpu_shaders::Pairing`).
macro_rules! ntt_fields {
    (; $(($p:ident, $id:ident, $g1:ident, $g2:ident, $ark:path, $fr:path))*) => {$(
        impl NttField for $fr {
            const MODULE: FieldModule = zkgpu_shaders::Pairing::$p.scalar_field();
        }
    )*};
}

zkgpu_shaders::for_each_pairing!(ntt_fields);

/// Bytes per element on the GPU.
pub const ELEMENT_BYTES: u64 = 32;

/// Storage bindings a batch may be paged across (the kernels declare this many per operand).
pub const MAX_PAGES: usize = 3;

/// Which way a transform goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Coefficients to evaluations (`fft_in_place`).
    Forward,
    /// Evaluations to coefficients (`ifft_in_place`).
    Inverse,
}

/// The default largest pass (bits): chosen by measurement, see docs/log/2026-11.md.
pub const DEFAULT_MAX_PASS_BITS: u32 = 8;

pub use plan::DEFAULT_MAX_TWIST_LOG;

/// `x` in the kernels' Montgomery form, as an arkworks element: `x 2^(13 n - 64 N)`, whose
/// internal words are `x 2^(13 n) mod p`. A kernel multiplication of arkworks' words by these
/// words yields arkworks' words of the product.
pub fn kernel_form<F: NttField>(x: F) -> F {
    let shift = 13 * u64::from(F::MODULE.words()) - 32 * F::PACKED_WORDS as u64;
    x * F::from(2u64).pow([shift])
}
