//! The limb layout of a field under each 64-bit arithmetic (docs/limbs.md, "The 64-bit
//! arithmetics").

use num_bigint::BigUint;
use num_traits::One;

use crate::params::{FieldParams, LIMB_BITS};

/// A field arithmetic a shader module can be composed with: the registry every list of
/// arithmetics derives from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arith {
    /// 13-bit limbs in `u32` (docs/limbs.md): every adapter, WebGPU included.
    Portable,
    /// 30-bit limbs whose products are `u64`, summed in `u64` columns (`SHADER_INT64`).
    Int64,
    /// 49- to 52-bit limbs in `f64`, each product split exactly by two fused multiply-adds
    /// into parts summed in `f64` chains and `u64` columns (`SHADER_F64` and `SHADER_INT64`).
    F64,
}

impl Arith {
    /// Every arithmetic, the portable one first.
    pub const ALL: [Arith; 3] = [Arith::Portable, Arith::Int64, Arith::F64];

    /// The 64-bit arithmetics.
    pub const WIDE: [Arith; 2] = [Arith::Int64, Arith::F64];

    /// The name in configuration, on the command line and in module names.
    pub fn name(self) -> &'static str {
        match self {
            Arith::Portable => "portable",
            Arith::Int64 => "int64",
            Arith::F64 => "f64",
        }
    }

    /// The arithmetic called `name` ([`Arith::name`]).
    pub fn from_name(name: &str) -> Option<Arith> {
        Arith::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Whether shaders of this arithmetic need 64-bit integers.
    pub fn needs_int64(self) -> bool {
        self != Arith::Portable
    }

    /// Whether shaders of this arithmetic need 64-bit floats.
    pub fn needs_f64(self) -> bool {
        self == Arith::F64
    }
}

impl std::fmt::Display for Arith {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a 64-bit arithmetic cuts the elements of one field.
///
/// Every arithmetic keeps the portable Montgomery form `a R mod p` with `R = 2^(13 n)`, so
/// stored data (bases, keys, twiddles) is the same for all of them. A wide multiplication
/// works with `k` limbs of `w` bits, `w k >= 13 n`; its reduction divides by `2^(w k)`, so it
/// takes its first operand shifted up by `s = w k - 13 n` bits:
/// `(a 2^s) b 2^-(w k) = a b R^-1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WideLayout {
    /// The arithmetic.
    pub arith: Arith,
    /// Bits per limb `w`.
    pub limb_bits: u32,
    /// Limbs `k`.
    pub limbs: usize,
    /// The first operand's shift `s = w k - 13 n`.
    pub shift: u32,
    /// 13-bit limbs `n` of the portable layout.
    pub n13: usize,
    /// 32-bit words of the packed form.
    pub words: usize,
    /// `p` in `w`-bit limbs.
    pub p: Vec<u64>,
    /// `-p^-1 mod 2^w`.
    pub minv: u64,
    /// f64: which limb products sum their parts in `f64` chains (docs/limbs.md, "Chains").
    pub chains: Chains,
}

/// Which `f64` limb products sum their two parts in `f64` chains instead of `u64` columns
/// (docs/limbs.md, "Chains"): a chained product costs one more `f64` operation and no
/// integer addition, so the choice balances the float and integer pipes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chains {
    /// Every part is added to its `u64` column.
    None,
    /// The products of `a b`.
    Products,
    /// The reduction's products `m p`.
    Reduction,
    /// Every product.
    All,
}

impl Chains {
    /// Whether the products of `a b` are chained.
    pub fn products(self) -> bool {
        matches!(self, Chains::Products | Chains::All)
    }

    /// Whether the reduction's products are chained.
    pub fn reduction(self) -> bool {
        matches!(self, Chains::Reduction | Chains::All)
    }
}

impl WideLayout {
    /// The layout of field `p` under the wide arithmetic `arith`, `None` for
    /// [`Arith::Portable`].
    pub fn new(arith: Arith, p: &FieldParams) -> Option<Self> {
        let bits = LIMB_BITS as usize * p.n_limbs;
        let layout = |w: u32| {
            let k = bits.div_ceil(w as usize);
            Self::with(arith, p, w, k)
        };
        match arith {
            Arith::Portable => None,
            // 30-bit products are below 2^60: a column holds 16 before a carry.
            Arith::Int64 => Some(layout(30)),
            // 51-bit limbs take 3 f64 operations a product, 52-bit ones 4 (docs/limbs.md):
            // the cheaper of the two for this field's size.
            Arith::F64 => {
                let plain = [layout(51), layout(52)]
                    .into_iter()
                    .min_by_key(|l| l.f64_cost())
                    .expect("two candidates");
                Some(Self::chained(p, plain.limbs).unwrap_or(plain))
            }
        }
    }

