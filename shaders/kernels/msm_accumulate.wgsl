// MSM bucket accumulation on the curve VM (docs/msm.md): one invocation per bucket of every
// window, summing the bucket's points (CSR runs of `entries` from msm_buckets.wgsl) into an
// accumulator with the group's `madd` program (a negative digit negates the point first).
// Composed after curve_vm_core.wgsl. Loops count up to the bucket's size or to uniforms.

struct AccumulateParams {
    // Chunk capacity per window: accumulation invocations per window.
    cap: u32,
    // Invocations per row of the 2-D dispatch grid.
    row_stride: u32,
    // Word offset of the program's constants in vm_code.
    consts: u32,
    // Entry points of the program.
    entry_identity: u32,
    entry_madd: u32,
    // First register (within the affine point) and number of registers that negating the
    // point flips: y on Weierstrass curves, x on twisted Edwards.
    neg_reg: u32,
    // Registers of an accumulator, and of an affine point (loaded after it).
    acc_regs: u32,
    affine_regs: u32,
    neg_regs: u32,
    // Windows, buckets per window, entries per chunk.
    windows: u32,
    buckets: u32,
    chunk: u32,
    // msm_combine_chunks: the `add` entry point.
    entry_add: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

override WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(1) var<storage, read> bases: array<u32>;
@group(0) @binding(2) var<storage, read> entries: array<u32>;
@group(0) @binding(3) var<storage, read> offsets: array<u32>;
@group(0) @binding(4) var<storage, read> sizes: array<u32>;
@group(0) @binding(5) var<storage, read_write> bucket_sums: array<u32>;
@group(0) @binding(6) var<uniform> ap: AccumulateParams;
// Chunk offsets (window w's chunks start at w * cap) and counts per bucket, and the chunks'
// partial sums.
@group(0) @binding(9) var<storage, read> chunk_offsets: array<u32>;
@group(0) @binding(10) var<storage, read> chunk_counts: array<u32>;
@group(0) @binding(11) var<storage, read_write> partials: array<u32>;

fn load_base(offset: u32) -> Fe {
    var w: array<u32, FE_WORDS>;
    for (var j = 0u; j < FE_WORDS; j++) {
        w[j] = bases[offset + j];
    }
    return fe_from_words(w);
}

fn store_partial(offset: u32, x: Fe) {
    let w = fe_to_words(x);
    for (var j = 0u; j < FE_WORDS; j++) {
        partials[offset + j] = w[j];
    }
}

fn load_partial(offset: u32) -> Fe {
    var w: array<u32, FE_WORDS>;
    for (var j = 0u; j < FE_WORDS; j++) {
        w[j] = partials[offset + j];
    }
    return fe_from_words(w);
}

fn store_sum(offset: u32, x: Fe) {
    let w = fe_to_words(x);
    for (var j = 0u; j < FE_WORDS; j++) {
        bucket_sums[offset + j] = w[j];
    }
}

// Load balancing: every bucket is cut into chunks of at most `chunk` entries, and one
// invocation sums one chunk, so a bucket holding most points (equal scalars, 0/1 witnesses)
// is summed by many invocations. Invocation q of window w finds its bucket by binary search
// over the window's chunk offsets.
@compute @workgroup_size(WORKGROUP_SIZE)
fn msm_bucket_accumulate(@builtin(global_invocation_id) gid: vec3<u32>) {
    let j = gid.x + gid.y * ap.row_stride;
    if (j >= ap.windows * ap.cap) {
        return;
    }
    let w = j / ap.cap;
    let pos = j;
    let row = w * ap.buckets;
    // Last bucket b with chunk_offsets[row + b] <= pos (empty buckets share the next offset).
    var lo = 0u;
    var hi = ap.buckets;
    for (var it = 0u; it < 32u && hi - lo > 1u; it++) {
        let mid = (lo + hi) / 2u;
        if (chunk_offsets[row + mid] <= pos) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let slot = row + lo;
    let ci = pos - chunk_offsets[slot];
    if (chunk_offsets[slot] > pos || ci >= chunk_counts[slot]) {
        return;
    }
    vm_consts = ap.consts;
    let first = offsets[slot] + ci * ap.chunk;
    let size = min(ap.chunk, sizes[slot] - ci * ap.chunk);
    // Step 0 sets the identity; step k > 0 adds entry k - 1. One vm_run call site: each call
    // site inlines the interpreter and its multiplication (compile time).
    for (var k = 0u; k <= size; k++) {
        var entry_pc = ap.entry_identity;
        if (k > 0u) {
            let entry = entries[first + k - 1u];
            let point = entry & 0x7fffffffu;
            for (var r = 0u; r < ap.affine_regs; r++) {
                regs[ap.acc_regs + r] = load_base((point * ap.affine_regs + r) * FE_WORDS);
            }
            // A negative digit adds the negated point. Negating here (not by entering the
            // program at a different instruction) keeps every lane of a warp on the same VM
            // instruction.
            if ((entry >> 31u) == 1u) {
                for (var r = 0u; r < ap.neg_regs; r++) {
                    let x = ap.acc_regs + ap.neg_reg + r;
                    regs[x] = fe_neg(regs[x]);
                }
            }
            entry_pc = ap.entry_madd;
        }
        vm_run(entry_pc);
    }
    for (var r = 0u; r < ap.acc_regs; r++) {
        store_partial((pos * ap.acc_regs + r) * FE_WORDS, regs[r]);
    }
}

// One invocation per bucket: the sum of its chunks' partial sums (a copy for one chunk, the
// identity for none). Loops count to the bucket's chunk count.
@compute @workgroup_size(WORKGROUP_SIZE)
fn msm_combine_chunks(@builtin(global_invocation_id) gid: vec3<u32>) {
    let slot = gid.x + gid.y * ap.row_stride;
    if (slot >= ap.windows * ap.buckets) {
        return;
    }
    vm_consts = ap.consts;
    let first = chunk_offsets[slot];
    let count = chunk_counts[slot];
    let acc = ap.acc_regs;
    if (count == 1u) {
        for (var r = 0u; r < acc; r++) {
            store_sum((slot * acc + r) * FE_WORDS, load_partial((first * acc + r) * FE_WORDS));
        }
        return;
    }
    // Step 0: identity; step k > 0: acc += partial k - 1.
    for (var k = 0u; k <= count; k++) {
        var entry_pc = ap.entry_identity;
        if (k > 0u) {
            entry_pc = ap.entry_add;
            for (var r = 0u; r < acc; r++) {
                regs[acc + r] = load_partial(((first + k - 1u) * acc + r) * FE_WORDS);
            }
        }
        vm_run(entry_pc);
    }
    for (var r = 0u; r < acc; r++) {
        store_sum((slot * acc + r) * FE_WORDS, regs[r]);
    }
}

// Bucket reduction, phase 1: one invocation per segment of `seg_len` consecutive buckets of a
// window. With running sums from the top bucket down it computes the segment's plain sum
// R = sum_b B_b and its weighted sum S = sum_b (b - lo + 1) B_b; the window's total
// sum_b b B_b is then sum_t S_t + (lo_t - 1) R_t (docs/msm.md). Loops count to uniforms.

struct ReduceParams {
    // Segments over all windows (windows x segments per window).
    threads: u32,
    row_stride: u32,
    consts: u32,
    entry_identity: u32,
    entry_add: u32,
    acc_regs: u32,
    // Buckets per window (bucket 0 is empty and skipped).
    buckets: u32,
    // Segments per window, and buckets per segment.
    segments: u32,
    seg_len: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(7) var<uniform> rp: ReduceParams;
@group(0) @binding(8) var<storage, read_write> seg_out: array<u32>;

var<private> run_acc: array<Fe, 8>;
var<private> sum_acc: array<Fe, 8>;

fn load_sum(offset: u32) -> Fe {
    var w: array<u32, FE_WORDS>;
    for (var j = 0u; j < FE_WORDS; j++) {
        w[j] = bucket_sums[offset + j];
    }
    return fe_from_words(w);
}

fn store_seg(offset: u32, x: Fe) {
    let w = fe_to_words(x);
    for (var j = 0u; j < FE_WORDS; j++) {
        seg_out[offset + j] = w[j];
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn msm_reduce_segments(@builtin(global_invocation_id) gid: vec3<u32>) {
    let j = gid.x + gid.y * rp.row_stride;
    if (j >= rp.threads) {
        return;
    }
    vm_consts = rp.consts;
    let acc = rp.acc_regs;
    let w = j / rp.segments;
    let t = j % rp.segments;
    let lo = min(1u + t * rp.seg_len, rp.buckets);
    let hi = min(lo + rp.seg_len, rp.buckets);
    // Step 0: both sums start at the identity. Odd step 2i+1: running += B_b for the i-th
    // bucket from the top; even step 2i+2: sum += running. One vm_run call site.
    let steps = 2u * (hi - lo);
    for (var k = 0u; k <= steps; k++) {
        var entry_pc = rp.entry_identity;
        if (k > 0u) {
            entry_pc = rp.entry_add;
            if ((k & 1u) == 1u) {
                let b = hi - 1u - (k - 1u) / 2u;
                let base = (w * rp.buckets + b) * acc;
                for (var r = 0u; r < acc; r++) {
                    regs[r] = run_acc[r];
                    regs[acc + r] = load_sum((base + r) * FE_WORDS);
                }
            } else {
                for (var r = 0u; r < acc; r++) {
                    regs[r] = sum_acc[r];
                    regs[acc + r] = run_acc[r];
                }
            }
        }
        vm_run(entry_pc);
        for (var r = 0u; r < acc; r++) {
            if (k == 0u || (k & 1u) == 1u) {
                run_acc[r] = regs[r];
            }
            if (k == 0u || (k & 1u) == 0u) {
                sum_acc[r] = regs[r];
            }
        }
    }
    // Output: S_t then R_t, each `acc` registers.
    for (var r = 0u; r < acc; r++) {
        store_seg(((2u * j) * acc + r) * FE_WORDS, sum_acc[r]);
        store_seg(((2u * j + 1u) * acc + r) * FE_WORDS, run_acc[r]);
    }
}
