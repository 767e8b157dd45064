//! Witness-only proving and the proving stream against ark-groth16: proofs equal for the
//! same `r` and `s`, matrices learned only from a verified proof, and typed errors for an
//! unsatisfied witness, a key of another circuit and a circuit whose constraints depend on
//! its witness.

#![allow(clippy::unwrap_used)]

use crate::common;

use ark_ff::UniformRand;
use ark_groth16::Groth16;
use ark_relations::gr1cs::ConstraintSynthesizer;
use ark_std::rand::{RngCore, SeedableRng, rngs::StdRng};
use common::Chain;
use zkgpu_groth16::{GpuPairing, GpuProver, ProveError, ProveRequest};
use zkgpu_testing::new_context as context;

/// A stream of several circuits, one of them unsatisfied, against a key that learns its
/// matrices from the stream's first proof: every proof equals ark-groth16's for the same
/// seeded generator, the bad circuit gives its error in its place, and the stream goes on.
fn stream_equals_arkworks<E: GpuPairing>(seed: u64) {
    let ctx = context();
    let prover = GpuProver::<E>::new(&ctx).unwrap().with_stream_workers(2);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut circuits = common::chains(6, 120, &mut rng);
    circuits[3].corrupt = Some(5);
    let pk = common::setup::<E>(&circuits[0], &mut rng);
    let prepared = prover.prepare(&pk).unwrap();
    assert!(prepared.matrices().is_none());
    let stream_seed = rng.next_u64();
    let got: Vec<_> = prover
        .prove_stream(
            &prepared,
            circuits.clone(),
            StdRng::seed_from_u64(stream_seed),
        )
        .collect();
    assert!(prepared.matrices().is_some(), "the stream taught the key");
    common::check_stream(&pk, circuits, got, stream_seed, (3, 6));
}

#[test]
fn bls12_381_stream_equals_arkworks() {
    stream_equals_arkworks::<ark_bls12_381::Bls12_381>(31);
}

#[test]
fn bls12_377_stream_equals_arkworks() {
    stream_equals_arkworks::<ark_bls12_377::Bls12_377>(32);
}

/// An empty stream ends at once; a stream that is dropped early stops its workers.
#[test]
fn stream_empty_and_dropped() {
    type E = ark_bls12_381::Bls12_381;
    let ctx = context();
    let prover = GpuProver::<E>::new(&ctx).unwrap().with_stream_workers(3);
    let mut rng = StdRng::seed_from_u64(33);
    let circuits = common::chains(5, 120, &mut rng);
    let pk = common::setup::<E>(&circuits[0], &mut rng);
    let prepared = prover.prepare_for(&pk, circuits[0].clone()).unwrap();
    let mut none = prover.prove_stream(&prepared, Vec::<Chain<_>>::new(), &mut rng);
    assert!(none.next().is_none());
    drop(none);
    let mut stream = prover.prove_stream(&prepared, circuits.clone(), StdRng::seed_from_u64(9));
    let first = stream.next().unwrap().unwrap();
    let t = stream.last_timings().unwrap();
    assert!(!t.built_matrices && t.synthesis > 0.0 && t.prove > 0.0 && t.total >= t.prove);
    drop(stream);
    let mut ark_rng = StdRng::seed_from_u64(9);
    let want =
        Groth16::<E>::create_random_proof_with_reduction(circuits[0].clone(), &pk, &mut ark_rng)
            .unwrap();
    assert!(first == want);
}

/// A circuit that panics in synthesis gives an error in its place; the others prove.
#[derive(Clone)]
struct MaybePanics(Option<Chain<ark_bls12_381::Fr>>);

impl ConstraintSynthesizer<ark_bls12_381::Fr> for MaybePanics {
    fn generate_constraints(
        self,
        cs: ark_relations::gr1cs::ConstraintSystemRef<ark_bls12_381::Fr>,
    ) -> Result<(), ark_relations::gr1cs::SynthesisError> {
        match self.0 {
            Some(c) => c.generate_constraints(cs),
            None => panic!("a circuit's own bug"),
        }
    }
}

