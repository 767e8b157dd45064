//! A typed straight-line program over `u32`, `u64` and `f64`: the single source of every
//! function of the 64-bit arithmetics (docs/limbs.md, "The 64-bit arithmetics").
//! [`WideProgram::to_wgsl`] prints it; [`WideProgram::eval`] (`super::emulate`) runs the
//! very same statements on the CPU.

use std::fmt::Write as _;

/// The type of an expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// `u32`
    U32,
    /// `u64` (wrapping; its exact value is tracked by the emulator)
    U64,
    /// `f64`
    F64,
}

/// A variable of a [`WideProgram`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WVar(pub(super) u32);

/// An expression. Constructors check operand types in debug builds.
#[derive(Clone, Debug, PartialEq)]
pub enum W {
    /// A `u32` literal.
    U32(u32),
    /// A `u64` literal standing for an exact integer (printed modulo `2^64`): offsets that
    /// cancel the constant parts of summed bit patterns.
    I64(i128),
    /// An `f64` literal.
    F64(f64),
    /// A variable.
    Var(WVar, Ty),
    /// Word `.1` of argument `.0` (`u32`).
    Arg(u8, u16),
    /// `u32` `l + r`, which must not overflow.
    Add32(Box<W>, Box<W>),
    /// `u32` `l * r` modulo `2^32` (only its low bits are used).
    MulLo32(Box<W>, Box<W>),
    /// `u32` `e >> k`.
    Shr32(Box<W>, u32),
    /// `u32` `e << k`, bits shifted out dropped.
    Shl32(Box<W>, u32),
    /// `u32` `e & m`.
    And32(Box<W>, u32),
    /// `u32` `l | r`.
    Or32(Box<W>, Box<W>),
    /// The low 32 bits of a `u64`.
    Lo32(Box<W>),
    /// A `u32` as `u64`.
    Widen(Box<W>),
    /// `u64` `l + r` (wrapping).
    Add64(Box<W>, Box<W>),
    /// `u64` `l - r` (wrapping).
    Sub64(Box<W>, Box<W>),
    /// The 64-bit product of two `u32`.
    MulWide(Box<W>, Box<W>),
    /// `u64` `l * r` modulo `2^64` of exact non-negative values (only its low bits are used).
    MulLo64(Box<W>, Box<W>),
    /// `u64` logical `e >> k`: the exact value must be in `[0, 2^64)`.
    Shr64(Box<W>, u32),
    /// `u64` arithmetic `e >> k` (through `i64`): the exact value must be in `[-2^63, 2^63)`.
    Sar64(Box<W>, u32),
    /// `u64` `e << k`: the exact value must stay below `2^64`.
    Shl64(Box<W>, u32),
    /// `u64` `e & m` (two's complement: exact modulo the mask's power of two).
    And64(Box<W>, u64),
    /// `u64` `l | r` of exact non-negative values.
    Or64(Box<W>, Box<W>),
    /// `fma(a, b, c)` on `f64`; `a` and `b` must be integers in `[0, 2^52)`.
    Fma(Box<W>, Box<W>, Box<W>),
    /// `f64` `l - r`, which must be exact (the emulator checks it).
    FSub(Box<W>, Box<W>),
    /// `f64` `l + r`, which must be exact (the emulator checks it).
    FAdd(Box<W>, Box<W>),
    /// `bitcast<f64>` of a `u64` whose exact value is its bits.
    FromBits(Box<W>),
    /// `bitcast<u64>` of an `f64`.
    ToBits(Box<W>),
    /// `select(if_false, if_true, cond != 0)` with a `u32` condition.
    Select(Box<W>, Box<W>, Box<W>),
}

macro_rules! ctor {
    ($name:ident, $variant:ident, $($a:ident),+) => {
        #[doc = concat!("[`W::", stringify!($variant), "`]")]
        pub fn $name($($a: W),+) -> W {
            W::$variant($(Box::new($a)),+)
        }
    };
}

impl W {
    ctor!(add32, Add32, l, r);
    ctor!(mul_lo32, MulLo32, l, r);
    ctor!(or32, Or32, l, r);
    ctor!(lo32, Lo32, e);
    ctor!(widen, Widen, e);
    ctor!(add64, Add64, l, r);
    ctor!(sub64, Sub64, l, r);
    ctor!(mul_wide, MulWide, l, r);
    ctor!(mul_lo64, MulLo64, l, r);
    ctor!(or64, Or64, l, r);
    ctor!(fma, Fma, a, b, c);
    ctor!(fsub, FSub, l, r);
    ctor!(fadd, FAdd, l, r);
    ctor!(from_bits, FromBits, e);
    ctor!(to_bits, ToBits, e);
    ctor!(select, Select, cond, if_true, if_false);

