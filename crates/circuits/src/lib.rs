//! Real circuits for testing and benchmarking Groth16 provers, built from arkworks' own gadgets
//! (ark-crypto-primitives 0.6, ark-r1cs-std 0.6), sized by a target constraint count:
//!
//! - [`Sha256Chain`]: knowledge of a 32-byte preimage whose `k`-fold SHA-256 is a public
//!   digest. Boolean-heavy: almost every witness value is 0 or 1, the case where arkworks'
//!   CPU MSM takes its small-scalar fast paths.
//! - [`MerklePaths`]: knowledge of `k` Poseidon Merkle paths (leaf, siblings, directions) to
//!   public roots. Full-size witnesses: the Poseidon states are random field elements.
//!
//! Both compute their public inputs natively, so a proof can be verified without the prover.

use ark_crypto_primitives::crh::poseidon::constraints::{
    CRHGadget, CRHParametersVar, TwoToOneCRHGadget,
};
use ark_crypto_primitives::crh::poseidon::{CRH, TwoToOneCRH};
use ark_crypto_primitives::crh::sha256::Sha256;
use ark_crypto_primitives::crh::sha256::constraints::Sha256Gadget;
use ark_crypto_primitives::crh::{
    CRHScheme, CRHSchemeGadget, TwoToOneCRHScheme, TwoToOneCRHSchemeGadget,
};
use ark_crypto_primitives::sponge::Absorb;
use ark_crypto_primitives::sponge::poseidon::{PoseidonConfig, find_poseidon_ark_and_mds};
use ark_ff::{BigInteger, PrimeField, ToConstraintField};
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::prelude::*;
use ark_r1cs_std::uint8::UInt8;
use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystem, ConstraintSystemRef, OptimizationGoal, SynthesisError,
    SynthesisMode,
};
use ark_std::rand::Rng;

/// Which circuit family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// [`Sha256Chain`].
    Sha256,
    /// [`MerklePaths`].
    Merkle,
}

/// Constraints of `circuit` as the Groth16 prover sees them (optimized for constraints,
/// linear combinations inlined), with its instance variables.
pub fn count_constraints<F: PrimeField>(
    circuit: impl ConstraintSynthesizer<F>,
) -> Result<(usize, usize), SynthesisError> {
    let cs = ConstraintSystem::<F>::new_ref();
    cs.set_optimization_goal(OptimizationGoal::Constraints);
    cs.set_mode(SynthesisMode::Setup);
    circuit.generate_constraints(cs.clone())?;
    cs.finalize();
    Ok((cs.num_constraints(), cs.num_instance_variables()))
}

/// The number of repetitions `k >= 1` of a unit of `per_unit` constraints (plus `fixed`) that
/// keeps the Groth16 domain (constraints plus instance variables) within `2^log_constraints`.
fn units_for(log_constraints: u32, per_unit: usize, fixed: usize) -> usize {
    let budget = 1usize << log_constraints;
    (budget.saturating_sub(fixed) / per_unit.max(1)).max(1)
}

// ---------------------------------------------------------------------------------------------
// SHA-256 chains
// ---------------------------------------------------------------------------------------------

/// `digest = SHA-256^hashes(preimage)`: the preimage is secret, the digest public (packed into
/// field elements as `UInt8::new_input_vec` packs it).
#[derive(Clone, Debug)]
pub struct Sha256Chain {
    /// The secret 32-byte preimage.
    pub preimage: [u8; 32],
    /// How many times SHA-256 is applied (at least 1).
    pub hashes: usize,
}

impl Sha256Chain {
    /// A random preimage hashed `hashes` times.
    pub fn random<R: Rng>(hashes: usize, rng: &mut R) -> Self {
        Self {
            preimage: rng.r#gen(),
            hashes: hashes.max(1),
        }
    }

    /// The chain length whose circuit fits a domain of `2^log_constraints` (at least one
    /// hash), from the constraint count of one and two hashes over `F`.
    pub fn hashes_for<F: PrimeField>(log_constraints: u32) -> Result<usize, SynthesisError> {
        let one = count_constraints::<F>(Self::random(1, &mut ark_std::test_rng()))?;
        let two = count_constraints::<F>(Self::random(2, &mut ark_std::test_rng()))?;
        let per_hash = two.0 - one.0;
        Ok(units_for(
            log_constraints,
            per_hash,
            one.0 - per_hash + one.1,
        ))
    }

