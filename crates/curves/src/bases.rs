//! Inputs for benchmarks and examples that are cheap to make at large sizes.

use ark_ec::{CurveGroup, PrimeGroup};
use rayon::prelude::*;

use crate::GpuCurve;

/// `n` distinct points of `C`, cheaply: runs of 4,096 consecutive multiples of the generator
/// from random starting points, normalized in one batch (uniform random points would cost a
/// scalar multiplication each, minutes at 2^24).
pub fn distinct_bases<C: GpuCurve>(n: usize, rng: &mut impl ark_std::rand::Rng) -> Vec<C::Affine> {
    let run = 1 << 12;
    let starts: Vec<C::Projective> = (0..n.div_ceil(run))
        .map(|_| <C::Projective as ark_std::UniformRand>::rand(rng))
        .collect();
    let g = C::Projective::generator();
    let points: Vec<C::Projective> = starts
        .par_iter()
        .enumerate()
        .flat_map_iter(|(k, s)| {
            let len = run.min(n - k * run);
            std::iter::successors(Some(*s), move |p| Some(*p + g)).take(len)
        })
        .collect();
    C::Projective::normalize_batch(&points)
}
