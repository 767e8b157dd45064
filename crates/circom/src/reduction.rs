//! circom's QAP reduction on the CPU cores, as an ark-groth16 `R1CSToQAP`: the reference the
//! GPU's is checked against, and the CPU prover the CLI times beside it.
//!
//! With `a = A z`, `b = B z` (the instance copied into rows `n_c ..`) and `c = a b` row by
//! row on a domain `H` of size `n`, each is interpolated and evaluated on the coset `w H` of
//! a `2n`-th root of unity `w`; the H query's scalars are `a b - c` there. The key's H points
//! are the odd Lagrange basis of the domain of size `2n` (times `1 / delta`), which folds in
//! the vanishing polynomial's constant value `w^n^n - 1 = -2` on that coset.
//!
//! Every domain is snarkjs' ([`zkgpu_groth16::circom_domain`]: roots of unity from the
//! field's smallest quadratic non-residue), whatever domain type ark-groth16 asks for: the
//! same as arkworks' over BN254, other roots over BLS12-381, where a snarkjs key proves over
//! no other.

use ark_ff::PrimeField;
use ark_groth16::r1cs_to_qap::{R1CSToQAP, evaluate_constraint};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_relations::gr1cs::{ConstraintSystemRef, Matrix, R1CS_PREDICATE_LABEL, SynthesisError};
use zkgpu_groth16::circom_domain;

/// circom's reduction (ark-circom's `CircomReduction`): use it as
/// `Groth16::<Bn254, CircomReduction>` (or `Bls12_381`) with a snarkjs key and its A and B
/// matrices (C is not read).
#[derive(Clone, Copy, Debug)]
pub struct CircomReduction;

type Res<T> = Result<T, SynthesisError>;

impl R1CSToQAP for CircomReduction {
    /// ark-groth16's `LibsnarkReduction::instance_map_with_evaluation` over snarkjs' domain:
    /// each variable's A, B, C polynomials at `t` in the domain's Lagrange basis, the
    /// instance copied into A's rows `n_c ..`.
    #[allow(clippy::type_complexity)]
    fn instance_map_with_evaluation<F: PrimeField, D: EvaluationDomain<F>>(
        cs: ConstraintSystemRef<F>,
        t: &F,
    ) -> Res<(Vec<F>, Vec<F>, Vec<F>, F, usize, usize)> {
        let matrices = cs.to_matrices()?;
        let m = matrices
            .get(R1CS_PREDICATE_LABEL)
            .ok_or(SynthesisError::Unsatisfiable)?;
        let (n_c, inputs) = (cs.num_constraints(), cs.num_instance_variables());
        let domain = circom::<F>(n_c + inputs)?;
        let zt = domain.evaluate_vanishing_polynomial(*t);
        let u = domain.evaluate_all_lagrange_coefficients(*t);
        let vars = inputs - 1 + cs.num_witness_variables();
        let mut abc = [(); 3].map(|_| vec![F::zero(); vars + 1]);
        abc[0][..inputs].copy_from_slice(&u[n_c..n_c + inputs]);
        for (i, u_i) in u.iter().enumerate().take(n_c) {
            for (k, out) in abc.iter_mut().enumerate() {
                for &(ref coeff, index) in m.get(k).and_then(|m| m.get(i)).into_iter().flatten() {
                    out[index] += *u_i * coeff;
                }
            }
        }
        let [a, b, c] = abc;
        Ok((a, b, c, zt, vars, domain.size()))
    }

    fn witness_map_from_matrices<F: PrimeField, D: EvaluationDomain<F>>(
        matrices: &[Matrix<F>],
        num_inputs: usize,
        num_constraints: usize,
        full_assignment: &[F],
    ) -> Res<Vec<F>> {
        let (Some(am), Some(bm)) = (matrices.first(), matrices.get(1)) else {
            return Err(SynthesisError::Unsatisfiable);
        };
        if am.len() < num_constraints || bm.len() < num_constraints {
            return Err(SynthesisError::Unsatisfiable);
        }
        let domain = circom::<F>(num_constraints + num_inputs)?;
        let n = domain.size();
        let w = circom::<F>(2 * n)?.element(1);
        let mut a = vec![F::zero(); n];
        let mut b = vec![F::zero(); n];
        let mut c = vec![F::zero(); n];
        for i in 0..num_constraints {
            a[i] = evaluate_constraint(&am[i], full_assignment);
            b[i] = evaluate_constraint(&bm[i], full_assignment);
            c[i] = a[i] * b[i];
        }
        a[num_constraints..num_constraints + num_inputs]
            .copy_from_slice(&full_assignment[..num_inputs]);
        for v in [&mut a, &mut b, &mut c] {
            domain.ifft_in_place(v);
            Radix2EvaluationDomain::distribute_powers(v, w);
            domain.fft_in_place(v);
        }
        for ((x, y), z) in a.iter_mut().zip(&b).zip(&c) {
            *x = *x * y - z;
        }
        Ok(a)
    }

    fn h_query_scalars<F: PrimeField, D: EvaluationDomain<F>>(
        max_power: usize,
        t: F,
        _: F,
        delta_inverse: F,
    ) -> Res<Vec<F>> {
        // Powers t^0 .. t^(2 max_power) over delta, interpolated on the domain of 2n: the odd
        // Lagrange coefficients.
        let mut scalars: Vec<F> = (0..2 * max_power + 1)
            .map(|i| delta_inverse * t.pow([i as u64]))
            .collect();
        circom::<F>(scalars.len())?.ifft_in_place(&mut scalars);
        Ok(scalars.into_iter().skip(1).step_by(2).collect())
    }
}

/// snarkjs' domain of at least `n` elements.
fn circom<F: PrimeField>(n: usize) -> Res<Radix2EvaluationDomain<F>> {
    circom_domain(n).ok_or(SynthesisError::PolynomialDegreeTooLarge)
}
