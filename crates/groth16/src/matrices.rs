//! A circuit's R1CS matrices in the compact form the witness map's sparse products read.
//!
//! The matrices of a circuit do not change from proof to proof, so the prover builds them
//! once per key ([`crate::PreparedProvingKey`]) and every proof after that synthesizes its
//! witness alone (`SynthesisMode::Prove { construct_matrices: false }`).

use ark_ff::PrimeField;

pub use crate::reduction::Qap;
use ark_relations::gr1cs::Matrix;

/// Errors building [`R1csMatrices`] from arkworks' matrices.
#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    /// Not three matrices (A, B, C).
    #[error("expected the three R1CS matrices A, B and C, got {0}")]
    NotR1cs(usize),
    /// A matrix has fewer rows than the constraint count.
    #[error("matrix {matrix} has {rows} rows for {constraints} constraints")]
    Rows {
        /// 0, 1, 2 for A, B, C.
        matrix: usize,
        /// Its rows.
        rows: usize,
        /// The constraint count.
        constraints: usize,
    },
    /// An entry names a variable past the assignment.
    #[error("matrix {matrix}, row {row}: variable {column} of {variables}")]
    Column {
        /// 0, 1, 2 for A, B, C.
        matrix: usize,
        /// The row.
        row: usize,
        /// The variable index.
        column: usize,
        /// Variables in all.
        variables: usize,
    },
    /// More entries or variables than 32-bit indices address.
    #[error("a matrix has more than 2^32 entries or variables")]
    TooLarge,
}

/// One matrix, row-compressed. Row `i`'s entries are `cols[starts[i]..starts[i + 1]]`; the
/// first `units[i]` of them have coefficient one, the next `negs[i]` minus one, and the rest
/// take their coefficients from `coeffs[cstarts[i]..]` in order. Ones and minus ones are
/// most entries of gadget-built circuits: they cost an addition, not a multiplication.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SparseRows<F> {
    pub(crate) starts: Vec<u32>,
    pub(crate) units: Vec<u32>,
    pub(crate) negs: Vec<u32>,
    pub(crate) cstarts: Vec<u32>,
    pub(crate) cols: Vec<u32>,
    pub(crate) coeffs: Vec<F>,
}

impl<F: PrimeField> SparseRows<F> {
    fn from_rows(
        rows: &[Vec<(F, usize)>],
        matrix: usize,
        variables: usize,
    ) -> Result<Self, MatrixError> {
        let entries: usize = rows.iter().map(Vec::len).sum();
        let idx = |n: usize| u32::try_from(n).map_err(|_| MatrixError::TooLarge);
        idx(entries)?;
        idx(variables)?;
        let mut m = Self {
            starts: Vec::with_capacity(rows.len() + 1),
            units: Vec::with_capacity(rows.len()),
            negs: Vec::with_capacity(rows.len()),
            cstarts: Vec::with_capacity(rows.len() + 1),
            cols: Vec::with_capacity(entries),
            coeffs: Vec::new(),
        };
        let minus_one = -F::one();
        for (row, terms) in rows.iter().enumerate() {
            m.starts.push(m.cols.len() as u32);
            m.cstarts.push(m.coeffs.len() as u32);
            for &(_, column) in terms {
                if column >= variables {
                    return Err(MatrixError::Column {
                        matrix,
                        row,
                        column,
                        variables,
                    });
                }
            }
            let (mut units, mut negs) = (0u32, 0u32);
            for &(c, col) in terms {
                if c.is_one() {
                    m.cols.push(col as u32);
                    units += 1;
                }
            }
            for &(c, col) in terms {
                if c == minus_one {
                    m.cols.push(col as u32);
                    negs += 1;
                }
            }
            for &(c, col) in terms {
                if !c.is_one() && c != minus_one {
                    m.cols.push(col as u32);
                    m.coeffs.push(c);
                }
            }
            m.units.push(units);
            m.negs.push(negs);
        }
        m.starts.push(m.cols.len() as u32);
        m.cstarts.push(m.coeffs.len() as u32);
        Ok(m)
    }

    /// Rows.
    pub(crate) fn rows(&self) -> usize {
        self.units.len()
    }

    /// Entries of row `i`.
    fn row_len(&self, i: usize) -> usize {
        (self.starts[i + 1] - self.starts[i]) as usize
    }

