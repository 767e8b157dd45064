//! `field/bls12_381_fq/{gpu,ark}/mul_chain/2^k`: dependent Montgomery multiplications.

#![allow(clippy::unwrap_used)]

use ark_bls12_381::Fq;
use ark_ff::UniformRand;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use criterion::{Criterion, criterion_group, criterion_main};
use zkgpu_kernels::field::{FieldKernels, FieldOp};
use zkgpu_limbs::encode_slice;
use zkgpu_runtime::BlockOn;
use zkgpu_runtime::{Checks, GpuContext};
use zkgpu_shaders::FieldModule;

fn env_u32(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn bench(c: &mut Criterion) {
    let ctx = GpuContext::from_env_blocking().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("adapter: {} ({:?})", ctx.info().name, ctx.info().backend);
    let log_n = env_u32("ZKGPU_BENCH_LOG_N", 16);
    let reps = env_u32("ZKGPU_BENCH_REPS", 64);
    let n = 1usize << log_n;
    let mut rng = StdRng::seed_from_u64(1);
    let a: Vec<Fq> = (0..n).map(|_| Fq::rand(&mut rng)).collect();
    let b: Vec<Fq> = (0..n).map(|_| Fq::rand(&mut rng)).collect();
    let (ea, eb) = (encode_slice(&a), encode_slice(&b));
    let k = FieldKernels::new(&ctx, FieldModule::Bls12_381Fq);
    // Build the pipeline before timing.
    k.run(
        FieldOp::MulChain { reps },
        &ea[..30],
        &eb[..30],
        Checks::Default,
    )
    .block_on()
    .unwrap();

    let mut g = c.benchmark_group("field/bls12_381_fq");
    g.sample_size(10);
    g.bench_function(format!("gpu/mul_chain/2^{log_n}"), |bench| {
        bench.iter(|| {
            k.run(FieldOp::MulChain { reps }, &ea, &eb, Checks::Default)
                .block_on()
                .unwrap()
        });
    });
    g.bench_function(format!("ark/mul_chain/2^{log_n}"), |bench| {
        bench.iter(|| {
            a.iter()
                .zip(&b)
                .map(|(x, y)| {
                    let mut v = *x;
                    for _ in 0..reps {
                        v *= y;
                    }
                    v
                })
                .fold(Fq::from(0u64), |s, v| s + v)
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
