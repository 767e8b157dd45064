// MSM bucket accumulation on the curve VM (docs/msm.md): one invocation per bucket of every
// window, summing the bucket's points (CSR runs of `entries` from msm_buckets.wgsl) into an
// accumulator with the group's `madd` program (a negative digit negates the point first).
// Composed after curve_vm_core.wgsl and msm_bases.wgsl or msm_bases_split.wgsl (load_point and
// load_point_regs). Loops count up to the bucket's size or to uniforms.

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
    // point negates: y on Weierstrass curves, 2d x y on twisted Edwards, where negating also
    // swaps the first two registers (y - x and y + x) when neg_swap is 1.
    neg_reg: u32,
    // Registers of an accumulator (an affine point's AFFINE_REGS follow it).
    acc_regs: u32,
    neg_regs: u32,
    neg_swap: u32,
    // Windows, buckets per window, entries per chunk.
    windows: u32,
    buckets: u32,
    chunk: u32,
    // msm_combine_chunks: the `add` entry point, the distance between the partial sums it
    // adds (group^level), the group size of a level, and the mode: 0 sums each bucket's
    // partials into bucket_sums, 1 runs one level of the tree over large buckets' chunks,
    // 2 is mode 0 over the listed buckets only (msm_combine_chunks says more).
    entry_add: u32,
    stride: u32,
    group: u32,
    level_mode: u32,
    // Words of `bases` before the second part's (`bases_hi`) points start, in an MSM over two
    // parts (msm_bases_split.wgsl's load_point); unused otherwise.
    split_words: u32,
    _pad1: u32,
    _pad2: u32,
    _pad3: u32,
}

// Set by the pipeline (the Rust caller's one WORKGROUP_SIZE), which also sizes the grid.
override WORKGROUP_SIZE: u32;

@group(0) @binding(1) var<storage, read> bases: array<u32>;
// The second part's bases in an MSM over two parts, read only by msm_bases_split.wgsl's
// load_point (in the modules without it no entry point uses it, so no layout holds it).
@group(0) @binding(16) var<storage, read> bases_hi: array<u32>;
@group(0) @binding(2) var<storage, read> entries: array<u32>;
@group(0) @binding(3) var<storage, read> offsets: array<u32>;
@group(0) @binding(5) var<storage, read_write> bucket_sums: array<u32>;
@group(0) @binding(6) var<uniform> ap: AccumulateParams;
// Chunk offsets (window w's chunks start at w * cap) and counts per bucket, and the chunks'
// partial sums.
@group(0) @binding(9) var<storage, read> chunk_offsets: array<u32>;
@group(0) @binding(10) var<storage, read> chunk_counts: array<u32>;
@group(0) @binding(11) var<storage, read_write> partials: array<u32>;
// Chunks in accumulation order: (bucket slot + 1, chunk index, entries) triples, (0, 0, 0)
// past the last.
@group(0) @binding(12) var<storage, read> chunk_order: array<u32>;
// Buckets of zero or several chunks (msm_chunk_counts): [0] how many, [1] the most chunks of
// a bucket, [3..] their slots.
@group(0) @binding(15) var<storage, read> combine_list: array<u32>;

// Chunk sums, bucket sums and the reduction's outputs are stored packed too (FE_PACKED words
// a register, as the registers hold them): 2.5x less memory and traffic than 13-bit limbs for
// 30-limb fields, so that wider windows fit a binding.
fn store_partial(offset: u32, x: PackedFe) {
    for (var j = 0u; j < FE_PACKED; j++) {
        partials[offset + j] = x[j];
    }
}

fn load_partial(offset: u32) -> PackedFe {
    var w: PackedFe;
    for (var j = 0u; j < FE_PACKED; j++) {
        w[j] = partials[offset + j];
    }
    return w;
}

fn store_sum(offset: u32, x: PackedFe) {
    for (var j = 0u; j < FE_PACKED; j++) {
        bucket_sums[offset + j] = x[j];
    }
}

