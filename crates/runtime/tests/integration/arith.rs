//! The field arithmetics' selection: the known-answer check refuses what a device computes
//! wrongly (lavapipe's `f64`: its `fma` is not fused), accepts what it computes exactly
//! (lavapipe's `int64`), and the automatic choice only ever picks a usable arithmetic.

#![allow(clippy::unwrap_used)]

use zkgpu_limbs::{KnownField, pack_limbs};
use zkgpu_runtime::{Arith, ArithChoice, ContextOptions, GpuContext, GpuError};
use zkgpu_testing::shared_context;

fn with(choice: ArithChoice) -> Result<GpuContext, GpuError> {
    GpuContext::new_blocking(ContextOptions {
        arith: choice,
        ..ContextOptions::from_env().unwrap()
    })
}

fn is_lavapipe(ctx: &GpuContext) -> bool {
    ctx.info().name.contains("llvmpipe")
}

#[test]
fn the_automatic_choice_is_usable() {
    let ctx = shared_context();
    let chosen = ctx
        .arith_reports()
        .iter()
        .find(|r| r.arith == ctx.arith())
        .unwrap();
    assert_eq!(chosen.usable, Ok(()), "{chosen:?}");
    if ctx.is_software() {
        assert_eq!(ctx.arith(), Arith::Portable);
    }
    assert!(ctx.check_arith(Arith::Portable).is_ok());
}

#[test]
fn f64_is_refused_where_fma_is_not_fused() {
    match with(ArithChoice::Fixed(Arith::F64)) {
        Ok(ctx) => {
            assert!(!is_lavapipe(&ctx), "lavapipe's fma is not fused");
            assert_eq!(ctx.arith(), Arith::F64);
        }
        Err(GpuError::Arith { arith, reason }) => {
            assert_eq!(arith, "f64");
            if is_lavapipe(shared_context()) {
                assert!(reason.contains("not fused"), "{reason}");
            }
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn int64_passes_where_the_device_has_it() {
    let has = shared_context()
        .adapter()
        .features()
        .contains(zkgpu_runtime::arith_features(Arith::Int64));
    match with(ArithChoice::Fixed(Arith::Int64)) {
        Ok(ctx) => {
            assert!(has);
            assert_eq!(ctx.arith(), Arith::Int64);
            assert!(ctx.check_arith(Arith::Int64).is_ok());
            assert!(
                ctx.check_arith(Arith::F64).is_err(),
                "not asked for, not checked"
            );
        }
        Err(e) => assert!(!has, "{e}"),
    }
    if is_lavapipe(shared_context()) {
        assert!(has, "lavapipe has 64-bit integers");
    }
}

/// The expected answers are the portable arithmetic's products (its emulator, itself checked
/// against ark-ff), so a wrong table cannot pass a wrong device.
#[test]
fn known_answers_are_the_portable_products() {
    let (a, b, out) = zkgpu_runtime::known_answer_vectors();
    let f = KnownField::Bls12_381Fq;
    let (n, w) = (f.params().n_limbs, f.params().packed_words());
    assert!(a.len() / w >= 16);
    for ((x, y), z) in a.chunks(w).zip(b.chunks(w)).zip(out.chunks(w)) {
        let (mut xl, mut yl) = (vec![0u32; n], vec![0u32; n]);
        zkgpu_limbs::unpack_limbs(x, &mut xl);
        zkgpu_limbs::unpack_limbs(y, &mut yl);
        let prod = f.emulator().run("mul", &[&xl, &yl]).unwrap();
        let mut packed = vec![0u32; w];
        pack_limbs(&prod, &mut packed);
        assert_eq!(packed, z);
    }
}

#[test]
fn the_environment_names_an_arithmetic() {
    for (name, want) in [
        ("auto", Some(ArithChoice::Auto)),
        ("portable", Some(ArithChoice::Fixed(Arith::Portable))),
        ("int64", Some(ArithChoice::Fixed(Arith::Int64))),
        ("f64", Some(ArithChoice::Fixed(Arith::F64))),
        ("f32", None),
    ] {
        assert_eq!(ArithChoice::from_name(name), want, "{name}");
    }
}
