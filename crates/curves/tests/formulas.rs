//! The VM programs, run on the CPU with arkworks arithmetic, against ark-ec: every entry point,
//! every special case, every group. (The GPU runs the same programs: crates/runtime/tests.)

#![allow(clippy::unwrap_used)]

use ark_ec::{AdditiveGroup, AffineRepr, CurveGroup, PrimeGroup};
use ark_ff::{UniformRand, Zero};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_curves::{
    Bls12_377G1, Bls12_377G2, Bls12_381G1, Bls12_381G2, Bn254G1, Bn254G2, EdOnBls12_377, GpuCurve,
    RunStats,
};

/// Runs `entry` with `inputs` in slots 0.. and returns the accumulator and the run's stats.
fn run<C: GpuCurve>(entry: &str, inputs: &[C::Base]) -> (C::Projective, RunStats) {
    let prog = C::program();
    let mut regs = vec![<C::Base as Zero>::zero(); prog.n_regs as usize];
    regs[..inputs.len()].copy_from_slice(inputs);
    let stats = prog.run_cpu(entry, &mut regs).unwrap();
    (C::from_acc_regs(&regs[..4 * C::DEGREE]), stats)
}

fn madd<C: GpuCurve>(p: &C::Projective, q: &C::Affine) -> (C::Projective, RunStats) {
    let mut r = Vec::new();
    C::projective_regs(p, &mut r);
    C::affine_regs(q, &mut r);
    run::<C>("madd", &r)
}

fn add<C: GpuCurve>(p: &C::Projective, q: &C::Projective) -> (C::Projective, RunStats) {
    let mut r = Vec::new();
    C::projective_regs(p, &mut r);
    C::projective_regs(q, &mut r);
    run::<C>("add", &r)
}

fn dbl<C: GpuCurve>(p: &C::Projective) -> (C::Projective, RunStats) {
    let mut r = Vec::new();
    C::projective_regs(p, &mut r);
    run::<C>("dbl", &r)
}

/// The affine registers `to_affine` leaves from slot 4, and the accumulator after it.
fn to_affine<C: GpuCurve>(p: &C::Projective) -> (Vec<C::Base>, C::Projective) {
    let prog = C::program();
    let mut regs = vec![<C::Base as Zero>::zero(); prog.n_regs as usize];
    let mut r = Vec::new();
    C::projective_regs(p, &mut r);
    regs[..r.len()].copy_from_slice(&r);
    prog.run_cpu("to_affine", &mut regs).unwrap();
    let d = C::DEGREE;
    (
        regs[4 * d..4 * d + C::AFFINE_REGS].to_vec(),
        C::from_acc_regs(&regs[..4 * d]),
    )
}

/// `p` with another projective representation (different Z) of the same point.
fn rescaled<C: GpuCurve>(p: C::Projective, rng: &mut StdRng) -> C::Projective {
    let r = C::Projective::rand(rng);
    p + r - r
}

