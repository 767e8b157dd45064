// load_point for an MSM over one part of the bases (msm_accumulate.wgsl's `bases`). Bases
// are stored packed (FE_PACKED words a register), as the VM's registers are: loaded without
// conversion.

// The affine point `point` of the bases, all its registers.
fn load_point(point: u32) -> array<PackedFe, AFFINE_REGS> {
    var p: array<PackedFe, AFFINE_REGS>;
    let at = point * AFFINE_REGS * FE_PACKED;
    for (var r = 0u; r < AFFINE_REGS; r++) {
        for (var j = 0u; j < FE_PACKED; j++) {
            p[r][j] = bases[at + r * FE_PACKED + j];
        }
    }
    return p;
}

// The same point straight into the VM's registers from `first` on.
fn load_point_regs(point: u32, first: u32) {
    let at = point * AFFINE_REGS * FE_PACKED;
    for (var r = 0u; r < AFFINE_REGS; r++) {
        for (var j = 0u; j < FE_PACKED; j++) {
            regs[first + r][j] = bases[at + r * FE_PACKED + j];
        }
    }
}