// Load balancing: every bucket is cut into chunks of at most `chunk` entries, and one
// invocation sums one chunk, so a bucket holding most points (equal scalars, 0/1 witnesses)
// is summed by many invocations. Invocation j takes the j-th chunk of `chunk_order`
// (msm_chunk_order in msm_buckets.wgsl: chunks sorted by size, largest first), so the lanes
// of a warp run loops of about the same length; its partial sum goes to the chunk's position
// in its bucket's run of chunks.
@compute @workgroup_size(WORKGROUP_SIZE)
fn msm_bucket_accumulate(@builtin(global_invocation_id) gid: vec3<u32>) {
    let j = gid.x + gid.y * ap.row_stride;
    if (j >= ap.windows * ap.cap) {
        return;
    }
    let tagged = chunk_order[CHUNK_ORDER_WORDS * j];
    if (tagged == 0u) {
        return;
    }
    let slot = tagged - 1u;
    let ci = chunk_order[CHUNK_ORDER_WORDS * j + 1u];
    let pos = chunk_offsets[slot] + ci;
    vm_consts = ap.consts;
    // The chunk's entries and its bucket's chunk length (msm_layout.wgsl's chunk_word), both
    // at most ap.chunk.
    let word = chunk_order[CHUNK_ORDER_WORDS * j + 2u];
    let len = min(ap.chunk, word >> 16u);
    let size = min(len, word & 0xffffu);
    let first = offsets[slot] + ci * len;
    // Step 0 sets the identity; step k > 0 adds entry k - 1. One vm_run call site: each call
    // site inlines the interpreter and its multiplication (compile time). With
    // PREFETCH_POINT (a per-group constant, crates/shaders/src/group.rs) each step's point is
    // loaded one step ahead into `next` (constant indices: registers), so that its load runs
    // beside the previous step's program; else when its step comes.
    var next: array<PackedFe, AFFINE_REGS>;
    var next_entry = 0u;
    if (PREFETCH_POINT && size > 0u) {
        next_entry = entries[first];
        next = load_point(next_entry & 0x7fffffffu);
    }
    for (var k = 0u; k <= size; k++) {
        var entry_pc = ap.entry_identity;
        if (k > 0u) {
            var entry = next_entry;
            if (PREFETCH_POINT) {
                if (k < size) {
                    next_entry = entries[first + k];
                }
                for (var r = 0u; r < AFFINE_REGS; r++) {
                    regs[ap.acc_regs + r] = next[r];
                }
                if (k < size) {
                    next = load_point(next_entry & 0x7fffffffu);
                }
            } else {
                entry = entries[first + k - 1u];
                load_point_regs(entry & 0x7fffffffu, ap.acc_regs);
            }
            // A negative digit adds the negated point. Negating here (not by entering the
            // program at a different instruction) keeps every lane of a warp on the same VM
            // instruction.
            if ((entry >> 31u) == 1u) {
                if (ap.neg_swap == 1u) {
                    let x = regs[ap.acc_regs];
                    regs[ap.acc_regs] = regs[ap.acc_regs + 1u];
                    regs[ap.acc_regs + 1u] = x;
                }
                for (var r = 0u; r < ap.neg_regs; r++) {
                    let x = ap.acc_regs + ap.neg_reg + r;
                    regs[x] = pk_sub(PackedFe(), regs[x]);
                }
            }
            entry_pc = ap.entry_madd;
        }
        vm_run(entry_pc);
    }
    for (var r = 0u; r < ap.acc_regs; r++) {
        store_partial((pos * ap.acc_regs + r) * FE_PACKED, regs[r]);
    }
}

// What one turn of msm_combine_chunks' loop does: nothing more (JOB_DONE), nothing this turn
// (JOB_SKIP), or (JOB_ADD) the sum of `m` partials of `slot`'s chunks, `stride` apart from
// the q-th, stored in place of the q-th (mode 1) or as the bucket's sum.
const JOB_DONE: u32 = 0u;
const JOB_SKIP: u32 = 1u;
const JOB_ADD: u32 = 2u;

struct CombineJob {
    state: u32,
    slot: u32,
    q: u32,
    m: u32,
    stride: u32,
}

