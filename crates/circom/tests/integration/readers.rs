//! The `.zkey`, `.wtns` and JSON readers against the files snarkjs made: counts, the
//! verifying key of both formats, the CPU prover's proofs verified, and every damaged or
//! foreign file refused with its error (no panic).

#![allow(clippy::unwrap_used)]

use crate::common;

use ark_bls12_381::Bls12_381;
use ark_bn254::{Bn254, Fr};
use ark_ff::{One, UniformRand};
use ark_groth16::Groth16;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use common::{CIRCUITS, file, fixture, fixture_of, patched, section_at, text};
use zkgpu_circom::{
    CircomCurve, CircomError, Curve, proof_json, public_json, r1cs_curve, read_proof_json,
    read_public_json, read_verifying_key_json, read_wtns, read_zkey, read_zkey_file,
    reference_proof, verify, write_wtns, wtns_curve, zkey_curve, zkey_file_curve, zkey_file_hash,
    zkey_hash,
};

/// `bytes` written to a file of this test process's own (removed when dropped).
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(bytes: &[u8]) -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("zkgpu-circom-{}-{n}.bin", std::process::id()));
        std::fs::write(&p, bytes).unwrap();
        Self(p)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn keys_and_witnesses_read_as_snarkjs_wrote_them() {
    keys_and_witnesses_read::<Bn254>();
    keys_and_witnesses_read::<Bls12_381>();
}

fn keys_and_witnesses_read<E: CircomCurve>() {
    for (name, signals, public, constraints) in CIRCUITS {
        let key = read_zkey::<E>(&fixture_of::<E>(name, ".zkey")).unwrap();
        assert_eq!(key.num_variables, signals, "{name}");
        assert_eq!(key.num_public, public, "{name}");
        assert_eq!(key.num_constraints(), constraints, "{name}");
        assert_eq!(
            key.domain_size(),
            (constraints + public + 1).next_power_of_two()
        );
        assert_eq!(key.proving_key.h_query.len(), key.domain_size());
        // The verifying key inside the .zkey is the one snarkjs exported to JSON.
        let vk = read_verifying_key_json::<E>(&text(&file::<E>(name, "_vkey.json"))).unwrap();
        assert_eq!(key.proving_key.vk, vk, "{name}");
        let wtns = fixture_of::<E>(name, ".wtns");
        let w = read_wtns::<E::ScalarField>(&wtns).unwrap();
        assert_eq!(w.len(), signals);
        assert!(w[0].is_one());
        // Writing the values back gives snarkjs' bytes.
        assert_eq!(write_wtns(&w), wtns, "{name}");
    }
    // The inputs of the fixtures: multiplier's output 3^8 * 11; merkle's public leaf 7.
    let m = read_wtns::<E::ScalarField>(&fixture_of::<E>("multiplier", ".wtns")).unwrap();
    assert_eq!(m[1], E::ScalarField::from(3u64.pow(8) * 11));
    let w = read_wtns::<E::ScalarField>(&fixture_of::<E>("merkle", ".wtns")).unwrap();
    assert_eq!(w[2], E::ScalarField::from(7u64));
}

/// Each file tells its curve, from its header alone; a reader for the other curve refuses it
/// naming both.
#[test]
fn files_tell_their_curve_and_the_other_curves_readers_refuse_them() {
    for (curve, sfx) in [(Curve::Bn254, ""), (Curve::Bls12_381, "_bls12381")] {
        for (name, ..) in CIRCUITS {
            let zkey = fixture(&format!("{name}{sfx}.zkey"));
            assert_eq!(zkey_curve(&zkey).unwrap(), curve, "{name}{sfx}");
            let f = TempFile::new(&zkey);
            assert_eq!(zkey_file_curve(&f.0).unwrap(), curve);
            let wtns = fixture(&format!("{name}{sfx}.wtns"));
            assert_eq!(wtns_curve(&wtns).unwrap(), curve);
            let r1cs = fixture(&format!("{name}{sfx}.r1cs"));
            assert_eq!(r1cs_curve(&r1cs).unwrap(), curve);
        }
    }
    let (bn, bls) = (fixture("merkle.zkey"), fixture("merkle_bls12381.zkey"));
    let e = read_zkey::<Bn254>(&bls).unwrap_err();
    assert!(matches!(e, CircomError::Unsupported { .. }), "{e}");
    assert!(e.to_string().contains("of bls12-381, not of bn254"), "{e}");
    let e = read_zkey::<Bls12_381>(&bn).unwrap_err();
    assert!(e.to_string().contains("of bn254, not of bls12-381"), "{e}");
    let e = read_wtns::<Fr>(&fixture("merkle_bls12381.wtns")).unwrap_err();
    assert!(e.to_string().contains("of bls12-381, not of bn254"), "{e}");
    let e = read_wtns::<ark_bls12_381::Fr>(&fixture("merkle.wtns")).unwrap_err();
    assert!(matches!(e, CircomError::Unsupported { .. }), "{e}");
    let e = read_verifying_key_json::<Bn254>(&text("merkle_bls12381_vkey.json")).unwrap_err();
    assert!(matches!(e, CircomError::Json { .. }), "{e}");
    let e = read_verifying_key_json::<Bls12_381>(&text("merkle_vkey.json")).unwrap_err();
    assert!(matches!(e, CircomError::Json { .. }), "{e}");
    // Neither curve: another prime, and a file of another kind.
    let header = section_at(&bn, 2);
    let e = zkey_curve(&patched(&bn, header + 4, &[0x11])).unwrap_err();
    assert!(e.to_string().contains("only BN254"), "{e}");
    assert!(zkey_curve(&fixture("merkle.wtns")).is_err());
    let plonk = patched(&bls, section_at(&bls, 1), &2u32.to_le_bytes());
    assert!(
        zkey_curve(&plonk)
            .unwrap_err()
            .to_string()
            .contains("PLONK")
    );
}

