// MSM digits of scalars in arkworks' Montgomery form (docs/msm.md, steps 1-2), one invocation
// per scalar: converted to the canonical integer in registers, then msm_digits.wgsl's
// scalar_digits, as msm_digits does for canonical scalars. Composed after the scalar field's
// module and msm_digits.wgsl.
//
// arkworks stores x as x 2^256 mod r (8 little-endian u32 words, fully reduced). The field's
// Montgomery product divides by 2^(13 FE_WORDS), so multiplying the stored value by the plain
// integer 2^(13 FE_WORDS - 256) gives x, canonical: one multiplication per scalar, where the
// host's threads took 2-3 ms for 2^20 scalars on the H100, and where a separate conversion
// pass took 0.10 ms of BN254's 2^20.

@compute @workgroup_size(WORKGROUP_SIZE)
fn msm_digits_from_montgomery(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * bp.row_stride;
    if (i >= bp.n) {
        return;
    }
    var w: array<u32, 8>;
    for (var k = 0u; k < 8u; k++) {
        w[k] = scalars[8u * i + k];
    }
    var shift: array<u32, 8>;
    shift[0] = 1u << (13u * FE_WORDS - 256u);
    scalar_digits(i, fe_mul_packed(w, shift));
}
