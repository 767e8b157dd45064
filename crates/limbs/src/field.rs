//! The field-arithmetic programs: Montgomery multiplication and squaring with lazy carries,
//! addition, subtraction and the conversions, each built as one straight-line [`Program`].
//!
//! Value ranges (docs/limbs.md derives them): every element passed between functions is
//! *canonical*: limbs `< 2^13`, value `< p`. `mul`, `square` and `from_mont` also accept any
//! value `< 2p` and still return a canonical result. `add`, `sub`, `neg` and `double` need
//! canonical inputs.

use crate::mul::{Reduce, mul, mul_karatsuba, square};
use crate::params::{FieldParams, LIMB_BITS, LIMB_MASK};
use crate::program::{Expr, Program, ProgramBuilder, Returns, Var};
use crate::steps::{Src, conditional_subtract, normalize};

/// Every program of one field, in the order they are emitted.
pub fn programs(p: &FieldParams) -> Vec<Program> {
    let one = {
        let mut v = vec![0u32; p.n_limbs];
        v[0] = 1;
        v
    };
    vec![
        add(
            p,
            "add",
            Src::Arg(0),
            Src::Arg(1),
            &p.p_limbs,
            "a + b (canonical in, canonical out)",
        ),
        add(
            p,
            "double",
            Src::Arg(0),
            Src::Arg(0),
            &p.p_limbs,
            "2a (canonical in, canonical out)",
        ),
        sub(
            p,
            "sub",
            Src::Arg(0),
            Src::Arg(1),
            &p.p_limbs,
            "a - b (canonical in, canonical out)",
        ),
        sub(
            p,
            "neg",
            Src::Const(vec![0; p.n_limbs]),
            Src::Arg(0),
            &p.p_limbs,
            "-a (canonical in, canonical out)",
        ),
        mul_karatsuba(
            p,
            "mul",
            Reduce::Canonical,
            "a b R^-1: Karatsuba product, SOS Montgomery reduction, lazy carries (a b < R p, e.g. inputs < 2p; canonical out)",
        ),
        square(p),
        mul(
            p,
            "to_mont",
            Src::Arg(0),
            Src::Const(p.r2_limbs.clone()),
            Reduce::Canonical,
            "a R: into Montgomery form (a R^2 R^-1; input < 2p, canonical out)",
        ),
        mul(
            p,
            "from_mont",
            Src::Arg(0),
            Src::Const(one),
            Reduce::Canonical,
            "a R^-1: out of Montgomery form (input < 2p, canonical out)",
        ),
        is_zero(p),
        eq(p),
        unpack(p),
        pack(p),
    ]
}

/// The functions of the redundant range `[0, 2p)` (docs/limbs.md, "Lazy reduction"):
/// normalized limbs, values reduced only where a bound requires it. They live in a module of
/// their own (`<field>_lazy.wgsl`) that only the kernels using them compose, since even an
/// uncalled function lengthens a pipeline's compilation.
pub fn lazy_programs(p: &FieldParams) -> Vec<Program> {
    vec![
        mul(
            p,
            "mul_lazy",
            Src::Arg(0),
            Src::Arg(1),
            Reduce::Lazy,
            "a b R^-1 without the final subtraction (a b < R p, e.g. a < 4p and b < 2p; result < 2p)",
        ),
        add(
            p,
            "add_lazy",
            Src::Arg(0),
            Src::Arg(1),
            &p.twice_p_limbs(),
            "a + b, reduced below 2p (inputs < 2p; result < 2p)",
        ),
        sub(
            p,
            "sub_lazy",
            Src::Arg(0),
            Src::Arg(1),
            &p.twice_p_limbs(),
            "a - b, 2p added on a borrow (inputs < 2p; result < 2p)",
        ),
        sub_wide(p),
        reduce(p),
    ]
}

