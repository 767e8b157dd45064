//! The Montgomery multiplication of the 64-bit arithmetics (docs/limbs.md, "The 64-bit
//! arithmetics"), separated operand scanning over `u64` columns: every limb product of
//! `a b` first, then one reduction digit per low column, each followed by its carry.
//!
//! - `int64`: a product is `u64(a_i) * u64(b_j)` (below `2^60`); columns are exact sums.
//! - `f64`: limbs are exact integers in `f64`; a product `a_i b_j` is split by two fused
//!   multiply-adds into `H 2^w + L` with `L` signed, and the bit patterns of the two `f64`
//!   results (`bits(C1) + H` and `bits(2^52) + 2^51 + L`) are summed in `u64`; the constant
//!   part of each column is subtracted once before the column is read. Where the layout
//!   chains products (`Chains`), a column's parts are first summed in `f64` chains, each
//!   entering the `u64` column once (docs/limbs.md, "Chains").

use super::bits::{Piece, arg_pieces, digits, field64};
use super::ir::{TWO_52, Ty, W, WideBuilder, WideProgram};
use super::layout::{Arith, WideLayout};
use super::native::{native_pieces, native_result, native_words};

/// `1.5 2^52`: a low chain's start; `bits(1.5 2^52)` is a low term's constant part.
const LO_BASE: f64 = 1.5 * TWO_52;

/// Where the operands come from and where the result goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// Packed little-endian 32-bit words (the curve VM's registers, arkworks' layout).
    Packed,
    /// 13-bit limbs (the portable layout's `Fe`).
    Limbs13,
    /// The arithmetic's own limbs (`super::native`).
    Native,
}

/// Whether the result is reduced below `p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Finish {
    /// Below `p`.
    Canonical,
    /// Below `2p` (the final subtraction skipped).
    Lazy,
}

/// The exact split of an `f64` limb product (see the module doc).
#[derive(Clone, Copy, Debug)]
struct Split {
    /// Added to the product to round it to its high part: `2^(w + 52)`.
    c1: f64,
    /// Limbs of at most 51 bits: `C1 + 3 2^51`, so that `fma(a, b, C2 - hi)` is `L + 3 2^51` in
    /// `[2^52, 2^53]`. 52-bit limbs: `None`, `L` is computed exactly and `1.5 2^52` added.
    c2: Option<f64>,
}

impl Split {
    fn of(w: u32) -> Self {
        // One unit in the last place of C1 is 2^w: fma(a, b, C1) rounds a b to a multiple of
        // 2^w and stays in C1's binade (a b < C1).
        let c1 = 2f64.powi(w as i32 + 52);
        Self {
            c1,
            c2: (w <= 51).then(|| c1 + 3.0 * 2f64.powi(51)),
        }
    }

    /// `bits(C1)`: the constant part of a high term.
    fn k_hi(self) -> i128 {
        i128::from(self.c1.to_bits())
    }

    /// `bits(2^52) + 2^51`: the constant part of a low term.
    fn k_lo() -> i128 {
        i128::from(TWO_52.to_bits()) + (1 << 51)
    }
}

/// The multiplication being generated.
struct Gen<'a> {
    l: &'a WideLayout,
    b: WideBuilder,
    split: Option<Split>,
    /// Column accumulators (`u64` variables), declared as they are first written.
    cols: Vec<Option<W>>,
    /// The constant part of each column's bit-pattern terms not yet subtracted.
    pending: Vec<i128>,
    /// Each column's `f64` chain of high parts (`C1 + S 2^w`) and its term count.
    hi: Vec<Option<(W, usize)>>,
    /// Each column's `f64` chain of low parts (`1.5 2^52 + sum L`) and its term count.
    lo: Vec<Option<(W, usize)>>,
    serial: usize,
}

impl<'a> Gen<'a> {
    fn fresh(&mut self, stem: &str) -> String {
        self.serial += 1;
        format!("{stem}{}", self.serial)
    }

