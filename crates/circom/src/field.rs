//! BN254 elements and points as circom's and snarkjs' files write them: 32 little-endian
//! bytes per element; the key's points in Montgomery form, its matrix coefficients in
//! Montgomery form twice over (`x R^2`), witness values and JSON strings canonical.

use ark_bn254::{Fq, Fq2, Fr, G1Affine, G2Affine};
use ark_ec::AffineRepr;
use ark_ff::{BigInteger, BigInteger256, PrimeField, Zero};
use num_bigint::BigUint;

use crate::binfile::Reader;
use crate::error::CircomError;

/// Bytes of one element of either BN254 field.
pub(crate) const N8: usize = 32;
/// Bytes of a G1 point (`x`, `y`).
pub(crate) const G1_BYTES: usize = 2 * N8;
/// Bytes of a G2 point (`x.c0`, `x.c1`, `y.c0`, `y.c1`).
pub(crate) const G2_BYTES: usize = 4 * N8;

/// The integer of 32 little-endian bytes.
pub(crate) fn bigint(bytes: &[u8]) -> BigInteger256 {
    let mut limbs = [0u64; 4];
    for (l, c) in limbs.iter_mut().zip(bytes.chunks_exact(8)) {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        *l = u64::from_le_bytes(w);
    }
    BigInteger256::new(limbs)
}

/// The 32 little-endian bytes of a canonical element.
pub(crate) fn le_bytes<F: PrimeField<BigInt = BigInteger256>>(x: &F) -> [u8; N8] {
    let mut out = [0u8; N8];
    for (o, l) in out.chunks_exact_mut(8).zip(x.into_bigint().0) {
        o.copy_from_slice(&l.to_le_bytes());
    }
    out
}

/// The `Fq` element whose Montgomery form is `bytes` (`None` at or past the modulus).
fn montgomery(bytes: &[u8]) -> Option<Fq> {
    let b = bigint(bytes);
    (b < Fq::MODULUS).then(|| Fq::new_unchecked(b))
}

/// A canonical element (witness values, public signals).
pub(crate) fn canonical<F: PrimeField<BigInt = BigInteger256>>(bytes: &[u8]) -> Option<F> {
    F::from_bigint(bigint(bytes))
}

/// Reads a header's field (its byte size, then its prime) and checks it is BN254's `F`; else
/// [`CircomError::Unsupported`] for `file`, saying `what(byte size)`.
pub(crate) fn check_field<F: PrimeField<BigInt = BigInteger256>>(
    r: &mut Reader<'_>,
    file: &'static str,
    what: impl FnOnce(usize) -> String,
) -> Result<(), CircomError> {
    let n8 = r.usize()?;
    let prime = r.take(n8)?;
    if n8 != N8 || bigint(prime) != F::MODULUS {
        return Err(CircomError::Unsupported {
            file,
            what: what(n8),
        });
    }
    Ok(())
}

/// A matrix coefficient of a `.zkey`, stored as `x R^2 mod r`.
pub(crate) fn zkey_coefficient(bytes: &[u8]) -> Option<Fr> {
    let b = bigint(bytes);
    // `x R^-1` twice: read as a Montgomery form, then its canonical value read as one again.
    (b < Fr::MODULUS).then(|| Fr::new_unchecked(Fr::new_unchecked(b).into_bigint()))
}

/// A G1 point of a `.zkey`: `None` off the curve (or with a coordinate past the modulus).
/// `(0, 0)` is the identity.
pub(crate) fn g1(bytes: &[u8]) -> Option<G1Affine> {
    let x = montgomery(&bytes[..N8])?;
    let y = montgomery(&bytes[N8..G1_BYTES])?;
    if x.is_zero() && y.is_zero() {
        return Some(G1Affine::zero());
    }
    // G1 of BN254 has cofactor one: on the curve is in the group.
    let p = G1Affine::new_unchecked(x, y);
    p.is_on_curve().then_some(p)
}

/// A G2 point of a `.zkey`: `None` off the curve. Subgroup membership is not checked for
/// the query vectors (a point outside it only makes the proof fail its check).
pub(crate) fn g2(bytes: &[u8]) -> Option<G2Affine> {
    let f = |i: usize| montgomery(&bytes[i * N8..(i + 1) * N8]);
    let (x, y) = (Fq2::new(f(0)?, f(1)?), Fq2::new(f(2)?, f(3)?));
    if x.is_zero() && y.is_zero() {
        return Some(G2Affine::zero());
    }
    let p = G2Affine::new_unchecked(x, y);
    p.is_on_curve().then_some(p)
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
