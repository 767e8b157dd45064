//! The emulator of [`WideProgram`]s: the very same statements run on the CPU with IEEE-754
//! semantics for `f64` (`f64::mul_add` is the fused operation WGSL's `fma` is on a device
//! whose known-answer check passed) and wrapping `u64` arithmetic, while tracking every `u64`
//! value's exact integer: an operation that reads a `u64` as a number (a shift, a conversion
//! to `f64`) fails unless the wrapped value is that exact integer, and an `f64` addition or
//! subtraction of integers fails unless its result is exact.

use super::ir::{W, WideProgram};

/// What the emulator found wrong: the WGSL would have computed something else than the
/// algorithm means.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("`{program}` statement {stmt}: {what}")]
pub struct WideFault {
    /// The program name.
    pub program: String,
    /// Index of the statement (or `body.len() + i` for result word `i`).
    pub stmt: usize,
    /// What went wrong.
    pub what: String,
}

/// An integral `f64` below `2^126` as an exact integer.
fn int_of(x: f64) -> Option<i128> {
    (x.fract() == 0.0 && x.abs() < 2f64.powi(126)).then_some(x as i128)
}

/// A value of the emulator.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Val {
    U32(u32),
    /// The wrapped bits and the exact integer they stand for.
    U64(u64, i128),
    F64(f64),
}

impl WideProgram {
    /// Runs the program on the CPU; `args[k]` are the words of argument `k`.
    pub fn eval(&self, args: &[&[u32]]) -> Result<Vec<u32>, WideFault> {
        self.eval_fma(args, true)
    }

    /// [`WideProgram::eval`] with `fma(a, b, c)` rounded twice (`a b` rounded, then the sum):
    /// what a device whose `fma` is not fused computes.
    pub fn eval_unfused(&self, args: &[&[u32]]) -> Result<Vec<u32>, WideFault> {
        self.eval_fma(args, false)
    }

    fn eval_fma(&self, args: &[&[u32]], fused: bool) -> Result<Vec<u32>, WideFault> {
        for (k, (a, &w)) in args.iter().zip(&self.arg_words).enumerate() {
            if a.len() != w {
                return Err(self.fault(0, format!("argument {k} has {} words, not {w}", a.len())));
            }
        }
        let mut env = vec![Val::U32(0); self.vars.len()];
        for (i, (v, e, _)) in self.body.iter().enumerate() {
            env[v.0 as usize] = self.eval_expr(e, args, &env, i, fused)?;
        }
        let base = self.body.len();
        self.result
            .iter()
            .enumerate()
            .map(
                |(i, e)| match self.eval_expr(e, args, &env, base + i, fused)? {
                    Val::U32(x) => Ok(x),
                    v => Err(self.fault(base + i, format!("result {i} is {v:?}, not a u32"))),
                },
            )
            .collect()
    }

    fn fault(&self, stmt: usize, what: String) -> WideFault {
        WideFault {
            program: self.name.clone(),
            stmt,
            what,
        }
    }