    /// The chained `f64` layout of `p` with `k` limbs where one exists: limbs of
    /// `w = 52 - log2(k)` bits (`k` rounded up to a power of two), so that a chain holds a
    /// column's `k` products, with every product chained (docs/limbs.md, "Chains"). Where
    /// `k w` falls below `13 n` (the scalar fields: 5 limbs of 49 bits are not 260) there
    /// is none.
    fn chained(p: &FieldParams, k: usize) -> Option<Self> {
        let bits = LIMB_BITS as usize * p.n_limbs;
        let w = 52 - k.next_power_of_two().trailing_zeros();
        (w as usize * k >= bits).then(|| {
            let mut l = Self::with(Arith::F64, p, w, k);
            l.chains = Chains::All;
            l
        })
    }

    fn with(arith: Arith, p: &FieldParams, w: u32, k: usize) -> Self {
        let bits = LIMB_BITS as usize * p.n_limbs;
        let modulus = &p.modulus;
        let mask = (BigUint::one() << w) - 1u32;
        let p_limbs = (0..k)
            .map(|i| {
                let d: BigUint = (modulus >> (w as usize * i)) & &mask;
                d.iter_u64_digits().next().unwrap_or(0)
            })
            .collect();
        // -p^-1 mod 2^w by Newton iteration in u64 (each step doubles the correct bits).
        let p0 = modulus.iter_u64_digits().next().unwrap_or(1);
        let mut inv: u64 = 1;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(p0.wrapping_mul(inv)));
        }
        let minv = inv.wrapping_neg() & ((1u64 << w) - 1);
        Self {
            arith,
            limb_bits: w,
            limbs: k,
            shift: (w as usize * k - bits) as u32,
            n13: p.n_limbs,
            words: p.packed_words(),
            p: p_limbs,
            minv,
            chains: Chains::None,
        }
    }

    /// `f64` operations per limb product: 3 for 51-bit limbs, 4 for 52-bit ones.
    pub fn f64_ops_per_product(&self) -> usize {
        if self.limb_bits <= 51 { 3 } else { 4 }
    }

    /// A rough instruction count of one multiplication: `f64` operations and two integer
    /// additions per product.
    fn f64_cost(&self) -> usize {
        2 * self.limbs * self.limbs * (self.f64_ops_per_product() + 2)
    }

    /// Terms an `f64` chain holds: `2^(52 - w)` (docs/limbs.md, "Chains"), 1 for 52-bit
    /// limbs.
    pub fn chain_cap(&self) -> usize {
        1 << 52u32.saturating_sub(self.limb_bits)
    }

    /// `2^w - 1`.
    pub fn mask(&self) -> u64 {
        (1u64 << self.limb_bits) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KnownField;

    #[test]
    fn layouts_cover_r_and_invert_p() {
        for f in KnownField::ALL {
            let p = f.params();
            for arith in Arith::WIDE {
                let l = WideLayout::new(arith, &p).expect("wide");
                assert_eq!(
                    l.limb_bits as usize * l.limbs,
                    13 * p.n_limbs + l.shift as usize
                );
                assert!(l.shift < l.limb_bits);
                let p0 = l.p[0];
                assert_eq!(p0.wrapping_mul(l.minv) & l.mask(), l.mask(), "{}", p.name);
                let back =
                    l.p.iter()
                        .rev()
                        .fold(BigUint::from(0u32), |acc, &d| (acc << l.limb_bits) + d);
                assert_eq!(back, p.modulus);
            }
        }
    }

    #[test]
    fn f64_chains_the_381_bit_fields_and_picks_52_bits_for_scalar_fields() {
        let fq = WideLayout::new(Arith::F64, &KnownField::Bls12_381Fq.params()).expect("f64");
        assert_eq!((fq.limb_bits, fq.limbs, fq.shift), (49, 8, 2));
        assert_eq!((fq.chains, fq.chain_cap()), (Chains::All, 8));
        let bn = WideLayout::new(Arith::F64, &KnownField::Bn254Fq.params()).expect("f64");
        assert_eq!((bn.limb_bits, bn.limbs, bn.chains), (52, 5, Chains::None));
        let fr = WideLayout::new(Arith::F64, &KnownField::Bls12_381Fr.params()).expect("f64");
        assert_eq!((fr.limb_bits, fr.limbs, fr.shift), (52, 5, 0));
    }
}