// Sums of chunk partials. Mode 0, one invocation per bucket: the sum of its partials into
// bucket_sums (a copy for one, the identity for none). Mode 2 is mode 0 for the buckets of
// combine_list only (none or several chunks; the reduction reads a one-chunk bucket's sum
// from its partial). Mode 1, one level of a tree over the chunks of the buckets of more than
// `group` chunks (combine_list's first part), on a grid of x over a bucket's groups and y
// over those buckets (msm_combine_args sizes it; each invocation loops over the groups and
// buckets beyond it): the partials of a bucket still to be added sit `stride` apart (stride
// = group^level), and group k adds the `group` of them from k x group on and writes the sum
// in place of the first. Mode 2 then adds the ceil(count / stride) partials that are left,
// at most `group`. Level l runs only where some bucket has more than group^(l + 1) chunks
// (msm_combine_args), so mode 2 takes its stride from that maximum (combine_list[1]), at
// most ap.stride; a bucket of at most `group` chunks ran no level, and mode 2 adds its
// partials one apart.
// Loops count to those counts, or to a uniform. Every mode's sums go through the one
// add_partials call below, in a loop over this invocation's jobs (one in modes 0 and 2): a
// driver compiles the VM's interpreter once for every place that reaches it.
@compute @workgroup_size(WORKGROUP_SIZE)
fn msm_combine_chunks(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    vm_consts = ap.consts;
    let tree = ap.level_mode == 1u;
    let acc = ap.acc_regs;
    var n = 0u;
    loop {
        var job = CombineJob();
        if (tree) {
            job = tree_job(n, gid.x, wid.y, nwg);
        } else if (n == 0u) {
            job = sum_job(gid.x + gid.y * ap.row_stride);
        }
        if (job.state == JOB_DONE) {
            break;
        }
        if (job.state == JOB_ADD) {
            add_partials(job.slot, job.q, job.m, job.stride);
            if (tree) {
                let at = chunk_offsets[job.slot] + job.q * job.stride;
                for (var r = 0u; r < acc; r++) {
                    store_partial((at * acc + r) * FE_PACKED, regs[r]);
                }
            } else {
                for (var r = 0u; r < acc; r++) {
                    store_sum((job.slot * acc + r) * FE_PACKED, regs[r]);
                }
            }
        }
        continuing {
            n = n + 1u;
        }
    }
}

// Modes 0 and 2: the job of invocation j, the sum of its bucket's partials (a bucket of one
// partial is copied here, and skipped).
fn sum_job(j: u32) -> CombineJob {
    var stride = ap.stride;
    var slot = j;
    if (ap.level_mode == 0u) {
        if (j >= ap.windows * ap.buckets) {
            return CombineJob();
        }
    } else {
        let large = combine_list[2];
        if (j >= combine_list[0] + large) {
            return CombineJob();
        }
        if (j < large) {
            slot = combine_list[COMBINE_LIST_HEADER + j];
        } else {
            slot = combine_list[COMBINE_LIST_HEADER + ap.windows * ap.buckets - 1u - (j - large)];
        }
        // The tree levels that ran (msm_combine_args): stride group^l while some bucket has
        // more than group^(l + 1) chunks; none for a bucket of at most `group`.
        let most = combine_list[1];
        stride = 1u;
        while (j < large && stride < ap.stride && most > stride * ap.group) {
            stride = stride * ap.group;
        }
    }
    let m = (chunk_counts[slot] + stride - 1u) / stride;
    if (m == 1u) {
        let first = chunk_offsets[slot];
        let acc = ap.acc_regs;
        for (var r = 0u; r < acc; r++) {
            store_sum((slot * acc + r) * FE_PACKED, load_partial((first * acc + r) * FE_PACKED));
        }
        return CombineJob(JOB_SKIP, 0u, 0u, 0u, 0u);
    }
    return CombineJob(JOB_ADD, slot, 0u, m, stride);
}

// Mode 1: the n-th (bucket, group) pair of the invocation at x of row y of a grid of `nwg`
// workgroups, one level of the chunk tree: the pairs numbered as one index where they fit
// (level_is_linear, as msm_combine_args sized the grid), else buckets over rows and groups
// over x. Group k of the i-th listed bucket of more than `group` chunks sums its `group`
// partials stride apart from k x group on (nothing where one or none is left).
fn tree_job(n: u32, x: u32, y: u32, nwg: vec3<u32>) -> CombineJob {
    let large = combine_list[2];
    let per = ((combine_list[1] + ap.stride - 1u) / ap.stride + ap.group - 1u) / ap.group;
    let row = nwg.x * WORKGROUP_SIZE;
    var i: u32;
    var k: u32;
    if (level_is_linear(large, per)) {
        let w = x + y * row + n * (row * nwg.y);
        if (w >= large * per) {
            return CombineJob();
        }
        i = w / per;
        k = w % per;
    } else {
        if (x >= per) {
            return CombineJob();
        }
        let groups = (per - x + row - 1u) / row;
        i = y + (n / groups) * nwg.y;
        if (i >= large) {
            return CombineJob();
        }
        k = x + (n % groups) * row;
    }
    let slot = combine_list[COMBINE_LIST_HEADER + i];
    let left = (chunk_counts[slot] + ap.stride - 1u) / ap.stride;
    let q = k * ap.group;
    if (q + 1u >= left) {
        return CombineJob(JOB_SKIP, 0u, 0u, 0u, 0u);
    }
    return CombineJob(JOB_ADD, slot, q, min(ap.group, left - q), ap.stride);
}

