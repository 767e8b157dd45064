//! `ntt/<field>/{gpu,gpu_resident,ark}/<transform>/2^k`, for fft, ifft and coset fft:
//! - `gpu`: end to end from an arkworks vector in host memory and back (upload, transform,
//!   download; `GpuNtt::transform` on a fresh upload);
//! - `gpu_resident`: the transform alone on data kept on the GPU (submit to done), as the
//!   Groth16 witness map runs it;
//! - `ark`: ark-poly's `fft_in_place` / `ifft_in_place` on the same input, on the machine's
//!   CPU threads.
//!
//! `ZKGPU_BENCH_LOG_N` (comma-separated, default `12`; `16,20,24` on a real GPU) picks the
//! sizes, `ZKGPU_BENCH_FIELDS` (default `bls12-381`; also `bls12-377`) the scalar fields.
//! Pipelines are built, and each GPU result is checked against ark-poly, before timing.

#![allow(clippy::unwrap_used)]

use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use zkgpu_benches::env_list;
use zkgpu_ntt::{Direction, GpuNtt, NttField};
use zkgpu_runtime::BlockOn;
use zkgpu_runtime::GpuContext;

fn field<F: NttField>(c: &mut Criterion, ctx: &GpuContext, name: &str, sizes: &[u32]) {
    let ntt = GpuNtt::<F>::new(ctx);
    ntt.warm_up().block_on().unwrap();
    let mut g = c.benchmark_group(format!("ntt/{name}"));
    g.sample_size(10);
    for &log_n in sizes {
        let n = 1usize << log_n;
        let mut rng = StdRng::seed_from_u64(u64::from(log_n));
        let input: Vec<F> = (0..n).map(|_| F::rand(&mut rng)).collect();
        let domain = Radix2EvaluationDomain::<F>::new(n).unwrap();
        let coset = domain.get_coset(F::GENERATOR).unwrap();
        let size = format!("2^{log_n}");
        for (what, dom, dir) in [
            ("fft", domain, Direction::Forward),
            ("ifft", domain, Direction::Inverse),
            ("coset_fft", coset, Direction::Forward),
        ] {
            let cpu = |v: &mut Vec<F>| match dir {
                Direction::Forward => dom.fft_in_place(v),
                Direction::Inverse => dom.ifft_in_place(v),
            };
            let mut want = input.clone();
            cpu(&mut want);
            let mut dv = ntt.upload(&input).unwrap();
            ntt.transform(&mut dv, &dom, dir).block_on().unwrap();
            assert_eq!(
                ntt.download(&dv, 0).block_on().unwrap(),
                want,
                "{name} {what} 2^{log_n}: GPU result differs"
            );
            g.bench_function(BenchmarkId::new(format!("gpu/{what}"), &size), |b| {
                b.iter(|| {
                    let mut dv = ntt.upload(&input).unwrap();
                    ntt.transform(&mut dv, &dom, dir).block_on().unwrap();
                    ntt.download(&dv, 0).block_on().unwrap()
                });
            });
            g.bench_function(
                BenchmarkId::new(format!("gpu_resident/{what}"), &size),
                |b| {
                    b.iter(|| ntt.transform(&mut dv, &dom, dir).block_on().unwrap());
                },
            );
            g.bench_function(BenchmarkId::new(format!("ark/{what}"), &size), |b| {
                b.iter_batched_ref(
                    || input.clone(),
                    |v| cpu(v),
                    criterion::BatchSize::LargeInput,
                );
            });
        }
    }
    g.finish();
}

fn bench(c: &mut Criterion) {
    let ctx = GpuContext::from_env_blocking().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("adapter: {} ({:?})", ctx.info().name, ctx.info().backend);
    let sizes: Vec<u32> = env_list("ZKGPU_BENCH_LOG_N", "12")
        .iter()
        .map(|s| {
            s.parse()
                .unwrap_or_else(|_| panic!("ZKGPU_BENCH_LOG_N: bad size {s:?}"))
        })
        .collect();
    for name in env_list("ZKGPU_BENCH_FIELDS", "bls12-381") {
        match name.as_str() {
            "bls12-381" => field::<ark_bls12_381::Fr>(c, &ctx, &name, &sizes),
            "bls12-377" => field::<ark_bls12_377::Fr>(c, &ctx, &name, &sizes),
            "bn254" => field::<ark_bn254::Fr>(c, &ctx, &name, &sizes),
            other => panic!("ZKGPU_BENCH_FIELDS: unknown field {other:?}"),
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
