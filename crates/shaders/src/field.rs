//! The fields with a generated WGSL module: [`FieldModule`], their names, limb counts and
//! moduli. Compiled into the library and into `build.rs` (through `#[path]`), like
//! `compose.rs`, which composes their fragments.

/// A field with a generated WGSL module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldModule {
    /// BLS12-381 base field, `fq_*`.
    Bls12_381Fq,
    /// BLS12-381 scalar field, `fr_*`.
    Bls12_381Fr,
    /// BLS12-377 base field, `fq_*`.
    Bls12_377Fq,
    /// BLS12-377 scalar field (ed-on-bls12-377's base field), `fr_*`.
    Bls12_377Fr,
    /// BLS12-381 Fq2, `fq2_*` over `fq_*`.
    Bls12_381Fq2,
    /// BLS12-377 Fq2, `fq2_*` over `fq_*`.
    Bls12_377Fq2,
    /// BN254 base field, `fq_*`.
    Bn254Fq,
    /// BN254 scalar field, `fr_*`.
    Bn254Fr,
    /// BN254 Fq2, `fq2_*` over `fq_*`.
    Bn254Fq2,
    /// ed-on-bls12-377 scalar field, `fr_*` (the MSM's scalar conversion).
    EdOnBls12_377Fr,
}

impl FieldModule {
    /// Every field module.
    pub const ALL: [FieldModule; 10] = [
        FieldModule::Bls12_381Fq,
        FieldModule::Bls12_381Fr,
        FieldModule::Bls12_377Fq,
        FieldModule::Bls12_377Fr,
        FieldModule::Bls12_381Fq2,
        FieldModule::Bls12_377Fq2,
        FieldModule::Bn254Fq,
        FieldModule::Bn254Fr,
        FieldModule::Bn254Fq2,
        FieldModule::EdOnBls12_377Fr,
    ];

    /// Stable identifier (the generated file's stem).
    pub fn id(self) -> &'static str {
        match self {
            FieldModule::Bls12_381Fq => "bls12_381_fq",
            FieldModule::Bls12_381Fr => "bls12_381_fr",
            FieldModule::Bls12_377Fq => "bls12_377_fq",
            FieldModule::Bls12_377Fr => "bls12_377_fr",
            FieldModule::Bls12_381Fq2 => "bls12_381_fq2",
            FieldModule::Bls12_377Fq2 => "bls12_377_fq2",
            FieldModule::Bn254Fq => "bn254_fq",
            FieldModule::Bn254Fr => "bn254_fr",
            FieldModule::Bn254Fq2 => "bn254_fq2",
            FieldModule::EdOnBls12_377Fr => "ed_on_bls12_377_fr",
        }
    }

    /// The WGSL prefix and type of the field's functions.
    pub fn prefix_and_type(self) -> (&'static str, &'static str) {
        match self {
            FieldModule::Bls12_381Fq | FieldModule::Bls12_377Fq | FieldModule::Bn254Fq => {
                ("fq", "Fq")
            }
            FieldModule::Bls12_381Fr
            | FieldModule::Bls12_377Fr
            | FieldModule::Bn254Fr
            | FieldModule::EdOnBls12_377Fr => ("fr", "Fr"),
            FieldModule::Bls12_381Fq2 | FieldModule::Bls12_377Fq2 | FieldModule::Bn254Fq2 => {
                ("fq2", "Fq2")
            }
        }
    }

    /// u32 words (13-bit limbs) per element.
    pub fn words(self) -> u32 {
        match self {
            FieldModule::Bls12_381Fq | FieldModule::Bls12_377Fq => 30,
            FieldModule::Bls12_381Fr | FieldModule::Bls12_377Fr => 20,
            FieldModule::Bn254Fq | FieldModule::Bn254Fr | FieldModule::EdOnBls12_377Fr => 20,
            FieldModule::Bls12_381Fq2 | FieldModule::Bls12_377Fq2 => 60,
            FieldModule::Bn254Fq2 => 40,
        }
    }

    /// u32 words of arkworks' packed representation (`BigInt<N>`, `2 N` words); prime fields
    /// only (0 for Fq2).
    pub fn packed_words(self) -> u32 {
        match self {
            FieldModule::Bls12_381Fq | FieldModule::Bls12_377Fq => 12,
            FieldModule::Bls12_381Fr | FieldModule::Bls12_377Fr => 8,
            FieldModule::Bn254Fq | FieldModule::Bn254Fr | FieldModule::EdOnBls12_377Fr => 8,
            FieldModule::Bls12_381Fq2 | FieldModule::Bls12_377Fq2 | FieldModule::Bn254Fq2 => 0,
        }
    }

    /// The modulus in `packed_words()` little-endian 32-bit words (prime fields; empty for
    /// Fq2). A unit test checks them against zkgpu-limbs' parameters.
    pub fn modulus_words(self) -> &'static [u32] {
        match self {
            FieldModule::Bls12_381Fq => &[
                0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0, 0xf38512bf,
                0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea,
            ],
            FieldModule::Bls12_381Fr => &[
                0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402, 0x09a1d805, 0x3339d808, 0x299d7d48,
                0x73eda753,
            ],
            FieldModule::Bls12_377Fq => &[
                0x00000001, 0x8508c000, 0x30000000, 0x170b5d44, 0xba094800, 0x1ef3622f, 0x00f5138f,
                0x1a22d9f3, 0x6ca1493b, 0xc63b05c0, 0x17c510ea, 0x01ae3a46,
            ],
            FieldModule::Bls12_377Fr => &[
                0x00000001, 0x0a118000, 0xd0000001, 0x59aa76fe, 0x5c37b001, 0x60b44d1e, 0x9a2ca556,
                0x12ab655e,
            ],
            FieldModule::Bn254Fq => &[
                0xd87cfd47, 0x3c208c16, 0x6871ca8d, 0x97816a91, 0x8181585d, 0xb85045b6, 0xe131a029,
                0x30644e72,
            ],
            FieldModule::Bn254Fr => &[
                0xf0000001, 0x43e1f593, 0x79b97091, 0x2833e848, 0x8181585d, 0xb85045b6, 0xe131a029,
                0x30644e72,
            ],
            FieldModule::EdOnBls12_377Fr => &[
                0xc33fd9ff, 0xb95aee9a, 0xc43c8afe, 0x5293a3af, 0x970dec00, 0x982d1347, 0xa68b2955,
                0x04aad957,
            ],
            FieldModule::Bls12_381Fq2 | FieldModule::Bls12_377Fq2 | FieldModule::Bn254Fq2 => &[],
        }
    }

    /// The prime field of this module: itself, or an extension's base field.
    pub fn base(self) -> FieldModule {
        match self {
            FieldModule::Bls12_381Fq2 => FieldModule::Bls12_381Fq,
            FieldModule::Bls12_377Fq2 => FieldModule::Bls12_377Fq,
            FieldModule::Bn254Fq2 => FieldModule::Bn254Fq,
            f => f,
        }
    }

    /// The prime field's generator-side description (`None` for an extension).
    pub fn known(self) -> Option<zkgpu_limbs::KnownField> {
        zkgpu_limbs::KnownField::ALL
            .into_iter()
            .find(|k| k.file_stem() == self.id())
    }

    /// Whether this is a prime field (not an extension).
    pub fn is_prime(self) -> bool {
        self.base() == self
    }
}
