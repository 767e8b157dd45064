//! BLS12-377 G1 on the GPU as a twisted Edwards curve with `a = -1`, whose mixed addition
//! takes 7 multiplications instead of XYZZ's 10 and whose addition 9 instead of 14.
//!
//! `y^2 = x^3 + 1` has the root `alpha = -1` of `x^3 + 1`, and `3 alpha^2 = 3` is a square in
//! Fq, so (with `s = 1 / sqrt 3`) `u = s (x - alpha)`, `v = s y` maps it onto the Montgomery
//! curve `B v^2 = u^3 + A u^2 + u` (`A = 3 alpha s`, `B = s`), and `x_e = u / v`,
//! `y_e = (u - 1) / (u + 1)` onto the twisted Edwards curve `a_e x^2 + y^2 = 1 + d_e x^2 y^2`
//! (`a_e = (A + 2) / B`, `d_e = (A - 2) / B`). Scaling `x' = c x_e` with `c^2 = -a_e` gives
//! `a = -1`, `d = -d_e / a_e`. The square roots are taken once, at first use
//! ([`TeMap::get`]), the signs chosen so that `-a_e` is a square.
//!
//! The map is a group isomorphism from the Weierstrass points it reaches, but `d` is a
//! square here (the curve has three points of order 2; a complete twisted Edwards curve has
//! one), so it is not complete. Two kinds of point need care, neither in the prime-order
//! subgroup:
//! - points whose image lies at infinity of the Edwards curve (two points of order 2, and
//!   those with `u = -1`): they cannot be stored, and are stored as `(0, 0, 0)`;
//! - sums whose unified formula divides by zero, which happens only where points of even
//!   order take part.
//!
//! The GPU programs turn either into a point with `X = Y = 0` (no point of the curve has
//! them, and the formulas keep them: `crates/curves/src/formulas.rs`), which the host finds
//! among the MSM's sums ([`GpuCurve::acc_regs_exceptional`](crate::GpuCurve)). Points of the
//! prime-order subgroup, the only ones arkworks' checked constructors make, never meet
//! either case.

use std::sync::OnceLock;

use ark_bls12_377::{Fq, G1Affine, G1Projective};
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::{AdditiveGroup, Field, One, Zero};

use crate::coords::TeExtended;

/// The constants of the map ([`TeMap::get`]).
#[derive(Clone, Copy, Debug)]
pub struct TeMap {
    /// The root of `x^3 + 1` the map sends to `u = 0`.
    pub alpha: Fq,
    /// `s = 1 / sqrt(3 alpha^2)`, and its inverse.
    pub s: Fq,
    s_inv: Fq,
    /// `c = sqrt(-a_e)`, and its inverse.
    pub c: Fq,
    c_inv: Fq,
    /// The `d` of the `a = -1` curve.
    pub d: Fq,
}

