//! A straight-line program over `u32` values: the single source of every generated field
//! function. [`Program::to_wgsl`] prints it as a WGSL function; [`Program::eval`] runs the very
//! same statements on the CPU with every addition, subtraction and multiplication checked for
//! `u32` overflow, so the emulator is the WGSL algorithm, not a re-implementation of it.

use std::fmt::Write as _;

/// A scalar `u32` variable of a [`Program`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Var(u16);

/// An expression over `u32` values. Arithmetic never wraps: the emulator rejects any overflow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// A literal.
    Lit(u32),
    /// A variable.
    Var(Var),
    /// Limb `.1` of argument `.0` (0 is `a`, 1 is `b`).
    Arg(u8, u16),
    /// `l + r`
    Add(Box<Expr>, Box<Expr>),
    /// `l - r` (must not go below zero)
    Sub(Box<Expr>, Box<Expr>),
    /// `l * r`
    Mul(Box<Expr>, Box<Expr>),
    /// `e >> k`
    Shr(Box<Expr>, u32),
    /// `e & m`
    And(Box<Expr>, u32),
    /// `l ^ r`
    Xor(Box<Expr>, Box<Expr>),
    /// `(0 - e) & m`: a negation modulo a power of two, the one place where `u32` arithmetic
    /// wraps by design (the mask keeps only the low bits, which wrapping leaves exact).
    NegMask(Box<Expr>, u32),
    /// `select(if_false, if_true, cond != 0)`
    Select {
        /// The condition (nonzero: true).
        cond: Box<Expr>,
        /// The value when the condition holds.
        if_true: Box<Expr>,
        /// The value otherwise.
        if_false: Box<Expr>,
    },
}

impl Expr {
    /// Sum of `terms`, `None` when empty.
    pub fn sum(terms: impl IntoIterator<Item = Expr>) -> Option<Expr> {
        terms
            .into_iter()
            .reduce(|l, r| Expr::Add(Box::new(l), Box::new(r)))
    }

    /// `l * r`, folded: `None` when either side is the literal zero, the other side when one is
    /// the literal one.
    pub fn product(l: Expr, r: Expr) -> Option<Expr> {
        match (&l, &r) {
            (Expr::Lit(0), _) | (_, Expr::Lit(0)) => None,
            (Expr::Lit(1), _) => Some(r),
            (_, Expr::Lit(1)) => Some(l),
            (Expr::Lit(x), Expr::Lit(y)) => Some(Expr::Lit(x * y)),
            _ => Some(Expr::Mul(Box::new(l), Box::new(r))),
        }
    }

    /// `e >> k`
    pub fn shifted(e: Expr, k: u32) -> Expr {
        Expr::Shr(Box::new(e), k)
    }

    /// `e & m`
    pub fn masked(e: Expr, m: u32) -> Expr {
        Expr::And(Box::new(e), m)
    }

    /// `l - r`
    pub fn minus(l: Expr, r: Expr) -> Expr {
        Expr::Sub(Box::new(l), Box::new(r))
    }

    /// `l + r`
    pub fn plus(l: Expr, r: Expr) -> Expr {
        Expr::Add(Box::new(l), Box::new(r))
    }

    fn is_primary(&self) -> bool {
        matches!(
            self,
            Expr::Lit(_) | Expr::Var(_) | Expr::Arg(..) | Expr::Select { .. }
        )
    }
}

/// One statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    /// Declares and assigns a variable.
    Let(Var, Expr),
    /// Re-assigns a declared variable.
    Set(Var, Expr),
}

/// What a program returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Returns {
    /// A field element of `n` limbs.
    Element,
    /// A `bool`: whether the single result expression is zero.
    IsZero,
    /// An `array<u32, W>` of `W` plain 32-bit words.
    Words(usize),
}

/// A straight-line program: statements, then the returned expressions.
#[derive(Clone, Debug)]
pub struct Program {
    /// Function name without the field prefix (`mul`, `square`, ...).
    pub name: String,
    /// Number of element arguments (1 or 2).
    pub arity: u8,
    /// What it returns.
    pub returns: Returns,
    /// `Some(W)` when the arguments are `array<u32, W>` of plain 32-bit words instead of
    /// elements.
    pub arg_words: Option<usize>,
    /// One line of documentation, printed above the WGSL function.
    pub doc: String,
    var_names: Vec<String>,
    body: Vec<Stmt>,
    result: Vec<Expr>,
}

