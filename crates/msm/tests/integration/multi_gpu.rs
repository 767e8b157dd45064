//! One MSM split across the devices of a device set (two contexts on the one adapter here,
//! as on a machine without a GPU) against arkworks, every group: equal and unequal weights,
//! a device with no points, sizes 0, 1, 2 and odd, fewer scalars than bases, folded bases,
//! measured weights; bad weights and bases split on other devices refused.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use ark_ec::{AffineRepr, CurveGroup, VariableBaseMSM};
use ark_ff::{One, UniformRand, Zero};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_curves::{Bls12_377G1, Bls12_377G2, Bls12_381G1, Bls12_381G2, EdOnBls12_377, GpuCurve};
use zkgpu_msm::{Fold, MsmConfig, MsmError, MultiMsm};
use zkgpu_runtime::{DeviceSet, GpuError};
use zkgpu_testing::shared_device_pair as devices;

/// `n` bases with the identity, a duplicate pair and a point beside its negation.
fn bases<C: GpuCurve>(n: usize, rng: &mut StdRng) -> Vec<C::Affine> {
    let mut b = zkgpu_testing::distinct_bases::<C>(n, rng);
    if n >= 5 {
        b[0] = C::Affine::zero();
        b[1] = b[2];
        b[3] = (-b[4].into_group()).into_affine();
    }
    b
}

/// `n` scalars: random, one, `r - 1`, zero, then random (so a single scalar is not zero
/// and a sum of nothing cannot pass for one).
fn scalars<C: GpuCurve>(n: usize, rng: &mut StdRng) -> Vec<C::Scalar> {
    (0..n)
        .map(|i| match i % 7 {
            1 => C::Scalar::one(),
            2 => -C::Scalar::one(),
            3 => C::Scalar::zero(),
            _ => C::Scalar::rand(rng),
        })
        .collect()
}

fn ark<C: GpuCurve>(b: &[C::Affine], s: &[C::Scalar]) -> C::Projective
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let n = b.len().min(s.len());
    <C::Projective as VariableBaseMSM>::msm(&b[..n], &s[..n]).unwrap()
}

/// Split by `weights`: the ranges cover the bases in order, and the sum is arkworks'.
fn check<C: GpuCurve>(weights: &[f64], n: usize, scalars_len: usize, seed: u64)
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let mut rng = StdRng::seed_from_u64(seed);
    let b = bases::<C>(n, &mut rng);
    let s = scalars::<C>(scalars_len, &mut rng);
    let msm = MultiMsm::<C>::new(devices())
        .unwrap()
        .with_weights(weights)
        .unwrap();
    let split = msm.prepare(&b).unwrap();
    let ranges = split.ranges();
    assert_eq!(ranges.len(), 2);
    assert_eq!((ranges[0].start, ranges[0].end), (0, ranges[1].start));
    assert_eq!(ranges[1].end, n);
    for (w, r) in weights.iter().zip(&ranges) {
        if *w == 0.0 {
            assert!(r.is_empty(), "{} weights {weights:?}: {ranges:?}", C::ID);
        }
    }
    let out = msm.run(&split, &s, MsmConfig::default()).unwrap();
    if n.min(scalars_len) > 0 {
        assert!(!out.sum.is_zero(), "{} n {n}: the identity", C::ID);
    }
    assert_eq!(
        out.sum,
        ark::<C>(&b, &s),
        "{} n {n} scalars {scalars_len} weights {weights:?} ranges {ranges:?}",
        C::ID
    );
    assert_eq!(out.device_seconds.len(), 2);
}

fn every_split<C: GpuCurve>(seed: u64)
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    check::<C>(&[1.0, 1.0], 129, 129, seed);
    check::<C>(&[1.0, 0.0], 37, 37, seed + 1);
    check::<C>(&[0.0, 1.0], 37, 37, seed + 2);
    check::<C>(&[3.0, 1.0], 65, 50, seed + 3);
}

#[test]
fn split_msm_equals_arkworks_bls12_381_g1() {
    every_split::<Bls12_381G1>(1);
}

#[test]
fn split_msm_equals_arkworks_bls12_381_g2() {
    every_split::<Bls12_381G2>(11);
}

