//! The single-threaded async prover (`GpuProver::prepare_async`, `run`: what a
//! browser runs) on a device opened with exactly WebGPU's default limits, as a browser grants
//! them without asking: proofs equal to ark-groth16's for the same `r` and `s`, with the
//! key's matrices given, learned from the first proof, and with window multiples stored
//! (the path whose chunk sums once outgrew a 128 MiB binding); with waits that block and
//! with waits that yield, as a browser's do (the witness map joined with the MSMs).

#![allow(clippy::unwrap_used)]

use crate::common;

use ark_ff::UniformRand;
use ark_groth16::{Groth16, prepare_verifying_key};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use common::{Chain, layout};
use zkgpu_groth16::{GpuPairing, GpuProver, ProveError, ProveRequest};
use zkgpu_runtime::{BlockOn, ContextOptions, GpuContext};

fn webgpu_default_context() -> GpuContext {
    let ctx = GpuContext::new_blocking(ContextOptions::webgpu_default_from_env().unwrap())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ctx.limits(), &zkgpu_runtime::wgpu::Limits::default());
    ctx
}

fn async_proofs_equal_arkworks<E: GpuPairing>(seed: u64, fold: bool, yielding: bool) {
    let ctx = webgpu_default_context();
    ctx.set_yielding_waits(yielding);
    let prover = GpuProver::<E>::new(&ctx)
        .unwrap()
        .with_key_layout(layout(fold));
    let mut rng = StdRng::seed_from_u64(seed);
    let x = E::ScalarField::rand(&mut rng);
    let circuit = Chain::new(x, 900, vec![E::ScalarField::from(5u64)]);
    let pk =
        Groth16::<E>::generate_random_parameters_with_reduction(circuit.clone(), &mut rng).unwrap();
    let pvk = prepare_verifying_key(&pk.vk);
    let given = prover
        .prepare_for_async(&pk, circuit.clone())
        .block_on()
        .unwrap();
    assert!(given.matrices().is_some());
    assert_eq!(given.folds().0 > 1, fold, "{:?}", given.folds());
    let learned = prover.prepare_async(&pk).block_on().unwrap();
    assert!(learned.matrices().is_none());
    for (k, prepared) in [&given, &learned, &learned].into_iter().enumerate() {
        let (r, s) = (
            E::ScalarField::rand(&mut rng),
            E::ScalarField::rand(&mut rng),
        );
        let want = Groth16::<E>::create_proof_with_reduction(circuit.clone(), &pk, r, s).unwrap();
        let (got, t) = prover
            .run_async(ProveRequest::circuit(prepared, circuit.clone(), (r, s)))
            .block_on()
            .unwrap();
        assert!(got == want, "proof {k} differs from ark-groth16's");
        assert!(Groth16::<E>::verify_proof(&pvk, &got, &circuit.public()).unwrap());
        assert!(t.msm_h > 0.0 && t.msm_a_b_l > 0.0 && t.msm_b_g2 > 0.0 && t.witness_map > 0.0);
        // The first proof against the key without matrices builds them; later ones do not.
        assert_eq!(t.built_matrices, k == 1, "proof {k}");
    }
    assert!(learned.matrices().is_some());
    // A witness that does not satisfy the circuit is a typed error on this path too.
    let mut bad = circuit.clone();
    bad.corrupt = Some(7);
    let r = E::ScalarField::rand(&mut rng);
    let got = prover
        .run_async(ProveRequest::circuit(&learned, bad, (r, r)))
        .block_on();
    assert!(
        matches!(got, Err(ProveError::Unsatisfied { .. })),
        "{got:?}"
    );
}

#[test]
fn bls12_381_async_under_webgpu_limits() {
    async_proofs_equal_arkworks::<ark_bls12_381::Bls12_381>(1, false, true);
}

#[test]
fn bls12_377_async_folded_under_webgpu_limits() {
    async_proofs_equal_arkworks::<ark_bls12_377::Bls12_377>(2, true, false);
}
