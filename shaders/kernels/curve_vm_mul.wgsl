// The curve VM's multiplication step without KMUL (shaders/kernels/curve_vm_core.wgsl):
// MUL, d = a b, over packed registers (the field arithmetic's fe_mul_packed converts them to
// its limbs). The interpreter's one multiplication site.

// No KMUL here (opcode 7 is not run).
const VM_KMUL: bool = false;

fn vm_mul(code: u32, d: u32, a: u32, b: u32) -> bool {
    regs[d] = fe_mul_packed(regs[a], regs[b]);
    return false;
}
