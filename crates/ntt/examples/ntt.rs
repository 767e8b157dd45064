//! The NTT engine alone on arkworks types: `cargo run --release --example ntt -p zkgpu-ntt`.
//!
//! A forward and an inverse transform of random BLS12-381 scalars on the GPU, checked against
//! ark-poly's `fft_in_place` and `ifft_in_place` over the same domain, and a coset transform.

use ark_bls12_381::Fr;
use ark_ff::{FftField, UniformRand};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_ntt::GpuNtt;
use zkgpu_runtime::GpuContext;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 1 << 12;
    let mut rng = StdRng::seed_from_u64(1);
    let values: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
    let domain = Radix2EvaluationDomain::<Fr>::new(n).ok_or("no domain of that size")?;

    let ctx = GpuContext::from_env_blocking()?;
    eprintln!("GPU: {} ({:?})", ctx.info().name, ctx.info().backend);
    let ntt = GpuNtt::<Fr>::new(&ctx);

    let mut gpu = values.clone();
    ntt.fft(&domain, &mut gpu)?;
    let mut cpu = values.clone();
    domain.fft_in_place(&mut cpu);
    if gpu != cpu {
        return Err("the GPU transform differs from ark-poly's".into());
    }
    ntt.ifft(&domain, &mut gpu)?;
    if gpu != values {
        return Err("the inverse transform does not give the values back".into());
    }

    // A coset domain: the same calls.
    let coset = domain.get_coset(Fr::GENERATOR).ok_or("no coset")?;
    let mut gpu = values.clone();
    ntt.fft(&coset, &mut gpu)?;
    let mut cpu = values;
    coset.fft_in_place(&mut cpu);
    if gpu != cpu {
        return Err("the GPU coset transform differs from ark-poly's".into());
    }
    eprintln!("{n}-point NTTs on the GPU equal ark-poly's");
    Ok(())
}
