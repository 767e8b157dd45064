//! A transform's pass schedule and its twiddle tables, built once per domain and direction.

use ark_ff::Field;
use ark_poly::Radix2EvaluationDomain;
use zkgpu_runtime::{GpuContext, wgpu};

use crate::params::PassParams;
use crate::{Direction, ELEMENT_BYTES, NttError, NttField, Result, kernel_form};
use std::sync::{Arc, PoisonError};

/// Most bits one pass transforms: a tile of 2^8 elements of 40 bytes (20 limbs in 16-bit
/// halves) takes 10.3 KiB of WebGPU's 16 KiB of workgroup memory; 2^9 would not fit.
pub(crate) const MAX_PASS_BITS: u32 = 8;

/// The largest transform (log2) that gets a table of all its twists by default: 2^22
/// elements take 128 MiB (and the later passes' segment 0.5 MiB). Larger ones, and those
/// whose table exceeds a storage binding, compute each twist from two small tables (one more
/// multiplication a twist): on the H200, with a 512 MiB table, a 2^24 transform run on its
/// own was several times slower than from two tables (docs/log/2026-12-01-ntt-native.md).
pub const DEFAULT_MAX_TWIST_LOG: u32 = 22;

/// What identifies a plan: everything of the domain it reads (its size, and for the
/// direction its generator, coset offset and scale), and the engine's pass limits. ark-poly's
/// domains have public fields: a domain of one size with another generator (or offset) is
/// another plan.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PlanKey {
    log_n: u32,
    max_bits: u32,
    max_twist_log: u32,
    dir: Direction,
    /// The packed words of the generator, the offset and the scale `Plan::new` uses.
    elements: Vec<u32>,
}

/// The domain's elements a plan of direction `dir` is built from: the generator, the coset
/// offset and the scale.
fn plan_elements<F: NttField>(d: &Radix2EvaluationDomain<F>, dir: Direction) -> (F, F, F) {
    match dir {
        Direction::Forward => (d.group_gen, d.offset, F::one()),
        Direction::Inverse => (d.group_gen_inv, d.offset_inv, d.size_inv),
    }
}

impl PlanKey {
    pub(crate) fn new<F: NttField>(
        d: &Radix2EvaluationDomain<F>,
        dir: Direction,
        max_bits: u32,
        max_twist_log: u32,
    ) -> Self {
        let (g, offset, scale) = plan_elements(d, dir);
        let w = F::PACKED_WORDS;
        let mut elements = vec![0u32; 3 * w];
        for (k, x) in [g, offset, scale].iter().enumerate() {
            x.write_packed(&mut elements[k * w..(k + 1) * w]);
        }
        Self {
            log_n: d.log_size_of_group,
            max_bits,
            max_twist_log,
            dir,
            elements,
        }
    }
}

/// The passes' parameters (the per-call fields `per_transform`, `batch`, `grid_x` unset) and
/// the tables they index.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) passes: Vec<PassParams>,
    pub(crate) tables: wgpu::Buffer,
    /// `base^e * scale` for every `e < N`, read by the passes with `out_mode` 3: built on the
    /// GPU from two of `tables` ([`TwistSource`]; `GpuNtt::build_twists`).
    pub(crate) twists: Option<wgpu::Buffer>,
}

/// Where a plan's table of all twists comes from: the power `w^e` is the product of
/// `tables[hi + (e >> h)]` and `tables[lo + (e mod 2^h)]` (both in the kernels' form), one
/// multiplication an entry on the GPU instead of `2^log_n` on the host and their upload
/// (at 2^24, 0.6 s of host time and 512 MiB over PCIe per direction on the H100's host).
/// The table has two segments (shaders/kernels/ntt.wgsl, `twists`): the first pass's
/// `2^log_n` twists in its output order (entry `n2 2^first_k + k1` holds `w^(n2 k1)`), then,
/// where a later pass twists, `w^(x 2^first_k)` for `x < 2^(log_n - first_k)` from the
/// `strided` tables (unscaled where the first pass's carry 1/N).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TwistSource {
    pub(crate) log_n: u32,
    pub(crate) h: u32,
    pub(crate) hi: u32,
    pub(crate) lo: u32,
    pub(crate) first_k: u32,
    pub(crate) strided: Option<(u32, u32)>,
}

