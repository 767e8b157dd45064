//! The page's circom API natively, on whatever adapter wgpu finds: snarkjs-shaped proofs of
//! the fixtures equal to the CPU prover's for the same seed and verified; bad witnesses and
//! seeds refused.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use std::sync::OnceLock;

use zkgpu_runtime::{BlockOn, GpuContext};
use zkgpu_web::circom::CircomProver;

fn context() -> &'static GpuContext {
    static CTX: OnceLock<GpuContext> = OnceLock::new();
    CTX.get_or_init(|| GpuContext::from_env_blocking().unwrap())
}

fn fixture(name: &str) -> Vec<u8> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../crates/circom/tests/fixtures");
    std::fs::read(dir.join(name)).unwrap()
}

#[test]
fn snarkjs_shaped_proofs_equal_the_cpu_provers_and_verify() {
    let ctx = context();
    let p = CircomProver::load(ctx, &fixture("merkle.zkey"))
        .block_on()
        .unwrap();
    assert_eq!(p.num_constraints(), 2080);
    let wtns = fixture("merkle.wtns");
    for seed in [[7u8; 32], [0; 32]] {
        let out = p.prove(&wtns, &seed).block_on().unwrap();
        assert_eq!(out.proof, p.reference(&wtns, &seed).unwrap());
        assert_eq!(out.proof["protocol"], "groth16");
        assert_eq!(out.proof["curve"], "bn128");
        assert_eq!(out.public_signals.len(), 2);
        assert_eq!(out.public_signals[1], "7");
        let public = serde_json::to_string(&out.public_signals).unwrap();
        let proof = out.proof.to_string();
        assert!(p.verify(&public, &proof).unwrap());
        let wrong = public.replace("\"7\"", "\"8\"");
        assert!(!p.verify(&wrong, &proof).unwrap());
    }
}

#[test]
fn bad_keys_witnesses_and_seeds_are_refused() {
    let ctx = context();
    let e = CircomProver::load(ctx, &fixture("merkle.wtns"))
        .block_on()
        .unwrap_err();
    assert!(e.message.contains("not a .zkey"), "{e}");
    assert_eq!(e.code, "INVALID_KEY");
    assert_eq!(
        CircomProver::load_cpu(&fixture("merkle.wtns"))
            .unwrap_err()
            .code,
        "INVALID_KEY"
    );
    let p = CircomProver::load(ctx, &fixture("multiplier.zkey"))
        .block_on()
        .unwrap();
    let e = p
        .prove(&fixture("merkle.wtns"), &[1; 32])
        .block_on()
        .unwrap_err();
    assert!(e.message.contains("2086 values"), "{e}");
    assert_eq!(e.code, "WITNESS_MISMATCH");
    let e = p
        .prove(&fixture("multiplier.wtns"), &[1; 31])
        .block_on()
        .unwrap_err();
    assert!(e.message.contains("31 bytes"), "{e}");
    assert_eq!(e.code, "INVALID_INPUT");
    let e = p
        .prove(&fixture("merkle.zkey"), &[1; 32])
        .block_on()
        .unwrap_err();
    assert!(e.message.contains("not a .wtns"), "{e}");
    assert_eq!(e.code, "INVALID_WITNESS");
}

#[test]
fn the_cpu_backend_proves_what_the_gpu_does_and_refuses_alike() {
    let gpu = CircomProver::load(context(), &fixture("merkle.zkey"))
        .block_on()
        .unwrap();
    let cpu = CircomProver::load_cpu(&fixture("merkle.zkey")).unwrap();
    assert_eq!((gpu.backend(), cpu.backend()), ("webgpu", "cpu"));
    let wtns = fixture("merkle.wtns");
    let seed = [3u8; 32];
    let (a, b) = (
        gpu.prove(&wtns, &seed).block_on().unwrap(),
        cpu.prove(&wtns, &seed).block_on().unwrap(),
    );
    assert_eq!(a.proof, b.proof);
    assert_eq!(a.public_signals, b.public_signals);
    assert_eq!((a.backend, b.backend), ("webgpu", "cpu"));
    assert!(b.times.prove_ms > 0.0 && b.times.verify_ms > 0.0);
    let json = serde_json::to_value(&b).unwrap();
    assert_eq!(json["backend"], "cpu");
    assert!(json["times"]["proveMs"].is_number());
    // A witness changed in one private value satisfies no constraint system: both refuse it.
    let mut values = zkgpu_circom::read_wtns::<ark_bn254::Fr>(&wtns).unwrap();
    let last = values.len() - 1;
    values[last] += ark_bn254::Fr::from(1u64);
    let bad = zkgpu_circom::write_wtns(&values);
    for p in [&gpu, &cpu] {
        let e = p.prove(&bad, &seed).block_on().unwrap_err();
        assert_eq!(e.code, "NOT_SATISFIED", "{} backend: {e}", p.backend());
    }
    let e = cpu
        .prove(&fixture("multiplier.wtns"), &seed)
        .block_on()
        .unwrap_err();
    assert_eq!(e.code, "WITNESS_MISMATCH");
}
