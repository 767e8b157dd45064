//! The planner: every automatic choice of a prepared MSM's layout (fold levels, window width,
//! parts and whether they run as one MSM) made by one cost model, whose constants are
//! measured on the device for the engine's group and arithmetic ([`GpuMsm::calibrate`]) or,
//! until then, conservative defaults. A layout is chosen over the plain one only where it is
//! predicted faster by a margin, so an automatic choice is never predicted slower than the
//! plain layout (docs/msm.md, "The planner").

use ark_ff::PrimeField;
use zkgpu_curves::GpuCurve;

use crate::bases::{Fold, MAX_FOLDS, fold_layout, part_plan};
use crate::config::{MsmConfig, default_folded_window_bits, default_unfolded_window_bits};
use crate::shape::Shape;
use crate::window_count;

/// What the planner's predictions are made of: seconds per unit of each stage's work, and
/// how many bytes of bases the accumulation may read at random before it slows down.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostModel {
    /// Seconds per accumulated entry (one mixed addition and its loads).
    pub entry_s: f64,
    /// Seconds per bucket of the reduction (its running sums and tree levels).
    pub bucket_s: f64,
    /// Seconds per scalar digit (digits, scans and the scatter).
    pub digit_s: f64,
    /// Fixed seconds of each run of the stages (submission, small passes, each stage's cost
    /// that does not grow with its work).
    pub run_s: f64,
    /// Bytes of bases the accumulation may read at random: layouts storing more are not
    /// chosen. Beyond the reach of the GPU's address translation every load slows down
    /// (docs/msm.md: 2^22 BN254 G1 points in 13 levels, 3.49 GB, accumulated 35 times
    /// slower per entry on the H100 than the same levels of 2^21 points).
    pub reach_bytes: u64,
    /// Whether the constants were measured on this device ([`crate::GpuMsm::calibrate`]).
    pub measured: bool,
}

/// How much faster a layout other than the plain one must be predicted to be chosen.
pub const PLAN_MARGIN: f64 = 0.85;

impl CostModel {
    /// Defaults for group `C` before any measurement: the ratios measured for BLS12-381 G1
    /// on the H100, scaled by the group's multiplications per addition, and a reach of one
    /// storage binding (`max_binding`).
    pub fn defaults<C: GpuCurve>(max_binding: u64) -> Self {
        let scale = match (C::DEGREE, C::acc_packed_words() > 32) {
            (2, _) => 2.8,
            _ => 1.0,
        };
        let entry_s = 0.55e-9 * scale;
        Self {
            entry_s,
            bucket_s: 6.0 * entry_s,
            digit_s: 0.1e-9,
            run_s: 1e-3,
            reach_bytes: max_binding,
            measured: false,
        }
    }

    /// The model as `key value` lines (the file kept beside the pipeline cache).
    pub fn to_text(&self) -> String {
        format!(
            "entry_s {:e}\nbucket_s {:e}\ndigit_s {:e}\nrun_s {:e}\nreach_bytes {}\n",
            self.entry_s, self.bucket_s, self.digit_s, self.run_s, self.reach_bytes
        )
    }

    /// A measured model from [`CostModel::to_text`]'s lines; `None` when any is missing.
    pub fn from_text(text: &str) -> Option<Self> {
        let get = |key: &str| {
            text.lines().find_map(|l| {
                l.strip_prefix(key)?
                    .strip_prefix(' ')?
                    .trim()
                    .parse::<f64>()
                    .ok()
            })
        };
        Some(Self {
            entry_s: get("entry_s")?,
            bucket_s: get("bucket_s")?,
            digit_s: get("digit_s")?,
            run_s: get("run_s")?,
            reach_bytes: get("reach_bytes")? as u64,
            measured: true,
        })
    }
}

/// One layout of prepared bases: fold levels (1: plain) at a window width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Stored levels per base (1: plain bases).
    pub folds: u32,
    /// The window width every MSM on them uses.
    pub window_bits: u32,
}

impl Layout {
    /// The [`Fold`] that prepares this layout.
    pub fn fold(self) -> Fold {
        Fold {
            folds: self.folds,
            window_bits: Some(self.window_bits),
        }
    }
}

/// A layout the planner weighed.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The layout.
    pub layout: Layout,
    /// Parts the bases are stored in.
    pub parts: usize,
    /// Runs of the MSM's stages (1 where the parts run as one MSM).
    pub runs: usize,
    /// Bytes of the stored bases.
    pub bases_bytes: u64,
    /// The predicted seconds of one MSM's GPU work.
    pub predicted_s: f64,
    /// Why it may not be chosen, if so.
    pub excluded: Option<String>,
}

