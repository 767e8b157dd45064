//! The registry of the pairings zkgpu proves over: one line per pairing below (its groups,
//! its scalar field, and its arkworks types, passed through as tokens to the crates that have
//! arkworks), from which every list of pairings derives: [`Pairing`] and, through
//! `for_each_pairing!`, the NTT's fields (`zkgpu-ntt`), the prover's `GpuPairing` impls and
//! its run-time dispatch (`zkgpu-groth16`), the command line's names, and the per-pairing
//! tests. Adding a pairing is its line (its groups already in the group registry).

use crate::field::FieldModule;
use crate::group::Group;

macro_rules! pairings {
    // `$d` is a `$` passed in, for the macro this one defines.
    ($d:tt; $($(#[$doc:meta])* $p:ident: $id:ident, $name:literal, $g1:ident, $g2:ident, $fr:ident, $ark:path, $ark_fr:path;)*) => {
        /// Calls `$callback! { $($args)* ; ($pairing, id, G1, G2, arkworks pairing,
        /// arkworks scalar field) ... }` for every pairing, in the order of [`Pairing::ALL`]:
        /// the G1 and G2 idents name `zkgpu_curves`' `GpuCurve` types, the paths arkworks'
        /// types (the caller depends on their crates).
        #[macro_export]
        macro_rules! for_each_pairing {
            ($d($d callback:ident)::+ $d(, $d($d args:tt)*)?) => {
                $d($d callback)::+! {
                    $d($d($d args)*)? ;
                    $(($p, $id, $g1, $g2, $ark, $ark_fr))*
                }
            };
        }

        /// A pairing-friendly curve the Groth16 prover runs on.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Pairing {
            $($(#[$doc])* $p,)*
        }

        impl Pairing {
            /// Every pairing, in the order tables list them.
            pub const ALL: &'static [Pairing] = &[$(Pairing::$p,)*];

            /// Stable identifier (cache keys): `bls12_381`, ...
            pub const fn id(self) -> &'static str {
                match self {
                    $(Pairing::$p => stringify!($id),)*
                }
            }

            /// The name users type: `bls12-381`, ...; its scalar field's name too.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Pairing::$p => $name,)*
                }
            }

            /// Its G1 group.
            pub const fn g1(self) -> Group {
                match self {
                    $(Pairing::$p => Group::$g1,)*
                }
            }

            /// Its G2 group.
            pub const fn g2(self) -> Group {
                match self {
                    $(Pairing::$p => Group::$g2,)*
                }
            }

            /// Its scalar field (the NTT's field, the MSMs' scalars).
            pub const fn scalar_field(self) -> FieldModule {
                match self {
                    $(Pairing::$p => FieldModule::$fr,)*
                }
            }
        }
    };
}

pairings! {
    $;
    /// BLS12-381.
    Bls12_381: bls12_381, "bls12-381", Bls12_381G1, Bls12_381G2, Bls12_381Fr, ark_bls12_381::Bls12_381, ark_bls12_381::Fr;
    /// BLS12-377.
    Bls12_377: bls12_377, "bls12-377", Bls12_377G1, Bls12_377G2, Bls12_377Fr, ark_bls12_377::Bls12_377, ark_bls12_377::Fr;
    /// BN254 (alt_bn128: circom's and snarkjs' `bn128`).
    Bn254: bn254, "bn254", Bn254G1, Bn254G2, Bn254Fr, ark_bn254::Bn254, ark_bn254::Fr;
}

impl Pairing {
    /// The pairing named `name` ([`Pairing::name`], case and `_` for `-` aside; snarkjs' `bn128`
    /// is BN254), or an error listing the names.
    pub fn from_name(name: &str) -> Result<Pairing, String> {
        let name = name.to_lowercase().replace('_', "-");
        let name = if name == "bn128" { "bn254" } else { &name };
        Pairing::ALL
            .iter()
            .copied()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Pairing::ALL.iter().map(|p| p.name()).collect();
                format!("unknown curve {name:?}; one of {}", names.join(", "))
            })
    }
}

impl std::fmt::Display for Pairing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
