//! Prepared bases to and from the host in their GPU form: what a cache of prepared bases
//! (window multiples included, which take seconds of GPU work to compute) stores and
//! restores without recomputing anything.

use ark_ff::PrimeField;
use zkgpu_curves::GpuCurve;

use crate::bases::{BasePart, FoldLayout, fold_layout};
use crate::{Fold, window_count};
use crate::{GpuMsm, MsmError, PreparedBases, Result};

/// Bytes restored per round ([`GpuMsm::restore_bases`]): half the pooled upload staging.
const RESTORE_ROUND: u64 = 256 << 20;

/// The window multiples of stored bases ([`BasesLayout::fold`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredFold {
    /// Window width the multiples are for.
    pub window_bits: u32,
    /// Levels stored per base.
    pub folds: u32,
    /// Windows per level.
    pub fold_windows: u32,
}

/// Everything about [`PreparedBases`] but their bytes: the group, the sets, the window
/// multiples and the parts (each one buffer on the GPU).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BasesLayout {
    /// The group's id (`GpuCurve::ID`).
    pub curve: String,
    /// Bytes of one stored point.
    pub point_bytes: u64,
    /// Bases per set (the longest set's length).
    pub len: usize,
    /// Base sets.
    pub sets: usize,
    /// Sets each part holds: `sets`, or 1 (the parts then tile the bases once per set, set
    /// 0's first).
    pub sets_per_part: usize,
    /// Window multiples, if stored.
    pub fold: Option<StoredFold>,
    /// Each part's first base and its number of bases.
    pub parts: Vec<(usize, usize)>,
}

impl BasesLayout {
    /// Levels stored per base (1 when not folded).
    pub fn folds(&self) -> u64 {
        self.fold.map_or(1, |f| u64::from(f.folds))
    }

    /// Bytes of part `k` on the GPU (and on disk).
    pub fn part_bytes(&self, k: usize) -> u64 {
        // Saturating: a layout read from a damaged file must not overflow before it is
        // checked.
        self.parts.get(k).map_or(0, |&(_, len)| {
            (self.sets_per_part as u64)
                .saturating_mul(self.folds())
                .saturating_mul(len as u64)
                .saturating_mul(self.point_bytes)
        })
    }

    /// Bytes of every part.
    pub fn bytes(&self) -> u64 {
        (0..self.parts.len()).fold(0, |a, k| a.saturating_add(self.part_bytes(k)))
    }
}

impl<C: GpuCurve> PreparedBases<C> {
    /// The context that made them (engines of another refuse them).
    pub fn context(&self) -> zkgpu_runtime::ContextId {
        self.context
    }

    /// Their layout: what, besides each part's bytes, restores them
    /// ([`GpuMsm::restore_bases`]).
    pub fn layout(&self) -> BasesLayout {
        BasesLayout {
            curve: C::ID.to_owned(),
            point_bytes: 4 * C::affine_packed_words() as u64,
            len: self.len,
            sets: self.sets,
            sets_per_part: self.sets_per_part,
            fold: self.fold.map(|f| StoredFold {
                window_bits: f.c,
                folds: f.folds,
                fold_windows: f.fold_windows,
            }),
            parts: self.parts.iter().map(|p| (p.start, p.len)).collect(),
        }
    }
}

impl<C: GpuCurve> GpuMsm<C> {
    /// Copies part `k` of `bases` into `out` (exactly [`BasesLayout::part_bytes`] long).
    pub async fn read_bases_part(
        &self,
        bases: &PreparedBases<C>,
        k: usize,
        out: &mut [u8],
    ) -> Result<()> {
        bases.context.check(self.ctx.id(), "these prepared bases")?;
        let want = bases.layout().part_bytes(k);
        let Some(part) = bases.parts.get(k) else {
            return Err(MsmError::Config(format!(
                "part {k} of {} prepared parts",
                bases.parts.len()
            )));
        };
        if out.len() as u64 != want {
            return Err(MsmError::Config(format!(
                "part {k} holds {want} bytes, not {}",
                out.len()
            )));
        }
        self.ctx
            .read_back_par(&part.buffer, 0, out, 1, |bytes, out: &mut [u8], _| {
                out.copy_from_slice(bytes);
                Ok::<(), std::convert::Infallible>(())
            })
            .await?
            .unwrap_or_else(|never| match never {});
        Ok(())
    }

