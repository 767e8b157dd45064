//! The VM programs, run on the CPU with arkworks arithmetic, against ark-ec: every entry point,
//! every special case, every group. (The GPU runs the same programs: crates/runtime/tests.)

#![allow(clippy::unwrap_used)]

use ark_ec::{AdditiveGroup, AffineRepr, CurveGroup, PrimeGroup};
use ark_ff::{UniformRand, Zero};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_curves::{Arith, Bls12_377G1, GpuCurve, RunStats};
use zkgpu_testing::rescaled;

/// Runs `entry` of `arith`'s program with `inputs` in slots 0.. and returns the accumulator
/// and the run's stats.
fn run<C: GpuCurve>(arith: Arith, entry: &str, inputs: &[C::Base]) -> (C::Projective, RunStats) {
    let prog = C::program(arith);
    let mut regs = vec![<C::Base as Zero>::zero(); prog.n_regs as usize];
    regs[..inputs.len()].copy_from_slice(inputs);
    let stats = prog.run_cpu(entry, &mut regs).unwrap();
    (C::from_acc_regs(&regs[..4 * C::DEGREE]), stats)
}

fn madd<C: GpuCurve>(x: Arith, p: &C::Projective, q: &C::Affine) -> (C::Projective, RunStats) {
    let mut r = Vec::new();
    C::projective_regs(p, &mut r);
    C::affine_regs(q, &mut r);
    run::<C>(x, "madd", &r)
}

fn add<C: GpuCurve>(x: Arith, p: &C::Projective, q: &C::Projective) -> (C::Projective, RunStats) {
    let mut r = Vec::new();
    C::projective_regs(p, &mut r);
    C::projective_regs(q, &mut r);
    run::<C>(x, "add", &r)
}

fn dbl<C: GpuCurve>(x: Arith, p: &C::Projective) -> (C::Projective, RunStats) {
    let mut r = Vec::new();
    C::projective_regs(p, &mut r);
    run::<C>(x, "dbl", &r)
}

