//! Test support shared by zkgpu's GPU tests (a dev-dependency only): contexts made from the
//! environment (`ZKGPU_ADAPTER`, `ZKGPU_BACKEND`, `ZKGPU_LIMITS`; lavapipe in CI), once per
//! test binary where tests may share one. A test with no adapter fails with the runtime's
//! hint on how to get one; it never skips.

#![cfg(not(target_arch = "wasm32"))]

use std::sync::OnceLock;

use zkgpu_runtime::GpuContext;

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

/// Two contexts on the same adapter, shared by every test of this binary: for tests of what
/// one context does with another's objects.
pub fn shared_contexts() -> &'static [GpuContext; 2] {
    static CTX: OnceLock<[GpuContext; 2]> = OnceLock::new();
    CTX.get_or_init(|| [new_context(), new_context()])
}