    /// Whether row `i` equals row `j` of `other` (the same entries, in the same order).
    fn same_row(&self, i: usize, other: &Self, j: usize) -> bool {
        self.units[i] == other.units[j]
            && self.negs[i] == other.negs[j]
            && self.row_cols(i) == other.row_cols(j)
            && self.row_coeffs(i) == other.row_coeffs(j)
    }

    fn row_cols(&self, i: usize) -> &[u32] {
        &self.cols[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    fn row_coeffs(&self, i: usize) -> &[F] {
        &self.coeffs[self.cstarts[i] as usize..self.cstarts[i + 1] as usize]
    }

    /// `sum_j M[row][j] z[j]`. `z` must hold every variable (checked by the caller once).
    #[inline]
    fn eval(&self, row: usize, z: &[F]) -> F {
        let start = self.starts[row] as usize;
        let end = self.starts[row + 1] as usize;
        let units = start + self.units[row] as usize;
        let negs = units + self.negs[row] as usize;
        let mut acc = F::zero();
        for &c in &self.cols[start..units] {
            acc += z[c as usize];
        }
        for &c in &self.cols[units..negs] {
            acc -= z[c as usize];
        }
        let coeffs = &self.coeffs[self.cstarts[row] as usize..];
        for (&c, k) in self.cols[negs..end].iter().zip(coeffs) {
            acc += z[c as usize] * k;
        }
        acc
    }

    /// Checks the arrays against each other (a deserialized copy must pass before use).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))] // cache files are native
    pub(crate) fn check(&self, variables: usize) -> Result<(), String> {
        let rows = self.units.len();
        if self.negs.len() != rows
            || self.starts.len() != rows + 1
            || self.cstarts.len() != rows + 1
        {
            return Err("row arrays of different lengths".into());
        }
        if self.starts[0] != 0 || self.cstarts[0] != 0 {
            return Err("rows do not start at 0".into());
        }
        for i in 0..rows {
            let (s, e) = (self.starts[i] as u64, self.starts[i + 1] as u64);
            let (cs, ce) = (self.cstarts[i] as u64, self.cstarts[i + 1] as u64);
            let special = self.units[i] as u64 + self.negs[i] as u64;
            if e < s || ce < cs || special > e - s || (e - s) - special != ce - cs {
                return Err(format!("row {i} is inconsistent"));
            }
        }
        if self.starts[rows] as usize != self.cols.len()
            || self.cstarts[rows] as usize != self.coeffs.len()
        {
            return Err("entry counts disagree with the row offsets".into());
        }
        if let Some(c) = self.cols.iter().find(|&&c| c as usize >= variables) {
            return Err(format!("variable {c} of {variables}"));
        }
        Ok(())
    }
}

/// The R1CS matrices A, B, C of one circuit (ark-relations' `R1CS_PREDICATE_LABEL`
/// predicate, linear combinations inlined as ark-groth16 inlines them), with its counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct R1csMatrices<F> {
    pub(crate) m: [SparseRows<F>; 3],
    /// Per matrix and row, [`COMPUTE`] or the row it repeats: `3 d + k` for row `i - d` of
    /// matrix `k`, `d <= REPEAT_WINDOW` (`d = 0` only for an earlier matrix). Gadget circuits
    /// repeat a linear combination in nearby constraints (Poseidon's S-box input is A and B
    /// of `x^2` and B of `x^5`): evaluated once, read thrice.
    pub(crate) repeats: [Vec<u8>; 3],
    pub(crate) num_inputs: usize,
    pub(crate) num_witness: usize,
    pub(crate) num_constraints: usize,
    /// The reduction the rows feed ([`Qap::Circom`]: C is empty and `C z` is `(A z) (B z)`).
    pub(crate) qap: Qap,
}

impl<F: PrimeField> R1csMatrices<F> {
    /// From arkworks' matrices of a circuit with `num_inputs` instance variables (the constant
    /// one included), `num_witness` witness variables and `num_constraints` constraints.
    pub fn from_arkworks(
        matrices: &[Matrix<F>],
        num_inputs: usize,
        num_witness: usize,
        num_constraints: usize,
    ) -> Result<Self, MatrixError> {
        let [a, b, c] = matrices else {
            return Err(MatrixError::NotR1cs(matrices.len()));
        };
        let counts = (num_inputs, num_witness, num_constraints);
        Self::from_matrices([a, b, c], counts, Qap::Libsnark)
    }