impl TeMap {
    /// The constants, derived once.
    pub fn get() -> &'static TeMap {
        static MAP: OnceLock<TeMap> = OnceLock::new();
        MAP.get_or_init(TeMap::derive)
    }

    fn derive() -> TeMap {
        let alpha = -Fq::ONE;
        let three_a2 = Fq::from(3u64) * alpha.square();
        #[allow(clippy::expect_used)]
        let root = three_a2.sqrt().expect("3 is a square in BLS12-377's Fq");
        for r in [root, -root] {
            let s = r.inverse().unwrap_or_default();
            let a_mont = Fq::from(3u64) * alpha * s;
            let b_inv = r;
            let a_e = (a_mont + Fq::from(2u64)) * b_inv;
            let d_e = (a_mont - Fq::from(2u64)) * b_inv;
            if let Some(c) = (-a_e).sqrt() {
                let a_e_inv = a_e.inverse().unwrap_or_default();
                return TeMap {
                    alpha,
                    s,
                    s_inv: r,
                    c,
                    c_inv: c.inverse().unwrap_or_default(),
                    d: -d_e * a_e_inv,
                };
            }
        }
        unreachable!("-a_e is a square for one sign of sqrt 3 on BLS12-377 G1")
    }

    /// `u = s (x - alpha)` and the denominator `y (u + 1)` of a finite point's image (`x' =
    /// c (x - alpha) / y` and `y' = (u - 1) / (u + 1)`: the `s` of `u / v` cancels). The
    /// denominator is zero where the image is `(0, -1)` (`x = alpha`, `y = 0`: the order-2
    /// point `(alpha, 0)`) or not representable.
    fn montgomery(&self, x: Fq, y: Fq) -> (Fq, Fq, Fq) {
        let dx = x - self.alpha;
        let u = self.s * dx;
        (dx, u, y * (u + Fq::ONE))
    }

    /// The image `(x', y')` of a finite point `(x, y)` from [`TeMap::montgomery`]'s `x -
    /// alpha`, `u` and the inverse of its denominator (zero when that was zero), or `None`
    /// where it lies at infinity.
    fn edwards(&self, (dx, u): (Fq, Fq), y: Fq, den_inv: Fq) -> Option<(Fq, Fq)> {
        if den_inv.is_zero() {
            // x = alpha, y = 0: the order-2 point (alpha, 0), whose image is (0, -1).
            return (dx.is_zero() && y.is_zero()).then_some((Fq::ZERO, -Fq::ONE));
        }
        let x = self.c * dx * (u + Fq::ONE) * den_inv;
        let y = (u - Fq::ONE) * y * den_inv;
        Some((x, y))
    }

    /// The twisted Edwards affine image of `p`, or `None` where it lies at infinity.
    pub fn to_edwards(&self, p: &G1Affine) -> Option<(Fq, Fq)> {
        let Some((x, y)) = p.xy() else {
            return Some((Fq::ZERO, Fq::ONE));
        };
        let (dx, u, den) = self.montgomery(x, y);
        self.edwards((dx, u), y, den.inverse().unwrap_or_default())
    }

    /// The madd input form `(y' - x', y' + x', 2d x' y')` of every point, appended to `out`
    /// (three registers a point), with one inversion for the whole slice (Montgomery's
    /// trick); a point whose image lies at infinity becomes `(0, 0, 0)`.
    pub fn madd_regs(&self, points: &[G1Affine], out: &mut Vec<Fq>) {
        let mon: Vec<Option<(Fq, Fq, Fq)>> = points
            .iter()
            .map(|p| p.xy().map(|(x, y)| self.montgomery(x, y)))
            .collect();
        let mut dens: Vec<Fq> = mon.iter().map(|m| m.map_or(Fq::ONE, |m| m.2)).collect();
        ark_ff::batch_inversion(&mut dens);
        let two_d = self.d.double();
        for ((m, den_inv), p) in mon.iter().zip(dens).zip(points) {
            let image = match (m, p.xy()) {
                (Some((dx, u, _)), Some((_, y))) => self.edwards((*dx, *u), y, den_inv),
                _ => Some((Fq::ZERO, Fq::ONE)),
            };
            match image {
                Some((x, y)) => out.extend([y - x, y + x, two_d * x * y]),
                None => out.extend([Fq::ZERO; 3]),
            }
        }
    }

    /// The extended coordinates of `p`'s image (`(0, 0, 0, 0)` where it lies at infinity).
    pub fn to_extended(&self, p: &G1Projective) -> TeExtended<Fq> {
        match self.to_edwards(&p.into_affine()) {
            Some((x, y)) => TeExtended::from_affine(x, y),
            None => TeExtended::mark(),
        }
    }

    /// The Weierstrass point of extended coordinates, or `None` for the exceptional marker
    /// (`X = Y = 0`) or another non-point (`Z = 0`).
    pub fn from_extended(&self, e: &TeExtended<Fq>) -> Option<G1Projective> {
        if e.x.is_zero() && e.y.is_zero() {
            return None;
        }
        let z_inv = e.z.inverse()?;
        let (x, y) = (e.x * z_inv, e.y * z_inv);
        if x.is_zero() {
            // (0, 1) is the identity, (0, -1) the order-2 point (alpha, 0).
            return if y.is_one() {
                Some(G1Projective::zero())
            } else {
                Some(G1Affine::new_unchecked(self.alpha, Fq::ZERO).into_group())
            };
        }
        let x_e = x * self.c_inv;
        let u = (Fq::ONE + y) * (Fq::ONE - y).inverse()?;
        let v = u * x_e.inverse()?;
        Some(G1Affine::new_unchecked(u * self.s_inv + self.alpha, v * self.s_inv).into_group())
    }
}