/// Bit `i` of the 13-bit limbs sits in word `i / 32` of the packed form: the two layouts of the
/// same little-endian integer.
fn unpack(p: &FieldParams) -> Program {
    let w = p.packed_words();
    let b = ProgramBuilder::new(
        "unpack",
        1,
        Returns::Element,
        &format!("{w} little-endian 32-bit words (arkworks' BigInt layout, value < 2^(13 n)) to 13-bit limbs"),
    )
    .word_args(w);
    let limbs = (0..p.n_limbs)
        .map(|i| {
            let bit = LIMB_BITS as usize * i;
            let (word, off) = (bit / 32, (bit % 32) as u32);
            let low = Expr::shifted(Expr::Arg(0, word as u16), off);
            let have = 32 - off;
            if have >= LIMB_BITS || word + 1 >= w {
                Expr::masked(low, LIMB_MASK)
            } else {
                let high =
                    Expr::masked(Expr::Arg(0, word as u16 + 1), (1 << (LIMB_BITS - have)) - 1);
                Expr::plus(
                    low,
                    Expr::Mul(Box::new(high), Box::new(Expr::Lit(1 << have))),
                )
            }
        })
        .collect();
    b.finish(limbs)
}

/// The inverse of [`unpack`] for canonical limbs (each `< 2^13`).
fn pack(p: &FieldParams) -> Program {
    let w = p.packed_words();
    let b = ProgramBuilder::new(
        "pack",
        1,
        Returns::Words(w),
        &format!(
            "canonical 13-bit limbs to {w} little-endian 32-bit words (arkworks' BigInt layout)"
        ),
    );
    let words = (0..w)
        .map(|j| {
            let terms = (0..p.n_limbs).filter_map(|i| {
                let lo = LIMB_BITS as i64 * i as i64 - 32 * j as i64;
                if lo <= -(LIMB_BITS as i64) || lo >= 32 {
                    return None;
                }
                let limb = Expr::Arg(0, i as u16);
                Some(if lo < 0 {
                    Expr::shifted(limb, (-lo) as u32)
                } else {
                    let keep = 32 - lo as u32;
                    let part = if keep >= LIMB_BITS {
                        limb
                    } else {
                        Expr::masked(limb, (1 << keep) - 1)
                    };
                    Expr::Mul(Box::new(part), Box::new(Expr::Lit(1u32 << lo)))
                })
            });
            Expr::sum(terms).unwrap_or(Expr::Lit(0))
        })
        .collect();
    b.finish(words)
}

/// `x + y` reduced below `m` (`p`, or `2p` for the lazy variant): inputs below `m`.
fn add(p: &FieldParams, name: &str, x: Src, y: Src, m: &[u32], doc: &str) -> Program {
    let n = p.n_limbs;
    let arity = 1 + u8::from(matches!(y, Src::Arg(1)));
    let mut b = ProgramBuilder::new(name, arity, Returns::Element, doc);
    let limbs: Vec<Expr> = (0..n).map(|j| Expr::plus(x.limb(j), y.limb(j))).collect();
    let r = normalize(&mut b, p, limbs);
    let result = conditional_subtract(&mut b, m, &r);
    b.finish(result)
}

/// `x + 2p - y` for `x, y < 2p`, in `(0, 4p)`: one carry chain and no reduction. Each limb is
/// lifted by `2^13` so nothing goes below zero; the lifts add up to exactly `2^(13n)`, which
/// leaves as the final carry.
fn sub_wide(p: &FieldParams) -> Program {
    let n = p.n_limbs;
    let twice = p.twice_p_limbs();
    let mut b = ProgramBuilder::new(
        "sub_wide",
        2,
        Returns::Element,
        "a - b + 2p without reduction (inputs < 2p; result in (0, 4p))",
    );
    let r: Vec<Var> = (0..n).map(|j| b.var(format!("r{j}"))).collect();
    let k = b.var("k");
    for j in 0..n {
        let x = Expr::Arg(0, j as u16);
        let y = Expr::Arg(1, j as u16);
        // w = x_j + 2p_j + 2^13 - y_j, plus the incoming carry less the previous limb's lift.
        let w = if j == 0 {
            Expr::minus(Expr::plus(x, Expr::Lit(twice[j] + (1 << LIMB_BITS))), y)
        } else {
            Expr::minus(
                Expr::plus(
                    Expr::plus(x, Expr::Lit(twice[j] + (1 << LIMB_BITS))),
                    Expr::Var(k),
                ),
                Expr::plus(y, Expr::Lit(1)),
            )
        };
        b.assign(r[j], w);
        if j + 1 < n {
            b.assign(k, Expr::shifted(Expr::Var(r[j]), LIMB_BITS));
        }
        b.assign(r[j], Expr::masked(Expr::Var(r[j]), LIMB_MASK));
    }
    b.finish(r.into_iter().map(Expr::Var).collect())
}

