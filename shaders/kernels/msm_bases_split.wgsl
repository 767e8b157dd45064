// load_base for one MSM over two parts of the bases, each its own storage binding (a
// binding holds at most the device's binding limit; docs/msm.md "Limits"): words below
// ap.split_words are the first part's (`bases`), the rest the second's (`bases_hi`). A point
// never straddles the two.
fn load_base(offset: u32) -> PackedFe {
    var w: PackedFe;
    if (offset < ap.split_words) {
        for (var j = 0u; j < FE_PACKED; j++) {
            w[j] = bases[offset + j];
        }
    } else {
        let at = offset - ap.split_words;
        for (var j = 0u; j < FE_PACKED; j++) {
            w[j] = bases_hi[at + j];
        }
    }
    return w;
}
