//! Bases in GPU form: plain, in several sets sharing scalars, and folded with window
//! multiples computed on the GPU; stored in parts that fit one storage binding.

use ark_ff::PrimeField;
use zkgpu_curves::{GpuCurve, encode_affine_packed};
use zkgpu_runtime::{Checks, dispatch, grid, wgpu};

use crate::config::*;
use crate::params::*;
pub(crate) use crate::shape::FoldLayout;
use crate::shape::Shape;
use crate::{GpuMsm, MsmConfig, MsmError, Result, window_count};
use zkgpu_shaders::contract::msm_accumulate as acc;

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

/// Bases uploaded once, in GPU form, for many MSMs (a proving key's bases are fixed).
///
/// Stored in parts of at most [`GpuMsm::part_len`] points, each in its own buffer, so that no
/// storage binding exceeds the device's limit (WebGPU's default is 128 MiB: about 1.4M
/// packed BLS12-381 G1 points). An MSM runs once per part and adds the results. Several
/// base sets share each part while they fit one part together; where they do not, each
/// part holds one set ([`PreparedBases::sets_per_part`]).
#[derive(Debug)]
pub struct PreparedBases<C: GpuCurve> {
    /// The context whose device holds the parts.
    pub(crate) context: zkgpu_runtime::ContextId,
    pub(crate) parts: Vec<BasePart>,
    pub(crate) len: usize,
    /// Base sets ([`GpuMsm::prepare_sets`]; 1 for [`GpuMsm::prepare`]).
    pub(crate) sets: usize,
    /// Sets per part: `sets`, or 1 where the sets did not fit one part together (the parts
    /// then tile the bases once per set, set 0's parts first).
    pub(crate) sets_per_part: usize,
    /// Window multiples stored after each set's bases.
    pub(crate) fold: Option<FoldLayout>,
    pub(crate) _curve: std::marker::PhantomData<C>,
}

/// Bases `start..start + len` of a [`PreparedBases`]: of every set (the buffer holds the
/// sets' runs one after another, `len` points each; for folded bases each set's run is
/// followed by its multiples' runs), or of set `first_set` alone where each part holds one.
#[derive(Debug)]
pub(crate) struct BasePart {
    pub(crate) buffer: wgpu::Buffer,
    pub(crate) start: usize,
    pub(crate) len: usize,
    /// The first set it holds (0 where a part holds every set).
    pub(crate) first_set: usize,
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