    /// The compact rows of `[a, b, c]` for `(num_inputs, num_witness, num_constraints)`.
    fn from_matrices(
        [a, b, c]: [&Matrix<F>; 3],
        (num_inputs, num_witness, num_constraints): (usize, usize, usize),
        qap: Qap,
    ) -> Result<Self, MatrixError> {
        let variables = num_inputs + num_witness;
        let rows = |matrix: usize, m: &Matrix<F>| {
            if m.len() < num_constraints {
                return Err(MatrixError::Rows {
                    matrix,
                    rows: m.len(),
                    constraints: num_constraints,
                });
            }
            SparseRows::from_rows(&m[..num_constraints], matrix, variables)
        };
        let m = [rows(0, a)?, rows(1, b)?, rows(2, c)?];
        let repeats = find_repeats(&m);
        Ok(Self {
            m,
            repeats,
            num_inputs,
            num_witness,
            num_constraints,
            qap,
        })
    }

    /// From the A and B matrices of a circom circuit (a snarkjs key's, without the rows that
    /// copy the instance), for [`Qap::Circom`]: `C z` is taken as `(A z) (B z)` row by row.
    pub fn from_circom(
        a: &Matrix<F>,
        b: &Matrix<F>,
        num_inputs: usize,
        num_witness: usize,
        num_constraints: usize,
    ) -> Result<Self, MatrixError> {
        let c: Matrix<F> = vec![Vec::new(); num_constraints];
        let counts = (num_inputs, num_witness, num_constraints);
        Self::from_matrices([a, b, &c], counts, Qap::Circom)
    }

    /// The QAP reduction these rows feed.
    pub fn qap(&self) -> Qap {
        self.qap
    }

    /// Instance variables, the constant one included.
    pub fn num_instance_variables(&self) -> usize {
        self.num_inputs
    }

    /// Witness variables.
    pub fn num_witness_variables(&self) -> usize {
        self.num_witness
    }

    /// Constraints.
    pub fn num_constraints(&self) -> usize {
        self.num_constraints
    }

    /// Nonzero entries of A, B and C together.
    pub fn num_entries(&self) -> usize {
        self.m.iter().map(|m| m.cols.len()).sum()
    }

    /// Checks every array against the counts (what a copy read from disk must pass).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))] // cache files are native
    pub(crate) fn check(&self) -> Result<(), String> {
        for (k, m) in self.m.iter().enumerate() {
            if m.rows() != self.num_constraints {
                return Err(format!(
                    "matrix {k} has {} rows for {} constraints",
                    m.rows(),
                    self.num_constraints
                ));
            }
            m.check(self.num_inputs + self.num_witness)
                .map_err(|e| format!("matrix {k}: {e}"))?;
        }
        for (k, reps) in self.repeats.iter().enumerate() {
            if reps.len() != self.num_constraints {
                return Err(format!("repeats of matrix {k} cover {} rows", reps.len()));
            }
            for (i, &v) in reps.iter().enumerate() {
                let (d, from) = (usize::from(v / 3), usize::from(v % 3));
                // Bounds only: a repeat of an unequal row gives wrong products, which the
                // satisfaction check or the proof's self-check refuses.
                let fine = v == COMPUTE || (d <= REPEAT_WINDOW && d <= i && (d > 0 || from < k));
                if !fine {
                    return Err(format!("matrix {k}, row {i}: a repeat out of bounds"));
                }
            }
        }
        Ok(())
    }
}

/// [`R1csMatrices::repeats`]: the row is evaluated.
pub(crate) const COMPUTE: u8 = u8::MAX;
/// How far back a repeated row is looked for.
pub(crate) const REPEAT_WINDOW: usize = 8;

/// For every row of every matrix: the nearest equal row among the `REPEAT_WINDOW` rows
/// before it (and the same row of an earlier matrix), or [`COMPUTE`]. Rows of at most one
/// entry cost as little to evaluate as to look up and are always computed.
fn find_repeats<F: PrimeField>(m: &[SparseRows<F>; 3]) -> [Vec<u8>; 3] {
    let rows = m[0].rows();
    std::array::from_fn(|k| {
        (0..rows)
            .map(|i| {
                if m[k].row_len(i) <= 1 {
                    return COMPUTE;
                }
                (0..=REPEAT_WINDOW.min(i))
                    .flat_map(|d| (0..3).map(move |from| (d, from)))
                    .filter(|&(d, from)| d > 0 || from < k)
                    .find(|&(d, from)| m[k].same_row(i, &m[from], i - d))
                    .map_or(COMPUTE, |(d, from)| (3 * d + from) as u8)
            })
            .collect()
    })
}

/// The rows of a constraint system as the witness map reads them: `(A z)_i`, `(B z)_i` and
/// `(C z)_i` for constraint `i`.
pub trait ConstraintRows<F>: Sync {
    /// Constraints.
    fn num_constraints(&self) -> usize;
    /// Variables the assignment must hold (at least).
    fn num_variables(&self) -> usize;
    /// Row `i` of `A z`, `B z` and `C z`; `i < num_constraints()` and `z` holds at least
    /// `num_variables()` elements.
    fn eval_row(&self, i: usize, z: &[F]) -> (F, F, F);
    /// Rows `start .. start + out.len()` into `out` (where rows repeat, each is evaluated
    /// once).
    fn eval_rows(&self, start: usize, z: &[F], out: &mut [(F, F, F)]) {
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.eval_row(start + k, z);
        }
    }
    /// The reduction the rows feed.
    fn qap(&self) -> Qap {
        Qap::Libsnark
    }
}

