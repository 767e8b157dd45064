//! The GPU prover on real circuits (zkgpu-circuits): a SHA-256 chain (0/1 witnesses) and
//! Poseidon Merkle paths (full-size witnesses), equal to ark-groth16's proofs for the same
//! `r` and `s`, verifying, on both curves.

#![allow(clippy::unwrap_used)]

use ark_crypto_primitives::sponge::Absorb;
use ark_ff::UniformRand;
use ark_groth16::{Groth16, prepare_verifying_key};
use ark_relations::gr1cs::ConstraintSynthesizer;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_circuits::{MerklePaths, Sha256Chain};
use zkgpu_groth16::{GpuPairing, GpuProver, ProveRequest};
use zkgpu_runtime::GpuContext;

fn prove_and_compare<E, C>(circuit: C, public: &[E::ScalarField], rng: &mut StdRng)
where
    E: GpuPairing,
    C: ConstraintSynthesizer<E::ScalarField> + Clone,
{
    let ctx = GpuContext::from_env_blocking().expect("a GPU adapter (lavapipe in CI)");
    let prover = GpuProver::<E>::new(&ctx).unwrap();
    let pk = Groth16::<E>::generate_random_parameters_with_reduction(circuit.clone(), rng).unwrap();
    let prepared = prover.prepare(&pk).unwrap();
    let (r, s) = (E::ScalarField::rand(rng), E::ScalarField::rand(rng));
    let want = Groth16::<E>::create_proof_with_reduction(circuit.clone(), &pk, r, s).unwrap();
    let (got, _) = prover
        .run(ProveRequest::circuit(&prepared, circuit, (r, s)))
        .unwrap();
    assert!(got == want, "GPU proof differs from ark-groth16's");
    let pvk = prepare_verifying_key(&pk.vk);
    assert!(Groth16::<E>::verify_proof(&pvk, &got, public).unwrap());
}

fn merkle<E: GpuPairing<ScalarField: Absorb>>(seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let c = MerklePaths::<E::ScalarField>::random(2, 4, &mut rng);
    let public = c.public_inputs();
    prove_and_compare::<E, _>(c, &public, &mut rng);
}

#[test]
fn merkle_bls12_381() {
    merkle::<ark_bls12_381::Bls12_381>(21);
}

#[test]
fn merkle_bls12_377() {
    merkle::<ark_bls12_377::Bls12_377>(22);
}

#[test]
fn sha256_bls12_381() {
    let mut rng = StdRng::seed_from_u64(23);
    let c = Sha256Chain::random(1, &mut rng);
    let public = c.public_inputs();
    prove_and_compare::<ark_bls12_381::Bls12_381, _>(c, &public, &mut rng);
}