    /// [`W::Shr32`]
    pub fn shr32(e: W, k: u32) -> W {
        W::Shr32(Box::new(e), k)
    }
    /// [`W::Shl32`]
    pub fn shl32(e: W, k: u32) -> W {
        W::Shl32(Box::new(e), k)
    }
    /// [`W::And32`]
    pub fn and32(e: W, m: u32) -> W {
        W::And32(Box::new(e), m)
    }
    /// [`W::Shr64`]
    pub fn shr64(e: W, k: u32) -> W {
        W::Shr64(Box::new(e), k)
    }
    /// [`W::Sar64`]
    pub fn sar64(e: W, k: u32) -> W {
        W::Sar64(Box::new(e), k)
    }
    /// [`W::Shl64`]
    pub fn shl64(e: W, k: u32) -> W {
        W::Shl64(Box::new(e), k)
    }
    /// [`W::And64`]
    pub fn and64(e: W, m: u64) -> W {
        W::And64(Box::new(e), m)
    }

    /// The sum of `terms` in `u64`, `None` when empty.
    pub fn sum64(terms: impl IntoIterator<Item = W>) -> Option<W> {
        terms.into_iter().reduce(W::add64)
    }

    /// The expression's type.
    pub fn ty(&self) -> Ty {
        match self {
            W::U32(_)
            | W::Arg(..)
            | W::Add32(..)
            | W::MulLo32(..)
            | W::Shr32(..)
            | W::Shl32(..)
            | W::And32(..)
            | W::Or32(..)
            | W::Lo32(_) => Ty::U32,
            W::I64(_)
            | W::Widen(_)
            | W::Add64(..)
            | W::Sub64(..)
            | W::MulWide(..)
            | W::MulLo64(..)
            | W::Shr64(..)
            | W::Sar64(..)
            | W::Shl64(..)
            | W::And64(..)
            | W::Or64(..)
            | W::ToBits(_) => Ty::U64,
            W::F64(_) | W::Fma(..) | W::FSub(..) | W::FAdd(..) | W::FromBits(_) => Ty::F64,
            W::Var(_, t) => *t,
            W::Select(_, t, _) => t.ty(),
        }
    }
}

/// A straight-line program over `u32`, `u64` and `f64` whose arguments and results are
/// `array<u32, _>`.
#[derive(Clone, Debug)]
pub struct WideProgram {
    /// Function name without the field prefix (`mul_packed`, ...).
    pub name: String,
    /// One line of documentation, printed above the WGSL function.
    pub doc: String,
    /// Words of each argument (one entry per argument).
    pub arg_words: Vec<usize>,
    /// Words of the result.
    pub result_words: usize,
    /// The WGSL type of each argument and the result (`Fq`, `array<u32, 12>`, ...).
    pub arg_type: String,
    /// The WGSL type of the result.
    pub result_type: String,
    /// `fma` operands must be integers below this (`2^52`, or `2^51` where the split needs
    /// products below `2^102`).
    pub(super) fma_bound: f64,
    pub(super) vars: Vec<(String, Ty)>,
    pub(super) body: Vec<(WVar, W, bool)>,
    pub(super) result: Vec<W>,
}

/// Builds a [`WideProgram`].
#[derive(Debug)]
pub struct WideBuilder {
    prog: WideProgram,
    declared: Vec<bool>,
}

impl WideBuilder {
    /// A new program of `args` arguments of `words` words each (type `arg_type`), returning
    /// `result_words` words (type `result_type`).
    pub fn new(name: &str, doc: &str, arg_words: Vec<usize>, arg_type: &str) -> Self {
        Self {
            prog: WideProgram {
                name: name.to_owned(),
                doc: doc.to_owned(),
                arg_words,
                result_words: 0,
                arg_type: arg_type.to_owned(),
                result_type: String::new(),
                fma_bound: TWO_52,
                vars: Vec::new(),
                body: Vec::new(),
                result: Vec::new(),
            },
            declared: Vec::new(),
        }
    }

    /// Sets the bound below which `fma` operands must be integers.
    pub fn set_fma_bound(&mut self, bound: f64) {
        self.prog.fma_bound = bound;
    }

    /// A fresh variable of type `ty` (names must be unique).
    pub fn var(&mut self, name: impl Into<String>, ty: Ty) -> W {
        let name = name.into();
        debug_assert!(
            !self.prog.vars.iter().any(|(n, _)| *n == name),
            "duplicate variable {name}"
        );
        self.prog.vars.push((name, ty));
        self.declared.push(false);
        W::Var(WVar(self.prog.vars.len() as u32 - 1), ty)
    }

