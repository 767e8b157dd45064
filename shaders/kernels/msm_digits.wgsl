// MSM digits (docs/msm.md, step 2): the bucket-assignment parameters and bindings that the
// digit kernels share, and scalar_digits, which both call: msm_digits (msm_buckets.wgsl) on
// canonical scalars, msm_digits_from_montgomery (msm_scalars.wgsl) on arkworks' Montgomery
// form, converted in registers. Composed before either kernel file.

struct BucketParams {
    // Scalars.
    n: u32,
    // Invocations per row of the 2-D dispatch grid.
    row_stride: u32,
    // Window width c in bits (2..=16).
    c: u32,
    // Windows.
    windows: u32,
    // Buckets per window: 2^(c-1) + 1 (bucket 0 stays empty).
    buckets: u32,
    // Entries per accumulation chunk (msm_chunk_counts).
    chunk: u32,
    // Chunk sizes per histogram bin: a chunk of s entries has key (chunk - s) / key_div.
    key_div: u32,
    // Base sets (1 for a plain MSM) and the points between the starts of two stored runs
    // (a set's fold levels, then the next set's).
    sets: u32,
    set_stride: u32,
    // Bucket windows per set (msm_scan: a window's histogram is that of its index mod this).
    set_windows: u32,
    // Folded bases (docs/msm.md): digit window w adds fold level w / fold_windows of its
    // point into bucket window w % fold_windows; `folds` levels are stored per set. Without
    // folding fold_windows >= windows and folds = 1.
    fold_windows: u32,
    folds: u32,
    // Digit windows per bucket window at most: window w's slots start at w * n * load.
    load: u32,
    // The largest rank a digit word holds (rank_cap below): 2^(31 - c) - 1, 0 for none (few
    // digits per bucket, docs/msm.md), or what a test asks.
    rank_cap: u32,
    // One MSM over two parts of the bases (one set; docs/msm.md "Limits"), where hi_base is
    // not 0: scalars from `split` on point at the second part, whose points are numbered from
    // hi_base (the first part's points) with its own `hi_stride` points per fold level.
    split: u32,
    hi_base: u32,
    hi_stride: u32,
    // Chunk sums one invocation adds per level of a large bucket's tree (msm_chunk_counts
    // lists the buckets of more chunks apart).
    chunk_group: u32,
    // Entries per chunk of a large bucket, one of more than `large_at` entries (far above a
    // window's mean bucket: repeated scalars): a shorter serial chain where the parallelism
    // is in the bucket's chunks. At most `chunk`.
    large_chunk: u32,
    large_at: u32,
    // The scalar field's modulus r, 8 little-endian words (msm_digits).
    modulus: array<vec4<u32>, 2>,
}

// Set by the pipeline (the Rust caller's one WORKGROUP_SIZE), which also sizes the grid.
override WORKGROUP_SIZE: u32;

@group(0) @binding(0) var<storage, read> scalars: array<u32>;
@group(0) @binding(1) var<storage, read_write> digits: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(5) var<uniform> bp: BucketParams;

// Bits [w c, w c + c) of the 256-bit integer `x`.
fn window_bits(x: array<u32, 8>, w: u32) -> u32 {
    let bit = w * bp.c;
    let word = bit / 32u;
    let sh = bit % 32u;
    var v = 0u;
    if (word < 8u) {
        v = x[word] >> sh;
        if (sh + bp.c > 32u && word + 1u < 8u) {
            v = v | (x[word + 1u] << (32u - sh));
        }
    }
    return v & ((1u << bp.c) - 1u);
}

// Signed c-bit digits of scalar i (`canonical`: below r, 8 little-endian words),
// window-major, as digit words (rank_cap below), counted into the histogram. Like arkworks' `msm` (ark-ec's msm_signed), a scalar s of more than 64 bits
// with r - s < 2^64 is taken as the integer s - r: its digits are those of r - s, negated.
// In the prime-order subgroup (s - r) P = s P; outside it the two differ, and arkworks' sum
// is the one to match.
fn scalar_digits(i: u32, canonical: array<u32, 8>) {
    var x = canonical;
    var minus: array<u32, 8>;
    var borrow = 0u;
    var high = 0u;
    var diff_high = 0u;
    for (var k = 0u; k < 8u; k++) {
        let s = x[k];
        let r = bp.modulus[k / 4u][k % 4u];
        let t = r - s;
        minus[k] = t - borrow;
        borrow = select(0u, 1u, s > r || (s == r && borrow != 0u));
        if (k >= 2u) {
            high = high | s;
            diff_high = diff_high | minus[k];
        }
    }
    // r - s < 2^64 < s (s < r, so no borrow out of the top word).
    let negate = borrow == 0u && diff_high == 0u && high != 0u;
    if (negate) {
        x = minus;
    }
    let half = 1u << (bp.c - 1u);
    let cap = rank_cap();
    var carry = 0u;
    // Each window's word is stored one window late, so that its histogram atomic is in
    // flight while the next window's is issued.
    var last = 0u;
    var last_rank = 0u;
    for (var w = 0u; w < bp.windows; w++) {
        let raw = window_bits(x, w) + carry;
        var d = raw;
        var sign = 0u;
        carry = 0u;
        if (raw > half) {
            // raw - 2^c < 0: bucket 2^c - raw, negated; carry one into the next window.
            d = (1u << bp.c) - raw;
            sign = 1u;
            carry = 1u;
        }
        if (negate) {
            sign = sign ^ 1u;
        }
        var rank = 0u;
        let count = (w % bp.fold_windows) * bp.buckets + d;
        if (d != 0u && cap == 0u) {
            // No ranks (rank_cap): an atomic whose result is not read, cheaper on NVIDIA.
            atomicAdd(&counts[count], 1u);
        } else if (d != 0u) {
            rank = atomicAdd(&counts[count], 1u);
        }
        if (w > 0u) {
            digits[(w - 1u) * bp.n + i] = (min(last_rank, cap) << (bp.c + 1u)) | last;
        }
        last = (d << 1u) | sign;
        last_rank = rank;
    }
    if (bp.windows > 0u) {
        digits[(bp.windows - 1u) * bp.n + i] = (min(last_rank, cap) << (bp.c + 1u)) | last;
    }
}

// A digit word: bit 0 the sign, bits 1..=c the bucket, the rest the digit's rank among its
// bucket's digits (the histogram atomic's result: msm_scatter's slot in the bucket without an
// atomic of its own), or rank_cap() for a rank of rank_cap() or more (c <= 22 leaves at
// least 9 bits). A cap of 0 keeps no ranks: every digit takes the scatter's cursors.
fn rank_cap() -> u32 {
    return min(bp.rank_cap, (1u << (31u - bp.c)) - 1u);
}