impl<F: PrimeField> ConstraintRows<F> for R1csMatrices<F> {
    fn num_constraints(&self) -> usize {
        self.num_constraints
    }

    fn num_variables(&self) -> usize {
        self.num_inputs + self.num_witness
    }

    fn eval_row(&self, i: usize, z: &[F]) -> (F, F, F) {
        let [a, b, c] = &self.m;
        let (a, b) = (a.eval(i, z), b.eval(i, z));
        let c = match self.qap {
            Qap::Libsnark => c.eval(i, z),
            Qap::Circom => a * b,
        };
        (a, b, c)
    }

    fn qap(&self) -> Qap {
        self.qap
    }

    /// Each row once: a repeat of a row of this block is read from its result; a repeat of
    /// a row before the block is evaluated.
    fn eval_rows(&self, start: usize, z: &[F], out: &mut [(F, F, F)]) {
        for k in 0..out.len() {
            let i = start + k;
            let mut v = [F::zero(); 3];
            for m in 0..3 {
                let rep = self.repeats[m][i];
                let (d, from) = (usize::from(rep / 3), usize::from(rep % 3));
                v[m] = if rep == COMPUTE || d > k {
                    self.m[m].eval(i, z)
                } else if d == 0 {
                    v[from]
                } else {
                    let (a, b, c) = out[k - d];
                    [a, b, c][from]
                };
            }
            if self.qap == Qap::Circom {
                v[2] = v[0] * v[1];
            }
            out[k] = (v[0], v[1], v[2]);
        }
    }
}

/// arkworks' matrices as they come from a synthesis (`GpuReduction`'s path): rows read in
/// place with ark-groth16's `evaluate_constraint`.
#[derive(Debug)]
pub(crate) struct ArkRows<'a, F> {
    pub(crate) m: [&'a Matrix<F>; 3],
    pub(crate) num_constraints: usize,
    pub(crate) num_variables: usize,
}