// The sum of `m` partials of `slot`'s chunks, `stride` apart from the q-th, into regs[0..acc).
fn add_partials(slot: u32, q: u32, m: u32, stride: u32) {
    let first = chunk_offsets[slot];
    let acc = ap.acc_regs;
    // Step 0: identity; step k > 0: acc += partial q + k - 1.
    for (var k = 0u; k <= m; k++) {
        var entry_pc = ap.entry_identity;
        if (k > 0u) {
            entry_pc = ap.entry_add;
            let at = first + (q + k - 1u) * stride;
            for (var r = 0u; r < acc; r++) {
                regs[acc + r] = load_partial((at * acc + r) * FE_PACKED);
            }
        }
        vm_run(entry_pc);
    }
}

// Bucket reduction: one invocation per segment t of `seg_len` consecutive buckets
// lo..hi - 1 of a window, lo = 1 + t seg_len. With running sums from the top bucket down it
// computes the plain sum R_t = sum_b B_b and the local weighted sum
// S_t = sum_b (b - lo + 1) B_b, so that the segment's share of the window's sum_b b B_b is
// S_t + t seg_len R_t. The offsets are not multiplied out here (a double-and-add per segment
// was a third of the work and of the serial chain): the invocation writes S_t into row 0 of
// its window's block, and R_t into row i + 1 for every set bit i of t, at t's index among the
// segments with that bit set. The window's sum is then
// sum row 0 + seg_len sum_i 2^i (sum row i + 1): msm_combine_chunks sums every row in a few
// tree levels and the host weighs the rows (docs/msm.md).
// Loops count to uniforms.

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
    // Segments per window (a power of two), and buckets per segment.
    segments: u32,
    seg_len: u32,
    // log2(segments): rows 1..=bits of a window's block hold segments / 2 sums each.
    bits: u32,
    // Points per window's block: segments (1 + bits / 2).
    block: u32,
    _pad: u32,
}

@group(0) @binding(7) var<uniform> rp: ReduceParams;
@group(0) @binding(8) var<storage, read_write> seg_out: array<u32>;

var<private> run_acc: array<PackedFe, 8>;
var<private> sum_acc: array<PackedFe, 8>;

fn load_sum(offset: u32) -> PackedFe {
    var w: PackedFe;
    for (var j = 0u; j < FE_PACKED; j++) {
        w[j] = bucket_sums[offset + j];
    }
    return w;
}