/// The sum of extended points on the `a = -1` curve with `2d = two_d` (add-2008-hwcd-3, as
/// the GPU's `add`); keeps the exceptional marker `X = Y = 0`, as the GPU does.
pub fn te_add(p: &TeExtended<Fq>, q: &TeExtended<Fq>, two_d: Fq) -> TeExtended<Fq> {
    let a = (p.y - p.x) * (q.y - q.x);
    let b = (p.y + p.x) * (q.y + q.x);
    let c = p.t * two_d * q.t;
    let d = (p.z * q.z).double();
    let (e, f, g, h) = (b - a, d - c, d + c, b + a);
    let z = f * g;
    if z.is_zero() {
        return TeExtended::mark();
    }
    TeExtended {
        x: e * f,
        y: g * h,
        t: e * h,
        z,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::PrimeGroup;
    use ark_ff::UniformRand;
    use ark_std::rand::{SeedableRng, rngs::StdRng};

    #[test]
    fn the_map_is_onto_an_a_minus_1_curve_and_back() {
        let m = TeMap::get();
        let mut rng = StdRng::seed_from_u64(377);
        for _ in 0..50 {
            let p = G1Projective::rand(&mut rng).into_affine();
            let (x, y) = m.to_edwards(&p).unwrap();
            let (x2, y2) = (x.square(), y.square());
            assert_eq!(-x2 + y2, Fq::ONE + m.d * x2 * y2, "on the a = -1 curve");
            let e = TeExtended::from_affine(x, y);
            assert_eq!(m.from_extended(&e).unwrap(), p.into_group());
        }
        // d is a square: the model is not complete (docs above).
        assert!(m.d.legendre().is_qr());
        assert_eq!(m.to_edwards(&G1Affine::zero()), Some((Fq::ZERO, Fq::ONE)));
        let t = G1Affine::new_unchecked(m.alpha, Fq::ZERO);
        assert_eq!(m.to_edwards(&t), Some((Fq::ZERO, -Fq::ONE)));
    }

    #[test]
    fn sums_follow_the_group_law_and_exceptions_are_marked() {
        let m = TeMap::get();
        let two_d = m.d.double();
        let mut rng = StdRng::seed_from_u64(378);
        let g = G1Projective::generator();
        for _ in 0..50 {
            let (p, q) = (G1Projective::rand(&mut rng), G1Projective::rand(&mut rng));
            for (a, b) in [(p, q), (p, p), (p, -p), (p, G1Projective::zero())] {
                let s = te_add(&m.to_extended(&a), &m.to_extended(&b), two_d);
                assert_eq!(m.from_extended(&s), Some(a + b));
            }
        }
        // The other points of order 2, (x, 0) with x^2 - x + 1 = 0, have no image. P and
        // P + T differ by one of them: their sum divides by zero, and is marked.
        let sqrt_m3 = (-Fq::from(3u64)).sqrt().unwrap();
        let half = Fq::from(2u64).inverse().unwrap();
        let mut marked = 0;
        for x in [(Fq::ONE + sqrt_m3) * half, (Fq::ONE - sqrt_m3) * half] {
            let t = G1Affine::new_unchecked(x, Fq::ZERO);
            assert!(t.is_on_curve());
            assert_eq!(m.to_edwards(&t), None, "no image");
            assert_eq!(m.to_extended(&t.into_group()).z, Fq::ZERO);
            for k in 1..20u64 {
                let p = g * <ark_bls12_377::Fr as From<u64>>::from(k);
                let q = p + t;
                for (a, b) in [(p, q), (p, -q)] {
                    let (ea, eb) = (m.to_extended(&a), m.to_extended(&b));
                    if eb.z.is_zero() {
                        continue;
                    }
                    match m.from_extended(&te_add(&ea, &eb, two_d)) {
                        Some(s) => assert_eq!(s, a + b),
                        None => marked += 1,
                    }
                }
            }
        }
        assert!(marked > 0, "P + (P + T) is exceptional");
    }
}