    /// Assigns `e` to the variable `v`, declaring it on first assignment.
    pub fn assign(&mut self, v: &W, e: W) {
        let W::Var(id, ty) = v else {
            panic!("assign to a non-variable")
        };
        debug_assert_eq!(*ty, e.ty(), "type of {}", self.prog.vars[id.0 as usize].0);
        let first = !self.declared[id.0 as usize];
        self.declared[id.0 as usize] = true;
        self.prog.body.push((*id, e, first));
    }

    /// A fresh variable holding `e`.
    pub fn bind(&mut self, name: impl Into<String>, e: W) -> W {
        let v = self.var(name, e.ty());
        self.assign(&v, e);
        v
    }

    /// Finishes with the returned `u32` words, of WGSL type `result_type`.
    pub fn finish(mut self, result: Vec<W>, result_type: &str) -> WideProgram {
        debug_assert!(result.iter().all(|e| e.ty() == Ty::U32));
        self.prog.result_words = result.len();
        self.prog.result_type = result_type.to_owned();
        self.prog.result = result;
        self.prog
    }
}

/// `2^52` as an `f64`.
pub const TWO_52: f64 = 4_503_599_627_370_496.0;

impl WideProgram {
    /// Operations of each kind in the program: (`f64` operations, `u64` products, other
    /// integer operations), a rough instruction count.
    pub fn op_counts(&self) -> (usize, usize, usize) {
        fn walk(e: &W, c: &mut (usize, usize, usize)) {
            match e {
                W::U32(_) | W::I64(_) | W::F64(_) | W::Var(..) | W::Arg(..) => {}
                W::Fma(a, b, d) => {
                    c.0 += 1;
                    walk(a, c);
                    walk(b, c);
                    walk(d, c);
                }
                W::FSub(l, r) | W::FAdd(l, r) => {
                    c.0 += 1;
                    walk(l, c);
                    walk(r, c);
                }
                W::MulWide(l, r) | W::MulLo64(l, r) => {
                    c.1 += 1;
                    walk(l, c);
                    walk(r, c);
                }
                W::Add32(l, r)
                | W::MulLo32(l, r)
                | W::Or32(l, r)
                | W::Add64(l, r)
                | W::Sub64(l, r)
                | W::Or64(l, r) => {
                    c.2 += 1;
                    walk(l, c);
                    walk(r, c);
                }
                W::Shr32(e, _)
                | W::Shl32(e, _)
                | W::And32(e, _)
                | W::Shr64(e, _)
                | W::Sar64(e, _)
                | W::Shl64(e, _)
                | W::And64(e, _) => {
                    c.2 += 1;
                    walk(e, c);
                }
                W::Lo32(e) | W::Widen(e) | W::FromBits(e) | W::ToBits(e) => walk(e, c),
                W::Select(a, b, d) => {
                    c.2 += 1;
                    walk(a, c);
                    walk(b, c);
                    walk(d, c);
                }
            }
        }
        let mut c = (0, 0, 0);
        for (_, e, _) in &self.body {
            walk(e, &mut c);
        }
        for e in &self.result {
            walk(e, &mut c);
        }
        c
    }