/// An arithmetic fault found by the emulator: the WGSL would have wrapped silently.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{program}` statement {stmt}: u32 {op} of {lhs} and {rhs} leaves the u32 range")]
pub struct Overflow {
    /// The program name.
    pub program: String,
    /// Index of the statement (or `body.len() + i` for result limb `i`).
    pub stmt: usize,
    /// `add`, `sub` or `mul`.
    pub op: &'static str,
    /// Left operand.
    pub lhs: u32,
    /// Right operand.
    pub rhs: u32,
}

/// Builds a [`Program`].
#[derive(Debug)]
pub struct ProgramBuilder {
    prog: Program,
    declared: Vec<bool>,
}

impl ProgramBuilder {
    /// A new, empty program.
    pub fn new(name: &str, arity: u8, returns: Returns, doc: &str) -> Self {
        Self {
            prog: Program {
                name: name.to_owned(),
                arity,
                returns,
                arg_words: None,
                doc: doc.to_owned(),
                var_names: Vec::new(),
                body: Vec::new(),
                result: Vec::new(),
            },
            declared: Vec::new(),
        }
    }

    /// Makes the arguments `array<u32, w>` of plain 32-bit words.
    pub fn word_args(mut self, w: usize) -> Self {
        self.prog.arg_words = Some(w);
        self
    }

    /// A fresh variable named `name` (names must be unique).
    pub fn var(&mut self, name: impl Into<String>) -> Var {
        let name = name.into();
        debug_assert!(
            !self.prog.var_names.contains(&name),
            "duplicate variable {name}"
        );
        self.prog.var_names.push(name);
        self.declared.push(false);
        Var((self.prog.var_names.len() - 1) as u16)
    }

    /// Assigns `e` to `v`, declaring it on first assignment.
    pub fn assign(&mut self, v: Var, e: Expr) {
        let slot = &mut self.declared[v.0 as usize];
        if *slot {
            self.prog.body.push(Stmt::Set(v, e));
        } else {
            *slot = true;
            self.prog.body.push(Stmt::Let(v, e));
        }
    }

    /// A fresh variable holding `e`.
    pub fn bind(&mut self, name: impl Into<String>, e: Expr) -> Var {
        let v = self.var(name);
        self.assign(v, e);
        v
    }

    /// Finishes with the returned expressions.
    pub fn finish(mut self, result: Vec<Expr>) -> Program {
        self.prog.result = result;
        self.prog
    }
}

impl Program {
    /// The statements.
    pub fn body(&self) -> &[Stmt] {
        &self.body
    }

    /// The returned expressions.
    pub fn result(&self) -> &[Expr] {
        &self.result
    }

    /// Counts `u32` multiplications in the program (those by a literal power of two excepted).
    pub fn count_muls(&self) -> usize {
        fn count(e: &Expr) -> usize {
            match e {
                Expr::Lit(_) | Expr::Var(_) | Expr::Arg(..) => 0,
                // A multiplication by a literal power of two is a shift.
                Expr::Mul(l, r) => {
                    let shift = matches!(**r, Expr::Lit(k) if k.is_power_of_two());
                    usize::from(!shift) + count(l) + count(r)
                }
                Expr::Add(l, r) | Expr::Sub(l, r) | Expr::Xor(l, r) => count(l) + count(r),
                Expr::Shr(e, _) | Expr::And(e, _) | Expr::NegMask(e, _) => count(e),
                Expr::Select {
                    cond,
                    if_true,
                    if_false,
                } => count(cond) + count(if_true) + count(if_false),
            }
        }
        self.body
            .iter()
            .map(|s| match s {
                Stmt::Let(_, e) | Stmt::Set(_, e) => count(e),
            })
            .chain(self.result.iter().map(count))
            .sum()
    }

