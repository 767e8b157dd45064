// The NTT's element form in the portable arithmetic: `Nt` is the field's 13-bit limbs (`Fe`),
// the `nt_*` functions are the lazy module's (bound by the lazy shim before this file). The
// tile (`tile_get`, `tile_set`: 20 limbs as 10 words of two 16-bit halves) comes after it,
// composed for the tile's size (shaders/src/ntt.rs).
alias Nt = Fe;
const_assert FE_WORDS == 20u;

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