    /// Prints the program as the WGSL function `{prefix}_{name}`.
    pub fn to_wgsl(&self, prefix: &str) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "// {}", self.doc);
        let params: Vec<String> = (0..self.arg_words.len())
            .map(|k| format!("{}: {}", arg_name(k), self.arg_type))
            .collect();
        let _ = writeln!(
            out,
            "fn {prefix}_{}({}) -> {} {{",
            self.name,
            params.join(", "),
            self.result_type
        );
        let mut reassigned = vec![false; self.vars.len()];
        for (v, _, first) in &self.body {
            if !first {
                reassigned[v.0 as usize] = true;
            }
        }
        for (v, e, first) in &self.body {
            let name = &self.vars[v.0 as usize].0;
            if *first {
                let kw = if reassigned[v.0 as usize] {
                    "var"
                } else {
                    "let"
                };
                let _ = writeln!(out, "    {kw} {name} = {};", self.expr(e));
            } else {
                let _ = writeln!(out, "    {name} = {};", self.expr(e));
            }
        }
        let words: Vec<String> = self.result.iter().map(|e| self.expr(e)).collect();
        let _ = writeln!(
            out,
            "    return {}({});",
            self.result_type,
            words.join(", ")
        );
        out.push_str("}\n");
        out
    }

    fn operand(&self, e: &W) -> String {
        match e {
            W::U32(_) | W::I64(_) | W::F64(_) | W::Var(..) | W::Arg(..) => self.expr(e),
            W::Lo32(_)
            | W::Widen(_)
            | W::Fma(..)
            | W::FromBits(_)
            | W::ToBits(_)
            | W::Select(..)
            | W::Sar64(..) => self.expr(e),
            _ => format!("({})", self.expr(e)),
        }
    }

    fn expr(&self, e: &W) -> String {
        let o = |x: &W| self.operand(x);
        match e {
            W::U32(x) => format!("{x}u"),
            W::I64(x) => format!("{}lu", *x as u64),
            // Integers print exactly (naga parses them back to the same f64).
            W::F64(x) if x.fract() == 0.0 && x.abs() < 2f64.powi(127) => {
                format!("{}.0lf", *x as i128)
            }
            W::F64(x) => format!("{x}lf"),
            W::Var(v, _) => self.vars[v.0 as usize].0.clone(),
            W::Arg(k, i) => format!("{}[{i}]", arg_name(*k as usize)),
            W::Add32(l, r) | W::Add64(l, r) => format!("{} + {}", self.sum_left(l), o(r)),
            W::Sub64(l, r) => format!("{} - {}", self.sum_left(l), o(r)),
            W::MulLo32(l, r) | W::MulLo64(l, r) => format!("{} * {}", o(l), o(r)),
            W::MulWide(l, r) => format!("u64({}) * u64({})", self.expr(l), self.expr(r)),
            W::Shr32(x, k) => format!("{} >> {k}u", o(x)),
            W::Shl32(x, k) => format!("{} << {k}u", o(x)),
            W::And32(x, m) => format!("{} & {m}u", o(x)),
            W::Or32(l, r) | W::Or64(l, r) => format!("{} | {}", o(l), o(r)),
            W::Lo32(x) => format!("u32({})", self.expr(x)),
            W::Widen(x) => format!("u64({})", self.expr(x)),
            W::Shr64(x, k) | W::Shl64(x, k) => {
                let op = if matches!(e, W::Shr64(..)) {
                    ">>"
                } else {
                    "<<"
                };
                format!("{} {op} {k}u", o(x))
            }
            W::Sar64(x, k) => format!("bitcast<u64>(bitcast<i64>({}) >> {k}u)", self.expr(x)),
            W::And64(x, m) => format!("{} & {m}lu", o(x)),
            W::Fma(a, b, c) => format!("fma({}, {}, {})", self.expr(a), self.expr(b), self.expr(c)),
            W::FSub(l, r) => format!("{} - {}", o(l), o(r)),
            W::FAdd(l, r) => format!("{} + {}", o(l), o(r)),
            W::FromBits(x) => format!("bitcast<f64>({})", self.expr(x)),
            W::ToBits(x) => format!("bitcast<u64>({})", self.expr(x)),
            W::Select(c, t, f) => {
                format!("select({}, {}, {} != 0u)", self.expr(f), self.expr(t), o(c))
            }
        }
    }

    /// The left operand of an additive chain, unparenthesized when it is one too.
    fn sum_left(&self, e: &W) -> String {
        match e {
            W::Add32(..) | W::Add64(..) | W::Sub64(..) => self.expr(e),
            _ => self.operand(e),
        }
    }
}

fn arg_name(k: usize) -> &'static str {
    ["a", "b", "c"][k]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wgsl_prints_typed_literals() {
        let mut b = WideBuilder::new("t", "test", vec![1, 1], "array<u32, 1>");
        let h = b.bind(
            "h",
            W::fma(W::F64(3.0), W::F64(TWO_52 - 1.0), W::F64(TWO_52)),
        );
        let s = b.bind(
            "s",
            W::add64(W::to_bits(h), W::mul_wide(W::Arg(0, 0), W::Arg(1, 0))),
        );
        let p = b.finish(vec![W::lo32(W::sar64(s, 52))], "array<u32, 1>");
        let w = p.to_wgsl("fq");
        assert!(
            w.contains("let h = fma(3.0lf, 4503599627370495.0lf, 4503599627370496.0lf);"),
            "{w}"
        );
        assert!(
            w.contains("let s = bitcast<u64>(h) + (u64(a[0]) * u64(b[0]));"),
            "{w}"
        );
        assert!(
            w.contains("u32(bitcast<u64>(bitcast<i64>(s) >> 52u))"),
            "{w}"
        );
    }
}
