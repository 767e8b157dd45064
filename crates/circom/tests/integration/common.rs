//! The fixtures made by `scripts/circom.sh fixtures` (circom2, snarkjs): two circuits over
//! each curve (BN254's files `<name>.*`, BLS12-381's `<name>_bls12381.*`), their snarkjs keys,
//! verification keys and witnesses.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::PathBuf;

use zkgpu_circom::{CircomCurve, Curve};

/// The bytes of fixture `name`.
pub fn fixture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The name of circuit `circuit`'s fixture `ext` over `E` (`merkle` and `.zkey`:
/// `merkle.zkey`, `merkle_bls12381.zkey`; `_vkey.json` likewise).
pub fn file<E: CircomCurve>(circuit: &str, ext: &str) -> String {
    let sfx = match E::CURVE {
        Curve::Bn254 => "",
        Curve::Bls12_381 => "_bls12381",
    };
    format!("{circuit}{sfx}{ext}")
}

/// The bytes of circuit `circuit`'s fixture `ext` over `E`.
pub fn fixture_of<E: CircomCurve>(circuit: &str, ext: &str) -> Vec<u8> {
    fixture(&file::<E>(circuit, ext))
}

/// The text of fixture `name`.
pub fn text(name: &str) -> String {
    String::from_utf8(fixture(name)).unwrap()
}

/// Copies `bytes` with `with` written at `at`.
pub fn patched(bytes: &[u8], at: usize, with: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + with.len()].copy_from_slice(with);
    b
}

/// Where section `kind` of a circom binary file starts (its data, past type and length).
pub fn section_at(bytes: &[u8], kind: u32) -> usize {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let count = word(8);
    let mut at = 12;
    for _ in 0..count {
        let len = u64::from_le_bytes(bytes[at + 4..at + 12].try_into().unwrap()) as usize;
        if word(at) == kind {
            return at + 12;
        }
        at += 12 + len;
    }
    panic!("no section {kind}");
}

/// The circuits (the same over both curves): (name, signals, public signals, constraints).
pub const CIRCUITS: [(&str, usize, usize, usize); 2] =
    [("multiplier", 11, 1, 8), ("merkle", 2086, 2, 2080)];
