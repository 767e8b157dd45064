// Radix-2^k NTT passes over a prime field, elements moved in arkworks' packed layout (8
// little-endian u32 words, the Montgomery form x 2^256 that `Fp` stores) and held in
// registers and the tile in the element form `Nt` of the arithmetic (`nt_*`: the portable
// 13-bit limbs, or a 64-bit arithmetic's native limbs; docs/ntt.md).
//
// A transform of size N = 2^L runs as P passes of k_1 + ... + k_P = L bits (k <= 8). Pass p
// sees the array as s = 2^(k_1 + ... + k_(p-1)) interleaved sub-transforms of size M = N / s.
// With N1 = 2^k and N2 = M / N1, a sub-transform at offset o decomposes as (the "four-step"
// split)
//     X[k1 + N1 k2] = sum_n2 w_N2^(n2 k2) * [ w_M^(n2 k1) * sum_n1 x[n1 N2 + n2] w_N1^(n1 k1) ]
// so a pass gathers the N1 elements of each column (o, n2) from `src` at o + s (n1 N2 + n2),
// transforms them in workgroup memory (radix-2 DIF stages, one barrier each), multiplies output
// k1 by the twist w_M^(n2 k1) = w_N^(s n2 k1), and writes it to `dst` at o + s (n2 N1 + k1):
// the next pass then finds every remaining sub-transform at stride s N1, and the last pass
// leaves the result in natural order. No bit-reversal pass is needed.
//
// Twiddles are in *our* Montgomery form (w 2^(13 n)), so nt_mul_lazy(x 2^256, w 2^(13 n)) =
// x w 2^256: data stays in arkworks' form throughout and is never converted.
// Values in the tile and between passes live in the redundant range [0, 2p) (the field's lazy
// module): a butterfly's difference x0 - x1 + 2p < 4p times a canonical root is below 2p
// without the final subtraction, and only the last pass reduces below p.
// Twists come from a table of all N powers w^e (`twists`, one multiplication per element and
// pass) where the device holds one, else, like coset powers, from two small tables,
// w^e = hi[e >> h] * lo[e & (2^h - 1)] (two multiplications).

struct NttParams {
    // log2 of the transform size N.
    n_log: u32,
    // Bits of this pass: N1 = 2^k columns' length.
    k: u32,
    // log2 of the stride s between this pass's sub-transforms.
    s_log: u32,
    // 0: no output factor; 1: twist w_N^(s n2 k1) from the two tables; 2: table power of the
    // output index; 3: twist w_N^(s n2 k1) from `twists` (the first pass reads its own
    // segment at the output index, later passes the strided segment at tw2_off).
    out_mode: u32,
    // 0: no input factor; 1: table power of the input index (coset shift).
    in_mode: u32,
    // Split bit of the two-table powers: lo has 2^h entries.
    h: u32,
    // Element offsets of the tables in `tables`: output hi, output lo, input hi, input lo,
    // and the inner roots w_(2^kmax)^i, i < 2^(kmax-1).
    out_hi: u32,
    out_lo: u32,
    in_hi: u32,
    in_lo: u32,
    roots: u32,
    // log2 of the inner roots' order.
    roots_log: u32,
    // Workgroups per transform in the batch (the grid's x extent times its y extent covers
    // batch * per_transform).
    per_transform: u32,
    // Number of transforms in the batch.
    batch: u32,
    grid_x: u32,
    // log2 of the elements per page: element e lives in page e >> page_log.
    page_log: u32,
    // out_mode 3 after the first pass: `twists[tw2_off + (e >> tw2_shift)]` is w^e.
    tw2_off: u32,
    tw2_shift: u32,
}

// The data of a batch is paged across up to three bindings of 2^page_log elements each, so
// that no binding exceeds the device's limit (WebGPU's default is 128 MiB: 2^22 elements);
// pages the data does not reach are bound to small placeholder buffers and never read.
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> src1: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read> src2: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read_write> dst1: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> dst2: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> tables: array<vec4<u32>>;
@group(0) @binding(3) var<uniform> params: NttParams;
// The twists of out_mode 3 (a placeholder otherwise), in the tables' form: first, for the
// first pass, w^(n2 k1) at that pass's output index n2 N1 + k1, so that its reads are in
// order beside its stores; then w^(x 2^tw2_shift) for x < N >> tw2_shift, for the later
// passes, whose exponents are multiples of 2^tw2_shift (docs/ntt.md, "Twiddles").
@group(0) @binding(8) var<storage, read> twists: array<vec4<u32>>;

const NTT_WG: u32 = 128u;
const NTT_TILE: u32 = 256u;

// A workgroup of 128 invocations transforms a tile of 256 elements in workgroup memory:
// the tile, `tile_get` and `tile_set` are generated for the element form `Nt` (portable:
// shaders/kernels/ntt_tile.wgsl; a 64-bit arithmetic's native form) in
// shaders/src/compose.rs (`ntt_tile`).

// Element e of the batch from `src`'s pages.
fn load_packed(e: u32) -> Nt {
    let page = e >> params.page_log;
    let i = 2u * (e & ((1u << params.page_log) - 1u));
    var lo: vec4<u32>;
    var hi: vec4<u32>;
    if (page == 0u) {
        lo = src[i];
        hi = src[i + 1u];
    } else if (page == 1u) {
        lo = src1[i];
        hi = src1[i + 1u];
    } else {
        lo = src2[i];
        hi = src2[i + 1u];
    }
    return nt_unpack(array<u32, 8>(lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w));
}

