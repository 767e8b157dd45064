//! The host's part: decoding the window sums the GPU leaves and combining them.

use ark_ec::AdditiveGroup;
use ark_ff::Zero;
use rayon::prelude::*;
use zkgpu_curves::{GpuCurve, decode_projective_packed};

/// The window combination. Each window's block holds what the GPU's tree levels left of its
/// rows (`left[k]` sums of row `k`, [`RowLayout`]): the window's total is
/// `row 0 + 2^seg_bits sum_i 2^i row (i + 1)` (Horner over the rows), and then Horner over
/// windows gives `sum_w 2^(c w) W_w`. Rows are decoded and summed on the host's threads.
pub(crate) fn combine_windows<C: GpuCurve>(
    words: &[u32],
    left: &[u32],
    seg_bits: u32,
    c: u32,
) -> std::result::Result<C::Projective, zkgpu_limbs::DecodeError> {
    let point = C::acc_packed_words();
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
            Ok(decode_projective_packed::<C>(run)?
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
