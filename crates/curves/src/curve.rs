//! [`GpuCurve`]: what an engine needs to know of an arkworks group to run it on the GPU.

use std::fmt::Debug;
use std::sync::OnceLock;

use ark_ec::short_weierstrass::{self as sw, SWCurveConfig};
use ark_ec::twisted_edwards::TECurveConfig;
use ark_ec::{AdditiveGroup, AffineRepr, CurveGroup};
use ark_ff::{Field, PrimeField};
use rayon::prelude::*;
use zkgpu_limbs::{
    DecodeError, LimbEncode, RawMontgomery, decode_slice, encode_into, encode_slice,
    pack_limb_slice, pack_limbs, packed_limb_words,
};
use zkgpu_shaders::{Arith, Group};

use crate::coords::{TeExtended, Xyzz};
use crate::formulas::{twisted_edwards_a_minus_1, weierstrass_a0};
use crate::te_map::{TeMap, te_add};
use crate::vm::Program;

/// A coordinate field whose elements occupy `DEGREE` VM registers of the base field `B`.
pub trait Coord<B>: Field {
    /// Registers per element.
    const DEGREE: usize;
    /// Appends the registers of `self`.
    fn push_regs(&self, out: &mut Vec<B>);
    /// Reads an element from `DEGREE` registers.
    fn from_regs(r: &[B]) -> Self;
}

macro_rules! prime_coord {
    ($f:ty) => {
        impl Coord<$f> for $f {
            const DEGREE: usize = 1;
            fn push_regs(&self, out: &mut Vec<$f>) {
                out.push(*self);
            }
            fn from_regs(r: &[$f]) -> Self {
                r[0]
            }
        }
    };
}
prime_coord!(ark_bls12_381::Fq);
prime_coord!(ark_bls12_377::Fq);
prime_coord!(ark_ed_on_bls12_377::Fq);
prime_coord!(ark_bn254::Fq);

macro_rules! fq2_coord {
    ($f2:ty, $f:ty) => {
        impl Coord<$f> for $f2 {
            const DEGREE: usize = 2;
            fn push_regs(&self, out: &mut Vec<$f>) {
                out.push(self.c0);
                out.push(self.c1);
            }
            fn from_regs(r: &[$f]) -> Self {
                <$f2>::new(r[0], r[1])
            }
        }
    };
}
fq2_coord!(ark_bls12_381::Fq2, ark_bls12_381::Fq);
fq2_coord!(ark_bls12_377::Fq2, ark_bls12_377::Fq);
fq2_coord!(ark_bn254::Fq2, ark_bn254::Fq);

