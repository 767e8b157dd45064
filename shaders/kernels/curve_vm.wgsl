// The curve VM: elliptic-curve formulas run as short programs over a register file of
// base-field elements (crates/curves/src/vm.rs defines the instruction set and assembles the
// programs; crates/curves/src/formulas.rs holds the formulas). The interpreter below is the
// only place that calls fe_mul, so the pipeline has one multiplication call site however long
// the formulas are: on NVIDIA, compile time grows with call sites, not with program length.
//
// Composed after a base-field module, its `fe_` shim and `const VM_REGS`.
//
// Termination: every jump in a program goes forward (the assembler rejects backward jumps) and
// every program ends in HALT, so vm_run ends after at most the program's length in steps; an
// out-of-range pc reads 0 (HALT) under bounds checks. The kernel's other loops count up to
// uniforms.

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
override WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<storage, read> vm_code: array<u32>;
@group(0) @binding(1) var<storage, read> vm_init: array<u32>;
@group(0) @binding(2) var<storage, read> vm_stream: array<u32>;
@group(0) @binding(3) var<storage, read_write> vm_out: array<u32>;
@group(0) @binding(4) var<uniform> params: VmParams;

var<private> regs: array<Fe, VM_REGS>;

fn load_init(offset: u32) -> Fe {
    var w: array<u32, FE_WORDS>;
    for (var j = 0u; j < FE_WORDS; j++) {
        w[j] = vm_init[offset + j];
    }
    return fe_from_words(w);
}

fn load_stream(offset: u32) -> Fe {
    var w: array<u32, FE_WORDS>;
    for (var j = 0u; j < FE_WORDS; j++) {
        w[j] = vm_stream[offset + j];
    }
    return fe_from_words(w);
}

fn load_const(offset: u32) -> Fe {
    var w: array<u32, FE_WORDS>;
    for (var j = 0u; j < FE_WORDS; j++) {
        w[j] = vm_code[offset + j];
    }
    return fe_from_words(w);
}

fn store_out(offset: u32, x: Fe) {
    let w = fe_to_words(x);
    for (var j = 0u; j < FE_WORDS; j++) {
        vm_out[offset + j] = w[j];
    }
}

// Runs the program from `entry` until HALT. Instruction: bits 0-3 opcode, 4-11 d, 12-19 a,
// 20-31 b (register, constant index or jump target).
fn vm_run(entry: u32) {
    var pc = entry;
    loop {
        let ins = vm_code[pc];
        pc = pc + 1u;
        let code = ins & 15u;
        if (code == 0u) {
            break;
        }
        let d = (ins >> 4u) & 255u;
        let a = (ins >> 12u) & 255u;
        let b = ins >> 20u;
        switch code {
            case 1u: {
                regs[d] = fe_mul(regs[a], regs[b]);
            }
            case 2u: {
                regs[d] = fe_add(regs[a], regs[b]);
            }
            case 3u: {
                regs[d] = fe_sub(regs[a], regs[b]);
            }
            case 4u: {
                regs[d] = fe_double(regs[a]);
            }
            case 5u: {
                regs[d] = regs[a];
            }
            case 6u: {
                regs[d] = fe_zero();
            }
            case 7u: {
                regs[d] = fe_one();
            }
            case 8u: {
                regs[d] = load_const(params.consts + b * FE_WORDS);
            }
            case 9u: {
                if (fe_is_zero(regs[a])) {
                    pc = b;
                }
            }
            case 10u: {
                if (!fe_is_zero(regs[a])) {
                    pc = b;
                }
            }
            case 11u: {
                pc = b;
            }
            default: {}
        }
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
    for (var r = 0u; r < params.n_load; r++) {
        regs[r] = load_init((i * params.n_load + r) * FE_WORDS);
    }
    for (var s = 0u; s < params.steps; s++) {
        let base = ((i * params.steps + s) % max(params.stream_records, 1u)) * params.stream_regs;
        for (var r = 0u; r < params.stream_regs; r++) {
            regs[params.stream_reg + r] = load_stream((base + r) * FE_WORDS);
        }
        vm_run(params.entry);
    }
    for (var r = 0u; r < params.n_store; r++) {
        store_out((i * params.n_store + r) * FE_WORDS, regs[r]);
    }
}