// Element e of the batch into `dst`'s pages.
fn store_packed(e: u32, x: Nt) {
    let w = nt_pack(x);
    let lo = vec4<u32>(w[0], w[1], w[2], w[3]);
    let hi = vec4<u32>(w[4], w[5], w[6], w[7]);
    let page = e >> params.page_log;
    let i = 2u * (e & ((1u << params.page_log) - 1u));
    if (page == 0u) {
        dst[i] = lo;
        dst[i + 1u] = hi;
    } else if (page == 1u) {
        dst1[i] = lo;
        dst1[i + 1u] = hi;
    } else {
        dst2[i] = lo;
        dst2[i + 1u] = hi;
    }
}

fn table(index: u32) -> Nt {
    let lo = tables[2u * index];
    let hi = tables[2u * index + 1u];
    return nt_unpack(array<u32, 8>(lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w));
}

fn twist(e: u32) -> Nt {
    let lo = twists[2u * e];
    let hi = twists[2u * e + 1u];
    return nt_unpack(array<u32, 8>(lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w));
}

// x * hi[e >> h] * lo[e & mask], or x * twists[e] when `full`: one multiplication site.
// x < 2p in, below 2p out (unreduced products of canonical table entries).
fn times_power(x: Nt, hi_off: u32, lo_off: u32, e: u32, full: bool) -> Nt {
    var r = x;
    var f: Nt;
    var reps = 2u;
    if (full) {
        f = twist(e);
        reps = 1u;
    } else {
        f = table(hi_off + (e >> params.h));
    }
    for (var i = 0u; i < reps; i++) {
        if (i == 1u) {
            f = table(lo_off + (e & ((1u << params.h) - 1u)));
        }
        r = nt_mul_lazy(r, f);
    }
    return r;
}

@compute @workgroup_size(NTT_WG)
fn ntt_pass(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    let wg = wid.x + wid.y * params.grid_x;
    let batch = wg / params.per_transform;
    let active_wg = batch < params.batch;
    let k = params.k;
    let n1 = 1u << k;
    let groups_per_wg = NTT_TILE >> k;
    let groups = 1u << (params.n_log - k);
    let n = 1u << params.n_log;
    let base = batch * n;
    let s_mask = (1u << params.s_log) - 1u;
    let first_group = (wg % params.per_transform) * groups_per_wg;
    let col_stride = groups;

    // Gather: consecutive threads take consecutive columns (contiguous addresses).
    for (var r = 0u; r < 2u; r++) {
        let e = t + r * NTT_WG;
        let gl = e % groups_per_wg;
        let i1 = e / groups_per_wg;
        let g = first_group + gl;
        if (active_wg && g < groups) {
            let idx = g + col_stride * i1;
            var x = load_packed(base + idx);
            if (params.in_mode == 1u) {
                x = times_power(x, params.in_hi, params.in_lo, idx, false);
            }
            tile_set(gl * n1 + i1, x);
        }
    }
    workgroupBarrier();

    // Radix-2 decimation-in-frequency stages: natural order in, bit-reversed out.
    let half_n1 = n1 >> 1u;
    let gl = t / half_n1;
    let b = t % half_n1;
    for (var st = 0u; st < k; st++) {
        let half = half_n1 >> st;
        let j = b % half;
        let i0 = gl * n1 + (b / half) * 2u * half + j;
        let i1 = i0 + half;
        let x0 = tile_get(i0);
        let x1 = tile_get(i1);
        // Tile values stay in the redundant range [0, 2p) (docs/ntt.md): x0 - x1 + 2p < 4p
        // times a canonical root is below 2p unreduced. The last stage (half = 1, uniform)
        // has only j = 0; elsewhere j = 0 multiplies by the stored one, where the warp would
        // otherwise wait for its other lanes' multiplication.
        var y: Nt;
        if (half == 1u) {
            y = nt_sub_lazy(x0, x1);
        } else {
            // w_(2^(k-st))^j = w_(2^roots_log)^(j 2^(roots_log - k + st))
            y = nt_mul_lazy(nt_sub_wide(x0, x1), table(params.roots + (j << (params.roots_log - k + st))));
        }
        // Each butterfly owns i0 and i1 within a stage: no barrier between read and write.
        tile_set(i0, nt_add_lazy(x0, x1));
        tile_set(i1, y);
        workgroupBarrier();
    }

    // Scatter output k1 of column (o, n2) to o + s (n2 N1 + k1).
    for (var r = 0u; r < 2u; r++) {
        let e = t + r * NTT_WG;
        var gl2: u32;
        var k1: u32;
        if (params.s_log == 0u) {
            k1 = e % n1;
            gl2 = e / n1;
        } else {
            gl2 = e % groups_per_wg;
            k1 = e / groups_per_wg;
        }
        let g = first_group + gl2;
        if (active_wg && g < groups) {
            var x = tile_get(gl2 * n1 + (reverseBits(k1) >> (32u - k)));
            let o = g & s_mask;
            let n2 = g >> params.s_log;
            let idx = o + ((n2 * n1 + k1) << params.s_log);
            if (params.out_mode != 0u) {
                var e = (n2 * k1) << params.s_log;
                if (params.out_mode == 2u || (params.out_mode == 3u && params.s_log == 0u)) {
                    e = idx;
                } else if (params.out_mode == 3u) {
                    e = params.tw2_off + (e >> params.tw2_shift);
                }
                x = times_power(x, params.out_hi, params.out_lo, e, params.out_mode == 3u);
            }
            // Between passes elements stay below 2p (2p < 2^256 fits the packed words); the
            // last pass leaves them canonical.
            if (params.s_log + k == params.n_log) {
                x = nt_reduce(x);
            }
            store_packed(base + idx, x);
        }
    }
}
