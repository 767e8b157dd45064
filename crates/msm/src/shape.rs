//! Everything about one MSM that follows from its size, its bases and its configuration:
//! windows, buckets, chunks, reduction segments, and the rows the host combines.

use ark_ff::PrimeField;
use zkgpu_curves::GpuCurve;

use crate::config::*;
use crate::{MsmConfig, MsmError, Result, window_count};
use zkgpu_shaders::contract::msm_buckets as bk;

/// The stored multiples of folded bases (see [`crate::Fold`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FoldLayout {
    pub(crate) c: u32,
    pub(crate) folds: u32,
    pub(crate) fold_windows: u32,
}

/// Buckets per workgroup of the scans.
pub(crate) use zkgpu_shaders::contract::msm_buckets::SCAN_BLOCK;

/// Workgroups per window of a scan over `buckets` entries.
pub(crate) fn scan_blocks(buckets: u32) -> u32 {
    buckets.div_ceil(SCAN_BLOCK).max(1)
}

/// Everything about one MSM that follows from `n` and the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) n: u32,
    pub(crate) c: u32,
    /// Windows of the scalars' digits.
    pub(crate) digit_windows: u32,
    /// Base sets sharing the scalars, and the points between two sets' starts (0 for one).
    pub(crate) sets: u32,
    pub(crate) set_stride: u32,
    /// Bucket windows per set: the digit windows, or fewer for folded bases (digit window w
    /// goes to bucket window `w mod fold_windows`).
    pub(crate) set_windows: u32,
    pub(crate) fold_windows: u32,
    /// Levels stored per set of folded bases (1: not folded).
    pub(crate) folds: u32,
    /// Digit windows per bucket window at most: a bucket window holds up to `n load` entries.
    pub(crate) load: u32,
    /// Bucket windows: `sets x set_windows` (set k's window w is `k set_windows + w`).
    pub(crate) windows: u32,
    /// Per window, `2^(c-1) + 1` (bucket 0 stays empty).
    pub(crate) buckets: u32,
    pub(crate) slots: u32,
    pub(crate) segments: u32,
    pub(crate) chunk: u32,
    /// Entries per chunk of a bucket of more than `large_at` entries.
    pub(crate) large_chunk: u32,
    /// The entries above which a bucket is large ([`large_bucket_entries`]).
    pub(crate) large_at: u32,
    /// Chunks per window at most: `sum_b ceil(s_b / L) <= n / L + (non-empty buckets)`, `L`
    /// the shorter chunk length.
    pub(crate) cap: u32,
    pub(crate) chunk_slots: u32,
    /// Bound on the scalars' bit length (the field's unless configured).
    pub(crate) scalar_bits: u32,
    /// Partial sums per invocation and tree level: segment sums, chunk sums.
    pub(crate) tree_group: u32,
    pub(crate) chunk_group: u32,
    /// Reduction sums the host adds up ([`host_sums`]).
    pub(crate) host_sums: u32,
    /// One MSM over two parts of the bases ([`Shape::with_split`]): the first scalar of the
    /// second part, its first point (the first part's points), and its points per fold level;
    /// all 0 for one part.
    pub(crate) split: (u32, u32, u32),
}

