//! `GpuCurve::sum_acc_regs` (the host's sum of the MSM's reduction outputs, in XYZZ on the
//! Weierstrass groups) against ark-ec, with its special cases: the identity on either side,
//! `P + P`, `P + (-P)`, a run that cancels, and points in several representations.

#![allow(clippy::unwrap_used)]

use ark_ec::{AdditiveGroup, PrimeGroup};
use ark_ff::{UniformRand, Zero};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_curves::GpuCurve;

fn sum<C: GpuCurve>(points: &[C::Projective]) -> C::Projective {
    let mut regs = Vec::new();
    for p in points {
        C::projective_regs(p, &mut regs);
    }
    C::sum_acc_regs(&regs)
}

fn check<C: GpuCurve>() {
    let mut rng = StdRng::seed_from_u64(27);
    let p = C::Projective::rand(&mut rng);
    let q = C::Projective::rand(&mut rng);
    let zero = C::Projective::zero();
    let g = C::Projective::generator();
    let cases: Vec<Vec<C::Projective>> = vec![
        vec![],
        vec![zero],
        vec![p],
        vec![zero, p],
        vec![p, zero],
        vec![p, p],
        vec![p, -p],
        vec![p, q, -p, -q],
        vec![p, p, p, q],
        vec![g, g.double(), -g],
        (0..37).map(|_| C::Projective::rand(&mut rng)).collect(),
    ];
    for (k, case) in cases.iter().enumerate() {
        let expect: C::Projective = case.iter().sum();
        assert_eq!(sum::<C>(case), expect, "{} case {k}", C::ID);
    }
}

#[test]
fn host_sums_equal_arkworks_in_every_group() {
    for &g in zkgpu_curves::Group::ALL {
        zkgpu_curves::with_group!(g, C => check::<C>());
    }
}
