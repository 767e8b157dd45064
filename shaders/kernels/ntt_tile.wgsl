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

// The tile of 256 elements (20 limbs in 10 words of two 16-bit halves, 10.3 KiB: within
// WebGPU's default 16 KiB) and `tile_get` / `tile_set` come after this file, generated for
// every element form alike (shaders/src/compose.rs, `ntt_tile`).
const_assert FE_WORDS == 20u;
