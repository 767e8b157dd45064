//! zkgpu's WGSL, composed from the fragments in `shaders/` (generated field arithmetic and
//! hand-written kernels). Every module [`all`] lists was parsed and validated by naga with
//! WebGPU's capabilities when this crate was built.
//!
//! This crate has no GPU dependency: the runtime crate turns a [`Composed`] module into
//! pipelines.

mod compose;
mod group;

/// The Rust side of the contract with the kernels, generated at build time from naga's
/// reflection of the composed modules: one module per kernel file, with a constant per bound
/// variable (`msm_buckets::SCALARS` is `scalars`' binding number) and each uniform struct
/// with the WGSL member names and offsets. Rust code binds and fills buffers through these,
/// so a change on either side that the other does not follow fails to compile.
pub mod contract {
    include!(concat!(env!("OUT_DIR"), "/contract.rs"));
}

pub use compose::{
    CURVE_VM_ENTRY_POINTS, Composed, FIELD_FUNCTIONS, FIELD_OPS_ENTRY_POINTS, FieldModule,
    MSM_ACCUMULATE_ENTRY_POINTS, MSM_BUCKETS_ENTRY_POINTS, MSM_SCALARS_ENTRY_POINTS,
    NTT_ELEMENTWISE_ENTRY_POINTS, NTT_ENTRY_POINTS, NTT_FIELDS, Part, all, curve_vm, field_library,
    field_ops, field_shim, msm_accumulate, msm_accumulate_split, msm_buckets, msm_scalars, ntt,
    ntt_elementwise,
};
pub use group::Group;

/// The generator of [`contract`], compiled into the tests too (naga is a dev-dependency).
#[cfg(test)]
#[path = "../build/contract.rs"]
mod contract_gen;

#[cfg(test)]
mod tests {
    use super::*;
    use zkgpu_limbs::{KnownField, KnownFq2};

    #[test]
    fn word_counts_match_the_limb_layouts() {
        let prime = [
            (FieldModule::Bls12_381Fq, KnownField::Bls12_381Fq),
            (FieldModule::Bls12_381Fr, KnownField::Bls12_381Fr),
            (FieldModule::Bls12_377Fq, KnownField::Bls12_377Fq),
            (FieldModule::Bls12_377Fr, KnownField::Bls12_377Fr),
            (FieldModule::Bn254Fq, KnownField::Bn254Fq),
            (FieldModule::Bn254Fr, KnownField::Bn254Fr),
            (FieldModule::EdOnBls12_377Fr, KnownField::EdOnBls12_377Fr),
        ];
        for (m, f) in prime {
            assert_eq!(m.words() as usize, f.params().n_limbs, "{}", m.id());
            assert_eq!(m.packed_words() as usize, f.params().packed_words());
            assert_eq!(m.id(), f.file_stem());
            let mut p = f.params().modulus.to_u32_digits();
            p.resize(m.packed_words() as usize, 0);
            assert_eq!(m.modulus_words(), &p[..], "{}", m.id());
        }
        for (m, f) in [
            (FieldModule::Bls12_381Fq2, KnownFq2::Bls12_381),
            (FieldModule::Bls12_377Fq2, KnownFq2::Bls12_377),
            (FieldModule::Bn254Fq2, KnownFq2::Bn254),
        ] {
            assert_eq!(m.words() as usize, 2 * f.base_limbs());
            assert_eq!(m.id(), f.file_stem());
        }
    }

    #[test]
    fn composed_modules_parse_and_validate() {
        // build.rs already did this; repeated here so the check also runs as a test.
        for m in all() {
            let src = m.source();
            let module = naga::front::wgsl::parse_str(&src)
                .unwrap_or_else(|e| panic!("{}: {}", m.name, e.emit_to_string(&src)));
            naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::empty(),
            )
            .validate(&module)
            .unwrap_or_else(|e| panic!("{}: {}", m.name, e.emit_to_string(&src)));
        }
    }

    #[test]
    fn locate_maps_lines_to_fragments() {
        let m = field_ops(FieldModule::Bls12_381Fr);
        let (origin, line) = m.locate(1).unwrap();
        assert_eq!(
            (origin.as_str(), line),
            ("shaders/generated/bls12_381_fr.wgsl", 1)
        );
        let total: usize = m.parts.iter().map(|p| p.text.lines().count()).sum();
        let (origin, _) = m.locate(total).unwrap();
        assert_eq!(origin, "shaders/kernels/field_ops.wgsl");
    }

    fn parse(src: &str) -> naga::Module {
        naga::front::wgsl::parse_str(src).unwrap_or_else(|e| panic!("{}", e.emit_to_string(src)))
    }

    const KERNEL: &str = "struct P { n: u32, modulus: array<vec4<u32>, 2> }
@group(0) @binding(3) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
const BLOCK: u32 = 4u * 8u;
@compute @workgroup_size(1) fn k() { out[0] = p.n + BLOCK; }";

    #[test]
    fn the_contract_follows_the_wgsl() {
        let mut c = contract_gen::Contract::default();
        c.add("demo/a", KERNEL, &parse(KERNEL)).unwrap();
        // The same kernel for another field or curve: identical, accepted.
        c.add("demo/b", KERNEL, &parse(KERNEL)).unwrap();
        let rust = c.rust();
        for want in [
            "pub mod demo {",
            "pub const BLOCK: u32 = 32;",
            "pub const P: u32 = 3;",
            "pub const OUT: u32 = 1;",
            "pub n: u32,",
            "pub _gap1: [u32; 3],",
            "pub modulus: [u32; 8],",
            "size_of::<P>() == 48",
        ] {
            assert!(rust.contains(want), "missing `{want}` in\n{rust}");
        }
    }

    #[test]
    fn the_contract_refuses_disagreements() {
        let mut c = contract_gen::Contract::default();
        c.add("demo/a", KERNEL, &parse(KERNEL)).unwrap();
        let moved = KERNEL.replace("@binding(3)", "@binding(4)");
        assert!(c.add("demo/b", &moved, &parse(&moved)).is_err());
        let vec3 = KERNEL
            .replace("n: u32,", "n: vec3<u32>,")
            .replace("p.n +", "p.n.x +");
        let mut c = contract_gen::Contract::default();
        assert!(c.add("demo/a", &vec3, &parse(&vec3)).is_err());
    }

    #[test]
    fn engines_see_the_kernels_layouts() {
        use contract::{msm_accumulate, msm_buckets, ntt};
        assert_eq!(std::mem::size_of::<msm_buckets::BucketParams>(), 112);
        assert_eq!(std::mem::offset_of!(msm_buckets::BucketParams, modulus), 80);
        assert_eq!(msm_buckets::SCALARS, 0);
        assert_eq!(msm_accumulate::VM_CODE, 0);
        assert_eq!(msm_buckets::SCAN_BLOCK, 2048);
        assert_eq!(ntt::NTT_TILE, 256);
    }
}