impl Shape {
    /// The shape for `n` points. Without a configured window width, the default is narrowed
    /// until every working buffer fits in `max_binding` bytes (WebGPU's and lavapipe's 128 MiB
    /// would not hold the bucket sums of 2^18 G1 points with 15-bit windows).
    /// Folded bases fix the width to theirs.
    pub(crate) fn new<C: GpuCurve>(
        n: usize,
        sets: (u32, u32),
        fold: Option<FoldLayout>,
        config: MsmConfig,
        max_binding: u64,
    ) -> Result<Self> {
        // Large buckets' shorter default chunks are the first to go where buffers would not
        // fit a binding (WebGPU's 128 MiB): every chunk then has the one length, and the
        // window and part lengths are what they were without them.
        let one_length = |s: Shape| {
            if config.large_chunk.is_some() || s.large_chunk == s.chunk {
                return Ok(s);
            }
            let one = MsmConfig {
                window_bits: Some(s.c),
                chunk: Some(s.chunk),
                large_chunk: Some(s.chunk),
                ..config
            };
            Self::with_window::<C>(n, sets, fold, one)
        };
        let mut shape = Self::with_window::<C>(n, sets, fold, config)?;
        if config.window_bits.is_none() && fold.is_none() {
            if shape.window_buffers::<C>() > max_binding {
                shape = one_length(shape)?;
            }
            while shape.window_buffers::<C>() > max_binding && shape.c > 2 {
                let narrower = MsmConfig {
                    window_bits: Some(shape.c - 1),
                    ..config
                };
                shape = Self::with_window::<C>(n, sets, fold, narrower)?;
                if shape.window_buffers::<C>() > max_binding {
                    shape = one_length(shape)?;
                }
            }
        }
        // Chunk sums: one per chunk, and a smaller part can get shorter default chunks (more
        // of them) than the part length was planned with: longer chunks where they would not
        // fit one binding.
        let partials = |s: &Shape| s.buffer_bytes::<C>().partials;
        if partials(&shape) > max_binding {
            shape = one_length(shape)?;
        }
        if config.chunk.is_none() {
            while partials(&shape) > max_binding && shape.chunk < MAX_DEFAULT_CHUNK {
                let chunk = (shape.chunk * 2).min(MAX_DEFAULT_CHUNK);
                let longer = MsmConfig {
                    window_bits: Some(shape.c),
                    chunk: Some(chunk),
                    large_chunk: config.large_chunk.map(|l| l.min(chunk)).or(Some(chunk)),
                    ..config
                };
                shape = Self::with_window::<C>(n, sets, fold, longer)?;
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
    pub(crate) fn seg_out_bytes<C: GpuCurve>(&self) -> u64 {
        u64::from(self.windows)
            * u64::from(RowLayout::new(self.segments, self.windows, self.host_sums).block())
            * C::acc_packed_words() as u64
            * 4
    }

    /// The bytes of every working buffer that grows with the shape: what `scratch_for`
    /// allocates (besides the chunk-size histogram's few bins and the uniforms).
    pub(crate) fn buffer_bytes<C: GpuCurve>(&self) -> ScratchBytes {
        let point = C::acc_packed_words() as u64 * 4;
        let chunk_slots = u64::from(self.chunk_slots);
        let n = u64::from(self.n);
        ScratchBytes {
            scalars: n * 32,
            digits: u64::from(self.digit_windows) * n * 4,
            slots: u64::from(self.slots) * 4,
            entries: u64::from(self.windows) * n * u64::from(self.load) * 4,
            sums: u64::from(self.slots) * point,
            block_sums: u64::from(self.windows) * u64::from(scan_blocks(self.buckets)) * 4,
            chunk_order: chunk_slots * 4 * u64::from(bk::CHUNK_ORDER_WORDS),
            partials: chunk_slots * point,
            seg_out: self.seg_out_bytes::<C>(),
            combine_list: (u64::from(bk::COMBINE_LIST_HEADER) + u64::from(self.slots)) * 4,
        }
    }

    /// Bytes of the largest working buffer.
    pub(crate) fn largest_buffer<C: GpuCurve>(&self) -> u64 {
        self.buffer_bytes::<C>()
            .all()
            .iter()
            .map(|&(_, b)| b)
            .max()
            .unwrap_or(0)
    }

    /// Bytes of the buffers a narrower window shrinks (bucket sums, chunk sums, entries).
    fn window_buffers<C: GpuCurve>(&self) -> u64 {
        let b = self.buffer_bytes::<C>();
        b.sums.max(b.partials).max(b.entries)
    }

    pub(crate) fn with_window<C: GpuCurve>(
        n: usize,
        sets: (u32, u32),
        fold: Option<FoldLayout>,
        config: MsmConfig,
    ) -> Result<Self> {
        let (sets, set_stride) = sets;
        let folds = fold.map_or(1, |f| f.folds);
        let set_stride = if sets > 1 || folds > 1 { set_stride } else { 0 };
        let c = window_bits::<C>(n, fold, config)?;
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
        // run in the time of one. Over Fq2, whose additions take about three times as long,
        // twice as many segments in all (shorter serial chains): BLS12-381 G2 2^20 on the
        // H100, reduction 12.5 -> 11.1 ms (docs/log/2026-11.md).
        let per_degree = if C::DEGREE == 2 {
            (set_windows / 2).max(1)
        } else {
            set_windows
        };
        let segments = config
            .reduce_segments
            .unwrap_or_else(|| default_reduce_segments(per_window, per_degree));
        if !segments.is_power_of_two() || segments > per_window {
            return Err(MsmError::Config(format!(
                "reduce_segments {segments} must be a power of two up to {per_window}"
            )));
        }
        let (tree_group, chunk_group) = tree_groups(config)?;
        // From the points, not a folded window's entries: the chunks then number as many as
        // without folding (each bucket gets more of them), and so do the accumulation's
        // invocations (on the H100, chunks from the folded window's mean bucket made about a
        // tenth as many chunks for 2^16 G1 points and doubled the accumulation time).
        let entries = u64::from(window_entries) * u64::from(windows);
        let chunk = config
            .chunk
            .unwrap_or_else(|| default_chunk(n as usize, c, entries));
        if !(1..=MAX_CHUNK).contains(&chunk) {
            return Err(MsmError::Config(format!(
                "chunk {chunk} must be within 1..={MAX_CHUNK}"
            )));
        }
        let large_chunk = config
            .large_chunk
            .unwrap_or_else(|| default_large_chunk(chunk, C::DEGREE));
        if !(1..=chunk).contains(&large_chunk) {
            return Err(MsmError::Config(format!(
                "large_chunk {large_chunk} must be within 1..=chunk ({chunk})"
            )));
        }
        // Every chunk has at least `large_chunk` entries but a bucket's last.
        let cap = window_entries.div_ceil(large_chunk) + buckets;
        let large_at = large_bucket_entries(chunk, chunk_group, window_entries, per_window);
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
            large_chunk,
            large_at,
            cap,
            chunk_slots,
            scalar_bits: bits,
            tree_group,
            chunk_group,
            host_sums: config.host_sums.unwrap_or_else(host_sums::<C>),
            split: (0, 0, 0),
        })
    }

    /// This shape over two parts of the bases: scalars from `split.0` on point at the second
    /// part, whose points are numbered from `split.1` with `split.2` per fold level.
    pub(crate) fn with_split(self, split: (u32, u32, u32)) -> Self {
        Self { split, ..self }
    }
}

/// The sizes of one shape's working buffers, in bytes (`slots`: each of the five buffers of
/// one word per bucket slot).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScratchBytes {
    pub(crate) scalars: u64,
    pub(crate) digits: u64,
    pub(crate) slots: u64,
    pub(crate) entries: u64,
    pub(crate) sums: u64,
    pub(crate) block_sums: u64,
    pub(crate) chunk_order: u64,
    pub(crate) partials: u64,
    pub(crate) seg_out: u64,
    pub(crate) combine_list: u64,
}

