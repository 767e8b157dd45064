//! The GPU prover against ark-groth16: equal proofs for the same `r` and `s` (including the
//! `r = 0` and `s = 0` special cases), proofs that verify, a prepared key reused across
//! proofs, and typed errors for unsatisfied circuits and keys of other circuits.

#![allow(clippy::unwrap_used)]

use crate::common;

use ark_ec::AffineRepr;
use ark_ec::pairing::Pairing;
use ark_ff::{Field, UniformRand, Zero};
use ark_groth16::{Groth16, ProvingKey, prepare_verifying_key};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use common::Chain;
use zkgpu_groth16::{GpuPairing, GpuProver, ProveError, ProveRequest};
use zkgpu_testing::new_context as context;

fn setup<E: Pairing>(circuit: &Chain<E::ScalarField>, rng: &mut StdRng) -> ProvingKey<E> {
    Groth16::<E>::generate_random_parameters_with_reduction(circuit.clone(), rng).unwrap()
}

fn proofs_equal_arkworks<E: GpuPairing>(seed: u64) {
    let ctx = context();
    let prover = GpuProver::<E>::new(&ctx).unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let rand = |rng: &mut StdRng| E::ScalarField::rand(rng);
    // Sizes around domain boundaries, with and without extra public inputs; witnesses of
    // random elements, of zeros (x = 0 keeps the chain at 0) and of small values. B in G2
    // has an identity for y, the extra inputs and the last step: most of it at 1 step, a
    // fourth at 13 steps and 2 extra inputs (left out of its MSM), a few at 61 or more (kept).
    let mut left_out = [false; 2];
    for (x, steps, extra) in [
        (rand(&mut rng), 0usize, 0usize),
        (rand(&mut rng), 1, 0),
        (E::ScalarField::zero(), 13, 2),
        (E::ScalarField::from(2u64), 3, 1),
        (rand(&mut rng), 61, 0),
        (rand(&mut rng), 62, 1),
        (rand(&mut rng), 700, 3),
    ] {
        let extra = (0..extra).map(|_| rand(&mut rng)).collect();
        let circuit = Chain::new(x, steps, extra);
        let pk = setup::<E>(&circuit, &mut rng);
        let prepared = prover.prepare(&pk).unwrap();
        let identities = pk.b_g2_query[1..].iter().filter(|p| p.is_zero()).count();
        let left = prepared.identities_left_out();
        assert!(
            left == 0 || left == identities,
            "{steps} steps: {left} of {identities}"
        );
        left_out[usize::from(left > 0)] = true;
        let pvk = prepare_verifying_key(&pk.vk);
        for (r, s) in [
            (rand(&mut rng), rand(&mut rng)),
            (E::ScalarField::zero(), rand(&mut rng)),
            (rand(&mut rng), E::ScalarField::zero()),
            (E::ScalarField::zero(), E::ScalarField::zero()),
        ] {
            let want =
                Groth16::<E>::create_proof_with_reduction(circuit.clone(), &pk, r, s).unwrap();
            let (got, t) = prover
                .run(ProveRequest::circuit(&prepared, circuit.clone(), (r, s)))
                .unwrap();
            assert!(
                got == want,
                "{steps} steps: GPU proof differs from ark-groth16's for r = {r}, s = {s}"
            );
            assert!(t.prove > 0.0 && t.verify > 0.0);
            assert!(Groth16::<E>::verify_proof(&pvk, &got, &circuit.public()).unwrap());
        }
        // The same seeded generator draws the same r and s as arkworks.
        let seed = rng.next_seed();
        let want = Groth16::<E>::create_random_proof_with_reduction(
            circuit.clone(),
            &pk,
            &mut StdRng::seed_from_u64(seed),
        )
        .unwrap();
        let got = prover
            .prove(&prepared, circuit.clone(), &mut StdRng::seed_from_u64(seed))
            .unwrap();
        assert!(
            got == want,
            "{steps} steps: prove(rng) differs from arkworks"
        );
        let mut wrong = circuit.public();
        wrong[0] += E::ScalarField::ONE;
        assert!(!Groth16::<E>::verify_proof(&pvk, &got, &wrong).unwrap());
    }
    assert_eq!(
        left_out,
        [true, true],
        "keys with and without identities left out"
    );
}

