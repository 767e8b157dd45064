//! Tuning defaults of an MSM: the configuration a caller may set, and how each field's
//! default follows from the input size.

use ark_ff::PrimeField;
use zkgpu_curves::GpuCurve;

use crate::{MAX_FOLDS, window_count};

/// Tuning knobs of one MSM. Every field defaults to a choice made from the input size.
#[derive(Clone, Copy, Debug, Default)]
pub struct MsmConfig {
    /// Window width `c` in bits, 2..=[`MAX_WINDOW_BITS`] (default: from `n` and the group,
    /// see [`default_unfolded_window_bits`], or the folded bases' width).
    pub window_bits: Option<u32>,
    /// Segments per window of the GPU bucket reduction, a power of two up to the window's
    /// `2^(c-1)` buckets (default: [`default_reduce_segments`]). One invocation per segment
    /// weights its buckets; the GPU then sums each window's segments in a tree.
    pub reduce_segments: Option<u32>,
    /// Most entries one invocation adds during bucket accumulation; larger buckets are split
    /// into chunks summed in parallel (default: from `n`, see [`default_chunk`]).
    pub chunk: Option<u32>,
    /// Entries per chunk of a large bucket, one of more than `chunk x chunk_group` entries
    /// and eight times a window's mean bucket (repeated scalars: constant columns, 0/1
    /// witnesses), 1..=`chunk` (default:
    /// [`default_large_chunk`]). Shorter chains there put more invocations on the bucket.
    pub large_chunk: Option<u32>,
    /// Every scalar is below `2^scalar_bits` (default: the scalar field's bit size). Fewer
    /// bits mean fewer windows: small-scalar MSMs, and the half-width scalars of a GLV
    /// decomposition. Checked on the host as the scalars are converted: a wider scalar gives
    /// [`crate::MsmError::ScalarTooWide`], never a wrong sum.
    pub scalar_bits: Option<u32>,
    /// Segment sums one invocation adds per level of the tree that sums a window's reduction
    /// segments, 2..=1024 (default [`DEFAULT_TREE_GROUP`]). Smaller groups mean shorter
    /// serial chains and more levels.
    pub tree_group: Option<u32>,
    /// Chunk sums one invocation adds per level of the tree over a large bucket's chunks,
    /// 2..=1024 (default: [`DEFAULT_CHUNK_GROUP`]).
    pub chunk_group: Option<u32>,
    /// Reduction sums left to the host per part, at most (default: from the group, 1024 or
    /// 128; docs/msm.md): to weigh another tree level against the host's additions.
    pub host_sums: Option<u32>,
    /// Convert scalars from Montgomery form on the host even where the GPU would (default
    /// false): to compare the two paths in one run.
    pub host_scalars: bool,
    /// Run two parts of one set's bases part by part even where the device runs them as one
    /// MSM (default false): to compare the two paths in one run.
    pub part_by_part: bool,
    /// Record each stage of an untimed MSM in its own compute pass, as timed ones are
    /// (default false): to compare the two recordings.
    pub separate_passes: bool,
}

impl MsmConfig {
    /// The default configuration with the developer switches of the environment, read by
    /// tools (the `zkgpu` CLI), never by the library: `ZKGPU_MSM_HOST_SUMS=N`,
    /// `ZKGPU_MSM_HOST_SCALARS=1`, `ZKGPU_MSM_PART_BY_PART=1`, `ZKGPU_MSM_SEPARATE_PASSES=1`.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn from_env() -> Self {
        let on = |name: &str| std::env::var(name).is_ok_and(|v| v == "1");
        Self {
            host_sums: std::env::var("ZKGPU_MSM_HOST_SUMS")
                .ok()
                .and_then(|v| v.parse().ok()),
            host_scalars: on("ZKGPU_MSM_HOST_SCALARS"),
            part_by_part: on("ZKGPU_MSM_PART_BY_PART"),
            separate_passes: on("ZKGPU_MSM_SEPARATE_PASSES"),
            ..Self::default()
        }
    }
}

