//! Test circuits shared by the Groth16 tests.

#![allow(dead_code)]

use ark_ff::{Field, PrimeField};
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError, Variable};
use ark_relations::lc;

/// `v_(i+1) = v_i (v_i + offset)` for `steps` steps from a secret `x`, ending in the public
/// `y` (and `extra` public inputs that are only carried along). `corrupt = Some(k)` assigns a
/// wrong value to step `k`, so constraint `extra.len() + k` is not satisfied.
#[derive(Clone, Debug)]
pub struct Chain<F: Field> {
    pub x: F,
    pub steps: usize,
    pub extra: Vec<F>,
    pub offset: u64,
    pub corrupt: Option<usize>,
}

impl<F: Field> Chain<F> {
    pub fn new(x: F, steps: usize, extra: Vec<F>) -> Self {
        Self {
            x,
            steps,
            extra,
            offset: 1,
            corrupt: None,
        }
    }

    fn step(&self, v: F) -> F {
        v * (v + F::from(self.offset))
    }

    pub fn output(&self) -> F {
        (0..self.steps).fold(self.x, |v, _| self.step(v))
    }

    pub fn public(&self) -> Vec<F> {
        let mut p = vec![self.output()];
        p.extend(&self.extra);
        p
    }
}

impl<F: PrimeField> ConstraintSynthesizer<F> for Chain<F> {
    fn generate_constraints(self, cs: ConstraintSystemRef<F>) -> Result<(), SynthesisError> {
        let y = cs.new_input_variable(|| Ok(self.output()))?;
        for e in &self.extra {
            let v = cs.new_input_variable(|| Ok(*e))?;
            cs.enforce_r1cs_constraint(|| lc!() + v, || lc!() + Variable::One, || lc!() + v)?;
        }
        let mut v_val = self.x;
        let mut v = cs.new_witness_variable(|| Ok(v_val))?;
        let offset = F::from(self.offset);
        for k in 0..self.steps {
            let mut next_val = self.step(v_val);
            if self.corrupt == Some(k) {
                next_val += F::ONE;
            }
            let next = cs.new_witness_variable(|| Ok(next_val))?;
            cs.enforce_r1cs_constraint(
                || lc!() + v,
                || lc!() + v + (offset, Variable::One),
                || lc!() + next,
            )?;
            (v, v_val) = (next, next_val);
        }
        // The output: with a corrupted step the witness chain ends elsewhere, so this
        // constraint fails too (after the corrupted one).
        cs.enforce_r1cs_constraint(|| lc!() + v, || lc!() + Variable::One, || lc!() + y)?;
        Ok(())
    }
}

/// ark-groth16's key for `circuit`'s shape.
pub fn setup<E: ark_ec::pairing::Pairing>(
    circuit: &Chain<E::ScalarField>,
    rng: &mut ark_std::rand::rngs::StdRng,
) -> ark_groth16::ProvingKey<E> {
    ark_groth16::Groth16::<E>::generate_random_parameters_with_reduction(circuit.clone(), rng)
        .expect("setup")
}

/// `n` circuits of one shape: chains of `steps` steps with one extra public input; circuit 2
/// starts from zero.
pub fn chains<F: PrimeField>(
    n: usize,
    steps: usize,
    rng: &mut ark_std::rand::rngs::StdRng,
) -> Vec<Chain<F>> {
    (0..n)
        .map(|k| {
            let x = if k == 2 { F::zero() } else { F::rand(rng) };
            Chain::new(x, steps, vec![F::rand(rng)])
        })
        .collect()
}

/// A stream's proofs of `circuits` against ark-groth16's with the stream's seeded
/// generator, in order: circuit `bad` must have failed as `Unsatisfied` at constraint
/// `index` (arkworks still draws its `r` and `s`, as the stream does), every other proof must
/// equal ark-groth16's.
pub fn check_stream<E: zkgpu_groth16::GpuPairing>(
    pk: &ark_groth16::ProvingKey<E>,
    circuits: Vec<Chain<E::ScalarField>>,
    got: Vec<Result<ark_groth16::Proof<E>, zkgpu_groth16::ProveError>>,
    stream_seed: u64,
    (bad, index): (usize, usize),
) {
    use ark_std::{UniformRand, rand::SeedableRng};
    assert_eq!(got.len(), circuits.len());
    let mut ark_rng = ark_std::rand::rngs::StdRng::seed_from_u64(stream_seed);
    for (k, (c, g)) in circuits.into_iter().zip(got).enumerate() {
        if k == bad {
            let _ = (
                E::ScalarField::rand(&mut ark_rng),
                E::ScalarField::rand(&mut ark_rng),
            );
            match g {
                Err(zkgpu_groth16::ProveError::Unsatisfied { index: i, .. }) if i == index => {}
                other => panic!("circuit {k}: expected Unsatisfied at {index}, got {other:?}"),
            }
            continue;
        }
        let want =
            ark_groth16::Groth16::<E>::create_random_proof_with_reduction(c, pk, &mut ark_rng)
                .expect("ark-groth16 proof");
        assert!(
            g.expect("a streamed proof") == want,
            "streamed proof {k} differs from ark-groth16's"
        );
    }
}

/// Folded bases (four levels: what the planner would not choose at these sizes) or plain.
pub fn layout(fold: bool) -> zkgpu_groth16::KeyLayout {
    if fold {
        zkgpu_groth16::KeyLayout::Folded(zkgpu_msm::Fold {
            folds: 4,
            window_bits: None,
        })
    } else {
        zkgpu_groth16::KeyLayout::Plain
    }
}
