//! Montgomery field arithmetic for zkgpu: the 13-bit limb layout of a prime field
//! ([`FieldParams`]), the generator of its unrolled WGSL ([`wgsl`]), a CPU emulator that runs
//! the generated algorithm itself with `u32` overflow checks ([`Emulator`]), the 64-bit
//! arithmetics beside it ([`wide`], [`Arith`]: the same Montgomery form on a GPU's `u64` or
//! `f64` pipes, with their own emulator), and host encode/decode between arkworks field
//! elements and limbs ([`encode`](mod@encode)).
//!
//! Nothing here depends on wgpu. `docs/limbs.md` derives the layout and the bounds.
//!
//! # Example
//!
//! ```
//! use ark_bls12_381::Fq;
//! use zkgpu_limbs::{decode_slice, encode_slice};
//!
//! let xs = vec![Fq::from(3u64), -Fq::from(1u64)];
//! let limbs = encode_slice(&xs); // the GPU's 13-bit Montgomery limbs
//! assert_eq!(decode_slice::<Fq>(&limbs).unwrap(), xs);
//! ```

pub mod encode;
pub mod field;
pub mod fields;
mod karatsuba;
mod mul;
pub mod params;
pub mod program;
mod steps;
pub mod wgsl;
pub mod wide;

pub use encode::{
    DecodeError, LimbEncode, PackedWords, RawMontgomery, decode, decode_slice, encode, encode_into,
    encode_slice, filled_par, pack_limb_slice, pack_limbs, pack_slice, packed_limb_words,
    unpack_into, unpack_limb_slice, unpack_limbs, unpack_slice,
};
pub use fields::{Emulator, Fq2Emulator, KnownField, KnownFq2};
pub use params::{FieldParams, LIMB_BITS, LIMB_MASK};
pub use program::{Overflow, Program};
pub use wide::{Arith, Chains, WideEmulator, WideLayout, native_words};

/// Errors of this crate.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LimbError {
    /// The modulus does not fit the 13-bit lazy-carry layout.
    #[error("unsupported modulus: {0}")]
    BadModulus(String),
}
