//! Multi-scalar multiplication on the GPU for the arkworks groups of [`zkgpu_curves`].
//!
//! Pippenger's bucket method with signed `c`-bit window digits. On the GPU: digit
//! decomposition with a bucket-size histogram, a per-window prefix sum and a scatter that sort
//! point indices into buckets (a counting sort), and bucket accumulation with the group's mixed
//! addition on the curve VM. On the host, for now: the weighted bucket sums (running sums) and
//! the combination of windows (Horner). docs/msm.md describes the pipeline.
//!
//! Semantics follow arkworks' `VariableBaseMSM`: [`GpuMsm::msm`] errors when the lengths
//! differ, [`GpuMsm::msm_unchecked`] uses the shorter length, empty input gives the identity.

mod digits;
mod stored;

use ark_ec::AdditiveGroup;
use ark_ff::{PrimeField, Zero};
use rayon::prelude::*;
use zkgpu_curves::{GpuCurve, decode_projective, encode_affine_packed};
use zkgpu_limbs::RawMontgomery;
use zkgpu_runtime::wgpu;
use zkgpu_runtime::{Checks, GpuContext, GpuError, Pipeline, grid};
use zkgpu_shaders::{msm_accumulate, msm_buckets, msm_scalars};

pub use digits::{signed_digits, window_count};
pub use stored::{BasesLayout, StoredFold};

/// Errors of an MSM.
#[derive(Debug, thiserror::Error)]
pub enum MsmError {
    /// `msm` was given different numbers of bases and scalars.
    #[error("{bases} bases but {scalars} scalars (msm_unchecked uses the shorter length)")]
    LengthMismatch {
        /// Bases given.
        bases: usize,
        /// Scalars given.
        scalars: usize,
    },
    /// A configuration value is out of range.
    #[error("invalid MSM configuration: {0}")]
    Config(String),
    /// A scalar is wider than `MsmConfig::scalar_bits` promised.
    #[error("scalar {index} has {bits} bits, more than the configured scalar_bits {limit}")]
    ScalarTooWide {
        /// Index of a scalar that is too wide (the first one found, not necessarily the
        /// lowest index).
        index: usize,
        /// Its bit length.
        bits: u32,
        /// The configured bound.
        limit: u32,
    },
    /// The GPU failed, or the input does not fit on it.
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// `Result` with [`MsmError`].
pub type Result<T, E = MsmError> = std::result::Result<T, E>;

/// Tuning knobs of one MSM. Every field defaults to a choice made from the input size.
#[derive(Clone, Copy, Debug, Default)]
pub struct MsmConfig {
    /// Window width `c` in bits, 2..=[`MAX_WINDOW_BITS`] (default: from `n`, see
    /// [`default_window_bits`]).
    pub window_bits: Option<u32>,
    /// Segments per window of the GPU bucket reduction, a power of two up to the window's
    /// `2^(c-1)` buckets (default: [`default_reduce_segments`]). One invocation per segment
    /// weights its buckets; the GPU then sums each window's segments in a tree.
    pub reduce_segments: Option<u32>,
    /// Most entries one invocation adds during bucket accumulation; larger buckets are split
    /// into chunks summed in parallel (default: from `n`, see [`default_chunk`]).
    pub chunk: Option<u32>,
    /// Every scalar is below `2^scalar_bits` (default: the scalar field's bit size). Fewer
    /// bits mean fewer windows: small-scalar MSMs, and the half-width scalars of a GLV
    /// decomposition. Checked on the host as the scalars are converted: a wider scalar gives
    /// [`MsmError::ScalarTooWide`], never a wrong sum.
    pub scalar_bits: Option<u32>,
    /// Segment sums one invocation adds per level of the tree that sums a window's reduction
    /// segments, 2..=1024 (default [`DEFAULT_TREE_GROUP`]). Smaller groups mean shorter
    /// serial chains and more levels.
    pub tree_group: Option<u32>,
    /// Chunk sums one invocation adds per level of the tree over a large bucket's chunks,
    /// 2..=1024 (default: [`default_chunk_group`]).
    pub chunk_group: Option<u32>,
}

/// The default accumulation chunk for `n` points, windows of `c` bits and `entries` entries
/// in all bucket windows: four times the mean bucket size `n / 2^(c-1)`, at least
/// `entries / 2^18` within 16..=48, and at most [`MAX_DEFAULT_CHUNK`] (folded bases put
/// `n x levels` entries in a window). Short chunks bound the longest serial chain (the top
/// window of uniform scalars has few, large buckets; 0/1 witnesses put most points in one
/// bucket), and the chunks of a large bucket are summed by a tree. The floor keeps about
/// 2^18 invocations busy where the entries allow it, and no more: on the H100 (BLS12-381
/// G1, folded) 2^16 points (2^20 entries, 2^15 buckets) took 4.24 ms of GPU time with
/// chunks of 16 against 4.46-4.49 with 32 (more invocations for few buckets), and 2^20
/// points (13.6M entries, 2^19 buckets) 27.85 ms with 48 against 28.45 with 32 (fewer
/// buckets of several chunks to sum; docs/PERFORMANCE.md).
pub fn default_chunk(n: usize, c: u32, entries: u64) -> u32 {
    let mean = n.div_ceil(1 << (c - 1));
    let floor = (entries >> 18).clamp(16, 48) as u32;
    u32::try_from(4 * mean)
        .unwrap_or(u32::MAX)
        .clamp(floor, MAX_DEFAULT_CHUNK)
}

/// The longest default accumulation chunk. One invocation runs one VM program per entry
/// (128 instructions for a BLS12-377 G2 `madd`, counted by `Program::run_cpu`, plus about 50
/// loop iterations of loads), and lavapipe returns wrong results past 65,535 loop iterations
/// per invocation: 192 entries stay near 35,000 (568, the first folded default, did not). Longer chunks would only lengthen the serial chain on a real GPU.
pub const MAX_DEFAULT_CHUNK: u32 = 192;

/// The widest window [`MsmConfig::window_bits`] accepts. The digit kernel reads a window from
/// at most two 32-bit words of the scalar (any width up to 32 would do); a window of `c` bits
/// has `2^(c-1)` buckets, so 22 bits already mean 2^21 bucket sums per window.
pub const MAX_WINDOW_BITS: u32 = 22;

/// The default number of reduction segments per window of `per_window` buckets, `windows`
/// windows: about 16,384 segments in all (a power of two per window), and at least 4 buckets
/// per segment where the window has that many. The reduction is latency-bound: each
/// invocation's chain of running sums is serial, so the segment count is its parallelism; on
/// the H100 16,384 beat both halving and doubling it at 2^20 points. Every segment also adds
/// about `1 + log2(segments) / 2` sums to the tree after it, so segments of 1-2 buckets cost
/// more tree levels than they save: a window of 2^15 buckets (2^16 points, folded) took
/// 1.19 ms with 8,192 segments against 1.33-1.34 with 16,384 (docs/PERFORMANCE.md).
pub fn default_reduce_segments(per_window: u32, windows: u32) -> u32 {
    let target = (16_384 / windows.max(1)).max(1);
    let floor = |x: u32| 1u32 << (31 - x.max(1).leading_zeros());
    // per_window >= 2 (c >= 2), so the quarter's floor (at least 1) is within it.
    floor(target).min(floor(per_window / 4))
}

/// The default window width for `n` points: about `ln n`, as arkworks chooses, within 2..=16,
/// from `ceil(log2 n) + 1`, so that sizes just below a power of two (a Groth16 H query has
/// `2^k - 1` points) get the window of the power of two: on the H100, 2^20 points take
/// 65.9 ms of GPU time with c = 16 and 127.6 ms with c = 15 (docs/PERFORMANCE.md).
pub fn default_window_bits(n: usize) -> u32 {
    if n < 32 {
        3
    } else {
        // ln n = log2 n * 0.693
        let ceil_log2 = usize::BITS - (n - 1).leading_zeros();
        ((ceil_log2 + 1) * 69 / 100 + 2).clamp(2, 16)
    }
}

/// The widest default window of folded bases ([`default_folded_window_bits`]).
pub const MAX_FOLDED_DEFAULT_WINDOW: u32 = 20;

/// The default window width of `len` points folded into `folds` levels per set, `sets` sets,
/// when a storage binding holds `max_binding` bytes: about `log2 n` bits (at most
/// [`MAX_FOLDED_DEFAULT_WINDOW`]) when the levels then cover every window, so that all digit
/// windows add into one bucket window; else [`default_window_bits`]. With one bucket window
/// the reduction no longer grows with the window count, and wider windows mean fewer windows,
/// so fewer additions, to accumulate: on the H100, BLS12-381 G1 GPU time 31.7 ms with c = 20
/// against 33.3 with c = 16 at 2^20 points (same run), and at 2^16 5.6 ms with c = 16 against
/// 6.7 with c = 14 (same run; 6.5 with the old default c = 13 in an earlier session)
/// (docs/PERFORMANCE.md). Narrowed until the bucket sums fit one binding.
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
    let sums = |c: u32| sets.max(1) as u64 * ((1u64 << (c - 1)) + 1) * C::acc_words() as u64 * 4;
    while c > plain && sums(c) > max_binding {
        c -= 1;
    }
    if c > plain && folds.min(MAX_FOLDS) >= window_count(bits, c) {
        c
    } else {
        plain
    }
}

const WORKGROUP_SIZE: u32 = 64;

/// Bins of the chunk-size histogram that orders chunks for accumulation (at most; one per
/// size when `chunk` is at most this).
const CHUNK_BINS: u32 = 1024;

/// Buckets per workgroup of the scans (`SCAN_BLOCK` in shaders/kernels/msm_buckets.wgsl).
const SCAN_BLOCK: u32 = 2048;

/// Workgroups per window of a scan over `buckets` entries.
fn scan_blocks(buckets: u32) -> u32 {
    buckets.div_ceil(SCAN_BLOCK).max(1)
}

/// Reduction sums that the host adds up per MSM part, at most (all windows' rows together,
/// [`RowLayout`]); the GPU sums longer rows in tree levels first. A level is a few serial
/// additions at low occupancy (about 0.17 ms for G1 and 0.56 ms for G2 on the H100), while
/// the host's time grows with the sums it gets: with 64 per row, three sets of 16 windows
/// left it 18,432 sums and 30 ms (docs/PERFORMANCE.md).
const HOST_SUMS: u32 = 1024;

/// The default [`MsmConfig::tree_group`]: on the H100, groups of 4 beat 16 in the
/// reduction of every group measured (BLS12-381 G1 at 2^16 and 2^20 points, G2 at 2^18:
/// 1.97 / 4.65 / 15.7 ms against 2.38 / 5.1 / 17.1 ms; docs/PERFORMANCE.md).
pub const DEFAULT_TREE_GROUP: u32 = 4;

/// The default [`MsmConfig::chunk_group`] for a group whose base field has degree `degree`
/// over the prime field: 16 for G1 (the sums over 16 chunks are short enough; groups of 4
/// made BLS12-381 G1's chunk sums 0.58 -> 0.64 ms at 2^16 and 2.2 -> 2.9 ms at 2^20 on the
/// H100), 4 over Fq2, whose additions take three times as long (G2 at 2^18: 8.6 -> 5.9 ms).
pub fn default_chunk_group(degree: usize) -> u32 {
    if degree > 1 { 4 } else { 16 }
}

