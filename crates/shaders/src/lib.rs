//! zkgpu's WGSL, composed from the fragments in `shaders/` (generated field arithmetic and
//! hand-written kernels). Every module [`all`] lists was parsed and validated by naga with
//! WebGPU's capabilities when this crate was built.
//!
//! This crate has no GPU dependency: the runtime crate turns a [`Composed`] module into
//! pipelines.

mod compose;

pub use compose::{
    CURVE_VM_ENTRY_POINTS, Composed, CurveModule, FIELD_FUNCTIONS, FIELD_OPS_ENTRY_POINTS,
    FieldModule, MSM_ACCUMULATE_ENTRY_POINTS, MSM_BUCKETS_ENTRY_POINTS, MSM_SCALARS_ENTRY_POINTS,
    NTT_ELEMENTWISE_ENTRY_POINTS, NTT_ENTRY_POINTS, NTT_FIELDS, Part, all, curve_vm, field_library,
    field_ops, field_shim, msm_accumulate, msm_buckets, msm_scalars, ntt, ntt_elementwise,
};

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
}