/// The affine registers `to_affine` leaves from slot 4, and the accumulator after it.
fn to_affine<C: GpuCurve>(x: Arith, p: &C::Projective) -> (Vec<C::Base>, C::Projective) {
    let prog = C::program(x);
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

fn check<C: GpuCurve>(x: Arith, seed: u64, costs: (usize, usize, usize)) {
    let mut rng = StdRng::seed_from_u64(seed);
    let o = C::Projective::zero();
    let oa = C::Affine::zero();
    for i in 0..40 {
        let p = rescaled(C::Projective::rand(&mut rng), &mut rng);
        let q = C::Projective::rand(&mut rng);
        let qa = q.into_affine();
        let ctx = |what: &str| format!("{} {x} {what} (case {i}, seed {seed})", C::ID);

        // Mixed addition, general and special cases.
        let (r, s) = madd::<C>(x, &p, &qa);
        assert_eq!(r, p + q, "{}", ctx("madd P+Q"));
        assert_eq!(s.muls, costs.0, "{}", ctx("madd cost"));
        assert_eq!(
            madd::<C>(x, &rescaled(q, &mut rng), &qa).0,
            q.double(),
            "{}",
            ctx("madd Q+Q")
        );
        assert_eq!(
            madd::<C>(x, &rescaled(-q, &mut rng), &qa).0,
            o,
            "{}",
            ctx("madd -Q+Q")
        );
        assert_eq!(madd::<C>(x, &o, &qa).0, q, "{}", ctx("madd O+Q"));
        assert_eq!(madd::<C>(x, &p, &oa).0, p, "{}", ctx("madd P+O"));
        assert_eq!(madd::<C>(x, &o, &oa).0, o, "{}", ctx("madd O+O"));
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
        assert_eq!(run::<C>(x, "identity", &r).0, o, "{}", ctx("identity"));

        // Full addition.
        let (r, s) = add::<C>(x, &p, &q);
        assert_eq!(r, p + q, "{}", ctx("add P+Q"));
        assert_eq!(s.muls, costs.1, "{}", ctx("add cost"));
        assert_eq!(
            add::<C>(x, &p, &rescaled(p, &mut rng)).0,
            p.double(),
            "{}",
            ctx("add P+P")
        );
        assert_eq!(
            add::<C>(x, &p, &rescaled(-p, &mut rng)).0,
            o,
            "{}",
            ctx("add P-P")
        );
        assert_eq!(add::<C>(x, &o, &q).0, q, "{}", ctx("add O+Q"));
        assert_eq!(add::<C>(x, &p, &o).0, p, "{}", ctx("add P+O"));
        assert_eq!(add::<C>(x, &o, &o).0, o, "{}", ctx("add O+O"));

        // Doubling.
        let (r, s) = dbl::<C>(x, &p);
        assert_eq!(r, p.double(), "{}", ctx("dbl"));
        assert_eq!(s.muls, costs.2, "{}", ctx("dbl cost"));
        assert_eq!(dbl::<C>(x, &o).0, o, "{}", ctx("dbl O"));

        // To affine: slots 4-5, the accumulator kept.
        for (what, pt) in [("P", p), ("O", o), ("-Q", rescaled(-q, &mut rng))] {
            let (x, kept) = to_affine::<C>(x, &pt);
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
// squaring 2; twisted Edwards (ed-on-bls12-377, and BLS12-377 G1's form) 7M from
// `(y - x, y + x, 2d x y)`, 9M, 4M+4S.
/// The general path's cost of `C`'s formula family (madd, add, dbl in base-field
/// multiplications, as above).
fn costs<C: GpuCurve>() -> (usize, usize, usize) {
    if C::AFFINE_NEG_SWAP {
        (7, 9, 8) // twisted Edwards
    } else if C::DEGREE == 2 {
        (28, 40, 24) // XYZZ over Fq2
    } else {
        (10, 14, 9) // XYZZ
    }
}

/// One test per group of the registry (`zkgpu_curves::for_each_group!`), seeded by its place.
macro_rules! per_group {
    (; $(($G:ident, $id:ident))*) => {
        mod per_group {
            $(
                #[test]
                fn $id() {
                    type C = zkgpu_curves::$G;
                    let seed = 1 + zkgpu_curves::Group::$G as u64;
                    // Each arithmetic's program (they differ where Group::vm_fq2_ops).
                    for x in zkgpu_curves::Arith::ALL {
                        super::check::<C>(x, seed, super::costs::<C>());
                    }
                }
            )*
        }
    };
}
zkgpu_curves::for_each_group!(per_group);

#[test]
fn register_files_fit_the_shader_modules() {
    fn fits<C: GpuCurve>() {
        for x in Arith::ALL {
            let prog = C::program(x);
            assert!(prog.n_regs <= C::GROUP.vm_regs(), "{} {x}", C::ID);
            assert_eq!(prog.fq2_ops(), C::GROUP.vm_fq2_ops(x), "{} {x}", C::ID);
        }
        // Packed bases and registers: the host's layout is the shader's FE_PACKED.
        assert_eq!(
            C::packed_reg_words() as u32,
            C::GROUP.field().packed_words(),
            "{}",
            C::ID
        );
    }
    for &g in zkgpu_curves::Group::ALL {
        zkgpu_curves::with_group!(g, C => fits::<C>());
    }
}

/// BLS12-377 G1's twisted Edwards form is not complete (crates/curves/src/te_map.rs): a point
/// of order 2 has no image (stored as `(0, 0, 0)`), and `P + (P + T)` divides by zero. Both
/// must leave the mark `X = Y = 0` that the host checks, and every later operation keep it.
#[test]
fn bls12_377_g1_exceptions_leave_a_mark() {
    use ark_ff::{Field, One};
    type C = Bls12_377G1;
    type Fq = ark_bls12_377::Fq;
    let sqrt_m3 = (-Fq::from(3u64)).sqrt().unwrap();
    let x = (Fq::one() + sqrt_m3) * Fq::from(2u64).inverse().unwrap();
    let t = ark_bls12_377::G1Affine::new_unchecked(x, Fq::zero());
    let mut rng = StdRng::seed_from_u64(377);
    let marked = |r: &[Fq]| C::acc_regs_exceptional(&r[..4]);
    let regs_of = |entry: &str, inputs: Vec<Fq>| {
        let prog = C::program(Arith::Portable);
        let mut regs = vec![Fq::zero(); prog.n_regs as usize];
        regs[..inputs.len()].copy_from_slice(&inputs);
        prog.run_cpu(entry, &mut regs).unwrap();
        regs
    };
    let mut unmarked = 0;
    for _ in 0..10 {
        let p = ark_bls12_377::G1Projective::rand(&mut rng);
        // The point without an image, stored as (0, 0, 0): a mark once added.
        let mut r = Vec::new();
        C::affine_regs(&t, &mut r);
        assert_eq!(r, vec![Fq::zero(); 3]);
        let mut inputs = Vec::new();
        C::projective_regs(&p, &mut inputs);
        inputs.extend(&r);
        let m = regs_of("madd", inputs);
        assert!(marked(&m), "P + (no image)");
        // Kept by madd, add and dbl.
        let mut again = m[..4].to_vec();
        C::affine_regs(&p.into_affine(), &mut again);
        assert!(marked(&regs_of("madd", again)), "mark + Q");
        let mut again = m[..4].to_vec();
        C::projective_regs(&p, &mut again);
        assert!(marked(&regs_of("add", again)), "mark + P");
        assert!(marked(&regs_of("dbl", m[..4].to_vec())), "2 mark");
        // P + (P + T): the unified formula's denominator vanishes.
        let q = (p + t).into_affine();
        let mut inputs = Vec::new();
        C::projective_regs(&p, &mut inputs);
        C::affine_regs(&q, &mut inputs);
        let s = regs_of("madd", inputs);
        if !marked(&s) {
            unmarked += 1;
            assert_eq!(C::from_acc_regs(&s[..4]), p + q);
        }
    }
    assert!(unmarked < 10, "P + (P + T) never divided by zero");

    // The host's sum of accumulators (the MSM's last step) meets the same exception: no
    // point comes out, and an input's mark is kept.
    let mut host_marked = 0;
    for k in 1..20u64 {
        let p = ark_bls12_377::G1Projective::generator() * ark_bls12_377::Fr::from(k);
        for q in [p + t, -(p + t)] {
            let mut r = Vec::new();
            C::projective_regs(&p, &mut r);
            C::projective_regs(&q, &mut r);
            match C::try_sum_acc_regs(&r) {
                Some(s) => assert_eq!(s, p + q),
                None => host_marked += 1,
            }
        }
        let mut r = vec![Fq::zero(); 4];
        C::projective_regs(&p, &mut r);
        assert_eq!(C::try_sum_acc_regs(&r), None, "a marked input");
    }
    assert!(host_marked > 0, "the host's sum never divided by zero");
}
