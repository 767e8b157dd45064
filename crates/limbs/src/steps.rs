//! Steps the field programs share (`field.rs` and the multiplications of `mul.rs`): where an
//! operand's limbs come from, carrying limbs into 13 bits, and the conditional subtraction.

use crate::params::{FieldParams, LIMB_BITS, LIMB_MASK};
use crate::program::{Expr, ProgramBuilder, Var};

/// Where an operand's limbs come from.
#[derive(Clone, Debug)]
pub(crate) enum Src {
    /// Argument `a` (0) or `b` (1).
    Arg(u8),
    /// Known limbs, folded into the program at generation time.
    Const(Vec<u32>),
}

impl Src {
    pub(crate) fn limb(&self, i: usize) -> Expr {
        match self {
            Src::Arg(k) => Expr::Arg(*k, i as u16),
            Src::Const(c) => Expr::Lit(c[i]),
        }
    }
}

/// Carries unnormalized limbs into 13-bit limbs; the value must be below `R`.
pub(crate) fn normalize(b: &mut ProgramBuilder, p: &FieldParams, limbs: Vec<Expr>) -> Vec<Var> {
    let n = p.n_limbs;
    let r: Vec<Var> = (0..n).map(|j| b.var(format!("r{j}"))).collect();
    let k = b.var("k");
    for (j, limb) in limbs.into_iter().enumerate() {
        b.assign(
            r[j],
            if j == 0 {
                limb
            } else {
                Expr::plus(limb, Expr::Var(k))
            },
        );
        if j + 1 < n {
            b.assign(k, Expr::shifted(Expr::Var(r[j]), LIMB_BITS));
            b.assign(r[j], Expr::masked(Expr::Var(r[j]), LIMB_MASK));
        }
    }
    r
}

/// Given normalized limbs of a value `< 2m` (`m` is `p` or `2p`, in normalized limbs), the
/// limbs of the value reduced below `m`: `d = r - m` with a borrow chain kept in range by
/// adding `2^13` to each limb first, then `select(r, d, no borrow)`.
pub(crate) fn conditional_subtract(b: &mut ProgramBuilder, m: &[u32], r: &[Var]) -> Vec<Expr> {
    let n = m.len();
    let d: Vec<Var> = (0..n).map(|j| b.var(format!("d{j}"))).collect();
    let w = b.var("w");
    let no_borrow = b.var("nb");
    for j in 0..n {
        // w = r_j + 2^13 - p_j - borrow, with borrow = 1 - no_borrow; w is in [0, 2^14).
        let top = Expr::plus(Expr::Var(r[j]), Expr::Lit((1 << LIMB_BITS) - m[j]));
        let w_expr = if j == 0 {
            top
        } else {
            Expr::minus(Expr::plus(top, Expr::Var(no_borrow)), Expr::Lit(1))
        };
        b.assign(w, w_expr);
        b.assign(d[j], Expr::masked(Expr::Var(w), LIMB_MASK));
        b.assign(no_borrow, Expr::shifted(Expr::Var(w), LIMB_BITS));
    }
    (0..n)
        .map(|j| Expr::Select {
            cond: Box::new(Expr::Var(no_borrow)),
            if_true: Box::new(Expr::Var(d[j])),
            if_false: Box::new(Expr::Var(r[j])),
        })
        .collect()
}