    /// Runs the program on the CPU with checked `u32` arithmetic.
    ///
    /// `args[k]` are the limbs of argument `k`. Returns the result limbs (one `0`/`1` word for
    /// a [`Returns::IsZero`] program), or the first operation that would leave the `u32` range.
    pub fn eval(&self, args: &[&[u32]]) -> Result<Vec<u32>, Overflow> {
        let mut env = vec![0u32; self.var_names.len()];
        for (i, stmt) in self.body.iter().enumerate() {
            let (Stmt::Let(v, e) | Stmt::Set(v, e)) = stmt;
            env[v.0 as usize] = self.eval_expr(e, args, &env, i)?;
        }
        let base = self.body.len();
        let out = self
            .result
            .iter()
            .enumerate()
            .map(|(i, e)| self.eval_expr(e, args, &env, base + i))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(match self.returns {
            Returns::Element | Returns::Words(_) => out,
            Returns::IsZero => vec![u32::from(out[0] == 0)],
        })
    }

    fn eval_expr(
        &self,
        e: &Expr,
        args: &[&[u32]],
        env: &[u32],
        stmt: usize,
    ) -> Result<u32, Overflow> {
        let fault = |op, lhs, rhs| Overflow {
            program: self.name.clone(),
            stmt,
            op,
            lhs,
            rhs,
        };
        Ok(match e {
            Expr::Lit(x) => *x,
            Expr::Var(v) => env[v.0 as usize],
            Expr::Arg(k, i) => args[*k as usize][*i as usize],
            Expr::Add(l, r) => {
                let (l, r) = (
                    self.eval_expr(l, args, env, stmt)?,
                    self.eval_expr(r, args, env, stmt)?,
                );
                l.checked_add(r).ok_or_else(|| fault("add", l, r))?
            }
            Expr::Sub(l, r) => {
                let (l, r) = (
                    self.eval_expr(l, args, env, stmt)?,
                    self.eval_expr(r, args, env, stmt)?,
                );
                l.checked_sub(r).ok_or_else(|| fault("sub", l, r))?
            }
            Expr::Mul(l, r) => {
                let (l, r) = (
                    self.eval_expr(l, args, env, stmt)?,
                    self.eval_expr(r, args, env, stmt)?,
                );
                l.checked_mul(r).ok_or_else(|| fault("mul", l, r))?
            }
            Expr::Shr(e, k) => self.eval_expr(e, args, env, stmt)? >> k,
            Expr::And(e, m) => self.eval_expr(e, args, env, stmt)? & m,
            Expr::NegMask(e, m) => self.eval_expr(e, args, env, stmt)?.wrapping_neg() & m,
            Expr::Xor(l, r) => {
                self.eval_expr(l, args, env, stmt)? ^ self.eval_expr(r, args, env, stmt)?
            }
            Expr::Select {
                cond,
                if_true,
                if_false,
            } => {
                if self.eval_expr(cond, args, env, stmt)? != 0 {
                    self.eval_expr(if_true, args, env, stmt)?
                } else {
                    self.eval_expr(if_false, args, env, stmt)?
                }
            }
        })
    }

    /// Prints the program as a WGSL function `{prefix}_{name}` over the element type `ty`.
    pub fn to_wgsl(&self, prefix: &str, ty: &str) -> String {
        let mut out = String::new();
        let arg_ty = match self.arg_words {
            Some(w) => format!("array<u32, {w}>"),
            None => ty.to_owned(),
        };
        let params = match self.arity {
            1 => format!("a: {arg_ty}"),
            _ => format!("a: {arg_ty}, b: {arg_ty}"),
        };
        let ret = match self.returns {
            Returns::Element => ty.to_owned(),
            Returns::IsZero => "bool".to_owned(),
            Returns::Words(w) => format!("array<u32, {w}>"),
        };
        let _ = writeln!(out, "// {}", self.doc);
        let _ = writeln!(out, "fn {prefix}_{}({params}) -> {ret} {{", self.name);
        let mut sets = vec![0usize; self.var_names.len()];
        for s in &self.body {
            if let Stmt::Set(v, _) = s {
                sets[v.0 as usize] += 1;
            }
        }
        for s in &self.body {
            match s {
                Stmt::Let(v, e) => {
                    let kw = if sets[v.0 as usize] > 0 { "var" } else { "let" };
                    let _ = writeln!(
                        out,
                        "    {kw} {} = {};",
                        self.var_names[v.0 as usize],
                        self.expr(e)
                    );
                }
                Stmt::Set(v, e) => {
                    let _ = writeln!(
                        out,
                        "    {} = {};",
                        self.var_names[v.0 as usize],
                        self.expr(e)
                    );
                }
            }
        }
        match self.returns {
            Returns::Element => {
                let limbs: Vec<String> = self.result.iter().map(|e| self.expr(e)).collect();
                let _ = writeln!(out, "    return {ty}({});", limbs.join(", "));
            }
            Returns::Words(w) => {
                let words: Vec<String> = self.result.iter().map(|e| self.expr(e)).collect();
                let _ = writeln!(out, "    return array<u32, {w}>({});", words.join(", "));
            }
            Returns::IsZero => {
                let _ = writeln!(out, "    return {} == 0u;", self.operand(&self.result[0]));
            }
        }
        out.push_str("}\n");
        out
    }