/// An arkworks group the GPU engines run on: its shader module, its formula program, and the
/// mapping between arkworks points and VM registers.
///
/// Points cross to the GPU as base-field registers: an affine point is `x, y` (arkworks'
/// identity encodings kept: `(0, 0)` on the Weierstrass curves, `(0, 1)` on ed-on-bls12-377),
/// an accumulator is 4 coordinates (XYZZ, or extended twisted Edwards). Each Weierstrass
/// group's impl is one `sw_curve!` line below; ed-on-bls12-377's and BLS12-377 G1's (run in
/// the twisted Edwards form it maps onto, `te_map.rs`) are written out.
pub trait GpuCurve: Copy + Debug + Default + Send + Sync + 'static {
    /// The field of the VM's registers (the curve's base prime field).
    type Base: PrimeField + LimbEncode;
    /// The scalar field (stored in Montgomery form: the MSM may upload the raw words and
    /// convert them on the GPU).
    type Scalar: PrimeField + RawMontgomery;
    /// arkworks affine points.
    type Affine: AffineRepr<ScalarField = Self::Scalar, Group = Self::Projective>;
    /// arkworks projective points.
    type Projective: CurveGroup<Affine = Self::Affine, ScalarField = Self::Scalar>;
    /// This group's entry in the registry (its shader modules, names and degree).
    const GROUP: Group;
    /// Stable identifier, e.g. `bls12_381_g1` ([`Group::id`]).
    const ID: &'static str = Self::GROUP.id();
    /// Base-field registers per coordinate (2 for G2; [`Group::degree`]).
    const DEGREE: usize = Self::GROUP.degree();

    /// Base-field registers of an affine point as the GPU stores it: `x, y` (`2 DEGREE`), or
    /// `y - x, y + x, 2d x y` on twisted Edwards curves (3), whose mixed addition then takes
    /// 7 multiplications instead of 10.
    const AFFINE_REGS: usize = Self::GROUP.affine_regs() as usize;
    /// Which coordinate of an affine point negation negates: 1 (`y`) on Weierstrass curves, 2
    /// (`2d x y`) on twisted Edwards curves.
    const AFFINE_NEG_COORD: usize = 1;
    /// Whether negation also swaps the first two coordinates (twisted Edwards: `y - x` and
    /// `y + x` trade places when `x` changes sign).
    const AFFINE_NEG_SWAP: bool = false;

    /// The formula program (`identity`, `madd`, `add`, `dbl`, `to_affine`) that modules
    /// composed with `arith` run, assembled once: over `Fq[u]/(u^2 + 1)` with the f64
    /// arithmetic its Fq2 products use the VM's Karatsuba instructions
    /// ([`Group::vm_fq2_ops`]), which other modules lack.
    fn program(arith: Arith) -> &'static Program<Self::Base>;
    /// Appends the [`GpuCurve::AFFINE_REGS`] registers of an affine point.
    fn affine_regs(p: &Self::Affine, out: &mut Vec<Self::Base>);
    /// Appends the [`GpuCurve::AFFINE_REGS`] registers of each point of a slice (where a
    /// group's mapping shares work between points: one inversion for the slice).
    fn affine_regs_batch(points: &[Self::Affine], out: &mut Vec<Self::Base>) {
        for p in points {
            Self::affine_regs(p, out);
        }
    }
    /// [`GpuCurve::sum_acc_regs`], or `None` where the sum met an exception of the group's
    /// formulas (the mark of [`GpuCurve::acc_regs_exceptional`] in an input, or made by an
    /// addition on the host): only BLS12-377 G1's form has them.
    fn try_sum_acc_regs(r: &[Self::Base]) -> Option<Self::Projective> {
        Some(Self::sum_acc_regs(r))
    }
    /// Whether `4 DEGREE` accumulator registers are the mark the formulas leave where a sum
    /// could not be formed (BLS12-377 G1's twisted Edwards form, `crates/curves/src/te_map.rs`:
    /// only for points outside the prime-order subgroup): the result is not to be trusted.
    fn acc_regs_exceptional(_r: &[Self::Base]) -> bool {
        false
    }
    /// Appends the `4 DEGREE` accumulator registers of a projective point.
    fn projective_regs(p: &Self::Projective, out: &mut Vec<Self::Base>);
    /// The projective point of `4 DEGREE` accumulator registers.
    fn from_acc_regs(r: &[Self::Base]) -> Self::Projective;
    /// The sum of accumulators of `4 DEGREE` registers each (`r.len()` a multiple of that),
    /// added in the accumulators' own coordinates where that is cheaper.
    fn sum_acc_regs(r: &[Self::Base]) -> Self::Projective {
        let regs = 4 * Self::DEGREE;
        r.chunks_exact(regs).map(Self::from_acc_regs).sum()
    }

    /// u32 words of one affine point on the GPU.
    fn affine_words() -> usize {
        Self::AFFINE_REGS * <Self::Base as LimbEncode>::WORDS
    }
    /// u32 words of one accumulator on the GPU.
    fn acc_words() -> usize {
        4 * Self::DEGREE * <Self::Base as LimbEncode>::WORDS
    }
    /// u32 words of one accumulator with its registers packed (`4 DEGREE FE_PACKED`): how
    /// the MSM stores chunk sums, bucket sums and the reduction's outputs.
    fn acc_packed_words() -> usize {
        4 * Self::DEGREE * Self::packed_reg_words()
    }
    /// u32 words of one base-field register packed (32-bit words, not 13-bit limbs): the
    /// shaders' `FE_PACKED`.
    fn packed_reg_words() -> usize {
        packed_limb_words(<Self::Base as PrimeField>::MODULUS_BIT_SIZE)
    }
    /// u32 words of one affine point packed ([`encode_affine_packed`]).
    fn affine_packed_words() -> usize {
        Self::AFFINE_REGS * Self::packed_reg_words()
    }
}

/// `C`'s formula program as the GPU loads it: the code, then its constants packed as the
/// registers are (`C::packed_reg_words()` words each), so `LDC` copies a constant into a
/// register without conversion. Returns the words and the constants' word offset.
pub fn program_words<C: GpuCurve>(prog: &Program<C::Base>) -> (Vec<u32>, u32) {
    let mut words = prog.code.clone();
    let offset = words.len() as u32;
    words.extend(pack_limb_slice(
        &encode_slice(&prog.consts),
        <C::Base as LimbEncode>::WORDS,
        C::packed_reg_words(),
    ));
    (words, offset)
}

