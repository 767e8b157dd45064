//! circom proofs on the GPU (the adapter wgpu finds; lavapipe in CI): equal to the CPU
//! prover's (ark-groth16 with circom's reduction) for the same `r` and `s`, verified with the
//! verification key snarkjs exported; the witness map alone equal to the CPU's; bad witnesses
//! refused.

#![allow(clippy::unwrap_used)]

use crate::common;

use ark_bls12_381::Bls12_381;
use ark_bn254::{Bn254, Fr};
use ark_ff::{One, UniformRand, Zero};
use ark_groth16::r1cs_to_qap::R1CSToQAP;
use ark_poly::GeneralEvaluationDomain;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use common::{CIRCUITS, file, fixture, fixture_of, text};
use zkgpu_circom::{
    CircomCurve, CircomError, CircomReduction, prove, prove_async, prove_with_randomness,
    prove_with_randomness_async, read_verifying_key_json, read_wtns, read_zkey, reference_proof,
    verify,
};
use zkgpu_groth16::{
    CacheOutcome, GpuProver, ProveError, Qap, WitnessMapTimings, witness_map_rows_timed,
};
use zkgpu_ntt::GpuNtt;
use zkgpu_runtime::BlockOn;

#[test]
fn gpu_witness_map_equals_circoms_reduction_on_the_cpu() {
    gpu_witness_map::<Bn254>();
    gpu_witness_map::<Bls12_381>();
}

fn gpu_witness_map<E: CircomCurve>() {
    let ntt = GpuNtt::<E::ScalarField>::new(zkgpu_testing::shared_context());
    for (name, ..) in CIRCUITS {
        let key = read_zkey::<E>(&fixture_of::<E>(name, ".zkey")).unwrap();
        let w = read_wtns(&fixture_of::<E>(name, ".wtns")).unwrap();
        let m = key.matrices().unwrap();
        assert_eq!(m.qap(), Qap::Circom);
        let inputs = key.num_public + 1;
        let mut t = WitnessMapTimings::default();
        let gpu = witness_map_rows_timed(&ntt, &m, inputs, &w, &mut t)
            .block_on()
            .unwrap();
        let ab = [key.a().clone(), key.b().clone()];
        let cpu = CircomReduction::witness_map_from_matrices::<
            E::ScalarField,
            GeneralEvaluationDomain<E::ScalarField>,
        >(&ab, inputs, key.num_constraints(), &w)
        .unwrap();
        assert_eq!(gpu.len(), key.domain_size(), "{name}");
        assert_eq!(gpu, cpu, "{name}");
        assert!(
            gpu.iter().any(|x| !x.is_zero()),
            "{name}: an all-zero quotient"
        );
    }
}

#[test]
fn gpu_proofs_equal_the_cpu_provers_and_verify() {
    gpu_proofs::<Bn254>();
}

#[test]
fn bls12_381_gpu_proofs_equal_the_cpu_provers_and_verify() {
    gpu_proofs::<Bls12_381>();
}

fn gpu_proofs<E: CircomCurve>() {
    type F<E> = <E as ark_ec::pairing::Pairing>::ScalarField;
    let prover = GpuProver::<E>::new(zkgpu_testing::shared_context()).unwrap();
    let mut rng = StdRng::seed_from_u64(340);
    for (name, ..) in CIRCUITS {
        let key = read_zkey::<E>(&fixture_of::<E>(name, ".zkey")).unwrap();
        let vk = read_verifying_key_json::<E>(&text(&file::<E>(name, "_vkey.json"))).unwrap();
        let w = read_wtns(&fixture_of::<E>(name, ".wtns")).unwrap();
        let prepared = key.prepare(&prover).unwrap();
        assert_eq!(prepared.qap(), Qap::Circom);
        assert!(prepared.matrices().is_some());
        let rs = [
            (F::<E>::rand(&mut rng), F::<E>::rand(&mut rng)),
            (F::<E>::zero(), F::<E>::one()),
            (F::<E>::one(), F::<E>::zero()),
        ];
        for (k, (r, s)) in rs.into_iter().enumerate() {
            // The native path (two host threads) and the browser's (one, awaited in turn).
            let gpu = if k == 1 {
                prove_with_randomness_async(&prover, &prepared, w.clone(), r, s).block_on()
            } else {
                prove_with_randomness(&prover, &prepared, w.clone(), r, s)
            }
            .unwrap();
            let cpu = reference_proof(&key, &w, r, s).unwrap();
            assert_eq!(gpu.proof, cpu, "{name}, r s #{k}");
            assert_eq!(gpu.public_signals, w[1..=key.num_public], "{name}");
            assert!(
                verify(&vk, &gpu.proof, &gpu.public_signals).unwrap(),
                "{name}"
            );
        }
        // With an rng: r and s drawn as ark-groth16 draws them (r, then s).
        for (k, seed) in [(0, 7u64), (1, 8)] {
            let mut draw = StdRng::seed_from_u64(seed);
            let (r, s) = (F::<E>::rand(&mut draw), F::<E>::rand(&mut draw));
            let mut rng = StdRng::seed_from_u64(seed);
            let gpu = if k == 0 {
                prove(&prover, &prepared, w.clone(), &mut rng)
            } else {
                prove_async(&prover, &prepared, w.clone(), &mut rng).block_on()
            }
            .unwrap();
            assert_eq!(
                gpu.proof,
                reference_proof(&key, &w, r, s).unwrap(),
                "{name}, rng {seed}"
            );
        }
    }
}

