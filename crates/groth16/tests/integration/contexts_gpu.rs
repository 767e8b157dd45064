//! A prepared key of one GPU context given to a prover of another: a typed error before any
//! GPU work, and both provers still prove correctly afterwards.

#![allow(clippy::unwrap_used)]

use crate::common;

use ark_ff::UniformRand;
use ark_groth16::Groth16;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use common::Chain;
use zkgpu_groth16::{GpuProver, ProveError, ProveRequest};
use zkgpu_runtime::GpuError;

type E = ark_bls12_381::Bls12_381;

#[test]
fn keys_of_another_context_are_refused() {
    let [a, b] = zkgpu_testing::shared_contexts();
    let (pa, pb) = (
        GpuProver::<E>::new(a).unwrap(),
        GpuProver::<E>::new(b).unwrap(),
    );
    let mut rng = StdRng::seed_from_u64(73);
    let circuit = Chain::new(ark_bls12_381::Fr::rand(&mut rng), 40, vec![]);
    let pk =
        Groth16::<E>::generate_random_parameters_with_reduction(circuit.clone(), &mut rng).unwrap();
    let on_a = pa.prepare_for(&pk, circuit.clone()).unwrap();
    let foreign = |r: Result<_, ProveError>| {
        assert!(
            matches!(r, Err(ProveError::Gpu(GpuError::ForeignContext { .. }))),
            "expected ForeignContext, got {r:?}"
        );
    };
    foreign(pb.prove(&on_a, circuit.clone(), &mut rng).map(|_| ()));
    let w = zkgpu_groth16::synthesize_witness(circuit.clone()).unwrap();
    foreign(
        pb.run(ProveRequest::witness(&on_a, w, (1u64.into(), 2u64.into())))
            .map(|_| ()),
    );
    let streamed: Vec<_> = pb
        .prove_stream(&on_a, vec![circuit.clone()], &mut rng)
        .collect();
    foreign(streamed.into_iter().next().unwrap().map(|_| ()));
    let path = std::env::temp_dir().join(format!("zkgpu-contexts-{}.zkgpk", std::process::id()));
    foreign(pb.save_prepared(&on_a, &path));

    // Both provers still prove arkworks' proof.
    let (r, s) = (
        ark_bls12_381::Fr::rand(&mut rng),
        ark_bls12_381::Fr::rand(&mut rng),
    );
    let want = Groth16::<E>::create_proof_with_reduction(circuit.clone(), &pk, r, s).unwrap();
    let (got, _) = pa
        .run(ProveRequest::circuit(&on_a, circuit.clone(), (r, s)))
        .unwrap();
    assert!(got == want);
    let on_b = pb.prepare(&pk).unwrap();
    let (got, _) = pb
        .run(ProveRequest::circuit(&on_b, circuit, (r, s)))
        .unwrap();
    assert!(got == want);
    a.check_device().unwrap();
    b.check_device().unwrap();
}
