// The known-answer check and rate probe of a field arithmetic (crates/runtime/src/arith.rs):
// x = a, then x = fe_mul_packed(x, b) `reps` times, over packed words, one element per
// invocation. Composed after a prime field's module, its multiplications in one arithmetic
// and its `fe_` shim (crates/shaders/src/compose.rs).

struct ArithParams {
    // Number of elements.
    count: u32,
    // Multiplications per element.
    reps: u32,
    // Invocations per row of the 2-D dispatch grid.
    row_stride: u32,
    _pad: u32,
}

// Set by the pipeline, which also sizes the grid.
override WORKGROUP_SIZE: u32;

@group(0) @binding(0) var<storage, read> check_a: array<u32>;
@group(0) @binding(1) var<storage, read> check_b: array<u32>;
@group(0) @binding(2) var<storage, read_write> check_out: array<u32>;
@group(0) @binding(3) var<uniform> check: ArithParams;

// One multiplication call site inside a loop whose trip count is a uniform (the shape that
// compiles fast on NVIDIA; docs/gpu.md). The loop terminates: `k` rises by one per iteration
// up to `check.reps`.
@compute @workgroup_size(WORKGROUP_SIZE)
fn arith_mul_chain(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * check.row_stride;
    if (i >= check.count) {
        return;
    }
    var x: array<u32, FE_PACKED>;
    var y: array<u32, FE_PACKED>;
    for (var j = 0u; j < FE_PACKED; j++) {
        x[j] = check_a[i * FE_PACKED + j];
        y[j] = check_b[i * FE_PACKED + j];
    }
    for (var k = 0u; k < check.reps; k++) {
        x = fe_mul_packed(x, y);
    }
    for (var j = 0u; j < FE_PACKED; j++) {
        check_out[i * FE_PACKED + j] = x[j];
    }
}
