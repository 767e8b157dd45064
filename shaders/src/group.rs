//! The registry of the groups zkgpu runs on: one line per group below, from which every list
//! of groups derives: the curve-VM modules here, `for_each_group!`, and through it, in
//! `zkgpu-curves`, the dispatch from a runtime choice to a type (`with_group!`), the
//! command-line names, the benchmarks' lists and the test macros. A group's line and its
//! `GpuCurve` type (its arkworks types, named as its variant) are all that adding one takes.

use crate::field::FieldModule;
use zkgpu_limbs::Arith;

macro_rules! groups {
    // `$d` is a `$` passed in, for the macro this one defines.
    ($d:tt; $($(#[$doc:meta])* $g:ident: $id:ident, $name:literal, $field:ident, $scalar:expr, $degree:literal;)*) => {
        /// Calls `$callback! { $($args)* ; (Group, module_name) ... }` with every group's
        /// variant (which `zkgpu-curves` also names its `GpuCurve` type) and its snake-case
        /// id, in the order of [`Group::ALL`]: test files write their per-group tests once
        /// and generate them for every group with `zkgpu_curves::for_each_group!(my_tests)`.
        #[macro_export]
        macro_rules! for_each_group {
            ($d($d callback:ident)::+ $d(, $d($d args:tt)*)?) => {
                $d($d callback)::+! {
                    $d($d($d args)*)? ;
                    $(($g, $id))*
                }
            };
        }

        /// A group whose formulas run on the curve VM (`shaders/kernels/curve_vm.wgsl`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Group {
            $($(#[$doc])* $g,)*
        }

        impl Group {
            /// Every group, in the order tables list them.
            pub const ALL: &'static [Group] = &[$(Group::$g,)*];

            /// Stable identifier (module names, cache keys): `bls12_381_g1`, ...
            pub const fn id(self) -> &'static str {
                match self {
                    $(Group::$g => stringify!($id),)*
                }
            }

            /// The name users type: `bls12-381-g1`, ..., `ed-on-bls12-377`.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Group::$g => $name,)*
                }
            }

            /// The prime field of the VM's registers.
            pub const fn field(self) -> FieldModule {
                match self {
                    $(Group::$g => FieldModule::$field,)*
                }
            }

            /// The group's scalar field where a module of it exists, for the MSM's conversion of
            /// scalars on the GPU (the BLS12 and BN254 groups: the field the NTT also uses;
            /// ed-on-bls12-377's, a module for that conversion alone). Every group has one; a
            /// group without would have its scalars converted by the host.
            pub const fn scalar_field(self) -> Option<FieldModule> {
                match self {
                    $(Group::$g => $scalar,)*
                }
            }

            /// Base-field registers per coordinate: 1, or 2 over Fq2.
            pub const fn degree(self) -> usize {
                match self {
                    $(Group::$g => $degree,)*
                }
            }
        }
    };
}

groups! {
    $;
    /// BLS12-381 G1.
    Bls12_381G1: bls12_381_g1, "bls12-381-g1", Bls12_381Fq, Some(FieldModule::Bls12_381Fr), 1;
    /// BLS12-381 G2 (Fq2 coordinates as pairs of Fq registers).
    Bls12_381G2: bls12_381_g2, "bls12-381-g2", Bls12_381Fq, Some(FieldModule::Bls12_381Fr), 2;
    /// BLS12-377 G1.
    Bls12_377G1: bls12_377_g1, "bls12-377-g1", Bls12_377Fq, Some(FieldModule::Bls12_377Fr), 1;
    /// BLS12-377 G2 (Fq2 coordinates as pairs of Fq registers).
    Bls12_377G2: bls12_377_g2, "bls12-377-g2", Bls12_377Fq, Some(FieldModule::Bls12_377Fr), 2;
    /// ed-on-bls12-377.
    EdOnBls12_377: ed_on_bls12_377, "ed-on-bls12-377", Bls12_377Fr, Some(FieldModule::EdOnBls12_377Fr), 1;
    /// BN254 G1 (alt_bn128: Ethereum's precompile curve, circom's and snarkjs').
    Bn254G1: bn254_g1, "bn254-g1", Bn254Fq, Some(FieldModule::Bn254Fr), 1;
    /// BN254 G2 (Fq2 coordinates as pairs of Fq registers).
    Bn254G2: bn254_g2, "bn254-g2", Bn254Fq, Some(FieldModule::Bn254Fr), 2;
}

impl Group {
    /// Base-field registers of an affine point as the GPU stores it: `x, y`, or `y - x,
    /// y + x, 2d x y` on the twisted Edwards forms of ed-on-bls12-377 and BLS12-377 G1
    /// (crates/curves/src/formulas.rs, crates/curves/src/te_map.rs).
    pub const fn affine_regs(self) -> u32 {
        match self {
            Group::EdOnBls12_377 | Group::Bls12_377G1 => 3,
            _ => 2 * self.degree() as u32,
        }
    }

    /// Whether the MSM's accumulation loads each step's point one step ahead, into registers
    /// (`PREFETCH_POINT` in shaders/kernels/msm_accumulate.wgsl). On the H100 that paid for
    /// ed-on-bls12-377 only: BN254 G1 was unchanged, and the extra live registers slowed the
    /// 30-limb groups (docs/log/2026-11.md, 2026-11-27).
    pub const fn prefetch_point(self) -> bool {
        matches!(self, Group::EdOnBls12_377)
    }

    /// `k` of the coordinate field `Fq2 = Fq[u]/(u^2 + k)` (1 for BLS12-381's and BN254's,
    /// 5 for BLS12-377's); 0 for groups over a prime field. Every group is named (no
    /// wildcard), so a new group's line in the registry does not compile without its `k`.
    pub const fn fq2_k(self) -> u32 {
        match self {
            Group::Bls12_381G2 | Group::Bn254G2 => 1,
            Group::Bls12_377G2 => 5,
            Group::Bls12_381G1 | Group::Bls12_377G1 | Group::EdOnBls12_377 | Group::Bn254G1 => 0,
        }
    }

    /// Whether `arith`'s VM modules of this group run the Fq2 product `KMUL`
    /// (shaders/kernels/curve_vm_kmul.wgsl instead of curve_vm_mul.wgsl), and so whether its
    /// programs use it (`zkgpu_curves::GpuCurve::program`): only over `Fq[u]/(u^2 + 1)` and
    /// with the f64 arithmetic, where it was measured. Its predecessors (`KSUM`/`KCOMB`, the
    /// Karatsuba additions as instructions) were slower with the portable arithmetic, and
    /// with `k = 5` the extra additions of `5 v1` cost more than they saved (docs/msm.md).
    pub const fn vm_fq2_ops(self, arith: Arith) -> bool {
        self.fq2_k() == 1 && matches!(arith, Arith::F64)
    }

    /// Registers of the VM's register file: 18 coordinate slots, one register each, or two
    /// plus four scratch registers over Fq2 (crates/curves/src/formulas.rs).
    pub const fn vm_regs(self) -> u32 {
        match self.degree() {
            2 => 40,
            _ => 18,
        }
    }

    /// The group named `name` ([`Group::name`]), or an error listing the names.
    pub fn from_name(name: &str) -> Result<Group, String> {
        Group::ALL
            .iter()
            .copied()
            .find(|g| g.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Group::ALL.iter().map(|g| g.name()).collect();
                format!("unknown group {name:?}; one of {}", names.join(", "))
            })
    }
}

impl std::fmt::Display for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
