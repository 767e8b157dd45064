// load_point for one MSM over two parts of the bases, each its own storage binding (a
// binding holds at most the device's binding limit; docs/msm.md "Limits"): words below
// ap.split_words are the first part's (`bases`), the rest the second's (`bases_hi`). A point
// never straddles the two.

// The affine point `point` of the bases, all its registers.
fn load_point(point: u32) -> array<PackedFe, AFFINE_REGS> {
    var p: array<PackedFe, AFFINE_REGS>;
    for (var r = 0u; r < AFFINE_REGS; r++) {
        let offset = (point * AFFINE_REGS + r) * FE_PACKED;
        if (offset < ap.split_words) {
            for (var j = 0u; j < FE_PACKED; j++) {
                p[r][j] = bases[offset + j];
            }
        } else {
            let at = offset - ap.split_words;
            for (var j = 0u; j < FE_PACKED; j++) {
                p[r][j] = bases_hi[at + j];
            }
        }
    }
    return p;
}

// The same point into the VM's registers from `first` on, through `load_point`'s copy: loaded
// straight into the registers from either binding, BLS12-381 G2's accumulation took 3% longer
// on the H100 (docs/log/2026-11.md, 2026-11-27).
fn load_point_regs(point: u32, first: u32) {
    let p = load_point(point);
    for (var r = 0u; r < AFFINE_REGS; r++) {
        regs[first + r] = p[r];
    }
}
