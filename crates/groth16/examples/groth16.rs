//! zkgpu as the prover backend of an arkworks Groth16 project:
//! `cargo run --release --example groth16 -p zkgpu-groth16`.
//!
//! A small circuit (knowledge of `x` with `x^(2^k) = y`), arkworks' setup, then:
//! - `GpuProver`: the key prepared once (and cached on disk, so a later run loads it), a
//!   proof equal to ark-groth16's for the same randomness, and a stream of proofs;
//! - `Groth16::<E, GpuReduction>`: arkworks' own prover with its witness map on the GPU.

use ark_bls12_381::{Bls12_381, Fr};
use ark_ff::{Field, UniformRand};
use ark_groth16::{Groth16, prepare_verifying_key};
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};
use ark_relations::lc;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_groth16::{GpuProver, GpuReduction};
use zkgpu_runtime::GpuContext;

/// `y = x^(2^squarings)`, `y` public.
#[derive(Clone)]
struct Squarings {
    x: Fr,
    squarings: usize,
}

impl Squarings {
    fn y(&self) -> Fr {
        (0..self.squarings).fold(self.x, |v, _| v.square())
    }
}

impl ConstraintSynthesizer<Fr> for Squarings {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        let y = cs.new_input_variable(|| Ok(self.y()))?;
        let (mut v, mut value) = (cs.new_witness_variable(|| Ok(self.x))?, self.x);
        for _ in 0..self.squarings {
            value = value.square();
            let next = cs.new_witness_variable(|| Ok(value))?;
            cs.enforce_r1cs_constraint(|| lc!() + v, || lc!() + v, || lc!() + next)?;
            v = next;
        }
        cs.enforce_r1cs_constraint(
            || lc!() + v,
            || lc!() + (Fr::ONE, ark_relations::gr1cs::Variable::One),
            || lc!() + y,
        )
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut rng = StdRng::seed_from_u64(1);
    let circuit = |rng: &mut StdRng| Squarings {
        x: Fr::rand(rng),
        squarings: 1000,
    };
    let pk = Groth16::<Bls12_381>::generate_random_parameters_with_reduction(
        circuit(&mut rng),
        &mut rng,
    )?;
    let pvk = prepare_verifying_key(&pk.vk);

    let ctx = GpuContext::from_env_blocking()?;
    eprintln!("GPU: {} ({:?})", ctx.info().name, ctx.info().backend);
    let prover = GpuProver::<Bls12_381>::new(&ctx)?;

    // The key's GPU form and the circuit's matrices, from a cache file when one is there.
    let dir = std::env::temp_dir().join("zkgpu-example-cache");
    let (prepared, outcome) = prover.prepare_cached_for(&pk, circuit(&mut rng), &dir)?;
    eprintln!("prepared key: {outcome:?}");

    // One proof: the same r and s give ark-groth16's proof.
    let c = circuit(&mut rng);
    let seed = 7;
    let proof = prover.prove(&prepared, c.clone(), &mut StdRng::seed_from_u64(seed))?;
    let ark = Groth16::<Bls12_381>::create_random_proof_with_reduction(
        c.clone(),
        &pk,
        &mut StdRng::seed_from_u64(seed),
    )?;
    if proof != ark || !Groth16::<Bls12_381>::verify_proof(&pvk, &proof, &[c.y()])? {
        return Err("the GPU proof differs from ark-groth16's".into());
    }

    // A stream: witnesses synthesized on CPU threads while the GPU proves.
    let circuits: Vec<_> = (0..4).map(|_| circuit(&mut rng)).collect();
    for (c, proof) in
        circuits
            .iter()
            .zip(prover.prove_stream(&prepared, circuits.clone(), &mut rng))
    {
        if !Groth16::<Bls12_381>::verify_proof(&pvk, &proof?, &[c.y()])? {
            return Err("a streamed proof does not verify".into());
        }
    }

    // arkworks' own prover, its witness map on the GPU.
    let c = circuit(&mut rng);
    let proof = Groth16::<Bls12_381, GpuReduction>::create_random_proof_with_reduction(
        c.clone(),
        &pk,
        &mut rng,
    )?;
    if !Groth16::<Bls12_381>::verify_proof(&pvk, &proof, &[c.y()])? {
        return Err("the GpuReduction proof does not verify".into());
    }
    eprintln!("GPU proofs verify and equal ark-groth16's");
    Ok(())
}
