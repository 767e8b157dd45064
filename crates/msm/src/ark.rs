//! MSMs called on arkworks' own types, the way arkworks' `VariableBaseMSM` is:
//! `G1Projective::msm_gpu(&ctx, &bases, &scalars)` for every group zkgpu runs
//! ([`zkgpu_curves::OnGpu`]).

use std::future::Future;

use zkgpu_curves::OnGpu;
use zkgpu_runtime::GpuContext;

use crate::{GpuMsm, Result};

/// arkworks' `VariableBaseMSM::{msm, msm_unchecked}` on the GPU, for the projective types of
/// every supported group (BLS12-381, BLS12-377 and BN254 G1 and G2, ed-on-bls12-377).
///
/// Each call makes a [`GpuMsm`] for the group (its pipelines come from the context's cache
/// after the first call) and prepares the bases for that one call; for bases used again,
/// keep a [`GpuMsm`], [`GpuMsm::prepare`] them once and [`GpuMsm::run`] requests.
///
/// ```no_run
/// use ark_bls12_381::{Fr, G1Affine, G1Projective};
/// use ark_ec::{CurveGroup, VariableBaseMSM};
/// use ark_std::UniformRand;
/// use zkgpu_msm::GpuVariableBaseMsm;
/// use zkgpu_runtime::GpuContext;
///
/// let ctx = GpuContext::from_env_blocking()?;
/// let mut rng = ark_std::test_rng();
/// let bases: Vec<G1Affine> = (0..1000).map(|_| G1Projective::rand(&mut rng).into_affine()).collect();
/// let scalars: Vec<Fr> = (0..1000).map(|_| Fr::rand(&mut rng)).collect();
/// let sum = G1Projective::msm_gpu(&ctx, &bases, &scalars)?;
/// assert_eq!(sum, G1Projective::msm(&bases, &scalars).unwrap());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait GpuVariableBaseMsm: OnGpu {
    /// `sum_i scalars[i] bases[i]` on `ctx`'s GPU; [`crate::MsmError::LengthMismatch`] when
    /// the lengths differ (arkworks' `msm`). Blocks this thread (native only).
    #[cfg(not(target_arch = "wasm32"))]
    fn msm_gpu(
        ctx: &GpuContext,
        bases: &[Self::Affine],
        scalars: &[Self::ScalarField],
    ) -> Result<Self> {
        GpuMsm::<Self::Curve>::new(ctx)?.msm(bases, scalars)
    }

    /// [`GpuVariableBaseMsm::msm_gpu`] as a future (what a browser awaits).
    fn msm_gpu_async<'a>(
        ctx: &'a GpuContext,
        bases: &'a [Self::Affine],
        scalars: &'a [Self::ScalarField],
    ) -> impl Future<Output = Result<Self>> + 'a {
        async move {
            GpuMsm::<Self::Curve>::new(ctx)?
                .msm_async(bases, scalars)
                .await
        }
    }

    /// `sum_i scalars[i] bases[i]` over the shorter of the two slices (arkworks'
    /// `msm_unchecked`). Blocks this thread (native only).
    #[cfg(not(target_arch = "wasm32"))]
    fn msm_unchecked_gpu(
        ctx: &GpuContext,
        bases: &[Self::Affine],
        scalars: &[Self::ScalarField],
    ) -> Result<Self> {
        GpuMsm::<Self::Curve>::new(ctx)?.msm_unchecked(bases, scalars)
    }

    /// [`GpuVariableBaseMsm::msm_unchecked_gpu`] as a future.
    fn msm_unchecked_gpu_async<'a>(
        ctx: &'a GpuContext,
        bases: &'a [Self::Affine],
        scalars: &'a [Self::ScalarField],
    ) -> impl Future<Output = Result<Self>> + 'a {
        async move {
            GpuMsm::<Self::Curve>::new(ctx)?
                .msm_unchecked_async(bases, scalars)
                .await
        }
    }
}

impl<G: OnGpu> GpuVariableBaseMsm for G {}