impl<F: PrimeField> ConstraintRows<F> for ArkRows<'_, F> {
    fn num_constraints(&self) -> usize {
        self.num_constraints
    }

    fn num_variables(&self) -> usize {
        self.num_variables
    }

    fn eval_row(&self, i: usize, z: &[F]) -> (F, F, F) {
        use ark_groth16::r1cs_to_qap::evaluate_constraint;
        let [a, b, c] = self.m;
        (
            evaluate_constraint(&a[i], z),
            evaluate_constraint(&b[i], z),
            evaluate_constraint(&c[i], z),
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use ark_bls12_381::Fr;
    use ark_ff::UniformRand;
    use ark_groth16::r1cs_to_qap::evaluate_constraint;
    use ark_std::rand::{Rng, SeedableRng, rngs::StdRng};

    /// Random rows with ones, minus ones, zeros and general coefficients, some rows empty.
    fn random_matrix(rng: &mut StdRng, rows: usize, vars: usize) -> Matrix<Fr> {
        (0..rows)
            .map(|_| {
                let n = rng.gen_range(0..6);
                (0..n)
                    .map(|_| {
                        let c = match rng.gen_range(0..4) {
                            0 => Fr::from(1u64),
                            1 => -Fr::from(1u64),
                            2 => Fr::from(0u64),
                            _ => Fr::rand(rng),
                        };
                        (c, rng.gen_range(0..vars))
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn rows_equal_arkworks() {
        let mut rng = StdRng::seed_from_u64(5);
        let (inputs, witness, rows) = (3, 40, 200);
        let vars = inputs + witness;
        let ms: Vec<Matrix<Fr>> = (0..3)
            .map(|_| random_matrix(&mut rng, rows, vars))
            .collect();
        let z: Vec<Fr> = (0..vars).map(|_| Fr::rand(&mut rng)).collect();
        let compact = R1csMatrices::from_arkworks(&ms, inputs, witness, rows).unwrap();
        compact.check().unwrap();
        for (i, ((ra, rb), rc)) in ms[0].iter().zip(&ms[1]).zip(&ms[2]).enumerate() {
            let (a, b, c) = compact.eval_row(i, &z);
            assert_eq!(a, evaluate_constraint(ra, &z), "row {i} of A");
            assert_eq!(b, evaluate_constraint(rb, &z), "row {i} of B");
            assert_eq!(c, evaluate_constraint(rc, &z), "row {i} of C");
        }
    }

    /// Rows that repeat nearby rows (the same row of another matrix, rows 1..=9 back),
    /// evaluated in blocks that start anywhere, equal arkworks' row by row.
    #[test]
    fn repeated_rows_equal_arkworks() {
        let mut rng = StdRng::seed_from_u64(7);
        let (inputs, witness, rows) = (2, 30, 300);
        let vars = inputs + witness;
        let mut ms: Vec<Matrix<Fr>> = (0..3)
            .map(|_| random_matrix(&mut rng, rows, vars))
            .collect();
        for i in 10..rows {
            let (from, back) = (rng.gen_range(0..3), rng.gen_range(0..10));
            let to = rng.gen_range(0..3);
            if back == 0 && from == to {
                continue;
            }
            ms[to][i] = ms[from][i - back].clone();
        }
        let z: Vec<Fr> = (0..vars).map(|_| Fr::rand(&mut rng)).collect();
        let compact = R1csMatrices::from_arkworks(&ms, inputs, witness, rows).unwrap();
        compact.check().unwrap();
        let repeated = compact
            .repeats
            .iter()
            .flatten()
            .filter(|&&r| r != COMPUTE)
            .count();
        assert!(repeated > rows / 2, "only {repeated} repeats found");
        for block in [1, 2, 7, 64, rows] {
            let mut start = 0;
            while start < rows {
                let n = block.min(rows - start);
                let mut out = vec![(Fr::from(0u64), Fr::from(0u64), Fr::from(0u64)); n];
                compact.eval_rows(start, &z, &mut out);
                for (k, &(a, b, c)) in out.iter().enumerate() {
                    let i = start + k;
                    assert_eq!(
                        a,
                        evaluate_constraint(&ms[0][i], &z),
                        "A row {i}, block {block}"
                    );
                    assert_eq!(
                        b,
                        evaluate_constraint(&ms[1][i], &z),
                        "B row {i}, block {block}"
                    );
                    assert_eq!(
                        c,
                        evaluate_constraint(&ms[2][i], &z),
                        "C row {i}, block {block}"
                    );
                }
                start += n;
            }
        }
        let mut bad = compact.clone();
        bad.repeats[0][3] = 0;
        assert!(bad.check().is_err(), "a repeat of itself is refused");
    }

    #[test]
    fn bad_matrices_are_refused() {
        let mut rng = StdRng::seed_from_u64(6);
        let ms: Vec<Matrix<Fr>> = (0..3).map(|_| random_matrix(&mut rng, 10, 8)).collect();
        assert!(matches!(
            R1csMatrices::from_arkworks(&ms[..2], 2, 6, 10),
            Err(MatrixError::NotR1cs(2))
        ));
        assert!(matches!(
            R1csMatrices::from_arkworks(&ms, 2, 6, 11),
            Err(MatrixError::Rows {
                constraints: 11,
                ..
            })
        ));
        let mut wide = ms.clone();
        wide[1][3].push((Fr::from(3u64), 8));
        assert!(matches!(
            R1csMatrices::from_arkworks(&wide, 2, 6, 10),
            Err(MatrixError::Column {
                matrix: 1,
                row: 3,
                column: 8,
                ..
            })
        ));
        let mut m = R1csMatrices::from_arkworks(&ms, 2, 6, 10).unwrap();
        m.m[2].units[0] += 100;
        assert!(m.check().is_err());
    }
}