    /// Base sets each part holds: all of them, or 1 where they did not fit one part
    /// together (each set then runs as its own MSM at its own window: faster than parts of
    /// all the sets at a narrower one, docs/log/2026-11.md).
    pub fn sets_per_part(&self) -> usize {
        self.sets_per_part
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

impl<C: GpuCurve> GpuMsm<C> {
    /// Uploads `bases` in GPU form, in parts of at most [`GpuMsm::part_len`] points.
    pub fn prepare(&self, bases: &[C::Affine]) -> Result<PreparedBases<C>> {
        self.prepare_sets(&[bases])
    }

    /// Uploads several base sets for MSMs that share their scalars (one [`crate::MsmRequest`]):
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
        let max = self.ctx.max_binding_bytes();
        let layout = match fold.window_bits {
            Some(_) => fold_layout::<C>(len, fold)?,
            None => default_fold_layout::<C>(len, fold.folds, sets.len(), max)?,
        };
        let Some(layout) = layout else {
            return self.upload_sets(sets, None);
        };
        let prepared = self.upload_sets(sets, Some(layout))?;
        let ctx = &self.ctx;
        let pipeline = ctx
            .pipeline(
                &self.accumulate_module,
                acc::entry::MSM_FOLD_BASES,
                Checks::TrustedLoops,
                OVERRIDES,
            )
            .await?;
        let to_affine = self.entries[4];
        let max = ctx.limits().max_compute_workgroups_per_dimension;
        for part in &prepared.parts {
            let count = u32::try_from(prepared.sets_per_part * part.len)
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
                },
            );
            let bg = ctx.bind_group(
                &pipeline,
                &[
                    (acc::VM_CODE, &self.code),
                    (acc::FOLD_BASES, &part.buffer),
                    (acc::FP, &params),
                ],
            );
            let mut enc = ctx
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("msm fold bases"),
                });
            dispatch(&mut enc, "msm fold bases", &pipeline, &bg, (x, y), None);
            // One part at a time: a part's multiples are seconds of GPU work at 2^20 points.
            ctx.submit_and_wait(enc)?;
        }
        Ok(prepared)
    }

    /// The most levels ([`Fold::folds`]) for which `sets` base sets of `len` points, with
    /// the default window width, still fit in one part (one storage binding), so that folding
    /// costs no extra pass; 1 if even the plain bases need several parts.
    pub fn folds_in_one_part(&self, len: usize, sets: usize) -> u32 {
        // Parts capped below the bases' length (`with_max_part`): no level fits one part.
        if self.max_part.is_some_and(|m| m < len) {
            return 1;
        }
        folds_in_one_part_for::<C>(len, sets, self.ctx.max_binding_bytes())
    }

    /// The most levels for which one set of `len` points, with the default window width,
    /// still runs as one MSM: in one part, or in two where this device runs two parts as one
    /// MSM (docs/msm.md "Limits"; their bases then take up to two bindings' memory). Several
    /// sets: [`GpuMsm::folds_in_one_part`].
    pub fn folds_in_one_msm(&self, len: usize, sets: usize) -> u32 {
        let one = self.folds_in_one_part(len, sets);
        if sets != 1 || !self.splits_parts() || self.max_part.is_some() {
            return one;
        }
        one.max(most_folds_in::<C>(len, 1, 2, self.ctx.max_binding_bytes()))
    }

    /// Encodes and uploads base sets, each followed by `fold`'s zeroed levels (filled on the
    /// GPU by the caller).
    pub(crate) fn upload_sets(
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
        let (per_part, part) = part_plan::<C>(
            len,
            sets.len(),
            fold,
            self.ctx.max_binding_bytes(),
            self.max_part,
        );
        let identity = encode_affine_packed::<C>(&[<C::Affine as ark_ec::AffineRepr>::zero()]);
        let tiles = len.div_ceil(part);
        let parts = (0..tiles * sets.len() / per_part)
            .map(|k| {
                let (start, first_set) = ((k % tiles) * part, (k / tiles) * per_part);
                let plen = part.min(len - start);
                // Each set's level-0 run is written; the fold levels stay as the new buffer's
                // zeros (filled on the GPU), so the host neither fills nor uploads them.
                let run_bytes = (plen * identity.len() * 4) as u64;
                let buffer = self.ctx.storage_zeroed(
                    &format!("{} bases, part {k}", C::ID),
                    run_bytes * (per_part * folds) as u64,
                )?;
                for (i, set) in sets[first_set..first_set + per_part].iter().enumerate() {
                    let have = &set[start.min(set.len())..(start + plen).min(set.len())];
                    let mut words = encode_affine_packed::<C>(have);
                    for _ in have.len()..plen {
                        words.extend_from_slice(&identity);
                    }
                    if !words.is_empty() {
                        self.ctx.queue().write_buffer(
                            &buffer,
                            run_bytes * (i * folds) as u64,
                            bytemuck::cast_slice(&words),
                        );
                    }
                }
                Ok(BasePart {
                    buffer,
                    start,
                    len: plen,
                    first_set,
                })
            })
            .collect::<Result<_>>()?;
        Ok(PreparedBases {
            context: self.ctx.id(),
            parts,
            len,
            sets: sets.len(),
            sets_per_part: per_part,
            fold,
            _curve: std::marker::PhantomData,
        })
    }
}

