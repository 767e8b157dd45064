//! circom's `.r1cs` (the compiler's constraint system) and a key made from it with
//! ark-groth16's generator and circom's reduction, for circuits too large for snarkjs' own
//! setup. The key proves with `zkgpu prove-circom` and with snarkjs alike.
//!
//! Sections: 1 the header (the field's byte size and prime, the wire count, public outputs,
//! public inputs, private inputs, the label count (`u64`) and the constraint count); 2 the
//! constraints (per constraint, A, B and C as a term count and `(wire, value)` terms, values
//! canonical); 3 the wires' labels (not read).

use ark_bn254::{Bn254, Fr};
use ark_groth16::Groth16;
use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystemRef, LinearCombination, Matrix, SynthesisError, Variable,
};
use ark_std::rand::Rng;

use crate::binfile::{BinFile, Reader};
use crate::error::CircomError;
use crate::field::{N8, canonical, check_field};
use crate::reduction::CircomReduction;
use crate::zkey::CircomKey;

const FILE: &str = ".r1cs";

/// A circom constraint system: A, B and C over the wires (wire 0 is the constant one, then
/// the public outputs, the public inputs, the rest).
#[derive(Clone, Debug)]
pub struct CircomR1cs {
    /// Wires (signals), the constant one included.
    pub num_wires: usize,
    /// Public signals (outputs and public inputs).
    pub num_public: usize,
    /// The rows of A, B and C, one per constraint, terms as `(value, wire)`.
    pub matrices: [Matrix<Fr>; 3],
}

impl CircomR1cs {
    /// Constraints.
    pub fn num_constraints(&self) -> usize {
        self.matrices[0].len()
    }
}

/// Reads a circom `.r1cs` over BN254's scalar field, checking the prime, every wire index
/// and every value.
pub fn read_r1cs(bytes: &[u8]) -> Result<CircomR1cs, CircomError> {
    let file = BinFile::parse(bytes, b"r1cs", &[1], FILE)?;
    let mut h = file.section(1)?;
    check_field::<Fr>(&mut h, FILE, |n8| {
        format!("a circuit over another field (a {n8}-byte prime, not BN254's)")
    })?;
    let (wires, outputs, inputs) = (h.usize()?, h.usize()?, h.usize()?);
    let _private = h.usize()?;
    h.take(8)?; // labels
    let count = h.usize()?;
    let num_public = outputs + inputs;
    if num_public + 1 > wires {
        return Err(h.error(format!("{num_public} public signals of {wires} wires")));
    }
    let mut r = file.section(2)?;
    let mut matrices: [Matrix<Fr>; 3] = Default::default();
    // A constraint takes at least 12 bytes (three term counts): the count is bounded by the
    // section before anything is allocated by it.
    if count > r.remaining() / 12 {
        return Err(r.error(format!("is too short for {count} constraints")));
    }
    for m in &mut matrices {
        m.reserve(count);
    }
    for i in 0..count {
        for m in &mut matrices {
            m.push(read_terms(&mut r, wires, i)?);
        }
    }
    Ok(CircomR1cs {
        num_wires: wires,
        num_public,
        matrices,
    })
}

/// One linear combination of constraint `i`.
fn read_terms(r: &mut Reader<'_>, wires: usize, i: usize) -> Result<Vec<(Fr, usize)>, CircomError> {
    let n = r.usize()?;
    let mut terms = Vec::with_capacity(n.min(r.remaining() / (4 + N8)));
    for _ in 0..n {
        let wire = r.usize()?;
        let value = canonical::<Fr>(r.take(N8)?);
        match value {
            Some(v) if wire < wires => terms.push((v, wire)),
            _ => {
                return Err(r.error(format!(
                    "constraint {i}: wire {wire} of {wires}, or a value past the modulus"
                )));
            }
        }
    }
    Ok(terms)
}

/// The constraint system replayed into arkworks in setup mode (no values): wire `w` is the
/// instance variable `w` for `w <= num_public`, else witness variable `w - num_public - 1`,
/// so arkworks' full assignment is circom's witness.
struct Replay<'a>(&'a CircomR1cs);

impl ConstraintSynthesizer<Fr> for Replay<'_> {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        let r = self.0;
        let mut vars = vec![Variable::One];
        for _ in 0..r.num_public {
            vars.push(cs.new_input_variable(|| Err(SynthesisError::AssignmentMissing))?);
        }
        for _ in r.num_public + 1..r.num_wires {
            vars.push(cs.new_witness_variable(|| Err(SynthesisError::AssignmentMissing))?);
        }
        let lc = |terms: &[(Fr, usize)]| {
            LinearCombination(terms.iter().map(|&(v, w)| (v, vars[w])).collect())
        };
        let [a, b, c] = &r.matrices;
        for ((a, b), c) in a.iter().zip(b).zip(c) {
            cs.enforce_r1cs_constraint(|| lc(a), || lc(b), || lc(c))?;
        }
        Ok(())
    }
}

/// A Groth16 key for the circuit with circom's reduction, from ark-groth16's generator
/// (fresh toxic waste from `rng`: a test or benchmark key, not a ceremony's), with the A and
/// B matrices a `.zkey` carries.
pub fn setup(r1cs: &CircomR1cs, rng: &mut impl Rng) -> Result<CircomKey, CircomError> {
    let pk = Groth16::<Bn254, CircomReduction>::generate_random_parameters_with_reduction(
        Replay(r1cs),
        rng,
    )
    .map_err(|e| CircomError::Prove(zkgpu_groth16::ProveError::Synthesis(e)))?;
    let [a, b, _] = r1cs.matrices.clone();
    Ok(CircomKey {
        proving_key: pk,
        ab: [a, b],
        num_public: r1cs.num_public,
        num_variables: r1cs.num_wires,
    })
}
