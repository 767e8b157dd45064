//! One MSM split across every GPU of the host: `cargo run --release --example multi_gpu -p
//! zkgpu-msm`.
//!
//! Opens every suitable adapter (`ZKGPU_DEVICES` narrows it: a count, or `adapters:0,1`;
//! `adapters:0,0` opens two contexts on one adapter, as on a machine with one GPU), measures
//! each device's speed on a sample, splits the bases in proportion, and checks the sum
//! against arkworks.

use std::time::Duration;

use ark_bls12_381::{Fr, G1Affine, G1Projective};
use ark_ec::{CurveGroup, VariableBaseMSM};
use ark_ff::UniformRand;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_msm::{MsmConfig, MultiMsm};
use zkgpu_runtime::{ContextOptions, DeviceChoice, DeviceSet};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 1 << 12;
    let mut rng = StdRng::seed_from_u64(1);
    let bases: Vec<G1Affine> = (0..n)
        .map(|_| G1Projective::rand(&mut rng).into_affine())
        .collect();
    let scalars: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();

    let choice = DeviceChoice::from_env_or(DeviceChoice::All)?;
    let devices = DeviceSet::open_blocking(ContextOptions::from_env()?, &choice)?;
    for ctx in devices.contexts() {
        eprintln!("GPU: {} ({:?})", ctx.info().name, ctx.info().backend);
    }
    let mut msm = MultiMsm::<zkgpu_curves::Bls12_381G1>::new(&devices)?;
    let weights = msm.calibrate(&bases[..1024], &scalars[..1024], Duration::ZERO, 1)?;
    let split = msm.prepare(&bases)?;
    eprintln!("weights {weights:.1?}: points {:?}", split.ranges());
    let out = msm.run(&split, &scalars, MsmConfig::default())?;
    if out.sum != G1Projective::msm_unchecked(&bases, &scalars) {
        return Err("the split sum differs from arkworks'".into());
    }
    eprintln!(
        "{n}-point MSM across {} device(s) equals arkworks'",
        devices.len()
    );
    Ok(())
}
