//! The VM programs, run on the CPU with arkworks arithmetic, against ark-ec: every entry point,
//! every special case, every group. (The GPU runs the same programs: crates/runtime/tests.)

#![allow(clippy::unwrap_used)]

use ark_ec::{AdditiveGroup, AffineRepr, CurveGroup, PrimeGroup};
use ark_ff::{One, UniformRand, Zero};
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

/// The affine registers `to_affine` leaves in slots 4-5, and the accumulator after it.
fn to_affine<C: GpuCurve>(p: &C::Projective) -> (Vec<C::Base>, C::Projective) {
    let prog = C::program();
    let mut regs = vec![<C::Base as Zero>::zero(); prog.n_regs as usize];
    let mut r = Vec::new();
    C::projective_regs(p, &mut r);
    regs[..r.len()].copy_from_slice(&r);
    prog.run_cpu("to_affine", &mut regs).unwrap();
    let d = C::DEGREE;
    (
        regs[4 * d..6 * d].to_vec(),
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
    check::<EdOnBls12_377>(5, (10, 10, 8));
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

/// The batch-affine pair sums (`pair_den` forward over a batch, one `invert`, `pair_add`
/// backward), run on the CPU: every sum equal to arkworks', with every special case in one
/// batch (either point the identity, both, `P + P`, `P + (-P)`, equal pairs twice), and
/// `extra` pairs.
fn check_pair_sums<C: GpuCurve>(seed: u64, extra: &[(C::Affine, C::Affine)]) {
    let mut rng = StdRng::seed_from_u64(seed);
    let prog = C::program();
    let d = C::DEGREE;
    let o = C::Affine::zero();
    let p = C::Projective::rand(&mut rng).into_affine();
    let q = C::Projective::rand(&mut rng).into_affine();
    let neg = (-p.into_group()).into_affine();
    let mut pairs = vec![
        (p, q),
        (o, q),
        (p, o),
        (o, o),
        (p, p),
        (p, neg),
        (q, q),
        (neg, p),
    ];
    for _ in 0..6 {
        let a = C::Projective::rand(&mut rng).into_affine();
        let b = C::Projective::rand(&mut rng).into_affine();
        pairs.push((a, b));
    }
    pairs.splice(3..3, extra.iter().copied());
    let zero = <C::Base as Zero>::zero();
    let mut regs = vec![zero; prog.n_regs as usize];
    let load = |regs: &mut Vec<C::Base>, (a, b): (C::Affine, C::Affine)| {
        let mut r = Vec::new();
        C::affine_regs(&a, &mut r);
        C::affine_regs(&b, &mut r);
        regs[4 * d..8 * d].copy_from_slice(&r);
    };
    // Forward: slot 0 the running product, stored after each pair (the prefixes).
    prog.run_cpu("pair_start", &mut regs).unwrap();
    let mut prefixes = Vec::new();
    for &pair in &pairs {
        load(&mut regs, pair);
        prog.run_cpu("pair_den", &mut regs).unwrap();
        prefixes.push(regs[..d].to_vec());
    }
    prog.run_cpu("invert", &mut regs).unwrap();
    // Backward: slot 1 the prefix before the pair (one for the first).
    for (i, &pair) in pairs.iter().enumerate().rev() {
        load(&mut regs, pair);
        // The first pair through `pair_first` (no prefix before it; slot 1 left stale).
        if i == 0 {
            prog.run_cpu("pair_first", &mut regs).unwrap();
        } else {
            regs[d..2 * d].copy_from_slice(&prefixes[i - 1]);
            prog.run_cpu("pair_add", &mut regs).unwrap();
        }
        let mut want = Vec::new();
        C::affine_regs(&(pair.0 + pair.1).into_affine(), &mut want);
        assert_eq!(regs[4 * d..6 * d], want[..], "{} pair {i}", C::ID);
    }
    // Slot 0 walked back to the inverse of the empty product.
    assert!(regs[0] == <C::Base as One>::one(), "{}", C::ID);
}

#[test]
fn pair_sums_match_arkworks() {
    check_pair_sums::<Bls12_381G1>(11, &[]);
    check_pair_sums::<Bls12_381G2>(12, &[]);
    // BLS12-377 G1 (y^2 = x^3 + 1) has the point (-1, 0) of order 2, off the subgroup: its
    // doubling has no denominator; it sums to the identity with itself.
    let t = ark_bls12_377::G1Affine::new_unchecked(-ark_bls12_377::Fq::one(), Zero::zero());
    let g = ark_bls12_377::G1Affine::generator();
    check_pair_sums::<Bls12_377G1>(13, &[(t, t), (t, g), (g, t)]);
    check_pair_sums::<Bls12_377G2>(14, &[]);
    check_pair_sums::<Bn254G1>(15, &[]);
    check_pair_sums::<Bn254G2>(16, &[]);
}