/// `x mod p` for `x < 2p`: the conditional subtraction alone.
fn reduce(p: &FieldParams) -> Program {
    let mut b = ProgramBuilder::new(
        "reduce",
        1,
        Returns::Element,
        "a mod p (input < 2p, canonical out)",
    );
    let r: Vec<Var> = (0..p.n_limbs)
        .map(|j| b.bind(format!("r{j}"), Expr::Arg(0, j as u16)))
        .collect();
    let result = conditional_subtract(&mut b, &p.p_limbs, &r);
    b.finish(result)
}

/// `x - y`: a borrow chain (each limb lifted by `2^13` so nothing goes below zero), then `p`
/// added back under `select` when the chain ends in a borrow.
/// `x - y` for `x, y < m` (`p`, or `2p` for the lazy variant), in `[0, m)`.
fn sub(p: &FieldParams, name: &str, x: Src, y: Src, m: &[u32], doc: &str) -> Program {
    let n = p.n_limbs;
    let mut b = ProgramBuilder::new(
        name,
        if matches!(x, Src::Const(_)) { 1 } else { 2 },
        Returns::Element,
        doc,
    );
    // With a constant minuend the subtrahend is argument a.
    let y = match (&x, y) {
        (Src::Const(_), Src::Arg(_)) => Src::Arg(0),
        (_, y) => y,
    };
    let d: Vec<Var> = (0..n).map(|j| b.var(format!("d{j}"))).collect();
    let w = b.var("w");
    let nb = b.var("nb");
    for (j, &dj) in d.iter().enumerate() {
        // w = x_j + 2^13 - y_j - borrow, in [0, 2^14).
        let top = Expr::plus(x.limb(j), Expr::Lit(1 << LIMB_BITS));
        let w_expr = if j == 0 {
            Expr::minus(top, y.limb(j))
        } else {
            Expr::minus(
                Expr::plus(top, Expr::Var(nb)),
                Expr::plus(y.limb(j), Expr::Lit(1)),
            )
        };
        b.assign(w, w_expr);
        b.assign(dj, Expr::masked(Expr::Var(w), LIMB_MASK));
        b.assign(nb, Expr::shifted(Expr::Var(w), LIMB_BITS));
    }
    // e = d + p, needed when the chain borrowed (nb == 0).
    let e: Vec<Var> = (0..n).map(|j| b.var(format!("e{j}"))).collect();
    let k = b.var("k");
    for j in 0..n {
        let sum = Expr::plus(Expr::Var(d[j]), Expr::Lit(m[j]));
        let sum = if j == 0 {
            sum
        } else {
            Expr::plus(sum, Expr::Var(k))
        };
        b.assign(e[j], sum);
        if j + 1 < n {
            b.assign(k, Expr::shifted(Expr::Var(e[j]), LIMB_BITS));
            b.assign(e[j], Expr::masked(Expr::Var(e[j]), LIMB_MASK));
        } else {
            b.assign(e[j], Expr::masked(Expr::Var(e[j]), LIMB_MASK));
        }
    }
    let result = (0..n)
        .map(|j| Expr::Select {
            cond: Box::new(Expr::Var(nb)),
            if_true: Box::new(Expr::Var(d[j])),
            if_false: Box::new(Expr::Var(e[j])),
        })
        .collect();
    b.finish(result)
}

fn is_zero(p: &FieldParams) -> Program {
    let b = ProgramBuilder::new("is_zero", 1, Returns::IsZero, "a == 0 (canonical input)");
    // Each limb is below 2^13, so their sum cannot overflow and is zero exactly when all are.
    let any = Expr::sum((0..p.n_limbs).map(|j| Expr::Arg(0, j as u16))).expect("n > 0");
    b.finish(vec![any])
}

fn eq(p: &FieldParams) -> Program {
    let b = ProgramBuilder::new("eq", 2, Returns::IsZero, "a == b (canonical inputs)");
    // The sum of the limbs' XORs is zero exactly when every pair of limbs is equal.
    let diff = Expr::sum((0..p.n_limbs).map(|j| {
        Expr::Xor(
            Box::new(Expr::Arg(0, j as u16)),
            Box::new(Expr::Arg(1, j as u16)),
        )
    }))
    .expect("n > 0");
    b.finish(vec![diff])
}
