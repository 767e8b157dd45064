//! Moving an integer between layouts of pieces: 13-bit limbs, 32-bit words and the wide
//! arithmetics' limbs are all little-endian digits of one integer, and a digit of one layout
//! is a bit field gathered from the pieces of another.

use super::ir::{Ty, W};

/// One piece of an integer: an expression holding the bits `[at, at + width)`, nothing above.
#[derive(Clone, Debug)]
pub(crate) struct Piece {
    pub(crate) e: W,
    pub(crate) at: i64,
    pub(crate) width: u32,
}

/// The pieces of argument `arg`: `count` digits of `width` bits (`u32` each), the whole
/// integer shifted up by `shift` bits.
pub(crate) fn arg_pieces(arg: u8, count: usize, width: u32, shift: u32) -> Vec<Piece> {
    (0..count)
        .map(|i| Piece {
            e: W::Arg(arg, i as u16),
            at: i64::from(shift) + i64::from(width) * i as i64,
            width,
        })
        .collect()
}

/// Bits `[lo, lo + len)` of the integer (`len <= 32`) as a `u32`.
pub(crate) fn field32(pieces: &[Piece], lo: i64, len: u32) -> W {
    debug_assert!((1..=32).contains(&len));
    let hi = lo + i64::from(len);
    let parts: Vec<W> = pieces
        .iter()
        .filter(|p| p.at < hi && p.at + i64::from(p.width) > lo)
        .map(|p| {
            let word = match p.e.ty() {
                Ty::U32 => None,
                _ => Some(()),
            };
            if p.at >= lo {
                // The piece starts inside the field: its low bits, moved up.
                let up = (p.at - lo) as u32;
                let low = match word {
                    None => p.e.clone(),
                    Some(()) => W::lo32(p.e.clone()),
                };
                if up == 0 { low } else { W::shl32(low, up) }
            } else {
                // The field starts inside the piece: the piece moved down.
                let down = (lo - p.at) as u32;
                match word {
                    None => W::shr32(p.e.clone(), down),
                    Some(()) => W::lo32(W::shr64(p.e.clone(), down)),
                }
            }
        })
        .collect();
    let value = parts.into_iter().reduce(W::or32).unwrap_or(W::U32(0));
    // Mask where a piece may reach past the field's top.
    let reaches_past = pieces
        .iter()
        .any(|p| p.at < hi && p.at + i64::from(p.width) > hi);
    if reaches_past && len < 32 {
        W::and32(value, (1u32 << len) - 1)
    } else {
        value
    }
}

/// Digits `[lo, lo + len)` for `len <= 64` as `(low 32 bits, high bits)`.
pub(crate) fn field64(pieces: &[Piece], lo: i64, len: u32) -> (W, Option<W>) {
    if len <= 32 {
        (field32(pieces, lo, len), None)
    } else {
        (
            field32(pieces, lo, 32),
            Some(field32(pieces, lo + 32, len - 32)),
        )
    }
}

/// The `u32` results: `count` digits of `width` bits (13-bit limbs or 32-bit words) of the
/// integer given by `pieces`.
pub(crate) fn digits(pieces: &[Piece], count: usize, width: u32) -> Vec<W> {
    (0..count)
        .map(|i| field32(pieces, i64::from(width) * i as i64, width))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wide::ir::WideBuilder;

    /// Moves random integers from 13-bit limbs (shifted) to 32-bit words and back.
    #[test]
    fn fields_move_between_layouts() {
        for shift in [0u32, 18, 26, 46] {
            let limbs = 20usize;
            let mut b = WideBuilder::new("t", "test", vec![limbs], "array<u32, 20>");
            let pieces = arg_pieces(0, limbs, 13, shift);
            let words = (13 * limbs as u32 + shift).div_ceil(32) as usize;
            let out = digits(&pieces, words, 32);
            let vars: Vec<W> = out
                .into_iter()
                .enumerate()
                .map(|(i, e)| b.bind(format!("w{i}"), e))
                .collect();
            let back: Vec<Piece> = vars
                .iter()
                .enumerate()
                .map(|(i, v)| Piece {
                    e: v.clone(),
                    at: 32 * i as i64,
                    width: 32,
                })
                .collect();
            let limbs_out: Vec<W> = (0..limbs)
                .map(|i| field32(&back, i64::from(shift) + 13 * i as i64, 13))
                .collect();
            let p = b.finish(limbs_out, "array<u32, 20>");
            let x: Vec<u32> = (0..limbs as u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) & 0x1fff)
                .collect();
            assert_eq!(p.eval(&[&x]).expect("runs"), x, "shift {shift}");
        }
    }
}