    fn operand(&self, e: &Expr) -> String {
        if e.is_primary() {
            self.expr(e)
        } else {
            format!("({})", self.expr(e))
        }
    }

    fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Lit(x) => format!("{x}u"),
            Expr::Var(v) => self.var_names[v.0 as usize].clone(),
            Expr::Arg(k, i) => format!("{}[{i}]", if *k == 0 { "a" } else { "b" }),
            // Additive chains associate to the left; their right operands are products or
            // primaries. WGSL forbids mixing bitwise and arithmetic operators without
            // parentheses, so shifts and masks always parenthesize non-primary operands.
            Expr::Add(l, r) => format!("{} + {}", self.additive_left(l), self.multiplicative(r)),
            Expr::Sub(l, r) => format!("{} - {}", self.additive_left(l), self.multiplicative(r)),
            Expr::Mul(l, r) => format!("{} * {}", self.multiplicative(l), self.operand(r)),
            Expr::Shr(e, k) => format!("{} >> {k}u", self.operand(e)),
            Expr::And(e, m) => format!("{} & {m}u", self.operand(e)),
            Expr::NegMask(e, m) => format!("(0u - {}) & {m}u", self.multiplicative(e)),
            Expr::Xor(l, r) => format!("{} ^ {}", self.operand(l), self.operand(r)),
            Expr::Select {
                cond,
                if_true,
                if_false,
            } => format!(
                "select({}, {}, {} != 0u)",
                self.expr(if_false),
                self.expr(if_true),
                self.operand(cond)
            ),
        }
    }

    fn additive_left(&self, e: &Expr) -> String {
        match e {
            Expr::Add(..) | Expr::Sub(..) | Expr::Mul(..) => self.expr(e),
            _ => self.operand(e),
        }
    }

    fn multiplicative(&self, e: &Expr) -> String {
        match e {
            Expr::Mul(..) => self.expr(e),
            _ => self.operand(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_is_reported() {
        let mut b = ProgramBuilder::new("t", 2, Returns::Element, "test");
        let x = b.bind(
            "x",
            Expr::Mul(Box::new(Expr::Arg(0, 0)), Box::new(Expr::Arg(1, 0))),
        );
        let p = b.finish(vec![Expr::Var(x)]);
        assert_eq!(p.eval(&[&[3], &[5]]), Ok(vec![15]));
        let err = p.eval(&[&[1 << 16], &[1 << 16]]).unwrap_err();
        assert_eq!(err.op, "mul");
    }

    #[test]
    fn wgsl_parenthesizes_bitwise_operands() {
        let mut b = ProgramBuilder::new("t", 1, Returns::Element, "test");
        let sum = Expr::plus(Expr::Arg(0, 0), Expr::Lit(1));
        let x = b.bind("x", Expr::masked(Expr::shifted(sum, 13), 8191));
        let y = b.bind("y", Expr::plus(Expr::Var(x), Expr::masked(Expr::Var(x), 3)));
        let p = b.finish(vec![Expr::Var(y)]);
        let w = p.to_wgsl("fq", "Fq");
        assert!(w.contains("let x = ((a[0] + 1u) >> 13u) & 8191u;"), "{w}");
        assert!(w.contains("let y = x + (x & 3u);"), "{w}");
    }
}
