//! Transforms over ark-poly's `GeneralEvaluationDomain`: its radix-2 domains (plain and
//! coset) give exactly arkworks' results; a mixed-radix one is a typed error before any GPU
//! work.

use ark_ff::UniformRand;
use ark_poly::{EvaluationDomain, GeneralEvaluationDomain, MixedRadixEvaluationDomain};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_ntt::{GpuNtt, NttError};
use zkgpu_runtime::BlockOn;
use zkgpu_testing::shared_context;

type F = ark_bn254::Fr;

#[test]
fn general_radix2_domains_equal_arkworks() {
    let ntt = GpuNtt::<F>::new(shared_context());
    let mut rng = StdRng::seed_from_u64(51);
    // 1000 rounds up to 1024; 1 and 2 are the smallest domains; 33 values into a coset of 64.
    for (size, values, coset) in [
        (1000, 1000, false),
        (1, 1, false),
        (2, 2, true),
        (64, 33, true),
    ] {
        let mut d = GeneralEvaluationDomain::<F>::new(size).expect("radix-2 size");
        if coset {
            d = d.get_coset(F::from(7u64)).expect("coset");
        }
        assert!(matches!(d, GeneralEvaluationDomain::Radix2(_)));
        let v: Vec<F> = (0..values).map(|_| F::rand(&mut rng)).collect();
        let mut got = v.clone();
        ntt.fft(&d, &mut got).unwrap();
        assert_eq!(got, d.fft(&v), "fft, size {size}, coset {coset}");
        let mut back = got.clone();
        ntt.ifft_async(&d, &mut back).block_on().unwrap();
        assert_eq!(back, d.ifft(&got), "ifft, size {size}, coset {coset}");
    }
    let d = GeneralEvaluationDomain::<F>::new(256).unwrap();
    let prepared = ntt.prepare(&d).expect("prepare a general domain");
    assert!(prepared.transforms > 0.0);
}

#[test]
fn mixed_radix_domains_are_refused() {
    let ntt = GpuNtt::<F>::new(shared_context());
    let mixed = MixedRadixEvaluationDomain::<F>::new(6).expect("BN254 Fr has a subgroup of 3");
    let d = GeneralEvaluationDomain::MixedRadix(mixed);
    let mut v = vec![F::from(1u64); 6];
    match ntt.fft(&d, &mut v) {
        Err(NttError::NotRadix2 { size: 6 }) => {}
        other => panic!("expected NotRadix2, got {other:?}"),
    }
    assert_eq!(
        v,
        vec![F::from(1u64); 6],
        "a refused transform leaves the values alone"
    );
    assert!(matches!(
        ntt.ifft(&d, &mut v),
        Err(NttError::NotRadix2 { .. })
    ));
    assert!(matches!(ntt.prepare(&d), Err(NttError::NotRadix2 { .. })));
}
