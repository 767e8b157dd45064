// MSM bucket assignment, all on the GPU (docs/msm.md):
//   msm_digits   one invocation per scalar: signed c-bit window digits (|d| <= 2^(c-1)),
//                and a histogram of bucket sizes per window (atomics);
//   msm_scan_blocks  one workgroup per block of 2048 buckets of a window: the block's total;
//   msm_scan     one workgroup per block: exclusive prefix sums of the histogram (the totals of
//                the window's earlier blocks, then a workgroup scan), giving each bucket's
//                first slot in `entries` (window w's slots start at w * n);
//   msm_scatter  one invocation per digit: writes point index | sign << 31 into its bucket at
//                the digit's rank (in every base set: below);
//   msm_bucket_sizes  one invocation per bucket of every set's windows: its size;
//   msm_chunk_counts  one invocation per bucket: how many chunks of at most `chunk` entries
//                the bucket splits into (load balancing; msm_scan then gives chunk offsets),
//                a histogram of chunk sizes (largest first), the list of buckets whose sum
//                is not their one chunk's, and the most chunks of a bucket;
//   msm_combine_args  one invocation: the indirect dispatch sizes of the chunk sums from
//                that list and that maximum (tree levels no bucket needs get no workgroups);
//   msm_chunk_order   one invocation per bucket: lists its chunks as (bucket + 1, chunk index,
//                entries) triples sorted by size, largest first (a counting sort over the histogram's
//                prefix sums), so that the lanes of a warp accumulate chunks of about equal
//                length.
// A counting sort: buckets end up as contiguous runs of `entries` (CSR), in no fixed order
// inside a bucket.
// Base sets: `sets` MSMs with the same scalars over different bases (Groth16's A, B in G1 and
// L), stored one after another `set_stride` points apart. Digits and their histogram are
// computed once; set k's window w is bucket window k * windows + w, whose histogram msm_scan
// reads from window w, and whose entries point at k * set_stride + i. Every later stage sees
// sets * windows windows. Folded bases (window multiples stored as extra levels per set) map
// digit window w to bucket window w mod fold_windows and level w / fold_windows instead.
// Scalars are canonical integers below 2^256, 8 little-endian u32 words each.
// Every loop counts up to a uniform or a constant. Composed after msm_digits.wgsl (the
// parameters, the scalar bindings and the digits themselves).

const SCAN_THREADS: u32 = 256u;

@group(0) @binding(3) var<storage, read_write> offsets: array<u32>;
@group(0) @binding(4) var<storage, read_write> entries: array<u32>;
// The chunk-size histogram (msm_chunk_counts), or the cursors of its bins (msm_chunk_order).
@group(0) @binding(6) var<storage, read_write> chunk_bins: array<atomic<u32>>;
// Buckets of zero or several chunks, whose sums msm_combine_chunks writes (a one-chunk
// bucket's sum is its chunk's, read in place by the reduction): the header
// (msm_layout.wgsl's COMBINE_LIST_HEADER words), then their slots, in no fixed order within
// each part: those of more than `chunk_group` chunks from the first slot on, the others from
// the last slot backwards.
@group(0) @binding(8) var<storage, read_write> combine_list: array<atomic<u32>>;

// Digits of canonical scalars (msm_digits.wgsl's scalar_digits).
@compute @workgroup_size(WORKGROUP_SIZE)
fn msm_digits(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * bp.row_stride;
    if (i >= bp.n) {
        return;
    }
    var x: array<u32, 8>;
    for (var k = 0u; k < 8u; k++) {
        x[k] = scalars[i * 8u + k];
    }
    scalar_digits(i, x);
}

var<workgroup> partial: array<u32, SCAN_THREADS>;

// The scans split each window's buckets into blocks of SCAN_BLOCK, one workgroup each (a
// window of 2^19 buckets is 256 workgroups; one workgroup per window took 3 ms there, its
// threads' serial loops being latency-bound).
const SCAN_PER: u32 = 8u;
const SCAN_BLOCK: u32 = SCAN_THREADS * SCAN_PER;
// Block totals, window-major: msm_scan_blocks writes them, msm_scan reads them.
@group(0) @binding(7) var<storage, read_write> block_sums: array<u32>;

fn scan_blocks() -> u32 {
    return (bp.buckets + SCAN_BLOCK - 1u) / SCAN_BLOCK;
}

