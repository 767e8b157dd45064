//! Constraint synthesis: with the matrices (once per key), or the witness alone (every proof).

use ark_ff::PrimeField;
use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystem, ConstraintSystemRef, Matrix, OptimizationGoal,
    R1CS_PREDICATE_LABEL, SynthesisError, SynthesisMode,
};

/// A synthesized circuit: what a Groth16 prover needs of it.
#[derive(Debug)]
pub struct Synthesized<F: PrimeField> {
    /// The constraint system (for `which_is_unsatisfied` and the like).
    pub cs: ConstraintSystemRef<F>,
    /// The R1CS matrices A, B, C.
    pub matrices: Vec<Matrix<F>>,
    /// `[1, public inputs..., witness...]`.
    pub full_assignment: Vec<F>,
    /// Instance variables, the constant one included.
    pub num_inputs: usize,
    /// Constraints.
    pub num_constraints: usize,
}

impl<F: PrimeField> Synthesized<F> {
    /// Witness variables.
    pub fn num_witness(&self) -> usize {
        self.full_assignment.len() - self.num_inputs
    }
}

/// Synthesizes `circuit` as `Groth16::create_proof_with_reduction` does (optimized for
/// constraints, matrices built, linear combinations inlined).
pub fn synthesize<F: PrimeField>(
    circuit: impl ConstraintSynthesizer<F>,
) -> Result<Synthesized<F>, SynthesisError> {
    let cs = run(circuit, prove_mode(true))?;
    let matrices = r1cs_matrices(&cs)?;
    let full_assignment = [cs.instance_assignment()?, cs.witness_assignment()?].concat();
    Ok(Synthesized {
        num_inputs: cs.num_instance_variables(),
        num_constraints: cs.num_constraints(),
        cs,
        matrices,
        full_assignment,
    })
}

/// ark-groth16's prover mode, with or without the matrices.
fn prove_mode(construct_matrices: bool) -> SynthesisMode {
    SynthesisMode::Prove {
        construct_matrices,
        generate_lc_assignments: false,
    }
}

/// `circuit` synthesized in `mode`, optimized for constraints as ark-groth16 synthesizes (the
/// same goal in every mode keeps the variables and their order the same), and finalized.
fn run<F: PrimeField>(
    circuit: impl ConstraintSynthesizer<F>,
    mode: SynthesisMode,
) -> Result<ConstraintSystemRef<F>, SynthesisError> {
    let cs = ConstraintSystem::new_ref();
    cs.set_optimization_goal(OptimizationGoal::Constraints);
    cs.set_mode(mode);
    circuit.generate_constraints(cs.clone())?;
    cs.finalize();
    Ok(cs)
}

fn r1cs_matrices<F: PrimeField>(
    cs: &ConstraintSystemRef<F>,
) -> Result<Vec<Matrix<F>>, SynthesisError> {
    cs.to_matrices()?
        .remove(R1CS_PREDICATE_LABEL)
        .ok_or(SynthesisError::PredicateNotFound)
}

/// The matrices of `circuit` from a synthesis in setup mode (no witness values are asked
/// for, as ark-groth16's key generator synthesizes), with the instance and witness counts.
pub fn synthesize_matrices<F: PrimeField>(
    circuit: impl ConstraintSynthesizer<F>,
) -> Result<(Vec<Matrix<F>>, usize, usize), SynthesisError> {
    let cs = run(circuit, SynthesisMode::Setup)?;
    let matrices = r1cs_matrices(&cs)?;
    Ok((
        matrices,
        cs.num_instance_variables(),
        cs.num_witness_variables(),
    ))
}

/// A circuit's assignment from a witness-only synthesis.
#[derive(Clone, Debug)]
pub struct Witness<F> {
    /// `[1, public inputs..., witness...]`.
    pub full_assignment: Vec<F>,
    /// Instance variables, the constant one included.
    pub num_inputs: usize,
}

impl<F> Witness<F> {
    /// Witness variables.
    pub fn num_witness(&self) -> usize {
        self.full_assignment.len() - self.num_inputs
    }
}

/// The assignment of `circuit` without its constraints: `SynthesisMode::Prove {
/// construct_matrices: false }`, optimized for constraints as in [`synthesize`], so the
/// variables (and their order) are the same. Several times faster than [`synthesize`]: no
/// linear combination is stored or inlined and no matrix is built.
pub fn synthesize_witness<F: PrimeField>(
    circuit: impl ConstraintSynthesizer<F>,
) -> Result<Witness<F>, SynthesisError> {
    let cs = run(circuit, prove_mode(false))?;
    Ok(Witness {
        num_inputs: cs.num_instance_variables(),
        full_assignment: [cs.instance_assignment()?, cs.witness_assignment()?].concat(),
    })
}
