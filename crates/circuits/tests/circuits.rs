//! The benchmark circuits: native values, satisfiability and sizing.

#![allow(clippy::unwrap_used)]

use ark_crypto_primitives::sponge::Absorb;
use ark_ff::PrimeField;
use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystem, OptimizationGoal, SynthesisMode,
};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_circuits::{Family, MerklePaths, Sha256Chain, count_constraints, poseidon_config, sized};

fn satisfied<F: PrimeField>(c: impl ConstraintSynthesizer<F>) -> bool {
    let cs = ConstraintSystem::<F>::new_ref();
    cs.set_optimization_goal(OptimizationGoal::Constraints);
    cs.set_mode(SynthesisMode::Prove {
        construct_matrices: true,
        generate_lc_assignments: false,
    });
    c.generate_constraints(cs.clone()).unwrap();
    cs.finalize();
    cs.is_satisfied().unwrap()
}

/// Whether `c`'s constraints hold with its public inputs replaced by `roots` (the claimed
/// roots, input 0 being the constant one).
fn satisfied_with_roots<F: PrimeField + Absorb>(c: MerklePaths<F>, roots: &[F]) -> bool {
    let cs = ConstraintSystem::<F>::new_ref();
    cs.set_mode(SynthesisMode::Prove {
        construct_matrices: true,
        generate_lc_assignments: false,
    });
    c.generate_constraints(cs.clone()).unwrap();
    cs.finalize();
    let mut inner = cs.into_inner().unwrap();
    assert_eq!(inner.assignments.instance_assignment.len(), 1 + roots.len());
    inner.assignments.instance_assignment[1..].copy_from_slice(roots);
    inner.is_satisfied().unwrap()
}

#[test]
fn sha256_digest_matches_the_standard() {
    // SHA-256 of 32 zero bytes, and of that digest (FIPS 180-4 via any sha256sum).
    let c = Sha256Chain {
        preimage: [0; 32],
        hashes: 1,
    };
    let hex = |d: [u8; 32]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
    assert_eq!(
        hex(c.digest()),
        "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
    );
    let c2 = Sha256Chain {
        preimage: [0; 32],
        hashes: 2,
    };
    assert_eq!(
        hex(c2.digest()),
        "2b32db6c2c0a6235fb1397e8225ea85e0f0e6e8c7b126d0016ccbde0e667151e"
    );
}

fn sha256_chain<F: PrimeField>() {
    let mut rng = StdRng::seed_from_u64(1);
    for hashes in [1, 2] {
        let c = Sha256Chain::random(hashes, &mut rng);
        assert!(satisfied::<F>(c.clone()), "{hashes} hashes");
        let (constraints, inputs) = count_constraints::<F>(c.clone()).unwrap();
        assert_eq!(inputs, 1 + c.public_inputs::<F>().len());
        // About 27k constraints per compression, two compressions per 32-byte message.
        assert!(
            (30_000 * hashes..60_000 * hashes).contains(&constraints),
            "{constraints} constraints for {hashes} hashes"
        );
    }
    // Sized: the domain is at most 2^k and the chain uses most of it.
    let hashes = Sha256Chain::hashes_for::<F>(17).unwrap();
    let (constraints, inputs) =
        count_constraints::<F>(Sha256Chain::random(hashes, &mut rng)).unwrap();
    assert!(
        constraints + inputs <= 1 << 17 && hashes >= 2,
        "{hashes} hashes, {constraints}"
    );
    assert!(constraints + inputs > (1 << 17) / 2);
}

#[test]
fn sha256_chain_bls12_381() {
    sha256_chain::<ark_bls12_381::Fr>();
}

#[test]
fn sha256_chain_bls12_377() {
    sha256_chain::<ark_bls12_377::Fr>();
}

fn merkle<F: PrimeField + Absorb>(alpha: u64) {
    assert_eq!(poseidon_config::<F>().alpha, alpha);
    let mut rng = StdRng::seed_from_u64(2);
    let c = MerklePaths::<F>::random(3, 5, &mut rng);
    assert!(satisfied::<F>(c.clone()));
    assert_eq!(c.public_inputs().len(), 3);
    // A wrong sibling direction gives another root: the circuit is unsatisfiable with the
    // claimed roots (prove it by changing the witness after computing the roots).
    let roots = c.roots();
    let mut flipped = c.clone();
    flipped.paths[1].is_right[2] ^= true;
    assert_ne!(flipped.roots()[1], roots[1]);
    assert_eq!(flipped.roots()[0], roots[0]);
    assert!(satisfied_with_roots(c.clone(), &roots));
    assert!(!satisfied_with_roots(flipped, &roots));
    // Sized.
    for k in [12, 14] {
        let paths = MerklePaths::<F>::paths_for(k, 4).unwrap();
        let (constraints, inputs) =
            count_constraints::<F>(MerklePaths::<F>::random(paths, 4, &mut rng)).unwrap();
        assert!(
            constraints + inputs <= 1 << k,
            "2^{k}: {paths} paths, {constraints}"
        );
        assert!(
            constraints + inputs > (1 << k) * 3 / 4,
            "2^{k}: {paths} paths, {constraints}"
        );
    }
    let (circuit, public) = sized::<F, _>(Family::Merkle, 15, &mut rng).unwrap();
    assert!(satisfied::<F>(circuit));
    assert!(!public.is_empty());
}

#[test]
fn merkle_bls12_381() {
    merkle::<ark_bls12_381::Fr>(5);
}

#[test]
fn merkle_bls12_377() {
    merkle::<ark_bls12_377::Fr>(11);
}
