// Elementwise field kernels, one invocation per element: the field's functions run over
// buffers of elements stored as FE_WORDS consecutive u32 limbs. Used by the field tests and
// `zkgpu bench field`. Composed after a field module and its `fe_` shim
// (crates/shaders/src/compose.rs).

struct FieldOpsParams {
    // Number of elements.
    count: u32,
    // Multiplications per invocation in `field_mul_chain`.
    reps: u32,
    // Invocations per row of the 2-D dispatch grid (workgroups in x times the workgroup size).
    row_stride: u32,
    _pad: u32,
}

// Tuning knob: invocations per workgroup.
// Set by the pipeline (the Rust caller's one WORKGROUP_SIZE), which also sizes the grid.
override WORKGROUP_SIZE: u32;

@group(0) @binding(0) var<storage, read> in_a: array<u32>;
@group(0) @binding(1) var<storage, read> in_b: array<u32>;
@group(0) @binding(2) var<storage, read_write> out_words: array<u32>;
@group(0) @binding(3) var<uniform> params: FieldOpsParams;

fn load_a(i: u32) -> Fe {
    var w: array<u32, FE_WORDS>;
    for (var j = 0u; j < FE_WORDS; j++) {
        w[j] = in_a[i * FE_WORDS + j];
    }
    return fe_from_words(w);
}

fn load_b(i: u32) -> Fe {
    var w: array<u32, FE_WORDS>;
    for (var j = 0u; j < FE_WORDS; j++) {
        w[j] = in_b[i * FE_WORDS + j];
    }
    return fe_from_words(w);
}

fn store(i: u32, x: Fe) {
    let w = fe_to_words(x);
    for (var j = 0u; j < FE_WORDS; j++) {
        out_words[i * FE_WORDS + j] = w[j];
    }
}

fn index_of(gid: vec3<u32>) -> u32 {
    return gid.x + gid.y * params.row_stride;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn field_add(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = index_of(gid);
    if (i < params.count) {
        store(i, fe_add(load_a(i), load_b(i)));
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn field_sub(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = index_of(gid);
    if (i < params.count) {
        store(i, fe_sub(load_a(i), load_b(i)));
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn field_neg(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = index_of(gid);
    if (i < params.count) {
        store(i, fe_neg(load_a(i)));
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn field_double(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = index_of(gid);
    if (i < params.count) {
        store(i, fe_double(load_a(i)));
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn field_mul(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = index_of(gid);
    if (i < params.count) {
        store(i, fe_mul(load_a(i), load_b(i)));
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn field_square(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = index_of(gid);
    if (i < params.count) {
        store(i, fe_square(load_a(i)));
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn field_to_mont(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = index_of(gid);
    if (i < params.count) {
        store(i, fe_to_mont(load_a(i)));
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn field_from_mont(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = index_of(gid);
    if (i < params.count) {
        store(i, fe_from_mont(load_a(i)));
    }
}

// Writes 1 or 0 into word 0 of the element's output slot.
@compute @workgroup_size(WORKGROUP_SIZE)
fn field_is_zero(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = index_of(gid);
    if (i < params.count) {
        out_words[i * FE_WORDS] = select(0u, 1u, fe_is_zero(load_a(i)));
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn field_eq(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = index_of(gid);
    if (i < params.count) {
        out_words[i * FE_WORDS] = select(0u, 1u, fe_eq(load_a(i), load_b(i)));
    }
}

// a b^reps: `reps` dependent multiplications through one call site inside a loop whose trip
// count is a uniform (the shape that compiles fast on NVIDIA; docs/gpu.md). The
// loop terminates: `k` rises by one per iteration up to the uniform `params.reps`.
@compute @workgroup_size(WORKGROUP_SIZE)
fn field_mul_chain(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = index_of(gid);
    if (i < params.count) {
        var x = load_a(i);
        let y = load_b(i);
        for (var k = 0u; k < params.reps; k++) {
            x = fe_mul(x, y);
        }
        store(i, x);
    }
}