#[test]
fn stream_survives_a_panicking_circuit() {
    type E = ark_bls12_381::Bls12_381;
    let ctx = context();
    let prover = GpuProver::<E>::new(&ctx).unwrap().with_stream_workers(2);
    let mut rng = StdRng::seed_from_u64(34);
    let circuits = common::chains(3, 120, &mut rng);
    let pk = common::setup::<E>(&circuits[0], &mut rng);
    let prepared = prover.prepare_for(&pk, circuits[0].clone()).unwrap();
    let items = vec![
        MaybePanics(Some(circuits[0].clone())),
        MaybePanics(None),
        MaybePanics(Some(circuits[1].clone())),
    ];
    let got: Vec<_> = prover.prove_stream(&prepared, items, &mut rng).collect();
    assert!(got[0].is_ok() && got[2].is_ok());
    assert!(matches!(&got[1], Err(ProveError::SynthesisPanicked(m)) if m.contains("own bug")));
}

/// Witness-only proofs: the key's matrices from a setup-mode synthesis, then from the
/// first verified proof; typed errors for every kind of wrong input.
fn witness_only<E: GpuPairing>(seed: u64) {
    let ctx = context();
    let prover = GpuProver::<E>::new(&ctx).unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let extra = vec![E::ScalarField::rand(&mut rng)];
    let circuit = Chain::new(E::ScalarField::rand(&mut rng), 60, extra.clone());
    let pk = common::setup::<E>(&circuit, &mut rng);
    let rand = |rng: &mut StdRng| E::ScalarField::rand(rng);

    // Matrices from setup mode: the first proof is witness-only and equals arkworks'.
    let prepared = prover.prepare_for(&pk, circuit.clone()).unwrap();
    let m = prepared.matrices().unwrap();
    assert_eq!(m.num_constraints(), 62);
    let (r, s) = (rand(&mut rng), rand(&mut rng));
    let (got, t) = prover
        .run(ProveRequest::circuit(&prepared, circuit.clone(), (r, s)))
        .unwrap();
    assert!(!t.built_matrices);
    let want = Groth16::<E>::create_proof_with_reduction(circuit.clone(), &pk, r, s).unwrap();
    assert!(got == want, "witness-only proof differs from ark-groth16's");

    // The same matrices given with the key (prepare_with_matrices): the same proof. Given as
    // circom's reduction's, the key's H query has the wrong length for them.
    let m = prepared.matrices().unwrap().clone();
    let given = prover.prepare_with_matrices(&pk, m.clone()).unwrap();
    assert_eq!(given.qap(), zkgpu_groth16::Qap::Libsnark);
    let (again, _) = prover
        .run(ProveRequest::circuit(&given, circuit.clone(), (r, s)))
        .unwrap();
    assert!(again == want);
    let w = zkgpu_groth16::synthesize_witness(circuit.clone()).unwrap();
    let circom = zkgpu_groth16::R1csMatrices::from_circom(
        &vec![vec![]; m.num_constraints()],
        &vec![vec![]; m.num_constraints()],
        w.num_inputs,
        w.num_witness(),
        m.num_constraints(),
    )
    .unwrap();
    match prover.prepare_with_matrices(&pk, circom) {
        Err(ProveError::MalformedKey(_) | ProveError::KeyMismatch { .. }) => {}
        other => panic!("expected a refused key, got {other:?}"),
    }

    // An unsatisfied witness: the first failing constraint of the key's matrices, unnamed.
    let mut bad = circuit.clone();
    bad.corrupt = Some(7);
    match prover.prove(&prepared, bad, &mut rng) {
        Err(ProveError::Unsatisfied {
            index: 8,
            name: None,
        }) => {}
        other => panic!("expected Unsatisfied at 8, got {other:?}"),
    }
    // A circuit whose constraints depend on its witness (here: another offset, the same
    // variables) is caught by the key's matrices: its witness does not satisfy them.
    let mut other = circuit.clone();
    other.offset = 2;
    match prover.prove(&prepared, other.clone(), &mut rng) {
        Err(ProveError::Unsatisfied { index: 1, .. }) => {}
        other => panic!("expected Unsatisfied at 1, got {other:?}"),
    }
    // Keys of other shapes: the witness counts, before any GPU work.
    for (c, what) in [
        (Chain::new(rand(&mut rng), 60, vec![]), "instance variables"),
        (
            Chain::new(rand(&mut rng), 61, extra.clone()),
            "witness variables",
        ),
    ] {
        match prover.prove(&prepared, c, &mut rng) {
            Err(ProveError::KeyMismatch { what: w, .. }) => assert_eq!(w, what),
            other => panic!("expected KeyMismatch({what}), got {other:?}"),
        }
    }
    // Matrices of another circuit of the same shape: the self-check refuses the proof.
    let wrong = prover.prepare_for(&pk, other.clone()).unwrap();
    match prover.prove(&wrong, other.clone(), &mut rng) {
        Err(ProveError::ProofRejected) => {}
        other => panic!("expected ProofRejected, got {other:?}"),
    }

    // Matrices learned from the first proof, and only from one that verifies: a proof of
    // another circuit teaches nothing, even with verification off.
    let unchecked = GpuProver::<E>::new(&ctx).unwrap().with_verification(false);
    let learning = prover.prepare(&pk).unwrap();
    let invalid = unchecked.prove(&learning, other.clone(), &mut rng).unwrap();
    let pvk = ark_groth16::prepare_verifying_key(&pk.vk);
    assert!(!Groth16::<E>::verify_proof(&pvk, &invalid, &other.public()).unwrap());
    assert!(learning.matrices().is_none());
    let (r, s) = (rand(&mut rng), rand(&mut rng));
    let (first, t) = prover
        .run(ProveRequest::circuit(&learning, circuit.clone(), (r, s)))
        .unwrap();
    assert!(t.built_matrices && learning.matrices() == prepared.matrices());
    let want = Groth16::<E>::create_proof_with_reduction(circuit.clone(), &pk, r, s).unwrap();
    assert!(first == want);
    let (second, t) = prover
        .run(ProveRequest::circuit(&learning, circuit.clone(), (s, r)))
        .unwrap();
    assert!(!t.built_matrices);
    let want = Groth16::<E>::create_proof_with_reduction(circuit, &pk, s, r).unwrap();
    assert!(second == want);
}