/// Affine points with every register's limbs packed into 32-bit words
/// (`C::affine_packed_words()` each): how the MSM stores its bases, which the accumulation
/// kernel loads straight into the VM's packed registers.
/// Each of the host's threads maps a run of `AFFINE_CHUNK` (4096) points and writes their packed
/// words straight into the output (no vector of field elements or of limbs for the whole
/// slice: at 2^24 points those were gigabytes of fresh memory).
pub fn encode_affine_packed<C: GpuCurve>(points: &[C::Affine]) -> Vec<u32> {
    let (reg_words, limbs) = (C::packed_reg_words(), <C::Base as LimbEncode>::WORDS);
    let per = C::affine_packed_words();
    let mut out = vec![0u32; points.len() * per];
    out.par_chunks_mut(AFFINE_CHUNK * per)
        .zip(points.par_chunks(AFFINE_CHUNK))
        .for_each(|(out, points)| {
            let ctx = <C::Base as LimbEncode>::ctx();
            let mut regs = Vec::with_capacity(points.len() * C::AFFINE_REGS);
            C::affine_regs_batch(points, &mut regs);
            let mut l = vec![0u32; limbs];
            for (r, o) in regs.iter().zip(out.chunks_exact_mut(reg_words)) {
                <C::Base as LimbEncode>::encode_with(&ctx, r, &mut l);
                pack_limbs(&l, o);
            }
        });
    out
}

/// Points mapped together by [`GpuCurve::affine_regs_batch`] on one of the host's threads.
const AFFINE_CHUNK: usize = 4096;

/// Limbs of affine points, `C::affine_words()` each.
pub fn encode_affine<C: GpuCurve>(points: &[C::Affine]) -> Vec<u32> {
    let regs: Vec<C::Base> = points
        .par_chunks(AFFINE_CHUNK)
        .flat_map_iter(|chunk| {
            let mut regs = Vec::with_capacity(chunk.len() * C::AFFINE_REGS);
            C::affine_regs_batch(chunk, &mut regs);
            regs
        })
        .collect();
    let mut out = vec![0; regs.len() * <C::Base as LimbEncode>::WORDS];
    encode_into(&regs, &mut out);
    out
}

/// Limbs of accumulators, `C::acc_words()` each.
pub fn encode_projective<C: GpuCurve>(points: &[C::Projective]) -> Vec<u32> {
    let mut regs = Vec::with_capacity(points.len() * 4 * C::DEGREE);
    for p in points {
        C::projective_regs(p, &mut regs);
    }
    let mut out = vec![0; regs.len() * <C::Base as LimbEncode>::WORDS];
    encode_into(&regs, &mut out);
    out
}

/// Projective points from accumulator limbs.
pub fn decode_projective<C: GpuCurve>(words: &[u32]) -> Result<Vec<C::Projective>, DecodeError> {
    if !words.len().is_multiple_of(C::acc_words()) {
        return Err(DecodeError::Length {
            per_element: C::acc_words(),
            got: words.len(),
        });
    }
    let regs = decode_slice::<C::Base>(words)?;
    Ok(regs
        .chunks_exact(4 * C::DEGREE)
        .map(C::from_acc_regs)
        .collect())
}

/// Projective points from accumulators whose registers are packed
/// (`C::acc_packed_words()` words each).
pub fn decode_projective_packed<C: GpuCurve>(
    words: &[u32],
) -> Result<Vec<C::Projective>, DecodeError> {
    if !words.len().is_multiple_of(C::acc_packed_words()) {
        return Err(DecodeError::Length {
            per_element: C::acc_packed_words(),
            got: words.len(),
        });
    }
    let limbs = zkgpu_limbs::unpack_limb_slice(
        words,
        C::packed_reg_words(),
        <C::Base as LimbEncode>::WORDS,
    );
    decode_projective::<C>(&limbs)
}

/// The sum of [`Xyzz`] accumulator registers, added in XYZZ (14 multiplications an
/// addition, against 7 for each conversion to Jacobian and 16 for a Jacobian addition).
pub fn sw_sum_acc_regs<P: SWCurveConfig, B>(r: &[B]) -> sw::Projective<P>
where
    P::BaseField: Coord<B>,
{
    debug_assert!(
        ark_ff::Zero::is_zero(&P::COEFF_A),
        "XYZZ sums here assume a = 0"
    );
    let d = <P::BaseField as Coord<B>>::DEGREE;
    let c = |p: &[B], i: usize| <P::BaseField as Coord<B>>::from_regs(&p[i * d..(i + 1) * d]);
    r.chunks_exact(4 * d)
        .fold(Xyzz::zero(), |acc, p| {
            acc.add(&Xyzz {
                x: c(p, 0),
                y: c(p, 1),
                zz: c(p, 2),
                zzz: c(p, 3),
            })
        })
        .into_jacobian()
}