impl ScratchBytes {
    /// Every size with its buffer's label.
    pub(crate) fn all(&self) -> [(&'static str, u64); 10] {
        [
            ("msm scalars", self.scalars),
            ("msm digits", self.digits),
            ("msm bucket slots", self.slots),
            ("msm entries", self.entries),
            ("msm bucket sums", self.sums),
            ("msm scan block sums", self.block_sums),
            ("msm chunk order", self.chunk_order),
            ("msm chunk sums", self.partials),
            ("msm segment sums", self.seg_out),
            ("msm combine list", self.combine_list),
        ]
    }
}

/// The window width of an MSM of `n` points: the folded bases' (a configured width must agree),
/// else the configured one, else [`default_unfolded_window_bits`].
fn window_bits<C: GpuCurve>(n: usize, fold: Option<FoldLayout>, config: MsmConfig) -> Result<u32> {
    let c = match (fold, config.window_bits) {
        (Some(f), Some(c)) if c != f.c => {
            return Err(MsmError::Config(format!(
                "window_bits {c}: these bases were folded for {}-bit windows",
                f.c
            )));
        }
        (Some(f), _) => f.c,
        (None, c) => c.unwrap_or_else(|| default_unfolded_window_bits::<C>(n)),
    };
    if !(2..=MAX_WINDOW_BITS).contains(&c) {
        return Err(MsmError::Config(format!(
            "window_bits {c} is outside 2..={MAX_WINDOW_BITS}"
        )));
    }
    Ok(c)
}

/// The configured (or default) tree groups: segment sums and chunk sums per invocation.
fn tree_groups(config: MsmConfig) -> Result<(u32, u32)> {
    let tree_group = config.tree_group.unwrap_or(DEFAULT_TREE_GROUP);
    let chunk_group = config.chunk_group.unwrap_or(DEFAULT_CHUNK_GROUP);
    for (name, g) in [("tree_group", tree_group), ("chunk_group", chunk_group)] {
        if !(2..=1024).contains(&g) {
            return Err(MsmError::Config(format!("{name} {g} is outside 2..=1024")));
        }
    }
    Ok((tree_group, chunk_group))
}

/// Reduction sums that the host adds up per MSM part, at most (all windows' rows together,
/// [`RowLayout`]); the GPU sums longer rows in tree levels first. A level is a few serial
/// additions at low occupancy, while the host's time grows with the sums it gets
/// (docs/PERFORMANCE.md, "Where the MSM's defaults come from").
pub(crate) const HOST_SUMS: u32 = 1024;

/// [`HOST_SUMS`] for groups of 30-limb or extension fields, whose tree levels cost most. A
/// prime-field group of at most 8 packed words a coordinate (BN254 G1, ed-on-bls12-377)
/// gets [`FEW_HOST_SUMS`]: its levels cost half as much, and few enough sums are added on
/// the calling thread without waking the host's others (`combine::SEQUENTIAL_SUMS`).
/// [`crate::MsmConfig::host_sums`] overrides both.
pub(crate) fn host_sums<C: GpuCurve>() -> u32 {
    if C::DEGREE == 1 && C::packed_reg_words() <= 8 {
        FEW_HOST_SUMS
    } else {
        HOST_SUMS
    }
}

/// [`host_sums`] of the cheaper groups.
pub(crate) const FEW_HOST_SUMS: u32 = 128;

/// The rows of one window's block of reduction outputs (`msm_reduce_segments`): row 0 holds
/// every segment's weighted sum `S_t`, row `i + 1` the plain sums `R_t` of the segments whose
/// index has bit `i` set (`segments / 2` of them).
#[derive(Clone, Debug)]
pub(crate) struct RowLayout {
    pub(crate) rows: Vec<u32>,
    /// Sums per row the tree levels stop at: about `host_sums` ([`host_sums`]) over all
    /// `windows`.
    pub(crate) target: u32,
}

impl RowLayout {
    pub(crate) fn new(segments: u32, windows: u32, host_sums: u32) -> Self {
        let bits = segments.trailing_zeros();
        let mut rows = vec![segments];
        rows.extend((0..bits).map(|_| segments / 2));
        let target = (host_sums / (windows.max(1) * rows.len() as u32)).max(1);
        Self { rows, target }
    }

