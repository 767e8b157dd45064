// Elementwise kernels of the Groth16 witness map over a prime field (the `Fe` shim), on
// elements in arkworks' packed layout (see ntt.wgsl). Constants are in our Montgomery form, so
// products with them stay in arkworks' form; products of two data elements are corrected by
// doublings.

struct EwParams {
    // 0: a = a * b; 1: a = a - b; 2: a = a * c; 3: a = (a * b - d) * c; 4: a[i] = b[e >> h] *
    // d[e mod 2^h] for the exponent e of entry i (below), factors in our Montgomery form (a
    // twist table from its two halves, crates/ntt/src/twists.rs).
    op: u32,
    len: u32,
    grid_x: u32,
    // Element offsets of a (written), b and d in `ew_data`.
    a_off: u32,
    b_off: u32,
    d_off: u32,
    // log2 of the elements per page of `ew_data` (see ntt.wgsl).
    page_log: u32,
    // Op 4: log2 of the length of the table at d.
    h: u32,
    // Op 4: entry i's exponent is (i >> tw_k) (i mod 2^tw_k) where tw_k > 0 (a first pass of
    // 2^tw_k columns, in its output order), else i << tw_s (a strided segment).
    tw_k: u32,
    tw_s: u32,
    // The constant c in our Montgomery form, packed.
    c: array<vec4<u32>, 2>,
}

// One set of bindings for all operands: wgpu forbids binding one buffer read-only and
// read-write in the same dispatch, and the witness map keeps a, b and c in one batch. The
// batch is paged across up to three bindings like the passes' data (ntt.wgsl).
@group(0) @binding(0) var<storage, read_write> ew_data: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> ew_data1: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> ew_data2: array<vec4<u32>>;
@group(0) @binding(1) var<uniform> ew: EwParams;

fn ew_load(e: u32) -> Fe {
    let page = e >> ew.page_log;
    let i = 2u * (e & ((1u << ew.page_log) - 1u));
    var lo: vec4<u32>;
    var hi: vec4<u32>;
    if (page == 0u) {
        lo = ew_data[i];
        hi = ew_data[i + 1u];
    } else if (page == 1u) {
        lo = ew_data1[i];
        hi = ew_data1[i + 1u];
    } else {
        lo = ew_data2[i];
        hi = ew_data2[i + 1u];
    }
    return fe_unpack(array<u32, 8>(lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w));
}

fn ew_store(e: u32, x: Fe) {
    let w = fe_pack(x);
    let lo = vec4<u32>(w[0], w[1], w[2], w[3]);
    let hi = vec4<u32>(w[4], w[5], w[6], w[7]);
    let page = e >> ew.page_log;
    let i = 2u * (e & ((1u << ew.page_log) - 1u));
    if (page == 0u) {
        ew_data[i] = lo;
        ew_data[i + 1u] = hi;
    } else if (page == 1u) {
        ew_data1[i] = lo;
        ew_data1[i + 1u] = hi;
    } else {
        ew_data2[i] = lo;
        ew_data2[i + 1u] = hi;
    }
}

// Invocations per workgroup (the Rust caller sizes its grid by this).
const EW_WG: u32 = 256u;

// Elementwise kernels of the witness map. One multiplication site, run once or twice.
@compute @workgroup_size(EW_WG)
fn ntt_elementwise(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * ew.grid_x * 256u;
    if (i >= ew.len) {
        return;
    }
    let c = fe_unpack(array<u32, 8>(ew.c[0].x, ew.c[0].y, ew.c[0].z, ew.c[0].w, ew.c[1].x, ew.c[1].y, ew.c[1].z, ew.c[1].w));
    var x: Fe;
    var e = i << ew.tw_s;
    if (ew.tw_k != 0u) {
        e = (i >> ew.tw_k) * (i & ((1u << ew.tw_k) - 1u));
    }
    if (ew.op == 4u) {
        x = ew_load(ew.b_off + (e >> ew.h));
    } else {
        x = ew_load(ew.a_off + i);
    }
    if (ew.op == 1u) {
        x = fe_sub(x, ew_load(ew.b_off + i));
    } else {
        var f = c;
        var rounds = 1u;
        if (ew.op == 0u || ew.op == 3u) {
            f = ew_load(ew.b_off + i);
        }
        if (ew.op == 3u) {
            rounds = 2u;
        }
        if (ew.op == 4u) {
            f = ew_load(ew.d_off + (e & ((1u << ew.h) - 1u)));
        }
        for (var r = 0u; r < rounds; r++) {
            x = fe_mul(x, f);
            if (r == 0u && (ew.op == 0u || ew.op == 3u)) {
                // Both factors were in arkworks' form x 2^(32 W): the product lacks
                // 2^(32 W - 13 n) = 2^FE_PACK_SHIFT of it.
                for (var d = 0u; d < FE_PACK_SHIFT; d++) {
                    x = fe_double(x);
                }
            }
            if (r == 0u && ew.op == 3u) {
                x = fe_sub(x, ew_load(ew.d_off + i));
                f = c;
            }
        }
    }
    ew_store(ew.a_off + i, x);
}