fn store_seg(offset: u32, x: PackedFe) {
    for (var j = 0u; j < FE_PACKED; j++) {
        seg_out[offset + j] = x[j];
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
    // Step 0: R and S start at the identity. Odd step 2i+1: R += B_b for the i-th bucket from
    // the top; even step 2i+2: S += R. One vm_run call site.
    let runs = 2u * (hi - lo);
    for (var k = 0u; k <= runs; k++) {
        var entry_pc = rp.entry_identity;
        // Where the result goes: 0 both sums (step 0), 1 R, 2 S.
        var dest = 0u;
        if (k > 0u) {
            entry_pc = rp.entry_add;
            if ((k & 1u) == 1u) {
                dest = 1u;
                let b = hi - 1u - (k - 1u) / 2u;
                let slot = w * rp.buckets + b;
                for (var r = 0u; r < acc; r++) {
                    regs[r] = run_acc[r];
                }
                // A bucket of one chunk: its sum is that chunk's partial (not copied).
                if (chunk_counts[slot] == 1u) {
                    let base = chunk_offsets[slot] * acc;
                    for (var r = 0u; r < acc; r++) {
                        regs[acc + r] = load_partial((base + r) * FE_PACKED);
                    }
                } else {
                    for (var r = 0u; r < acc; r++) {
                        regs[acc + r] = load_sum(((slot * acc) + r) * FE_PACKED);
                    }
                }
            } else {
                dest = 2u;
                for (var r = 0u; r < acc; r++) {
                    regs[r] = sum_acc[r];
                    regs[acc + r] = run_acc[r];
                }
            }
        }
        vm_run(entry_pc);
        for (var r = 0u; r < acc; r++) {
            if (dest != 2u) {
                run_acc[r] = regs[r];
            }
            if (dest != 1u) {
                sum_acc[r] = regs[r];
            }
        }
    }
    let block = w * rp.block;
    for (var r = 0u; r < acc; r++) {
        store_seg(((block + t) * acc + r) * FE_PACKED, sum_acc[r]);
    }
    let half = rp.segments / 2u;
    for (var i = 0u; i < rp.bits; i++) {
        if (((t >> i) & 1u) == 1u) {
            // t without bit i: its index among the segments whose bit i is set.
            let index = ((t >> (i + 1u)) << i) | (t & ((1u << i) - 1u));
            let at = block + rp.segments + i * half + index;
            for (var r = 0u; r < acc; r++) {
                store_seg((at * acc + r) * FE_PACKED, run_acc[r]);
            }
        }
    }
}

// Window multiples of prepared bases (docs/msm.md, "Folded bases"): for every point P of a
// set, stored at fold level 0, level f = 1..folds-1 gets 2^(f d) P in affine form, where
// d = c x (bucket windows per set): `d` doublings per level on the VM, then `to_affine` (one
// Fermat inversion). A scalar's digit window f W' + w then adds level f's point into bucket
// window w, so an MSM has W' = ceil(W / folds) bucket windows to reduce instead of W.
// One invocation per point of every set; loops count to uniforms (at most 2 + 256 + folds
// VM runs).

struct FoldParams {
    // Points per (set, level) run in the buffer, and invocations (sets x points).
    stride: u32,
    count: u32,
    row_stride: u32,
    consts: u32,
    // Levels stored per set (level 0 is the point itself) and doublings between levels.
    folds: u32,
    doublings: u32,
    entry_identity: u32,
    entry_madd: u32,
    entry_dbl: u32,
    entry_to_affine: u32,
    // Registers of an accumulator (an affine point's AFFINE_REGS follow it).
    acc_regs: u32,
}

@group(0) @binding(13) var<storage, read_write> fold_bases: array<u32>;
@group(0) @binding(14) var<uniform> fp: FoldParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn msm_fold_bases(@builtin(global_invocation_id) gid: vec3<u32>) {
    let j = gid.x + gid.y * fp.row_stride;
    if (j >= fp.count) {
        return;
    }
    let bset = j / fp.stride;
    let i = j % fp.stride;
    vm_consts = fp.consts;
    let aff = AFFINE_REGS;
    let per_level = fp.doublings + 1u;
    // Step 0: identity; 1: + P (level 0); then per level `doublings` doublings and one
    // to_affine, whose slots 4-5 are stored. One vm_run call site.
    let steps = 2u + (fp.folds - 1u) * per_level;
    for (var s = 0u; s < steps; s++) {
        var entry_pc = fp.entry_dbl;
        let last_of_level = s > 1u && (s - 1u) % per_level == 0u;
        if (s == 0u) {
            entry_pc = fp.entry_identity;
        } else if (s == 1u) {
            let at = (bset * fp.folds * fp.stride + i) * aff;
            for (var r = 0u; r < aff; r++) {
                for (var k = 0u; k < FE_PACKED; k++) {
                    regs[fp.acc_regs + r][k] = fold_bases[(at + r) * FE_PACKED + k];
                }
            }
            entry_pc = fp.entry_madd;
        } else if (last_of_level) {
            entry_pc = fp.entry_to_affine;
        }
        vm_run(entry_pc);
        if (last_of_level) {
            let level = (s - 1u) / per_level;
            let at = ((bset * fp.folds + level) * fp.stride + i) * aff;
            for (var r = 0u; r < aff; r++) {
                for (var k = 0u; k < FE_PACKED; k++) {
                    fold_bases[(at + r) * FE_PACKED + k] = regs[fp.acc_regs + r][k];
                }
            }
        }
    }
}
