//! The domains the GPU transforms: ark-poly's `Radix2EvaluationDomain`, and a
//! `GeneralEvaluationDomain` where it is radix-2.

use ark_ff::FftField;
use ark_poly::{EvaluationDomain, GeneralEvaluationDomain, Radix2EvaluationDomain};

use crate::{NttError, Result};

/// An ark-poly evaluation domain the GPU transforms. [`GpuNtt`](crate::GpuNtt)'s `fft`,
/// `ifft` and `prepare` take either `Radix2EvaluationDomain` (always radix-2) or
/// `GeneralEvaluationDomain` (what `GeneralEvaluationDomain::new` chooses: radix-2 for every
/// size the field's two-adicity allows; a mixed-radix one is [`NttError::NotRadix2`]).
pub trait Radix2Domain<F: FftField> {
    /// This domain as a radix-2 domain, or why it is not one.
    fn radix2(&self) -> Result<&Radix2EvaluationDomain<F>>;
}

impl<F: FftField> Radix2Domain<F> for Radix2EvaluationDomain<F> {
    fn radix2(&self) -> Result<&Radix2EvaluationDomain<F>> {
        Ok(self)
    }
}

impl<F: FftField> Radix2Domain<F> for GeneralEvaluationDomain<F> {
    fn radix2(&self) -> Result<&Radix2EvaluationDomain<F>> {
        match self {
            GeneralEvaluationDomain::Radix2(d) => Ok(d),
            GeneralEvaluationDomain::MixedRadix(d) => Err(NttError::NotRadix2 { size: d.size() }),
        }
    }
}