#[test]
fn bls12_381_witness_only() {
    witness_only::<ark_bls12_381::Bls12_381>(35);
}

#[test]
fn bls12_377_witness_only() {
    witness_only::<ark_bls12_377::Bls12_377>(36);
}

/// The stream's self-check, run beside the next proof, still refuses every proof made with
/// the matrices of another circuit, and proves the right circuits after them.
#[test]
fn stream_checks_every_proof() {
    type E = ark_bls12_381::Bls12_381;
    let ctx = context();
    let prover = GpuProver::<E>::new(&ctx).unwrap().with_stream_workers(2);
    let mut rng = StdRng::seed_from_u64(37);
    let circuits = common::chains(3, 120, &mut rng);
    let pk = common::setup::<E>(&circuits[0], &mut rng);
    let mut other = circuits[1].clone();
    other.offset = 2;
    let wrong = prover.prepare_for(&pk, other.clone()).unwrap();
    let got: Vec<_> = prover
        .prove_stream(&wrong, vec![other.clone(), other], &mut rng)
        .collect();
    assert_eq!(got.len(), 2);
    for g in got {
        assert!(matches!(g, Err(ProveError::ProofRejected)), "{g:?}");
    }
    let right = prover.prepare_for(&pk, circuits[0].clone()).unwrap();
    let got: Vec<_> = prover.prove_stream(&right, circuits, &mut rng).collect();
    assert!(got.iter().all(Result::is_ok));
}
