//! The MSM on arkworks' own types (`GpuVariableBaseMsm`), against arkworks' `VariableBaseMSM`
//! on the same inputs: seeded random points and scalars of odd and power-of-two sizes, edge
//! scalars, the empty input, a length mismatch, and the async form.

use ark_ec::{CurveGroup, VariableBaseMSM};
use ark_ff::{One, Zero};
use ark_std::UniformRand;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_msm::{GpuVariableBaseMsm, MsmError};
use zkgpu_runtime::BlockOn;
use zkgpu_testing::shared_context;

fn inputs<G: CurveGroup>(n: usize, seed: u64) -> (Vec<G::Affine>, Vec<G::ScalarField>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let points: Vec<G> = (0..n).map(|_| G::rand(&mut rng)).collect();
    let mut scalars: Vec<G::ScalarField> = (0..n).map(|_| G::ScalarField::rand(&mut rng)).collect();
    // Edge scalars among the random ones: zero, one, p - 1.
    let edges = [
        G::ScalarField::zero(),
        G::ScalarField::one(),
        -G::ScalarField::one(),
    ];
    for (s, e) in scalars.iter_mut().zip(edges) {
        *s = e;
    }
    (G::normalize_batch(&points), scalars)
}

fn equals_arkworks<G: GpuVariableBaseMsm + VariableBaseMSM>(seed: u64) {
    let ctx = shared_context();
    for n in [1usize, 2, 33, 64, 257] {
        let (bases, scalars) = inputs::<G>(n, seed + n as u64);
        let want = G::msm(&bases, &scalars).expect("same lengths");
        let got = G::msm_gpu(ctx, &bases, &scalars).unwrap_or_else(|e| panic!("n = {n}: {e}"));
        assert_eq!(got, want, "n = {n}");
        // n = 1 has the one scalar zero; beyond it the sum is no plausible identity.
        assert_eq!(got.is_zero(), n == 1, "n = {n}");
        let got = G::msm_gpu_async(ctx, &bases, &scalars)
            .block_on()
            .expect("async msm");
        assert_eq!(got, want, "n = {n} (async)");
    }
}

#[test]
fn bls12_381_g1_equals_arkworks() {
    equals_arkworks::<ark_bls12_381::G1Projective>(1);
}

#[test]
fn bn254_g2_equals_arkworks() {
    equals_arkworks::<ark_bn254::G2Projective>(2);
}

#[test]
fn ed_on_bls12_377_equals_arkworks() {
    equals_arkworks::<ark_ed_on_bls12_377::EdwardsProjective>(3);
}

#[test]
fn lengths_follow_arkworks() {
    type G = ark_bn254::G1Projective;
    let ctx = shared_context();
    let (bases, scalars) = inputs::<G>(20, 9);
    match G::msm_gpu(ctx, &bases, &scalars[..19]) {
        Err(MsmError::LengthMismatch {
            bases: 20,
            scalars: 19,
        }) => {}
        other => panic!("expected a length mismatch, got {other:?}"),
    }
    let want = G::msm_unchecked(&bases, &scalars[..19]);
    assert_eq!(
        G::msm_unchecked_gpu(ctx, &bases, &scalars[..19]).unwrap(),
        want
    );
    assert_eq!(
        G::msm_unchecked_gpu_async(ctx, &bases[..7], &scalars)
            .block_on()
            .unwrap(),
        G::msm_unchecked(&bases[..7], &scalars)
    );
    assert!(G::msm_gpu(ctx, &[], &[]).unwrap().is_zero());
    // Scalars all equal to p - 1: the sum is minus the bases' sum.
    let minus = vec![-<G as ark_ec::PrimeGroup>::ScalarField::one(); bases.len()];
    let sum: G = bases.iter().map(|b| G::from(*b)).sum();
    assert_eq!(G::msm_gpu(ctx, &bases, &minus).unwrap(), -sum);
}
