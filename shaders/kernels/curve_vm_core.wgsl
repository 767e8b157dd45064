// The curve VM core: elliptic-curve formulas run as short programs over a register file of
// base-field elements (crates/curves/src/vm.rs defines the instruction set and assembles the
// programs; crates/curves/src/formulas.rs holds the formulas). vm_run's loop, through its
// multiplication step vm_mul, is the only place that calls fe_mul, so a pipeline has one
// multiplication call site however long the formulas are: on NVIDIA, compile time grows with
// call sites, not with program length.
//
// Composed after a base-field module, its `fe_` shim and `const VM_REGS`, and before
// `vm_mul` and `const VM_KMUL` (whether opcode 7 runs): shaders/kernels/curve_vm_mul.wgsl,
// or curve_vm_kmul.wgsl where the module runs the Fq2 product KMUL. Kernels that drive the
// VM (curve_vm.wgsl, msm_accumulate.wgsl) follow them and set `vm_consts` before running.
//
// Termination: every jump in a program goes forward (the assembler rejects backward jumps),
// every program ends in HALT, and only KMUL runs an instruction again (three rounds, then pc
// moves on), so vm_run ends after at most three times the program's length in steps; an
// out-of-range pc reads 0 (HALT) under bounds checks.

@group(0) @binding(0) var<storage, read> vm_code: array<u32>;

// Registers are stored packed (FE_PACKED 32-bit words, not FE_WORDS 13-bit limbs): the
// dynamically indexed register file lives in local memory, which does not fit in L1 at full
// occupancy, so every VM instruction moves its operands through L2. Packing cuts that traffic
// 2.5x for 30-limb fields. MUL's fe_mul_packed takes and returns packed words (each field
// arithmetic converts them to its own limbs); ADD, SUB and DBL work on the packed words
// directly (pk_* below). reg/set_reg move whole elements in and out (the drivers' loads and
// stores).
alias PackedFe = array<u32, FE_PACKED>;
var<private> regs: array<PackedFe, VM_REGS>;
// Word offset of the constants table in vm_code.
var<private> vm_consts: u32;

fn reg(i: u32) -> Fe {
    return fe_unpack(regs[i]);
}

fn set_reg(i: u32, x: Fe) {
    regs[i] = fe_pack(x);
}

fn reg_is_zero(i: u32) -> bool {
    var acc = 0u;
    for (var j = 0u; j < FE_PACKED; j++) {
        acc = acc | regs[i][j];
    }
    return acc == 0u;
}

// Packed arithmetic: ADD, SUB and DBL (and the MSM's negation) run on packed registers
// without unpacking them to limbs and packing the result, which cost about as much as the
// additions themselves. Registers always hold canonical values (< p): fe_pack of fe_mul's
// canonical results, loaded constants, and these functions' results. p < 2^(32 FE_PACKED - 1)
// (FE_PACK_SHIFT >= 1 spare bits), so the sum of two values never carries out of the top word.
// Carries and borrows are computed from unsigned comparisons (no 64-bit integers in WGSL).

// a - b mod 2^(32 FE_PACKED), and the borrow out of the top word (1 when a < b).
struct PkDiff {
    d: PackedFe,
    borrow: u32,
}

fn pk_sub_words(a: PackedFe, b: PackedFe) -> PkDiff {
    var d: PackedFe;
    var borrow = 0u;
    for (var j = 0u; j < FE_PACKED; j++) {
        let t = a[j] - b[j];
        d[j] = t - borrow;
        borrow = select(0u, 1u, a[j] < b[j]) | select(0u, 1u, t < borrow);
    }
    return PkDiff(d, borrow);
}

// s mod p, for s < 2p.
fn pk_reduce(s: PackedFe) -> PackedFe {
    var r = pk_sub_words(s, FE_P_PACKED);
    // A borrow means s < p: keep s.
    let keep = r.borrow != 0u;
    for (var j = 0u; j < FE_PACKED; j++) {
        r.d[j] = select(r.d[j], s[j], keep);
    }
    return r.d;
}

// a + b mod 2^(32 FE_PACKED).
fn pk_add_words(a: PackedFe, b: PackedFe) -> PackedFe {
    var s: PackedFe;
    var carry = 0u;
    for (var j = 0u; j < FE_PACKED; j++) {
        let t = a[j] + b[j];
        let u = t + carry;
        carry = select(0u, 1u, t < a[j]) | select(0u, 1u, u < t);
        s[j] = u;
    }
    return s;
}

// (a + b) mod p.
fn pk_add(a: PackedFe, b: PackedFe) -> PackedFe {
    return pk_reduce(pk_add_words(a, b));
}

// (a - b) mod p: a - b, plus p where that borrowed (mod 2^(32 FE_PACKED)), without a branch.
fn pk_sub(a: PackedFe, b: PackedFe) -> PackedFe {
    let r = pk_sub_words(a, b);
    let mask = 0u - r.borrow;
    var p_or_0: PackedFe;
    for (var j = 0u; j < FE_PACKED; j++) {
        p_or_0[j] = FE_P_PACKED[j] & mask;
    }
    return pk_add_words(r.d, p_or_0);
}

// Constants are stored packed (zkgpu_curves::program_words), as registers are.
fn load_const(offset: u32) -> PackedFe {
    var w: PackedFe;
    for (var j = 0u; j < FE_PACKED; j++) {
        w[j] = vm_code[offset + j];
    }
    return w;
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
        // MUL, d = a b, and in modules composed with the Fq2 product KMUL
        // (shaders/kernels/curve_vm_kmul.wgsl, zkgpu_shaders::Group::vm_fq2_ops) KMUL:
        // vm_mul holds the one multiplication site; it returns true where the instruction
        // runs again (KMUL's three rounds).
        if (code == 1u || (VM_KMUL && code == 7u)) {
            if (vm_mul(code, d, a, b)) {
                pc = pc - 1u;
            }
            continue;
        }
        // ADD, SUB and DBL share one packed operand fetch and one store.
        if (code <= 4u) {
            let x = regs[a];
            var y = x;
            if (code != 4u) {
                y = regs[b];
            }
            // SUB adds p - y (in [1, p]; x + p - y < 2p), so the loop holds one addition.
            if (code == 3u) {
                y = pk_sub_words(FE_P_PACKED, y).d;
            }
            regs[d] = pk_add(x, y);
            continue;
        }
        switch code {
            case 5u: {
                regs[d] = regs[a];
            }
            case 6u: {
                regs[d] = PackedFe();
            }
            case 8u: {
                regs[d] = load_const(vm_consts + b * FE_PACKED);
            }
            case 9u: {
                if (reg_is_zero(a)) {
                    pc = b;
                }
            }
            case 10u: {
                if (!reg_is_zero(a)) {
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