impl TwistSource {
    /// Entries of the table: the first pass's segment, then the strided one.
    pub(crate) fn entries(&self) -> u64 {
        twist_entries(self.log_n, self.first_k, self.strided.is_some())
    }
}

/// Entries of a table of all twists for `2^l` elements whose first pass has `first_k` bits,
/// with the later passes' strided segment where `strided`.
fn twist_entries(l: u32, first_k: u32, strided: bool) -> u64 {
    (1u64 << l) + if strided { 1u64 << (l - first_k) } else { 0 }
}

/// Splits `l` bits into `ceil(l / max)` passes as evenly as possible, larger passes first.
pub(crate) fn split_bits(l: u32, max: u32) -> Vec<u32> {
    if l == 0 {
        return Vec::new();
    }
    let p = l.div_ceil(max.clamp(1, MAX_PASS_BITS));
    (0..p).map(|i| l / p + u32::from(i < l % p)).collect()
}

/// Appends `base^(x 2^h) * scale` for `x < count_hi` and `base^y` for `y < 2^h`; returns their
/// offsets.
fn two_tables<F: Field>(out: &mut Vec<F>, base: F, h: u32, count_hi: u64, scale: F) -> (u32, u32) {
    let hi = out.len() as u32;
    let step = base.pow([1u64 << h]);
    let mut x = scale;
    for _ in 0..count_hi {
        out.push(x);
        x *= step;
    }
    let lo = out.len() as u32;
    let mut y = F::one();
    for _ in 0..(1u64 << h) {
        out.push(y);
        y *= base;
    }
    (hi, lo)
}

/// Where a plan's tables start in its twiddle buffer, and whether it has the table of all
/// twists.
struct Offsets {
    kmax: u32,
    h: u32,
    /// The two tables of the twists between passes.
    twist: (u32, u32),
    /// The first pass's twists scaled by 1/N (a plain inverse of two passes or more).
    scaled_twist: Option<u32>,
    /// The two tables of the index powers (coset factor, and 1/N where no twist takes it).
    index: Option<(u32, u32)>,
    full: bool,
}

/// Each pass's parameters: its radix bits and stride, which twist each output takes (two
/// tables, the full table, or index powers) and which index power each input takes.
fn pass_params(l: u32, bits: &[u32], dir: Direction, o: &Offsets) -> Vec<PassParams> {
    let p = bits.len();
    let mut passes = Vec::with_capacity(p);
    let mut s_log = 0u32;
    for (i, &k) in bits.iter().enumerate() {
        let last = i + 1 == p;
        let mut params = PassParams {
            n_log: l,
            k,
            s_log,
            out_mode: 0,
            in_mode: 0,
            h: o.h,
            out_hi: o.twist.0,
            out_lo: o.twist.1,
            in_hi: 0,
            in_lo: 0,
            roots: 0,
            roots_log: o.kmax,
            per_transform: 0,
            batch: 0,
            grid_x: 0,
            page_log: 31,
            tw2_off: 0,
            tw2_shift: 0,
        };
        if !last {
            params.out_mode = if o.full { 3 } else { 1 };
            if o.full && i > 0 {
                // The strided segment after the first pass's 2^l entries.
                params.tw2_off = 1 << l;
                params.tw2_shift = bits[0];
            }
            if i == 0
                && let Some(hi) = o.scaled_twist
            {
                params.out_hi = hi;
            }
        }
        if let Some((hi, lo)) = o.index {
            match dir {
                Direction::Forward if i == 0 => {
                    params.in_mode = 1;
                    params.in_hi = hi;
                    params.in_lo = lo;
                }
                Direction::Inverse if last => {
                    params.out_mode = 2;
                    params.out_hi = hi;
                    params.out_lo = lo;
                }
                _ => {}
            }
        }
        passes.push(params);
        s_log += k;
    }
    passes
}

/// The bytes of a plan's two buffers: its twiddle tables, and the table of all twists where
/// it has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PlanBytes {
    pub(crate) tables: u64,
    pub(crate) twists: u64,
}

