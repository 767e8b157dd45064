//! The 13-bit limb layout of a prime field, derived from its modulus.
//!
//! See `docs/limbs.md` for the derivation of every number here.

use num_bigint::BigUint;
use num_traits::{One, Zero};

use crate::LimbError;

/// Bits per limb. Every limb of a stored or normalized value is `< 2^LIMB_BITS`.
pub const LIMB_BITS: u32 = 13;
/// `2^LIMB_BITS - 1`.
pub const LIMB_MASK: u32 = (1 << LIMB_BITS) - 1;

/// The largest product of two limbs, `(2^13 - 1)^2 < 2^26`.
pub const MAX_LIMB_PRODUCT: u64 = (LIMB_MASK as u64) * (LIMB_MASK as u64);

/// How many limb products a `u32` accumulator can hold together with one incoming carry
/// of at most `2^(32-13)`: the carry-free bound ("nSafe" in mitschabaude/montgomery).
pub const CARRY_FREE_PRODUCTS: u64 = (u32::MAX as u64 - (1 << (32 - LIMB_BITS))) / MAX_LIMB_PRODUCT;

/// The limb layout and Montgomery constants of one prime field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldParams {
    /// Human-readable name, e.g. `BLS12-381 Fq`.
    pub name: String,
    /// Lower-case WGSL prefix of every generated function, e.g. `fq` (`fq_mul`).
    pub prefix: String,
    /// WGSL type name, e.g. `Fq`.
    pub type_name: String,
    /// The modulus `p`.
    pub modulus: BigUint,
    /// Number of 13-bit limbs `n`: the least with `4p < R = 2^(13n)`.
    pub n_limbs: usize,
    /// `p` in little-endian 13-bit limbs.
    pub p_limbs: Vec<u32>,
    /// `R mod p` in limbs: the Montgomery form of one.
    pub one_limbs: Vec<u32>,
    /// `R^2 mod p` in limbs: multiplying by it converts into Montgomery form.
    pub r2_limbs: Vec<u32>,
    /// `-p^{-1} mod 2^13`.
    pub mu: u32,
}

impl FieldParams {
    /// Derives the layout of the field with modulus `modulus`.
    ///
    /// Fails when the modulus is even or too large for the lazy-carry Montgomery multiplication
    /// (more than [`CARRY_FREE_PRODUCTS`] products would meet in one accumulator).
    pub fn new(
        name: &str,
        prefix: &str,
        type_name: &str,
        modulus: BigUint,
    ) -> Result<Self, LimbError> {
        if (&modulus % 2u32).is_zero() || modulus <= BigUint::from(2u32) {
            return Err(LimbError::BadModulus(format!(
                "{name}: modulus must be an odd prime"
            )));
        }
        // 4p < R lets multiplication accept inputs in [0, 2p) and still return a value below 2p
        // before its final conditional subtraction: (2p)^2/R + p < 2p.
        let four_p: BigUint = &modulus << 2u32;
        let n_limbs = four_p.bits().div_ceil(u64::from(LIMB_BITS)) as usize;
        let n_limbs = if (BigUint::one() << (LIMB_BITS as usize * n_limbs)) > four_p {
            n_limbs
        } else {
            n_limbs + 1
        };
        if 2 * n_limbs as u64 > CARRY_FREE_PRODUCTS {
            return Err(LimbError::BadModulus(format!(
                "{name}: {n_limbs} limbs need {} products per accumulator; the carry-free bound is {CARRY_FREE_PRODUCTS}",
                2 * n_limbs
            )));
        }
        let r = BigUint::one() << (LIMB_BITS as usize * n_limbs);
        let one = &r % &modulus;
        let r2 = (&one * &one) % &modulus;
        let p0 = (&modulus % (1u32 << LIMB_BITS))
            .to_u32_digits()
            .first()
            .copied()
            .unwrap_or(0);
        // p0^{-1} mod 2^13 by Newton iteration: x <- x(2 - p0 x) doubles the correct bits.
        let mut inv: u32 = 1;
        for _ in 0..4 {
            inv = inv.wrapping_mul(2u32.wrapping_sub(p0.wrapping_mul(inv)));
        }
        let mu = inv.wrapping_neg() & LIMB_MASK;
        Ok(Self {
            name: name.to_owned(),
            prefix: prefix.to_owned(),
            type_name: type_name.to_owned(),
            p_limbs: to_limbs(&modulus, n_limbs),
            one_limbs: to_limbs(&one, n_limbs),
            r2_limbs: to_limbs(&r2, n_limbs),
            modulus,
            n_limbs,
            mu,
        })
    }