/// MSM shapes whose working buffers an engine keeps.
pub const SCRATCH_POOL: usize = 4;

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct BucketParams {
    n: u32,
    row_stride: u32,
    c: u32,
    windows: u32,
    buckets: u32,
    chunk: u32,
    key_div: u32,
    sets: u32,
    set_stride: u32,
    set_windows: u32,
    fold_windows: u32,
    folds: u32,
    load: u32,
    _pad: [u32; 3],
    /// The scalar field's modulus, little-endian words (`msm_digits` takes scalars within
    /// 2^64 below it as negative, as arkworks' `msm` does).
    modulus: [u32; 8],
}

/// `F`'s modulus as 8 little-endian `u32` words.
fn modulus_words<F: PrimeField>() -> [u32; 8] {
    let mut w = [0u32; 8];
    for (k, limb) in F::MODULUS.as_ref().iter().enumerate().take(4) {
        w[2 * k] = *limb as u32;
        w[2 * k + 1] = (*limb >> 32) as u32;
    }
    w
}

/// `msm_combine_args`' parameters (shaders/kernels/msm_buckets.wgsl).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct ArgsParams {
    x_max: u32,
    levels: u32,
    group: u32,
    full_x: u32,
    full_y: u32,
    _pad: [u32; 3],
}

/// Workgroups in x of the indirect dispatch over the combine list (its row stride is this
/// times [`WORKGROUP_SIZE`]); within WebGPU's default 65,535.
const LIST_X: u32 = 32_768;

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct FoldParams {
    stride: u32,
    count: u32,
    row_stride: u32,
    consts: u32,
    folds: u32,
    doublings: u32,
    entry_identity: u32,
    entry_madd: u32,
    entry_dbl: u32,
    entry_to_affine: u32,
    acc_regs: u32,
    affine_regs: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct ReduceParams {
    threads: u32,
    row_stride: u32,
    consts: u32,
    entry_identity: u32,
    entry_add: u32,
    acc_regs: u32,
    buckets: u32,
    segments: u32,
    seg_len: u32,
    bits: u32,
    block: u32,
    _pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct AccumulateParams {
    cap: u32,
    row_stride: u32,
    consts: u32,
    entry_identity: u32,
    entry_madd: u32,
    neg_reg: u32,
    acc_regs: u32,
    affine_regs: u32,
    neg_regs: u32,
    windows: u32,
    buckets: u32,
    chunk: u32,
    entry_add: u32,
    stride: u32,
    group: u32,
    level_mode: u32,
}

/// Where the time of one MSM went (seconds). GPU stages come from timestamp queries where the
/// device has them (else they are zero and `gpu_total` is the wall time of the GPU work).
#[derive(Clone, Copy, Debug, Default)]
pub struct MsmTimings {
    /// Scalars written straight into the upload's staging memory by the host's threads:
    /// copied as stored where they are converted on the GPU (`scalars_on_gpu`), else
    /// converted to canonical integers in the same pass.
    pub host_scalars: f64,
    /// Whether the GPU converted the scalars from Montgomery form (`digits` includes it).
    pub scalars_on_gpu: bool,
    /// Buffer and bind-group set-up (the scalar write is in `host_scalars`).
    pub upload: f64,
    /// Signed digits and bucket histogram.
    pub digits: f64,
    /// Per-window prefix sums of bucket sizes and of chunk counts, and the chunk counts.
    pub scan: f64,
    /// Scatter into buckets.
    pub scatter: f64,
    /// Bucket accumulation in chunks (mixed additions).
    pub accumulate: f64,
    /// Sums of the chunks of each bucket (full additions; copies for one-chunk buckets).
    pub combine: f64,
    /// Bucket reduction, phase 1.
    pub reduce: f64,
    /// Submit to readback complete, wall time.
    pub gpu_total: f64,
    /// Decoding and combining segment sums and windows on the host.
    pub host_combine: f64,
    /// Window width used.
    pub window_bits: u32,
    /// Reduction segments per window used.
    pub segments: u32,
    /// Accumulation chunk used (entries per invocation at most).
    pub chunk: u32,
}

/// Window multiples stored with prepared bases ([`GpuMsm::prepare_sets_folded`]): the
/// bases and `2^(c W' f) P` for `f < folds`, `W' = ceil(W / folds)` for the `W` windows of a
/// full-width scalar, so that an MSM adds digit window `f W' + w` of a scalar into bucket
/// window `w` with the level-`f` point and reduces `W'` windows instead of `W`. Memory grows
/// `folds` times; the bucket reduction and the window combination shrink as much.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fold {
    /// Levels stored per base, 1 (or 0) for none; at most `W` and [`MAX_FOLDS`] (more is
    /// capped), and a count between is rounded down to the fewest levels that give the same
    /// `W'`.
    pub folds: u32,
    /// The window width the multiples are for, 2..=[`MAX_WINDOW_BITS`] (default:
    /// [`default_folded_window_bits`]). Every MSM on these bases uses it.
    pub window_bits: Option<u32>,
}

/// Most levels of folded bases: each level costs one inversion per point when the bases are
/// prepared (`to_affine`: 615-657 VM instructions), and lavapipe gives wrong results past
/// 65,535 loop iterations per invocation: with 32 levels a G2 point's multiples take at most
/// about 31 x 657 + 256 x 114 (`dbl`) = 49,000 instructions.
pub const MAX_FOLDS: u32 = 32;

/// The stored multiples of folded bases (see [`Fold`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FoldLayout {
    c: u32,
    folds: u32,
    fold_windows: u32,
}

/// Bases uploaded once, in GPU form, for many MSMs (a proving key's bases are fixed).
///
/// Stored in parts of at most [`GpuMsm::part_len`] points, each in its own buffer, so that no
/// storage binding exceeds the device's limit (WebGPU's default is 128 MiB: about 559k
/// BLS12-381 G1 points in 13-bit limbs). An MSM runs once per part and adds the results.
#[derive(Debug)]
pub struct PreparedBases<C: GpuCurve> {
    /// The context whose device holds the parts.
    context: zkgpu_runtime::ContextId,
    parts: Vec<BasePart>,
    len: usize,
    /// Base sets ([`GpuMsm::prepare_sets`]; 1 for [`GpuMsm::prepare`]).
    sets: usize,
    /// Window multiples stored after each set's bases.
    fold: Option<FoldLayout>,
    _curve: std::marker::PhantomData<C>,
}

/// Bases `start..start + len` of a [`PreparedBases`] (of every set: the buffer holds the
/// sets' runs one after another, `len` points each; for folded bases each set's run is
/// followed by its multiples' runs).
#[derive(Debug)]
struct BasePart {
    buffer: wgpu::Buffer,
    start: usize,
    len: usize,
}

impl<C: GpuCurve> PreparedBases<C> {
    /// Number of bases (of each set: the longest set's length).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Number of base sets (1 unless prepared by [`GpuMsm::prepare_sets`]).
    pub fn sets(&self) -> usize {
        self.sets
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of parts (buffers) the bases are stored in.
    pub fn parts(&self) -> usize {
        self.parts.len()
    }

    /// Levels stored per base ([`Fold`]; 1 when not folded).
    pub fn folds(&self) -> u32 {
        self.fold.map_or(1, |f| f.folds)
    }

    /// The window width folded bases fix (None when not folded).
    pub fn window_bits(&self) -> Option<u32> {
        self.fold.map(|f| f.c)
    }
}

/// The MSM engine of group `C` on one GPU context: pipelines and the formula program are
/// built once and reused by every call.
#[derive(Debug)]
pub struct GpuMsm<'c, C: GpuCurve> {
    ctx: &'c GpuContext,
    code: wgpu::Buffer,
    consts: u32,
    entries: [u32; 4],
    /// Composed once: the pipeline cache is keyed by module name, but composing copies the
    /// shader text.
    buckets_module: zkgpu_shaders::Composed,
    accumulate_module: zkgpu_shaders::Composed,
    /// Converts scalars from arkworks' Montgomery form on the GPU, where the scalar field has
    /// a module (not ed-on-bls12-377's).
    scalars_module: Option<zkgpu_shaders::Composed>,
    /// Working buffers of recent MSM shapes, reused (allocation and first-use clearing of
    /// ~0.5 GB at 2^20 cost about 20 ms a call). A call takes one out while it runs, so
    /// concurrent calls of one shape get their own.
    scratch: std::sync::Mutex<Vec<Scratch>>,
    /// Most points per part of prepared bases (None: the most that the device's binding limit
    /// allows).
    max_part: Option<usize>,
    _curve: std::marker::PhantomData<C>,
}

impl<'c, C: GpuCurve> GpuMsm<'c, C> {
    /// The engine for `C` on `ctx`.
    pub fn new(ctx: &'c GpuContext) -> Result<Self> {
        let prog = C::program();
        let (words, consts) = zkgpu_curves::program_words::<C>(prog);
        let entry = |name: &str| {
            prog.entry(name)
                .map_err(|e| MsmError::Config(e.to_string()))
        };
        Ok(Self {
            ctx,
            code: ctx.storage_buffer(&format!("{} msm program", C::ID), &words)?,
            consts,
            entries: [
                entry("identity")?,
                entry("madd")?,
                entry("add")?,
                entry("dbl")?,
            ],
            buckets_module: msm_buckets(),
            accumulate_module: msm_accumulate(C::SHADER),
            scalars_module: C::SHADER.scalar_field().map(msm_scalars),
            scratch: std::sync::Mutex::new(Vec::new()),
            max_part: None,
            _curve: std::marker::PhantomData,
        })
    }

    /// Stores bases prepared from now on in parts of at most `points` points (at least 1),
    /// below what the binding limit allows: tests use it to cross part boundaries with few
    /// points. Each part costs one more pass of the MSM's stages.
    pub fn with_max_part(mut self, points: usize) -> Self {
        self.max_part = Some(points.max(1));
        self
    }

    /// Most points per part of prepared bases: the bases, the scalars and every working
    /// buffer of a default-shaped MSM over one part fit in one storage binding.
    pub fn part_len(&self) -> usize {
        self.part_len_sets(1)
    }

    /// Most points per set and part of bases prepared as `sets` base sets.
    pub fn part_len_sets(&self, sets: usize) -> usize {
        let len = part_len::<C>(self.ctx.max_binding_bytes(), sets);
        self.max_part.map_or(len, |m| m.min(len))
    }

    /// Uploads `bases` in GPU form, in parts of at most [`GpuMsm::part_len`] points.
    pub fn prepare(&self, bases: &[C::Affine]) -> Result<PreparedBases<C>> {
        self.prepare_sets(&[bases])
    }

    /// Uploads several base sets for MSMs that share their scalars ([`GpuMsm::msm_sets`]):
    /// Groth16's A, B in G1 and L take the same assignment. Sets shorter than the longest are
    /// padded with the identity, which adds nothing, so set `k`'s MSM is over
    /// `min(sets[k].len(), scalars)` terms, as [`GpuMsm::msm_unchecked`] would compute it.
    /// One such MSM shares the scalars' upload, digits and bucket sort between the sets, and
    /// runs every later stage once over all of them. Stored in parts of at most
    /// [`GpuMsm::part_len_sets`] points per set.
    pub fn prepare_sets(&self, sets: &[&[C::Affine]]) -> Result<PreparedBases<C>> {
        self.upload_sets(sets, None)
    }

