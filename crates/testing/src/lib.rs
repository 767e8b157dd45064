//! Support shared by zkgpu's GPU tests, benchmarks and CLI (never by the libraries): contexts
//! made from the environment (`ZKGPU_ADAPTER`, `ZKGPU_BACKEND`, `ZKGPU_LIMITS`; lavapipe in
//! CI), once per test binary where tests may share one, engines spread over two contexts,
//! the field's edge values, and inputs that are cheap to make at large
//! sizes. A test with no adapter fails with the runtime's hint on how to get one; it
//! never skips.

#![cfg(not(target_arch = "wasm32"))]

use std::sync::OnceLock;

use ark_ec::PrimeGroup;
use ark_ff::PrimeField;
use ark_std::UniformRand;
use ark_std::rand::Rng;
use zkgpu_curves::GpuCurve;
use zkgpu_runtime::{Arith, ArithChoice, ContextOptions, DeviceChoice, DeviceSet, GpuContext};

/// A new context from the environment; panics with the runtime's error (and its hint) when
/// there is no adapter.
pub fn new_context() -> GpuContext {
    GpuContext::from_env_blocking().unwrap_or_else(|e| panic!("{e}"))
}

/// One context shared by every test of this binary, made on first use; the adapter is named
/// on stderr once.
pub fn shared_context() -> &'static GpuContext {
    static CTX: OnceLock<GpuContext> = OnceLock::new();
    CTX.get_or_init(|| {
        let c = new_context();
        eprintln!("adapter: {} ({:?})", c.info().name, c.info().backend);
        c
    })
}

/// A context from the environment that multiplies with `arith`, one per arithmetic shared by
/// every test of this binary (the portable one is [`shared_context`]); panics where the
/// device cannot run `arith` (lavapipe runs `int64`, not `f64`: its `fma` is not fused).
pub fn arith_context(arith: Arith) -> &'static GpuContext {
    static CTX: [OnceLock<GpuContext>; 3] = [const { OnceLock::new() }; 3];
    if arith == Arith::Portable {
        return shared_context();
    }
    let slot = Arith::ALL
        .iter()
        .position(|&a| a == arith)
        .expect("an arithmetic");
    CTX[slot].get_or_init(|| {
        let opts = ContextOptions {
            arith: ArithChoice::Fixed(arith),
            ..ContextOptions::from_env().unwrap_or_else(|e| panic!("{e}"))
        };
        GpuContext::new_blocking(opts).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// The arithmetics the GPU tests run in: the portable one and `int64`, which lavapipe (CI)
/// runs exactly; `f64` is refused there (tests of the runtime check that) and runs in these
/// tests on a device whose check it passes (`ZKGPU_TEST_ARITHS=portable,int64,f64`).
pub fn test_ariths_from_env() -> Vec<Arith> {
    match std::env::var("ZKGPU_TEST_ARITHS") {
        Ok(list) if !list.is_empty() => list
            .split(',')
            .map(|n| Arith::from_name(n.trim()).unwrap_or_else(|| panic!("unknown arithmetic {n}")))
            .collect(),
        _ => vec![Arith::Portable, Arith::Int64],
    }
}

/// Two contexts on the same adapter, shared by every test of this binary: for tests of what
/// one context does with another's objects.
pub fn shared_contexts() -> &'static [GpuContext; 2] {
    static CTX: OnceLock<[GpuContext; 2]> = OnceLock::new();
    CTX.get_or_init(|| [new_context(), new_context()])
}

/// A device set of two contexts on the adapter the environment picks, shared by every test
/// of this binary, opened as `--devices adapters:I,I` opens them: for tests of work split
/// across devices on a machine with one adapter (lavapipe in CI).
pub fn shared_device_pair() -> &'static DeviceSet {
    static SET: OnceLock<DeviceSet> = OnceLock::new();
    SET.get_or_init(|| {
        let opts = ContextOptions::from_env().unwrap_or_else(|e| panic!("{e}"));
        let index = env_adapter_index(&opts);
        DeviceSet::open_blocking(opts, &DeviceChoice::Indices(vec![index, index]))
            .unwrap_or_else(|e| panic!("{e}"))
    })
}

/// The place in wgpu's adapter list of the adapter the environment picks.
pub fn env_adapter_index(opts: &ContextOptions) -> usize {
    let picked = shared_context().info().clone();
    let adapters = pollster::block_on(GpuContext::adapters(opts.backends));
    adapters
        .iter()
        .position(|(a, _)| {
            (a.name.as_str(), a.backend, a.device)
                == (picked.name.as_str(), picked.backend, picked.device)
        })
        .unwrap_or_else(|| panic!("adapter {} not in wgpu's list", picked.name))
}

/// Three engines made by `make`, each with its context's index in [`shared_contexts`]: 0 and
/// 1 on the first context, 2 on the second (for tests of what an engine does with objects of
/// another engine, of its own context or of another).
pub fn engines_on_two_contexts<E>(make: impl Fn(&GpuContext) -> E) -> Vec<(usize, E)> {
    let ctx = shared_contexts();
    vec![(0, make(&ctx[0])), (0, make(&ctx[0])), (1, make(&ctx[1]))]
}

/// How many cases a property test runs: `PROPTEST_CASES` when set, else `default` (CI's
/// fixed budget).
pub fn proptest_cases_from_env(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A prime field's edge values: zero, one, `p - 1`, two, `p - 2`, and the values around one
/// 13-bit limb (`2^13 - 1`, `2^13`, `2^13 + 1`).
pub fn field_edges<F: PrimeField>() -> Vec<F> {
    vec![
        F::zero(),
        F::one(),
        -F::one(),
        F::from(2u64),
        -F::from(2u64),
        F::from(8191u64),
        F::from(8192u64),
        F::from(8193u64),
    ]
}

pub use zkgpu_curves::distinct_bases;

/// A generator seeded from a group's name and what a test checks, the seed printed (so that a
/// failure names the seed that reproduces it): the same inputs on every run, different ones
/// per group and per test.
pub fn rng_for<C: GpuCurve>(what: &str) -> ark_std::rand::rngs::StdRng {
    use ark_std::rand::SeedableRng;
    let seed = C::ID
        .bytes()
        .chain(what.bytes())
        .fold(7u64, |h, b| h.wrapping_mul(131).wrapping_add(u64::from(b)));
    eprintln!("{} {what}: seed {seed}", C::ID);
    ark_std::rand::rngs::StdRng::seed_from_u64(seed)
}

/// `p` with another projective representation (another Z) of the same point: formulas must
/// not depend on the representation they are given.
pub fn rescaled<G: PrimeGroup + UniformRand>(p: G, rng: &mut impl Rng) -> G {
    let r = G::rand(rng);
    p + r - r
}

/// Asserts that `r` is the runtime's `ForeignContext` error wrapped in an engine's error
/// (`MsmError::Gpu`, `NttError::Gpu`, `ProveError::Gpu`...): an object of one context given to
/// an engine of another. `what` names the operation in the failure message.
#[track_caller]
pub fn assert_foreign<T: std::fmt::Debug, E: std::fmt::Debug>(
    what: impl std::fmt::Debug,
    r: Result<T, E>,
) {
    let said = format!("{r:?}");
    assert!(
        said.starts_with("Err(Gpu(ForeignContext {"),
        "{what:?}: expected Gpu(ForeignContext), got {said}"
    );
}
