//! The fields zkgpu ships, and a CPU emulator of each generated module.

use std::sync::OnceLock;

use crate::field::{lazy_programs, programs};
use crate::params::FieldParams;
use crate::program::{Overflow, Program};
use crate::wide::{Arith, WideEmulator, WideLayout};

/// A prime field with a generated WGSL module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KnownField {
    /// BLS12-381 base field (381 bits).
    Bls12_381Fq,
    /// BLS12-381 scalar field (255 bits).
    Bls12_381Fr,
    /// BLS12-377 base field (377 bits).
    Bls12_377Fq,
    /// BLS12-377 scalar field (253 bits); also the base field of ed-on-bls12-377.
    Bls12_377Fr,
    /// BN254 base field (254 bits).
    Bn254Fq,
    /// BN254 scalar field (254 bits).
    Bn254Fr,
    /// ed-on-bls12-377 scalar field (251 bits): the MSM's scalar conversion only.
    EdOnBls12_377Fr,
}

impl KnownField {
    /// Every shipped prime field.
    pub const ALL: [KnownField; 7] = [
        KnownField::Bls12_381Fq,
        KnownField::Bls12_381Fr,
        KnownField::Bls12_377Fq,
        KnownField::Bls12_377Fr,
        KnownField::Bn254Fq,
        KnownField::Bn254Fr,
        KnownField::EdOnBls12_377Fr,
    ];

    /// The limb layout (computed once).
    pub fn params(self) -> FieldParams {
        self.cached().0.clone()
    }

    /// `bls12_381_fq`: the generated file's stem and a stable identifier.
    pub fn file_stem(self) -> &'static str {
        match self {
            KnownField::Bls12_381Fq => "bls12_381_fq",
            KnownField::Bls12_381Fr => "bls12_381_fr",
            KnownField::Bls12_377Fq => "bls12_377_fq",
            KnownField::Bls12_377Fr => "bls12_377_fr",
            KnownField::Bn254Fq => "bn254_fq",
            KnownField::Bn254Fr => "bn254_fr",
            KnownField::EdOnBls12_377Fr => "ed_on_bls12_377_fr",
        }
    }

    /// Whether the field ships a module of redundant-range functions (`<stem>_lazy.wgsl`): the
    /// scalar fields, for the NTT.
    pub fn has_lazy_module(self) -> bool {
        matches!(
            self,
            KnownField::Bls12_381Fr | KnownField::Bls12_377Fr | KnownField::Bn254Fr
        )
    }

    /// The CPU emulator of this field's generated functions (the lazy ones included).
    pub fn emulator(self) -> &'static Emulator {
        &self.cached().1
    }

    /// The field's layout in the wide arithmetic `arith` (`None` for [`Arith::Portable`]).
    pub fn wide_layout(self, arith: Arith) -> Option<WideLayout> {
        WideLayout::new(arith, &self.params())
    }

    /// The CPU emulator of this field's functions in the wide arithmetic `arith`
    /// (`None` for [`Arith::Portable`], whose emulator is [`KnownField::emulator`]).
    pub fn wide_emulator(self, arith: Arith) -> Option<&'static WideEmulator> {
        static CELLS: [[OnceLock<WideEmulator>; 2]; 7] =
            [const { [const { OnceLock::new() }; 2] }; 7];
        let slot = Arith::WIDE.iter().position(|&a| a == arith)?;
        Some(CELLS[self as usize][slot].get_or_init(|| {
            let l = self.wide_layout(arith).expect("a wide arithmetic");
            WideEmulator::new(&l, self.has_lazy_module())
        }))
    }

    fn cached(self) -> &'static (FieldParams, Emulator) {
        static CELLS: [OnceLock<(FieldParams, Emulator)>; 7] = [
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
        ];
        let idx = self as usize;
        CELLS[idx].get_or_init(|| {
            let p = match self {
                KnownField::Bls12_381Fq => {
                    FieldParams::of::<ark_bls12_381::Fq>("BLS12-381 Fq", "fq", "Fq")
                }
                KnownField::Bls12_381Fr => {
                    FieldParams::of::<ark_bls12_381::Fr>("BLS12-381 Fr", "fr", "Fr")
                }
                KnownField::Bls12_377Fq => {
                    FieldParams::of::<ark_bls12_377::Fq>("BLS12-377 Fq", "fq", "Fq")
                }
                KnownField::Bls12_377Fr => {
                    FieldParams::of::<ark_bls12_377::Fr>("BLS12-377 Fr", "fr", "Fr")
                }
                KnownField::Bn254Fq => FieldParams::of::<ark_bn254::Fq>("BN254 Fq", "fq", "Fq"),
                KnownField::Bn254Fr => FieldParams::of::<ark_bn254::Fr>("BN254 Fr", "fr", "Fr"),
                KnownField::EdOnBls12_377Fr => {
                    FieldParams::of::<ark_ed_on_bls12_377::Fr>("ed-on-bls12-377 Fr", "fr", "Fr")
                }
            };
            let emu = Emulator::new(&p);
            (p, emu)
        })
    }
}

