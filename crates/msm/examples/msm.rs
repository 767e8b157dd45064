//! The MSM engine alone on arkworks types: `cargo run --release --example msm -p zkgpu-msm`.
//!
//! One MSM of random BLS12-381 G1 points and scalars on the GPU (whatever adapter wgpu finds;
//! `ZKGPU_ADAPTER` picks one), checked against arkworks' own `msm`, then the same bases
//! prepared once and reused for a second set of scalars.

use ark_bls12_381::{Fr, G1Affine, G1Projective};
use ark_ec::{CurveGroup, VariableBaseMSM};
use ark_ff::UniformRand;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_msm::GpuMsm;
use zkgpu_msm::{MsmOutput, MsmRequest};
use zkgpu_runtime::GpuContext;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 1 << 12;
    let mut rng = StdRng::seed_from_u64(1);
    let bases: Vec<G1Affine> = (0..n)
        .map(|_| G1Projective::rand(&mut rng).into_affine())
        .collect();
    let scalars: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();

    let ctx = GpuContext::from_env_blocking()?;
    eprintln!("GPU: {} ({:?})", ctx.info().name, ctx.info().backend);
    let msm = GpuMsm::<zkgpu_curves::Bls12_381G1>::new(&ctx)?;

    // One call: lengths checked as arkworks' `msm` checks them.
    let gpu = msm.msm(&bases, &scalars)?;
    let cpu = G1Projective::msm(&bases, &scalars).map_err(|n| format!("lengths differ: {n}"))?;
    if gpu != cpu {
        return Err("the GPU sum differs from arkworks'".into());
    }

    // Bases prepared once (a proving key's are fixed), many scalar vectors.
    let prepared = msm.prepare(&bases)?;
    let other: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
    let gpu = msm
        .run(MsmRequest::new(&prepared, &other))
        .and_then(MsmOutput::sum)?;
    if gpu != G1Projective::msm_unchecked(&bases, &other) {
        return Err("the prepared-bases sum differs from arkworks'".into());
    }
    eprintln!("{n}-point MSMs on the GPU equal arkworks'");
    Ok(())
}