trait NextSeed {
    fn next_seed(&mut self) -> u64;
}

impl NextSeed for StdRng {
    fn next_seed(&mut self) -> u64 {
        use ark_std::rand::RngCore;
        self.next_u64()
    }
}

/// One test per pairing of the registry (`zkgpu_groth16::for_each_pairing!`), each with a
/// seed of its own: a pairing added to the registry is tested here without a line more.
macro_rules! per_pairing {
    ($base:literal; $(($p:ident, $id:ident, $g1:ident, $g2:ident, $ark:path, $fr:path))*) => {
        mod per_pairing {
            $(
                #[test]
                fn $id() {
                    let seed = $base + zkgpu_groth16::Pairing::$p as u64;
                    super::proofs_equal_arkworks::<$ark>(seed);
                }
            )*
        }
    };
}
zkgpu_groth16::for_each_pairing!(per_pairing, 11);

#[test]
fn every_pairing_has_a_prover() {
    // The registry's names round-trip and each dispatches to a prover of that pairing.
    for &p in zkgpu_groth16::Pairing::ALL {
        assert_eq!(zkgpu_groth16::Pairing::from_name(p.name()), Ok(p));
        let name = zkgpu_groth16::with_pairing!(p, E => <E as zkgpu_groth16::GpuPairing>::NAME);
        assert_eq!(name, p.name());
    }
    assert_eq!(
        zkgpu_groth16::Pairing::from_name("bn128"),
        Ok(zkgpu_groth16::Pairing::Bn254)
    );
    assert!(zkgpu_groth16::Pairing::from_name("bls12").is_err());
}

/// One prepared key, many witnesses: every proof verifies and differs.
fn prepared_key_reused<E: GpuPairing>(seed: u64) {
    let ctx = context();
    let prover = GpuProver::<E>::new(&ctx).unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let shape = Chain::new(E::ScalarField::zero(), 200, vec![E::ScalarField::zero()]);
    let pk = setup::<E>(&shape, &mut rng);
    let prepared = prover.prepare(&pk).unwrap();
    let pvk = prepare_verifying_key(&pk.vk);
    let mut seen = Vec::new();
    for _ in 0..4 {
        let circuit = Chain::new(
            E::ScalarField::rand(&mut rng),
            200,
            vec![E::ScalarField::rand(&mut rng)],
        );
        let proof = prover.prove(&prepared, circuit.clone(), &mut rng).unwrap();
        assert!(Groth16::<E>::verify_proof(&pvk, &proof, &circuit.public()).unwrap());
        assert!(!seen.contains(&proof));
        seen.push(proof);
    }
}

#[test]
fn bls12_381_prepared_key_reused() {
    prepared_key_reused::<ark_bls12_381::Bls12_381>(13);
}

#[test]
fn bls12_377_prepared_key_reused() {
    prepared_key_reused::<ark_bls12_377::Bls12_377>(14);
}

