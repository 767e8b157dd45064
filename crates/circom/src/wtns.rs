//! The `.wtns` witness of circom and snarkjs: section 1 holds the field's byte size, its
//! prime and the witness count; section 2 the values, canonical, little-endian.

use ark_ff::{BigInteger, PrimeField};

use crate::binfile::BinFile;
use crate::curve::check_field;
use crate::error::CircomError;
use crate::field::{canonical, le_bytes};

pub(crate) const FILE: &str = ".wtns";

/// Reads a `.wtns` over the scalar field `F` (BN254's or BLS12-381's): every signal's value,
/// the constant one first. Another field, a truncated file or a value past the modulus is a
/// [`CircomError`] ([`crate::wtns_curve`] tells which curve a witness is over).
pub fn read_wtns<F: PrimeField>(bytes: &[u8]) -> Result<Vec<F>, CircomError> {
    let file = BinFile::parse(bytes, b"wtns", &[2], FILE)?;
    let mut h = file.section(1)?;
    check_field::<F>(&mut h, FILE, "a witness over the scalar field")?;
    let count = h.usize()?;
    let n8 = crate::curve::n8::<F>();
    let data = file.section(2)?.rest_exactly(count, n8)?;
    values_of::<F>(data, n8)
}

/// The values of section 2's `data` (`n8` bytes each, canonical, little-endian), the first
/// one past the modulus an error.
fn values_of<F: PrimeField>(data: &[u8], n8: usize) -> Result<Vec<F>, CircomError> {
    let past =
        |i: usize| CircomError::format(FILE, format!("value {i} is past the field's modulus"));
    // In parallel, each value written in place by the thread that converts it (an indexed
    // collect: collecting fallible items instead would gather pieces and copy them once
    // more, a million values at 2^20 constraints); a value past the modulus is then looked
    // for from the start, so that the error names the first one.
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        use std::sync::atomic::{AtomicBool, Ordering};
        let bad = AtomicBool::new(false);
        let out: Vec<F> = data
            .par_chunks_exact(n8)
            .map(|v| {
                canonical::<F>(v).unwrap_or_else(|| {
                    bad.store(true, Ordering::Relaxed);
                    F::zero()
                })
            })
            .collect();
        if !bad.into_inner() {
            return Ok(out);
        }
    }
    data.chunks_exact(n8)
        .enumerate()
        .map(|(i, v)| canonical::<F>(v).ok_or_else(|| past(i)))
        .collect()
}

/// The `.wtns` bytes of `values` (the file snarkjs writes for them).
pub fn write_wtns<F: PrimeField>(values: &[F]) -> Vec<u8> {
    let n8 = crate::curve::n8::<F>();
    let mut out = Vec::with_capacity(48 + n8 * (values.len() + 1));
    out.extend_from_slice(b"wtns");
    for word in [2u32, 2, 1] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.extend_from_slice(&(4 + n8 as u64 + 4).to_le_bytes());
    out.extend_from_slice(&(n8 as u32).to_le_bytes());
    out.extend_from_slice(&F::MODULUS.to_bytes_le());
    out.extend_from_slice(&(values.len() as u32).to_le_bytes());
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&((values.len() * n8) as u64).to_le_bytes());
    for v in values {
        out.extend_from_slice(&le_bytes(v));
    }
    out
}
