//! circom's QAP reduction on the CPU cores, as an ark-groth16 `R1CSToQAP`: the reference the
//! GPU's is checked against, and the CPU prover the CLI times beside it.
//!
//! With `a = A z`, `b = B z` (the instance copied into rows `n_c ..`) and `c = a b` row by
//! row on a domain `H` of size `n`, each is interpolated and evaluated on the coset `w H` of
//! a `2n`-th root of unity `w`; the H query's scalars are `a b - c` there. The key's H points
//! are the odd Lagrange basis of the domain of size `2n` (times `1 / delta`), which folds in
//! the vanishing polynomial's constant value `w^n^n - 1 = -2` on that coset.

use ark_ff::PrimeField;
use ark_groth16::r1cs_to_qap::{LibsnarkReduction, R1CSToQAP, evaluate_constraint};
use ark_poly::EvaluationDomain;
use ark_relations::gr1cs::{ConstraintSystemRef, Matrix, SynthesisError};

/// circom's reduction (ark-circom's `CircomReduction`): use it as
/// `Groth16::<Bn254, CircomReduction>` with a snarkjs key and its A and B matrices (C is
/// not read).
#[derive(Clone, Copy, Debug)]
pub struct CircomReduction;

type Res<T> = Result<T, SynthesisError>;

impl R1CSToQAP for CircomReduction {
    #[allow(clippy::type_complexity)]
    fn instance_map_with_evaluation<F: PrimeField, D: EvaluationDomain<F>>(
        cs: ConstraintSystemRef<F>,
        t: &F,
    ) -> Res<(Vec<F>, Vec<F>, Vec<F>, F, usize, usize)> {
        LibsnarkReduction::instance_map_with_evaluation::<F, D>(cs, t)
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
        let domain =
            D::new(num_constraints + num_inputs).ok_or(SynthesisError::PolynomialDegreeTooLarge)?;
        let n = domain.size();
        let w = D::new(2 * n)
            .ok_or(SynthesisError::PolynomialDegreeTooLarge)?
            .element(1);
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
            D::distribute_powers(v, w);
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
        let domain = D::new(scalars.len()).ok_or(SynthesisError::PolynomialDegreeTooLarge)?;
        domain.ifft_in_place(&mut scalars);
        Ok(scalars.into_iter().skip(1).step_by(2).collect())
    }
}