    /// Points per window's block.
    pub(crate) fn block(&self) -> u32 {
        self.rows.iter().sum()
    }
}

/// Average digits per bucket from which digit words keep their ranks, so that the scatter
/// needs no atomic of its own (H100, docs/log/2026-11.md, 2026-11-26): the histogram's
/// atomics then return their results, which costs more than the scatter saves where few
/// digits share a bucket (BN254 G1 2^20 folded, 26 a bucket: 0.06 ms more) and saves where
/// many do (BLS12-381 G1 2^24 with 16-bit windows, 512 a bucket: 2.3 ms less).
pub(crate) const RANKS_FROM_LOAD: u64 = 64;

/// The ranks `shape`'s digit words hold: all that fit (`u32::MAX`; the shaders cap it at
/// `2^(31 - c) - 1`) where its buckets get [`RANKS_FROM_LOAD`] digits or more on average,
/// else none (0).
pub(crate) fn default_rank_cap(shape: &Shape) -> u32 {
    let digits = u64::from(shape.n) * u64::from(shape.digit_windows);
    let buckets = u64::from(shape.set_windows) * u64::from(shape.buckets.saturating_sub(1));
    if digits >= RANKS_FROM_LOAD * buckets.max(1) {
        u32::MAX
    } else {
        0
    }
}

/// The entries above which a bucket is large (cut into [`MsmConfig::large_chunk`] chunks):
/// more than `chunk_group` chunks of `chunk`, and eight times a window's mean bucket. Uniform
/// scalars' buckets stay below (folded windows' buckets hold levels x the points' mean,
/// above `chunk x chunk_group`); repeated scalars' reach it.
pub(crate) fn large_bucket_entries(
    chunk: u32,
    chunk_group: u32,
    window_entries: u32,
    per_window: u32,
) -> u32 {
    let mean = window_entries.div_ceil(per_window.max(1));
    chunk
        .saturating_mul(chunk_group)
        .max(mean.saturating_mul(8))
}