#[test]
fn cpu_proofs_with_circoms_reduction_verify_and_json_round_trips() {
    cpu_proofs_verify::<Bn254>();
    cpu_proofs_verify::<Bls12_381>();
}

fn cpu_proofs_verify<E: CircomCurve>() {
    let mut rng = StdRng::seed_from_u64(34);
    for (name, ..) in CIRCUITS {
        let key = read_zkey::<E>(&fixture_of::<E>(name, ".zkey")).unwrap();
        let vk = read_verifying_key_json::<E>(&text(&file::<E>(name, "_vkey.json"))).unwrap();
        let w = read_wtns::<E::ScalarField>(&fixture_of::<E>(name, ".wtns")).unwrap();
        let public = &w[1..=key.num_public];
        for (r, s) in [
            (
                E::ScalarField::rand(&mut rng),
                E::ScalarField::rand(&mut rng),
            ),
            (E::ScalarField::from(0u64), E::ScalarField::one()),
        ] {
            let proof = reference_proof(&key, &w, r, s).unwrap();
            assert!(verify(&vk, &proof, public).unwrap(), "{name}");
            assert_eq!(read_proof_json::<E>(&proof_json(&proof)).unwrap(), proof);
            let back = read_public_json::<E::ScalarField>(&public_json(public)).unwrap();
            assert_eq!(back, public);
            // A public signal changed: the proof no longer verifies.
            let mut wrong = public.to_vec();
            wrong[0] += E::ScalarField::one();
            assert!(!verify(&vk, &proof, &wrong).unwrap(), "{name}");
        }
        // The LibsnarkReduction (ark-groth16's default) does not give a valid proof for a
        // snarkjs key: the reduction matters.
        let libsnark = Groth16::<E>::create_proof_with_reduction_and_matrices(
            &key.proving_key,
            E::ScalarField::one(),
            E::ScalarField::one(),
            &[
                key.a().clone(),
                key.b().clone(),
                vec![vec![]; key.num_constraints()],
            ],
            key.num_public + 1,
            key.num_constraints(),
            &w,
        )
        .expect("ark-groth16's default reduction proves (without checking the witness)");
        assert!(!verify(&vk, &libsnark, public).unwrap(), "{name}");
    }
}

/// The error of reading `bytes` as a `.zkey`, which the file reader (one section at a time)
/// must give too, word for word.
fn zkey_error(bytes: &[u8]) -> CircomError {
    zkey_error_of::<Bn254>(bytes)
}

fn zkey_error_of<E: CircomCurve>(bytes: &[u8]) -> CircomError {
    let e = read_zkey::<E>(bytes).expect_err("a damaged key was read");
    let file = TempFile::new(bytes);
    let from_file = read_zkey_file::<E>(&file.0).expect_err("a damaged key was read from its file");
    assert_eq!(from_file.to_string(), e.to_string());
    assert_eq!(
        std::mem::discriminant(&from_file),
        std::mem::discriminant(&e)
    );
    e
}