    /// The final digest, computed natively.
    pub fn digest(&self) -> [u8; 32] {
        let mut cur = self.preimage.to_vec();
        for _ in 0..self.hashes {
            cur = <Sha256 as CRHScheme>::evaluate(&(), cur.as_slice()).unwrap_or_default();
        }
        let mut out = [0u8; 32];
        out.copy_from_slice(&cur);
        out
    }

    /// The public inputs a verifier needs (the packed digest).
    pub fn public_inputs<F: PrimeField>(&self) -> Vec<F> {
        ToConstraintField::<F>::to_field_elements(&self.digest()[..]).unwrap_or_default()
    }
}

impl<F: PrimeField> ConstraintSynthesizer<F> for Sha256Chain {
    fn generate_constraints(self, cs: ConstraintSystemRef<F>) -> Result<(), SynthesisError> {
        let digest = UInt8::new_input_vec(cs.clone(), &self.digest())?;
        let mut cur = UInt8::new_witness_vec(cs.clone(), &self.preimage)?;
        for _ in 0..self.hashes.max(1) {
            cur = Sha256Gadget::<F>::digest(&cur)?.0;
        }
        cur.enforce_equal(&digest)
    }
}

// ---------------------------------------------------------------------------------------------
// Poseidon Merkle paths
// ---------------------------------------------------------------------------------------------

/// Poseidon parameters for benchmarks over `F`: width 3 (rate 2, capacity 1), 8 full and 31
/// partial rounds, the smallest S-box exponent among 5, 7, 11, 13, 17 that is a permutation of
/// `F`, round constants and MDS matrix from arkworks' Grain LFSR. A benchmark instantiation,
/// not a reviewed one.
pub fn poseidon_config<F: PrimeField>() -> PoseidonConfig<F> {
    let (full, partial, rate) = (8, 31, 2);
    let alpha = [5u64, 7, 11, 13, 17]
        .into_iter()
        .find(|&a| {
            // alpha is a permutation exponent iff it does not divide p - 1 (alpha prime).
            let mut m = F::MODULUS;
            m.sub_with_borrow(&F::BigInt::from(1u64));
            let limbs = m.as_ref();
            // (p - 1) mod alpha, limb by limb from the top.
            let rem = limbs
                .iter()
                .rev()
                .fold(0u128, |r, &l| ((r << 64) | u128::from(l)) % u128::from(a));
            rem != 0
        })
        .unwrap_or(17);
    let (ark, mds) = find_poseidon_ark_and_mds::<F>(
        u64::from(F::MODULUS_BIT_SIZE),
        rate,
        full as u64,
        partial as u64,
        0,
    );
    PoseidonConfig::new(full, partial, alpha, mds, ark, rate, 1)
}

/// One Merkle path: a leaf (a few field elements), the sibling at each level from the leaf up,
/// and whether the running node is the right child at that level.
#[derive(Clone, Debug)]
pub struct MerklePath<F> {
    /// The leaf's elements.
    pub leaf: Vec<F>,
    /// Siblings, leaf level first.
    pub siblings: Vec<F>,
    /// `true` where the running node is the right child.
    pub is_right: Vec<bool>,
}

/// `paths.len()` Merkle-path openings: each leaf hashes up its path to its public root.
#[derive(Clone, Debug)]
pub struct MerklePaths<F: PrimeField> {
    /// The Poseidon instance.
    pub config: PoseidonConfig<F>,
    /// The openings.
    pub paths: Vec<MerklePath<F>>,
}

/// Elements per leaf.
const LEAF_ELEMENTS: usize = 4;