    /// [`GpuMsm::prepare_sets`] with window multiples ([`Fold`]): each base set is stored
    /// with `folds` levels, the multiples computed on the GPU (doublings and one inversion per
    /// multiple, on the curve VM). Stored in parts of at most [`GpuMsm::part_len_sets`]`(sets
    /// x folds)` points per set. With `folds <= 1` this is [`GpuMsm::prepare_sets`].
    pub async fn prepare_sets_folded(
        &self,
        sets: &[&[C::Affine]],
        fold: Fold,
    ) -> Result<PreparedBases<C>> {
        let len = sets.iter().map(|s| s.len()).max().unwrap_or(0);
        let width = fold.window_bits.unwrap_or_else(|| {
            default_folded_window_bits::<C>(
                len,
                fold.folds,
                sets.len(),
                self.ctx.max_binding_bytes(),
            )
        });
        let fold = Fold {
            window_bits: Some(width),
            ..fold
        };
        let Some(layout) = fold_layout::<C>(len, fold)? else {
            return self.upload_sets(sets, None);
        };
        let prepared = self.upload_sets(sets, Some(layout))?;
        let ctx = self.ctx;
        let pipeline = ctx
            .pipeline(
                &self.accumulate_module,
                "msm_fold_bases",
                Checks::TrustedLoops,
                &[],
            )
            .await?;
        let prog = C::program();
        let to_affine = prog
            .entry("to_affine")
            .map_err(|e| MsmError::Config(e.to_string()))?;
        let max = ctx.limits().max_compute_workgroups_per_dimension;
        for part in &prepared.parts {
            let count = u32::try_from(sets.len() * part.len)
                .map_err(|_| MsmError::Config(format!("{} points exceed 2^32", part.len)))?;
            let (x, y, row_stride) = grid(count, WORKGROUP_SIZE, max);
            let params = ctx.uniform_buffer(
                "msm fold params",
                &FoldParams {
                    stride: part.len as u32,
                    count,
                    row_stride,
                    consts: self.consts,
                    folds: layout.folds,
                    doublings: layout.c * layout.fold_windows,
                    entry_identity: self.entries[0],
                    entry_madd: self.entries[1],
                    entry_dbl: self.entries[3],
                    entry_to_affine: to_affine,
                    acc_regs: 4 * C::DEGREE as u32,
                    affine_regs: 2 * C::DEGREE as u32,
                },
            );
            let bg = ctx.bind_group(
                &pipeline,
                &[(0, &self.code), (13, &part.buffer), (14, &params)],
            );
            let mut enc = ctx
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("msm fold bases"),
                });
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("msm fold bases"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(&pipeline.pipeline);
                pass.set_bind_group(0, &bg, &[]);
                pass.dispatch_workgroups(x, y, 1);
            }
            // One part at a time: a part's multiples are seconds of GPU work at 2^20 points.
            ctx.submit_and_wait(enc)?;
        }
        Ok(prepared)
    }

    /// [`GpuMsm::prepare_sets_folded`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn prepare_sets_folded_blocking(
        &self,
        sets: &[&[C::Affine]],
        fold: Fold,
    ) -> Result<PreparedBases<C>> {
        pollster::block_on(self.prepare_sets_folded(sets, fold))
    }

    /// The most levels ([`Fold::folds`]) for which `sets` base sets of `len` points, with
    /// the default window width, still fit in one part (one storage binding), so that folding
    /// costs no extra pass; 1 if even the plain bases need several parts.
    pub fn folds_in_one_part(&self, len: usize, sets: usize) -> u32 {
        let fits = |f: u32| self.part_len_sets(sets.max(1) * f as usize) >= len;
        let levels = |c: u32| window_count(C::Scalar::MODULUS_BIT_SIZE, c).min(MAX_FOLDS);
        // Every window of the wide default width folded, if that fits; else the most levels
        // of the plain default width.
        let wide =
            default_folded_window_bits::<C>(len, MAX_FOLDS, sets, self.ctx.max_binding_bytes());
        if fits(levels(wide)) {
            return levels(wide);
        }
        (1..=levels(default_window_bits(len)))
            .rev()
            .find(|&f| fits(f))
            .unwrap_or(1)
    }

    /// Encodes and uploads base sets, each followed by `fold`'s zeroed levels (filled on the
    /// GPU by the caller).
    fn upload_sets(
        &self,
        sets: &[&[C::Affine]],
        fold: Option<FoldLayout>,
    ) -> Result<PreparedBases<C>> {
        if sets.is_empty() {
            return Err(MsmError::Config(
                "prepare_sets needs at least one set".into(),
            ));
        }
        let folds = fold.map_or(1, |f| f.folds as usize);
        let len = sets.iter().map(|s| s.len()).max().unwrap_or(0);
        let part = self.part_len_sets(sets.len() * folds);
        let identity = encode_affine_packed::<C>(&[<C::Affine as ark_ec::AffineRepr>::zero()]);
        let parts = (0..len.div_ceil(part))
            .map(|k| {
                let start = k * part;
                let plen = part.min(len - start);
                let mut words = Vec::with_capacity(sets.len() * folds * plen * identity.len());
                for set in sets {
                    let have = &set[start.min(set.len())..(start + plen).min(set.len())];
                    words.extend(encode_affine_packed::<C>(have));
                    for _ in have.len()..plen {
                        words.extend_from_slice(&identity);
                    }
                    words.resize(words.len() + (folds - 1) * plen * identity.len(), 0);
                }
                Ok(BasePart {
                    buffer: self
                        .ctx
                        .storage_buffer(&format!("{} bases, part {k}", C::ID), &words)?,
                    start,
                    len: plen,
                })
            })
            .collect::<Result<_>>()?;
        Ok(PreparedBases {
            context: self.ctx.id(),
            parts,
            len,
            sets: sets.len(),
            fold,
            _curve: std::marker::PhantomData,
        })
    }

    /// `sum_i scalars[i] bases_k[i]` for every set `k` of bases prepared by
    /// [`GpuMsm::prepare_sets`], over the shorter length (as [`GpuMsm::msm_unchecked`]).
    pub async fn msm_sets(
        &self,
        bases: &PreparedBases<C>,
        scalars: ScalarSlice<'_, C::Scalar>,
        config: MsmConfig,
    ) -> Result<Vec<C::Projective>> {
        Ok(self
            .run_sets(bases, Scalars::Words(scalars.words), config, false)
            .await?
            .0)
    }

    /// [`GpuMsm::msm_sets`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm_sets_blocking(
        &self,
        bases: &PreparedBases<C>,
        scalars: ScalarSlice<'_, C::Scalar>,
        config: MsmConfig,
    ) -> Result<Vec<C::Projective>> {
        pollster::block_on(self.msm_sets(bases, scalars, config))
    }

    /// [`GpuMsm::msm_sets_timed`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm_sets_timed_blocking(
        &self,
        bases: &PreparedBases<C>,
        scalars: &[C::Scalar],
        config: MsmConfig,
    ) -> Result<(Vec<C::Projective>, MsmTimings)> {
        pollster::block_on(self.msm_sets_timed(bases, scalars, config))
    }

    /// [`GpuMsm::msm_sets`] from field elements, also reporting where the time went.
    pub async fn msm_sets_timed(
        &self,
        bases: &PreparedBases<C>,
        scalars: &[C::Scalar],
        config: MsmConfig,
    ) -> Result<(Vec<C::Projective>, MsmTimings)> {
        self.run_sets(bases, Scalars::Field(scalars), config, true)
            .await
    }

    /// `sum_i scalars[i] bases[i]`; errors when the lengths differ.
    pub async fn msm(&self, bases: &[C::Affine], scalars: &[C::Scalar]) -> Result<C::Projective> {
        if bases.len() != scalars.len() {
            return Err(MsmError::LengthMismatch {
                bases: bases.len(),
                scalars: scalars.len(),
            });
        }
        self.msm_unchecked(bases, scalars).await
    }

    /// `sum_i scalars[i] bases[i]` over the shorter of the two slices (arkworks'
    /// `msm_unchecked`, which Groth16 relies on).
    pub async fn msm_unchecked(
        &self,
        bases: &[C::Affine],
        scalars: &[C::Scalar],
    ) -> Result<C::Projective> {
        let n = bases.len().min(scalars.len());
        if n == 0 {
            return Ok(C::Projective::zero());
        }
        let prepared = self.prepare(&bases[..n])?;
        self.msm_prepared(&prepared, &scalars[..n], MsmConfig::default())
            .await
    }

    /// `sum_i scalars[i] bases[i]` against prepared bases, over the shorter length.
    pub async fn msm_prepared(
        &self,
        bases: &PreparedBases<C>,
        scalars: &[C::Scalar],
        config: MsmConfig,
    ) -> Result<C::Projective> {
        Ok(self
            .run(bases, Scalars::Field(scalars), config, false)
            .await?
            .0)
    }

    /// `sum_i scalars[i] bases[i]` against prepared bases with scalars converted beforehand
    /// ([`PreparedScalars`]: one conversion for several MSMs), over the shorter length.
    pub async fn msm_prepared_scalars(
        &self,
        bases: &PreparedBases<C>,
        scalars: ScalarSlice<'_, C::Scalar>,
        config: MsmConfig,
    ) -> Result<C::Projective> {
        Ok(self
            .run(bases, Scalars::Words(scalars.words), config, false)
            .await?
            .0)
    }

    /// [`GpuMsm::msm_prepared_scalars`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm_prepared_scalars_blocking(
        &self,
        bases: &PreparedBases<C>,
        scalars: ScalarSlice<'_, C::Scalar>,
        config: MsmConfig,
    ) -> Result<C::Projective> {
        pollster::block_on(self.msm_prepared_scalars(bases, scalars, config))
    }

    /// [`GpuMsm::msm_prepared`], also reporting where the time went.
    pub async fn msm_prepared_timed(
        &self,
        bases: &PreparedBases<C>,
        scalars: &[C::Scalar],
        config: MsmConfig,
    ) -> Result<(C::Projective, MsmTimings)> {
        self.run(bases, Scalars::Field(scalars), config, true).await
    }

    /// One MSM over bases of one set; with `stamps`, GPU stages are timed by timestamp
    /// queries (where the device has them: a second readback).
    async fn run(
        &self,
        bases: &PreparedBases<C>,
        scalars: Scalars<'_, C::Scalar>,
        config: MsmConfig,
        stamps: bool,
    ) -> Result<(C::Projective, MsmTimings)> {
        if bases.sets != 1 {
            return Err(MsmError::Config(format!(
                "the bases hold {} sets: use msm_sets",
                bases.sets
            )));
        }
        let (sums, timings) = self.run_sets(bases, scalars, config, stamps).await?;
        Ok((sums.into_iter().next().unwrap_or_default(), timings))
    }

    /// One MSM per base set.
    async fn run_sets(
        &self,
        bases: &PreparedBases<C>,
        scalars: Scalars<'_, C::Scalar>,
        config: MsmConfig,
        stamps: bool,
    ) -> Result<(Vec<C::Projective>, MsmTimings)> {
        bases.context.check(self.ctx.id(), "these prepared bases")?;
        self.ctx.check_device()?;
        let mut timings = MsmTimings::default();
        let mut result = vec![C::Projective::zero(); bases.sets];
        let n = bases.len.min(scalars.len());
        for part in bases.parts.iter().take_while(|p| p.start < n) {
            let end = n.min(part.start + part.len);
            let scalars = scalars.range(part.start, end);
            let sums = self
                .run_part(
                    &part.buffer,
                    (part.start, bases.sets as u32, part.len, bases.fold),
                    scalars,
                    config,
                    stamps,
                    &mut timings,
                )
                .await?;
            for (r, s) in result.iter_mut().zip(sums) {
                *r += s;
            }
        }
        Ok((result, timings))
    }

    /// The MSMs of one part of the bases (`layout`: its first point, its sets, and the points
    /// per set in its buffer) against its scalars, one per set, adding to `timings`.
    async fn run_part(
        &self,
        bases: &wgpu::Buffer,
        layout: (usize, u32, usize, Option<FoldLayout>),
        scalars: Scalars<'_, C::Scalar>,
        config: MsmConfig,
        stamps: bool,
        timings: &mut MsmTimings,
    ) -> Result<Vec<C::Projective>> {
        let (part_start, sets, set_stride, fold) = layout;
        let set_stride = u32::try_from(set_stride)
            .map_err(|_| MsmError::Config(format!("{set_stride} points exceed 2^32")))?;
        let shape = Shape::new::<C>(
            scalars.len(),
            (sets, set_stride),
            fold,
            config,
            self.ctx.max_binding_bytes(),
        )?;
        if timings.window_bits == 0 {
            timings.window_bits = shape.c;
            timings.segments = shape.segments;
            timings.chunk = shape.chunk;
        }
        let t = web_time::Instant::now();
        let ctx = self.ctx;
        let p = self.pipelines().await?;
        let taken = {
            let mut pool = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
            pool.iter()
                .position(|s| s.shape == shape)
                .map(|k| pool.remove(k))
        };
        let s = match taken {
            Some(s) => s,
            None => self.scratch_for(shape)?,
        };
        // Scalars to words on the host's threads, straight into the staging memory: field
        // elements as stored (Montgomery form), converted on the GPU where the scalar field
        // has a module and no width is to be checked, else canonical.
        let t_scalars = web_time::Instant::now();
        let limit = shape.scalar_bits;
        // ZKGPU_MSM_HOST_SCALARS=1 (a developer's switch) converts on the host regardless,
        // to compare the two in one run.
        let convert = match (&p.convert, scalars) {
            (Some(pipeline), Scalars::Field(_))
                if limit >= C::Scalar::MODULUS_BIT_SIZE && !host_scalars_forced() =>
            {
                Some(pipeline)
            }
            _ => None,
        };
        let too_wide = std::sync::Mutex::new(None);
        ctx.write_par(&s.scalars, 0, 32 * scalars.len() as u64, 32, |at, block| {
            if convert.is_some() {
                scalars.write_montgomery(at / 32, block);
                return;
            }
            scalars.write_words(at / 32, block);
            if limit < 256 {
                let words: &[u32] = bytemuck::cast_slice(block);
                for (k, w) in words.chunks_exact(8).enumerate() {
                    let bits = scalar_bits(w);
                    if bits > limit {
                        let mut first = too_wide.lock().unwrap_or_else(|e| e.into_inner());
                        first.get_or_insert((at / 32 + k, bits));
                        break;
                    }
                }
            }
        })?;
        if let Some((index, bits)) = too_wide.into_inner().unwrap_or_else(|e| e.into_inner()) {
            self.return_scratch(s);
            return Err(MsmError::ScalarTooWide {
                index: index + part_start,
                bits,
                limit,
            });
        }
        let scalar_time = t_scalars.elapsed().as_secs_f64();
        timings.host_scalars += scalar_time;
        timings.scalars_on_gpu = convert.is_some();
        let Shape {
            n: n32,
            windows,
            slots,
            chunk_slots,
            ..
        } = shape;
        let max = ctx.limits().max_compute_workgroups_per_dimension;
        let (sx, sy, _) = grid(n32, WORKGROUP_SIZE, max);
        let (cx, cy, _) = grid(slots, WORKGROUP_SIZE, max);
        let (ax, ay, _) = grid(chunk_slots, WORKGROUP_SIZE, max);
        let (rx, ry, _) = grid(windows * shape.segments, WORKGROUP_SIZE, max);
        // Layouts derived from the shaders hold only the bindings each entry point uses.
        let bg_convert =
            convert.map(|pipeline| ctx.bind_group(pipeline, &[(0, &s.scalars), (5, &s.bparams)]));
        let bg_digits = ctx.bind_group(
            &p.digits,
            &[
                (0, &s.scalars),
                (1, &s.digits),
                (2, &s.counts),
                (5, &s.bparams),
            ],
        );
        // Each scan is two dispatches over (blocks, windows): block totals, then offsets.
        let scan_groups = |counts: &wgpu::Buffer, offsets: &wgpu::Buffer, params: &wgpu::Buffer| {
            (
                ctx.bind_group(
                    &p.scan_blocks,
                    &[(2, counts), (5, params), (7, &s.block_sums)],
                ),
                ctx.bind_group(
                    &p.scan,
                    &[(2, counts), (3, offsets), (5, params), (7, &s.block_sums)],
                ),
            )
        };
        let bg_scan = scan_groups(&s.counts, &s.offsets, &s.bparams);
        let bg_scatter = ctx.bind_group(
            &p.scatter,
            &[
                (1, &s.digits),
                (2, &s.cursors),
                (3, &s.offsets),
                (4, &s.entries),
                (5, &s.bparams),
            ],
        );
        // The scatter's cursors end equal to the bucket sizes of every window of every set (the
        // histogram `counts` holds the digit windows only).
        let bg_chunks = ctx.bind_group(
            &p.chunks,
            &[
                (2, &s.cursors),
                (3, &s.chunk_counts),
                (5, &s.ccparams),
                (6, &s.chunk_hist),
                (8, &s.combine_list),
            ],
        );
        let bg_args = ctx.bind_group(
            &p.args,
            &[
                (8, &s.combine_list),
                (9, &s.dispatch_args),
                (10, &s.gparams),
            ],
        );
        let bg_chunk_scan = scan_groups(&s.chunk_counts, &s.chunk_offsets, &s.csparams);
        let bg_bin_scan = scan_groups(&s.chunk_hist, &s.bin_offsets, &s.hsparams);
        let bucket_blocks = scan_blocks(shape.buckets);
        let bg_order = ctx.bind_group(
            &p.order,
            &[
                (2, &s.cursors),
                (3, &s.bin_offsets),
                (4, &s.chunk_order),
                (5, &s.ccparams),
                (6, &s.bin_cursors),
            ],
        );
        let bg_acc = ctx.bind_group(
            &p.acc,
            &[
                (0, &self.code),
                (1, bases),
                (2, &s.entries),
                (3, &s.offsets),
                (4, &s.cursors),
                (6, &s.aparams),
                (9, &s.chunk_offsets),
                (11, &s.partials),
                (12, &s.chunk_order),
            ],
        );
        let combine_group = |params: &wgpu::Buffer| {
            ctx.bind_group(
                &p.combine,
                &[
                    (0, &self.code),
                    (5, &s.sums),
                    (6, params),
                    (9, &s.chunk_offsets),
                    (10, &s.chunk_counts),
                    (11, &s.partials),
                    (12, &s.chunk_order),
                    (15, &s.combine_list),
                ],
            )
        };
        let bg_chunk_levels: Vec<wgpu::BindGroup> =
            s.chunk_levels.iter().map(combine_group).collect();
        let bg_combine = combine_group(&s.mparams);
        let bg_reduce = ctx.bind_group(
            &p.reduce,
            &[
                (0, &self.code),
                (5, &s.sums),
                (7, &s.rparams),
                (8, &s.seg_out),
                (9, &s.chunk_offsets),
                (10, &s.chunk_counts),
                (11, &s.partials),
            ],
        );
        // Tree levels: each window's segment sums added up in groups.
        let mut level_in = &s.seg_out;
        let mut level_groups = Vec::new();
        for level in &s.levels {
            let bg = ctx.bind_group(
                &p.combine,
                &[
                    (0, &self.code),
                    (5, &level.out),
                    (6, &level.params),
                    (9, &level.first),
                    (10, &level.count),
                    (11, level_in),
                    (12, &s.chunk_order),
                    (15, &s.combine_list),
                ],
            );
            level_groups.push((bg, grid(level.groups, WORKGROUP_SIZE, max)));
            level_in = &level.out;
        }
        timings.upload += t.elapsed().as_secs_f64() - scalar_time;

        let device = ctx.device();
        // (stage kind, pipeline, bind group, dispatch): kinds index MsmTimings' GPU fields.
        let mut stages: Vec<(Stage, &Pipeline, &wgpu::BindGroup, Dispatch)> = Vec::new();
        if let (Some(pipeline), Some(bg)) = (convert, &bg_convert) {
            stages.push((Stage::Digits, pipeline, bg, Dispatch::Grid(sx, sy)));
        }
        stages.push((Stage::Digits, &p.digits, &bg_digits, Dispatch::Grid(sx, sy)));
        stages.extend(scan_stages(&p, &bg_scan, bucket_blocks, windows));
        stages.extend([
            (
                Stage::Scatter,
                &*p.scatter,
                &bg_scatter,
                Dispatch::Grid(sx, sy),
            ),
            (Stage::Scan, &*p.chunks, &bg_chunks, Dispatch::Grid(cx, cy)),
            (Stage::Scan, &*p.args, &bg_args, Dispatch::Grid(1, 1)),
        ]);
        stages.extend(scan_stages(&p, &bg_chunk_scan, bucket_blocks, windows));
        stages.extend(scan_stages(&p, &bg_bin_scan, scan_blocks(CHUNK_BINS), 1));
        stages.extend([
            (Stage::Scan, &*p.order, &bg_order, Dispatch::Grid(cx, cy)),
            (Stage::Accumulate, &*p.acc, &bg_acc, Dispatch::Grid(ax, ay)),
        ]);
        // The chunk sums' dispatches are sized on the GPU (msm_combine_args): the tree levels
        // only where some bucket has that many chunks, the last pass only over the buckets of
        // zero or several chunks.
        for (l, bg) in bg_chunk_levels.iter().enumerate() {
            let offset = 12 * (l as u64 + 1);
            stages.push((Stage::Combine, &p.combine, bg, Dispatch::Indirect(offset)));
        }
        stages.push((
            Stage::Combine,
            &p.combine,
            &bg_combine,
            Dispatch::Indirect(0),
        ));
        stages.push((Stage::Reduce, &p.reduce, &bg_reduce, Dispatch::Grid(rx, ry)));
        for (bg, (x, y, _)) in &level_groups {
            stages.push((Stage::Reduce, &p.combine, bg, Dispatch::Grid(*x, *y)));
        }
        let n_stamps = 2 * stages.len() as u32;
        let stamps = (stamps && ctx.has_timestamps()).then(|| {
            device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("msm stages"),
                ty: wgpu::QueryType::Timestamp,
                count: n_stamps,
            })
        });
        let mut enc =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("msm") });
        // Reused buffers that the kernels count into or read past what they write.
        for buf in [
            &s.counts,
            &s.cursors,
            &s.chunk_hist,
            &s.bin_cursors,
            &s.chunk_order,
        ] {
            enc.clear_buffer(buf, 0, None);
        }
        // The combine list's count and maximum.
        enc.clear_buffer(&s.combine_list, 0, Some(8));
        for (k, (_, pipeline, bind, dispatch)) in stages.iter().enumerate() {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("msm stage"),
                timestamp_writes: stamps.as_ref().map(|q| wgpu::ComputePassTimestampWrites {
                    query_set: q,
                    beginning_of_pass_write_index: Some(2 * k as u32),
                    end_of_pass_write_index: Some(2 * k as u32 + 1),
                }),
            });
            pass.set_pipeline(&pipeline.pipeline);
            pass.set_bind_group(0, *bind, &[]);
            match *dispatch {
                Dispatch::Grid(x, y) => pass.dispatch_workgroups(x, y, 1),
                Dispatch::Indirect(offset) => {
                    pass.dispatch_workgroups_indirect(&s.dispatch_args, offset)
                }
            }
        }
        let resolve = stamps.as_ref().map(|q| {
            let buf = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("msm timestamps"),
                size: 8 * u64::from(n_stamps),
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            enc.resolve_query_set(q, 0..n_stamps, &buf, 0);
            buf
        });
        // The download of the window sums rides in the same submission as the kernels, so it
        // does not wait behind work another thread queues meanwhile (the queue is FIFO; the
        // Groth16 prover's transforms are submitted while its MSMs run).
        let per: u32 = s.left.iter().sum();
        let result_words = (windows * per) as usize * C::acc_words();
        let pending = ctx.record_read_back(&mut enc, level_in, 0, result_words, 4);
        let t = web_time::Instant::now();
        let index = ctx.queue().submit([enc.finish()]);
        let mut sum_words = vec![0u32; result_words];
        ctx.finish_read_back(
            pending,
            index,
            &mut sum_words,
            |bytes, out: &mut [u32], _| {
                bytemuck::cast_slice_mut::<u32, u8>(out).copy_from_slice(bytes);
                Ok::<(), std::convert::Infallible>(())
            },
        )
        .await?
        .unwrap_or_else(|never| match never {});
        timings.gpu_total += t.elapsed().as_secs_f64();
        if let Some(buf) = &resolve {
            let ticks: Vec<u64> = ctx.read_back(buf, 8 * u64::from(n_stamps)).await?;
            let period = f64::from(ctx.queue().get_timestamp_period()) * 1e-9;
            // A developer's view of every pass (ZKGPU_MSM_PASSES=1): which dispatch of a
            // stage takes the time.
            let passes = std::env::var_os("ZKGPU_MSM_PASSES").is_some();
            for (k, (kind, _, _, dispatch)) in stages.iter().enumerate() {
                let secs = ticks[2 * k + 1].saturating_sub(ticks[2 * k]) as f64 * period;
                if passes {
                    eprintln!("pass {k:2} {kind:?} {dispatch:?}: {:.3} ms", secs * 1e3);
                }
                *match kind {
                    Stage::Digits => &mut timings.digits,
                    Stage::Scan => &mut timings.scan,
                    Stage::Scatter => &mut timings.scatter,
                    Stage::Accumulate => &mut timings.accumulate,
                    Stage::Combine => &mut timings.combine,
                    Stage::Reduce => &mut timings.reduce,
                } += secs;
            }
        }
        drop(stages);
        drop(level_groups);
        drop(bg_chunk_levels);
        let left = s.left.clone();
        let seg_bits = (shape.c - 1) - shape.segments.trailing_zeros();
        self.return_scratch(s);
        let t = web_time::Instant::now();
        let set_words = sum_words.len() / sets as usize;
        let result = sum_words
            .chunks(set_words.max(1))
            .map(|w| combine_windows::<C>(w, &left, seg_bits, shape.c))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| GpuError::Device(format!("window sums do not decode: {e}")))?;
        timings.host_combine += t.elapsed().as_secs_f64();
        Ok(result)
    }

    /// Builds this group's MSM pipelines now (they are otherwise built by the first MSM).
    /// Calls from two threads that both miss the context's cache would each build them.
    pub async fn build_pipelines(&self) -> Result<()> {
        self.pipelines().await.map(|_| ())
    }

    /// The MSM pipelines, built on first use and cached by the context.
    async fn pipelines(&self) -> Result<Pipelines> {
        let ctx = self.ctx;
        let b = &self.buckets_module;
        let a = &self.accumulate_module;
        // The VM's loops end (forward jumps only, HALT); the accumulation kernels' loops count
        // to bucket sizes, bit lengths and uniforms: see shaders/kernels/msm_accumulate.wgsl.
        let trusted = Checks::TrustedLoops;
        Ok(Pipelines {
            digits: ctx.pipeline(b, "msm_digits", Checks::Default, &[]).await?,
            scan_blocks: ctx
                .pipeline(b, "msm_scan_blocks", Checks::Default, &[])
                .await?,
            scan: ctx.pipeline(b, "msm_scan", Checks::Default, &[]).await?,
            scatter: ctx.pipeline(b, "msm_scatter", Checks::Default, &[]).await?,
            chunks: ctx
                .pipeline(b, "msm_chunk_counts", Checks::Default, &[])
                .await?,
            order: ctx
                .pipeline(b, "msm_chunk_order", Checks::Default, &[])
                .await?,
            args: ctx
                .pipeline(b, "msm_combine_args", Checks::Default, &[])
                .await?,
            acc: ctx
                .pipeline(a, "msm_bucket_accumulate", trusted, &[])
                .await?,
            combine: ctx.pipeline(a, "msm_combine_chunks", trusted, &[]).await?,
            reduce: ctx.pipeline(a, "msm_reduce_segments", trusted, &[]).await?,
            convert: match &self.scalars_module {
                Some(m) => Some(
                    ctx.pipeline(m, "msm_scalars_from_montgomery", Checks::Default, &[])
                        .await?,
                ),
                None => None,
            },
        })
    }

    /// Puts `s` back for the next MSM of its shape, keeping at most [`SCRATCH_POOL`].
    fn return_scratch(&self, s: Scratch) {
        let mut pool = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() >= SCRATCH_POOL {
            pool.remove(0);
        }
        pool.push(s);
    }

    /// Frees the working buffers kept between MSMs (up to [`SCRATCH_POOL`] shapes, about
    /// `n x (32 + 2 x windows x 4) + 2 x windows x 2^(c-1) x point` bytes each).
    pub fn release_scratch(&self) {
        self.scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Allocates the working buffers and writes the parameters of one MSM shape.
    fn scratch_for(&self, shape: Shape) -> Result<Scratch> {
        let ctx = self.ctx;
        let Shape {
            n,
            c,
            digit_windows,
            sets,
            set_stride,
            set_windows,
            fold_windows,
            folds,
            load,
            windows,
            buckets,
            slots,
            segments,
            chunk,
            cap,
            chunk_slots,
            tree_group,
            chunk_group,
            ..
        } = shape;
        let max = ctx.limits().max_compute_workgroups_per_dimension;
        let (_, _, stride) = grid(n, WORKGROUP_SIZE, max);
        let (_, _, cstride) = grid(slots, WORKGROUP_SIZE, max);
        let (ax, ay, astride) = grid(chunk_slots, WORKGROUP_SIZE, max);
        let point_bytes = C::acc_words() as u64 * 4;
        // The chunk-size histogram: sizes chunk - key_div * k .. in bin k.
        let key_div = chunk.div_ceil(CHUNK_BINS);
        let bins = chunk.div_ceil(key_div);
        let bucket_params = |base: u32, row_stride: u32, windows: u32, buckets: u32| BucketParams {
            n: base,
            row_stride,
            c,
            windows,
            buckets,
            chunk,
            key_div,
            sets: 1,
            set_stride: 0,
            set_windows: windows,
            fold_windows: windows,
            folds: 1,
            load: 1,
            _pad: [0; 3],
            modulus: modulus_words::<C::Scalar>(),
        };
        let acc_regs = 4 * C::DEGREE as u32;
        let accumulate = AccumulateParams {
            cap,
            row_stride: astride,
            consts: self.consts,
            entry_identity: self.entries[0],
            entry_madd: self.entries[1],
            neg_reg: (C::AFFINE_NEG_COORD * C::DEGREE) as u32,
            acc_regs,
            affine_regs: 2 * C::DEGREE as u32,
            neg_regs: C::DEGREE as u32,
            windows,
            buckets,
            chunk,
            entry_add: self.entries[2],
            stride: 1,
            group: chunk_group,
            level_mode: 0,
        };
        // Tree levels over the chunks of large buckets: a bucket has at most
        // ceil(n load / chunk) chunks; level l adds groups of chunk_group partials
        // chunk_group^l apart, until the final combine has at most chunk_group left.
        let mut chunk_levels = Vec::new();
        let mut chunk_stride = 1u32;
        while (n * load).div_ceil(chunk).div_ceil(chunk_stride) > chunk_group {
            chunk_levels.push(ctx.uniform_buffer(
                "msm chunk tree params",
                &AccumulateParams {
                    stride: chunk_stride,
                    level_mode: 1,
                    ..accumulate
                },
            ));
            chunk_stride *= chunk_group;
        }
        let threads = windows * segments;
        let (_, _, rstride) = grid(threads, WORKGROUP_SIZE, max);
        let zeroed = |label: &str, bytes: u64| ctx.storage_zeroed(label, bytes);
        let windows_n = u64::from(windows) * u64::from(n) * u64::from(load);
        let digits_n = u64::from(digit_windows) * u64::from(n);
        // Tree levels: every row of each window's block of segment sums (docs/msm.md) added
        // up in groups of tree_group until each row has at most `target` sums left, by
        // msm_combine_chunks over (offset, count) groups.
        let layout = RowLayout::new(segments, windows);
        let mut levels = Vec::new();
        let mut runs = layout.rows.clone();
        while runs.iter().any(|&len| len > layout.target) {
            let next: Vec<u32> = runs.iter().map(|len| len.div_ceil(tree_group)).collect();
            let per: u32 = runs.iter().sum();
            let next_per: u32 = next.iter().sum();
            let groups = windows * next_per;
            let mut first = Vec::with_capacity(groups as usize);
            let mut count = Vec::with_capacity(groups as usize);
            for w in 0..windows {
                let mut at = w * per;
                for &len in &runs {
                    for q in 0..len.div_ceil(tree_group) {
                        first.push(at + q * tree_group);
                        count.push(tree_group.min(len - q * tree_group));
                    }
                    at += len;
                }
            }
            let (_, _, gstride) = grid(groups, WORKGROUP_SIZE, max);
            levels.push(TreeLevel {
                first: ctx.storage_buffer("msm tree group offsets", &first)?,
                count: ctx.storage_buffer("msm tree group sizes", &count)?,
                out: zeroed("msm tree sums", u64::from(groups) * point_bytes)?,
                params: ctx.uniform_buffer(
                    "msm tree params",
                    &AccumulateParams {
                        row_stride: gstride,
                        windows: 1,
                        buckets: groups,
                        ..accumulate
                    },
                ),
                groups,
            });
            runs = next;
        }
        Ok(Scratch {
            shape,
            scalars: zeroed("msm scalars", u64::from(n) * 32)?,
            digits: zeroed("msm digits", digits_n * 4)?,
            counts: zeroed("msm bucket sizes", u64::from(slots) * 4)?,
            cursors: zeroed("msm bucket cursors", u64::from(slots) * 4)?,
            offsets: zeroed("msm bucket offsets", u64::from(slots) * 4)?,
            entries: zeroed("msm entries", windows_n * 4)?,
            sums: zeroed("msm bucket sums", u64::from(slots) * point_bytes)?,
            chunk_counts: zeroed("msm chunk counts", u64::from(slots) * 4)?,
            chunk_offsets: zeroed("msm chunk offsets", u64::from(slots) * 4)?,
            chunk_hist: zeroed("msm chunk size histogram", u64::from(bins) * 4)?,
            block_sums: zeroed(
                "msm scan block sums",
                u64::from(windows * scan_blocks(buckets)) * 4,
            )?,
            bin_offsets: zeroed("msm chunk bin offsets", u64::from(bins) * 4)?,
            bin_cursors: zeroed("msm chunk bin cursors", u64::from(bins) * 4)?,
            chunk_order: zeroed("msm chunk order", u64::from(chunk_slots) * 8)?,
            partials: zeroed("msm chunk sums", u64::from(chunk_slots) * point_bytes)?,
            seg_out: zeroed(
                "msm segment sums",
                u64::from(windows) * u64::from(layout.block()) * point_bytes,
            )?,
            // Digits, histogram scan and scatter: the digit windows, and the sets.
            bparams: ctx.uniform_buffer(
                "msm bucket params",
                &BucketParams {
                    sets,
                    set_stride,
                    set_windows,
                    fold_windows,
                    folds,
                    load,
                    ..bucket_params(n, stride, digit_windows, buckets)
                },
            ),
            ccparams: ctx.uniform_buffer(
                "msm chunk count params",
                &bucket_params(n, cstride, windows, buckets),
            ),
            // The chunk scan: window w's chunks start at w * cap.
            csparams: ctx.uniform_buffer(
                "msm chunk scan params",
                &bucket_params(cap, stride, windows, buckets),
            ),
            // The histogram scan: one "window" of `bins` bins.
            hsparams: ctx
                .uniform_buffer("msm chunk bin scan params", &bucket_params(0, 1, 1, bins)),
            aparams: ctx.uniform_buffer("msm accumulate params", &accumulate),
            mparams: ctx.uniform_buffer(
                "msm combine params",
                &AccumulateParams {
                    row_stride: LIST_X * WORKGROUP_SIZE,
                    stride: chunk_stride,
                    level_mode: 2,
                    ..accumulate
                },
            ),
            combine_list: zeroed("msm combine list", (2 + u64::from(slots)) * 4)?,
            dispatch_args: ctx.indirect_buffer(
                "msm chunk sums dispatch",
                3 * (1 + chunk_levels.len() as u64),
            )?,
            gparams: ctx.uniform_buffer(
                "msm combine args params",
                &ArgsParams {
                    x_max: LIST_X,
                    levels: chunk_levels.len() as u32,
                    group: chunk_group,
                    full_x: ax,
                    full_y: ay,
                    _pad: [0; 3],
                },
            ),
            chunk_levels,
            rparams: ctx.uniform_buffer(
                "msm reduce params",
                &ReduceParams {
                    threads,
                    row_stride: rstride,
                    consts: self.consts,
                    entry_identity: self.entries[0],
                    entry_add: self.entries[2],
                    acc_regs,
                    buckets,
                    segments,
                    seg_len: (buckets - 1) / segments,
                    bits: segments.trailing_zeros(),
                    block: layout.block(),
                    _pad: 0,
                },
            ),
            levels,
            left: runs,
        })
    }

    /// [`GpuMsm::msm`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm_blocking(
        &self,
        bases: &[C::Affine],
        scalars: &[C::Scalar],
    ) -> Result<C::Projective> {
        pollster::block_on(self.msm(bases, scalars))
    }

    /// [`GpuMsm::msm_unchecked`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm_unchecked_blocking(
        &self,
        bases: &[C::Affine],
        scalars: &[C::Scalar],
    ) -> Result<C::Projective> {
        pollster::block_on(self.msm_unchecked(bases, scalars))
    }

    /// [`GpuMsm::msm_prepared_timed`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm_prepared_timed_blocking(
        &self,
        bases: &PreparedBases<C>,
        scalars: &[C::Scalar],
        config: MsmConfig,
    ) -> Result<(C::Projective, MsmTimings)> {
        pollster::block_on(self.msm_prepared_timed(bases, scalars, config))
    }

    /// [`GpuMsm::msm_prepared`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn msm_prepared_blocking(
        &self,
        bases: &PreparedBases<C>,
        scalars: &[C::Scalar],
        config: MsmConfig,
    ) -> Result<C::Projective> {
        pollster::block_on(self.msm_prepared(bases, scalars, config))
    }
}

