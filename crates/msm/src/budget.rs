//! What an MSM allocates under a storage binding limit, computed without a device: the parts
//! its bases are stored in, then every working buffer of each part's shape. Tests walk it
//! over every group and size under WebGPU's default limits (the prover's walk uses it too).

use zkgpu_curves::GpuCurve;

use crate::Result;
use crate::bases::{FoldLayout, default_fold_layout, folds_in_one_part_for, part_plan};
use crate::config::MsmConfig;
use crate::shape::Shape;

/// Every buffer (name, bytes) an MSM of `len` points in `sets` base sets allocates on a
/// device whose storage bindings hold `max_binding` bytes: unfolded (`folded` false: what a
/// software adapter and [`crate::GpuMsm::msm`] run), or folded as
/// [`crate::GpuMsm::prepare_sets_folded`] folds for a GPU ([`crate::GpuMsm::folds_in_one_part`]
/// levels at the default width). An error where no plan exists (the engine's error).
pub fn buffer_plan<C: GpuCurve>(
    len: usize,
    sets: usize,
    folded: bool,
    max_binding: u64,
) -> Result<Vec<(String, u64)>> {
    let fold = if folded {
        let folds = folds_in_one_part_for::<C>(len, sets, max_binding);
        default_fold_layout::<C>(len, folds, sets, max_binding)?
    } else {
        None
    };
    parts_plan::<C>(len, sets, fold, max_binding)
}

/// The bases' parts (the full one and the remainder), then each one's shape's buffers.
fn parts_plan<C: GpuCurve>(
    len: usize,
    sets: usize,
    fold: Option<FoldLayout>,
    max_binding: u64,
) -> Result<Vec<(String, u64)>> {
    let folds = fold.map_or(1, |f| f.folds as usize);
    let (sets, part) = part_plan::<C>(len, sets, fold, max_binding, None);
    let part = part.min(len.max(1));
    let bases = (sets * folds * part) as u64 * C::affine_packed_words() as u64 * 4;
    let mut out = vec![("msm bases part".to_string(), bases)];
    let mut lens = vec![part];
    if len > part && !len.is_multiple_of(part) {
        lens.push(len % part);
    }
    for n in lens {
        let shape = Shape::new::<C>(
            n,
            (sets as u32, part as u32),
            fold,
            MsmConfig::default(),
            max_binding,
        )?;
        for (name, bytes) in shape.buffer_bytes::<C>().all() {
            out.push((format!("{name} (part of {n})"), bytes));
        }
    }
    Ok(out)
}