/// What [`Plan::new`] would allocate for a domain of `2^l` elements (`coset`: an offset other
/// than one) under a binding of `max_binding` bytes, computed without the tables.
pub(crate) fn plan_bytes(
    l: u32,
    dir: Direction,
    coset: bool,
    max_bits: u32,
    max_twist_log: u32,
    max_binding: u64,
) -> PlanBytes {
    let n = 1u64 << l;
    let bits = split_bits(l, max_bits);
    let kmax = bits.iter().copied().max().unwrap_or(1);
    let h = l.div_ceil(2);
    let two = (n >> h) + (1u64 << h);
    let p = bits.len();
    let scaled = dir == Direction::Inverse && !coset && p >= 2;
    let index = coset || (dir == Direction::Inverse && p == 1);
    let entries = (1u64 << (kmax - 1)) + two * (1 + u64::from(scaled) + u64::from(index));
    let full = twist_entries(l, bits.first().copied().unwrap_or(0), p >= 3) * ELEMENT_BYTES;
    PlanBytes {
        tables: entries * ELEMENT_BYTES,
        twists: if p >= 2 && l <= max_twist_log && full <= max_binding {
            full
        } else {
            0
        },
    }
}

/// A plan's passes and tables on the host, before [`Plan::new`] uploads them.
pub(crate) struct HostPlan {
    pub(crate) passes: Vec<PassParams>,
    pub(crate) tables: Vec<u32>,
    /// The table of all twists, where the plan has one.
    pub(crate) twists: Option<TwistSource>,
}

impl HostPlan {
    pub(crate) fn new<F: NttField>(
        d: &Radix2EvaluationDomain<F>,
        dir: Direction,
        max_bits: u32,
        max_twist_log: u32,
        max_binding: u64,
    ) -> Self {
        let l = d.log_size_of_group;
        let n = 1u64 << l;
        let bits = split_bits(l, max_bits);
        let kmax = bits.iter().copied().max().unwrap_or(1);
        let h = l.div_ceil(2);
        let count_hi = n >> h;
        let (omega, coset, scale) = plan_elements(d, dir);
        let mut t: Vec<F> = Vec::new();
        // Inner roots (at offset 0): w_(2^kmax)^i, i < 2^(kmax - 1).
        let w_inner = omega.pow([n >> kmax]);
        let mut x = F::one();
        for _ in 0..(1u64 << (kmax - 1)) {
            t.push(x);
            x *= w_inner;
        }
        let (tw_hi, tw_lo) = two_tables(&mut t, omega, h, count_hi, F::one());
        let p = bits.len();
        let plain = coset.is_one();
        // Inverse: size_inv is folded into exactly one table product per element: the first
        // pass's twist when there is one and no coset factor, else the final index power.
        let scaled_twist = (dir == Direction::Inverse && plain && p >= 2)
            .then(|| two_tables(&mut t, omega, h, count_hi, scale).0);
        let index_tables = (!plain || (dir == Direction::Inverse && p == 1))
            .then(|| two_tables(&mut t, coset, h, count_hi, scale));
        // The table of all twists (where plan_bytes plans one): where a plain inverse scales
        // its first pass's twists by 1/N, its first segment holds the scaled ones, and the
        // later passes' segment the unscaled.
        let planned = plan_bytes(l, dir, !plain, max_bits, max_twist_log, max_binding);
        let twists = (planned.twists > 0).then(|| TwistSource {
            log_n: l,
            h,
            hi: scaled_twist.unwrap_or(tw_hi),
            lo: tw_lo,
            first_k: bits[0],
            strided: (p >= 3).then_some((tw_hi, tw_lo)),
        });
        let offsets = Offsets {
            kmax,
            h,
            twist: (tw_hi, tw_lo),
            scaled_twist,
            index: index_tables,
            full: twists.is_some(),
        };
        let passes = pass_params(l, &bits, dir, &offsets);
        let kernel: Vec<F> = t.into_iter().map(kernel_form).collect();
        Self {
            passes,
            tables: zkgpu_limbs::pack_slice(&kernel),
            twists,
        }
    }
}

impl Plan {
    /// The plan with its tables uploaded, and where its table of all twists comes from (the
    /// caller builds it on the GPU and sets `twists`).
    pub(crate) fn new<F: NttField>(
        ctx: &GpuContext,
        d: &Radix2EvaluationDomain<F>,
        dir: Direction,
        max_bits: u32,
        max_twist_log: u32,
    ) -> Result<(Self, Option<TwistSource>)> {
        let host = HostPlan::new(d, dir, max_bits, max_twist_log, ctx.max_binding_bytes());
        let tables = ctx.storage_buffer("ntt twiddles", &host.tables)?;
        let plan = Self {
            passes: host.passes,
            tables,
            twists: None,
        };
        Ok((plan, host.twists))
    }
}