/// A quadratic extension with a generated WGSL module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KnownFq2 {
    /// BLS12-381 Fq2 = Fq[u]/(u^2 + 1).
    Bls12_381,
    /// BLS12-377 Fq2 = Fq[u]/(u^2 + 5).
    Bls12_377,
    /// BN254 Fq2 = Fq[u]/(u^2 + 1).
    Bn254,
}

impl KnownFq2 {
    /// Every shipped extension.
    pub const ALL: [KnownFq2; 3] = [KnownFq2::Bls12_381, KnownFq2::Bls12_377, KnownFq2::Bn254];

    /// The base field.
    pub fn base(self) -> KnownField {
        match self {
            KnownFq2::Bls12_381 => KnownField::Bls12_381Fq,
            KnownFq2::Bls12_377 => KnownField::Bls12_377Fq,
            KnownFq2::Bn254 => KnownField::Bn254Fq,
        }
    }

    /// `k = -beta` where `u^2 = beta` (arkworks' `Fq2Config::NONRESIDUE`).
    pub fn minus_beta(self) -> u32 {
        match self {
            KnownFq2::Bls12_381 => 1,
            KnownFq2::Bls12_377 => 5,
            KnownFq2::Bn254 => 1,
        }
    }

    /// Human-readable name.
    pub fn name(self) -> &'static str {
        match self {
            KnownFq2::Bls12_381 => "BLS12-381 Fq2",
            KnownFq2::Bls12_377 => "BLS12-377 Fq2",
            KnownFq2::Bn254 => "BN254 Fq2",
        }
    }

    /// The generated file's stem.
    pub fn file_stem(self) -> &'static str {
        match self {
            KnownFq2::Bls12_381 => "bls12_381_fq2",
            KnownFq2::Bls12_377 => "bls12_377_fq2",
            KnownFq2::Bn254 => "bn254_fq2",
        }
    }

    /// Limbs of one coefficient.
    pub fn base_limbs(self) -> usize {
        self.base().params().n_limbs
    }

    /// The CPU emulator of the generated `fq2_*` functions: the same composition of base-field
    /// programs as the WGSL.
    pub fn emulator(self) -> Fq2Emulator {
        Fq2Emulator {
            base: self.base().emulator(),
            k: self.minus_beta(),
        }
    }
}

/// Runs the generated programs of one prime field on the CPU, with overflow checks.
#[derive(Debug)]
pub struct Emulator {
    n_limbs: usize,
    programs: Vec<Program>,
}

impl Emulator {
    /// The emulator of the field `p`.
    pub fn new(p: &FieldParams) -> Self {
        Self {
            n_limbs: p.n_limbs,
            programs: programs(p).into_iter().chain(lazy_programs(p)).collect(),
        }
    }

    /// Limbs per element.
    pub fn n_limbs(&self) -> usize {
        self.n_limbs
    }

