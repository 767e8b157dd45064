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
/// `row 0 + 2^seg_bits sum_i 2^i row (i + 1)` (Horner over the rows), and the MSM is
/// `sum_w 2^(c w) W_w`. The rows are summed on the host's threads, then each window is
/// weighed and shifted by `c w` doublings on a thread of its own, so the serial part is one
/// window's work, not every window's one after another (BLS12-381 G2: 16 windows of 38 G2
/// doublings and 13 additions); or everything on this thread, Horner over the windows, for
/// at most [`SEQUENTIAL_SUMS`] sums.
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
    // Every row of window w.
    let rows_of = |w: usize| {
        let mut at = w * per;
        left.iter().map(move |&k| {
            let run = &words[at * point..(at + k as usize) * point];
            at += k as usize;
            run
        })
    };
    let ctx = <C::Base as LimbEncode>::ctx();
    let row_sum = |run: &[u32]| decode_sum::<C>(run, &ctx);
    // A window's total times 2^shift, from its row sums.
    let window = |shift: usize, rows: &[C::Projective]| {
        // row 0 + 2^seg_bits (row 1 + 2 (row 2 + 2 (...))).
        let mut weighted = C::Projective::zero();
        for row in rows.iter().skip(1).rev() {
            weighted.double_in_place();
            weighted += row;
        }
        for _ in 0..seg_bits {
            weighted.double_in_place();
        }
        if let Some(r0) = rows.first() {
            weighted += r0;
        }
        for _ in 0..shift {
            weighted.double_in_place();
        }
        weighted
    };
    let c = c as usize;
    if words.len() / point <= SEQUENTIAL_SUMS {
        // Horner over the windows: c doublings a window.
        let mut acc = C::Projective::zero();
        for w in (0..windows).rev() {
            for _ in 0..c {
                acc.double_in_place();
            }
            let rows = rows_of(w).map(row_sum).collect::<Result<Vec<_>, _>>()?;
            acc += window(0, &rows);
        }
        return Ok(acc);
    }
    // Every row of every window summed across the host's threads, then each window weighed
    // and shifted on a thread of its own (the threads are awake by then).
    let runs: Vec<&[u32]> = (0..windows).flat_map(rows_of).collect();
    let rows = runs
        .into_par_iter()
        .map(row_sum)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows
        .par_chunks(left.len().max(1))
        .enumerate()
        .map(|(w, rows)| window(c * w, rows))
        .reduce(C::Projective::zero, |a, b| a + b))
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
