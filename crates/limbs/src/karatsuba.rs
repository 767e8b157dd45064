//! Product columns by Karatsuba where the `u32` bounds allow it, and the Montgomery reduction
//! in two blocks of quotient digits whose deferred products are such columns too
//! (docs/limbs.md, "Multiplication of two variables").

use crate::params::{FieldParams, LIMB_BITS, LIMB_MASK};
use crate::program::{Expr, ProgramBuilder, Var};

/// Operands at least this long are split by Karatsuba (when the bounds allow): 20 limbs split
/// into 10 and 10, those again into 5 and 5; 30 into 15 and 15, those into 7 and 8.
const KARATSUBA_MIN: usize = 10;

/// A limb operand of a product: its expression and a bound on its value.
#[derive(Clone, Debug)]
pub(crate) struct Limb {
    pub(crate) e: Expr,
    pub(crate) max: u64,
}

impl Limb {
    /// A normalized limb (below `2^13`).
    pub(crate) fn normalized(e: Expr) -> Self {
        Self {
            e,
            max: u64::from(LIMB_MASK),
        }
    }

    /// A known limb, folded into the program.
    pub(crate) fn lit(v: u32) -> Self {
        Self {
            e: Expr::Lit(v),
            max: u64::from(v),
        }
    }
}

/// Fresh variable names for one program: `{tag}{k}` with a counter per call.
pub(crate) struct Names {
    next: usize,
}

impl Names {
    pub(crate) fn new() -> Self {
        Self { next: 0 }
    }

    fn tag(&mut self, base: &str) -> String {
        self.next += 1;
        format!("{base}{}_", self.next)
    }
}

/// The `2 len - 1` columns of `x y` (`x` and `y` of one length): column `k` is
/// `sum_{i + j = k} x_i y_j`, `None` where every product folds to zero. Karatsuba splits the
/// operands in halves `h = len / 2` where they are at least [`KARATSUBA_MIN`] long and the
/// middle product's columns stay below `2^32`:
/// `column k = L_k + (M_{k-h} - L_{k-h} - H_{k-h}) + H_{k-2h}`, `L = xL yL`, `H = xH yH`,
/// `M = (xL + xH)(yL + yH)`; `M_k - L_k - H_k` is a sum of products, never negative.
pub(crate) fn product_columns(
    b: &mut ProgramBuilder,
    names: &mut Names,
    x: &[Limb],
    y: &[Limb],
) -> Vec<Option<Expr>> {
    let len = x.len();
    debug_assert_eq!(len, y.len());
    let h = len / 2;
    let g = len - h;
    let sums = |v: &[Limb]| -> Vec<u64> {
        (0..g)
            .map(|i| v[i + h].max + if i < h { v[i].max } else { 0 })
            .collect()
    };
    let (sx, sy) = (sums(x), sums(y));
    let middle_bound = (g as u64) * sx.iter().max().unwrap_or(&0) * sy.iter().max().unwrap_or(&0);
    if len < KARATSUBA_MIN || middle_bound > u64::from(u32::MAX) {
        let mut cols: Vec<Vec<Expr>> = vec![Vec::new(); 2 * len - 1];
        for (i, xi) in x.iter().enumerate() {
            for (j, yj) in y.iter().enumerate() {
                cols[i + j].extend(Expr::product(xi.e.clone(), yj.e.clone()));
            }
        }
        return cols.into_iter().map(Expr::sum).collect();
    }
    let tag = names.tag("k");
    let half_sums = |b: &mut ProgramBuilder, v: &[Limb], side: &str| -> Vec<Limb> {
        (0..g)
            .map(|i| {
                let hi = &v[i + h];
                if i >= h {
                    return hi.clone();
                }
                let lo = &v[i];
                let max = lo.max + hi.max;
                let e = match (&lo.e, &hi.e) {
                    (Expr::Lit(a), Expr::Lit(c)) => Expr::Lit(a + c),
                    _ => Expr::Var(b.bind(
                        format!("{tag}s{side}{i}"),
                        Expr::plus(lo.e.clone(), hi.e.clone()),
                    )),
                };
                Limb { e, max }
            })
            .collect()
    };
    let xs = half_sums(b, x, "x");
    let ys = half_sums(b, y, "y");
    let bind = |b: &mut ProgramBuilder, part: &str, cols: Vec<Option<Expr>>| -> Vec<Expr> {
        cols.into_iter()
            .enumerate()
            .map(|(k, e)| match e {
                Some(e @ (Expr::Var(_) | Expr::Lit(_))) => e,
                Some(e) => Expr::Var(b.bind(format!("{tag}{part}{k}"), e)),
                None => Expr::Lit(0),
            })
            .collect()
    };
    let low = product_columns(b, names, &x[..h], &y[..h]);
    let low = bind(b, "l", low);
    let high = product_columns(b, names, &x[h..], &y[h..]);
    let high = bind(b, "h", high);
    let mid = product_columns(b, names, &xs, &ys);
    let mut cols: Vec<Vec<Expr>> = vec![Vec::new(); 2 * len - 1];
    for (k, l) in low.iter().enumerate() {
        cols[k].push(l.clone());
    }
    for (k, m) in mid.into_iter().enumerate() {
        let Some(m) = m else { continue };
        let mut cross = m;
        if let Some(l) = low.get(k) {
            cross = minus_nonzero(cross, l);
        }
        cross = minus_nonzero(cross, &high[k]);
        cols[k + h].push(cross);
    }
    for (k, hk) in high.into_iter().enumerate() {
        cols[k + 2 * h].push(hk);
    }
    cols.into_iter()
        .map(|c| Expr::sum(c.into_iter().filter(|e| *e != Expr::Lit(0))))
        .collect()
}

