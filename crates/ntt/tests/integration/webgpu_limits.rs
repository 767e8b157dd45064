//! An NTT on a device opened with exactly WebGPU's default limits (128 MiB per storage
//! binding, 8 storage buffers per stage, 16 KiB of workgroup memory), as a browser grants
//! without asking, of 2^23 elements: 256 MiB, paged across two bindings. The result must equal
//! ark-poly's.

#![allow(clippy::unwrap_used)]

use ark_ff::UniformRand;
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_ntt::{ELEMENT_BYTES, GpuNtt};
use zkgpu_runtime::BlockOn;
use zkgpu_runtime::{ContextOptions, GpuContext};

type F = ark_bls12_381::Fr;

#[test]
fn ntt_past_one_binding_under_webgpu_default_limits() {
    let ctx = GpuContext::new_blocking(ContextOptions::webgpu_default_from_env().unwrap())
        .unwrap_or_else(|e| panic!("{e}"));
    let defaults = zkgpu_runtime::wgpu::Limits::default();
    assert_eq!(ctx.limits(), &defaults);
    let ntt = GpuNtt::<F>::new(&ctx);
    let n = 1usize << 23;
    assert!(n as u64 * ELEMENT_BYTES > defaults.max_storage_buffer_binding_size);
    let mut rng = StdRng::seed_from_u64(0x2e23);
    let v: Vec<F> = (0..n).map(|_| F::rand(&mut rng)).collect();
    let domain = Radix2EvaluationDomain::<F>::new(n).unwrap();
    let mut dv = ntt.upload(&v).unwrap();
    assert_eq!(dv.pages().len(), 2);
    ntt.transform(&mut dv, &domain, zkgpu_ntt::Direction::Forward)
        .block_on()
        .unwrap();
    let got = ntt.download(&dv, 0).block_on().unwrap();
    let mut want = v;
    domain.fft_in_place(&mut want);
    assert!(got == want, "2^23 fft under WebGPU's default limits");
}
