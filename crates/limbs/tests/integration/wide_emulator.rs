//! The 64-bit arithmetics' programs, run by the CPU emulator (IEEE `f64` with the fused
//! `mul_add`, wrapping `u64` with exact values checked where read), against ark-ff and
//! against `a b R^-1 mod p` at the ends of every accepted input range.

#![allow(clippy::unwrap_used)]

use ark_ff::{Field, PrimeField, UniformRand};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use num_bigint::BigUint;
use num_traits::One;
use zkgpu_limbs::{
    Arith, Chains, KnownField, LimbEncode, WideEmulator, WideLayout, decode, encode, native_words,
    pack_limbs,
};

fn packed(f: KnownField, limbs: &[u32]) -> Vec<u32> {
    let mut w = vec![0u32; f.params().packed_words()];
    pack_limbs(limbs, &mut w);
    w
}

/// `wmul` and `wmul_packed` of arkworks elements, decoded, against arkworks' product.
fn check_ark<F: PrimeField + LimbEncode>(f: KnownField, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut vals = vec![
        F::zero(),
        F::one(),
        -F::one(),
        F::from(2u64),
        -F::from(2u64),
    ];
    vals.extend((0..60).map(|_| F::rand(&mut rng)));
    for arith in Arith::WIDE {
        let e = f.wide_emulator(arith).unwrap();
        for (i, &a) in vals.iter().enumerate() {
            let b = vals[(i * 7 + 3) % vals.len()];
            let (ea, eb) = (encode(&a), encode(&b));
            let out = e.run("mul", &[&ea, &eb]).unwrap_or_else(|x| panic!("{x}"));
            assert_eq!(decode::<F>(&out).unwrap(), a * b, "{f:?} {arith} mul");
            let out = e
                .run("mul_packed", &[&packed(f, &ea), &packed(f, &eb)])
                .unwrap_or_else(|x| panic!("{x}"));
            assert_eq!(out, packed(f, &encode(&(a * b))), "{f:?} {arith} packed");
            let sq = e.run("mul", &[&ea, &ea]).unwrap();
            assert_eq!(decode::<F>(&sq).unwrap(), a.square());
        }
    }
}

/// Each field's wide emulators against ark-ff, for every field of the registry.
macro_rules! per_field {
    (; prime $(($f:ident, $stem:ident, $ark:path))* ; fq2 $($rest:tt)*) => {
        $(
            #[test]
            fn $stem() {
                check_ark::<$ark>(KnownField::$f, 1 + KnownField::$f as u64);
            }
        )*
    };
}

zkgpu_limbs::for_each_field!(per_field);

/// Values below `bound` that stress the limbs: zero, one, the bound less one, every
/// `2^t - 1` below it (all low limbs saturated in every layout), and pseudo-random ones.
fn stress_values(bound: &BigUint, seed: u64) -> Vec<BigUint> {
    let mut v = vec![BigUint::from(0u32), BigUint::one(), bound - 1u32];
    let bits = bound.bits();
    v.extend((1..bits).map(|t| (BigUint::one() << t) - 1u32));
    let mut rng = StdRng::seed_from_u64(seed);
    v.extend((0..40).map(|_| {
        let x = ark_bls12_381::Fq::rand(&mut rng).into_bigint();
        let y = ark_bls12_381::Fq::rand(&mut rng).into_bigint();
        let wide = (BigUint::from_bytes_le(&ark_ff::BigInteger::to_bytes_le(&x)) << 384u32)
            + BigUint::from_bytes_le(&ark_ff::BigInteger::to_bytes_le(&y));
        wide % bound
    }));
    v
}

/// Every function at the ends of its range: `mul`/`mul_packed` with both inputs below `2p`
/// (canonical out), equal to `a b R^-1 mod p` (the native form's `n_mul_lazy`, `a < 4p` and
/// `b < 2p`, in `native_form_programs_at_their_range_ends`).
#[test]
fn ranges_and_saturated_limbs() {
    for f in KnownField::ALL {
        let p = f.params();
        let r_inv = p.r().modinv(&p.modulus).unwrap();
        let expect = |a: &BigUint, b: &BigUint| (a * b * &r_inv) % &p.modulus;
        let twice = &p.modulus * 2u32;
        let xs = stress_values(&twice, 11);
        for arith in Arith::WIDE {
            let e = f.wide_emulator(arith).unwrap();
            for (i, a) in xs.iter().enumerate() {
                let b = &xs[(i * 5 + 1) % xs.len()];
                let (la, lb) = (p.to_limbs(a), p.to_limbs(b));
                let out = e.run("mul", &[&la, &lb]).unwrap_or_else(|x| panic!("{x}"));
                assert_eq!(p.from_limbs(&out), expect(a, b), "{} {arith}", p.name);
                let out = e
                    .run("mul_packed", &[&packed(f, &la), &packed(f, &lb)])
                    .unwrap_or_else(|x| panic!("{x}"));
                assert_eq!(out, packed(f, &p.to_limbs(&expect(a, b))));
            }
        }
    }
}

