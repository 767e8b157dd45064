// The curve VM core: elliptic-curve formulas run as short programs over a register file of
// base-field elements (crates/curves/src/vm.rs defines the instruction set and assembles the
// programs; crates/curves/src/formulas.rs holds the formulas). vm_run below is the only place
// that calls fe_mul, so a pipeline has one multiplication call site however long the formulas
// are: on NVIDIA, compile time grows with call sites, not with program length.
//
// Composed after a base-field module, its `fe_` shim and `const VM_REGS`; kernels that drive
// the VM (curve_vm.wgsl, msm_accumulate.wgsl) follow it and set `vm_consts` before running.
//
// Termination: every jump in a program goes forward (the assembler rejects backward jumps) and
// every program ends in HALT, so vm_run ends after at most the program's length in steps; an
// out-of-range pc reads 0 (HALT) under bounds checks.

@group(0) @binding(0) var<storage, read> vm_code: array<u32>;

// Registers are stored packed (FE_PACKED 32-bit words, not FE_WORDS 13-bit limbs): the
// dynamically indexed register file lives in local memory, which does not fit in L1 at full
// occupancy, so every VM instruction moves its operands through L2. Packing cuts that traffic
// 2.5x for 30-limb fields; reg/set_reg unpack and pack at each access.
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

fn load_const(offset: u32) -> Fe {
    var w: array<u32, FE_WORDS>;
    for (var j = 0u; j < FE_WORDS; j++) {
        w[j] = vm_code[offset + j];
    }
    return fe_from_words(w);
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
        // Arithmetic (MUL, ADD, SUB, DBL) shares one operand fetch and one result store, so
        // the loop holds one copy of the unpacking and packing code instead of one per case.
        if (code <= 4u) {
            let x = reg(a);
            var y = x;
            if (code != 4u) {
                y = reg(b);
            }
            var r: Fe;
            switch code {
                case 1u: {
                    r = fe_mul(x, y);
                }
                case 2u: {
                    r = fe_add(x, y);
                }
                case 3u: {
                    r = fe_sub(x, y);
                }
                default: {
                    r = fe_double(x);
                }
            }
            set_reg(d, r);
            continue;
        }
        switch code {
            case 5u: {
                regs[d] = regs[a];
            }
            case 6u: {
                regs[d] = PackedFe();
            }
            case 7u: {
                set_reg(d, fe_one());
            }
            case 8u: {
                set_reg(d, load_const(vm_consts + b * FE_WORDS));
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

