//! The curve VM: formulas as short programs over a register file of base-field elements.
//!
//! NVIDIA's driver inlines every call, so a kernel's compile time grows about 0.5 s per
//! field-multiplication call site (docs/gpu.md). Instead of WGSL formula code with a
//! dozen to fifty `fe_mul` calls, every formula is a program of a few instructions, and one
//! interpreter loop in `shaders/kernels/curve_vm.wgsl` holds the only multiplication site.
//! Programs are assembled here, run on the CPU with arkworks arithmetic by [`Program::run_cpu`]
//! (the formula tests need no GPU), and uploaded as data.
//!
//! Encoding of one instruction in a `u32`: bits 0-3 opcode, 4-11 `d`, 12-19 `a`, 20-31 `b`
//! (a register, a constant index or a jump target). Jumps only go forward, so every program
//! terminates: the interpreter's loop needs no bound.

use std::collections::HashMap;

use ark_ff::Field;

/// A register of the VM (one base-field element).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reg(pub u8);

/// A jump target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Label(u32);

/// Opcodes, as the WGSL interpreter numbers them.
pub mod op {
    /// Stop.
    pub const HALT: u32 = 0;
    /// `d = a * b`
    pub const MUL: u32 = 1;
    /// `d = a + b`
    pub const ADD: u32 = 2;
    /// `d = a - b`
    pub const SUB: u32 = 3;
    /// `d = 2 a`
    pub const DBL: u32 = 4;
    /// `d = a`
    pub const COPY: u32 = 5;
    /// `d = 0`
    pub const ZERO: u32 = 6;
    /// An Fq2 product over `Fq[u]/(u^2 + 1)` on register pairs (`x'` is the register after
    /// `x`), by Karatsuba: `v0 = a b`, `v1 = a' b'`, `m = (a + a')(b + b')`, then
    /// `d = v0 - v1`, `d' = m - v0 - v1`, written after every operand is read. Three rounds
    /// of `MUL`'s multiplication site. Only in modules composed with it
    /// (`zkgpu_shaders::Group::vm_fq2_ops`). (`Asm::one` assembles to `LDC` of 1.)
    pub const KMUL: u32 = 7;
    /// `d = constant[b]`
    pub const LDC: u32 = 8;
    /// `if a == 0 { pc = b }`
    pub const JZ: u32 = 9;
    /// `if a != 0 { pc = b }`
    pub const JNZ: u32 = 10;
    /// `pc = b`
    pub const JMP: u32 = 11;
}

/// One instruction, before encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ins {
    Op { code: u32, d: Reg, a: Reg, b: Reg },
    Ldc { d: Reg, idx: u32 },
    Jump { code: u32, a: Reg, to: Label },
    Halt,
}

/// Builds a program: named entry points, forward jumps, constants.
#[derive(Debug)]
pub struct Asm<F> {
    ins: Vec<Ins>,
    labels: Vec<Option<u32>>,
    entries: Vec<(String, u32)>,
    consts: Vec<F>,
    max_reg: u8,
}

impl<F: Field> Default for Asm<F> {
    fn default() -> Self {
        Self {
            ins: Vec::new(),
            labels: Vec::new(),
            entries: Vec::new(),
            consts: Vec::new(),
            max_reg: 0,
        }
    }
}

impl<F: Field> Asm<F> {
    /// An empty program.
    pub fn new() -> Self {
        Self::default()
    }

    fn touch(&mut self, regs: &[Reg]) {
        for r in regs {
            self.max_reg = self.max_reg.max(r.0);
        }
    }

    fn push_op(&mut self, code: u32, d: Reg, a: Reg, b: Reg) {
        self.touch(&[d, a, b]);
        self.ins.push(Ins::Op { code, d, a, b });
    }

    /// Starts the entry point `name` here.
    pub fn entry(&mut self, name: &str) {
        self.entries.push((name.to_owned(), self.ins.len() as u32));
    }