/// Scalars converted once to the words the GPU reads (canonical, 8 little-endian u32 words
/// each), for several MSMs with the same scalars: Groth16's A, B in G1 and B in G2 share the
/// assignment, and L takes a tail of it ([`PreparedScalars::tail`]).
#[derive(Clone, Debug)]
pub struct PreparedScalars<F> {
    words: Vec<u32>,
    _field: std::marker::PhantomData<F>,
}

impl<F: PrimeField> PreparedScalars<F> {
    /// Converts `scalars` (on the host's threads).
    pub fn new(scalars: &[F]) -> Self {
        Self {
            words: scalar_words(scalars),
            _field: std::marker::PhantomData,
        }
    }

    /// Number of scalars.
    pub fn len(&self) -> usize {
        self.words.len() / 8
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// All of them.
    pub fn all(&self) -> ScalarSlice<'_, F> {
        self.tail(0)
    }

    /// The scalars from index `skip` on (none when `skip >= len`).
    pub fn tail(&self, skip: usize) -> ScalarSlice<'_, F> {
        let at = (8 * skip).min(self.words.len());
        ScalarSlice {
            words: &self.words[at..],
            _field: std::marker::PhantomData,
        }
    }
}

/// A run of [`PreparedScalars`].
#[derive(Clone, Copy, Debug)]
pub struct ScalarSlice<'a, F> {
    words: &'a [u32],
    _field: std::marker::PhantomData<F>,
}

