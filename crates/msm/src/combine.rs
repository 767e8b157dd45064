//! The host's part: decoding the window sums the GPU leaves and combining them.

use ark_ec::AdditiveGroup;
use ark_ff::Zero;
use rayon::prelude::*;
use zkgpu_curves::GpuCurve;
use zkgpu_limbs::{DecodeError, LimbEncode, unpack_limbs};

/// Sums up to which the host decodes and adds on the calling thread: waking the host's
/// other threads after the GPU's wait costs more than these additions (docs/msm.md).
pub(crate) const SEQUENTIAL_SUMS: usize = 64;

/// Why window sums gave no result.
#[derive(Debug)]
pub(crate) enum CombineError {
    /// The words are not sums of this group.
    Decode(DecodeError),
    /// A sum carries the mark of a formula's exception (`GpuCurve::acc_regs_exceptional`).
    Exceptional,
}

impl From<DecodeError> for CombineError {
    fn from(e: DecodeError) -> Self {
        CombineError::Decode(e)
    }
}

/// The window combination. Each window's block holds what the GPU's tree levels left of its
/// rows (`left[k]` sums of row `k`, [`RowLayout`]): the window's total is
/// `row 0 + 2^seg_bits sum_i 2^i row (i + 1)` (Horner over the rows), and then Horner over
/// windows gives `sum_w 2^(c w) W_w`. Rows are decoded and summed on the host's threads, or
/// on this one for at most [`SEQUENTIAL_SUMS`] sums.
///
/// [`RowLayout`]: crate::shape::RowLayout
pub(crate) fn combine_windows<C: GpuCurve>(
    words: &[u32],
    left: &[u32],
    seg_bits: u32,
    c: u32,
) -> std::result::Result<C::Projective, CombineError> {
    let point = C::acc_packed_words();
    if !words.len().is_multiple_of(point) {
        return Err(DecodeError::Length {
            per_element: point,
            got: words.len(),
        }
        .into());
    }
    let per: usize = left.iter().map(|&k| k as usize).sum();
    let windows = words.len() / (per * point).max(1);
    // Every row of every window.
    let mut runs = Vec::with_capacity(windows * left.len());
    for w in 0..windows {
        let mut at = w * per;
        for &k in left {
            runs.push(&words[at * point..(at + k as usize) * point]);
            at += k as usize;
        }
    }
    let ctx = <C::Base as LimbEncode>::ctx();
    let row_sum = |run: &&[u32]| decode_sum::<C>(run, &ctx);
    let rows = if words.len() / point <= SEQUENTIAL_SUMS {
        runs.iter().map(row_sum).collect::<Result<Vec<_>, _>>()?
    } else {
        runs.par_iter()
            .map(row_sum)
            .collect::<Result<Vec<_>, _>>()?
    };
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

/// The sum of the packed accumulators `words` (`C::acc_packed_words()` words each), decoded
/// and added on this thread; an accumulator with the exception mark, or a sum that meets an
/// exception here, makes it an error.
fn decode_sum<C: GpuCurve>(
    words: &[u32],
    ctx: &<C::Base as LimbEncode>::Ctx,
) -> std::result::Result<C::Projective, CombineError> {
    let reg_words = C::packed_reg_words();
    let mut limbs = vec![0u32; <C::Base as LimbEncode>::WORDS];
    let mut regs = Vec::with_capacity(words.len() / reg_words);
    for (i, w) in words.chunks_exact(reg_words).enumerate() {
        unpack_limbs(w, &mut limbs);
        regs.push(C::Base::decode_with(ctx, &limbs, i)?);
    }
    if regs
        .chunks_exact(4 * C::DEGREE)
        .any(|acc| C::acc_regs_exceptional(acc))
    {
        return Err(CombineError::Exceptional);
    }
    C::try_sum_acc_regs(&regs).ok_or(CombineError::Exceptional)
}
