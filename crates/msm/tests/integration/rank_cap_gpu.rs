//! The scatter's two paths: a digit's rank in its bucket kept in its digit word, and the
//! cursors for ranks past what the word holds or for digits without ranks:
//! `GpuMsm::with_rank_cap` sets the cap (3, so that buckets of a few equal digits cross it;
//! all; none) whatever the shape. Skewed and
//! duplicate scalars, plain, prepared, multi-set and folded bases, against arkworks.

#![allow(clippy::unwrap_used)]

use ark_ec::{CurveGroup, VariableBaseMSM};
use ark_ff::{One, UniformRand, Zero};
use ark_std::rand::{Rng, SeedableRng, rngs::StdRng};
use zkgpu_curves::{Bls12_381G1, Bn254G1, GpuCurve};
use zkgpu_msm::{Fold, GpuMsm, MsmOutput, MsmRequest};
use zkgpu_runtime::BlockOn;
use zkgpu_testing::shared_context as ctx;

/// Scalars where most digits fall in a few buckets: zeros, ones, -1, one repeated random
/// value, small values, and some uniform ones.
fn crowded<C: GpuCurve>(n: usize, rng: &mut StdRng) -> Vec<C::Scalar> {
    let repeated = C::Scalar::rand(rng);
    (0..n)
        .map(|i| match i % 7 {
            0 => C::Scalar::zero(),
            1 | 2 => C::Scalar::one(),
            3 => -C::Scalar::one(),
            4 => repeated,
            5 => C::Scalar::from(rng.gen_range(0u64..4)),
            _ => C::Scalar::rand(rng),
        })
        .collect()
}

fn check<C: GpuCurve>(cap: u32)
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let mut rng = StdRng::seed_from_u64(2027);
    let msm = GpuMsm::<C>::new(ctx()).unwrap().with_rank_cap(cap);
    for n in [1usize, 2, 9, 64, 129] {
        let bases: Vec<C::Affine> = (0..n)
            .map(|_| C::Projective::rand(&mut rng).into_affine())
            .collect();
        let other: Vec<C::Affine> = bases.iter().rev().copied().collect();
        let scalars = crowded::<C>(n, &mut rng);
        let want = C::Projective::msm(&bases, &scalars).unwrap();
        let got = msm.msm(&bases, &scalars).unwrap();
        assert_eq!(got, want, "{} plain, n = {n}, cap {cap}", C::ID);
        let sets = msm.prepare_sets(&[&bases, &other]).unwrap();
        let sums = msm
            .run(MsmRequest::new(&sets, &scalars))
            .map(MsmOutput::into_sums)
            .unwrap();
        let want_other = C::Projective::msm(&other, &scalars).unwrap();
        assert_eq!(
            sums,
            vec![want, want_other],
            "{} two sets, n = {n}, cap {cap}",
            C::ID
        );
        let folded = msm
            .prepare_sets_folded(
                &[&bases],
                Fold {
                    folds: 4,
                    window_bits: Some(6),
                },
            )
            .block_on()
            .unwrap();
        let sums = msm
            .run(MsmRequest::new(&folded, &scalars))
            .map(MsmOutput::into_sums)
            .unwrap();
        assert_eq!(sums, vec![want], "{} folded, n = {n}, cap {cap}", C::ID);
    }
}

/// Ranks up to 3 then cursors; every rank (none reach the cap); no ranks, every digit
/// through the cursors (the default where buckets get few digits).
#[test]
fn digits_past_the_rank_cap_take_cursor_slots() {
    for cap in [3, u32::MAX, 0] {
        check::<Bls12_381G1>(cap);
        check::<Bn254G1>(cap);
    }
}
