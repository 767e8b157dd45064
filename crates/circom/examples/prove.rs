//! A snarkjs key and witness proved on the GPU, checked against the CPU prover and the key's
//! verifying key, and printed as snarkjs' proof.json / public.json.
//!
//! `cargo run --release -p zkgpu-circom --example prove [-- circuit.zkey witness.wtns]`
//! (default: the Merkle-path fixture of crates/circom/tests/fixtures).

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;

use ark_bn254::{Bn254, Fr};
use ark_ff::UniformRand;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_groth16::GpuProver;
use zkgpu_runtime::GpuContext;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut args = std::env::args().skip(1);
    let zkey = args
        .next()
        .map_or(fixtures.join("merkle.zkey"), PathBuf::from);
    let wtns = args
        .next()
        .map_or(fixtures.join("merkle.wtns"), PathBuf::from);

    let key = zkgpu_circom::read_zkey(&std::fs::read(&zkey)?)?;
    let values = zkgpu_circom::read_wtns(&std::fs::read(&wtns)?)?;
    eprintln!(
        "{}: {} constraints, {} public signals",
        zkey.display(),
        key.num_constraints(),
        key.num_public
    );

    let ctx = GpuContext::from_env_blocking()?;
    let prover = GpuProver::<Bn254>::new(&ctx)?;
    let prepared = key.prepare(&prover)?;
    // Fixed r and s so that the CPU proof can be compared; a real prover draws them at random.
    let mut rng = StdRng::seed_from_u64(1);
    let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
    let out = zkgpu_circom::prove_with_randomness(&prover, &prepared, values.clone(), r, s)?;
    let cpu = zkgpu_circom::reference_proof(&key, &values, r, s)?;
    let verified = zkgpu_circom::verify(&key.proving_key.vk, &out.proof, &out.public_signals)?;
    eprintln!(
        "GPU proof in {:.1} ms; equal to the CPU prover's: {}; verifies: {verified}",
        out.timings.total * 1e3,
        out.proof == cpu
    );
    print!("{}", zkgpu_circom::proof_json(&out.proof));
    print!("{}", zkgpu_circom::public_json(&out.public_signals));
    if out.proof != cpu || !verified {
        return Err("the GPU proof is wrong".into());
    }
    Ok(())
}
