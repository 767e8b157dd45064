//! The fixtures made by `scripts/circom.sh fixtures` (circom2, snarkjs): two circuits, their
//! snarkjs keys, verification keys and witnesses.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::PathBuf;

/// The bytes of fixture `name`.
pub fn fixture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
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

/// The circuits: (name, signals, public signals, constraints).
pub const CIRCUITS: [(&str, usize, usize, usize); 2] =
    [("multiplier", 11, 1, 8), ("merkle", 2086, 2, 2080)];