    /// The limbs of argument `arg` as `u32` (`int64`) or `f64` values.
    fn operand(&mut self, arg: u8, form: Form, shift: u32) -> Vec<W> {
        let pieces = match form {
            Form::Packed => arg_pieces(arg, self.l.words, 32, shift),
            Form::Limbs13 => arg_pieces(arg, self.l.n13, 13, shift),
            Form::Native => native_pieces(arg, self.l, shift),
        };
        let w = self.l.limb_bits;
        let name = ["a", "b"][arg as usize];
        (0..self.l.limbs)
            .map(|i| {
                let (lo, hi) = field64(&pieces, i64::from(w) * i as i64, w);
                let value = match (self.l.arith, hi) {
                    (Arith::Int64, None) => lo,
                    (Arith::F64, Some(hi)) => {
                        // 2^52 + x as bits, then less 2^52: x exactly, as an f64.
                        let bits = W::or64(
                            W::shl64(W::widen(W::or32(hi, W::U32(0x4330_0000))), 32),
                            W::widen(lo),
                        );
                        W::fsub(W::from_bits(bits), W::F64(TWO_52))
                    }
                    _ => unreachable!("limb width fits the arithmetic"),
                };
                self.b.bind(format!("{name}{i}"), value)
            })
            .collect()
    }

    /// Adds `term` to column `c`; `offset` is its constant part.
    fn add(&mut self, c: usize, term: W, offset: i128) {
        self.pending[c] += offset;
        match self.cols[c].clone() {
            None => {
                let v = self.b.var(format!("c{c}"), Ty::U64);
                self.b.assign(&v, term);
                self.cols[c] = Some(v);
            }
            Some(v) => self.b.assign(&v, W::add64(v.clone(), term)),
        }
    }

    /// Adds the product of limbs `x` and `y` (an `f64` literal or `u32` for constants) at
    /// column `c`, through the `f64` chains where `chained`.
    fn product(&mut self, c: usize, x: &W, y: &W, chained: bool) {
        match self.split {
            None => self.add(c, W::mul_wide(x.clone(), y.clone()), 0),
            Some(s) if chained => self.chained(s, c, x, y),
            Some(s) => {
                let hi = self.fresh("h");
                let hi = self.b.bind(hi, W::fma(x.clone(), y.clone(), W::F64(s.c1)));
                let lo_name = self.fresh("l");
                let lo = match s.c2 {
                    Some(c2) => W::fma(x.clone(), y.clone(), W::fsub(W::F64(c2), hi.clone())),
                    None => W::fsub(
                        W::fma(x.clone(), y.clone(), W::fsub(W::F64(s.c1), hi.clone())),
                        W::F64(-1.5 * TWO_52),
                    ),
                };
                let lo = self.b.bind(lo_name, lo);
                self.add(c + 1, W::to_bits(hi), s.k_hi());
                self.add(c, W::to_bits(lo), Split::k_lo());
            }
        }
    }

    /// The product `x y` at column `c` through the chains: `hi = fma(x, y, acc)` rounds
    /// `x y + acc` to a multiple of `2^w` in `C1`'s binade (`acc` is one), `acc - hi` is
    /// exact (Sterbenz), so `fma(x, y, acc - hi)` is the exact signed low part `L`, which
    /// the low chain of column `c` adds. A chain holds `chain_cap` terms: the high parts' sum
    /// stays below `2^52 2^w` and the low parts' within `2^51` of the start.
    fn chained(&mut self, s: Split, c: usize, x: &W, y: &W) {
        let cap = self.l.chain_cap();
        let (acc, n) = match self.hi[c + 1].take() {
            Some((acc, n)) if n < cap => (acc, n),
            full => {
                if let Some((acc, _)) = full {
                    self.add(c + 1, W::to_bits(acc), s.k_hi());
                }
                (W::F64(s.c1), 0)
            }
        };
        let hi = self.fresh("h");
        let hi = self.b.bind(hi, W::fma(x.clone(), y.clone(), acc.clone()));
        let lo = self.fresh("l");
        let lo = self
            .b
            .bind(lo, W::fma(x.clone(), y.clone(), W::fsub(acc, hi.clone())));
        self.hi[c + 1] = Some((hi, n + 1));
        let (sum, m) = match self.lo[c].take() {
            Some((sum, m)) if m < cap => (W::fadd(sum, lo), m),
            full => {
                if let Some((sum, _)) = full {
                    self.add(c, W::to_bits(sum), Split::k_lo());
                }
                (W::fadd(W::F64(LO_BASE), lo), 0)
            }
        };
        let q = self.fresh("q");
        let sum = self.b.bind(q, sum);
        self.lo[c] = Some((sum, m + 1));
    }

