// Runs VM programs over many inputs (the curve tests and `zkgpu bench curve`). Composed after
// curve_vm_core.wgsl. The kernel's loops count up to uniforms.

struct VmParams {
    // Invocations.
    count: u32,
    // Invocations per row of the 2-D dispatch grid.
    row_stride: u32,
    // Program counter of the entry point to run.
    entry: u32,
    // Word offset of the constants table in vm_code.
    consts: u32,
    // Registers loaded from vm_init per invocation (registers 0..n_load).
    n_load: u32,
    // Registers stored to vm_out per invocation (registers 0..n_store).
    n_store: u32,
    // Program runs per invocation.
    steps: u32,
    // First register that vm_stream fills before each run.
    stream_reg: u32,
    // Registers read from vm_stream before each run (0: none).
    stream_regs: u32,
    // Records (of stream_regs registers) in vm_stream; run s of invocation i reads record
    // (i * steps + s) mod stream_records, so a benchmark can reuse a short stream.
    stream_records: u32,
    _pad1: u32,
    _pad2: u32,
}

// Tuning knob: invocations per workgroup.
// Set by the pipeline (the Rust caller's one WORKGROUP_SIZE), which also sizes the grid.
override WORKGROUP_SIZE: u32;

@group(0) @binding(1) var<storage, read> vm_init: array<u32>;
@group(0) @binding(2) var<storage, read> vm_stream: array<u32>;
@group(0) @binding(3) var<storage, read_write> vm_out: array<u32>;
@group(0) @binding(4) var<uniform> params: VmParams;

fn load_init(offset: u32) -> Fe {
    var w: array<u32, FE_WORDS>;
    for (var j = 0u; j < FE_WORDS; j++) {
        w[j] = vm_init[offset + j];
    }
    return fe_from_words(w);
}

// Stream points are stored packed, as the MSM stores its bases, and copied into the
// registers without conversion.
fn load_stream(offset: u32) -> PackedFe {
    var w: PackedFe;
    for (var j = 0u; j < FE_PACKED; j++) {
        w[j] = vm_stream[offset + j];
    }
    return w;
}

fn store_out(offset: u32, x: Fe) {
    let w = fe_to_words(x);
    for (var j = 0u; j < FE_WORDS; j++) {
        vm_out[offset + j] = w[j];
    }
}

// Per invocation: load registers 0..n_load from vm_init; `steps` times, load `stream_regs`
// registers from vm_stream at `stream_reg` and run the entry point; store registers
// 0..n_store. With steps = 1 and no stream this applies one formula to many inputs; with a
// stream it accumulates a chain of points, the shape of MSM bucket accumulation.
@compute @workgroup_size(WORKGROUP_SIZE)
fn curve_vm_exec(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * params.row_stride;
    if (i >= params.count) {
        return;
    }
    vm_consts = params.consts;
    for (var r = 0u; r < params.n_load; r++) {
        set_reg(r, load_init((i * params.n_load + r) * FE_WORDS));
    }
    for (var s = 0u; s < params.steps; s++) {
        let base = ((i * params.steps + s) % max(params.stream_records, 1u)) * params.stream_regs;
        for (var r = 0u; r < params.stream_regs; r++) {
            regs[params.stream_reg + r] = load_stream((base + r) * FE_PACKED);
        }
        vm_run(params.entry);
    }
    for (var r = 0u; r < params.n_store; r++) {
        store_out((i * params.n_store + r) * FE_WORDS, reg(r));
    }
}