    /// Bases in the layout `layout`, their bytes written by `fill(part, at, block)` straight
    /// into upload staging memory on the host's threads: `block` is bytes `at ..` of part
    /// `part`, and every block starts at a multiple of `block_bytes` (a multiple of 4) and
    /// is `block_bytes` long but the last of a part. The layout is checked first (group,
    /// point size, window multiples, parts that tile the bases and fit this device's
    /// bindings): bytes of another layout would give wrong sums.
    pub fn restore_bases(
        &self,
        layout: &BasesLayout,
        block_bytes: usize,
        fill: impl Fn(usize, usize, &mut [u8]) + Sync,
    ) -> Result<PreparedBases<C>> {
        let fold = self.check_layout(layout)?;
        let parts = layout
            .parts
            .iter()
            .enumerate()
            .map(|(k, &(start, len))| {
                let bytes = layout.part_bytes(k);
                let label = format!("{} bases, part {k}", C::ID);
                let buffer = self.ctx.storage_zeroed(&label, bytes)?;
                // In rounds that the pooled upload staging holds, each waited for, so that
                // every round reuses staging memory already mapped: fresh host-visible
                // memory is faulted in page by page, far slower than the copies.
                let block = block_bytes.max(4) as u64;
                let round = (RESTORE_ROUND / block).max(1) * block;
                let mut at = 0;
                while at < bytes {
                    let n = round.min(bytes - at);
                    let base = at as usize;
                    self.ctx
                        .write_par(&buffer, at, n, block_bytes, |off, b| fill(k, base + off, b))?;
                    self.ctx.wait()?;
                    at += n;
                }
                // The parts tile the bases once per group of `sets_per_part` sets.
                let tiles = layout.parts.len() * layout.sets_per_part / layout.sets;
                let first_set = (k / tiles) * layout.sets_per_part;
                Ok(BasePart {
                    buffer,
                    start,
                    len,
                    first_set,
                })
            })
            .collect::<Result<_>>()?;
        Ok(PreparedBases {
            context: self.ctx.id(),
            parts,
            len: layout.len,
            sets: layout.sets,
            sets_per_part: layout.sets_per_part,
            fold,
            _curve: std::marker::PhantomData,
        })
    }

    /// `layout` against this group and device: its fold layout if it is one this engine
    /// would make.
    fn check_layout(&self, layout: &BasesLayout) -> Result<Option<FoldLayout>> {
        let bad = |what: String| Err(MsmError::Config(format!("stored bases: {what}")));
        if layout.curve != C::ID || layout.point_bytes != 4 * C::affine_packed_words() as u64 {
            return bad(format!(
                "made for {} ({} bytes a point), not {}",
                layout.curve,
                layout.point_bytes,
                C::ID
            ));
        }
        if layout.sets == 0 {
            return bad("no base sets".into());
        }
        let fold = match layout.fold {
            None => None,
            Some(f) => {
                let windows = window_count(C::Scalar::MODULUS_BIT_SIZE, f.window_bits);
                let want = fold_layout::<C>(
                    layout.len,
                    Fold {
                        folds: f.folds,
                        window_bits: Some(f.window_bits),
                    },
                )?;
                let got = FoldLayout {
                    c: f.window_bits,
                    folds: f.folds,
                    fold_windows: f.fold_windows,
                };
                if want != Some(got) || f.folds > windows {
                    return bad(format!("window multiples {f:?} are not a valid layout"));
                }
                want
            }
        };
        // The parts `upload_sets` would make here: these bases' fold layout within the
        // binding limit (and `with_max_part`), all sets in each part or one set each.
        let (per_part, most) = crate::bases::part_plan::<C>(
            layout.len,
            layout.sets,
            fold,
            self.ctx.max_binding_bytes(),
            self.max_part,
        );
        if layout.sets_per_part != per_part {
            return bad(format!(
                "{} sets per part where this device stores {per_part}",
                layout.sets_per_part
            ));
        }
        if layout.parts.is_empty() {
            return match layout.len {
                0 => Ok(fold),
                n => bad(format!("no parts for {n} bases")),
            };
        }
        // The parts tile the bases once per group of sets.
        let groups = layout.sets / per_part;
        if groups == 0 || !layout.parts.len().is_multiple_of(groups) {
            return bad(format!(
                "{} parts for {groups} groups of sets",
                layout.parts.len()
            ));
        }
        for tiling in layout.parts.chunks(layout.parts.len() / groups) {
            let mut next = 0usize;
            for &(start, len) in tiling {
                if start != next || len == 0 || len > most {
                    return bad(format!(
                        "part of {len} bases at {start} (expected at {next}, at most {most} on \
                         this device)"
                    ));
                }
                next = start + len;
            }
            if next != layout.len {
                return bad(format!("parts cover {next} of {} bases", layout.len));
            }
        }
        Ok(fold)
    }
}
