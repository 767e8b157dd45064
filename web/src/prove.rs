//! A Groth16 proof on the page's GPU: Poseidon Merkle paths of `zkgpu-circuits`, a proving
//! key made with ark-groth16 in the same module, the key prepared and the proof made with
//! `GpuProver::prepare_for_async` and `prove_async` (one thread, no blocking wait), checked
//! against ark-groth16's proof for the same `r` and `s` and verified.

use ark_bls12_381::{Bls12_381, Fr};
use ark_ff::UniformRand;
use ark_groth16::{Groth16, prepare_verifying_key};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use web_time::Instant;
use zkgpu_circuits::MerklePaths;
use zkgpu_groth16::GpuProver;
use zkgpu_runtime::GpuContext;

use crate::{Row, ms};

/// Proves `depth`-deep Merkle paths, as many as fit a domain of `2^log_constraints`, twice
/// on the GPU (the first proof builds the pipelines), and once with ark-groth16. The row's
/// `n` is the domain size; `ok` when both GPU proofs equal ark-groth16's and verify.
pub async fn prove_merkle(
    ctx: &GpuContext,
    log_constraints: u32,
    depth: usize,
) -> Result<Row, String> {
    if !(10..=16).contains(&log_constraints) || !(1..=20).contains(&depth) {
        return Err(format!(
            "a proof of 2^{log_constraints} constraints and depth {depth} is beyond this page \
             (2^10..2^16, depth 1..20)"
        ));
    }
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let mut rng = StdRng::seed_from_u64(0x6e0f_2a71);
    let paths = MerklePaths::<Fr>::paths_for(log_constraints, depth).map_err(|x| e(&x))?;
    let circuit = MerklePaths::<Fr>::random(paths, depth, &mut rng);
    let public = circuit.public_inputs();
    let pk =
        Groth16::<Bls12_381>::generate_random_parameters_with_reduction(circuit.clone(), &mut rng)
            .map_err(|x| e(&x))?;
    let pvk = prepare_verifying_key(&pk.vk);
    // No window multiples: computing them is seconds of GPU work on a slow adapter, for a
    // key the page uses twice.
    let prover = GpuProver::<Bls12_381>::new(ctx)
        .map_err(|x| e(&x))?
        .with_folding(false);
    let prepared = prover
        .prepare_for_async(&pk, circuit.clone())
        .await
        .map_err(|x| e(&x))?;
    let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
    let mut times = [0.0; 2];
    let mut proofs = Vec::new();
    for time in &mut times {
        let t = Instant::now();
        let (proof, _) = prover
            .prove_async(&prepared, circuit.clone(), r, s)
            .await
            .map_err(|x| e(&x))?;
        *time = ms(t);
        proofs.push(proof);
    }
    let t = Instant::now();
    let want =
        Groth16::<Bls12_381>::create_proof_with_reduction(circuit, &pk, r, s).map_err(|x| e(&x))?;
    let cpu_ms = ms(t);
    let verified = proofs
        .iter()
        .all(|p| Groth16::<Bls12_381>::verify_proof(&pvk, p, &public).unwrap_or(false));
    Ok(Row {
        what: format!("Groth16 proof, Merkle paths ({paths} of depth {depth})"),
        n: prepared.domain_size(),
        first_ms: times[0],
        gpu_ms: times[1],
        cpu_ms,
        ok: verified && proofs.iter().all(|p| *p == want),
    })
}
