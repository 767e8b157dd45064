//! An MSM on a device opened with exactly WebGPU's default limits (128 MiB per storage
//! binding, 8 storage buffers per stage, 16 KiB of workgroup memory), as a browser grants
//! without asking, with more bases than one binding holds: the bases are stored in two parts
//! and the result must still equal arkworks'.

#![allow(clippy::unwrap_used)]

use ark_ec::{CurveGroup, PrimeGroup, VariableBaseMSM};
use ark_ff::{UniformRand, Zero};
use ark_std::rand::{Rng, SeedableRng, rngs::StdRng};
use zkgpu_curves::{Bls12_381G1, GpuCurve};
use zkgpu_msm::GpuMsm;
use zkgpu_msm::{MsmOutput, MsmRequest};
use zkgpu_runtime::{ContextOptions, GpuContext};

type C = Bls12_381G1;

#[test]
fn msm_past_one_binding_under_webgpu_default_limits() {
    let ctx = GpuContext::new_blocking(ContextOptions::webgpu_default_from_env().unwrap())
        .unwrap_or_else(|e| panic!("{e}"));
    let defaults = zkgpu_runtime::wgpu::Limits::default();
    assert_eq!(ctx.limits(), &defaults);
    let msm = GpuMsm::<C>::new(&ctx).unwrap();
    let part = msm.part_len();
    let point_bytes = C::affine_packed_words() as u64 * 4;
    assert!(part as u64 * point_bytes <= defaults.max_storage_buffer_binding_size);
    // One part and a bit more: the second part starts past 128 MiB of bases.
    let n = part + 1000;
    assert!(n as u64 * point_bytes > defaults.max_storage_buffer_binding_size);

    let mut rng = StdRng::seed_from_u64(0x3eb6);
    // Distinct bases cheaply: runs of consecutive multiples of the generator.
    let g = <C as GpuCurve>::Projective::generator();
    let mut p = <C as GpuCurve>::Projective::zero();
    let mut pts = Vec::with_capacity(n);
    for i in 0..n {
        if i % 4096 == 0 {
            p = <C as GpuCurve>::Projective::rand(&mut rng);
        }
        p += g;
        pts.push(p);
    }
    let bases = <C as GpuCurve>::Projective::normalize_batch(&pts);
    // Sparse scalars keep the test fast on software Vulkan (every zero is skipped by the
    // digit kernel): random scalars on 1 point in 64 and on both sides of the part boundary.
    let scalars: Vec<<C as GpuCurve>::Scalar> = (0..n)
        .map(|i| {
            if i % 64 == 0 || i.abs_diff(part) < 8 || rng.gen_bool(0.002) {
                <C as GpuCurve>::Scalar::rand(&mut rng)
            } else {
                <C as GpuCurve>::Scalar::zero()
            }
        })
        .collect();
    let prepared = msm.prepare(&bases).unwrap();
    assert_eq!(prepared.parts(), 2);
    let got = msm
        .run(MsmRequest::new(&prepared, &scalars))
        .and_then(MsmOutput::sum)
        .unwrap();
    let want = <<C as GpuCurve>::Projective as VariableBaseMSM>::msm(&bases, &scalars).unwrap();
    assert_eq!(got, want);
    assert!(!got.is_zero());
}

/// Two parts of one set's bases as one MSM under the same limits: the split accumulation
/// binds eight storage buffers (the one-part kernel's seven and the second part's), so a
/// browser runs it too (docs/msm.md "Limits"); scalars ending in either part.
#[test]
fn two_parts_as_one_msm_under_webgpu_default_limits() {
    let ctx = GpuContext::new_blocking(ContextOptions::webgpu_default_from_env().unwrap())
        .unwrap_or_else(|e| panic!("{e}"));
    let msm = GpuMsm::<C>::new(&ctx).unwrap().with_max_part(24);
    let mut rng = StdRng::seed_from_u64(0x5b17);
    let n = 41;
    let bases: Vec<_> = (0..n)
        .map(|_| <C as GpuCurve>::Projective::rand(&mut rng).into_affine())
        .collect();
    let scalars: Vec<<C as GpuCurve>::Scalar> = (0..n)
        .map(|_| <C as GpuCurve>::Scalar::rand(&mut rng))
        .collect();
    let prepared = msm.prepare(&bases).unwrap();
    assert_eq!(prepared.parts(), 2);
    for m in [n, 30, 10] {
        let out = msm.run(MsmRequest::new(&prepared, &scalars[..m])).unwrap();
        // Scalars reaching the second part run as one MSM; the first part's alone, as one.
        assert_eq!(out.timings.runs, 1, "{m} scalars");
        let want =
            <<C as GpuCurve>::Projective as VariableBaseMSM>::msm(&bases[..m], &scalars[..m])
                .unwrap();
        assert_eq!(out.sum().unwrap(), want, "{m} scalars");
    }
}