#[test]
fn witnesses_of_other_circuits_or_unsatisfying_are_refused() {
    let prover = GpuProver::<Bn254>::new(zkgpu_testing::shared_context()).unwrap();
    let key = read_zkey::<Bn254>(&fixture("merkle.zkey")).unwrap();
    let prepared = key.prepare(&prover).unwrap();
    let w = read_wtns(&fixture("merkle.wtns")).unwrap();
    let (r, s) = (Fr::from(3u64), Fr::from(5u64));
    // The other circuit's witness.
    let other = read_wtns(&fixture("multiplier.wtns")).unwrap();
    let e = prove_with_randomness(&prover, &prepared, other, r, s).unwrap_err();
    assert!(matches!(e, CircomError::WitnessMismatch(_)), "{e}");
    // A constant signal that is not one.
    let mut bad = w.clone();
    bad[0] = Fr::from(2u64);
    let e = prove_with_randomness(&prover, &prepared, bad, r, s).unwrap_err();
    assert!(matches!(e, CircomError::WitnessMismatch(_)), "{e}");
    // A private signal changed (the first hash's input, the last signal, one in the middle):
    // the proof fails its own check and none is returned.
    for at in [key.num_public + 2, w.len() - 1, w.len() / 2] {
        let mut bad = w.clone();
        bad[at] += Fr::one();
        let e = prove_with_randomness(&prover, &prepared, bad, r, s).unwrap_err();
        assert!(matches!(e, CircomError::NotSatisfied), "{at}: {e}");
    }
    // A public signal changed alone: also refused.
    let mut bad = w.clone();
    bad[1] += Fr::one();
    let e = prove_with_randomness(&prover, &prepared, bad, r, s).unwrap_err();
    assert!(matches!(e, CircomError::NotSatisfied), "{e}");
    // The key still proves the right witness after all of that.
    let ok = prove_with_randomness(&prover, &prepared, w.clone(), r, s).unwrap();
    assert_eq!(ok.proof, reference_proof(&key, &w, r, s).unwrap());
}

#[test]
fn a_circom_key_is_refused_where_the_libsnark_shape_is_expected() {
    let prover = GpuProver::<Bn254>::new(zkgpu_testing::shared_context()).unwrap();
    let key = read_zkey::<Bn254>(&fixture("multiplier.zkey")).unwrap();
    // Its H query has n points, not n - 1: prepare (arkworks' reduction) refuses it.
    let e = prover.prepare(&key.proving_key).unwrap_err();
    assert!(matches!(e, ProveError::MalformedKey(_)), "{e}");
}

#[test]
fn prepared_circom_keys_round_trip_through_the_key_cache() {
    let prover = GpuProver::<Bn254>::new(zkgpu_testing::shared_context()).unwrap();
    let dir = std::env::temp_dir().join(format!("zkgpu-circom-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let zkey = fixture("merkle.zkey");
    let (first, outcome) = zkgpu_circom::prepare_cached(&prover, &zkey, &dir).unwrap();
    assert!(matches!(outcome, CacheOutcome::Created(_)), "{outcome:?}");
    let (loaded, outcome) = zkgpu_circom::prepare_cached(&prover, &zkey, &dir).unwrap();
    assert!(matches!(outcome, CacheOutcome::Loaded(_)), "{outcome:?}");
    assert_eq!(loaded.qap(), Qap::Circom);
    assert_eq!(loaded.matrices(), first.matrices());
    let key = read_zkey::<Bn254>(&zkey).unwrap();
    let w = read_wtns(&fixture("merkle.wtns")).unwrap();
    let (r, s) = (Fr::from(11u64), Fr::from(13u64));
    let out = prove_with_randomness(&prover, &loaded, w.clone(), r, s).unwrap();
    assert_eq!(out.proof, reference_proof(&key, &w, r, s).unwrap());
    // Another key's bytes go to another file; a damaged .zkey is its reader's error.
    let other = fixture("multiplier.zkey");
    let (_, outcome) = zkgpu_circom::prepare_cached(&prover, &other, &dir).unwrap();
    assert!(matches!(outcome, CacheOutcome::Created(_)), "{outcome:?}");
    let e = zkgpu_circom::prepare_cached(&prover, &zkey[..9000], &dir).unwrap_err();
    assert!(matches!(e, CircomError::Format { .. }), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn keys_made_from_the_r1cs_prove_on_the_gpu() {
    r1cs_keys_prove::<Bn254>();
    r1cs_keys_prove::<Bls12_381>();
}

fn r1cs_keys_prove<E: CircomCurve>() {
    let prover = GpuProver::<E>::new(zkgpu_testing::shared_context()).unwrap();
    let mut rng = StdRng::seed_from_u64(3401);
    let r1cs = zkgpu_circom::read_r1cs(&fixture_of::<E>("multiplier", ".r1cs")).unwrap();
    let key = zkgpu_circom::setup::<E>(&r1cs, &mut rng).unwrap();
    let prepared = key.prepare(&prover).unwrap();
    let w = read_wtns(&fixture_of::<E>("multiplier", ".wtns")).unwrap();
    let (r, s) = (
        E::ScalarField::rand(&mut rng),
        E::ScalarField::rand(&mut rng),
    );
    let gpu = prove_with_randomness(&prover, &prepared, w.clone(), r, s).unwrap();
    assert_eq!(gpu.proof, reference_proof(&key, &w, r, s).unwrap());
    assert!(verify(&key.proving_key.vk, &gpu.proof, &gpu.public_signals).unwrap());
}