// Adds up partial[0..SCAN_THREADS) into partial[0] (all invocations call it).
fn workgroup_total(t: u32) {
    for (var s = SCAN_THREADS / 2u; s > 0u; s = s / 2u) {
        workgroupBarrier();
        if (t < s) {
            partial[t] += partial[t + s];
        }
    }
    workgroupBarrier();
}

// Workgroup (x, y): block x of window y (a grid of blocks x windows); windows from
// set_windows on return: they share the histogram of window y mod set_windows.
@compute @workgroup_size(SCAN_THREADS)
fn msm_scan_blocks(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let blocks = scan_blocks();
    let src = wid.y;
    if (src >= bp.set_windows) {
        return;
    }
    let g = src * blocks + wid.x;
    let first = wid.x * SCAN_BLOCK;
    let t = lid.x;
    var sum = 0u;
    for (var i = 0u; i < SCAN_PER; i++) {
        let b = first + i * SCAN_THREADS + t;
        if (b < bp.buckets) {
            sum += atomicLoad(&counts[src * bp.buckets + b]);
        }
    }
    partial[t] = sum;
    workgroup_total(t);
    if (t == 0u) {
        block_sums[g] = partial[0];
    }
}

// Workgroup (x, y): block x of window y, sets x set_windows windows: window w's histogram is
// that of window w mod set_windows (the base sets share digits).
@compute @workgroup_size(SCAN_THREADS)
fn msm_scan(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let blocks = scan_blocks();
    let w = wid.y;
    let blk = wid.x;
    let src = w % bp.set_windows;
    let t = lid.x;
    // The window's earlier blocks.
    var before = 0u;
    for (var j = t; j < blk; j += SCAN_THREADS) {
        before += block_sums[src * blocks + j];
    }
    partial[t] = before;
    workgroup_total(t);
    let base = w * bp.n * bp.load + partial[0];
    workgroupBarrier();
    // Thread t's SCAN_PER consecutive buckets, after the exclusive scan of the threads' sums.
    let lo = min(blk * SCAN_BLOCK + t * SCAN_PER, bp.buckets);
    let hi = min(lo + SCAN_PER, bp.buckets);
    var sum = 0u;
    for (var b = lo; b < hi; b++) {
        sum += atomicLoad(&counts[src * bp.buckets + b]);
    }
    partial[t] = sum;
    // Hillis-Steele inclusive scan.
    for (var s = 1u; s < SCAN_THREADS; s = s * 2u) {
        workgroupBarrier();
        var v = 0u;
        if (t >= s) {
            v = partial[t - s];
        }
        workgroupBarrier();
        partial[t] += v;
    }
    workgroupBarrier();
    var run = base + partial[t] - sum;
    for (var b = lo; b < hi; b++) {
        offsets[w * bp.buckets + b] = run;
        run += atomicLoad(&counts[src * bp.buckets + b]);
    }
}

// Binding 2 here is a second, zeroed buffer of the same shape as the histogram: the fill
// cursors of ranks from rank_cap() on (a bucket of that many digits of one window); below
// it, a digit's rank is its slot in the bucket.
@compute @workgroup_size(WORKGROUP_SIZE)
fn msm_scatter(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    // One invocation per digit (window-major, as the digits are stored): no invocation waits
    // on one atomic's result before the next window's. Its grid is not the scalars' grid, so
    // the row stride comes from the grid itself.
    let j = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (j >= bp.n * bp.windows) {
        return;
    }
    let w = j / bp.n;
    let i = j % bp.n;
    let dig = digits[j];
    let d = (dig >> 1u) & ((1u << bp.c) - 1u);
    if (d != 0u) {
        let rank = dig >> (bp.c + 1u);
        let bw = w % bp.fold_windows;
        let level = w / bp.fold_windows;
        for (var k = 0u; k < bp.sets; k++) {
            let slot = (k * bp.set_windows + bw) * bp.buckets + d;
            var at = rank;
            if (rank == rank_cap()) {
                at = rank + atomicAdd(&counts[slot], 1u);
            }
            entries[offsets[slot] + at] = point_ref(k, level, i) | ((dig & 1u) << 31u);
        }
    }
}

