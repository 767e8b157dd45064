//! The page's proving API (`zkgpu_web::api`, what `web/zkgpu.js` calls) on the native
//! adapter (lavapipe in CI): a key passed as bytes proves inputs passed as JSON, the proof
//! equals ark-groth16's for the same seed and verifies, and every malformed key, input,
//! seed or proof is refused with a reason.

#![allow(clippy::unwrap_used)]

use ark_bls12_381::Fr;
use ark_ff::{Field, PrimeField};
use zkgpu_runtime::GpuContext;
use zkgpu_web::api::{MerkleInputs, Prover, merkle_key, read_key};

const SEED: [u8; 32] = [3; 32];

fn prover(ctx: &GpuContext, paths: usize, depth: usize) -> Prover {
    let key = merkle_key(paths, depth, 11).unwrap();
    pollster::block_on(Prover::load(ctx, &key)).unwrap()
}

#[test]
fn key_bytes_and_json_inputs_prove_as_ark_groth16() {
    let ctx = GpuContext::from_env_blocking().unwrap_or_else(|e| panic!("{e}"));
    let p = prover(&ctx, 2, 2);
    // Edge values in the leaves: zero, one and r - 1.
    let mut inputs = MerkleInputs::random(2, 2, 5);
    inputs.paths[0].leaf[0] = "0".into();
    inputs.paths[0].leaf[1] = "1".into();
    inputs.paths[1].leaf[3] = (-Fr::ONE).to_string();
    let json = inputs.to_json();
    assert_eq!(MerkleInputs::from_json(&json).unwrap(), inputs);
    let want_public: Vec<String> = inputs
        .circuit()
        .unwrap()
        .public_inputs()
        .iter()
        .map(Fr::to_string)
        .collect();
    for _ in 0..2 {
        let proved = pollster::block_on(p.prove(&json, &SEED)).unwrap();
        assert_eq!(proved.proof.len(), 192);
        assert_eq!(proved.proof, p.reference(&json, &SEED).unwrap());
        assert_eq!(proved.public_inputs, want_public);
        assert!(p.verify(&proved.public_inputs, &proved.proof).unwrap());
        assert!(proved.times.total_ms > 0.0 && proved.times.gpu_ms > 0.0);
        // Another root, or a proof of other inputs, does not verify.
        let mut other = proved.public_inputs.clone();
        other[1] = "12345".into();
        assert!(!p.verify(&other, &proved.proof).unwrap());
    }
    // Another seed, another proof of the same statement.
    let other = pollster::block_on(p.prove(&json, &[4; 32])).unwrap();
    assert_ne!(other.proof, p.reference(&json, &SEED).unwrap());
    assert!(p.verify(&other.public_inputs, &other.proof).unwrap());
}

#[test]
fn malformed_keys_inputs_seeds_and_proofs_are_refused() {
    let ctx = GpuContext::from_env_blocking().unwrap_or_else(|e| panic!("{e}"));
    let key = merkle_key(1, 2, 11).unwrap();
    assert!(read_key(&key).is_ok());
    for bad in [&[][..], &key[..key.len() / 2], &[0xff; 64][..]] {
        let e = pollster::block_on(Prover::load(&ctx, bad)).unwrap_err();
        assert!(e.message.starts_with("proving key:"), "{e}");
        assert_eq!(e.code, "INVALID_KEY");
    }
    let p = pollster::block_on(Prover::load(&ctx, &key)).unwrap();
    let good = MerkleInputs::random(1, 2, 5);
    let prove = |inputs: &str| pollster::block_on(p.prove(inputs, &SEED));
    let edit = |f: &dyn Fn(&mut MerkleInputs)| {
        let mut i = good.clone();
        f(&mut i);
        i.to_json()
    };
    let modulus = Fr::MODULUS.to_string();
    let cases: Vec<(String, &str)> = vec![
        ("{".into(), "inputs:"),
        (r#"{"paths":[]}"#.into(), "no paths"),
        (r#"{"paths":[],"extra":1}"#.into(), "unknown field"),
        (
            edit(&|i| i.paths[0].leaf[0] = modulus.clone()),
            "not a canonical",
        ),
        (
            edit(&|i| i.paths[0].leaf[0] = "-1".into()),
            "not a canonical",
        ),
        (
            edit(&|i| i.paths[0].leaf[0] = "01".into()),
            "not a canonical",
        ),
        (
            edit(&|i| i.paths[0].leaf[0] = "0x1".into()),
            "not a canonical",
        ),
        (
            edit(&|i| i.paths[0].leaf[0] = String::new()),
            "not a canonical",
        ),
        (
            edit(&|i| i.paths[0].leaf.pop().map(drop).unwrap()),
            "leaf elements",
        ),
        (edit(&|i| i.paths[0].is_right.push(true)), "directions"),
        // Inputs of another shape than the key's circuit: a deeper path, two paths.
        (
            MerkleInputs::random(1, 3, 5).to_json(),
            "does not fit this circuit",
        ),
        (
            MerkleInputs::random(2, 2, 5).to_json(),
            "does not fit this circuit",
        ),
    ];
    for (inputs, why) in &cases {
        let e = prove(inputs).unwrap_err();
        assert!(e.message.contains(why), "{inputs}: {e}");
        assert_eq!(e.code, "INVALID_INPUT", "{inputs}: {e}");
    }
    let e = pollster::block_on(p.prove(&good.to_json(), &[1; 31])).unwrap_err();
    assert!(e.message.contains("31 bytes"), "{e}");
    assert_eq!(e.code, "INVALID_INPUT");
    // The key still proves after every refusal.
    let proved = prove(&good.to_json()).unwrap();
    assert!(p.verify(&proved.public_inputs, &proved.proof).unwrap());
    assert!(
        p.verify(&proved.public_inputs, &proved.proof[..100])
            .is_err()
    );
    assert!(p.verify(&[modulus], &proved.proof).is_err());
    // Too few public inputs: an error or a rejection, never an acceptance.
    assert!(!matches!(p.verify(&[], &proved.proof), Ok(true)));
}