/// The planner's answer for one MSM size: every candidate weighed, plain first, and the
/// chosen one.
#[derive(Clone, Debug, PartialEq)]
pub struct MsmPlan {
    /// Every layout weighed; `candidates[0]` is the plain one.
    pub candidates: Vec<Candidate>,
    /// Index of the chosen candidate.
    pub chosen: usize,
    /// The model the predictions come from.
    pub model: CostModel,
}

impl MsmPlan {
    /// The chosen layout.
    pub fn layout(&self) -> Layout {
        self.candidates[self.chosen].layout
    }

    /// The chosen [`Fold`] (one level: plain bases).
    pub fn fold(&self) -> Fold {
        self.layout().fold()
    }
}

/// What the device allows: its binding limit, whether two parts of one set run as one MSM
/// there, and a cap on points per part (tests).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) max_binding: u64,
    pub(crate) splits_parts: bool,
    pub(crate) max_part: Option<usize>,
}

/// Weighs every layout of `sets` sets of `len` bases: the plain one at the default width, and
/// each level count (2..=the most levels) at the default folded width and its neighbours;
/// chooses the fastest predicted one that fits, a folded one only if it is predicted faster
/// than the plain one by [`PLAN_MARGIN`].
pub(crate) fn plan<C: GpuCurve>(len: usize, sets: usize, model: CostModel, lim: Limits) -> MsmPlan {
    let sets = sets.max(1);
    let plain_c = default_unfolded_window_bits::<C>(len);
    let mut candidates = vec![candidate::<C>(len, sets, 1, plain_c, &model, lim)];
    if len >= 32 {
        for folds in 2..=MAX_FOLDS {
            let wide = default_folded_window_bits::<C>(len, folds, sets, lim.max_binding);
            for c in [
                wide.saturating_sub(2),
                wide.saturating_sub(1),
                wide,
                wide + 1,
            ] {
                let c = c.clamp(2, crate::MAX_WINDOW_BITS);
                if window_count(C::Scalar::MODULUS_BIT_SIZE, c) < folds {
                    continue;
                }
                let cand = candidate::<C>(len, sets, folds, c, &model, lim);
                // Level counts that round to the same stored levels are one candidate.
                if cand.layout.folds == folds && !candidates.iter().any(|k| k.layout == cand.layout)
                {
                    candidates.push(cand);
                }
            }
        }
    }
    let plain = candidates[0].predicted_s;
    let chosen = candidates
        .iter()
        .enumerate()
        .filter(|(i, k)| *i == 0 || (k.excluded.is_none() && k.predicted_s <= PLAN_MARGIN * plain))
        .min_by(|a, b| a.1.predicted_s.total_cmp(&b.1.predicted_s))
        .map_or(0, |(i, _)| i);
    MsmPlan {
        candidates,
        chosen,
        model,
    }
}