    /// Adds column `c`'s open chains to its `u64` accumulator.
    fn flush(&mut self, c: usize) {
        if let Some((acc, _)) = self.hi[c].take() {
            let k = self.split.expect("chains are f64").k_hi();
            self.add(c, W::to_bits(acc), k);
        }
        if let Some((sum, _)) = self.lo[c].take() {
            self.add(c, W::to_bits(sum), Split::k_lo());
        }
    }

    /// Column `c` with its pending constant removed: its exact value.
    fn exact(&mut self, c: usize) -> W {
        self.flush(c);
        let v = self.cols[c].clone().expect("column written");
        let k = std::mem::take(&mut self.pending[c]);
        if k != 0 {
            self.b.assign(&v, W::sub64(v.clone(), W::I64(k)));
        }
        v
    }

    /// The reduction digit of column `i` (exact): `m = c_i (-p^-1) mod 2^w`.
    fn digit(&mut self, i: usize) -> W {
        let l = self.l;
        self.flush(i);
        // Only the column's low w bits are read: its pending constant matters modulo 2^w.
        let col = self.cols[i].clone().expect("column written");
        let k = self.pending[i].rem_euclid(1i128 << l.limb_bits);
        let col = if k == 0 {
            col
        } else {
            W::sub64(col, W::I64(k))
        };
        let m = match self.split {
            None => W::and32(
                W::mul_lo32(W::lo32(col), W::U32(l.minv as u32)),
                l.mask() as u32,
            ),
            // The low w bits of the column times -p^-1, modulo 2^w: the low half of one u64
            // product, then as an f64.
            Some(_) => to_f64(W::and64(
                W::mul_lo64(W::and64(col, l.mask()), W::I64(i128::from(l.minv))),
                l.mask(),
            )),
        };
        self.b.bind(format!("m{i}"), m)
    }

    /// Adds `m p` at column `i` and carries column `i` (now a multiple of `2^w`) up.
    fn reduce_column(&mut self, i: usize, m: &W) {
        let l = self.l;
        for (j, &pj) in l.p.iter().enumerate() {
            let lit = match self.split {
                None => W::U32(pj as u32),
                Some(_) => W::F64(pj as f64),
            };
            match pj {
                0 => {}
                1 if self.split.is_none() => self.add(i + j, W::widen(m.clone()), 0),
                _ => self.product(i + j, m, &lit, l.chains.reduction()),
            }
        }
        let col = self.exact(i);
        let carry = match self.split {
            None => W::shr64(col, l.limb_bits),
            Some(_) => W::sar64(col, l.limb_bits),
        };
        self.add(i + 1, carry, 0);
    }

    /// Normalizes the top `k` columns into limbs below `2^w`: the result's limbs (`u64`).
    fn normalize_top(&mut self) -> Vec<W> {
        let k = self.l.limbs;
        (0..k)
            .map(|t| {
                let c = k + t;
                let v = self.exact(c);
                if t + 1 < k {
                    let carry = match self.split {
                        None => W::shr64(v.clone(), self.l.limb_bits),
                        Some(_) => W::sar64(v.clone(), self.l.limb_bits),
                    };
                    self.add(c + 1, carry, 0);
                }
                self.b.bind(format!("r{t}"), W::and64(v, self.l.mask()))
            })
            .collect()
    }

    /// `r mod p` for limbs of a value below `2p`: `r - p` by a borrow chain with every limb
    /// lifted by `2^w`, kept where it did not borrow.
    fn subtract_p(&mut self, r: &[W]) -> Vec<W> {
        let l = self.l;
        let lift = 1u64 << l.limb_bits;
        let mut nb: Option<W> = None;
        let d: Vec<W> = r
            .iter()
            .enumerate()
            .map(|(t, rt)| {
                let sum = match &nb {
                    None => W::add64(rt.clone(), W::I64(i128::from(lift - l.p[t]))),
                    Some(nb) => W::add64(
                        W::add64(rt.clone(), W::I64(i128::from(lift - l.p[t] - 1))),
                        nb.clone(),
                    ),
                };
                let s = self.b.bind(format!("s{t}"), sum);
                nb = Some(
                    self.b
                        .bind(format!("nb{t}"), W::shr64(s.clone(), l.limb_bits)),
                );
                self.b.bind(format!("d{t}"), W::and64(s, l.mask()))
            })
            .collect();
        let keep = W::lo32(nb.expect("at least one limb"));
        r.iter()
            .zip(d)
            .map(|(rt, dt)| W::select(keep.clone(), dt, rt.clone()))
            .collect()
    }
}