/// The engine's plans: looked up, or built on first use and kept.
impl<F: NttField> crate::GpuNtt<F> {
    /// Whether the plan of `domain` in direction `dir` is built (then so is the pass's
    /// pipeline: a plan is built by a transform or by `prepare`, which make it too).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn has_plan(&self, domain: &Radix2EvaluationDomain<F>, dir: Direction) -> bool {
        let key = PlanKey::new(
            domain,
            dir,
            self.config.max_pass_bits,
            self.config.max_twist_log,
        );
        self.plans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&key)
    }

    /// The plan of `domain` in direction `dir`, built on first use (a new plan's table of
    /// all twists on the GPU: both pipelines are compiled then, side by side).
    pub(crate) async fn plan(
        &self,
        domain: &Radix2EvaluationDomain<F>,
        dir: Direction,
    ) -> Result<Arc<Plan>> {
        let log_n = domain.log_size_of_group;
        if log_n > 31 {
            return Err(NttError::Size {
                log_n,
                reason: "the kernels index elements with u32".into(),
            });
        }
        let key = PlanKey::new(
            domain,
            dir,
            self.config.max_pass_bits,
            self.config.max_twist_log,
        );
        if let Some(p) = self
            .plans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return Ok(p.clone());
        }
        let (mut plan, twists) = Plan::new(
            &self.ctx,
            domain,
            dir,
            self.config.max_pass_bits,
            self.config.max_twist_log,
        )?;
        if let Some(source) = twists {
            plan.twists = Some(self.build_twists(&plan.tables, source).await?);
        }
        // On wasm32 wgpu's types are neither Send nor Sync (the browser's WebGPU is
        // single-threaded), so neither is the Arc there; natively it is both.
        #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
        let plan = Arc::new(plan);
        self.plans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, plan.clone());
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_cover_the_bits_evenly() {
        assert!(split_bits(0, 9).is_empty());
        for l in 1..=32 {
            let b = split_bits(l, MAX_PASS_BITS);
            assert_eq!(b.iter().sum::<u32>(), l);
            assert!(b.iter().all(|&k| (1..=MAX_PASS_BITS).contains(&k)));
            assert_eq!(b.len() as u32, l.div_ceil(MAX_PASS_BITS));
            assert!(b.iter().max().unwrap_or(&0) - b.iter().min().unwrap_or(&0) <= 1);
        }
        assert_eq!(split_bits(20, 9), vec![7, 7, 6]);
        assert_eq!(split_bits(24, 9), vec![8, 8, 8]);
        assert_eq!(split_bits(24, 6), vec![6, 6, 6, 6]);
        assert_eq!(split_bits(3, 1), vec![1, 1, 1]);
    }

    /// `plan_bytes`, which the buffer plans are walked with, counts what `HostPlan` builds:
    /// every direction, plain and coset, pass widths and twist settings, a binding that
    /// holds the twists and one that does not.
    #[test]
    fn plan_bytes_counts_the_tables_built() {
        type F = ark_bls12_381::Fr;
        use ark_poly::EvaluationDomain;
        for l in 1..=13u32 {
            let plain = Radix2EvaluationDomain::<F>::new(1 << l).unwrap_or_else(|| panic!("2^{l}"));
            let coset = plain
                .get_coset(F::from(7u64))
                .unwrap_or_else(|| panic!("coset"));
            for (d, is_coset) in [(plain, false), (coset, true)] {
                for dir in [Direction::Forward, Direction::Inverse] {
                    for (bits, twist_log, binding) in [
                        (8, 24, 1u64 << 30),
                        (3, 24, 1 << 30),
                        (4, 0, 1 << 30),
                        (5, 24, 64),
                    ] {
                        let host = HostPlan::new(&d, dir, bits, twist_log, binding);
                        let want = plan_bytes(l, dir, is_coset, bits, twist_log, binding);
                        let twists = host.twists.map_or(0, |t| {
                            assert_eq!(t.log_n, l);
                            assert_eq!(t.strided.is_some(), host.passes.len() >= 3);
                            t.entries() * ELEMENT_BYTES
                        });
                        assert_eq!(
                            (host.tables.len() as u64 * 4, twists),
                            (want.tables, want.twists),
                            "2^{l} {dir:?} coset {is_coset} bits {bits} twists {twist_log} binding {binding}"
                        );
                    }
                }
            }
        }
    }
}