    fn eval_expr(
        &self,
        e: &W,
        args: &[&[u32]],
        env: &[Val],
        stmt: usize,
        fused: bool,
    ) -> Result<Val, WideFault> {
        let ev = |x: &W| self.eval_expr(x, args, env, stmt, fused);
        let fault = |what: String| self.fault(stmt, what);
        let u32_of = |x: &W| match ev(x)? {
            Val::U32(v) => Ok(v),
            v => Err(fault(format!("{v:?} where a u32 belongs"))),
        };
        let u64_of = |x: &W| match ev(x)? {
            Val::U64(w, exact) => Ok((w, exact)),
            v => Err(fault(format!("{v:?} where a u64 belongs"))),
        };
        let f64_of = |x: &W| match ev(x)? {
            Val::F64(v) => Ok(v),
            v => Err(fault(format!("{v:?} where an f64 belongs"))),
        };
        // The exact value as the u64 it must be, for operations that read it as a number.
        let in_u64 = |(w, exact): (u64, i128), op: &str| {
            if exact == i128::from(w) {
                Ok(w)
            } else {
                Err(fault(format!(
                    "{op} of {exact}, outside the u64 range (wrapped to {w})"
                )))
            }
        };
        let exact64 = |exact: i128| Val::U64(exact as u64, exact);
        Ok(match e {
            W::U32(x) => Val::U32(*x),
            W::I64(x) => exact64(*x),
            W::F64(x) => Val::F64(*x),
            W::Var(v, _) => env[v.0 as usize],
            W::Arg(k, i) => Val::U32(args[*k as usize][*i as usize]),
            W::Add32(l, r) => {
                let (l, r) = (u32_of(l)?, u32_of(r)?);
                Val::U32(
                    l.checked_add(r)
                        .ok_or_else(|| fault(format!("u32 add of {l} and {r} overflows")))?,
                )
            }
            W::MulLo32(l, r) => Val::U32(u32_of(l)?.wrapping_mul(u32_of(r)?)),
            W::Shr32(x, k) => Val::U32(u32_of(x)? >> k),
            W::Shl32(x, k) => Val::U32(u32_of(x)? << k),
            W::And32(x, m) => Val::U32(u32_of(x)? & m),
            W::Or32(l, r) => Val::U32(u32_of(l)? | u32_of(r)?),
            W::Lo32(x) => Val::U32(u64_of(x)?.0 as u32),
            W::Widen(x) => exact64(i128::from(u32_of(x)?)),
            W::Add64(l, r) => {
                let (l, r) = (u64_of(l)?, u64_of(r)?);
                Val::U64(l.0.wrapping_add(r.0), l.1 + r.1)
            }
            W::Sub64(l, r) => {
                let (l, r) = (u64_of(l)?, u64_of(r)?);
                Val::U64(l.0.wrapping_sub(r.0), l.1 - r.1)
            }
            W::MulWide(l, r) => exact64(i128::from(u32_of(l)?) * i128::from(u32_of(r)?)),
            W::MulLo64(l, r) => {
                let l = in_u64(u64_of(l)?, "multiplication")?;
                let r = in_u64(u64_of(r)?, "multiplication")?;
                exact64(i128::from(l.wrapping_mul(r)))
            }
            W::Shr64(x, k) => exact64(i128::from(in_u64(u64_of(x)?, "shift")? >> k)),
            W::Sar64(x, k) => {
                let (w, exact) = u64_of(x)?;
                if exact != i128::from(w as i64) {
                    return Err(fault(format!(
                        "arithmetic shift of {exact}, outside the i64 range"
                    )));
                }
                exact64(exact >> k)
            }
            W::Shl64(x, k) => {
                let w = in_u64(u64_of(x)?, "shift")?;
                let exact = i128::from(w) << k;
                if exact >= 1 << 64 {
                    return Err(fault(format!("{w} << {k} leaves the u64 range")));
                }
                exact64(exact)
            }
            W::And64(x, m) => {
                let (w, exact) = u64_of(x)?;
                Val::U64(w & m, exact & i128::from(*m))
            }
            W::Or64(l, r) => {
                let l = in_u64(u64_of(l)?, "or")?;
                let r = in_u64(u64_of(r)?, "or")?;
                exact64(i128::from(l | r))
            }
            W::Fma(a, b, c) => {
                let (a, b, c) = (f64_of(a)?, f64_of(b)?, f64_of(c)?);
                for x in [a, b] {
                    if !(x.fract() == 0.0 && (0.0..self.fma_bound).contains(&x)) {
                        return Err(fault(format!(
                            "fma operand {x} is not an integer in [0, {})",
                            self.fma_bound
                        )));
                    }
                }
                Val::F64(if fused { a.mul_add(b, c) } else { a * b + c })
            }
            W::FSub(l, r) | W::FAdd(l, r) => {
                let (l, r) = (f64_of(l)?, f64_of(r)?);
                let (v, exact) = if matches!(e, W::FSub(..)) {
                    (l - r, int_of(l).zip(int_of(r)).map(|(l, r)| l - r))
                } else {
                    (l + r, int_of(l).zip(int_of(r)).map(|(l, r)| l + r))
                };
                // Integer operands: the result must be their exact sum or difference.
                if exact.is_some_and(|x| int_of(v) != Some(x)) {
                    return Err(fault(format!("f64 {l} and {r}: the result {v} is rounded")));
                }
                Val::F64(v)
            }
            W::FromBits(x) => Val::F64(f64::from_bits(in_u64(u64_of(x)?, "bitcast")?)),
            W::ToBits(x) => {
                let bits = f64_of(x)?.to_bits();
                exact64(i128::from(bits))
            }
            W::Select(c, t, f) => {
                if u32_of(c)? != 0 {
                    ev(t)?
                } else {
                    ev(f)?
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wide::ir::{TWO_52, WideBuilder};

    #[test]
    fn shifts_check_the_exact_value() {
        // 0 - 1 wraps to 2^64 - 1: an arithmetic shift reads -1, a logical one is refused.
        let mut b = WideBuilder::new("t", "test", vec![1], "array<u32, 1>");
        let x = b.bind("x", W::sub64(W::widen(W::Arg(0, 0)), W::I64(1)));
        let y = b.bind("y", W::sar64(x.clone(), 4));
        let p = b.finish(vec![W::lo32(y)], "array<u32, 1>");
        assert_eq!(p.eval(&[&[0]]), Ok(vec![u32::MAX]));
        let mut b = WideBuilder::new("t", "test", vec![1], "array<u32, 1>");
        let x = b.bind("x", W::sub64(W::widen(W::Arg(0, 0)), W::I64(1)));
        let p = b.finish(vec![W::lo32(W::shr64(x, 4))], "array<u32, 1>");
        assert!(p.eval(&[&[0]]).is_err());
        assert_eq!(p.eval(&[&[17]]), Ok(vec![1]));
    }

    #[test]
    fn fma_operands_are_checked() {
        let mut b = WideBuilder::new("t", "test", vec![1], "array<u32, 1>");
        let big = W::F64(TWO_52);
        let x = b.bind("x", W::fma(big.clone(), big, W::F64(0.0)));
        let p = b.finish(vec![W::lo32(W::to_bits(x))], "array<u32, 1>");
        assert!(p.eval(&[&[0]]).is_err());
    }

    #[test]
    fn rounded_f64_additions_are_faults() {
        let run = |x: f64, y: f64| {
            let mut b = WideBuilder::new("t", "test", vec![1], "array<u32, 1>");
            let s = b.bind("s", W::fadd(W::F64(x), W::F64(y)));
            let d = b.bind("d", W::fsub(s, W::F64(y)));
            let p = b.finish(vec![W::lo32(W::to_bits(d))], "array<u32, 1>");
            let w = p.to_wgsl("fq");
            assert!(
                w.contains("let s = 900719925474099") && w.contains("lf + "),
                "{w}"
            );
            p.eval(&[&[0]])
        };
        // 2^53 + 2 is exact; 2^53 + 1 rounds (to 2^53), which the emulator must refuse.
        assert!(run(2.0 * TWO_52, 2.0).is_ok());
        assert!(run(2.0 * TWO_52, 1.0).is_err());
        assert!(run(2.0 * TWO_52 + 2.0, 1.0).is_err());
    }
}