/// The multiples to store for `len` bases folded as `fold` (None: not folded).
pub(crate) fn fold_layout<C: GpuCurve>(len: usize, fold: Fold) -> Result<Option<FoldLayout>> {
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

/// How `sets` base sets of `len` points folded as `fold` are stored in parts: the sets per
/// part (all, or 1 where all of them would need several parts: each set then runs as its own
/// MSM, at its own wider window) and the most points per set and part (capped by
/// `max_part`, [`GpuMsm::with_max_part`]).
pub(crate) fn part_plan<C: GpuCurve>(
    len: usize,
    sets: usize,
    fold: Option<FoldLayout>,
    max_binding: u64,
    max_part: Option<usize>,
) -> (usize, usize) {
    let most = |sets: usize| {
        let m = part_len_for::<C>(max_binding, sets, fold);
        max_part.map_or(m, |cap| cap.min(m))
    };
    let together = most(sets);
    if sets > 1 && together < len {
        (1, most(1))
    } else {
        (sets.max(1), together)
    }
}

/// Most points per set and part of prepared bases of `sets` sets when a storage binding
/// holds `max_binding` bytes.
pub(crate) fn part_len<C: GpuCurve>(max_binding: u64, sets: usize) -> usize {
    part_len_for::<C>(max_binding, sets, None)
}

/// Most points per set and part of `sets` base sets folded as `fold`, when a storage binding
/// holds `max_binding` bytes: the part's bases (every level) and every working buffer of its
/// MSM ([`Shape::buffer_bytes`]) fit one binding.
pub(crate) fn part_len_for<C: GpuCurve>(
    max_binding: u64,
    sets: usize,
    fold: Option<FoldLayout>,
) -> usize {
    let stored = sets.max(1) as u64 * fold.map_or(1, |f| u64::from(f.folds));
    let per_point = (C::affine_packed_words() as u64 * 4 * stored).max(32);
    // Shapes index points (of all sets and levels) with u32.
    let mut len = (max_binding / per_point).clamp(1, (1 << 31) / stored) as usize;
    let shape = |len: usize| {
        Shape::new::<C>(
            len,
            (sets.max(1) as u32, len as u32),
            fold,
            MsmConfig::default(),
            max_binding,
        )
    };
    while len > 1 && shape(len).is_ok_and(|s| s.largest_buffer::<C>() > max_binding) {
        len /= 2;
    }
    len
}

/// [`GpuMsm::folds_in_one_part`] for a storage binding of `max_binding` bytes.
pub(crate) fn folds_in_one_part_for<C: GpuCurve>(len: usize, sets: usize, max_binding: u64) -> u32 {
    most_folds_in::<C>(len, sets, 1, max_binding)
}

/// The most levels for which `sets` sets of `len` bases, with the default width, fit in
/// `parts` parts (for two, one set whose whole-MSM working buffers also fit a binding:
/// [`GpuMsm::folds_in_one_msm`]).
fn most_folds_in<C: GpuCurve>(len: usize, sets: usize, parts: usize, max_binding: u64) -> u32 {
    let fits = |f: u32| {
        default_fold_layout::<C>(len, f, sets, max_binding).is_ok_and(|fold| {
            parts * part_len_for::<C>(max_binding, sets, fold) >= len
                && (parts == 1
                    || Shape::new::<C>(len, (1, 1), fold, MsmConfig::default(), max_binding)
                        .is_ok_and(|s| s.largest_buffer::<C>() <= max_binding))
        })
    };
    let levels = |c: u32| window_count(C::Scalar::MODULUS_BIT_SIZE, c).min(MAX_FOLDS);
    // Every window of the wide default width folded, if that fits; else the most levels
    // of the plain default width.
    let wide = default_folded_window_bits::<C>(len, MAX_FOLDS, sets, max_binding);
    if fits(levels(wide)) {
        return levels(wide);
    }
    (1..=levels(default_window_bits(len)))
        .rev()
        .find(|&f| fits(f))
        .unwrap_or(1)
}

/// The layout of `sets` sets of `len` bases folded into `folds` levels with the default
/// width ([`default_folded_window_bits`]), as [`GpuMsm::prepare_sets_folded`] stores them
/// without a configured width (None: not folded).
pub(crate) fn default_fold_layout<C: GpuCurve>(
    len: usize,
    folds: u32,
    sets: usize,
    max_binding: u64,
) -> Result<Option<FoldLayout>> {
    let layout = |c: u32| {
        fold_layout::<C>(
            len,
            Fold {
                folds,
                window_bits: Some(c),
            },
        )
    };
    // Narrower while even a part of one point would not fit: the bucket sums of all the
    // folded windows grow with the width.
    let fits = |fold: Option<FoldLayout>| {
        Shape::new::<C>(
            1,
            (sets.max(1) as u32, 1),
            fold,
            MsmConfig::default(),
            max_binding,
        )
        .is_ok_and(|s| s.largest_buffer::<C>() <= max_binding)
    };
    let mut c = default_folded_window_bits::<C>(len, folds, sets, max_binding);
    while c > 2 && !fits(layout(c)?) {
        c -= 1;
    }
    layout(c)
}
