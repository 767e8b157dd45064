// The NTT's element form in the portable arithmetic: `Nt` is the field's 13-bit limbs (`Fe`),
// the `nt_*` functions are the lazy module's (bound by the lazy shim before this file).
alias Nt = Fe;

fn nt_unpack(w: array<u32, 8>) -> Nt {
    return fe_unpack(w);
}

fn nt_pack(x: Nt) -> array<u32, 8> {
    return fe_pack(x);
}

fn nt_add_lazy(a: Nt, b: Nt) -> Nt {
    return fe_add_lazy(a, b);
}

fn nt_sub_lazy(a: Nt, b: Nt) -> Nt {
    return fe_sub_lazy(a, b);
}

fn nt_sub_wide(a: Nt, b: Nt) -> Nt {
    return fe_sub_wide(a, b);
}

fn nt_reduce(a: Nt) -> Nt {
    return fe_reduce(a);
}

fn nt_mul_lazy(a: Nt, b: Nt) -> Nt {
    return fe_mul_lazy(a, b);
}

// A workgroup of 128 invocations transforms a tile of 256 elements in workgroup memory (10.3
// KiB: within WebGPU's default 16 KiB). Tile element e is kept as its 20 limbs in 10 words of
// two 16-bit halves, word w at w * 264 + e + e / 32: consecutive elements in consecutive banks,
// a word of padding after every 32 so that the scatter's bit-reversed reads (elements 2^(k-5)
// apart across a warp) fall in 32 banks rather than as few as 4 (1-2% of the f64 pass on
// the H100, docs/log/2026-12-07-ntt-profile.md), and a limb is one mask or shift away
// (the 8-word packed form cost a 32-bit repacking per access, which made the butterflies
// twice as slow on the H100; docs/log/2026-11.md).
const_assert FE_WORDS == 20u;
const_assert NTT_TILE == 256u;
var<workgroup> tile: array<u32, 2640>;

fn tile_get(e: u32) -> Fe {
    let a = e + (e >> 5u);
    let w0 = tile[a];
    let w1 = tile[264u + a];
    let w2 = tile[528u + a];
    let w3 = tile[792u + a];
    let w4 = tile[1056u + a];
    let w5 = tile[1320u + a];
    let w6 = tile[1584u + a];
    let w7 = tile[1848u + a];
    let w8 = tile[2112u + a];
    let w9 = tile[2376u + a];
    return Fe(w0 & 8191u, w0 >> 16u, w1 & 8191u, w1 >> 16u, w2 & 8191u, w2 >> 16u, w3 & 8191u, w3 >> 16u, w4 & 8191u, w4 >> 16u, w5 & 8191u, w5 >> 16u, w6 & 8191u, w6 >> 16u, w7 & 8191u, w7 >> 16u, w8 & 8191u, w8 >> 16u, w9 & 8191u, w9 >> 16u);
}

fn tile_set(e: u32, x: Fe) {
    let a = e + (e >> 5u);
    tile[a] = x[0] | (x[1] << 16u);
    tile[264u + a] = x[2] | (x[3] << 16u);
    tile[528u + a] = x[4] | (x[5] << 16u);
    tile[792u + a] = x[6] | (x[7] << 16u);
    tile[1056u + a] = x[8] | (x[9] << 16u);
    tile[1320u + a] = x[10] | (x[11] << 16u);
    tile[1584u + a] = x[12] | (x[13] << 16u);
    tile[1848u + a] = x[14] | (x[15] << 16u);
    tile[2112u + a] = x[16] | (x[17] << 16u);
    tile[2376u + a] = x[18] | (x[19] << 16u);
}