/// The default accumulation chunk for `n` points, windows of `c` bits and `entries` entries
/// in all bucket windows: four times the mean bucket size `n / 2^(c-1)`, at least
/// `entries / 2^18` within 16..=48, and at most [`MAX_DEFAULT_CHUNK`] (folded bases put
/// `n x levels` entries in a window). Short chunks bound the longest serial chain (the top
/// window of uniform scalars has few, large buckets; 0/1 witnesses put most points in one
/// bucket), and the chunks of a large bucket are summed by a tree. The floor keeps about
/// 2^18 invocations busy where the entries allow it, and no more (measured:
/// docs/PERFORMANCE.md, "Where the MSM's defaults come from").
pub fn default_chunk(n: usize, c: u32, entries: u64) -> u32 {
    let mean = n.div_ceil(1 << (c - 1));
    let floor = (entries >> 18).clamp(16, 48) as u32;
    u32::try_from(4 * mean)
        .unwrap_or(u32::MAX)
        .clamp(floor, MAX_DEFAULT_CHUNK)
}

/// The default [`MsmConfig::large_chunk`] for accumulation chunks of `chunk` entries in a
/// group of extension degree `degree`: `chunk / (2 degree)`, at least 16 (and at most
/// `chunk`). A bucket holding most of a window's points is then summed by 2-4 times as many
/// invocations as by chunks of the mean bucket size's four times; the tree over its chunk
/// sums grows by as much. Measured on the H100 (f64, 2^20 points, plain bases, all scalars
/// equal; docs/log/2026-11-28-first-calls.md): BLS12-381 G2 GPU total 63.3 ms with chunks of
/// 128, 57.7 with 64, 54.9 with 32 (uniform: 52.8); G1 14.03 / 13.96 / 14.65 (uniform 13.2).
pub fn default_large_chunk(chunk: u32, degree: usize) -> u32 {
    (chunk / (2 * degree.max(1) as u32)).max(16).min(chunk)
}

/// The longest accumulation chunk [`MsmConfig::chunk`] accepts: the chunk order keeps a
/// chunk's entries and its bucket's chunk length in 16 bits each.
pub const MAX_CHUNK: u32 = 0xffff;

/// The longest default accumulation chunk. One invocation runs one VM program per entry
/// (128 instructions for a BLS12-377 G2 `madd`, counted by `Program::run_cpu`, plus about 50
/// loop iterations of loads), and lavapipe returns wrong results past 65,535 loop iterations
/// per invocation (docs/gpu.md): 192 entries stay near 35,000. Longer chunks would only
/// lengthen the serial chain on a real GPU.
pub const MAX_DEFAULT_CHUNK: u32 = 192;

/// The widest window [`MsmConfig::window_bits`] accepts. The digit kernel reads a window from
/// at most two 32-bit words of the scalar (any width up to 32 would do); a window of `c` bits
/// has `2^(c-1)` buckets, so 22 bits already mean 2^21 bucket sums per window.
pub const MAX_WINDOW_BITS: u32 = 22;

/// The default number of reduction segments per window of `per_window` buckets, `windows`
/// windows: about 16,384 segments in all (a power of two per window), but at most 32 buckets
/// per segment (wide windows over several bucket windows: 2^24 points at c = 20 over two fold
/// levels), and at least 4 where the window has that many. (The MSM asks G2 groups for twice as many,
/// as if they had half the windows.) The reduction is latency-bound: each
/// invocation's chain of running sums is serial, so the segment count is its parallelism.
/// Every segment also adds about `1 + log2(segments) / 2` sums to the tree after it, so
/// segments of 1-2 buckets cost more tree levels than they save (measured:
/// docs/PERFORMANCE.md, "Where the MSM's defaults come from").
pub fn default_reduce_segments(per_window: u32, windows: u32) -> u32 {
    let target = (16_384 / windows.max(1)).max(per_window / 32).max(1);
    let floor = |x: u32| 1u32 << (31 - x.max(1).leading_zeros());
    // per_window >= 2 (c >= 2), so the quarter's floor (at least 1) is within it.
    floor(target).min(floor(per_window / 4))
}

/// The default window width for `n` points: about `ln n`, as arkworks chooses, within 2..=16,
/// from `ceil(log2 n) + 1`, so that sizes just below a power of two (a Groth16 H query has
/// `2^k - 1` points) get the window of the power of two (docs/log/2026-11.md).
pub fn default_window_bits(n: usize) -> u32 {
    if n < 32 {
        3
    } else {
        // ln n = log2 n * 0.693
        let ceil_log2 = usize::BITS - (n - 1).leading_zeros();
        ((ceil_log2 + 1) * 69 / 100 + 2).clamp(2, 16)
    }
}

