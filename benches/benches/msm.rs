//! `msm/<group>/{gpu,ark}/<distribution>/2^k`: one MSM against prepared bases, end to end from
//! arkworks scalars in host memory to the arkworks result (`GpuMsm::run`), beside
//! arkworks' `VariableBaseMSM::msm` on the same bases and scalars on the machine's CPU threads.
//!
//! `ZKGPU_BENCH_LOG_N` (comma-separated, default `10`; `16,20` on a real GPU) picks the sizes,
//! `ZKGPU_BENCH_GROUPS` (default `bls12-381-g1`; also `bls12-381-g2`, `bls12-377-g1`,
//! `bls12-377-g2`, `ed-on-bls12-377`) the groups. Pipelines are built, and each GPU result is
//! checked against arkworks, before timing.

#![allow(clippy::unwrap_used)]

use ark_ec::{CurveGroup, VariableBaseMSM};
use ark_ff::UniformRand;
use ark_std::rand::{Rng, SeedableRng, rngs::StdRng};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use zkgpu_benches::env_list;
use zkgpu_curves::GpuCurve;
use zkgpu_msm::GpuMsm;
use zkgpu_msm::{MsmOutput, MsmRequest};
use zkgpu_runtime::GpuContext;
use zkgpu_testing::distinct_bases;

fn group<C: GpuCurve>(c: &mut Criterion, ctx: &GpuContext, name: &str, sizes: &[u32])
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let msm = GpuMsm::<C>::new(ctx).unwrap();
    let mut g = c.benchmark_group(format!("msm/{name}"));
    g.sample_size(10);
    for &log_n in sizes {
        let n = 1usize << log_n;
        let mut rng = StdRng::seed_from_u64(u64::from(log_n));
        let bases = distinct_bases::<C>(n, &mut rng);
        let prepared = msm.prepare(&bases).unwrap();
        for dist in ["uniform", "skewed"] {
            // skewed: 80% of the scalars 0 or 1 (a circuit's boolean witnesses).
            let scalars: Vec<C::Scalar> = (0..n)
                .map(|_| {
                    if dist == "skewed" && rng.gen_bool(0.8) {
                        C::Scalar::from(rng.gen_range(0..2u64))
                    } else {
                        C::Scalar::rand(&mut rng)
                    }
                })
                .collect();
            let want = C::Projective::msm(&bases, &scalars).unwrap();
            let got = msm
                .run(MsmRequest::new(&prepared, &scalars))
                .and_then(MsmOutput::sum)
                .unwrap();
            assert_eq!(got, want, "{name} 2^{log_n} {dist}: GPU result differs");
            g.bench_function(
                BenchmarkId::new(format!("gpu/{dist}"), format!("2^{log_n}")),
                |b| {
                    b.iter(|| {
                        msm.run(MsmRequest::new(&prepared, &scalars))
                            .and_then(MsmOutput::sum)
                            .unwrap()
                    });
                },
            );
            g.bench_function(
                BenchmarkId::new(format!("ark/{dist}"), format!("2^{log_n}")),
                |b| {
                    b.iter(|| C::Projective::msm(&bases, &scalars).unwrap().into_affine());
                },
            );
        }
    }
    g.finish();
}

fn bench(c: &mut Criterion) {
    let ctx = GpuContext::from_env_blocking().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("adapter: {} ({:?})", ctx.info().name, ctx.info().backend);
    let sizes: Vec<u32> = env_list("ZKGPU_BENCH_LOG_N", "10")
        .iter()
        .map(|s| {
            s.parse()
                .unwrap_or_else(|_| panic!("ZKGPU_BENCH_LOG_N: bad size {s:?}"))
        })
        .collect();
    for name in env_list("ZKGPU_BENCH_GROUPS", "bls12-381-g1") {
        let g = zkgpu_curves::Group::from_name(&name)
            .unwrap_or_else(|e| panic!("ZKGPU_BENCH_GROUPS: {e}"));
        zkgpu_curves::with_group!(g, C => group::<C>(c, &ctx, &name, &sizes));
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
