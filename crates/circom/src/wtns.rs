//! The `.wtns` witness of circom and snarkjs: section 1 holds the field's byte size, its
//! prime and the witness count; section 2 the values, canonical, little-endian.

use ark_bn254::Fr;
use ark_ff::PrimeField;

use crate::binfile::BinFile;
use crate::error::CircomError;
use crate::field::{N8, canonical, check_field, le_bytes};

const FILE: &str = ".wtns";

/// Reads a `.wtns` of BN254's scalar field: every signal's value, the constant one first.
/// Another field, a truncated file or a value past the modulus is a [`CircomError`].
pub fn read_wtns(bytes: &[u8]) -> Result<Vec<Fr>, CircomError> {
    let file = BinFile::parse(bytes, b"wtns", &[2], FILE)?;
    let mut h = file.section(1)?;
    check_field::<Fr>(&mut h, FILE, |n8| {
        format!("a witness over another field (a {n8}-byte prime, not BN254's scalar field)")
    })?;
    let count = h.usize()?;
    let data = file.section(2)?.rest_exactly(count, N8)?;
    let one = |(i, v): (usize, &[u8])| {
        canonical::<Fr>(v).ok_or_else(|| {
            CircomError::format(FILE, format!("value {i} is past the field's modulus"))
        })
    };
    // In parallel: a 2^20-constraint circuit's witness is a million values.
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        data.par_chunks_exact(N8).enumerate().map(one).collect()
    }
    #[cfg(target_arch = "wasm32")]
    data.chunks_exact(N8).enumerate().map(one).collect()
}

/// The `.wtns` bytes of `values` (the file snarkjs writes for them).
pub fn write_wtns(values: &[Fr]) -> Vec<u8> {
    let mut out = Vec::with_capacity(48 + N8 * (values.len() + 1));
    out.extend_from_slice(b"wtns");
    for word in [2u32, 2, 1] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.extend_from_slice(&(4 + N8 as u64 + 4).to_le_bytes());
    out.extend_from_slice(&(N8 as u32).to_le_bytes());
    for limb in Fr::MODULUS.0 {
        out.extend_from_slice(&limb.to_le_bytes());
    }
    out.extend_from_slice(&(values.len() as u32).to_le_bytes());
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&((values.len() * N8) as u64).to_le_bytes());
    for v in values {
        out.extend_from_slice(&le_bytes(v));
    }
    out
}
