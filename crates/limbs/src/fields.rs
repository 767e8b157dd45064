//! The fields zkgpu ships, and a CPU emulator of each generated module.

use std::sync::OnceLock;

use crate::field::{lazy_programs, programs};
use crate::params::FieldParams;
use crate::program::{Overflow, Program};
use crate::wide::{Arith, WideEmulator, WideLayout};

macro_rules! fields {
    // `$d` is a `$` passed in, for the macro this one defines.
    (
        $d:tt;
        prime { $($(#[$pdoc:meta])* $f:ident: $stem:ident, $name:literal, $prefix:ident $ty:literal, $ark:path, lazy $lazy:literal;)* }
        fq2 { $($(#[$qdoc:meta])* $q:ident: $qmodule:ident, $qstem:ident, $qname:literal, $base:ident, minus_beta $k:literal, $qark:path;)* }
    ) => {
        /// Calls `$callback! { $($args)* ; prime (Field, stem, arkworks type) ... ; fq2
        /// (KnownFq2, module, stem, base field, arkworks type) ... }` for every field with a
        /// generated module, in the order of [`KnownField::ALL`] and [`KnownFq2::ALL`]:
        /// `zkgpu-shaders` derives its `FieldModule` from it, and tools and tests their
        /// per-field lists (the arkworks paths name types of crates the caller depends on).
        #[macro_export]
        macro_rules! for_each_field {
            ($d($d callback:ident)::+ $d(, $d($d args:tt)*)?) => {
                $d($d callback)::+! {
                    $d($d($d args)*)? ;
                    prime $(($f, $stem, $ark))*
                    ; fq2 $(($q, $qmodule, $qstem, $base, $qark))*
                }
            };
        }

        /// How many prime fields the registry holds.
        const PRIME_FIELDS: usize = [$(stringify!($f)),*].len();
        /// How many extensions it holds.
        const EXTENSIONS: usize = [$(stringify!($q)),*].len();

        /// A prime field with a generated WGSL module.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum KnownField {
            $($(#[$pdoc])* $f,)*
        }

        impl KnownField {
            /// Every shipped prime field.
            pub const ALL: [KnownField; PRIME_FIELDS] = [$(KnownField::$f,)*];

            /// `bls12_381_fq`: the generated file's stem and a stable identifier.
            pub const fn file_stem(self) -> &'static str {
                match self {
                    $(KnownField::$f => stringify!($stem),)*
                }
            }

            /// Whether the field ships a module of redundant-range functions
            /// (`<stem>_lazy.wgsl`): the scalar fields of the pairings, for the NTT.
            pub const fn has_lazy_module(self) -> bool {
                match self {
                    $(KnownField::$f => $lazy,)*
                }
            }

            /// The limb layout, derived from arkworks' modulus (computed once).
            pub fn layout(self) -> &'static FieldParams {
                static CELLS: [OnceLock<FieldParams>; KnownField::ALL.len()] =
                    [const { OnceLock::new() }; KnownField::ALL.len()];
                CELLS[self as usize].get_or_init(|| match self {
                    $(KnownField::$f => FieldParams::of::<$ark>(
                        $name,
                        stringify!($prefix),
                        $ty,
                    ),)*
                })
            }
        }

        /// A quadratic extension with a generated WGSL module.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum KnownFq2 {
            $($(#[$qdoc])* $q,)*
        }

        impl KnownFq2 {
            /// Every shipped extension.
            pub const ALL: [KnownFq2; EXTENSIONS] = [$(KnownFq2::$q,)*];

            /// The base field.
            pub const fn base(self) -> KnownField {
                match self {
                    $(KnownFq2::$q => KnownField::$base,)*
                }
            }

            /// `k = -beta` where `u^2 = beta` (arkworks' `Fq2Config::NONRESIDUE`).
            pub const fn minus_beta(self) -> u32 {
                match self {
                    $(KnownFq2::$q => $k,)*
                }
            }

            /// Human-readable name.
            pub const fn name(self) -> &'static str {
                match self {
                    $(KnownFq2::$q => $qname,)*
                }
            }

            /// The generated file's stem.
            pub const fn file_stem(self) -> &'static str {
                match self {
                    $(KnownFq2::$q => stringify!($qstem),)*
                }
            }
        }
    };
}

// The registry of fields: a line per field, from which every list of fields derives (this
// crate's `KnownField` and `KnownFq2`, `zkgpu-shaders`' `FieldModule`, and through
// `for_each_field!` the tests' and tools' lists). A prime line: variant, file stem, name,
// WGSL prefix and type, arkworks type, whether the NTT's lazy module is generated. An
// extension line: variant, its module's variant, file stem, name, base field, `-beta`,
// arkworks type.
fields! {
    $;
    prime {
        /// BLS12-381 base field (381 bits).
        Bls12_381Fq: bls12_381_fq, "BLS12-381 Fq", fq "Fq", ark_bls12_381::Fq, lazy false;
        /// BLS12-381 scalar field (255 bits).
        Bls12_381Fr: bls12_381_fr, "BLS12-381 Fr", fr "Fr", ark_bls12_381::Fr, lazy true;
        /// BLS12-377 base field (377 bits).
        Bls12_377Fq: bls12_377_fq, "BLS12-377 Fq", fq "Fq", ark_bls12_377::Fq, lazy false;
        /// BLS12-377 scalar field (253 bits); also the base field of ed-on-bls12-377.
        Bls12_377Fr: bls12_377_fr, "BLS12-377 Fr", fr "Fr", ark_bls12_377::Fr, lazy true;
        /// BN254 base field (254 bits).
        Bn254Fq: bn254_fq, "BN254 Fq", fq "Fq", ark_bn254::Fq, lazy false;
        /// BN254 scalar field (254 bits).
        Bn254Fr: bn254_fr, "BN254 Fr", fr "Fr", ark_bn254::Fr, lazy true;
        /// ed-on-bls12-377 scalar field (251 bits): the MSM's scalar conversion only.
        EdOnBls12_377Fr: ed_on_bls12_377_fr, "ed-on-bls12-377 Fr", fr "Fr", ark_ed_on_bls12_377::Fr, lazy false;
    }
    fq2 {
        /// BLS12-381 Fq2 = `Fq[u]/(u^2 + 1)`.
        Bls12_381: Bls12_381Fq2, bls12_381_fq2, "BLS12-381 Fq2", Bls12_381Fq, minus_beta 1, ark_bls12_381::Fq2;
        /// BLS12-377 Fq2 = `Fq[u]/(u^2 + 5)`.
        Bls12_377: Bls12_377Fq2, bls12_377_fq2, "BLS12-377 Fq2", Bls12_377Fq, minus_beta 5, ark_bls12_377::Fq2;
        /// BN254 Fq2 = `Fq[u]/(u^2 + 1)`.
        Bn254: Bn254Fq2, bn254_fq2, "BN254 Fq2", Bn254Fq, minus_beta 1, ark_bn254::Fq2;
    }
}

impl KnownField {
    /// The limb layout (a copy of [`KnownField::layout`]).
    pub fn params(self) -> FieldParams {
        self.layout().clone()
    }

    /// The modulus in arkworks' packed words (`2 N` little-endian u32 words of `BigInt<N>`).
    pub fn modulus_words(self) -> &'static [u32] {
        static CELLS: [OnceLock<Vec<u32>>; KnownField::ALL.len()] =
            [const { OnceLock::new() }; KnownField::ALL.len()];
        CELLS[self as usize].get_or_init(|| {
            let p = self.layout();
            let mut w = p.modulus.to_u32_digits();
            w.resize(p.packed_words(), 0);
            w
        })
    }

    /// The CPU emulator of this field's generated functions (the lazy ones included).
    pub fn emulator(self) -> &'static Emulator {
        static CELLS: [OnceLock<Emulator>; KnownField::ALL.len()] =
            [const { OnceLock::new() }; KnownField::ALL.len()];
        CELLS[self as usize].get_or_init(|| Emulator::new(self.layout()))
    }

    /// The field's layout in the wide arithmetic `arith` (`None` for [`Arith::Portable`]).
    pub fn wide_layout(self, arith: Arith) -> Option<WideLayout> {
        WideLayout::new(arith, self.layout())
    }

    /// The CPU emulator of this field's functions in the wide arithmetic `arith`
    /// (`None` for [`Arith::Portable`], whose emulator is [`KnownField::emulator`]).
    pub fn wide_emulator(self, arith: Arith) -> Option<&'static WideEmulator> {
        static CELLS: [[OnceLock<WideEmulator>; Arith::WIDE.len()]; KnownField::ALL.len()] =
            [const { [const { OnceLock::new() }; Arith::WIDE.len()] }; KnownField::ALL.len()];
        let slot = Arith::WIDE.iter().position(|&a| a == arith)?;
        Some(CELLS[self as usize][slot].get_or_init(|| {
            let l = self.wide_layout(arith).expect("a wide arithmetic");
            WideEmulator::new(&l, self.has_lazy_module())
        }))
    }
}

impl KnownFq2 {
    /// Limbs of one coefficient.
    pub fn base_limbs(self) -> usize {
        self.base().layout().n_limbs
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