/// The file reader gives the key the slice reader gives, and the file's hash in pieces is
/// the hash of its bytes, for files around the piece's size (16 MiB) too; a missing file is
/// an I/O error naming it.
#[test]
fn zkey_files_read_by_sections_and_hashed_in_pieces_equal_their_bytes() {
    zkey_files_read_by_sections::<Bn254>();
    zkey_files_read_by_sections::<Bls12_381>();
    let piece = 16 << 20;
    for len in [0, 1, piece - 1, piece, piece + 1, 2 * piece + 5] {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 977) as u8).collect();
        let file = TempFile::new(&bytes);
        assert_eq!(zkey_file_hash(&file.0).unwrap(), zkey_hash(&bytes), "{len}");
    }
    let gone = std::env::temp_dir().join("zkgpu-circom-no-such-file.zkey");
    for e in [
        read_zkey_file::<Bn254>(&gone).unwrap_err(),
        zkey_file_hash(&gone).unwrap_err(),
        zkey_file_curve(&gone).unwrap_err(),
    ] {
        assert!(matches!(e, CircomError::Io { .. }), "{e}");
        assert!(e.to_string().contains("no-such-file"), "{e}");
    }
}

fn zkey_files_read_by_sections<E: CircomCurve>() {
    for (name, ..) in CIRCUITS {
        let bytes = fixture_of::<E>(name, ".zkey");
        let file = TempFile::new(&bytes);
        let (a, b) = (
            read_zkey::<E>(&bytes).unwrap(),
            read_zkey_file::<E>(&file.0).unwrap(),
        );
        assert!(a.proving_key == b.proving_key, "{name}");
        assert_eq!((a.a(), a.b()), (b.a(), b.b()), "{name}");
        assert_eq!(
            (a.num_public, a.num_variables),
            (b.num_public, b.num_variables)
        );
        assert_eq!(
            zkey_file_hash(&file.0).unwrap(),
            zkey_hash(&bytes),
            "{name}"
        );
    }
}

#[test]
fn damaged_or_foreign_keys_are_refused() {
    let good = fixture("merkle.zkey");
    // Truncated anywhere: a format error, never a panic.
    for len in [
        0,
        3,
        11,
        40,
        700,
        800,
        90_000,
        good.len() / 2,
        good.len() - 1,
    ] {
        let e = zkey_error(&good[..len]);
        assert!(matches!(e, CircomError::Format { .. }), "{len}: {e}");
    }
    assert!(
        zkey_error(&fixture("merkle.wtns"))
            .to_string()
            .contains("not a .zkey")
    );
    // PLONK's protocol id.
    let plonk = patched(&good, section_at(&good, 1), &2u32.to_le_bytes());
    assert!(zkey_error(&plonk).to_string().contains("PLONK"));
    // Another base field prime (its low byte changed).
    let header = section_at(&good, 2);
    let e = zkey_error(&patched(&good, header + 4, &[0x11]));
    assert!(matches!(e, CircomError::Unsupported { .. }), "{e}");
    // alpha_1's x changed: off the curve.
    let alpha = header + 4 + 32 + 4 + 32 + 12;
    let e = zkey_error(&patched(&good, alpha, &[0x01, 0x02]));
    assert!(
        matches!(
            e,
            CircomError::NotOnCurve {
                section: 2,
                index: 0
            }
        ),
        "{e}"
    );
    // A point of the A query off the curve.
    let e = zkey_error(&patched(&good, section_at(&good, 5) + 64 * 7, &[0x05]));
    assert!(
        matches!(
            e,
            CircomError::NotOnCurve {
                section: 5,
                index: 7
            }
        ),
        "{e}"
    );
    // A coordinate past the modulus.
    let e = zkey_error(&patched(&good, section_at(&good, 8) + 64 * 3, &[0xff; 32]));
    assert!(
        matches!(
            e,
            CircomError::NotOnCurve {
                section: 8,
                index: 3
            }
        ),
        "{e}"
    );
    // A coefficient's signal out of range, and its matrix.
    let coeffs = section_at(&good, 4) + 4;
    let e = zkey_error(&patched(&good, coeffs + 8, &100_000u32.to_le_bytes()));
    assert!(e.to_string().contains("out of range"), "{e}");
    let e = zkey_error(&patched(&good, coeffs, &2u32.to_le_bytes()));
    assert!(e.to_string().contains("out of range"), "{e}");
    // Counts of the header too large for the file (a domain of 2^30, 2^31 signals): refused by
    // the sections' lengths before anything of that size is allocated.
    let counts = header + 4 + 32 + 4 + 32;
    for (at, n) in [
        (counts + 8, 1u32 << 30),
        (counts, 1 << 31),
        (counts + 4, u32::MAX),
    ] {
        let e = zkey_error(&patched(&good, at, &n.to_le_bytes()));
        assert!(matches!(e, CircomError::Format { .. }), "{n}: {e}");
    }
    // The coefficient count disagreeing with the section's length.
    let e = zkey_error(&patched(&good, coeffs - 4, &1u32.to_le_bytes()));
    assert!(e.to_string().contains("bytes"), "{e}");
}

