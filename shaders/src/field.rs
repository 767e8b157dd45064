//! The fields with a generated WGSL module: [`FieldModule`], derived from `zkgpu-limbs`'
//! registry of fields (`zkgpu_limbs::for_each_field!`: adding a field is its line there), with
//! their names, limb counts and moduli. Compiled into the library and into `build.rs`
//! (through `#[path]`), like `compose.rs`, which composes their fragments.

use zkgpu_limbs::{KnownField, KnownFq2};

macro_rules! field_modules {
    (; prime $(($f:ident, $stem:ident, $ark:path))* ; fq2 $(($q:ident, $m:ident, $qstem:ident, $base:ident, $qark:path))*) => {
        /// A field with a generated WGSL module: the prime fields (`fq_*` or `fr_*`) and the
        /// quadratic extensions (`fq2_*` over `fq_*`) of `zkgpu-limbs`' registry.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum FieldModule {
            $(#[doc = concat!("The prime field of `", stringify!($stem), ".wgsl`.")] $f,)*
            $(#[doc = concat!("The extension of `", stringify!($qstem), ".wgsl`.")] $m,)*
        }

        impl FieldModule {
            /// Every field module: the prime fields, then the extensions.
            pub const ALL: &'static [FieldModule] = &[$(FieldModule::$f,)* $(FieldModule::$m,)*];

            /// Stable identifier (the generated file's stem): `bls12_381_fq`, ...
            pub const fn id(self) -> &'static str {
                match self {
                    $(FieldModule::$f => stringify!($stem),)*
                    $(FieldModule::$m => stringify!($qstem),)*
                }
            }

            /// The prime field's description in `zkgpu-limbs` (`None` for an extension).
            pub const fn known(self) -> Option<KnownField> {
                match self {
                    $(FieldModule::$f => Some(KnownField::$f),)*
                    $(FieldModule::$m => None,)*
                }
            }

            /// The extension's description in `zkgpu-limbs` (`None` for a prime field).
            pub const fn known_fq2(self) -> Option<KnownFq2> {
                match self {
                    $(FieldModule::$f => None,)*
                    $(FieldModule::$m => Some(KnownFq2::$q),)*
                }
            }

            /// The prime field of this module: itself, or an extension's base field.
            pub const fn base(self) -> FieldModule {
                match self {
                    $(FieldModule::$f => FieldModule::$f,)*
                    $(FieldModule::$m => FieldModule::$base,)*
                }
            }
        }
    };
}

zkgpu_limbs::for_each_field!(field_modules);

impl FieldModule {
    /// The name users type: the id with dashes (`bls12-381-fq`, `ed-on-bls12-377-fr`).
    pub fn name(self) -> String {
        self.id().replace('_', "-")
    }

    /// The module a user's name ([`FieldModule::name`]) or id names.
    pub fn from_name(name: &str) -> Option<Self> {
        let id = name.replace('-', "_");
        Self::ALL.iter().copied().find(|f| f.id() == id)
    }

    /// The prime field (itself, or an extension's base field) in `zkgpu-limbs`.
    fn base_known(self) -> KnownField {
        self.base()
            .known()
            .expect("an extension's base is a prime field")
    }

    /// The WGSL prefix and type of the field's functions (`fq` and `Fq`, `fr` and `Fr`,
    /// `fq2` and `Fq2`).
    pub fn prefix_and_type(self) -> (&'static str, &'static str) {
        match self.known() {
            Some(k) => (k.layout().prefix.as_str(), k.layout().type_name.as_str()),
            None => ("fq2", "Fq2"),
        }
    }

    /// u32 words (13-bit limbs) per element.
    pub fn words(self) -> u32 {
        let limbs = self.base_known().layout().n_limbs as u32;
        if self.is_prime() { limbs } else { 2 * limbs }
    }

    /// u32 words of arkworks' packed representation (`BigInt<N>`, `2 N` words); prime fields
    /// only (0 for an extension).
    pub fn packed_words(self) -> u32 {
        self.known().map_or(0, |k| k.layout().packed_words() as u32)
    }

    /// The modulus in `packed_words()` little-endian 32-bit words (prime fields; empty for an
    /// extension).
    pub fn modulus_words(self) -> &'static [u32] {
        self.known().map_or(&[], KnownField::modulus_words)
    }

    /// Whether this is a prime field (not an extension).
    pub fn is_prime(self) -> bool {
        self.known().is_some()
    }
}