/// `f64` of a `u64` below `2^52`, exactly: `bits(2^52) | x` less `2^52`.
fn to_f64(x: W) -> W {
    W::fsub(
        W::from_bits(W::or64(x, W::I64(i128::from(TWO_52.to_bits())))),
        W::F64(TWO_52),
    )
}

/// `a b R^-1` in the wide arithmetic of `l`, operands and result in `form`.
pub(crate) fn mont_mul(l: &WideLayout, name: &str, form: Form, finish: Finish) -> WideProgram {
    let words = match form {
        Form::Packed => l.words,
        Form::Limbs13 => l.n13,
        Form::Native => native_words(l),
    };
    let ty = format!("array<u32, {words}>");
    let (range, out) = match finish {
        Finish::Canonical => ("a b < R p (e.g. inputs < 2p); canonical out", "canonical"),
        Finish::Lazy => ("a b < R p (e.g. a < 4p, b < 2p); result < 2p", "lazy"),
    };
    let doc = format!(
        "a b R^-1 in the {} arithmetic ({} x {}-bit limbs, a shifted up by {}), {range} ({out})",
        l.arith, l.limbs, l.limb_bits, l.shift
    );
    let split = (l.arith == Arith::F64).then(|| Split::of(l.limb_bits));
    let mut g = Gen {
        l,
        b: WideBuilder::new(name, &doc, vec![words, words], &ty),
        split,
        cols: vec![None; 2 * l.limbs + 1],
        pending: vec![0; 2 * l.limbs + 1],
        hi: vec![None; 2 * l.limbs + 1],
        lo: vec![None; 2 * l.limbs + 1],
        serial: 0,
    };
    if split.is_some() {
        g.b.set_fma_bound(2f64.powi(l.limb_bits as i32));
    }
    let a = g.operand(0, form, l.shift);
    let b = g.operand(1, form, 0);
    for (i, ai) in a.iter().enumerate() {
        for (j, bj) in b.iter().enumerate() {
            g.product(i + j, ai, bj, l.chains.products());
        }
    }
    if split.is_none() {
        split_columns(&mut g);
    }
    for i in 0..l.limbs {
        let m = g.digit(i);
        g.reduce_column(i, &m);
    }
    let mut r = g.normalize_top();
    if finish == Finish::Canonical {
        r = g.subtract_p(&r);
    }
    let limbs_as_pieces = |r: Vec<W>| -> Vec<Piece> {
        r.into_iter()
            .enumerate()
            .map(|(t, e)| Piece {
                e,
                at: i64::from(l.limb_bits) * t as i64,
                width: l.limb_bits,
            })
            .collect()
    };
    let result = match form {
        Form::Packed => digits(&limbs_as_pieces(r), l.words, 32),
        Form::Limbs13 => digits(&limbs_as_pieces(r), l.n13, 13),
        Form::Native => native_result(&r, l),
    };
    g.b.finish(result, &ty)
}

/// `int64`: after the products a column holds up to `k` of them (below `2^60` each) and the
/// reduction adds `k` more, more than a `u64` holds; each column keeps its low `w` bits and
/// passes the rest to the next one (no chain: every high part is taken first).
fn split_columns(g: &mut Gen<'_>) {
    let w = g.l.limb_bits;
    let highs: Vec<(usize, W)> = (0..g.cols.len())
        .filter_map(|c| g.cols[c].clone().map(|v| (c, v)))
        .map(|(c, v)| (c, g.b.bind(format!("hc{c}"), W::shr64(v, w))))
        .collect();
    for (c, _) in &highs {
        let v = g.cols[*c].clone().expect("column written");
        g.b.assign(&v, W::and64(v.clone(), (1u64 << w) - 1));
    }
    for (c, high) in highs {
        g.add(c + 1, high, 0);
    }
}
