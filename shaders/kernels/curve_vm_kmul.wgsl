// The curve VM's multiplication step with KMUL (shaders/kernels/curve_vm_core.wgsl), for
// groups over Fq2 = Fq[u]/(u^2 + 1) where it measures faster (zkgpu_shaders::Group::
// vm_fq2_ops; crates/curves/src/vm.rs, `op::KMUL`). MUL: d = a b. KMUL: the Fq2 product of
// the register pairs (a, a') and (b, b') by Karatsuba, in three rounds of the interpreter's
// loop (vm_mul returns true and the instruction runs again): v0 = a b, v1 = a' b',
// m = (a + a')(b + b'); the last round writes d = v0 - v1, d' = m - v0 - v1 after every
// operand is read (d may alias a or b). v0 and v1 wait in this invocation's registers, not
// in the register file: 8 register-file loads and 2 stores a product instead of the 13 and 7
// of KSUM, three MULs and KCOMB, and three rounds of the loop instead of five instructions.
// One multiplication site for both.

const VM_KMUL: bool = true;

// KMUL's round (0, 1, 2) and its first two products.
var<private> vm_kround: u32;
var<private> vm_kv0: PackedFe;
var<private> vm_kv1: PackedFe;

fn vm_mul(code: u32, d: u32, a: u32, b: u32) -> bool {
    var x: PackedFe;
    var y: PackedFe;
    if (vm_kround == 2u) {
        x = pk_add(regs[a], regs[a + 1u]);
        y = pk_add(regs[b], regs[b + 1u]);
    } else {
        x = regs[a + vm_kround];
        y = regs[b + vm_kround];
    }
    let p = fe_mul_packed(x, y);
    if (code == 1u) {
        regs[d] = p;
        return false;
    }
    if (vm_kround == 0u) {
        vm_kv0 = p;
        vm_kround = 1u;
        return true;
    }
    if (vm_kround == 1u) {
        vm_kv1 = p;
        vm_kround = 2u;
        return true;
    }
    regs[d] = pk_sub(vm_kv0, vm_kv1);
    regs[d + 1u] = pk_sub(pk_sub(p, vm_kv0), vm_kv1);
    vm_kround = 0u;
    return false;
}