impl<F: PrimeField + Absorb> MerklePaths<F> {
    /// `count` random paths of `depth` levels.
    pub fn random<R: Rng>(count: usize, depth: usize, rng: &mut R) -> Self {
        let paths = (0..count.max(1))
            .map(|_| MerklePath {
                leaf: (0..LEAF_ELEMENTS).map(|_| F::rand(rng)).collect(),
                siblings: (0..depth).map(|_| F::rand(rng)).collect(),
                is_right: (0..depth).map(|_| rng.r#gen()).collect(),
            })
            .collect();
        Self {
            config: poseidon_config(),
            paths,
        }
    }

    /// The number of depth-`depth` paths whose circuit fits a domain of `2^log_constraints`
    /// (at least one).
    pub fn paths_for(log_constraints: u32, depth: usize) -> Result<usize, SynthesisError> {
        let mut rng = ark_std::test_rng();
        let one = count_constraints::<F>(Self::random(1, depth, &mut rng))?;
        let two = count_constraints::<F>(Self::random(2, depth, &mut rng))?;
        let per_path = (two.0 + two.1) - (one.0 + one.1);
        Ok(units_for(
            log_constraints,
            per_path,
            (one.0 + one.1).saturating_sub(per_path),
        ))
    }

    /// The roots, computed natively: the public inputs a verifier needs.
    pub fn roots(&self) -> Vec<F> {
        self.paths
            .iter()
            .map(|p| {
                let leaf = CRH::<F>::evaluate(&self.config, p.leaf.as_slice());
                p.siblings
                    .iter()
                    .zip(&p.is_right)
                    .fold(leaf, |node, (sib, &right)| {
                        let node = node.unwrap_or_default();
                        let (l, r) = if right { (*sib, node) } else { (node, *sib) };
                        TwoToOneCRH::<F>::evaluate(&self.config, l, r)
                    })
                    .unwrap_or_default()
            })
            .collect()
    }

    /// The public inputs a verifier needs (the roots).
    pub fn public_inputs(&self) -> Vec<F> {
        self.roots()
    }
}

impl<F: PrimeField + Absorb> ConstraintSynthesizer<F> for MerklePaths<F> {
    fn generate_constraints(self, cs: ConstraintSystemRef<F>) -> Result<(), SynthesisError> {
        let params = CRHParametersVar::new_constant(cs.clone(), &self.config)?;
        for (path, root) in self.paths.iter().zip(self.roots()) {
            let root = FpVar::new_input(cs.clone(), || Ok(root))?;
            let leaf = Vec::<FpVar<F>>::new_witness(cs.clone(), || Ok(path.leaf.clone()))?;
            let mut node = CRHGadget::<F>::evaluate(&params, &leaf)?;
            for (sib, &right) in path.siblings.iter().zip(&path.is_right) {
                let sib = FpVar::new_witness(cs.clone(), || Ok(*sib))?;
                let right = Boolean::new_witness(cs.clone(), || Ok(right))?;
                let l = right.select(&sib, &node)?;
                let r = right.select(&node, &sib)?;
                node = TwoToOneCRHGadget::<F>::evaluate(&params, &l, &r)?;
            }
            node.enforce_equal(&root)?;
        }
        Ok(())
    }
}

/// A circuit of `family` sized for `2^log_constraints` (see [`Sha256Chain::hashes_for`] and
/// [`MerklePaths::paths_for`], depth 20), with its public inputs.
pub fn sized<F: PrimeField + Absorb, R: Rng>(
    family: Family,
    log_constraints: u32,
    rng: &mut R,
) -> Result<(AnyCircuit<F>, Vec<F>), SynthesisError> {
    Ok(match family {
        Family::Sha256 => {
            let c = Sha256Chain::random(Sha256Chain::hashes_for::<F>(log_constraints)?, rng);
            let public = c.public_inputs();
            (AnyCircuit::Sha256(c), public)
        }
        Family::Merkle => {
            let depth = MERKLE_DEPTH;
            let c = MerklePaths::random(
                MerklePaths::<F>::paths_for(log_constraints, depth)?,
                depth,
                rng,
            );
            let public = c.public_inputs();
            (AnyCircuit::Merkle(c), public)
        }
    })
}

/// Tree depth of the Merkle paths of [`sized`].
pub const MERKLE_DEPTH: usize = 20;

/// Either family, as one `ConstraintSynthesizer`.
#[derive(Clone, Debug)]
pub enum AnyCircuit<F: PrimeField> {
    /// A SHA-256 chain.
    Sha256(Sha256Chain),
    /// Merkle paths.
    Merkle(MerklePaths<F>),
}

impl<F: PrimeField + Absorb> AnyCircuit<F> {
    /// A circuit of the same shape (same constraints, so the same proving key) with fresh
    /// random values, and its public inputs.
    pub fn fresh<R: Rng>(&self, rng: &mut R) -> (Self, Vec<F>) {
        match self {
            Self::Sha256(c) => {
                let c = Sha256Chain::random(c.hashes, rng);
                let public = c.public_inputs();
                (Self::Sha256(c), public)
            }
            Self::Merkle(c) => {
                let depth = c.paths.first().map_or(0, |p| p.siblings.len());
                let c = MerklePaths::random(c.paths.len(), depth, rng);
                let public = c.public_inputs();
                (Self::Merkle(c), public)
            }
        }
    }
}

impl<F: PrimeField + Absorb> ConstraintSynthesizer<F> for AnyCircuit<F> {
    fn generate_constraints(self, cs: ConstraintSystemRef<F>) -> Result<(), SynthesisError> {
        match self {
            Self::Sha256(c) => c.generate_constraints(cs),
            Self::Merkle(c) => c.generate_constraints(cs),
        }
    }
}