/// The default window width of `n` points of group `C` over bases that are not folded:
/// [`default_window_bits`], except that from [`WIDE_UNFOLDED_MIN`] points of a prime-field
/// group the additions that wider windows save outweigh their larger reduction, and it is
/// [`MAX_FOLDED_DEFAULT_WINDOW`] (narrowed by the MSM's shape where its buffers would not fit
/// one binding). Measured on the H100 for the four prime-field groups at 2^24 points
/// (docs/log/2026-11.md, 2026-11-27).
pub fn default_unfolded_window_bits<C: GpuCurve>(n: usize) -> u32 {
    if n >= WIDE_UNFOLDED_MIN && C::DEGREE == 1 {
        MAX_FOLDED_DEFAULT_WINDOW
    } else {
        default_window_bits(n)
    }
}

/// Points from which bases that are not folded get the wide window
/// ([`default_unfolded_window_bits`]).
pub const WIDE_UNFOLDED_MIN: usize = 1 << 24;

/// The widest default window of folded bases ([`default_folded_window_bits`]).
pub const MAX_FOLDED_DEFAULT_WINDOW: u32 = 20;

/// The default window width of `len` points folded into `folds` levels per set, `sets` sets,
/// when a storage binding holds `max_binding` bytes: about `log2 n` bits (at most
/// [`MAX_FOLDED_DEFAULT_WINDOW`]) when the levels then cover every window, so that all digit
/// windows add into one bucket window, or when there are two levels or more and at least
/// `WIDE_PARTIAL_FOLD_MIN` points (prime-field groups), or levels that leave at most two
/// bucket windows of at least `WIDE_PARTIAL_FOLD_MIN_FQ2` points (the G2 groups); else
/// [`default_window_bits`]. With one bucket window
/// the reduction no longer grows with the window count, and wider windows mean fewer windows,
/// so fewer additions, to accumulate (docs/log/2026-11.md). Narrowed until the bucket sums
/// fit one binding.
pub fn default_folded_window_bits<C: GpuCurve>(
    len: usize,
    folds: u32,
    sets: usize,
    max_binding: u64,
) -> u32 {
    let plain = default_window_bits(len);
    if len < 32 {
        return plain;
    }
    let bits = C::Scalar::MODULUS_BIT_SIZE;
    let ceil_log2 = usize::BITS - (len - 1).leading_zeros();
    let mut c = ceil_log2.clamp(2, MAX_FOLDED_DEFAULT_WINDOW);
    let sums =
        |c: u32| sets.max(1) as u64 * ((1u64 << (c - 1)) + 1) * C::acc_packed_words() as u64 * 4;
    while c > plain && sums(c) > max_binding {
        c -= 1;
    }
    let covered = folds.min(MAX_FOLDS) >= window_count(bits, c);
    // Levels that leave several bucket windows still pay for the wide width from 2^21 points
    // on, where the additions it saves outweigh its larger reduction (BLS12-381 G1 on the
    // H100, docs/log/2026-11.md, 2026-11-26). G2's additions cost three times as much, and so
    // does each bucket window's reduction: the wide width paid at 2^20 points with two bucket
    // windows left, and lost with four (2026-11-27).
    let partial = if C::DEGREE == 1 {
        folds >= 2 && len >= WIDE_PARTIAL_FOLD_MIN
    } else {
        len >= WIDE_PARTIAL_FOLD_MIN_FQ2
            && folds >= 2
            && window_count(bits, c).div_ceil(folds.min(MAX_FOLDS)) <= 2
    };
    if c > plain && (covered || partial) {
        c
    } else {
        plain
    }
}

/// Points from which bases folded into levels that do not cover every window still get the
/// wide folded width ([`default_folded_window_bits`]).
pub const WIDE_PARTIAL_FOLD_MIN: usize = 1 << 21;

/// Points from which G2 bases folded into levels that leave at most two bucket windows get
/// the wide folded width ([`default_folded_window_bits`]).
pub const WIDE_PARTIAL_FOLD_MIN_FQ2: usize = 1 << 20;

/// The default [`MsmConfig::tree_group`]: groups of 4 beat 16 in the reduction of every
/// group measured (docs/log/2026-11.md).
pub const DEFAULT_TREE_GROUP: u32 = 4;

/// The default [`MsmConfig::chunk_group`], every group: a tree level over a large bucket's
/// chunks runs only over the chunks that can start a group, so short chains and more levels
/// win, G1 included (docs/log/2026-11.md, 2026-11-27; before, 16 for G1).
pub const DEFAULT_CHUNK_GROUP: u32 = 4;

/// MSM shapes whose working buffers an engine keeps.
pub const SCRATCH_POOL: usize = 4;