/// Weierstrass (a = 0) accumulator registers: [`Xyzz`] of arkworks' Jacobian point.
pub fn sw_projective_regs<P: SWCurveConfig, B>(p: &sw::Projective<P>, out: &mut Vec<B>)
where
    P::BaseField: Coord<B>,
{
    for c in Xyzz::from_jacobian(p).coords() {
        c.push_regs(out);
    }
}

/// arkworks' Jacobian point of [`Xyzz`] accumulator registers.
pub fn sw_from_acc_regs<P: SWCurveConfig, B>(r: &[B]) -> sw::Projective<P>
where
    P::BaseField: Coord<B>,
{
    let d = <P::BaseField as Coord<B>>::DEGREE;
    let c = |i: usize| <P::BaseField as Coord<B>>::from_regs(&r[i * d..(i + 1) * d]);
    Xyzz {
        x: c(0),
        y: c(1),
        zz: c(2),
        zzz: c(3),
    }
    .into_jacobian()
}

/// Weierstrass affine registers: `x, y`, the identity as `(0, 0)`.
pub fn sw_affine_regs<P: SWCurveConfig, B>(p: &sw::Affine<P>, out: &mut Vec<B>)
where
    P::BaseField: Coord<B>,
{
    let (x, y) = p.xy().unwrap_or((P::BaseField::ZERO, P::BaseField::ZERO));
    x.push_regs(out);
    y.push_regs(out);
}

macro_rules! sw_curve {
    ($(#[$doc:meta])* $name:ident, $cfg:ty, $base:ty) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name;

        impl GpuCurve for $name {
            type Base = $base;
            type Scalar = <$cfg as ark_ec::CurveConfig>::ScalarField;
            type Affine = sw::Affine<$cfg>;
            type Projective = sw::Projective<$cfg>;
            const GROUP: Group = Group::$name;

            fn program(arith: Arith) -> &'static Program<$base> {
                static P: [OnceLock<Program<$base>>; 2] = [OnceLock::new(), OnceLock::new()];
                let g = Group::$name;
                let ops = g.vm_fq2_ops(arith);
                P[usize::from(ops)]
                    .get_or_init(|| weierstrass_a0(g.degree() as u8, g.fq2_k(), ops))
            }
            fn affine_regs(p: &Self::Affine, out: &mut Vec<$base>) {
                sw_affine_regs(p, out)
            }
            fn projective_regs(p: &Self::Projective, out: &mut Vec<$base>) {
                sw_projective_regs(p, out)
            }
            fn from_acc_regs(r: &[$base]) -> Self::Projective {
                sw_from_acc_regs(r)
            }
            fn sum_acc_regs(r: &[$base]) -> Self::Projective {
                sw_sum_acc_regs(r)
            }
        }
    };
}

sw_curve!(
    /// BLS12-381 G1 (over Fq).
    Bls12_381G1, ark_bls12_381::g1::Config, ark_bls12_381::Fq
);
sw_curve!(
    /// BLS12-381 G2 (over Fq2 = `Fq[u]/(u^2 + 1)`).
    Bls12_381G2, ark_bls12_381::g2::Config, ark_bls12_381::Fq
);
sw_curve!(
    /// BLS12-377 G2 (over Fq2 = `Fq[u]/(u^2 + 5)`).
    Bls12_377G2, ark_bls12_377::g2::Config, ark_bls12_377::Fq
);
sw_curve!(
    /// BN254 G1 (over Fq; `y^2 = x^3 + 3`).
    Bn254G1, ark_bn254::g1::Config, ark_bn254::Fq
);
sw_curve!(
    /// BN254 G2 (over Fq2 = `Fq[u]/(u^2 + 1)`).
    Bn254G2, ark_bn254::g2::Config, ark_bn254::Fq
);

/// ed-on-bls12-377 (twisted Edwards, a = -1, d = 3021, over BLS12-377's Fr).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EdOnBls12_377;

