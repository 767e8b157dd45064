//! Device sets opened by choice: every suitable adapter, a count, adapter numbers (one named
//! twice gives two contexts on it); too many devices and unknown adapters are typed errors.

#![allow(clippy::unwrap_used)]

use zkgpu_runtime::{ContextOptions, DeviceChoice, DeviceSet, GpuError};
use zkgpu_testing::{env_adapter_index, shared_context};

fn opts() -> ContextOptions {
    ContextOptions::from_env().unwrap()
}

#[test]
fn all_and_a_count_open_the_environments_adapter_type() {
    let picked = shared_context().info().device_type;
    let all = DeviceSet::open_blocking(opts(), &DeviceChoice::All).unwrap();
    assert!(!all.is_empty());
    assert!(
        all.contexts()
            .iter()
            .all(|c| c.info().device_type == picked)
    );
    let one = DeviceSet::open_blocking(opts(), &DeviceChoice::Count(1)).unwrap();
    assert_eq!(one.len(), 1);
    match DeviceSet::open_blocking(opts(), &DeviceChoice::Count(all.len() + 1)) {
        Err(GpuError::NoAdapter { hint }) => assert!(hint.contains("asked for"), "{hint}"),
        other => panic!("expected NoAdapter, got {other:?}"),
    }
}

#[test]
fn one_adapter_named_twice_gives_two_contexts() {
    let i = env_adapter_index(&opts());
    let set = DeviceSet::open_blocking(opts(), &DeviceChoice::Indices(vec![i, i])).unwrap();
    let [a, b] = set.contexts() else {
        panic!("{} contexts", set.len())
    };
    assert_ne!(a.id(), b.id());
    assert_eq!(a.info().name, shared_context().info().name);
    assert_eq!(b.info().name, shared_context().info().name);
}

#[test]
fn unknown_adapters_and_empty_sets_are_refused() {
    for choice in [
        DeviceChoice::Indices(vec![999]),
        DeviceChoice::Indices(vec![]),
    ] {
        assert!(matches!(
            DeviceSet::open_blocking(opts(), &choice),
            Err(GpuError::NoAdapter { .. })
        ));
    }
    assert!(DeviceSet::from_contexts(Vec::new()).is_err());
}
