// Whether `fma` on f64 is fused, which the f64 arithmetic's exact products need
// (docs/limbs.md): for x = 2^27 + check_a[0] the product x * x is rounded, and
// fma(x, x, -(x * x)) is its exact rounding error when fma is fused (1 for check_a[0] = 1),
// 0 when fma rounds the product first. x comes from a buffer so that no compiler folds it.
@compute @workgroup_size(1)
fn arith_fma() {
    let x = f64(check_a[0]) + 134217728.0lf;
    let err = fma(x, x, -(x * x));
    check_out[0] = select(0u, u32(err), err >= 0.0lf);
}