// The point that scalar i's digit of fold level `level` adds in set k: in its set's run of
// that level, or, for an MSM over two parts (hi_base not 0), in the second part's run from
// point hi_base on.
fn point_ref(k: u32, level: u32, i: u32) -> u32 {
    if (bp.hi_base == 0u || i < bp.split) {
        return (k * bp.folds + level) * bp.set_stride + i;
    }
    return bp.hi_base + level * bp.hi_stride + (i - bp.split);
}

// One invocation per bucket of every window of every set (binding 2 the histogram, binding
// 3 the sizes): each bucket's size, from the histogram of its digit window (window w's is
// that of w mod set_windows), for the chunk kernels and the accumulation.
@compute @workgroup_size(WORKGROUP_SIZE)
fn msm_bucket_sizes(@builtin(global_invocation_id) gid: vec3<u32>) {
    let slot = gid.x + gid.y * bp.row_stride;
    if (slot >= bp.windows * bp.buckets) {
        return;
    }
    offsets[slot] = atomicLoad(&counts[slot % (bp.set_windows * bp.buckets)]);
}

// Histogram bin of a chunk of `size` entries: the largest chunks get bin 0.
fn chunk_key(size: u32) -> u32 {
    return (bp.chunk - size) / bp.key_div;
}

// A bucket's full chunks, the size of its last, partial chunk (0 if none), and its chunk
// length: `large_chunk` for a bucket of more than `large_at` entries, else `chunk`.
fn chunk_split(slot: u32) -> vec3<u32> {
    let size = atomicLoad(&counts[slot]);
    let len = select(bp.chunk, bp.large_chunk, size > bp.large_at);
    return vec3<u32>(size / len, size % len, len);
}

var<workgroup> wg_listed: atomic<u32>;
var<workgroup> wg_large: atomic<u32>;
var<workgroup> wg_most: atomic<u32>;
var<workgroup> wg_base: u32;
var<workgroup> wg_large_base: u32;

// Binding 2 holds the bucket sizes (msm_bucket_sizes), binding 3 the
// chunk counts, binding 6 the chunk-size histogram, binding 8 the combine list: [0] the
// listed buckets of zero or 2..=chunk_group chunks, [1] the most chunks of a bucket, [2] the
// listed buckets of more chunks, then the list (those of more chunks from its first slot,
// the others from its last backwards); its header zeroed. The counts, the list and the
// maximum are gathered per workgroup first, so the global atomics are one per workgroup.
@compute @workgroup_size(WORKGROUP_SIZE)
fn msm_chunk_counts(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let slot = gid.x + gid.y * bp.row_stride;
    var chunks = 0u;
    var listed = false;
    var large = false;
    var at = 0u;
    if (slot < bp.windows * bp.buckets) {
        let split = chunk_split(slot);
        let full = split.x;
        let rest = split.y;
        chunks = full + select(0u, 1u, rest != 0u);
        offsets[slot] = chunks;
        if (full != 0u) {
            atomicAdd(&chunk_bins[chunk_key(split.z)], full);
        }
        if (rest != 0u) {
            atomicAdd(&chunk_bins[chunk_key(rest)], 1u);
        }
        listed = chunks != 1u;
        large = chunks > bp.chunk_group;
        if (large) {
            at = atomicAdd(&wg_large, 1u);
        } else if (listed) {
            at = atomicAdd(&wg_listed, 1u);
        }
        atomicMax(&wg_most, chunks);
    }
    workgroupBarrier();
    if (lid == 0u) {
        let k = atomicLoad(&wg_listed);
        if (k != 0u) {
            wg_base = atomicAdd(&combine_list[0], k);
        }
        let kl = atomicLoad(&wg_large);
        if (kl != 0u) {
            wg_large_base = atomicAdd(&combine_list[2], kl);
        }
        atomicMax(&combine_list[1], atomicLoad(&wg_most));
    }
    workgroupBarrier();
    if (large) {
        atomicStore(&combine_list[COMBINE_LIST_HEADER + wg_large_base + at], slot);
    } else if (listed) {
        let last = COMBINE_LIST_HEADER + bp.windows * bp.buckets - 1u;
        atomicStore(&combine_list[last - wg_base - at], slot);
    }
}

struct ArgsParams {
    // Most workgroups in x of every dispatch written here (their kernels' row stride is this
    // times WORKGROUP_SIZE).
    x_max: u32,
    // Tree levels over large buckets' chunks, and the chunk sums one invocation adds per level.
    levels: u32,
    group: u32,
    // Most workgroups in y of a tree level's dispatch (the device's limit per dimension).
    y_max: u32,
}