/// Scalars as given to one MSM.
#[derive(Clone, Copy)]
enum Scalars<'a, F> {
    Field(&'a [F]),
    Words(&'a [u32]),
}

impl<'a, F: PrimeField> Scalars<'a, F> {
    fn len(&self) -> usize {
        match self {
            Self::Field(f) => f.len(),
            Self::Words(w) => w.len() / 8,
        }
    }

    /// Scalars `start..end`.
    fn range(self, start: usize, end: usize) -> Self {
        match self {
            Self::Field(f) => Self::Field(&f[start..end]),
            Self::Words(w) => Self::Words(&w[8 * start..8 * end]),
        }
    }

    /// The words of scalars `first..` into `out` (32 bytes a scalar): canonical, 8
    /// little-endian u32 words each.
    fn write_words(&self, first: usize, out: &mut [u8]) {
        let count = out.len() / 32;
        match self {
            Self::Field(f) => {
                for (o, s) in out.chunks_exact_mut(32).zip(&f[first..first + count]) {
                    put_u64s(o, s.into_bigint().as_ref());
                }
            }
            Self::Words(w) => {
                out.copy_from_slice(bytemuck::cast_slice(&w[8 * first..8 * (first + count)]));
            }
        }
    }
}

impl<F: RawMontgomery> Scalars<'_, F> {
    /// The words of scalars `first..` into `out` (32 bytes a scalar) as the field stores them
    /// (arkworks' Montgomery form), for `msm_scalars_from_montgomery`; canonical words are
    /// copied as they are.
    fn write_montgomery(&self, first: usize, out: &mut [u8]) {
        let count = out.len() / 32;
        match self {
            Self::Field(f) => {
                for (o, s) in out.chunks_exact_mut(32).zip(&f[first..first + count]) {
                    put_u64s(o, s.raw_montgomery());
                }
            }
            Self::Words(_) => self.write_words(first, out),
        }
    }
}

