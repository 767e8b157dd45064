//! Elements and points as circom's and snarkjs' files write them, for any [`CircomCurve`]:
//! little-endian elements of [`crate::Curve::base_bytes`] or `scalar_bytes` bytes; the key's
//! points in Montgomery form, its matrix coefficients in Montgomery form twice over
//! (`x R^2`), witness values and JSON strings canonical.

use ark_ff::{BigInteger, PrimeField};
use num_bigint::BigUint;

use crate::curve::CircomCurve;

/// The integer of `F`'s limbs' worth of little-endian bytes (missing bytes zero).
pub(crate) fn bigint<F: PrimeField>(bytes: &[u8]) -> F::BigInt {
    let mut b = F::BigInt::default();
    for (l, c) in b.as_mut().iter_mut().zip(bytes.chunks(8)) {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        *l = u64::from_le_bytes(w);
    }
    b
}

/// The little-endian bytes of a canonical element.
pub(crate) fn le_bytes<F: PrimeField>(x: &F) -> Vec<u8> {
    x.into_bigint().to_bytes_le()
}

/// A canonical element (witness values, public signals, `.r1cs` values).
pub(crate) fn canonical<F: PrimeField>(bytes: &[u8]) -> Option<F> {
    F::from_bigint(bigint::<F>(bytes))
}

/// Bytes of a G1 point of `E` (`x`, `y`).
pub(crate) fn g1_bytes<E: CircomCurve>() -> usize {
    2 * E::CURVE.base_bytes()
}

/// Bytes of a G2 point of `E` (`x.c0`, `x.c1`, `y.c0`, `y.c1`).
pub(crate) fn g2_bytes<E: CircomCurve>() -> usize {
    4 * E::CURVE.base_bytes()
}

/// The `i`-th base field element of `bytes`, in Montgomery form.
fn coordinate<E: CircomCurve>(bytes: &[u8], i: usize) -> Option<E::BaseField> {
    let n8 = E::CURVE.base_bytes();
    E::base_from_montgomery(&bytes[i * n8..(i + 1) * n8])
}

/// A G1 point of a `.zkey`: `None` off the curve (or with a coordinate past the modulus).
/// `(0, 0)` is the identity. Subgroup membership is not checked for the query vectors (a
/// point outside it only makes the proof fail its check; BN254's G1 has none to be outside).
pub(crate) fn g1<E: CircomCurve>(bytes: &[u8]) -> Option<E::G1Affine> {
    E::g1(coordinate::<E>(bytes, 0)?, coordinate::<E>(bytes, 1)?)
}

/// A G2 point of a `.zkey`: `None` off the curve. Subgroup membership is not checked for
/// the query vectors.
pub(crate) fn g2<E: CircomCurve>(bytes: &[u8]) -> Option<E::G2Affine> {
    let f = |i| coordinate::<E>(bytes, i);
    E::g2([f(0)?, f(1)?], [f(2)?, f(3)?])
}

/// The decimal string of an element, as snarkjs' JSON writes it.
pub(crate) fn decimal<F: PrimeField>(x: &F) -> String {
    BigUint::from_bytes_le(&x.into_bigint().to_bytes_le()).to_string()
}

/// The element of a canonical decimal string (`None` past the modulus or not decimal).
pub(crate) fn from_decimal<F: PrimeField>(s: &str) -> Option<F> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let n = BigUint::parse_bytes(s.as_bytes(), 10)?;
    if n >= F::MODULUS.into() {
        return None;
    }
    Some(F::from(n))
}
