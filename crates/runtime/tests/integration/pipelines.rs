//! `GpuContext::pipelines` asked for the same pipelines by two threads at once (as the
//! prover's G1 and G2 MSM engines do): both get them, each is compiled once, and their one
//! shader module is made once.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Barrier};
use zkgpu_runtime::{Checks, GpuContext, PipelineRequest};

#[test]
fn two_threads_compile_each_pipeline_once() {
    // A context of its own: the shared one may have these pipelines already.
    let ctx = GpuContext::from_env_blocking().unwrap();
    let module = zkgpu_shaders::msm_buckets();
    use zkgpu_shaders::contract::msm_buckets::entry;
    let entries = [
        entry::MSM_DIGITS,
        entry::MSM_SCAN,
        entry::MSM_SCATTER,
        entry::MSM_CHUNK_ORDER,
    ];
    let requests: Vec<PipelineRequest<'_>> = entries
        .iter()
        .map(|entry| PipelineRequest {
            module: &module,
            entry,
            checks: Checks::Default,
            constants: &[("WORKGROUP_SIZE", 64.0)],
        })
        .collect();
    // Both threads start asking at once, so without the claim both would compile each one.
    let start = Barrier::new(2);
    let (a, b) = std::thread::scope(|s| {
        let ask = || {
            start.wait();
            pollster::block_on(ctx.pipelines(&requests)).unwrap()
        };
        let a = s.spawn(ask);
        let b = s.spawn(ask);
        (a.join().unwrap(), b.join().unwrap())
    });
    for (x, y) in a.iter().zip(&b) {
        assert!(Arc::ptr_eq(x, y), "both threads got the one pipeline");
    }
    let timings = ctx.pipeline_timings();
    for entry in entries {
        let built = timings.iter().filter(|t| t.entry == entry).count();
        assert_eq!(built, 1, "{entry} compiled {built} times");
    }
    // The four entry points are built side by side from one module: one build made it (its
    // front end's time recorded), the others waited for it or found it made.
    let made: Vec<f64> = timings
        .iter()
        .map(|t| t.module_seconds)
        .filter(|&s| s > 0.0)
        .collect();
    assert_eq!(made.len(), 1, "the module was made {} times", made.len());
    assert!(timings.iter().all(|t| t.module_seconds <= t.seconds));
}
