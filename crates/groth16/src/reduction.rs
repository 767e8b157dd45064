//! [`Qap`]: which QAP reduction a proving key was made for.

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
}