fn check<C: GpuCurve>(seed: u64, costs: (usize, usize, usize)) {
    let mut rng = StdRng::seed_from_u64(seed);
    let o = C::Projective::zero();
    let oa = C::Affine::zero();
    for i in 0..40 {
        let p = rescaled::<C>(C::Projective::rand(&mut rng), &mut rng);
        let q = C::Projective::rand(&mut rng);
        let qa = q.into_affine();
        let ctx = |what: &str| format!("{} {what} (case {i}, seed {seed})", C::ID);

        // Mixed addition, general and special cases.
        let (r, s) = madd::<C>(&p, &qa);
        assert_eq!(r, p + q, "{}", ctx("madd P+Q"));
        assert_eq!(s.muls, costs.0, "{}", ctx("madd cost"));
        assert_eq!(
            madd::<C>(&rescaled::<C>(q, &mut rng), &qa).0,
            q.double(),
            "{}",
            ctx("madd Q+Q")
        );
        assert_eq!(
            madd::<C>(&rescaled::<C>(-q, &mut rng), &qa).0,
            o,
            "{}",
            ctx("madd -Q+Q")
        );
        assert_eq!(madd::<C>(&o, &qa).0, q, "{}", ctx("madd O+Q"));
        assert_eq!(madd::<C>(&p, &oa).0, p, "{}", ctx("madd P+O"));
        assert_eq!(madd::<C>(&o, &oa).0, o, "{}", ctx("madd O+O"));
        // The MSM kernel's negation of a loaded point (msm_bucket_accumulate): swap the
        // first two registers where the group says so, negate from AFFINE_NEG_COORD.
        for (what, pt) in [("Q", qa), ("O", oa)] {
            let mut neg = Vec::new();
            C::affine_regs(&pt, &mut neg);
            if C::AFFINE_NEG_SWAP {
                neg.swap(0, 1);
            }
            for r in &mut neg[C::AFFINE_NEG_COORD * C::DEGREE..][..C::DEGREE] {
                *r = -*r;
            }
            let mut want = Vec::new();
            C::affine_regs(&-pt, &mut want);
            assert_eq!(neg, want, "{}", ctx(&format!("negated {what}")));
        }

        // The identity entry.
        let mut r = Vec::new();
        C::projective_regs(&p, &mut r);
        assert_eq!(run::<C>("identity", &r).0, o, "{}", ctx("identity"));

        // Full addition.
        let (r, s) = add::<C>(&p, &q);
        assert_eq!(r, p + q, "{}", ctx("add P+Q"));
        assert_eq!(s.muls, costs.1, "{}", ctx("add cost"));
        assert_eq!(
            add::<C>(&p, &rescaled::<C>(p, &mut rng)).0,
            p.double(),
            "{}",
            ctx("add P+P")
        );
        assert_eq!(
            add::<C>(&p, &rescaled::<C>(-p, &mut rng)).0,
            o,
            "{}",
            ctx("add P-P")
        );
        assert_eq!(add::<C>(&o, &q).0, q, "{}", ctx("add O+Q"));
        assert_eq!(add::<C>(&p, &o).0, p, "{}", ctx("add P+O"));
        assert_eq!(add::<C>(&o, &o).0, o, "{}", ctx("add O+O"));

        // Doubling.
        let (r, s) = dbl::<C>(&p);
        assert_eq!(r, p.double(), "{}", ctx("dbl"));
        assert_eq!(s.muls, costs.2, "{}", ctx("dbl cost"));
        assert_eq!(dbl::<C>(&o).0, o, "{}", ctx("dbl O"));

        // To affine: slots 4-5, the accumulator kept.
        for (what, pt) in [("P", p), ("O", o), ("-Q", rescaled::<C>(-q, &mut rng))] {
            let (x, kept) = to_affine::<C>(&pt);
            let mut want = Vec::new();
            C::affine_regs(&pt.into_affine(), &mut want);
            assert_eq!(x, want, "{}", ctx(&format!("to_affine {what}")));
            assert_eq!(kept, pt, "{}", ctx(&format!("to_affine keeps {what}")));
        }
    }
    // The generator and round trips through the register encoding.
    let g = C::Projective::generator();
    let mut r = Vec::new();
    C::projective_regs(&g, &mut r);
    assert_eq!(C::from_acc_regs(&r), g);
}

// Costs in base-field multiplications on the general path (madd, add, dbl):
// Weierstrass XYZZ 8M+2S, 12M+2S, 6M+3S; over Fq2 a multiplication is 3 base ones and a
// squaring 2; twisted Edwards 10M, 10M, 4M+4S.
#[test]
fn bls12_381_g1() {
    check::<Bls12_381G1>(1, (10, 14, 9));
}
#[test]
fn bls12_381_g2() {
    check::<Bls12_381G2>(2, (28, 40, 24));
}
#[test]
fn bls12_377_g1() {
    check::<Bls12_377G1>(3, (10, 14, 9));
}
#[test]
fn bls12_377_g2() {
    check::<Bls12_377G2>(4, (28, 40, 24));
}
#[test]
fn ed_on_bls12_377() {
    check::<EdOnBls12_377>(5, (7, 9, 8));
}
#[test]
fn bn254_g1() {
    check::<Bn254G1>(6, (10, 14, 9));
}
#[test]
fn bn254_g2() {
    check::<Bn254G2>(7, (28, 40, 24));
}

#[test]
fn register_files_fit_the_shader_modules() {
    fn fits<C: GpuCurve>() {
        assert!(C::program().n_regs <= C::GROUP.vm_regs(), "{}", C::ID);
        // Packed bases and registers: the host's layout is the shader's FE_PACKED.
        assert_eq!(
            C::packed_reg_words() as u32,
            C::GROUP.field().packed_words(),
            "{}",
            C::ID
        );
    }
    fits::<Bls12_381G1>();
    fits::<Bls12_381G2>();
    fits::<Bls12_377G1>();
    fits::<Bls12_377G2>();
    fits::<EdOnBls12_377>();
    fits::<Bn254G1>();
    fits::<Bn254G2>();
}
