//! The Montgomery multiplications: CIOS with lazy carries (where one operand is a constant,
//! and the NTT's `mul_lazy`), the Karatsuba product with SOS reduction (`mul`), and squaring
//! (docs/limbs.md derives each and its bounds).

use crate::field::{Src, conditional_subtract, normalize};
use crate::params::{FieldParams, LIMB_BITS, LIMB_MASK};
use crate::program::{Expr, Program, ProgramBuilder, Returns, Var};

/// How far a multiplication reduces its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reduce {
    /// Below `p`.
    Canonical,
    /// Below `2p`: the final conditional subtraction is left out.
    Lazy,
}

/// `q = t mu mod 2^13`, the Montgomery quotient digit. When `p = 1 mod 2^13` (so `mu = -1`)
/// it is `-t mod 2^13`: one operation fewer than the product.
fn quotient_digit(p: &FieldParams, t: Var) -> Expr {
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

/// CIOS Montgomery multiplication (Koç, Acar, Kaliski 1996, "Analyzing and comparing Montgomery
/// multiplication algorithms") with the carries of the inner loop deferred: each accumulator
/// `s_j` takes at most `2n` limb products plus one carry before the final normalization, which
/// [`crate::params::CARRY_FREE_PRODUCTS`] bounds (the `nSafe` idea of mitschabaude/montgomery).
/// `n^2 + n^2 + n` u32 multiplications; literal operands are folded.
pub(crate) fn mul(
    p: &FieldParams,
    name: &str,
    x: Src,
    y: Src,
    reduce: Reduce,
    doc: &str,
) -> Program {
    let n = p.n_limbs;
    let mut b = ProgramBuilder::new(
        name,
        1 + u8::from(matches!(y, Src::Arg(1))),
        Returns::Element,
        doc,
    );
    let s: Vec<Var> = (0..n).map(|j| b.var(format!("s{j}"))).collect();
    // Which accumulators are known to be zero at generation time.
    let mut zero = vec![true; n];
    let t = b.var("t");
    let q = b.var("q");
    let c = b.var("c");
    for i in 0..n {
        let xi = x.limb(i);
        // t = s0 + x_i y_0; q = t mu mod 2^13 makes t + q p_0 divisible by 2^13.
        let t_terms: Vec<Expr> = [
            (!zero[0]).then(|| Expr::Var(s[0])),
            Expr::product(xi.clone(), y.limb(0)),
        ]
        .into_iter()
        .flatten()
        .collect();
        let have_q = match Expr::sum(t_terms) {
            Some(e) => {
                b.assign(t, e);
                b.assign(q, quotient_digit(p, t));
                let low = Expr::sum(
                    [Expr::Var(t)]
                        .into_iter()
                        .chain(Expr::product(Expr::Var(q), Expr::Lit(p.p_limbs[0]))),
                )
                .expect("non-empty");
                b.assign(c, Expr::shifted(low, LIMB_BITS));
                true
            }
            None => false,
        };
        // s_{j-1} = s_j + x_i y_j + q p_j (+ carry into the lowest).
        for j in 1..n {
            let mut terms: Vec<Expr> = Vec::new();
            if !zero[j] {
                terms.push(Expr::Var(s[j]));
            }
            terms.extend(Expr::product(xi.clone(), y.limb(j)));
            if have_q {
                terms.extend(Expr::product(Expr::Var(q), Expr::Lit(p.p_limbs[j])));
                if j == 1 {
                    terms.push(Expr::Var(c));
                }
            }
            match Expr::sum(terms) {
                Some(e) => {
                    b.assign(s[j - 1], e);
                    zero[j - 1] = false;
                }
                None => {
                    if !zero[j - 1] {
                        b.assign(s[j - 1], Expr::Lit(0));
                    }
                    zero[j - 1] = true;
                }
            }
        }
        zero[n - 1] = true;
    }
    let limbs: Vec<Expr> = (0..n)
        .map(|j| {
            if zero[j] {
                Expr::Lit(0)
            } else {
                Expr::Var(s[j])
            }
        })
        .collect();
    let r = normalize(&mut b, p, limbs);
    let result = match reduce {
        Reduce::Canonical => conditional_subtract(&mut b, &p.p_limbs, &r),
        Reduce::Lazy => r.into_iter().map(Expr::Var).collect(),
    };
    b.finish(result)
}

/// Squaring: the product columns first, cross terms computed once and doubled (separated
/// operand scanning, Koç et al. 1996), then the Montgomery reduction column by column.
/// `n(n+1)/2 + n^2 + n` u32 multiplications; the same `2n`-product accumulator bound as `mul`.
pub(crate) fn square(p: &FieldParams) -> Program {
    let n = p.n_limbs;
    let mut b = ProgramBuilder::new(
        "square",
        1,
        Returns::Element,
        "a^2 R^-1: SOS Montgomery squaring, lazy carries (input < 2p, canonical out)",
    );
    let a = |i: usize| Expr::Arg(0, i as u16);
    // Doubled limbs (< 2^14): a cross term a_i (2 a_j) < 2^27 counts as two products.
    let twice: Vec<Var> = (1..n)
        .map(|j| {
            b.bind(
                format!("h{j}"),
                Expr::Mul(Box::new(a(j)), Box::new(Expr::Lit(2))),
            )
        })
        .collect();
    let mut cols: Vec<Vec<Expr>> = vec![Vec::new(); 2 * n];
    for i in 0..n {
        cols[2 * i].push(Expr::Mul(Box::new(a(i)), Box::new(a(i))));
        for j in i + 1..n {
            cols[i + j].push(Expr::Mul(Box::new(a(i)), Box::new(Expr::Var(twice[j - 1]))));
        }
    }
    let result = reduce_columns(&mut b, p, cols, Reduce::Canonical);
    b.finish(result)
}

/// Montgomery multiplication of two arguments with one level of Karatsuba on the product
/// (separated operand scanning): with `a = aL + aH 2^(13h)`, `h = n / 2`, the columns of
/// `aL bL`, `aH bH` and `(aL + aH)(bL + bH)` give every column of `a b` in `3 (n/2)^2`
/// multiplications instead of `n^2`; the Montgomery reduction then takes the columns as
/// [`square`] does. `3 (n/2)^2 + n^2 + n` u32 multiplications (720 for 20 limbs, 1605 for
/// 30, against CIOS's 820 and 1830).
///
/// Bounds (docs/limbs.md, "Multiplication of two variables"): limbs of the half sums are below `2^14`, so a column of
/// the middle product holds at most `ceil(n/2)` products below `2^28` (`15 (2^14 - 2)^2 <
/// 2^32` for 30 limbs). Its cross part `M_k - L_k - H_k` is a sum of limb products, never
/// negative, and every column of `a b` is the schoolbook column: at most `n` limb products,
/// the accumulator bound of CIOS.
pub(crate) fn mul_karatsuba(p: &FieldParams, name: &str, reduce: Reduce, doc: &str) -> Program {
    let n = p.n_limbs;
    let h = n / 2;
    let g = n - h;
    let mut b = ProgramBuilder::new(name, 2, Returns::Element, doc);
    let limb = |k: u8, i: usize| Expr::Arg(k, i as u16);
    // Half sums: sa_i = a_i + a_{i+h} (a_{i+h} alone past the low half when n is odd).
    let half_sum = |b: &mut ProgramBuilder, k: u8, tag: &str| -> Vec<Expr> {
        (0..g)
            .map(|i| {
                let hi = limb(k, i + h);
                if i < h {
                    Expr::Var(b.bind(format!("{tag}{i}"), Expr::plus(limb(k, i), hi)))
                } else {
                    hi
                }
            })
            .collect()
    };
    let sa = half_sum(&mut b, 0, "sa");
    let sb = half_sum(&mut b, 1, "sb");
    // Columns of a product of `len`-limb operands `x(i)`, `y(j)`.
    let columns = |len: usize, x: &dyn Fn(usize) -> Expr, y: &dyn Fn(usize) -> Expr| {
        let mut cols: Vec<Vec<Expr>> = vec![Vec::new(); 2 * len - 1];
        for i in 0..len {
            for j in 0..len {
                cols[i + j].extend(Expr::product(x(i), y(j)));
            }
        }
        cols.into_iter().map(Expr::sum).collect::<Vec<_>>()
    };
    let bind_all = |b: &mut ProgramBuilder, tag: &str, cols: Vec<Option<Expr>>| -> Vec<Expr> {
        cols.into_iter()
            .enumerate()
            .map(|(k, e)| match e {
                Some(e) => Expr::Var(b.bind(format!("{tag}{k}"), e)),
                None => Expr::Lit(0),
            })
            .collect()
    };
    let low = columns(h, &|i| limb(0, i), &|j| limb(1, j));
    let low = bind_all(&mut b, "kl", low);
    let high = columns(g, &|i| limb(0, i + h), &|j| limb(1, j + h));
    let high = bind_all(&mut b, "kh", high);
    let mid = columns(g, &|i| sa[i].clone(), &|j| sb[j].clone());
    let mut cols: Vec<Vec<Expr>> = vec![Vec::new(); 2 * n];
    for (k, l) in low.iter().enumerate() {
        cols[k].push(l.clone());
    }
    for (k, m) in mid.into_iter().enumerate() {
        let Some(m) = m else { continue };
        // The cross part: M_k - L_k - H_k (L_k zero past the low product's columns).
        let mut cross = m;
        if let Some(l) = low.get(k) {
            cross = Expr::minus(cross, l.clone());
        }
        cross = Expr::minus(cross, high[k].clone());
        cols[k + h].push(cross);
    }
    for (k, hk) in high.into_iter().enumerate() {
        cols[k + 2 * h].push(hk);
    }
    let result = reduce_columns(&mut b, p, cols, reduce);
    b.finish(result)
}

/// The Montgomery reduction of a product given as `2n` columns (each a sum of terms of at most
/// `n` limb products), column by column, then the carries and the final reduction.
fn reduce_columns(
    b: &mut ProgramBuilder,
    p: &FieldParams,
    cols: Vec<Vec<Expr>>,
    reduce: Reduce,
) -> Vec<Expr> {
    let n = p.n_limbs;
    let t: Vec<Var> = (0..2 * n).map(|k| b.var(format!("t{k}"))).collect();
    let mut zero = vec![true; 2 * n];
    for (k, col) in cols.into_iter().enumerate() {
        if let Some(e) = Expr::sum(col) {
            b.assign(t[k], e);
            zero[k] = false;
        }
    }
    let q = b.var("q");
    let c = b.var("c");
    for i in 0..n {
        if zero[i] {
            b.assign(t[i], Expr::Lit(0));
            zero[i] = false;
        }
        b.assign(q, quotient_digit(p, t[i]));
        let low = Expr::sum(
            [Expr::Var(t[i])]
                .into_iter()
                .chain(Expr::product(Expr::Var(q), Expr::Lit(p.p_limbs[0]))),
        )
        .expect("non-empty");
        b.assign(c, Expr::shifted(low, LIMB_BITS));
        for j in 1..n {
            let k = i + j;
            let mut terms = Vec::new();
            if !zero[k] {
                terms.push(Expr::Var(t[k]));
            }
            terms.extend(Expr::product(Expr::Var(q), Expr::Lit(p.p_limbs[j])));
            if j == 1 {
                terms.push(Expr::Var(c));
            }
            if let Some(e) = Expr::sum(terms) {
                b.assign(t[k], e);
                zero[k] = false;
            }
        }
    }
    let limbs: Vec<Expr> = (n..2 * n)
        .map(|k| {
            if zero[k] {
                Expr::Lit(0)
            } else {
                Expr::Var(t[k])
            }
        })
        .collect();
    let r = normalize(b, p, limbs);
    match reduce {
        Reduce::Canonical => conditional_subtract(b, &p.p_limbs, &r),
        Reduce::Lazy => r.into_iter().map(Expr::Var).collect(),
    }
}