/// Bad input: typed errors, never a proof.
fn bad_input<E: GpuPairing>(seed: u64) {
    let ctx = context();
    let prover = GpuProver::<E>::new(&ctx).unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let x = E::ScalarField::rand(&mut rng);
    let extra = vec![
        E::ScalarField::rand(&mut rng),
        E::ScalarField::rand(&mut rng),
    ];
    let circuit = Chain::new(x, 50, extra.clone());
    let pk = setup::<E>(&circuit, &mut rng);
    let prepared = prover.prepare(&pk).unwrap();

    // A wrong witness value at step 7: constraint 2 + 7 (after the two extra inputs' ones).
    let mut corrupt = circuit.clone();
    corrupt.corrupt = Some(7);
    match prover.prove(&prepared, corrupt, &mut rng) {
        Err(ProveError::Unsatisfied { index, .. }) => assert_eq!(index, 9),
        other => panic!("expected Unsatisfied, got {other:?}"),
    }

    // The key of a circuit of the same shape but other constraints: the proof is rejected.
    let mut other = circuit.clone();
    other.offset = 2;
    match prover.prove(&prepared, other.clone(), &mut rng) {
        Err(ProveError::ProofRejected) => {}
        other => panic!("expected ProofRejected, got {other:?}"),
    }
    // With verification off the prover returns that (invalid) proof: the check is what
    // catches it.
    let unchecked = GpuProver::<E>::new(&ctx).unwrap().with_verification(false);
    let proof = unchecked.prove(&prepared, other.clone(), &mut rng).unwrap();
    let pvk = prepare_verifying_key(&pk.vk);
    assert!(!Groth16::<E>::verify_proof(&pvk, &proof, &other.public()).unwrap());

    // Keys of other shapes.
    for (c, what) in [
        (Chain::new(x, 50, vec![extra[0]]), "instance variables"),
        (Chain::new(x, 51, extra.clone()), "witness variables"),
    ] {
        match prover.prove(&prepared, c, &mut rng) {
            Err(ProveError::KeyMismatch { what: w, .. }) => assert_eq!(w, what),
            other => panic!("expected KeyMismatch({what}), got {other:?}"),
        }
    }

    // Malformed keys.
    let mut bad = pk.clone();
    bad.l_query.pop();
    assert!(matches!(
        prover.prepare(&bad),
        Err(ProveError::MalformedKey(_))
    ));
    let mut bad = pk.clone();
    bad.h_query.push(bad.h_query[0]);
    assert!(matches!(
        prover.prepare(&bad),
        Err(ProveError::MalformedKey(_))
    ));
    let mut bad = pk.clone();
    bad.b_g2_query.pop();
    assert!(matches!(
        prover.prepare(&bad),
        Err(ProveError::MalformedKey(_))
    ));
}

#[test]
fn bls12_381_bad_input() {
    bad_input::<ark_bls12_381::Bls12_381>(15);
}

#[test]
fn bls12_377_bad_input() {
    bad_input::<ark_bls12_377::Bls12_377>(16);
}

#[test]
fn bn254_bad_input() {
    bad_input::<ark_bn254::Bn254>(18);
}

/// Proofs equal to ark-groth16's with every kernel in a 64-bit arithmetic of the run
/// (`zkgpu_testing::test_ariths_from_env`: `int64` on lavapipe), every pairing.
fn wide_proofs_equal_arkworks<E: GpuPairing>(seed: u64) {
    for a in zkgpu_testing::test_ariths_from_env() {
        if a == zkgpu_runtime::Arith::Portable {
            continue;
        }
        let ctx = zkgpu_testing::arith_context(a);
        assert_eq!(ctx.arith(), a);
        let prover = GpuProver::<E>::new(ctx).unwrap();
        let mut rng = StdRng::seed_from_u64(seed);
        let circuit = Chain::new(
            E::ScalarField::rand(&mut rng),
            62,
            vec![E::ScalarField::from(3u64)],
        );
        let pk = setup::<E>(&circuit, &mut rng);
        let prepared = prover.prepare(&pk).unwrap();
        let (r, s) = (
            E::ScalarField::rand(&mut rng),
            E::ScalarField::rand(&mut rng),
        );
        let want = Groth16::<E>::create_proof_with_reduction(circuit.clone(), &pk, r, s).unwrap();
        let (got, _) = prover
            .run(ProveRequest::circuit(&prepared, circuit.clone(), (r, s)))
            .unwrap();
        assert!(got == want, "{a}: GPU proof differs from ark-groth16's");
    }
}

#[test]
fn wide_arithmetic_proofs_equal_arkworks() {
    wide_proofs_equal_arkworks::<ark_bls12_381::Bls12_381>(21);
    wide_proofs_equal_arkworks::<ark_bls12_377::Bls12_377>(22);
    wide_proofs_equal_arkworks::<ark_bn254::Bn254>(23);
}
