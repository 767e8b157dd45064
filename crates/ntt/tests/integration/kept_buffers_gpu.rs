//! Device buffers kept from dropped vectors (docs/ntt.md, "Device buffers"): the next vector
//! of the same page sizes gets them, reads as zero where it must, transforms as ark-poly
//! does; what is kept stays within one vector's worth and is freed on request.

#![allow(clippy::unwrap_used)]

use ark_bls12_381::Fr;
use ark_ff::{UniformRand, Zero};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_ntt::{GpuNtt, NttConfig};
use zkgpu_runtime::BlockOn;
use zkgpu_testing::shared_context as ctx;

/// 2^19 elements: pages of 16 MiB, the smallest the engine keeps.
const LOG: u32 = 19;

#[test]
fn dropped_pages_are_reused_cleared_and_bounded() {
    let ntt = GpuNtt::<Fr>::new(ctx());
    let n = 1usize << LOG;
    let set = 2 * 32 * n as u64;
    let mut rng = StdRng::seed_from_u64(91);
    let values: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();

    let dv = ntt.upload(&values).unwrap();
    let first = dv.pages().to_vec();
    assert_eq!(ntt.kept_buffer_bytes(), 0);
    drop(dv);
    assert_eq!(ntt.kept_buffer_bytes(), set, "data and scratch kept");

    // A zero vector in pages that held random values: cleared.
    let z = ntt.zeroed(n, 1).unwrap();
    assert_eq!(ntt.kept_buffer_bytes(), 0, "both pages taken");
    assert!(first.contains(&z.pages()[0]), "a kept page reused");
    let got = ntt.download(&z, 0).block_on().unwrap();
    assert_eq!(got.len(), n);
    assert!(got.iter().all(Fr::is_zero), "a reused page reads as zero");
    drop(z);

    // A transform from host in kept pages (the previous vector's data in its scratch).
    let domain = Radix2EvaluationDomain::<Fr>::new(n).unwrap();
    let mut on_gpu = values.clone();
    ntt.fft(&domain, &mut on_gpu).unwrap();
    assert_eq!(on_gpu, domain.fft(&values));
    let mut back = on_gpu.clone();
    ntt.ifft(&domain, &mut back).unwrap();
    assert_eq!(back, values);
    assert_eq!(ntt.kept_buffer_bytes(), set);

    // A larger vector raises the bound; after it, the smaller one's pages go first when the
    // larger ones come back, and what is kept never exceeds the largest set.
    let big = ntt.zeroed(2 * n, 1).unwrap();
    assert_eq!(ntt.kept_buffer_bytes(), set, "no page of its size kept");
    drop(big);
    assert_eq!(
        ntt.kept_buffer_bytes(),
        2 * set,
        "the larger set kept whole"
    );
    let small = ntt.zeroed(n, 1).unwrap();
    let twice = ntt.zeroed(n, 1).unwrap();
    drop((small, twice));
    assert!(ntt.kept_buffer_bytes() <= 2 * set);
    assert_eq!(
        ntt.kept_buffer_bytes(),
        2 * set,
        "the newest sets kept, the oldest freed"
    );
    let again = ntt.zeroed(n, 1).unwrap();
    assert_eq!(ntt.kept_buffer_bytes(), set, "two of the kept pages taken");
    drop(again);

    assert_eq!(ntt.release_buffers(), 2 * set);
    assert_eq!(ntt.kept_buffer_bytes(), 0);
}

#[test]
fn small_vectors_and_disabled_engines_keep_nothing() {
    let ntt = GpuNtt::<Fr>::new(ctx());
    drop(ntt.zeroed(1 << (LOG - 1), 1).unwrap());
    assert_eq!(ntt.kept_buffer_bytes(), 0, "8 MiB pages are not kept");

    let off = GpuNtt::<Fr>::with_config(
        ctx(),
        NttConfig {
            keep_buffers: false,
            ..NttConfig::default()
        },
    )
    .unwrap();
    drop(off.zeroed(1 << LOG, 1).unwrap());
    assert_eq!(off.kept_buffer_bytes(), 0);
    let on = off.with_kept_buffers(true);
    drop(on.zeroed(1 << LOG, 1).unwrap());
    assert_eq!(on.kept_buffer_bytes(), (2 * 32) << LOG);
    let off = on.with_kept_buffers(false);
    assert_eq!(
        off.kept_buffer_bytes(),
        0,
        "turning it off frees what is kept"
    );
}
