//! One way to ask for an MSM: a request over prepared bases (one set or several sharing the
//! scalars), scalars as field elements or prepared words, and a configuration; the answer
//! holds one sum per base set and, when asked, where the time went.

use zkgpu_curves::GpuCurve;

use crate::{MsmConfig, MsmError, MsmTimings, PreparedBases, Result, ScalarSlice};

/// The scalars of an MSM: arkworks field elements, or words converted beforehand
/// ([`crate::PreparedScalars`], one conversion for several MSMs).
#[derive(Clone, Copy, Debug)]
pub enum MsmScalars<'a, F> {
    /// Field elements as arkworks stores them.
    Field(&'a [F]),
    /// Canonical words from [`crate::PreparedScalars`].
    Prepared(ScalarSlice<'a, F>),
}

impl<'a, F> From<&'a [F]> for MsmScalars<'a, F> {
    fn from(scalars: &'a [F]) -> Self {
        Self::Field(scalars)
    }
}

impl<'a, F> From<&'a Vec<F>> for MsmScalars<'a, F> {
    fn from(scalars: &'a Vec<F>) -> Self {
        Self::Field(scalars)
    }
}

impl<'a, F, const N: usize> From<&'a [F; N]> for MsmScalars<'a, F> {
    fn from(scalars: &'a [F; N]) -> Self {
        Self::Field(scalars)
    }
}

impl<'a, F> From<ScalarSlice<'a, F>> for MsmScalars<'a, F> {
    fn from(scalars: ScalarSlice<'a, F>) -> Self {
        Self::Prepared(scalars)
    }
}

/// One MSM: `sum_i scalars[i] bases_k[i]` for every base set `k` of `bases`, over the shorter
/// of the two lengths (arkworks' `msm_unchecked`). Built with [`MsmRequest::new`] and run by
/// [`crate::GpuMsm::run`].
#[derive(Debug)]
pub struct MsmRequest<'a, C: GpuCurve> {
    /// Bases prepared on the engine's context.
    pub bases: &'a PreparedBases<C>,
    /// The scalars, shared by every base set.
    pub scalars: MsmScalars<'a, C::Scalar>,
    /// Tuning; every field defaults from the input size.
    pub config: MsmConfig,
    /// Whether to time the GPU stages with timestamp queries where the device has them (a
    /// second readback); the host's stages are timed either way.
    pub timed: bool,
}

impl<'a, C: GpuCurve> MsmRequest<'a, C> {
    /// A request with the default configuration, untimed.
    pub fn new(bases: &'a PreparedBases<C>, scalars: impl Into<MsmScalars<'a, C::Scalar>>) -> Self {
        Self {
            bases,
            scalars: scalars.into(),
            config: MsmConfig::default(),
            timed: false,
        }
    }

    /// The request with `config`.
    pub fn config(self, config: MsmConfig) -> Self {
        Self { config, ..self }
    }

    /// The request with its GPU stages timed.
    pub fn timed(self) -> Self {
        Self {
            timed: true,
            ..self
        }
    }
}

/// The answer to an [`MsmRequest`].
#[derive(Clone, Debug)]
pub struct MsmOutput<C: GpuCurve> {
    /// One sum per base set, in the order the sets were prepared.
    pub sums: Vec<C::Projective>,
    /// Where the time went (GPU stages only when the request was timed).
    pub timings: MsmTimings,
}

impl<C: GpuCurve> MsmOutput<C> {
    /// The sum of bases prepared as one set; a [`MsmError::Config`] error for bases prepared
    /// as several sets (take [`MsmOutput::into_sums`] there).
    pub fn sum(self) -> Result<C::Projective> {
        match <[C::Projective; 1]>::try_from(self.sums) {
            Ok([sum]) => Ok(sum),
            Err(sums) => Err(MsmError::Config(format!(
                "the bases hold {} sets: take every set's sum (into_sums)",
                sums.len()
            ))),
        }
    }

    /// Every set's sum.
    pub fn into_sums(self) -> Vec<C::Projective> {
        self.sums
    }

    /// The sum of bases prepared as one set ([`MsmOutput::sum`]) with the timings.
    pub fn sum_timed(mut self) -> Result<(C::Projective, MsmTimings)> {
        let timings = std::mem::take(&mut self.timings);
        Ok((self.sum()?, timings))
    }

    /// Every set's sum with the timings.
    pub fn sums_timed(self) -> (Vec<C::Projective>, MsmTimings) {
        (self.sums, self.timings)
    }
}