/// One scalar's 32 bytes from its little-endian u64 limbs (zero above them).
fn put_u64s(out: &mut [u8], limbs: &[u64]) {
    out.fill(0);
    for (o, l) in out.chunks_exact_mut(8).zip(limbs) {
        o.copy_from_slice(&l.to_le_bytes());
    }
}

/// Whether `ZKGPU_MSM_HOST_SCALARS` is set (read once).
fn host_scalars_forced() -> bool {
    static FORCED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FORCED.get_or_init(|| std::env::var_os("ZKGPU_MSM_HOST_SCALARS").is_some())
}

/// Bit length of a scalar given as 8 little-endian u32 words.
fn scalar_bits(words: &[u32]) -> u32 {
    words
        .iter()
        .rposition(|&w| w != 0)
        .map_or(0, |k| 32 * k as u32 + 32 - words[k].leading_zeros())
}

/// Canonical scalars as 8 little-endian u32 words each (scalar fields of at most 256 bits).
fn scalar_words<F: PrimeField>(scalars: &[F]) -> Vec<u32> {
    let mut out = vec![0u32; scalars.len() * 8];
    out.par_chunks_mut(8 * 1024)
        .zip(scalars.par_chunks(1024))
        .for_each(|(o, s)| {
            Scalars::Field(s).write_words(0, bytemuck::cast_slice_mut(o));
        });
    out
}

/// Everything about one MSM that follows from `n` and the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shape {
    n: u32,
    c: u32,
    /// Windows of the scalars' digits.
    digit_windows: u32,
    /// Base sets sharing the scalars, and the points between two sets' starts (0 for one).
    sets: u32,
    set_stride: u32,
    /// Bucket windows per set: the digit windows, or fewer for folded bases (digit window w
    /// goes to bucket window `w mod fold_windows`).
    set_windows: u32,
    fold_windows: u32,
    /// Levels stored per set of folded bases (1: not folded).
    folds: u32,
    /// Digit windows per bucket window at most: a bucket window holds up to `n load` entries.
    load: u32,
    /// Bucket windows: `sets x set_windows` (set k's window w is `k set_windows + w`).
    windows: u32,
    /// Per window, `2^(c-1) + 1` (bucket 0 stays empty).
    buckets: u32,
    slots: u32,
    segments: u32,
    chunk: u32,
    /// Chunks per window at most: `sum_b ceil(s_b / L) <= n / L + (non-empty buckets)`.
    cap: u32,
    chunk_slots: u32,
    /// Bound on the scalars' bit length (the field's unless configured).
    scalar_bits: u32,
    /// Partial sums per invocation and tree level: segment sums, chunk sums.
    tree_group: u32,
    chunk_group: u32,
}