@group(0) @binding(9) var<storage, read_write> dispatch_args: array<u32>;
@group(0) @binding(10) var<uniform> gp: ArgsParams;

// Indirect dispatch sizes (x, y, 1): [0..3) one invocation per listed bucket; then per tree
// level l (partials group^l apart), where some bucket has more than group^(l + 1) chunks (the
// last pass would otherwise add more than `group` partials of it), one invocation per
// (bucket, group) pair of the buckets of more than `group` chunks (per = ceil(ceil(most /
// group^l) / group) groups a bucket), numbered as one index where it fits
// (msm_layout.wgsl's level_is_linear; else x over groups, y over buckets), at most
// MAX_LEVEL_THREADS invocations (the kernel loops over the rest); else no workgroups. The levels that run are a prefix, and the last
// pass finds their stride from the same maximum. Loops count to a uniform.
@compute @workgroup_size(1)
fn msm_combine_args() {
    let large = atomicLoad(&combine_list[2]);
    let listed = atomicLoad(&combine_list[0]) + large;
    let most = atomicLoad(&combine_list[1]);
    let groups = (listed + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
    dispatch_args[0] = min(groups, gp.x_max);
    dispatch_args[1] = (groups + gp.x_max - 1u) / gp.x_max;
    dispatch_args[2] = 1u;
    var stride = 1u;
    for (var l = 0u; l < gp.levels; l++) {
        let run = most > stride * gp.group;
        let per = ((most + stride - 1u) / stride + gp.group - 1u) / gp.group;
        var x = 1u;
        var y = 1u;
        if (level_is_linear(large, per)) {
            // One invocation per (bucket, group) pair, at most MAX_LEVEL_THREADS.
            let work = large * per;
            let groups = min(work / WORKGROUP_SIZE + 1u, MAX_LEVEL_THREADS / WORKGROUP_SIZE);
            x = min(groups, gp.x_max);
            y = min((groups + x - 1u) / x, gp.y_max);
        } else {
            x = max(1u, min((per + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE, gp.x_max));
            y = min(min(large, gp.y_max), max(1u, MAX_LEVEL_THREADS / (x * WORKGROUP_SIZE)));
        }
        dispatch_args[DISPATCH_WORDS * (l + 1u)] = select(0u, x, run);
        dispatch_args[DISPATCH_WORDS * (l + 1u) + 1u] = select(0u, y, run);
        dispatch_args[DISPATCH_WORDS * (l + 1u) + 2u] = 1u;
        stride = stride * gp.group;
    }
}

// Binding 2 holds the bucket sizes, binding 3 the histogram's exclusive prefix sums (the
// first position of each bin), binding 6 zeroed bin cursors, binding 4 the output: chunk
// positions as (slot + 1, chunk index, entries + (the bucket's chunk length << 16)) triples
// (chunk_word), so that the accumulation needs no binding of the bucket sizes; unused
// positions stay (0, 0, 0). A bucket's full chunks come first, in one block of their bin.
@compute @workgroup_size(WORKGROUP_SIZE)
fn msm_chunk_order(@builtin(global_invocation_id) gid: vec3<u32>) {
    let slot = gid.x + gid.y * bp.row_stride;
    if (slot >= bp.windows * bp.buckets) {
        return;
    }
    let split = chunk_split(slot);
    let full = split.x;
    let rest = split.y;
    let len = split.z;
    if (full != 0u) {
        let key = chunk_key(len);
        let first = offsets[key] + atomicAdd(&chunk_bins[key], full);
        for (var q = 0u; q < full; q++) {
            entries[CHUNK_ORDER_WORDS * (first + q)] = slot + 1u;
            entries[CHUNK_ORDER_WORDS * (first + q) + 1u] = q;
            entries[CHUNK_ORDER_WORDS * (first + q) + 2u] = chunk_word(len, len);
        }
    }
    if (rest != 0u) {
        let key = chunk_key(rest);
        let at = offsets[key] + atomicAdd(&chunk_bins[key], 1u);
        entries[CHUNK_ORDER_WORDS * at] = slot + 1u;
        entries[CHUNK_ORDER_WORDS * at + 1u] = full;
        entries[CHUNK_ORDER_WORDS * at + 2u] = chunk_word(rest, len);
    }
}
