// MSM scalars from arkworks' Montgomery form to canonical integers, in place, one invocation
// per scalar (docs/msm.md, step 1).
//
// arkworks stores x as x 2^256 mod r (8 little-endian u32 words, fully reduced). The field's
// Montgomery product divides by 2^(13 FE_WORDS), so multiplying the stored value by the plain
// integer 2^(13 FE_WORDS - 256) gives x, canonical: one multiplication per scalar, where the
// host's threads took 2-3 ms for 2^20 scalars on the H100.

struct ScalarParams {
    // Scalars.
    n: u32,
    // Invocations per row of the 2-D dispatch grid.
    row_stride: u32,
}

@group(0) @binding(0) var<storage, read_write> scalars: array<u32>;
// The MSM's BucketParams, whose first two fields these are.
@group(0) @binding(5) var<uniform> sp: ScalarParams;

// Set by the pipeline: the MSM's WORKGROUP_SIZE, which also sizes the grid.
override WORKGROUP_SIZE: u32;

@compute @workgroup_size(WORKGROUP_SIZE)
fn msm_scalars_from_montgomery(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * sp.row_stride;
    if (i >= sp.n) {
        return;
    }
    var w: array<u32, 8>;
    for (var k = 0u; k < 8u; k++) {
        w[k] = scalars[8u * i + k];
    }
    var shift = fe_zero();
    shift[0] = 1u << (13u * FE_WORDS - 256u);
    let x = fe_pack(fe_mul(fe_unpack(w), shift));
    for (var k = 0u; k < 8u; k++) {
        scalars[8u * i + k] = x[k];
    }
}
