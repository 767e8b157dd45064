//! circom's `.r1cs` (the compiler's constraint system) and a key made from it with
//! ark-groth16's generator and circom's reduction, for circuits too large for snarkjs' own
//! setup. The key proves with `zkgpu prove-circom` and with snarkjs alike.
//!
//! Sections: 1 the header (the field's byte size and prime, the wire count, public outputs,
//! public inputs, private inputs, the label count (`u64`) and the constraint count); 2 the
//! constraints (per constraint, A, B and C as a term count and `(wire, value)` terms, values
//! canonical); 3 the wires' labels (not read).

use ark_bn254::Fr;
use ark_ff::PrimeField;
use ark_groth16::Groth16;
use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystemRef, LinearCombination, Matrix, SynthesisError, Variable,
};
use ark_std::rand::Rng;

use crate::binfile::{BinFile, Reader};
use crate::curve::{CircomCurve, check_field, n8};
use crate::error::CircomError;
use crate::field::canonical;
use crate::reduction::CircomReduction;
use crate::zkey::CircomKey;

pub(crate) const FILE: &str = ".r1cs";

/// A circom constraint system: A, B and C over the wires (wire 0 is the constant one, then
/// the public outputs, the public inputs, the rest), over BN254's scalar field unless `F`
/// says otherwise.
#[derive(Clone, Debug)]
pub struct CircomR1cs<F: PrimeField = Fr> {
    /// Wires (signals), the constant one included.
    pub num_wires: usize,
    /// Public signals (outputs and public inputs).
    pub num_public: usize,
    /// The rows of A, B and C, one per constraint, terms as `(value, wire)`.
    pub matrices: [Matrix<F>; 3],
}

impl<F: PrimeField> CircomR1cs<F> {
    /// Constraints.
    pub fn num_constraints(&self) -> usize {
        self.matrices[0].len()
    }
}

/// Reads a circom `.r1cs` over the scalar field `F` (BN254's or BLS12-381's), checking the
/// prime, every wire index and every value ([`crate::r1cs_curve`] tells which curve a
/// circuit is over).
pub fn read_r1cs<F: PrimeField>(bytes: &[u8]) -> Result<CircomR1cs<F>, CircomError> {
    let file = BinFile::parse(bytes, b"r1cs", &[1], FILE)?;
    let mut h = file.section(1)?;
    check_field::<F>(&mut h, FILE, "a circuit over the scalar field")?;
    let (wires, outputs, inputs) = (h.usize()?, h.usize()?, h.usize()?);
    let _private = h.usize()?;
    h.take(8)?; // labels
    let count = h.usize()?;
    let num_public = outputs + inputs;
    if num_public + 1 > wires {
        return Err(h.error(format!("{num_public} public signals of {wires} wires")));
    }
    let mut r = file.section(2)?;
    let mut matrices: [Matrix<F>; 3] = Default::default();
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
fn read_terms<F: PrimeField>(
    r: &mut Reader<'_>,
    wires: usize,
    i: usize,
) -> Result<Vec<(F, usize)>, CircomError> {
    let n = r.usize()?;
    let n8 = n8::<F>();
    let mut terms = Vec::with_capacity(n.min(r.remaining() / (4 + n8)));
    for _ in 0..n {
        let wire = r.usize()?;
        let value = canonical::<F>(r.take(n8)?);
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
struct Replay<'a, F: PrimeField>(&'a CircomR1cs<F>);

impl<F: PrimeField> ConstraintSynthesizer<F> for Replay<'_, F> {
    fn generate_constraints(self, cs: ConstraintSystemRef<F>) -> Result<(), SynthesisError> {
        let r = self.0;
        let mut vars = vec![Variable::One];
        for _ in 0..r.num_public {
            vars.push(cs.new_input_variable(|| Err(SynthesisError::AssignmentMissing))?);
        }
        for _ in r.num_public + 1..r.num_wires {
            vars.push(cs.new_witness_variable(|| Err(SynthesisError::AssignmentMissing))?);
        }
        let lc = |terms: &[(F, usize)]| {
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
pub fn setup<E: CircomCurve>(
    r1cs: &CircomR1cs<E::ScalarField>,
    rng: &mut impl Rng,
) -> Result<CircomKey<E>, CircomError> {
    let pk =
        Groth16::<E, CircomReduction>::generate_random_parameters_with_reduction(Replay(r1cs), rng)
            .map_err(|e| CircomError::Prove(zkgpu_groth16::ProveError::Synthesis(e)))?;
    let [a, b, _] = r1cs.matrices.clone();
    Ok(CircomKey {
        proving_key: pk,
        ab: [a, b],
        num_public: r1cs.num_public,
        num_variables: r1cs.num_wires,
    })
}