impl Shape {
    /// The shape for `n` points. Without a configured window width, the default is narrowed
    /// until every working buffer fits in `max_binding` bytes (WebGPU's and lavapipe's 128 MiB
    /// would not hold the bucket sums of 2^18 G1 points with 15-bit windows).
    /// Folded bases fix the width to theirs.
    fn new<C: GpuCurve>(
        n: usize,
        sets: (u32, u32),
        fold: Option<FoldLayout>,
        config: MsmConfig,
        max_binding: u64,
    ) -> Result<Self> {
        let mut shape = Self::with_window::<C>(n, sets, fold, config)?;
        if config.window_bits.is_none() && fold.is_none() {
            while shape.largest_buffer::<C>() > max_binding && shape.c > 2 {
                let narrower = MsmConfig {
                    window_bits: Some(shape.c - 1),
                    ..config
                };
                shape = Self::with_window::<C>(n, sets, fold, narrower)?;
            }
        }
        // The reduction's outputs grow with the segments (one row per bit of the segment
        // index): fewer segments where they would not fit one binding.
        if config.reduce_segments.is_none() {
            while shape.seg_out_bytes::<C>() > max_binding && shape.segments > 1 {
                shape.segments /= 2;
            }
        }
        Ok(shape)
    }

    /// Bytes of the reduction's outputs: each window's block of rows ([`RowLayout`]).
    fn seg_out_bytes<C: GpuCurve>(&self) -> u64 {
        u64::from(self.windows)
            * u64::from(RowLayout::new(self.segments, self.windows).block())
            * C::acc_words() as u64
            * 4
    }

    /// Bytes of the largest working buffer.
    fn largest_buffer<C: GpuCurve>(&self) -> u64 {
        let point = C::acc_words() as u64 * 4;
        let sums = u64::from(self.slots) * point;
        let partials = u64::from(self.chunk_slots) * point;
        let entries = u64::from(self.windows) * u64::from(self.n) * u64::from(self.load) * 4;
        sums.max(partials).max(entries)
    }

    fn with_window<C: GpuCurve>(
        n: usize,
        sets: (u32, u32),
        fold: Option<FoldLayout>,
        config: MsmConfig,
    ) -> Result<Self> {
        let (sets, set_stride) = sets;
        let folds = fold.map_or(1, |f| f.folds);
        let set_stride = if sets > 1 || folds > 1 { set_stride } else { 0 };
        let c = match (fold, config.window_bits) {
            (Some(f), Some(c)) if c != f.c => {
                return Err(MsmError::Config(format!(
                    "window_bits {c}: these bases were folded for {}-bit windows",
                    f.c
                )));
            }
            (Some(f), _) => f.c,
            (None, c) => c.unwrap_or_else(|| default_window_bits(n)),
        };
        if !(2..=MAX_WINDOW_BITS).contains(&c) {
            return Err(MsmError::Config(format!(
                "window_bits {c} is outside 2..={MAX_WINDOW_BITS}"
            )));
        }
        let n =
            u32::try_from(n).map_err(|_| MsmError::Config(format!("{n} points exceed 2^32")))?;
        let field_bits = C::Scalar::MODULUS_BIT_SIZE;
        let bits = config.scalar_bits.unwrap_or(field_bits);
        if !(1..=field_bits).contains(&bits) {
            return Err(MsmError::Config(format!(
                "scalar_bits {bits} is outside 1..={field_bits}"
            )));
        }
        let digit_windows = window_count(bits, c);
        let fold_windows = fold.map_or(digit_windows, |f| f.fold_windows);
        let set_windows = digit_windows.min(fold_windows);
        let load = digit_windows.div_ceil(fold_windows);
        debug_assert!(
            load <= folds,
            "folded for fewer windows than the scalars have"
        );
        let windows = set_windows
            .checked_mul(sets.max(1))
            .ok_or_else(|| MsmError::Config(format!("{sets} base sets are too many")))?;
        // Entries of one bucket window (and of all of them, indexed by u32 in the kernels).
        let window_entries = n
            .checked_mul(load)
            .filter(|e| u64::from(*e) * u64::from(windows) <= u64::from(u32::MAX))
            .ok_or_else(|| {
                MsmError::Config(format!("{n} points x {digit_windows} windows exceed 2^32"))
            })?;
        let buckets = (1u32 << (c - 1)) + 1;
        let per_window = buckets - 1;
        // Per window as for one set: the reduction is latency-bound, so more sets' windows
        // run in the time of one.
        let segments = config
            .reduce_segments
            .unwrap_or_else(|| default_reduce_segments(per_window, set_windows));
        if !segments.is_power_of_two() || segments > per_window {
            return Err(MsmError::Config(format!(
                "reduce_segments {segments} must be a power of two up to {per_window}"
            )));
        }
        let tree_group = config.tree_group.unwrap_or(DEFAULT_TREE_GROUP);
        let chunk_group = config
            .chunk_group
            .unwrap_or_else(|| default_chunk_group(C::DEGREE));
        for (name, g) in [("tree_group", tree_group), ("chunk_group", chunk_group)] {
            if !(2..=1024).contains(&g) {
                return Err(MsmError::Config(format!("{name} {g} is outside 2..=1024")));
            }
        }
        // From the points, not a folded window's entries: the chunks then number as many as
        // without folding (each bucket gets more of them), and so do the accumulation's
        // invocations (on the H100, chunks from the folded window's mean bucket made about a
        // tenth as many chunks for 2^16 G1 points and doubled the accumulation time).
        let entries = u64::from(window_entries) * u64::from(windows);
        let chunk = config
            .chunk
            .unwrap_or_else(|| default_chunk(n as usize, c, entries));
        if chunk == 0 {
            return Err(MsmError::Config("chunk must be at least 1".into()));
        }
        let cap = window_entries.div_ceil(chunk) + buckets;
        let chunk_slots = u32::try_from(u64::from(windows) * u64::from(cap))
            .map_err(|_| MsmError::Config(format!("{windows} x {cap} chunks exceed 2^32")))?;
        let slots = windows.checked_mul(buckets).ok_or_else(|| {
            MsmError::Config(format!("{windows} x {buckets} buckets exceed 2^32"))
        })?;
        Ok(Self {
            n,
            c,
            digit_windows,
            sets: sets.max(1),
            set_stride,
            set_windows,
            fold_windows,
            folds,
            load,
            windows,
            buckets,
            slots,
            segments,
            chunk,
            cap,
            chunk_slots,
            scalar_bits: bits,
            tree_group,
            chunk_group,
        })
    }
}

/// The multiples to store for `len` bases folded as `fold` (None: not folded).
fn fold_layout<C: GpuCurve>(len: usize, fold: Fold) -> Result<Option<FoldLayout>> {
    let c = fold.window_bits.unwrap_or_else(|| default_window_bits(len));
    if !(2..=MAX_WINDOW_BITS).contains(&c) {
        return Err(MsmError::Config(format!(
            "window_bits {c} is outside 2..={MAX_WINDOW_BITS}"
        )));
    }
    let windows = window_count(C::Scalar::MODULUS_BIT_SIZE, c);
    let folds = fold.folds.clamp(1, windows.min(MAX_FOLDS));
    if folds == 1 {
        return Ok(None);
    }
    let fold_windows = windows.div_ceil(folds);
    Ok(Some(FoldLayout {
        c,
        folds: windows.div_ceil(fold_windows),
        fold_windows,
    }))
}

/// Most points per set and part of prepared bases of `sets` sets when a storage binding
/// holds `max_binding` bytes.
fn part_len<C: GpuCurve>(max_binding: u64, sets: usize) -> usize {
    let sets = sets.max(1) as u64;
    let per_point = (C::affine_packed_words() as u64 * 4 * sets).max(32);
    // Shapes index points (of all sets) with u32.
    let mut len = (max_binding / per_point).clamp(1, (1 << 31) / sets) as usize;
    let shape = |len: usize| {
        Shape::new::<C>(
            len,
            (sets as u32, len as u32),
            None,
            MsmConfig::default(),
            max_binding,
        )
    };
    while len > 1 && shape(len).is_ok_and(|s| s.largest_buffer::<C>() > max_binding) {
        len /= 2;
    }
    len
}

/// The pipelines of one MSM.
struct Pipelines {
    digits: std::sync::Arc<Pipeline>,
    scan_blocks: std::sync::Arc<Pipeline>,
    scan: std::sync::Arc<Pipeline>,
    scatter: std::sync::Arc<Pipeline>,
    chunks: std::sync::Arc<Pipeline>,
    order: std::sync::Arc<Pipeline>,
    args: std::sync::Arc<Pipeline>,
    acc: std::sync::Arc<Pipeline>,
    combine: std::sync::Arc<Pipeline>,
    reduce: std::sync::Arc<Pipeline>,
    /// `msm_scalars_from_montgomery`, where the scalar field has a module.
    convert: Option<std::sync::Arc<Pipeline>>,
}

/// Working buffers and parameters of one MSM shape (see [`GpuMsm::scratch_for`]).
#[derive(Debug)]
struct Scratch {
    shape: Shape,
    scalars: wgpu::Buffer,
    digits: wgpu::Buffer,
    counts: wgpu::Buffer,
    cursors: wgpu::Buffer,
    offsets: wgpu::Buffer,
    entries: wgpu::Buffer,
    sums: wgpu::Buffer,
    chunk_counts: wgpu::Buffer,
    chunk_offsets: wgpu::Buffer,
    chunk_hist: wgpu::Buffer,
    /// The scans' block totals: `windows x scan_blocks(buckets)` (each scan reuses it).
    block_sums: wgpu::Buffer,
    bin_offsets: wgpu::Buffer,
    bin_cursors: wgpu::Buffer,
    chunk_order: wgpu::Buffer,
    partials: wgpu::Buffer,
    /// Buckets whose sums the chunk sums pass writes: count, most chunks, slots.
    combine_list: wgpu::Buffer,
    /// Indirect dispatch sizes of the chunk sums (`msm_combine_args`).
    dispatch_args: wgpu::Buffer,
    gparams: wgpu::Buffer,
    seg_out: wgpu::Buffer,
    bparams: wgpu::Buffer,
    ccparams: wgpu::Buffer,
    csparams: wgpu::Buffer,
    hsparams: wgpu::Buffer,
    aparams: wgpu::Buffer,
    mparams: wgpu::Buffer,
    /// Parameters of the tree levels over large buckets' chunks (msm_combine_chunks, mode 1).
    chunk_levels: Vec<wgpu::Buffer>,
    rparams: wgpu::Buffer,
    levels: Vec<TreeLevel>,
    /// Sums per row of a window's block that the tree levels leave for the host.
    left: Vec<u32>,
}

/// One level of the tree that sums each window's segment sums.
#[derive(Debug)]
struct TreeLevel {
    first: wgpu::Buffer,
    count: wgpu::Buffer,
    out: wgpu::Buffer,
    params: wgpu::Buffer,
    /// Groups over all windows.
    groups: u32,
}

/// The rows of one window's block of reduction outputs (`msm_reduce_segments`): row 0 holds
/// every segment's weighted sum `S_t`, row `i + 1` the plain sums `R_t` of the segments whose
/// index has bit `i` set (`segments / 2` of them).
#[derive(Clone, Debug)]
struct RowLayout {
    rows: Vec<u32>,
    /// Sums per row the tree levels stop at: about [`HOST_SUMS`] over all `windows`.
    target: u32,
}