/// Every choice of chained products (docs/limbs.md, "Chains"), not only the one each field's
/// layout makes, at the ends of the range: each stays exact at its width (the 52-bit layouts'
/// chains hold one term, the 49-bit ones eight).
#[test]
fn every_chain_choice_is_exact() {
    for f in KnownField::ALL {
        let p = f.params();
        let r_inv = p.r().modinv(&p.modulus).unwrap();
        let xs = stress_values(&(&p.modulus * 2u32), 13);
        for chains in [
            Chains::None,
            Chains::Products,
            Chains::Reduction,
            Chains::All,
        ] {
            let mut l = f.wide_layout(Arith::F64).unwrap();
            l.chains = chains;
            let e = WideEmulator::new(&l, false);
            for (i, a) in xs.iter().enumerate() {
                let b = &xs[(i * 3 + 1) % xs.len()];
                let expect = p.to_limbs(&((a * b * &r_inv) % &p.modulus));
                let (la, lb) = (p.to_limbs(a), p.to_limbs(b));
                let out = e
                    .run("mul_packed", &[&packed(f, &la), &packed(f, &lb)])
                    .unwrap_or_else(|x| panic!("{} {chains:?}: {x}", p.name));
                assert_eq!(out, packed(f, &expect), "{} {chains:?}", p.name);
            }
        }
    }
}

/// The `f64` split is exact only with a fused `fma`: the same program with `fma` rounded
/// twice gives wrong products (what the known-answer check on a device catches).
#[test]
fn f64_needs_the_fused_fma() {
    let f = KnownField::Bls12_381Fq;
    let e = f.wide_emulator(Arith::F64).unwrap();
    let prog = e.program("mul").unwrap();
    let (p, a) = (f.params(), ark_bls12_381::Fq::from(3u64).inverse().unwrap());
    let ea = encode(&a);
    let fused = prog.eval(&[&ea, &ea]).unwrap();
    let unfused = prog.eval_unfused(&[&ea, &ea]);
    assert_eq!(decode::<ark_bls12_381::Fq>(&fused).unwrap(), a * a);
    assert_ne!(unfused.ok(), Some(fused), "{}", p.name);
}

/// `x` in the native form of `l`: `w`-bit limbs, a low and a high word each where `w > 32`.
fn to_native(l: &WideLayout, x: &BigUint) -> Vec<u32> {
    let mask = (BigUint::one() << l.limb_bits) - 1u32;
    let mut out = Vec::new();
    for i in 0..l.limbs {
        let d: BigUint = (x >> (l.limb_bits as usize * i)) & &mask;
        let d = d.iter_u64_digits().next().unwrap_or(0);
        out.push(d as u32);
        if l.limb_bits > 32 {
            out.push((d >> 32) as u32);
        }
    }
    assert_eq!(out.len(), native_words(l));
    out
}

/// The value of a native element, each limb checked to be below `2^w`.
fn from_native(l: &WideLayout, words: &[u32]) -> BigUint {
    let per = native_words(l) / l.limbs;
    let mut x = BigUint::from(0u32);
    for i in (0..l.limbs).rev() {
        let mut d = u64::from(words[per * i]);
        if per == 2 {
            d |= u64::from(words[per * i + 1]) << 32;
        }
        assert!(d < 1 << l.limb_bits, "limb {i} = {d} not normalized");
        x = (x << l.limb_bits) + d;
    }
    x
}

fn packed_words(f: KnownField, x: &BigUint) -> Vec<u32> {
    let mut w = x.to_u32_digits();
    w.resize(f.params().packed_words(), 0);
    w
}

/// The native form's functions (docs/limbs.md, "The native form") at the ends of their input
/// ranges and at random points: each equal to its definition, limbs normalized, results in
/// the range the NTT relies on.
#[test]
fn native_form_programs_at_their_range_ends() {
    for f in KnownField::ALL.into_iter().filter(|f| f.has_lazy_module()) {
        let p = f.params();
        let m = &p.modulus;
        let r_inv = p.r().modinv(m).unwrap();
        let (twice, four) = (m * 2u32, m * 4u32);
        let xs = stress_values(&twice, 21);
        let ys = stress_values(&four, 22);
        for arith in Arith::WIDE {
            let l = WideLayout::new(arith, &p).unwrap();
            let e = f.wide_emulator(arith).unwrap();
            let run = |name: &str, args: &[&[u32]]| {
                let out = e
                    .run(name, args)
                    .unwrap_or_else(|x| panic!("{} {arith} {name}: {x}", p.name));
                from_native(&l, &out)
            };
            let what = |name: &str| format!("{} {arith} {name}", p.name);
            for (i, a) in xs.iter().enumerate() {
                let b = &xs[(i * 7 + 2) % xs.len()];
                let (na, nb) = (to_native(&l, a), to_native(&l, b));
                let unpacked = e.run("n_unpack", &[&packed_words(f, a)]).unwrap();
                assert_eq!(unpacked, na, "{}", what("n_unpack"));
                let packed_a = e.run("n_pack", &[&na]).unwrap();
                assert_eq!(packed_a, packed_words(f, a), "{}", what("n_pack"));

                let s = run("n_add_lazy", &[&na, &nb]);
                assert!(s < twice && s == (a + b) % &twice, "{}", what("n_add_lazy"));
                let d = run("n_sub_lazy", &[&na, &nb]);
                assert!(d < twice && (&d + b) % m == a % m, "{}", what("n_sub_lazy"));
                let w = run("n_sub_wide", &[&na, &nb]);
                assert_eq!(&w + b, a + &twice, "{}", what("n_sub_wide"));
                assert_eq!(run("n_reduce", &[&na]), a % m, "{}", what("n_reduce"));

                let a4 = &ys[i % ys.len()];
                let prod = run("n_mul_lazy", &[&to_native(&l, a4), &nb]);
                assert!(prod < twice, "{}", what("n_mul_lazy range"));
                assert_eq!(prod % m, (a4 * b * &r_inv) % m, "{}", what("n_mul_lazy"));
            }
        }
    }
}