/// BLS12-381's keys, whose base field elements take 48 bytes: damaged points and truncations
/// found at their own offsets.
#[test]
fn damaged_bls12_381_keys_are_refused() {
    let good = fixture("merkle_bls12381.zkey");
    for len in [0, 40, 900, good.len() / 2, good.len() - 1] {
        let e = zkey_error_of::<Bls12_381>(&good[..len]);
        assert!(matches!(e, CircomError::Format { .. }), "{len}: {e}");
    }
    let (g1, header) = (96, section_at(&good, 2));
    let alpha = header + 4 + 48 + 4 + 32 + 12;
    let cases = [
        (alpha, vec![0x01, 0x02], 2, 0),
        (section_at(&good, 5) + g1 * 7, vec![0x05], 5, 7),
        (section_at(&good, 8) + g1 * 3, vec![0xff; 48], 8, 3),
        (section_at(&good, 7) + 2 * g1 * 4 + 100, vec![0x07], 7, 4),
    ];
    for (at, with, sec, idx) in cases {
        let e = zkey_error_of::<Bls12_381>(&patched(&good, at, &with));
        let want = matches!(e, CircomError::NotOnCurve { section, index } if section == sec && index == idx);
        assert!(want, "section {sec}, point {idx}: {e}");
    }
}

#[test]
fn damaged_or_foreign_witnesses_are_refused() {
    let good = fixture("merkle.wtns");
    for len in [0, 10, 30, 70, good.len() - 1] {
        let e = read_wtns::<Fr>(&good[..len]).expect_err("read");
        assert!(matches!(e, CircomError::Format { .. }), "{len}: {e}");
    }
    // BLS12-381's scalar field instead of BN254's.
    let prime: Vec<u8> = [
        0xffff_ffff_0000_0001u64,
        0x53bd_a402_fffe_5bfe,
        0x3339_d808_09a1_d805,
        0x73ed_a753_299d_7d48,
    ]
    .iter()
    .flat_map(|l| l.to_le_bytes())
    .collect();
    let e = read_wtns::<Fr>(&patched(&good, 28, &prime)).expect_err("read");
    assert!(matches!(e, CircomError::Unsupported { .. }), "{e}");
    // A value past the modulus.
    let e = read_wtns::<Fr>(&patched(&good, good.len() - 32, &[0xff; 32])).expect_err("read");
    assert!(e.to_string().contains("modulus"), "{e}");
    // The count disagreeing with the values' section, and one whose bytes overflow.
    for n in [2087u32, u32::MAX] {
        let e = read_wtns::<Fr>(&patched(&good, 60, &n.to_le_bytes())).expect_err("read");
        assert!(matches!(e, CircomError::Format { .. }), "{e}");
    }
}

/// A large witness (read in parallel) with values past the modulus: the error names the
/// first of them; p - 1 and zero read back; p itself is refused.
#[test]
fn witness_values_past_the_modulus_are_named_in_order() {
    use ark_ff::{BigInteger, PrimeField};
    let mut rng = StdRng::seed_from_u64(52);
    let mut values: Vec<Fr> = (0..50_000).map(|_| Fr::rand(&mut rng)).collect();
    values[1] = -Fr::one();
    values[2] = Fr::from(0u64);
    let good = write_wtns(&values);
    assert_eq!(read_wtns::<Fr>(&good).expect("read"), values);
    let at = |i: usize| good.len() - 32 * (values.len() - i);
    let p = Fr::MODULUS.to_bytes_le();
    let one_bad = patched(&good, at(40_000), &p);
    let e = read_wtns::<Fr>(&one_bad).expect_err("p");
    assert!(e.to_string().contains("value 40000 "), "{e}");
    let two_bad = patched(&one_bad, at(7), &[0xff; 32]);
    let e = read_wtns::<Fr>(&two_bad).expect_err("two");
    assert!(e.to_string().contains("value 7 "), "{e}");
}

#[test]
fn malformed_json_is_refused() {
    let vk = text("merkle_vkey.json");
    for (from, to) in [
        ("\"groth16\"", "\"plonk\""),
        ("\"bn128\"", "\"bls12381\""),
        ("\"IC\"", "\"ic\""),
    ] {
        let e = read_verifying_key_json::<Bn254>(&vk.replacen(from, to, 1)).expect_err("read");
        assert!(matches!(e, CircomError::Json { .. }), "{e}");
    }
    assert!(read_verifying_key_json::<Bn254>("{").is_err());
    assert!(read_public_json::<Fr>("[\"1\", \"x\"]").is_err());
    // Past the modulus.
    let r = "21888242871839275222246405745257275088548364400416034343698204186575808495617";
    assert!(read_public_json::<Fr>(&format!("[\"{r}\"]")).is_err());
}
