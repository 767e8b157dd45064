// load_base for an MSM over one part of the bases (msm_accumulate.wgsl's `bases`). Bases
// are stored packed (FE_PACKED words a register), as the VM's registers are: loaded without
// conversion.
fn load_base(offset: u32) -> PackedFe {
    var w: PackedFe;
    for (var j = 0u; j < FE_PACKED; j++) {
        w[j] = bases[offset + j];
    }
    return w;
}
