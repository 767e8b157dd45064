//! The Montgomery multiplications: CIOS with lazy carries (where one operand is a constant,
//! and the NTT's `mul_lazy`), the Karatsuba product with SOS reduction (`mul`), and squaring
//! (docs/limbs.md derives each and its bounds).

use crate::karatsuba::{Columns, Limb, Names, product_columns, quotient_digit, reduce_in_blocks};
use crate::params::{FieldParams, LIMB_BITS};
use crate::program::{Expr, Program, ProgramBuilder, Returns, Var};
use crate::steps::{Src, conditional_subtract, normalize};

/// How far a multiplication reduces its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reduce {
    /// Below `p`.
    Canonical,
    /// Below `2p`: the final conditional subtraction is left out.
    Lazy,
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
    let result = carry_and_reduce(&mut b, p, limbs, reduce);
    b.finish(result)
}

/// Squaring: the product columns first, cross terms computed once and doubled (separated
/// operand scanning, Koç et al. 1996), then `mul`'s Montgomery reduction in two blocks
/// ([`reduce_in_blocks`]): `n(n+1)/2` u32 multiplications for the columns (1299 in all for 30
/// limbs); the same `2n`-product accumulator bound as `mul`.
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
    let result = reduce_columns(&mut b, p, &mut Names::new(), cols, Reduce::Canonical);
    b.finish(result)
}

/// Montgomery multiplication of two arguments by separated operand scanning: the product's
/// columns by Karatsuba ([`product_columns`]: `a = aL + aH 2^(13h)`, `h = n / 2`, the columns
/// of `aL bL`, `aH bH` and `(aL + aH)(bL + bH)` give every column of `a b`, and `aL bL`, `aH bH`
/// split again), then the Montgomery reduction in two blocks of quotient digits whose
/// deferred products are Karatsuba rectangles too ([`reduce_in_blocks`]). 620 u32
/// multiplications for 20 limbs and 1413 for 30, against CIOS's 820 and 1830.
///
/// Bounds (docs/limbs.md, "Multiplication of two variables"): a Karatsuba level runs only
/// where its middle product's columns stay below `2^32`; every column of the product and of
/// the reduction receives exactly the schoolbook's products, so the accumulator bound is
/// CIOS's `2n` products plus one carry.
pub(crate) fn mul_karatsuba(p: &FieldParams, name: &str, reduce: Reduce, doc: &str) -> Program {
    let n = p.n_limbs;
    let mut b = ProgramBuilder::new(name, 2, Returns::Element, doc);
    let mut names = Names::new();
    let limbs = |k: u8| -> Vec<Limb> {
        (0..n)
            .map(|i| Limb::normalized(Expr::Arg(k, i as u16)))
            .collect()
    };
    let product = product_columns(&mut b, &mut names, &limbs(0), &limbs(1));
    let cols = product
        .into_iter()
        .map(|e| e.into_iter().collect())
        .collect();
    let result = reduce_columns(&mut b, p, &mut names, cols, reduce);
    b.finish(result)
}

/// The Montgomery reduction of a product given as `2n - 1` or `2n` columns (each a sum of
/// terms of at most `n` limb products; [`reduce_in_blocks`]), then the carries and the final
/// reduction.
fn reduce_columns(
    b: &mut ProgramBuilder,
    p: &FieldParams,
    names: &mut Names,
    cols: Vec<Vec<Expr>>,
    reduce: Reduce,
) -> Vec<Expr> {
    let n = p.n_limbs;
    let mut columns = Columns {
        t: (0..2 * n).map(|k| b.var(format!("t{k}"))).collect(),
        zero: vec![true; 2 * n],
    };
    for (k, col) in cols.into_iter().enumerate() {
        if let Some(e) = Expr::sum(col) {
            columns.add(b, k, e);
        }
    }
    reduce_in_blocks(b, p, names, &mut columns);
    let limbs: Vec<Expr> = (n..2 * n).map(|k| columns.get(k)).collect();
    carry_and_reduce(b, p, limbs, reduce)
}

/// The result's unnormalized limbs (value below `2p`) carried into 13-bit limbs, then reduced
/// below `p` or left below `2p`.
fn carry_and_reduce(
    b: &mut ProgramBuilder,
    p: &FieldParams,
    limbs: Vec<Expr>,
    reduce: Reduce,
) -> Vec<Expr> {
    let r = normalize(b, p, limbs);
    match reduce {
        Reduce::Canonical => conditional_subtract(b, &p.p_limbs, &r),
        Reduce::Lazy => r.into_iter().map(Expr::Var).collect(),
    }
}
