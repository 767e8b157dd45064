//! Keys made from circom's `.r1cs` with ark-groth16's generator and circom's reduction: they
//! prove and verify, and survive `write_zkey` / `read_zkey`; the `.zkey` snarkjs wrote reads
//! back as the same bytes where the two layouts agree.

#![allow(clippy::unwrap_used)]

use crate::common;

use ark_bls12_381::Bls12_381;
use ark_bn254::{Bn254, Fr};
use ark_ff::UniformRand;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use common::{CIRCUITS, fixture, fixture_of, section_at};
use zkgpu_circom::{
    CircomCurve, CircomError, read_r1cs, read_wtns, read_zkey, reference_proof, setup, verify,
    write_zkey,
};

#[test]
fn r1cs_reads_as_the_zkey_matrices() {
    r1cs_reads::<Bn254>();
    r1cs_reads::<Bls12_381>();
}

fn r1cs_reads<E: CircomCurve>() {
    for (name, signals, public, constraints) in CIRCUITS {
        let r1cs = read_r1cs::<E::ScalarField>(&fixture_of::<E>(name, ".r1cs")).unwrap();
        assert_eq!(
            (r1cs.num_wires, r1cs.num_public),
            (signals, public),
            "{name}"
        );
        assert_eq!(r1cs.num_constraints(), constraints, "{name}");
        // The A and B rows snarkjs put in the .zkey are the .r1cs's, term for term.
        let key = read_zkey::<E>(&fixture_of::<E>(name, ".zkey")).unwrap();
        assert_eq!(key.a(), &r1cs.matrices[0], "{name}");
        assert_eq!(key.b(), &r1cs.matrices[1], "{name}");
    }
}

#[test]
fn keys_from_the_r1cs_prove_verify_and_round_trip() {
    keys_from_the_r1cs::<Bn254>();
    keys_from_the_r1cs::<Bls12_381>();
}

fn keys_from_the_r1cs<E: CircomCurve>() {
    let mut rng = StdRng::seed_from_u64(3434);
    for (name, ..) in CIRCUITS {
        let r1cs = read_r1cs(&fixture_of::<E>(name, ".r1cs")).unwrap();
        let key = setup::<E>(&r1cs, &mut rng).unwrap();
        assert_eq!(key.domain_size(), key.proving_key.h_query.len());
        let w = read_wtns(&fixture_of::<E>(name, ".wtns")).unwrap();
        let (r, s) = (
            E::ScalarField::rand(&mut rng),
            E::ScalarField::rand(&mut rng),
        );
        let proof = reference_proof(&key, &w, r, s).unwrap();
        let public = &w[1..=key.num_public];
        assert!(
            verify(&key.proving_key.vk, &proof, public).unwrap(),
            "{name}"
        );
        let bytes = write_zkey(&key);
        let back = read_zkey::<E>(&bytes).unwrap();
        assert_eq!(back.proving_key, key.proving_key, "{name}");
        assert_eq!((back.a(), back.b()), (key.a(), key.b()), "{name}");
        assert_eq!(back.num_public, key.num_public);
    }
}

#[test]
fn written_zkeys_match_snarkjs_bytes_section_by_section() {
    written_zkeys_match::<Bn254>();
    written_zkeys_match::<Bls12_381>();
}

fn written_zkeys_match<E: CircomCurve>() {
    for (name, ..) in CIRCUITS {
        let theirs = fixture_of::<E>(name, ".zkey");
        let ours = write_zkey(&read_zkey::<E>(&theirs).unwrap());
        let body = |b: &[u8], k: u32| {
            let at = section_at(b, k);
            let len = u64::from_le_bytes(b[at - 8..at].try_into().unwrap()) as usize;
            b[at..at + len].to_vec()
        };
        for k in [1, 2, 3, 5, 6, 7, 8, 9] {
            assert!(body(&theirs, k) == body(&ours, k), "{name}: section {k}");
        }
        // The coefficients: the same entries (snarkjs may order them otherwise).
        let mut a = body(&theirs, 4)[4..]
            .chunks(44)
            .map(<[u8]>::to_vec)
            .collect::<Vec<_>>();
        let mut b = body(&ours, 4)[4..]
            .chunks(44)
            .map(<[u8]>::to_vec)
            .collect::<Vec<_>>();
        a.sort();
        b.sort();
        assert!(a == b, "{name}: coefficients");
    }
}

#[test]
fn damaged_r1cs_files_are_refused() {
    let good = fixture("merkle.r1cs");
    for len in [0, 20, 100, good.len() / 2] {
        let e = read_r1cs::<Fr>(&good[..len]).unwrap_err();
        assert!(matches!(e, CircomError::Format { .. }), "{len}: {e}");
    }
    assert!(read_r1cs::<Fr>(&fixture("merkle.zkey")).is_err());
    // Another curve's circuit.
    let e = read_r1cs::<Fr>(&fixture("merkle_bls12381.r1cs")).unwrap_err();
    assert!(e.to_string().contains("of bls12-381, not of bn254"), "{e}");
    // A wire index past the wire count in the first term of constraint 0.
    let at = section_at(&good, 2) + 4;
    let mut bad = good.clone();
    bad[at..at + 4].copy_from_slice(&1_000_000u32.to_le_bytes());
    let e = read_r1cs::<Fr>(&bad).unwrap_err();
    assert!(e.to_string().contains("wire"), "{e}");
    // A constraint count far past what the section holds: refused before it is allocated.
    let header = section_at(&good, 1);
    let count_at = header + 4 + 32 + 4 * 4 + 8;
    let mut bad = good.clone();
    bad[count_at..count_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = read_r1cs::<Fr>(&bad).unwrap_err();
    assert!(e.to_string().contains("too short"), "{e}");
}
