//! Prepared bases of one GPU context given to an engine of another: a typed error before
//! anything is recorded, and both engines still give arkworks' sums afterwards.

#![allow(clippy::unwrap_used)]

use ark_bls12_381::{Fr, G1Affine, G1Projective};
use ark_ec::{CurveGroup, VariableBaseMSM};
use ark_ff::UniformRand;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_msm::{GpuMsm, MsmConfig, MsmError};
use zkgpu_msm::{MsmOutput, MsmRequest};
use zkgpu_runtime::GpuError;

#[test]
fn bases_of_another_context_are_refused() {
    let [a, b] = zkgpu_testing::shared_contexts();
    assert_ne!(a.id(), b.id());
    let mut rng = StdRng::seed_from_u64(71);
    let bases: Vec<G1Affine> = (0..300)
        .map(|_| G1Projective::rand(&mut rng).into_affine())
        .collect();
    let scalars: Vec<Fr> = (0..300).map(|_| Fr::rand(&mut rng)).collect();
    let want = G1Projective::msm(&bases, &scalars).unwrap();
    let (ma, mb) = (
        GpuMsm::<zkgpu_curves::Bls12_381G1>::new(a).unwrap(),
        GpuMsm::<zkgpu_curves::Bls12_381G1>::new(b).unwrap(),
    );
    let on_a = ma.prepare(&bases).unwrap();
    assert_eq!(on_a.context(), a.id());
    let cfg = MsmConfig::default();
    match mb
        .run(MsmRequest::new(&on_a, &scalars).config(cfg))
        .and_then(MsmOutput::sum)
    {
        Err(MsmError::Gpu(GpuError::ForeignContext { made, used, .. })) => {
            assert_eq!((made, used), (a.id(), b.id()));
        }
        other => panic!("expected ForeignContext, got {other:?}"),
    }
    let sets = ma.prepare_sets(&[&bases, &bases]).unwrap();
    assert!(matches!(
        mb.run(MsmRequest::new(&sets, zkgpu_msm::PreparedScalars::new(&scalars).all()).config(cfg))
            .map(MsmOutput::into_sums),
        Err(MsmError::Gpu(GpuError::ForeignContext { .. }))
    ));
    // Both engines and both contexts still compute arkworks' sum.
    assert_eq!(
        ma.run(MsmRequest::new(&on_a, &scalars).config(cfg))
            .and_then(MsmOutput::sum)
            .unwrap(),
        want
    );
    let on_b = mb.prepare(&bases).unwrap();
    assert_eq!(
        mb.run(MsmRequest::new(&on_b, &scalars).config(cfg))
            .and_then(MsmOutput::sum)
            .unwrap(),
        want
    );
    assert_eq!(mb.msm(&bases, &scalars).unwrap(), want);
    a.check_device().unwrap();
    b.check_device().unwrap();
}