    /// Derives the layout of an arkworks prime field.
    pub fn of<F: ark_ff::PrimeField>(name: &str, prefix: &str, type_name: &str) -> Self {
        let modulus = BigUint::from_bytes_le(&ark_ff::BigInteger::to_bytes_le(&F::MODULUS));
        Self::new(name, prefix, type_name, modulus)
            .expect("every arkworks prime field used by zkgpu fits the 13-bit layout")
    }

    /// `2p` in limbs: the bound of the lazy range (`4p < R`, so it fits).
    pub fn twice_p_limbs(&self) -> Vec<u32> {
        to_limbs(&(&self.modulus << 1u32), self.n_limbs)
    }

    /// `R = 2^(13 n)`.
    pub fn r(&self) -> BigUint {
        BigUint::one() << (LIMB_BITS as usize * self.n_limbs)
    }

    /// The number of bits of the modulus.
    pub fn modulus_bits(&self) -> u64 {
        self.modulus.bits()
    }

    /// 32-bit words of arkworks' representation of an element (`BigInt<N>` of `N` u64 limbs):
    /// the packed layout of `{prefix}_pack` / `{prefix}_unpack`.
    pub fn packed_words(&self) -> usize {
        2 * self.modulus_bits().div_ceil(64) as usize
    }

    /// Most limb products that ever meet in one accumulator of the multiplication: `2n`.
    pub fn max_products(&self) -> u64 {
        2 * self.n_limbs as u64
    }

    /// Splits `x < R` into `n` little-endian 13-bit limbs.
    pub fn to_limbs(&self, x: &BigUint) -> Vec<u32> {
        to_limbs(x, self.n_limbs)
    }

    /// The value of little-endian 13-bit limbs (limbs may exceed 13 bits; they are weighted).
    pub fn from_limbs(&self, limbs: &[u32]) -> BigUint {
        from_limbs(limbs)
    }
}

/// Splits `x` into `n` little-endian 13-bit limbs (bits above `13n` are dropped).
pub fn to_limbs(x: &BigUint, n: usize) -> Vec<u32> {
    let mut out = Vec::with_capacity(n);
    let mut v = x.clone();
    for _ in 0..n {
        let low = (&v & BigUint::from(LIMB_MASK))
            .to_u32_digits()
            .first()
            .copied()
            .unwrap_or(0);
        out.push(low);
        v >>= LIMB_BITS;
    }
    out
}

/// The value of little-endian limbs of weight `2^13` each.
pub fn from_limbs(limbs: &[u32]) -> BigUint {
    limbs.iter().rev().fold(BigUint::zero(), |acc, &l| {
        (acc << LIMB_BITS) + BigUint::from(l)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carry_free_bound_is_64_products() {
        assert_eq!(CARRY_FREE_PRODUCTS, 64);
    }

    #[test]
    fn rejects_even_modulus() {
        assert!(FieldParams::new("x", "x", "X", BigUint::from(100u32)).is_err());
    }

    #[test]
    fn mu_is_minus_p_inverse() {
        for f in crate::KnownField::ALL {
            let p = f.params();
            assert_eq!((p.mu * p.p_limbs[0]) & LIMB_MASK, LIMB_MASK, "{}", p.name);
            assert!(p.r() > (&p.modulus << 2u32));
            assert!(p.r() <= (&p.modulus << (2 + LIMB_BITS)), "n is minimal");
        }
    }
}