    /// `d = a * b`
    pub fn mul(&mut self, d: Reg, a: Reg, b: Reg) {
        self.push_op(op::MUL, d, a, b);
    }
    /// `(d, d') = (a, a') (b, b')` over `Fq[u]/(u^2 + 1)` ([`op::KMUL`]).
    pub fn kmul(&mut self, d: Reg, a: Reg, b: Reg) {
        self.touch(&[Reg(d.0 + 1), Reg(a.0 + 1), Reg(b.0 + 1)]);
        self.push_op(op::KMUL, d, a, b);
    }
    /// `d = a + b`
    pub fn add(&mut self, d: Reg, a: Reg, b: Reg) {
        self.push_op(op::ADD, d, a, b);
    }
    /// `d = a - b`
    pub fn sub(&mut self, d: Reg, a: Reg, b: Reg) {
        self.push_op(op::SUB, d, a, b);
    }
    /// `d = 2a`
    pub fn dbl(&mut self, d: Reg, a: Reg) {
        self.push_op(op::DBL, d, a, a);
    }
    /// `d = a`
    pub fn copy(&mut self, d: Reg, a: Reg) {
        if d != a {
            self.push_op(op::COPY, d, a, a);
        }
    }
    /// `d = 0`
    pub fn zero(&mut self, d: Reg) {
        self.push_op(op::ZERO, d, d, d);
    }
    /// `d = 1`
    pub fn one(&mut self, d: Reg) {
        self.load_const(d, F::ONE);
    }
    /// `d = c` (the constant is stored once per distinct value).
    pub fn load_const(&mut self, d: Reg, c: F) {
        let idx = match self.consts.iter().position(|x| *x == c) {
            Some(i) => i,
            None => {
                self.consts.push(c);
                self.consts.len() - 1
            }
        } as u32;
        self.touch(&[d]);
        self.ins.push(Ins::Ldc { d, idx });
    }
    /// A new label, placed later with [`Asm::place`].
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() as u32 - 1)
    }
    /// Places `l` at the next instruction.
    ///
    /// # Panics
    /// If `l` was placed before.
    pub fn place(&mut self, l: Label) {
        assert!(self.labels[l.0 as usize].is_none(), "label placed twice");
        self.labels[l.0 as usize] = Some(self.ins.len() as u32);
    }
    /// Jump to `to` when `a == 0`.
    pub fn jz(&mut self, a: Reg, to: Label) {
        self.touch(&[a]);
        self.ins.push(Ins::Jump {
            code: op::JZ,
            a,
            to,
        });
    }
    /// Jump to `to` when `a != 0`.
    pub fn jnz(&mut self, a: Reg, to: Label) {
        self.touch(&[a]);
        self.ins.push(Ins::Jump {
            code: op::JNZ,
            a,
            to,
        });
    }
    /// Jump to `to`.
    pub fn jmp(&mut self, to: Label) {
        self.ins.push(Ins::Jump {
            code: op::JMP,
            a: Reg(0),
            to,
        });
    }
    /// Stop.
    pub fn halt(&mut self) {
        self.ins.push(Ins::Halt);
    }

    /// Resolves labels and encodes.
    ///
    /// # Panics
    /// On an unplaced label or a backward jump (programs must only jump forward).
    pub fn finish(self) -> Program<F> {
        let code = self
            .ins
            .iter()
            .enumerate()
            .map(|(pc, ins)| match *ins {
                Ins::Op { code, d, a, b } => {
                    code | u32::from(d.0) << 4 | u32::from(a.0) << 12 | u32::from(b.0) << 20
                }
                Ins::Ldc { d, idx } => op::LDC | u32::from(d.0) << 4 | idx << 20,
                Ins::Jump { code, a, to } => {
                    let target = self.labels[to.0 as usize].expect("every label is placed");
                    assert!(
                        target > pc as u32,
                        "backward jump at {pc}: programs only jump forward"
                    );
                    assert!(target < 1 << 12, "program too long for 12-bit jump targets");
                    code | u32::from(a.0) << 12 | target << 20
                }
                Ins::Halt => op::HALT,
            })
            .collect();
        Program {
            code,
            entries: self.entries.into_iter().collect(),
            consts: self.consts,
            n_regs: u32::from(self.max_reg) + 1,
        }
    }
}