    /// The program called `name` (`mul`, `add`, ...).
    pub fn program(&self, name: &str) -> Option<&Program> {
        self.programs.iter().find(|p| p.name == name)
    }

    /// The generated programs.
    pub fn programs(&self) -> &[Program] {
        &self.programs
    }

    /// Runs program `name` on `args` (one limb slice per argument).
    ///
    /// # Panics
    /// If no program has that name (names are fixed by [`crate::field::programs`]).
    pub fn run(&self, name: &str, args: &[&[u32]]) -> Result<Vec<u32>, Overflow> {
        self.program(name)
            .unwrap_or_else(|| panic!("no generated program `{name}`"))
            .eval(args)
    }
}

/// Emulates the generated `fq2_*` functions over the base field's emulator.
#[derive(Clone, Copy, Debug)]
pub struct Fq2Emulator {
    base: &'static Emulator,
    k: u32,
}

impl Fq2Emulator {
    fn split(x: &[u32]) -> (&[u32], &[u32]) {
        x.split_at(x.len() / 2)
    }

    fn join(c0: Vec<u32>, c1: Vec<u32>) -> Vec<u32> {
        let mut v = c0;
        v.extend(c1);
        v
    }

    fn times_minus_beta(&self, x: &[u32]) -> Result<Vec<u32>, Overflow> {
        let bits = 32 - self.k.leading_zeros();
        let mut r = x.to_vec();
        for i in (0..bits - 1).rev() {
            r = self.base.run("double", &[&r])?;
            if (self.k >> i) & 1 == 1 {
                r = self.base.run("add", &[&r, x])?;
            }
        }
        Ok(r)
    }

    /// Runs `fq2_{name}`: `add`, `sub`, `neg`, `double`, `mul`, `square`, `to_mont`,
    /// `from_mont`, `is_zero`, `eq`. Elements are `c0` limbs followed by `c1` limbs.
    ///
    /// # Panics
    /// On an unknown name.
    pub fn run(&self, name: &str, args: &[&[u32]]) -> Result<Vec<u32>, Overflow> {
        let b = self.base;
        let (a0, a1) = Self::split(args[0]);
        match name {
            "add" | "sub" | "eq" => {
                let (b0, b1) = Self::split(args[1]);
                let c0 = b.run(name, &[a0, b0])?;
                let c1 = b.run(name, &[a1, b1])?;
                Ok(if name == "eq" {
                    vec![c0[0] & c1[0]]
                } else {
                    Self::join(c0, c1)
                })
            }
            "neg" | "double" | "to_mont" | "from_mont" => {
                Ok(Self::join(b.run(name, &[a0])?, b.run(name, &[a1])?))
            }
            "is_zero" => Ok(vec![b.run(name, &[a0])?[0] & b.run(name, &[a1])?[0]]),
            "mul" => {
                let (b0, b1) = Self::split(args[1]);
                let v0 = b.run("mul", &[a0, b0])?;
                let v1 = b.run("mul", &[a1, b1])?;
                let m = b.run(
                    "mul",
                    &[&b.run("add", &[a0, a1])?, &b.run("add", &[b0, b1])?],
                )?;
                let c0 = b.run("sub", &[&v0, &self.times_minus_beta(&v1)?])?;
                let c1 = b.run("sub", &[&b.run("sub", &[&m, &v0])?, &v1])?;
                Ok(Self::join(c0, c1))
            }
            "square" => {
                let v = b.run("mul", &[a0, a1])?;
                let m = b.run(
                    "mul",
                    &[
                        &b.run("add", &[a0, a1])?,
                        &b.run("sub", &[a0, &self.times_minus_beta(a1)?])?,
                    ],
                )?;
                let c0 = b.run(
                    "sub",
                    &[&b.run("add", &[&m, &self.times_minus_beta(&v)?])?, &v],
                )?;
                Ok(Self::join(c0, b.run("double", &[&v])?))
            }
            _ => panic!("no generated program `fq2_{name}`"),
        }
    }
}
