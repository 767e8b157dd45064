//! A Groth16 proof through the page's proving API ([`crate::api`]): Poseidon Merkle paths of
//! `zkgpu-circuits`, a proving key made with ark-groth16 and passed as bytes, proved twice
//! on the GPU with `GpuProver::run` (one thread, no blocking wait), each proof
//! checked against ark-groth16's for the same `r` and `s` and verified. The page does the
//! same from JavaScript (`web/zkgpu.js`); this is its native twin for the tests.

use ark_bls12_381::Fr;
use web_time::Instant;
use zkgpu_circuits::MerklePaths;
use zkgpu_runtime::GpuContext;

use crate::api::{MerkleInputs, Prover, merkle_key};
use crate::{Row, ms};

/// The seeds of the key, the inputs and the randomness of the page's proof.
pub const KEY_SEED: u64 = 0x6e0f_2a71;
/// The inputs' seed.
pub const INPUTS_SEED: u64 = 0x51ab_77c3;
/// `r` and `s` come from this fixed seed, so the proof can equal ark-groth16's.
pub const RANDOMNESS: [u8; 32] = [7; 32];

/// The number of `depth`-deep paths in a domain of `2^log_constraints`, for the page's sizes
/// (2^10..2^16, depth 1..20).
pub fn paths_for(log_constraints: u32, depth: usize) -> Result<usize, String> {
    if !(10..=16).contains(&log_constraints) || !(1..=20).contains(&depth) {
        return Err(format!(
            "a proof of 2^{log_constraints} constraints and depth {depth} is beyond this page \
             (2^10..2^16, depth 1..20)"
        ));
    }
    MerklePaths::<Fr>::paths_for(log_constraints, depth).map_err(|e| e.to_string())
}

/// Proves `depth`-deep Merkle paths, as many as fit a domain of `2^log_constraints`, twice
/// on the GPU (the first proof builds the pipelines and learns the matrices), and once with
/// ark-groth16. The row's `n` is the domain size; `ok` when both GPU proofs equal
/// ark-groth16's and verify.
pub async fn prove_merkle(
    ctx: &GpuContext,
    log_constraints: u32,
    depth: usize,
) -> Result<Row, String> {
    let paths = paths_for(log_constraints, depth)?;
    let key = merkle_key(paths, depth, KEY_SEED)?;
    let prover = Prover::load(ctx, &key).await?;
    let inputs = MerkleInputs::random(paths, depth, INPUTS_SEED).to_json();
    let mut times = [0.0; 2];
    let mut proofs = Vec::new();
    for time in &mut times {
        let proved = prover.prove(&inputs, &RANDOMNESS).await?;
        *time = proved.times.total_ms;
        proofs.push(proved);
    }
    let t = Instant::now();
    let want = prover.reference(&inputs, &RANDOMNESS)?;
    let cpu_ms = ms(t);
    let mut ok = true;
    for p in &proofs {
        ok &= p.proof == want && prover.verify(&p.public_inputs, &p.proof)?;
    }
    Ok(Row {
        what: format!("Groth16 proof, Merkle paths ({paths} of depth {depth})"),
        n: prover.domain_size(),
        first_ms: times[0],
        gpu_ms: times[1],
        cpu_ms,
        ok,
    })
}