/// An assembled program.
#[derive(Clone, Debug)]
pub struct Program<F> {
    /// Encoded instructions.
    pub code: Vec<u32>,
    /// Entry points by name.
    pub entries: HashMap<String, u32>,
    /// Constants, by index.
    pub consts: Vec<F>,
    /// Registers used.
    pub n_regs: u32,
}

/// What one run of a program did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Instructions executed (`HALT` included).
    pub steps: usize,
    /// `MUL` instructions executed.
    pub muls: usize,
}

/// Why the CPU interpreter stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VmError {
    /// No entry point has that name.
    #[error("no entry point `{0}`")]
    NoEntry(String),
    /// An opcode the interpreter does not know.
    #[error("bad opcode {code} at pc {pc}")]
    BadOpcode {
        /// The opcode.
        code: u32,
        /// Where.
        pc: u32,
    },
    /// The program ran off its end.
    #[error("ran past the end of the program")]
    RanOff,
}

impl<F: Field> Program<F> {
    /// Whether it uses [`op::KMUL`], which only modules composed with it run (every
    /// instruction's opcode is its low four bits).
    pub fn fq2_ops(&self) -> bool {
        self.code.iter().any(|w| w & 15 == op::KMUL)
    }

    /// Where entry point `name` starts.
    pub fn entry(&self, name: &str) -> Result<u32, VmError> {
        self.entries
            .get(name)
            .copied()
            .ok_or_else(|| VmError::NoEntry(name.to_owned()))
    }

    /// Runs entry point `name` over `regs` with arkworks arithmetic: the same decoding and
    /// semantics as the WGSL interpreter, so formulas are tested without a GPU.
    ///
    /// Returns how many instructions, and multiplications among them, ran.
    pub fn run_cpu(&self, name: &str, regs: &mut [F]) -> Result<RunStats, VmError> {
        let mut pc = self.entry(name)?;
        let mut stats = RunStats::default();
        loop {
            let ins = *self.code.get(pc as usize).ok_or(VmError::RanOff)?;
            stats.steps += 1;
            let code = ins & 15;
            let d = ((ins >> 4) & 255) as usize;
            let a = ((ins >> 12) & 255) as usize;
            let b = (ins >> 20) as usize;
            pc += 1;
            match code {
                op::HALT => return Ok(stats),
                op::MUL => {
                    stats.muls += 1;
                    regs[d] = regs[a] * regs[b];
                }
                op::KMUL => {
                    stats.muls += 3;
                    let v0 = regs[a] * regs[b];
                    let v1 = regs[a + 1] * regs[b + 1];
                    let m = (regs[a] + regs[a + 1]) * (regs[b] + regs[b + 1]);
                    regs[d] = v0 - v1;
                    regs[d + 1] = m - v0 - v1;
                }
                op::ADD => regs[d] = regs[a] + regs[b],
                op::SUB => regs[d] = regs[a] - regs[b],
                op::DBL => regs[d] = regs[a].double(),
                op::COPY => regs[d] = regs[a],
                op::ZERO => regs[d] = F::ZERO,
                op::LDC => regs[d] = self.consts[b],
                op::JZ => {
                    if regs[a].is_zero() {
                        pc = b as u32;
                    }
                }
                op::JNZ => {
                    if !regs[a].is_zero() {
                        pc = b as u32;
                    }
                }
                op::JMP => pc = b as u32,
                _ => return Err(VmError::BadOpcode { code, pc: pc - 1 }),
            }
        }
    }
}