impl RowLayout {
    fn new(segments: u32, windows: u32) -> Self {
        let bits = segments.trailing_zeros();
        let mut rows = vec![segments];
        rows.extend((0..bits).map(|_| segments / 2));
        let target = (HOST_SUMS / (windows.max(1) * rows.len() as u32)).max(1);
        Self { rows, target }
    }

    /// Points per window's block.
    fn block(&self) -> u32 {
        self.rows.iter().sum()
    }
}

/// The two dispatches of one scan over a grid of (blocks, windows): block totals, then
/// offsets (`bind` holds the two bind groups).
fn scan_stages<'a>(
    p: &'a Pipelines,
    bind: &'a (wgpu::BindGroup, wgpu::BindGroup),
    blocks: u32,
    windows: u32,
) -> [(Stage, &'a Pipeline, &'a wgpu::BindGroup, Dispatch); 2] {
    let grid = Dispatch::Grid(blocks, windows);
    [
        (Stage::Scan, &p.scan_blocks, &bind.0, grid),
        (Stage::Scan, &p.scan, &bind.1, grid),
    ]
}

/// How a pass is dispatched: a grid of workgroups, or indirectly from `dispatch_args` at a
/// byte offset.
#[derive(Clone, Copy, Debug)]
enum Dispatch {
    Grid(u32, u32),
    Indirect(u64),
}

/// GPU stages, as [`MsmTimings`] groups them.
#[derive(Clone, Copy, Debug)]
enum Stage {
    Digits,
    Scan,
    Scatter,
    Accumulate,
    Combine,
    Reduce,
}

/// The window combination. Each window's block holds what the GPU's tree levels left of its
/// rows (`left[k]` sums of row `k`, [`RowLayout`]): the window's total is
/// `row 0 + 2^seg_bits sum_i 2^i row (i + 1)` (Horner over the rows), and then Horner over
/// windows gives `sum_w 2^(c w) W_w`. Rows are decoded and summed on the host's threads.
fn combine_windows<C: GpuCurve>(
    words: &[u32],
    left: &[u32],
    seg_bits: u32,
    c: u32,
) -> std::result::Result<C::Projective, zkgpu_limbs::DecodeError> {
    let point = C::acc_words();
    let per: usize = left.iter().map(|&k| k as usize).sum();
    let windows = words.len() / (per * point).max(1);
    // Every row of every window, summed on the host's threads.
    let mut runs = Vec::with_capacity(windows * left.len());
    for w in 0..windows {
        let mut at = w * per;
        for &k in left {
            runs.push(&words[at * point..(at + k as usize) * point]);
            at += k as usize;
        }
    }
    let rows = runs
        .into_par_iter()
        .map(|run| {
            Ok(decode_projective::<C>(run)?
                .into_iter()
                .sum::<C::Projective>())
        })
        .collect::<std::result::Result<Vec<C::Projective>, _>>()?;
    let mut acc = C::Projective::zero();
    for window in rows.chunks(left.len().max(1)).rev() {
        for _ in 0..c {
            acc.double_in_place();
        }
        // row 0 + 2^seg_bits (row 1 + 2 (row 2 + 2 (...))).
        let mut weighted = C::Projective::zero();
        for row in window[1..].iter().rev() {
            weighted.double_in_place();
            weighted += row;
        }
        for _ in 0..seg_bits {
            weighted.double_in_place();
        }
        acc += weighted + window[0];
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zkgpu_curves::Bls12_381G1;

    #[test]
    fn default_segments_and_chunks() {
        // About 16,384 segments in all, at least 4 buckets each.
        assert_eq!(default_reduce_segments(1 << 15, 1), 8192);
        assert_eq!(default_reduce_segments(1 << 19, 1), 16_384);
        assert_eq!(default_reduce_segments(1 << 15, 16), 1024);
        assert_eq!(default_reduce_segments(1 << 12, 20), 512);
        assert_eq!(default_reduce_segments(8, 1), 2);
        assert_eq!(default_reduce_segments(2, 1), 1);
        // Four times the mean bucket, floored by entries / 2^18 within 16..=48, at most 192:
        // 2^16 and 2^20 G1 points folded (16 and 13 levels), 2^24 unfolded (16 windows).
        assert_eq!(default_chunk(1 << 16, 16, 1 << 20), 16);
        assert_eq!(default_chunk(1 << 20, 20, 13 << 20), 48);
        assert_eq!(default_chunk(1 << 20, 16, 16 << 20), 128);
        assert_eq!(default_chunk(1 << 24, 16, 16 << 24), MAX_DEFAULT_CHUNK);
        assert_eq!(default_chunk(1000, 8, 32_000), 32);
    }

    #[test]
    fn parts_fit_the_binding_limit() {
        fn check_sets<C: GpuCurve>(max_binding: u64, sets: usize, expect: usize) {
            let len = part_len::<C>(max_binding, sets);
            assert_eq!(len, expect, "{} x {sets} in {max_binding} bytes", C::ID);
            let layout = (sets as u32, len as u32);
            let shape =
                Shape::new::<C>(len, layout, None, MsmConfig::default(), max_binding).unwrap();
            assert!(shape.largest_buffer::<C>() <= max_binding, "{shape:?}");
            assert_eq!(shape.windows, sets as u32 * shape.digit_windows);
            assert_eq!(shape.set_windows, shape.digit_windows);
            let bytes = (sets * len) as u64 * C::affine_packed_words() as u64 * 4;
            assert!(bytes <= max_binding);
        }
        fn check<C: GpuCurve>(max_binding: u64, expect: usize) {
            check_sets::<C>(max_binding, 1, expect);
        }
        // WebGPU's default 128 MiB: packed points of 96 bytes (G1) and 192 (G2); for
        // ed-on-bls12-377 (64 bytes) a working buffer reaches the limit first.
        check::<Bls12_381G1>(128 << 20, 1_398_101);
        check::<zkgpu_curves::Bls12_381G2>(128 << 20, 699_050);
        check::<zkgpu_curves::EdOnBls12_377>(128 << 20, 1_048_576);
        // 4 GiB bindings: 2^26 G1 points in two parts.
        check::<Bls12_381G1>(4 << 30, 44_739_242);
        // The u32 index bound.
        assert_eq!(part_len::<Bls12_381G1>(u64::MAX, 1), 1 << 31);
        // Three sets (Groth16's A, B in G1, L): a third of the points per part, the entries
        // of 3 x 16 windows within the limit.
        check_sets::<Bls12_381G1>(128 << 20, 3, 466_033);
        check_sets::<Bls12_381G1>(4 << 30, 3, 14_913_080);
    }

    #[test]
    fn folded_default_window_is_about_log2_n_when_every_window_folds() {
        type G1 = Bls12_381G1;
        let big = 1u64 << 40;
        // 2^20 points, all 13 windows of 20 bits folded: c = 20; fewer levels: the plain width.
        assert_eq!(default_folded_window_bits::<G1>(1 << 20, 32, 1, big), 20);
        assert_eq!(default_folded_window_bits::<G1>(1 << 20, 13, 3, big), 20);
        assert_eq!(
            default_folded_window_bits::<G1>(1 << 20, 12, 1, big),
            default_window_bits(1 << 20)
        );
        assert_eq!(default_folded_window_bits::<G1>(1 << 16, 32, 1, big), 16);
        assert_eq!(default_folded_window_bits::<G1>(1 << 26, 32, 1, big), 20);
        assert_eq!(default_folded_window_bits::<G1>(20, 32, 1, big), 3);
        // A 128 MiB binding cannot hold the 2^19 + 1 G1 bucket sums of c = 20.
        let small = 128 << 20;
        let c = default_folded_window_bits::<G1>(1 << 20, 32, 1, small);
        assert!(c < 20, "{c}");
        assert!(((1u64 << (c - 1)) + 1) * G1::acc_words() as u64 * 4 <= small);
    }

    #[test]
    fn reduction_rows_fit_small_bindings() {
        use zkgpu_curves::{Bls12_381G2, EdOnBls12_377};
        fn check<C: GpuCurve>() {
            let limit = 128 << 20;
            for log_n in [5, 10, 16, 20, 22] {
                for sets in [1, 3] {
                    for (c, segments) in [(None, None), (Some(4), None), (Some(6), Some(2))] {
                        let config = MsmConfig {
                            window_bits: c,
                            reduce_segments: segments,
                            ..MsmConfig::default()
                        };
                        let shape =
                            Shape::new::<C>(1 << log_n, (sets, 1 << log_n), None, config, limit)
                                .unwrap();
                        assert!(shape.seg_out_bytes::<C>() <= limit, "{shape:?}");
                        assert!(shape.segments >= 1 && shape.segments.is_power_of_two());
                        if let Some(k) = segments {
                            assert_eq!(shape.segments, k);
                        }
                    }
                }
            }
        }
        check::<Bls12_381G1>();
        check::<Bls12_381G2>();
        check::<EdOnBls12_377>();
        // Three G2 sets of 2^16 points: under 128 MiB the default segment count halves (66
        // windows of 512 segments would need 178 MB of rows); without a limit it does not.
        let n = 1 << 16;
        let shape = |limit| {
            Shape::new::<Bls12_381G2>(n, (3, n as u32), None, MsmConfig::default(), limit).unwrap()
        };
        let (small, wide) = (shape(128 << 20), shape(u64::MAX));
        assert!(small.segments < wide.segments, "{small:?} {wide:?}");
        assert!(small.seg_out_bytes::<Bls12_381G2>() <= 128 << 20);
        // Row 0 holds every segment's sum, then one row per bit of the segment index.
        let rows = RowLayout::new(16, 1);
        assert_eq!(rows.rows, [16, 8, 8, 8, 8]);
        assert_eq!(rows.block(), 48);
        assert_eq!(rows.target, HOST_SUMS / 5);
        assert_eq!(RowLayout::new(1, 2).rows, [1]);
        // Many windows: the host's share stays near HOST_SUMS (one sum per row at least).
        assert_eq!(RowLayout::new(1024, 16).target, HOST_SUMS / (16 * 11));
        assert_eq!(RowLayout::new(1024, 48).target, 1);
    }

    #[test]
    fn default_windows_narrow_to_fit_small_bindings() {
        let n = 1 << 18;
        let wide =
            Shape::new::<Bls12_381G1>(n, (1, 0), None, MsmConfig::default(), u64::MAX).unwrap();
        let limit = 128 << 20;
        let narrow =
            Shape::new::<Bls12_381G1>(n, (1, 0), None, MsmConfig::default(), limit).unwrap();
        assert!(wide.largest_buffer::<Bls12_381G1>() > limit, "{wide:?}");
        assert!(narrow.c < wide.c, "{narrow:?}");
        assert!(
            narrow.largest_buffer::<Bls12_381G1>() <= limit,
            "{narrow:?}"
        );
        // A configured width is kept (the allocation then reports BufferTooLarge).
        let fixed = MsmConfig {
            window_bits: Some(wide.c),
            ..MsmConfig::default()
        };
        assert_eq!(
            Shape::new::<Bls12_381G1>(n, (1, 0), None, fixed, limit)
                .unwrap()
                .c,
            wide.c
        );
    }
}
