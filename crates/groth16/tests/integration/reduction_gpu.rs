//! The GPU witness map against ark-groth16's `LibsnarkReduction`: equal outputs for several
//! circuit sizes on both curves, and equal, verifying proofs for the same randomness.

#![allow(clippy::unwrap_used)]

use crate::common;

use ark_ec::pairing::Pairing;
use ark_ff::{Field, PrimeField, UniformRand};
use ark_groth16::r1cs_to_qap::{LibsnarkReduction, R1CSToQAP};
use ark_groth16::{Groth16, prepare_verifying_key};
use ark_poly::GeneralEvaluationDomain;
use ark_relations::gr1cs::SynthesisError;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use common::Chain;
use zkgpu_groth16::{GpuReduction, synthesize};

fn witness_maps_agree<F: PrimeField>(seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    for (steps, extra) in [
        (0usize, 0usize),
        (1, 0),
        (5, 2),
        (100, 3),
        (1000, 1),
        (4093, 0),
    ] {
        let circuit = Chain::new(
            F::rand(&mut rng),
            steps,
            (0..extra).map(|_| F::rand(&mut rng)).collect(),
        );
        let syn = synthesize(circuit).unwrap();
        assert!(syn.cs.is_satisfied().unwrap());
        gpu_witness_map_is_arkworks(&syn, &format!("{steps} steps, {extra} extra inputs"));
    }
}

/// `GpuReduction`'s witness map of `syn` equals `LibsnarkReduction`'s, and ran on the GPU.
fn gpu_witness_map_is_arkworks<F: PrimeField>(syn: &zkgpu_groth16::Synthesized<F>, what: &str) {
    let (matrices, assignment) = (&syn.matrices, &syn.full_assignment);
    let (ni, nc) = (syn.num_inputs, syn.num_constraints);
    let want = LibsnarkReduction::witness_map_from_matrices::<F, GeneralEvaluationDomain<F>>(
        matrices, ni, nc, assignment,
    )
    .unwrap();
    let runs = zkgpu_groth16::gpu_witness_maps();
    let got = GpuReduction::witness_map_from_matrices::<F, GeneralEvaluationDomain<F>>(
        matrices, ni, nc, assignment,
    )
    .unwrap();
    assert!(got == want, "{what}");
    assert!(
        zkgpu_groth16::gpu_witness_maps() > runs,
        "the witness map did not run on the GPU: {:?}",
        zkgpu_groth16::gpu_context().err()
    );
}

#[test]
fn bls12_381_witness_map() {
    witness_maps_agree::<ark_bls12_381::Fr>(1);
}

#[test]
fn bls12_377_witness_map() {
    witness_maps_agree::<ark_bls12_377::Fr>(2);
}

#[test]
fn bn254_witness_map() {
    witness_maps_agree::<ark_bn254::Fr>(5);
}

fn proofs_agree<E: Pairing>(seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let circuit = Chain::new(
        E::ScalarField::rand(&mut rng),
        300,
        vec![E::ScalarField::from(9u64)],
    );
    let pk =
        Groth16::<E>::generate_random_parameters_with_reduction(circuit.clone(), &mut rng).unwrap();
    let pvk = prepare_verifying_key(&pk.vk);
    let (r, s) = (
        E::ScalarField::rand(&mut rng),
        E::ScalarField::rand(&mut rng),
    );
    let cpu =
        Groth16::<E, LibsnarkReduction>::create_proof_with_reduction(circuit.clone(), &pk, r, s)
            .unwrap();
    let gpu = Groth16::<E, GpuReduction>::create_proof_with_reduction(circuit.clone(), &pk, r, s)
        .unwrap();
    assert!(gpu == cpu, "the same r and s give the same proof");
    assert!(Groth16::<E>::verify_proof(&pvk, &gpu, &circuit.public()).unwrap());
    let random = Groth16::<E, GpuReduction>::create_random_proof_with_reduction(
        circuit.clone(),
        &pk,
        &mut rng,
    )
    .unwrap();
    assert!(Groth16::<E>::verify_proof(&pvk, &random, &circuit.public()).unwrap());
    let mut wrong = circuit.public();
    wrong[0] += E::ScalarField::ONE;
    assert!(!Groth16::<E>::verify_proof(&pvk, &random, &wrong).unwrap());
}

#[test]
fn bls12_381_proofs() {
    proofs_agree::<ark_bls12_381::Bls12_381>(3);
}

#[test]
fn bls12_377_proofs() {
    proofs_agree::<ark_bls12_377::Bls12_377>(4);
}

#[test]
fn bn254_proofs() {
    proofs_agree::<ark_bn254::Bn254>(6);
}

/// An unsatisfied constraint system is an error on the GPU path (ark-groth16's CPU reduction
/// would return a quotient that is not one, and the proof would not verify).
#[test]
fn unsatisfied_is_an_error() {
    type F = ark_bls12_381::Fr;
    let mut circuit = Chain::new(F::from(3u64), 40, vec![]);
    circuit.corrupt = Some(5);
    let cs = synthesize(circuit).unwrap().cs;
    assert!(!cs.is_satisfied().unwrap());
    let got = GpuReduction::witness_map::<F, GeneralEvaluationDomain<F>>(cs);
    assert!(matches!(got, Err(SynthesisError::Unsatisfiable)), "{got:?}");
}

/// A context handed to `GpuReduction::use_context` is the one the reduction runs on (no
/// second device), and arkworks' prover still gets the same quotient through it.
#[test]
fn reduction_runs_on_the_given_context() {
    type F = ark_bls12_381::Fr;
    let ctx = zkgpu_testing::new_context();
    GpuReduction::use_context(&ctx);
    assert_eq!(zkgpu_groth16::gpu_context().unwrap().id(), ctx.id());
    let syn = synthesize(Chain::new(F::from(7u64), 50, vec![F::from(2u64)])).unwrap();
    gpu_witness_map_is_arkworks(&syn, "on the given context");
}