#[test]
fn split_msm_equals_arkworks_bls12_377_g1() {
    every_split::<Bls12_377G1>(21);
}

#[test]
fn split_msm_equals_arkworks_bls12_377_g2() {
    every_split::<Bls12_377G2>(31);
}

#[test]
fn split_msm_equals_arkworks_ed_on_bls12_377() {
    every_split::<EdOnBls12_377>(41);
}

#[test]
fn small_sizes_and_folded_bases() {
    type C = Bls12_381G1;
    for n in [0, 1, 2, 3, 5] {
        check::<C>(&[1.0, 1.0], n, n, 50 + n as u64);
    }
    let mut rng = StdRng::seed_from_u64(60);
    let b = bases::<C>(200, &mut rng);
    let s = scalars::<C>(200, &mut rng);
    let msm = MultiMsm::<C>::new(devices()).unwrap();
    let fold = Fold {
        folds: 4,
        window_bits: Some(8),
    };
    let split = msm.prepare_folded(&b, fold).unwrap();
    assert!(split.shares().all(|p| p.is_some_and(|p| p.folds() == 4)));
    let out = msm.run(&split, &s, MsmConfig::default()).unwrap();
    assert_eq!(out.sum, ark::<C>(&b, &s));
}

#[test]
fn measured_weights_split_and_sum() {
    type C = Bls12_377G1;
    let mut rng = StdRng::seed_from_u64(70);
    let b = bases::<C>(64, &mut rng);
    let s = scalars::<C>(64, &mut rng);
    let mut msm = MultiMsm::<C>::new(devices()).unwrap();
    let w = msm.calibrate(&b, &s, Duration::ZERO, 1).unwrap();
    assert_eq!(w.len(), 2);
    assert!(w.iter().all(|w| w.is_finite() && *w > 0.0), "{w:?}");
    assert_eq!(msm.weights(), &w[..]);
    let split = msm.prepare(&b).unwrap();
    assert_eq!(
        msm.run(&split, &s, MsmConfig::default()).unwrap().sum,
        ark::<C>(&b, &s)
    );
}

#[test]
fn bad_weights_and_foreign_splits_are_refused() {
    type C = Bls12_381G1;
    for bad in [
        &[1.0][..],
        &[1.0, 1.0, 1.0],
        &[0.0, 0.0],
        &[-1.0, 2.0],
        &[f64::NAN, 1.0],
        &[f64::INFINITY, 1.0],
    ] {
        match MultiMsm::<C>::new(devices()).unwrap().with_weights(bad) {
            Err(MsmError::Config(_)) => {}
            other => panic!("weights {bad:?}: {other:?}"),
        }
    }
    let mut rng = StdRng::seed_from_u64(80);
    let b = bases::<C>(40, &mut rng);
    let s = scalars::<C>(40, &mut rng);
    let pair = devices().contexts();
    let msm = MultiMsm::<C>::new(devices()).unwrap();
    let split = msm.prepare(&b).unwrap();
    // The same devices in the other order: each share would go to the other device.
    let swapped = DeviceSet::from_contexts(vec![pair[1].clone(), pair[0].clone()]).unwrap();
    let other = MultiMsm::<C>::new(&swapped).unwrap();
    match other.run(&split, &s, MsmConfig::default()) {
        Err(MsmError::Gpu(GpuError::ForeignContext { .. })) => {}
        other => panic!("expected ForeignContext, got {other:?}"),
    }
    let one = DeviceSet::from_contexts(vec![pair[0].clone()]).unwrap();
    let single = MultiMsm::<C>::new(&one).unwrap();
    assert!(matches!(
        single.run(&split, &s, MsmConfig::default()),
        Err(MsmError::Config(_))
    ));
    // Both still answer right afterwards.
    assert_eq!(
        msm.run(&split, &s, MsmConfig::default()).unwrap().sum,
        ark::<C>(&b, &s)
    );
    let own = single.prepare(&b).unwrap();
    assert_eq!(
        single.run(&own, &s, MsmConfig::default()).unwrap().sum,
        ark::<C>(&b, &s)
    );
}
