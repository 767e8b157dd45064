//! Point representations by coordinate system. On the GPU a point is a run of VM registers in
//! the order of these fields (crates/curves/src/formulas.rs); here they have names.
//!
//! The accumulator forms were chosen by cost, counted exactly by the CPU formula tests (base
//! multiplications, squarings counted as multiplications since the VM has one multiplication
//! site): for `a = 0` Weierstrass curves XYZZ costs 10 per mixed addition and 14 per addition
//! against Jacobian's 11 and 16; MSM bucket accumulation is mixed additions and bucket
//! reduction is additions, so XYZZ wins despite its dearer doubling (9 against 7). Twisted
//! Edwards uses extended coordinates, whose unified formulas are complete.

use ark_ec::short_weierstrass::{self as sw, SWCurveConfig};
use ark_ec::twisted_edwards::{self as te, TECurveConfig};
use ark_ff::{Field, Zero};

/// XYZZ coordinates (`x = X/ZZ`, `y = Y/ZZZ`, `ZZ^3 = ZZZ^2`; identity `ZZ = ZZZ = 0`), the
/// Weierstrass accumulator: `G1Xyzz` and `G2Xyzz` on the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Xyzz<F> {
    /// `X`
    pub x: F,
    /// `Y`
    pub y: F,
    /// `ZZ`
    pub zz: F,
    /// `ZZZ`
    pub zzz: F,
}

impl<F: Field> Xyzz<F> {
    /// From arkworks' Jacobian `(X, Y, Z)`: `ZZ = Z^2`, `ZZZ = Z^3`.
    pub fn from_jacobian<P: SWCurveConfig<BaseField = F>>(p: &sw::Projective<P>) -> Self {
        let zz = p.z.square();
        Self {
            x: p.x,
            y: p.y,
            zz,
            zzz: zz * p.z,
        }
    }

    /// To arkworks' Jacobian: `X_J = X ZZ ZZZ^2`, `Y_J = Y ZZ^3 ZZZ^2`, `Z_J = ZZ ZZZ`, so
    /// that `X_J / Z_J^2 = X / ZZ` and `Y_J / Z_J^3 = Y / ZZZ`.
    pub fn into_jacobian<P: SWCurveConfig<BaseField = F>>(self) -> sw::Projective<P> {
        if self.zz.is_zero() {
            return sw::Projective::zero();
        }
        let zzz2 = self.zzz.square();
        sw::Projective::new_unchecked(
            self.x * self.zz * zzz2,
            self.y * self.zz.square() * self.zz * zzz2,
            self.zz * self.zzz,
        )
    }

    /// The coordinates in register order.
    pub fn coords(&self) -> [F; 4] {
        [self.x, self.y, self.zz, self.zzz]
    }

    /// The identity.
    pub fn zero() -> Self {
        Self {
            x: F::one(),
            y: F::one(),
            zz: F::zero(),
            zzz: F::zero(),
        }
    }

    /// `self + o` on an `a = 0` curve (every Weierstrass group here; the GPU's formulas
    /// assume it too): add-2008-s, 12 multiplications and 2 squarings, with the identity,
    /// doubling and `P + (-P)` cases, as the host sums the GPU's reduction outputs.
    pub fn add(&self, o: &Self) -> Self {
        if self.zz.is_zero() {
            return *o;
        }
        if o.zz.is_zero() {
            return *self;
        }
        let u1 = self.x * o.zz;
        let u2 = o.x * self.zz;
        let s1 = self.y * o.zzz;
        let s2 = o.y * self.zzz;
        let p = u2 - u1;
        let r = s2 - s1;
        if p.is_zero() {
            return if r.is_zero() {
                self.double()
            } else {
                Self::zero()
            };
        }
        let pp = p.square();
        let ppp = p * pp;
        let q = u1 * pp;
        let x = r.square() - ppp - q.double();
        let y = r * (q - x) - s1 * ppp;
        Self {
            x,
            y,
            zz: self.zz * o.zz * pp,
            zzz: self.zzz * o.zzz * ppp,
        }
    }

    /// `2 self` on an `a = 0` curve (dbl-2008-s-1).
    pub fn double(&self) -> Self {
        if self.zz.is_zero() {
            return *self;
        }
        let u = self.y.double();
        let v = u.square();
        let w = u * v;
        let s = self.x * v;
        let m = self.x.square() * F::from(3u64);
        let x = m.square() - s.double();
        Self {
            x,
            y: m * (s - x) - w * self.y,
            zz: v * self.zz,
            zzz: w * self.zzz,
        }
    }
}

/// Extended twisted Edwards coordinates (`x = X/Z`, `y = Y/Z`, `T = XY/Z`; identity
/// `(0, 1, 0, 1)`): `TeExtended` on the GPU. arkworks' projective form is the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TeExtended<F> {
    /// `X`
    pub x: F,
    /// `Y`
    pub y: F,
    /// `T`
    pub t: F,
    /// `Z`
    pub z: F,
}

impl<F: Field> TeExtended<F> {
    /// From arkworks' projective point.
    pub fn from_ark<P: TECurveConfig<BaseField = F>>(p: &te::Projective<P>) -> Self {
        Self {
            x: p.x,
            y: p.y,
            t: p.t,
            z: p.z,
        }
    }

    /// To arkworks' projective point.
    pub fn into_ark<P: TECurveConfig<BaseField = F>>(self) -> te::Projective<P> {
        te::Projective::new_unchecked(self.x, self.y, self.t, self.z)
    }

    /// The coordinates in register order.
    pub fn coords(&self) -> [F; 4] {
        [self.x, self.y, self.t, self.z]
    }

    /// From four registers in that order.
    pub fn from_regs(r: &[F]) -> Self {
        Self {
            x: r[0],
            y: r[1],
            t: r[2],
            z: r[3],
        }
    }

    /// The affine point `(x, y)`.
    pub fn from_affine(x: F, y: F) -> Self {
        Self {
            x,
            y,
            t: x * y,
            z: F::ONE,
        }
    }

    /// The identity `(0, 1, 0, 1)`.
    pub fn identity() -> Self {
        Self::from_affine(F::ZERO, F::ONE)
    }

    /// The mark an exception of a non-complete form leaves (`X = Y = 0`; every coordinate
    /// zero here): crates/curves/src/te_map.rs.
    pub fn mark() -> Self {
        Self::from_regs(&[F::ZERO; 4])
    }
}