/// One layout, its parts and its predicted seconds.
fn candidate<C: GpuCurve>(
    len: usize,
    sets: usize,
    folds: u32,
    c: u32,
    model: &CostModel,
    lim: Limits,
) -> Candidate {
    let bits = C::Scalar::MODULUS_BIT_SIZE;
    let windows = window_count(bits, c);
    let fold = fold_layout::<C>(
        len,
        Fold {
            folds,
            window_bits: Some(c),
        },
    )
    .ok()
    .flatten();
    let stored = fold.map_or(1, |f| f.folds);
    let bucket_windows = fold.map_or(windows, |f| f.fold_windows);
    let (per_part, part) = part_plan::<C>(len, sets, fold, lim.max_binding, lim.max_part);
    let tiles = len.div_ceil(part.max(1));
    let parts = tiles * sets / per_part;
    let whole_fits = Shape::new::<C>(len, (1, 1), fold, MsmConfig::default(), lim.max_binding)
        .is_ok_and(|s| s.largest_buffer::<C>() <= lim.max_binding);
    let one_msm = parts == 1 || (parts == 2 && sets == 1 && lim.splits_parts && whole_fits);
    let runs = if one_msm { 1 } else { parts };
    let bases_bytes = (len * sets) as u64 * u64::from(stored) * C::affine_packed_words() as u64 * 4;
    let (n, w, s) = (len as f64, f64::from(windows), sets as f64);
    let entries = n * w * s;
    let buckets = f64::from(bucket_windows) * f64::from(1u32 << (c - 1)) * s;
    // Part by part, each run reduces every bucket window again and digits each set apart.
    let reductions = if one_msm { 1.0 } else { tiles as f64 };
    let digit_runs = if one_msm {
        1.0
    } else {
        (sets / per_part) as f64
    };
    let predicted_s = entries * model.entry_s
        + buckets * reductions * model.bucket_s
        + n * w * digit_runs * model.digit_s
        + runs as f64 * model.run_s;
    let excluded = if stored > 1 && bases_bytes > model.reach_bytes {
        Some(format!(
            "{bases_bytes} bytes of bases exceed the reach of {} bytes",
            model.reach_bytes
        ))
    } else if stored > 1 && !one_msm {
        Some(format!("{parts} parts run part by part"))
    } else {
        None
    };
    Candidate {
        layout: Layout {
            folds: stored,
            window_bits: c,
        },
        parts,
        runs,
        bases_bytes,
        predicted_s,
        excluded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zkgpu_curves::{Bls12_381G1, Bls12_381G2, Bn254G1};

    const H100: Limits = Limits {
        max_binding: (2 << 30) - 1,
        splits_parts: true,
        max_part: None,
    };

    fn model<C: GpuCurve>(reach: u64) -> CostModel {
        CostModel {
            reach_bytes: reach,
            ..CostModel::defaults::<C>(H100.max_binding)
        }
    }

    /// Whatever the model, the choice is never predicted slower than the plain layout, and
    /// a folded choice is within the reach and runs as one MSM.
    #[test]
    fn never_predicted_slower_than_plain() {
        for log in [4u32, 10, 16, 18, 20, 22, 24] {
            for bucket in [0.0, 1.0, 6.0, 40.0] {
                for reach in [1u64 << 27, 1 << 31, 1 << 36] {
                    let m = CostModel {
                        bucket_s: bucket * 0.5e-9,
                        ..model::<Bls12_381G1>(reach)
                    };
                    let p = plan::<Bls12_381G1>(1 << log, 1, m, H100);
                    let c = &p.candidates[p.chosen];
                    assert!(c.predicted_s <= p.candidates[0].predicted_s, "2^{log}");
                    if p.chosen != 0 {
                        assert!(c.excluded.is_none() && c.runs == 1, "2^{log}: {c:?}");
                        assert!(c.bases_bytes <= reach);
                        assert!(c.predicted_s <= PLAN_MARGIN * p.candidates[0].predicted_s);
                    }
                }
            }
        }
    }

    /// Where no folded layout fits the reach, or folding is predicted to save less than the
    /// margin (additions so costly that fewer windows barely matter), the bases stay plain.
    #[test]
    fn plain_where_folding_does_not_pay() {
        let none = plan::<Bls12_381G1>(1 << 20, 1, model::<Bls12_381G1>(0), H100);
        assert_eq!(none.layout().folds, 1);
        assert!(none.candidates[1..].iter().all(|k| k.excluded.is_some()));
        let tiny = plan::<Bls12_381G1>(64, 1, model::<Bls12_381G1>(1 << 36), H100);
        assert_eq!(tiny.layout().folds, 1, "{:?}", tiny.candidates);
    }

    /// With a reach beyond any layout the plan folds; the reach excludes the layouts that
    /// store too much (2^22 BN254 G1 points in 13 levels: 3.49 GB, the measured cliff), and
    /// what it chooses then fits.
    #[test]
    fn folds_within_the_reach() {
        let far = plan::<Bn254G1>(1 << 22, 1, model::<Bn254G1>(1 << 36), H100);
        let near = plan::<Bn254G1>(1 << 22, 1, model::<Bn254G1>(H100.max_binding), H100);
        assert!(far.layout().folds > 1);
        let big = near
            .candidates
            .iter()
            .find(|k| k.layout.folds == 13)
            .expect("13 levels weighed");
        assert!(big.bases_bytes > 3_400_000_000 && big.excluded.is_some());
        assert!(near.candidates[near.chosen].bases_bytes <= H100.max_binding);
    }

    /// Where folded bases would run part by part (several sets beyond one part), they are
    /// not chosen.
    #[test]
    fn part_by_part_layouts_are_not_chosen() {
        let small = Limits {
            max_binding: 1 << 27,
            ..H100
        };
        let p = plan::<Bls12_381G2>(1 << 20, 3, model::<Bls12_381G2>(1 << 36), small);
        for k in &p.candidates[1..] {
            if k.runs > 1 {
                assert!(k.excluded.is_some());
            }
        }
        assert_eq!(
            p.candidates[p.chosen].runs.min(2),
            if p.chosen == 0 {
                p.candidates[0].runs.min(2)
            } else {
                1
            }
        );
    }

    #[test]
    fn the_model_round_trips_through_its_file() {
        let m = CostModel {
            measured: true,
            ..model::<Bls12_381G1>(123_456_789)
        };
        assert_eq!(CostModel::from_text(&m.to_text()), Some(m));
        assert_eq!(CostModel::from_text("entry_s 1e-9\n"), None);
    }
}
