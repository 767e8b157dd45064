//! The proving stream across devices (two contexts on the one adapter here, as on a machine
//! without a GPU): proofs in order and equal to ark-groth16's, an unsatisfied circuit's error
//! in its place, the key's matrices learned on one device and shared with the other; no
//! devices, keys of different circuits and a key on the wrong device refused.

#![allow(clippy::unwrap_used)]

use crate::common;

use ark_std::rand::{RngCore, SeedableRng, rngs::StdRng};
use zkgpu_groth16::{GpuPairing, GpuProver, ProveError, prove_stream_across};
use zkgpu_runtime::GpuError;
use zkgpu_testing::shared_device_pair as devices;

/// A prover on each device of the pair.
fn provers<E: GpuPairing>() -> Vec<GpuProver<E>> {
    devices()
        .contexts()
        .iter()
        .map(|c| GpuProver::<E>::new(c).unwrap().with_stream_workers(2))
        .collect()
}

/// Seven circuits (circuit 4 unsatisfied) across both devices: proofs equal to
/// ark-groth16's for the same seeded generator, in order. `teach`: the second device's key
/// starts with the matrices (shared with the first at the stream's start); else the
/// stream's first proof teaches the first device's key, which shares them.
fn across_equals_arkworks<E: GpuPairing>(seed: u64, teach: bool) {
    let provers = provers::<E>();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut circuits = common::chains(7, 100, &mut rng);
    circuits[4].corrupt = Some(3);
    let pk = common::setup::<E>(&circuits[0], &mut rng);
    let first = provers[0].prepare(&pk).unwrap();
    let second = if teach {
        provers[1].prepare_for(&pk, circuits[0].clone()).unwrap()
    } else {
        provers[1].prepare(&pk).unwrap()
    };
    assert!(first.matrices().is_none());
    let stream_seed = rng.next_u64();
    let lanes = [(&provers[0], &first), (&provers[1], &second)];
    let stream =
        prove_stream_across(&lanes, circuits.clone(), StdRng::seed_from_u64(stream_seed)).unwrap();
    if teach {
        assert!(first.matrices().is_some(), "shared at the start");
    }
    let got: Vec<_> = stream.collect();
    assert!(first.matrices().is_some() && second.matrices().is_some());
    common::check_stream(&pk, circuits, got, stream_seed, (4, 4));
}

#[test]
fn bls12_381_across_devices_equals_arkworks() {
    across_equals_arkworks::<ark_bls12_381::Bls12_381>(41, false);
}

#[test]
fn bls12_377_across_devices_equals_arkworks() {
    across_equals_arkworks::<ark_bls12_377::Bls12_377>(42, true);
}

#[test]
fn no_devices_other_keys_and_wrong_devices_are_refused() {
    type E = ark_bls12_381::Bls12_381;
    let provers = provers::<E>();
    let mut rng = StdRng::seed_from_u64(43);
    let circuits = common::chains(2, 100, &mut rng);
    let none: [zkgpu_groth16::Lane<'_, E>; 0] = [];
    assert!(matches!(
        prove_stream_across(&none, circuits.clone(), StdRng::seed_from_u64(1)),
        Err(ProveError::Lanes(_))
    ));
    let pk = common::setup::<E>(&circuits[0], &mut rng);
    let other_pk = common::setup::<E>(&circuits[0], &mut rng);
    let a = provers[0].prepare_for(&pk, circuits[0].clone()).unwrap();
    let b = provers[1]
        .prepare_for(&other_pk, circuits[0].clone())
        .unwrap();
    assert!(matches!(
        prove_stream_across(
            &[(&provers[0], &a), (&provers[1], &b)],
            circuits.clone(),
            StdRng::seed_from_u64(1)
        ),
        Err(ProveError::Lanes(_))
    ));
    // Keys on the wrong devices (device 0's key with device 1's prover and the reverse):
    // every proof is a typed error, never a wrong proof; the right lanes then prove.
    let b = provers[1].prepare(&pk).unwrap();
    let crossed = [(&provers[1], &a), (&provers[0], &b)];
    let got: Vec<_> = prove_stream_across(
        &crossed,
        common::chains(5, 100, &mut rng),
        StdRng::seed_from_u64(2),
    )
    .unwrap()
    .collect();
    assert_eq!(got.len(), 5);
    for (k, g) in got.iter().enumerate() {
        assert!(
            matches!(g, Err(ProveError::Gpu(GpuError::ForeignContext { .. }))),
            "proof {k}: {g:?}"
        );
    }
    let right = [(&provers[0], &a), (&provers[1], &b)];
    let circuits = common::chains(3, 100, &mut rng);
    let got: Vec<_> = prove_stream_across(&right, circuits, StdRng::seed_from_u64(3))
        .unwrap()
        .collect();
    assert!(got.iter().all(Result::is_ok), "{got:?}");
}