impl GpuCurve for EdOnBls12_377 {
    type Base = ark_ed_on_bls12_377::Fq;
    type Scalar = ark_ed_on_bls12_377::Fr;
    type Affine = ark_ed_on_bls12_377::EdwardsAffine;
    type Projective = ark_ed_on_bls12_377::EdwardsProjective;
    const GROUP: Group = Group::EdOnBls12_377;
    const AFFINE_NEG_COORD: usize = 2;
    const AFFINE_NEG_SWAP: bool = true;

    fn program(_: Arith) -> &'static Program<Self::Base> {
        static P: OnceLock<Program<ark_ed_on_bls12_377::Fq>> = OnceLock::new();
        P.get_or_init(|| {
            debug_assert_eq!(
                <ark_ed_on_bls12_377::EdwardsConfig as TECurveConfig>::COEFF_A,
                -ark_ed_on_bls12_377::Fq::ONE
            );
            twisted_edwards_a_minus_1(
                <ark_ed_on_bls12_377::EdwardsConfig as TECurveConfig>::COEFF_D,
            )
        })
    }
    fn affine_regs(p: &Self::Affine, out: &mut Vec<Self::Base>) {
        // The formulas' input form (crates/curves/src/formulas.rs): the identity (0, 1)
        // becomes (1, 1, 0).
        let d = <ark_ed_on_bls12_377::EdwardsConfig as TECurveConfig>::COEFF_D;
        out.push(p.y - p.x);
        out.push(p.y + p.x);
        out.push(d.double() * p.x * p.y);
    }
    fn projective_regs(p: &Self::Projective, out: &mut Vec<Self::Base>) {
        out.extend(TeExtended::from_ark(p).coords());
    }
    fn from_acc_regs(r: &[Self::Base]) -> Self::Projective {
        TeExtended::from_regs(r).into_ark()
    }
}

/// BLS12-377 G1 (over Fq), on the GPU as the twisted Edwards curve `-x^2 + y^2 = 1 + d x^2
/// y^2` it maps onto (crates/curves/src/te_map.rs): 7 multiplications a mixed addition
/// instead of 10.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bls12_377G1;

impl GpuCurve for Bls12_377G1 {
    type Base = ark_bls12_377::Fq;
    type Scalar = ark_bls12_377::Fr;
    type Affine = ark_bls12_377::G1Affine;
    type Projective = ark_bls12_377::G1Projective;
    const GROUP: Group = Group::Bls12_377G1;
    const AFFINE_NEG_COORD: usize = 2;
    const AFFINE_NEG_SWAP: bool = true;

    fn program(_: Arith) -> &'static Program<Self::Base> {
        static P: OnceLock<Program<ark_bls12_377::Fq>> = OnceLock::new();
        P.get_or_init(|| twisted_edwards_a_minus_1(TeMap::get().d))
    }
    fn affine_regs(p: &Self::Affine, out: &mut Vec<Self::Base>) {
        TeMap::get().madd_regs(std::slice::from_ref(p), out);
    }
    fn affine_regs_batch(points: &[Self::Affine], out: &mut Vec<Self::Base>) {
        TeMap::get().madd_regs(points, out);
    }
    fn acc_regs_exceptional(r: &[Self::Base]) -> bool {
        ark_ff::Zero::is_zero(&r[0]) && ark_ff::Zero::is_zero(&r[1])
    }
    fn projective_regs(p: &Self::Projective, out: &mut Vec<Self::Base>) {
        out.extend(TeMap::get().to_extended(p).coords());
    }
    fn from_acc_regs(r: &[Self::Base]) -> Self::Projective {
        // The exceptional mark has no point: the MSM checks for it first
        // (`acc_regs_exceptional`); here it reads as the identity.
        TeMap::get()
            .from_extended(&TeExtended::from_regs(r))
            .unwrap_or_default()
    }
    fn sum_acc_regs(r: &[Self::Base]) -> Self::Projective {
        Self::try_sum_acc_regs(r).unwrap_or_default()
    }
    fn try_sum_acc_regs(r: &[Self::Base]) -> Option<Self::Projective> {
        // Summed in the twisted Edwards form (9M an addition), whose additions keep the mark:
        // a marked input or an exception here leaves a marked sum, which has no point.
        let m = TeMap::get();
        let two_d = m.d.double();
        let sum = r
            .as_chunks::<4>()
            .0
            .iter()
            .map(|regs| TeExtended::from_regs(regs))
            .fold(TeExtended::identity(), |acc, p| te_add(&acc, &p, two_d));
        m.from_extended(&sum)
    }
}
