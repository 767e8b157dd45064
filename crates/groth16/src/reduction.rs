//! [`Qap`]: which QAP reduction a proving key was made for, and the domain it runs over.

use ark_ff::PrimeField;
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};

/// The QAP reduction a proving key was made for: how the witness map turns `A z`, `B z`,
/// `C z` into the scalars of the key's H query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Qap {
    /// arkworks' `LibsnarkReduction` (ark-groth16's default): the quotient `(a b - c) / Z`
    /// evaluated on a coset of the domain and interpolated back; the H query has `n - 1`
    /// points.
    #[default]
    Libsnark,
    /// circom's and snarkjs' reduction (ark-circom's `CircomReduction`): `a b - c` evaluated
    /// on the coset of the odd powers of a `2n`-th root of unity, where the vanishing
    /// polynomial is the constant `-2` that the key's H points absorb, so no division and no
    /// interpolation; the H query has `n` points. `C z` is `(A z) (B z)` row by row: a snarkjs
    /// key carries only A and B, and C's constraints are checked by the proof itself.
    Circom,
}

impl Qap {
    /// Points of the H query of a key over a domain of `n` elements.
    pub fn h_query_len(self, n: usize) -> usize {
        match self {
            Self::Libsnark => n.saturating_sub(1),
            Self::Circom => n,
        }
    }

    /// The smallest evaluation domain of at least `n` elements this reduction's keys are
    /// made over: arkworks' for [`Qap::Libsnark`]; for [`Qap::Circom`], snarkjs' roots of
    /// unity ([`circom_domain`]). `None` past the field's two-adicity.
    pub fn domain<F: PrimeField>(self, n: usize) -> Option<Radix2EvaluationDomain<F>> {
        match self {
            Self::Libsnark => Radix2EvaluationDomain::new(n),
            Self::Circom => circom_domain(n),
        }
    }
}

/// The smallest quadratic non-residue of `F` (2, 3, ...): the element whose powers snarkjs'
/// field library (ffjavascript) takes its roots of unity from.
fn smallest_non_residue<F: PrimeField>() -> F {
    let mut q = F::from(2u64);
    while !q.legendre().is_qnr() {
        q += F::one();
    }
    q
}

/// The evaluation domain of at least `n` elements with snarkjs' generator: for `2^k`
/// elements, `q^((r - 1) / 2^k)` with `q` the field's smallest quadratic non-residue, which
/// is what a snarkjs key's Lagrange bases and H points are computed over. arkworks takes its
/// roots from the field's multiplicative generator instead: the same for BN254 (both 5),
/// not for BLS12-381 (5 against 7), whose snarkjs keys prove only over this domain. `None`
/// past the field's two-adicity.
pub fn circom_domain<F: PrimeField>(n: usize) -> Option<Radix2EvaluationDomain<F>> {
    let mut d = Radix2EvaluationDomain::<F>::new(n)?;
    // (r - 1) / 2^k = TRACE 2^(s - k).
    let g = smallest_non_residue::<F>()
        .pow(F::TRACE)
        .pow([1u64 << (F::TWO_ADICITY - d.log_size_of_group)]);
    d.group_gen = g;
    d.group_gen_inv = g.inverse()?;
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::Field;

    /// BN254's snarkjs roots are arkworks' (both from 5); BLS12-381's are other primitive
    /// roots of the same orders (5 against arkworks' 7), so the same coset of odd powers.
    #[test]
    fn circom_domains_are_arkworks_for_bn254_and_other_roots_for_bls12_381() {
        use ark_bls12_381::Fr as Bls;
        use ark_bn254::Fr as Bn;
        assert_eq!(smallest_non_residue::<Bn>(), Bn::from(5u64));
        assert_eq!(smallest_non_residue::<Bls>(), Bls::from(5u64));
        for k in 0..=20u32 {
            let n = 1usize << k;
            let (c, a) = (
                circom_domain::<Bn>(n).unwrap(),
                Radix2EvaluationDomain::<Bn>::new(n),
            );
            assert_eq!(c.group_gen, a.unwrap().group_gen, "BN254 2^{k}");
            let c = circom_domain::<Bls>(n).unwrap();
            let a = Radix2EvaluationDomain::<Bls>::new(n).unwrap();
            assert_eq!(c.size(), n);
            assert_eq!(c.group_gen * c.group_gen_inv, Bls::ONE);
            assert_eq!(c.group_gen.pow([n as u64]), Bls::ONE);
            if k > 0 {
                // Primitive: its 2^(k-1)-th power is -1.
                assert_eq!(c.group_gen.pow([(n / 2) as u64]), -Bls::ONE, "2^{k}");
            }
            // 5's root is 7's to an odd power j with j = 5 mod 8: equal up to 2^2, not after.
            if k > 2 {
                assert_ne!(c.group_gen, a.group_gen, "BLS12-381 2^{k}");
            } else {
                assert_eq!(c.group_gen, a.group_gen, "BLS12-381 2^{k}");
            }
            assert_eq!(Qap::Circom.domain::<Bls>(n).unwrap().group_gen, c.group_gen);
            assert_eq!(
                Qap::Libsnark.domain::<Bls>(n).unwrap().group_gen,
                a.group_gen
            );
        }
        assert!(circom_domain::<Bls>(1 << 33).is_none());
    }
}