fn minus_nonzero(l: Expr, r: &Expr) -> Expr {
    if *r == Expr::Lit(0) {
        l
    } else {
        Expr::minus(l, r.clone())
    }
}

/// `q = t mu mod 2^13`, the Montgomery quotient digit. When `p = 1 mod 2^13` (so `mu = -1`)
/// it is `-t mod 2^13`: one operation fewer than the product.
pub(crate) fn quotient_digit(p: &FieldParams, t: Var) -> Expr {
    if p.mu == LIMB_MASK {
        Expr::NegMask(Box::new(Expr::Var(t)), LIMB_MASK)
    } else {
        Expr::masked(
            Expr::Mul(
                Box::new(Expr::masked(Expr::Var(t), LIMB_MASK)),
                Box::new(Expr::Lit(p.mu)),
            ),
            LIMB_MASK,
        )
    }
}

/// Product columns `t` (2n variables, `zero[k]` where column `k` is still known zero).
pub(crate) struct Columns {
    pub(crate) t: Vec<Var>,
    pub(crate) zero: Vec<bool>,
}

impl Columns {
    /// Adds `e` into column `k`.
    pub(crate) fn add(&mut self, b: &mut ProgramBuilder, k: usize, e: Expr) {
        let e = if self.zero[k] {
            e
        } else {
            Expr::plus(Expr::Var(self.t[k]), e)
        };
        b.assign(self.t[k], e);
        self.zero[k] = false;
    }

    /// Column `k`'s current value.
    pub(crate) fn get(&self, k: usize) -> Expr {
        if self.zero[k] {
            Expr::Lit(0)
        } else {
            Expr::Var(self.t[k])
        }
    }
}

/// Montgomery reduction of the columns, in two blocks of quotient digits (`0..h` and `h..n`,
/// `h = n / 2`): within a block each digit comes from its column after the block's earlier
/// digits' products below the block's end were added (the serial triangle, carries included);
/// the block's other products `q_i p_j` are added afterwards, as product columns
/// ([`product_columns`], Karatsuba where the bounds allow) where a whole rectangle of them
/// lies past the block. Every column receives the same products as the schoolbook
/// reduction, so the accumulator bound is the same.
pub(crate) fn reduce_in_blocks(
    b: &mut ProgramBuilder,
    p: &FieldParams,
    names: &mut Names,
    cols: &mut Columns,
) {
    let n = p.n_limbs;
    let h = n / 2;
    let c = b.var("c");
    for (start, end) in [(0, h), (h, n)] {
        let mut q: Vec<Limb> = Vec::new();
        for i in start..end {
            if cols.zero[i] {
                b.assign(cols.t[i], Expr::Lit(0));
                cols.zero[i] = false;
            }
            let qi = b.bind(format!("q{i}"), quotient_digit(p, cols.t[i]));
            let low = Expr::sum(
                [Expr::Var(cols.t[i])]
                    .into_iter()
                    .chain(Expr::product(Expr::Var(qi), Expr::Lit(p.p_limbs[0]))),
            )
            .expect("non-empty");
            b.assign(c, Expr::shifted(low, LIMB_BITS));
            // The triangle: products landing below the block's end, and the carry.
            cols.add(b, i + 1, Expr::Var(c));
            for j in 1..end - i {
                if let Some(e) = Expr::product(Expr::Var(qi), Expr::Lit(p.p_limbs[j])) {
                    cols.add(b, i + j, e);
                }
            }
            q.push(Limb::normalized(Expr::Var(qi)));
        }
        // The deferred products q_i p_j, i + j >= end: a rectangle against the limbs of p
        // from `end - start` on (all past the block's end when those limbs are as many as
        // the digits), the rest one by one.
        let digits = end - start;
        let rect_from = end - start;
        let rect = (rect_from + digits <= n).then(|| {
            let plimbs: Vec<Limb> = (rect_from..rect_from + digits)
                .map(|j| Limb::lit(p.p_limbs[j]))
                .collect();
            product_columns(b, names, &q, &plimbs)
        });
        for (di, qi) in q.iter().enumerate() {
            let i = start + di;
            for j in (end - i)..n {
                let in_rect = rect.is_some() && (rect_from..rect_from + digits).contains(&j);
                if !in_rect && let Some(e) = Expr::product(qi.e.clone(), Expr::Lit(p.p_limbs[j])) {
                    cols.add(b, i + j, e);
                }
            }
        }
        if let Some(rect) = rect {
            for (k, e) in rect.into_iter().enumerate() {
                if let Some(e) = e {
                    cols.add(b, start + rect_from + k, e);
                }
            }
        }
    }
}
