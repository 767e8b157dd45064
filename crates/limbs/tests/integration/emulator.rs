//! The CPU emulator (the generated programs, run with overflow checks) against ark-ff.

#![allow(clippy::unwrap_used)]

use ark_ff::{AdditiveGroup, Field, PrimeField, UniformRand, Zero};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use num_bigint::BigUint;
use proptest::prelude::*;
use zkgpu_limbs::{KnownField, KnownFq2, LimbEncode, decode, encode};

/// Runs field `f`'s program `op` on encoded `xs` and decodes the result.
fn emu<F: LimbEncode>(f: KnownField, op: &str, xs: &[F]) -> F {
    let enc: Vec<Vec<u32>> = xs.iter().map(encode).collect();
    let args: Vec<&[u32]> = enc.iter().map(Vec::as_slice).collect();
    let out = f
        .emulator()
        .run(op, &args)
        .unwrap_or_else(|e| panic!("{e}"));
    decode(&out).unwrap_or_else(|e| panic!("{op}: {e}"))
}

fn check_prime_field<F: PrimeField + LimbEncode>(f: KnownField, a: F, b: F) {
    assert_eq!(emu(f, "add", &[a, b]), a + b);
    assert_eq!(emu(f, "sub", &[a, b]), a - b);
    assert_eq!(emu(f, "neg", &[a]), -a);
    assert_eq!(emu(f, "double", &[a]), a.double());
    assert_eq!(emu(f, "mul", &[a, b]), a * b);
    assert_eq!(emu(f, "square", &[a]), a.square());
    let e = f.emulator();
    let (ea, eb) = (encode(&a), encode(&b));
    assert_eq!(
        e.run("is_zero", &[&ea]).unwrap(),
        vec![u32::from(a.is_zero())]
    );
    assert_eq!(e.run("eq", &[&ea, &eb]).unwrap(), vec![u32::from(a == b)]);
    assert_eq!(e.run("eq", &[&ea, &ea]).unwrap(), vec![1]);
    // Conversions: from_mont yields the canonical integer, to_mont takes it back.
    let p = f.params();
    let plain = e.run("from_mont", &[&ea]).unwrap();
    let int = BigUint::from_bytes_le(&ark_ff::BigInteger::to_bytes_le(&a.into_bigint()));
    assert_eq!(plain, p.to_limbs(&int));
    assert_eq!(e.run("to_mont", &[&plain]).unwrap(), ea);
}

fn edge_values<F: PrimeField>() -> Vec<F> {
    vec![
        F::zero(),
        F::one(),
        -F::one(),
        F::from(2u64),
        -F::from(2u64),
        F::from(1u64 << 13),
    ]
}

fn check_field<F: PrimeField + LimbEncode>(f: KnownField, seed: u64, cases: usize) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut vals = edge_values::<F>();
    vals.extend((0..cases).map(|_| F::rand(&mut rng)));
    for (i, &a) in vals.iter().enumerate() {
        let b = vals[(i * 7 + 3) % vals.len()];
        check_prime_field(f, a, b);
    }
    for &a in &edge_values::<F>() {
        for &b in &edge_values::<F>() {
            check_prime_field(f, a, b);
        }
    }
}

/// Each field's emulator against ark-ff (random and edge values) and its packed layout, for
/// every field of the registry.
macro_rules! per_field {
    (; prime $(($f:ident, $stem:ident, $ark:path))* ; fq2 $($rest:tt)*) => {
        $(
            mod $stem {
                use super::*;

                #[test]
                fn matches_arkworks() {
                    check_field::<$ark>(KnownField::$f, 1 + KnownField::$f as u64, 200);
                }

                #[test]
                fn packed_layout() {
                    check_packed::<$ark>(KnownField::$f, 11 + KnownField::$f as u64);
                }
            }
        )*
    };
}

zkgpu_limbs::for_each_field!(per_field);

/// mul, square and from_mont accept inputs in [p, 2p): x + p for canonical x.
#[test]
fn lazy_inputs_up_to_2p() {
    for f in KnownField::ALL {
        let p = f.params();
        let e = f.emulator();
        let mut rng = StdRng::seed_from_u64(5);
        for _ in 0..50 {
            let x: BigUint = BigUint::from_bytes_le(&ark_ff::BigInteger::to_bytes_le(
                &ark_bls12_381::Fr::rand(&mut rng).into_bigint(),
            )) % &p.modulus;
            let y = (&x * 3u32 + 11u32) % &p.modulus;
            let (xl, yl) = (p.to_limbs(&x), p.to_limbs(&y));
            let (xh, yh) = (
                p.to_limbs(&(&x + &p.modulus)),
                p.to_limbs(&(&y + &p.modulus)),
            );
            assert_eq!(
                e.run("mul", &[&xh, &yh]).unwrap(),
                e.run("mul", &[&xl, &yl]).unwrap(),
                "{}",
                p.name
            );
            assert_eq!(
                e.run("square", &[&xh]).unwrap(),
                e.run("square", &[&xl]).unwrap()
            );
            assert_eq!(
                e.run("from_mont", &[&xh]).unwrap(),
                e.run("from_mont", &[&xl]).unwrap()
            );
            // p - 1 + p is the largest accepted input.
            let top = p.to_limbs(&(&p.modulus * 2u32 - 1u32));
            let out = e.run("mul", &[&top, &top]).unwrap();
            assert!(p.from_limbs(&out) < p.modulus);
        }
    }
}

/// A uniform-ish value below `bound`.
fn below(rng: &mut StdRng, bound: &BigUint) -> BigUint {
    use ark_std::rand::RngCore;
    let mut bytes = vec![0u8; bound.bits().div_ceil(8) as usize + 16];
    rng.fill_bytes(&mut bytes);
    BigUint::from_bytes_le(&bytes) % bound
}

/// The redundant-range programs against their contracts, at the ends of their input ranges
/// and at random points: `mul_lazy` (a b < R p in, below 2p out), `add_lazy` and `sub_lazy`
/// (below 2p in and out), `sub_wide` (a - b + 2p exactly, below 4p), `reduce` (below 2p in,
/// canonical out); and the canonical `mul` on the same `a b < R p` inputs.
#[test]
fn lazy_range_programs() {
    for f in KnownField::ALL {
        let p = f.params();
        let e = f.emulator();
        let m = &p.modulus;
        let (two_p, four_p) = (m * 2u32, m * 4u32);
        let r_inv = p.r().modpow(&(m - 2u32), m);
        let run = |op: &str, xs: &[&BigUint]| -> BigUint {
            let limbs: Vec<Vec<u32>> = xs.iter().map(|x| p.to_limbs(x)).collect();
            let args: Vec<&[u32]> = limbs.iter().map(Vec::as_slice).collect();
            let out = e
                .run(op, &args)
                .unwrap_or_else(|err| panic!("{} {op}: {err}", p.name));
            assert!(
                out.iter().all(|&l| l < 1 << 13),
                "{} {op}: wide limb",
                p.name
            );
            p.from_limbs(&out)
        };
        let mut rng = StdRng::seed_from_u64(9);
        let ends = |bound: &BigUint| {
            vec![
                BigUint::from(0u32),
                BigUint::from(1u32),
                m - 1u32,
                m.clone(),
                bound - 1u32,
            ]
        };
        let mut pairs: Vec<(BigUint, BigUint)> = Vec::new();
        for a in ends(&two_p) {
            for b in ends(&two_p) {
                pairs.push((a.clone(), b));
            }
        }
        pairs.extend((0..100).map(|_| (below(&mut rng, &two_p), below(&mut rng, &two_p))));
        for (a, b) in &pairs {
            let sum = run("add_lazy", &[a, b]);
            assert!(
                sum < two_p && sum.clone() % m == (a + b) % m,
                "{} add_lazy",
                p.name
            );
            let diff = run("sub_lazy", &[a, b]);
            assert!(
                diff < two_p && (diff + b) % m == a % m,
                "{} sub_lazy",
                p.name
            );
            let wide = run("sub_wide", &[a, b]);
            assert_eq!(wide, a + &two_p - b, "{} sub_wide", p.name);
            let red = run("reduce", &[a]);
            assert_eq!(red, a % m, "{} reduce", p.name);
            // mul_lazy and mul on the widest inputs the NTT gives them: a < 4p, b < 2p.
            let wide_a = &wide;
            let want = (wide_a * b * &r_inv) % m;
            let lazy = run("mul_lazy", &[wide_a, b]);
            assert!(lazy < two_p && &lazy % m == want, "{} mul_lazy", p.name);
            assert_eq!(run("mul", &[wide_a, b]), want, "{} mul", p.name);
        }
        let top = &four_p - 1u32;
        let lazy = run("mul_lazy", &[&top, &(&two_p - 1u32)]);
        assert!(lazy < two_p, "{} mul_lazy at the top", p.name);
    }
}

/// The accumulators stay within u32 even for the widest possible limbs (all 0x1fff).
#[test]
fn all_ones_limbs_never_overflow() {
    for f in KnownField::ALL {
        let n = f.params().n_limbs;
        let ones = vec![0x1fffu32; n];
        let lazy: &[&str] = if f.has_lazy_module() {
            &["mul_lazy"]
        } else {
            &[]
        };
        for &op in ["mul", "square", "from_mont", "to_mont"].iter().chain(lazy) {
            let args: Vec<&[u32]> = if op.starts_with("mul") {
                vec![&ones, &ones]
            } else {
                vec![&ones]
            };
            f.emulator()
                .run(op, &args)
                .unwrap_or_else(|e| panic!("{}: {e}", f.params().name));
        }
    }
}

/// The op counts that docs/limbs.md quotes.
#[test]
fn multiplication_counts() {
    let e = KnownField::Bls12_381Fq.emulator();
    // The product: Karatsuba on 15 + 15 limbs, its low and high halves split again (7 + 8):
    // 2 x (7^2 + 8^2 + 8^2) + 15^2 = 579. The reduction: two blocks of 15 digits, each a
    // serial triangle (120) and deferred products (105 one by one, 177 as a Karatsuba
    // rectangle): 804, and 30 quotient digits.
    assert_eq!(e.program("mul").unwrap().count_muls(), 579 + 804 + 30);
    // Squaring: the columns (30 x 31 / 2), the same reduction.
    assert_eq!(
        e.program("square").unwrap().count_muls(),
        30 * 31 / 2 + 804 + 30
    );
    // mu = -1: the quotient digit is a masked negation, no multiplication.
    // Zero limbs of p fold away (BLS12-377 Fq has two, the scalar fields one or two).
    let count = |f: KnownField, op: &str| f.emulator().program(op).unwrap().count_muls();
    for (f, mul) in [
        (KnownField::Bls12_377Fq, 1201),
        (KnownField::Bls12_381Fr, 550),
        (KnownField::Bls12_377Fr, 500),
        (KnownField::Bn254Fq, 620),
    ] {
        assert_eq!(count(f, "mul"), mul, "{}", f.params().name);
    }
    // CIOS where one operand is a constant (its zero limbs fold away).
    assert!(count(KnownField::Bls12_381Fq, "to_mont") <= 2 * 30 * 30 + 30);
}

fn check_fq2<P: ark_ff::Fp2Config>(f: KnownFq2, seed: u64)
where
    P::Fp: LimbEncode,
{
    use ark_ff::Fp2;
    let mut rng = StdRng::seed_from_u64(seed);
    let e = f.emulator();
    let k = f.minus_beta();
    assert_eq!(
        P::NONRESIDUE,
        -P::Fp::from(u64::from(k)),
        "nonresidue of {}",
        f.name()
    );
    let mut vals: Vec<Fp2<P>> = vec![
        <Fp2<P> as Zero>::zero(),
        <Fp2<P> as Field>::ONE,
        -<Fp2<P> as Field>::ONE,
    ];
    vals.extend((0..60).map(|_| Fp2::<P>::rand(&mut rng)));
    let run = |op: &str, xs: &[Fp2<P>]| -> Vec<u32> {
        let enc: Vec<Vec<u32>> = xs.iter().map(encode).collect();
        let args: Vec<&[u32]> = enc.iter().map(Vec::as_slice).collect();
        e.run(op, &args).unwrap()
    };
    for (i, &a) in vals.iter().enumerate() {
        let b = vals[(i * 5 + 1) % vals.len()];
        let d = |w: Vec<u32>| decode::<Fp2<P>>(&w).unwrap();
        assert_eq!(d(run("add", &[a, b])), a + b);
        assert_eq!(d(run("sub", &[a, b])), a - b);
        assert_eq!(d(run("neg", &[a])), -a);
        assert_eq!(d(run("double", &[a])), a.double());
        assert_eq!(d(run("mul", &[a, b])), a * b);
        assert_eq!(d(run("square", &[a])), a.square());
        assert_eq!(run("is_zero", &[a]), vec![u32::from(a.is_zero())]);
        assert_eq!(run("eq", &[a, b]), vec![u32::from(a == b)]);
    }
}

#[test]
fn bls12_381_fq2() {
    check_fq2::<ark_bls12_381::Fq2Config>(KnownFq2::Bls12_381, 6);
}
#[test]
fn bls12_377_fq2() {
    check_fq2::<ark_bls12_377::Fq2Config>(KnownFq2::Bls12_377, 7);
}
#[test]
fn bn254_fq2() {
    check_fq2::<ark_bn254::Fq2Config>(KnownFq2::Bn254, 17);
}

#[test]
fn decode_rejects_non_canonical() {
    let p = KnownField::Bls12_381Fq.params();
    let limbs = p.p_limbs.clone();
    assert!(decode::<ark_bls12_381::Fq>(&limbs).is_err());
    assert!(decode::<ark_bls12_381::Fq>(&limbs[1..]).is_err());
}

#[test]
fn encode_slice_round_trip() {
    let mut rng = StdRng::seed_from_u64(8);
    let xs: Vec<ark_bls12_377::Fr> = (0..10_000).map(|_| UniformRand::rand(&mut rng)).collect();
    let limbs = zkgpu_limbs::encode_slice(&xs);
    assert_eq!(limbs.len(), xs.len() * 20);
    assert_eq!(
        zkgpu_limbs::decode_slice::<ark_bls12_377::Fr>(&limbs).unwrap(),
        xs
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn prop_bls12_381_fq(a in any::<[u8; 64]>(), b in any::<[u8; 64]>()) {
        check_prime_field::<ark_bls12_381::Fq>(
            KnownField::Bls12_381Fq,
            ark_bls12_381::Fq::from_le_bytes_mod_order(&a),
            ark_bls12_381::Fq::from_le_bytes_mod_order(&b),
        );
    }

    #[test]
    fn prop_bls12_377_fq(a in any::<[u8; 64]>(), b in any::<[u8; 64]>()) {
        check_prime_field::<ark_bls12_377::Fq>(
            KnownField::Bls12_377Fq,
            ark_bls12_377::Fq::from_le_bytes_mod_order(&a),
            ark_bls12_377::Fq::from_le_bytes_mod_order(&b),
        );
    }

    #[test]
    fn prop_scalar_fields(a in any::<[u8; 48]>(), b in any::<[u8; 48]>()) {
        check_prime_field::<ark_bls12_381::Fr>(
            KnownField::Bls12_381Fr,
            ark_bls12_381::Fr::from_le_bytes_mod_order(&a),
            ark_bls12_381::Fr::from_le_bytes_mod_order(&b),
        );
        check_prime_field::<ark_bls12_377::Fr>(
            KnownField::Bls12_377Fr,
            ark_bls12_377::Fr::from_le_bytes_mod_order(&a),
            ark_bls12_377::Fr::from_le_bytes_mod_order(&b),
        );
        check_prime_field::<ark_bn254::Fr>(
            KnownField::Bn254Fr,
            ark_bn254::Fr::from_le_bytes_mod_order(&a),
            ark_bn254::Fr::from_le_bytes_mod_order(&b),
        );
        check_prime_field::<ark_ed_on_bls12_377::Fr>(
            KnownField::EdOnBls12_377Fr,
            ark_ed_on_bls12_377::Fr::from_le_bytes_mod_order(&a),
            ark_ed_on_bls12_377::Fr::from_le_bytes_mod_order(&b),
        );
        check_prime_field::<ark_bn254::Fq>(
            KnownField::Bn254Fq,
            ark_bn254::Fq::from_le_bytes_mod_order(&a),
            ark_bn254::Fq::from_le_bytes_mod_order(&b),
        );
    }
}

/// `unpack` reads arkworks' words (its Montgomery form) into limbs of the same integer, `pack`
/// writes them back, and one multiplication by 16 (`2^(13 n) / 2^256` for the 20-limb scalar
/// fields) turns them into the canonical integer.
fn check_packed<F: PrimeField + zkgpu_limbs::PackedWords>(f: KnownField, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut vals = edge_values::<F>();
    vals.extend((0..50).map(|_| F::rand(&mut rng)));
    let e = f.emulator();
    let p = f.params();
    let words = zkgpu_limbs::pack_slice(&vals);
    let w = F::PACKED_WORDS;
    assert_eq!(w, p.packed_words());
    for (i, x) in vals.iter().enumerate() {
        let ws = &words[i * w..(i + 1) * w];
        let limbs = e.run("unpack", &[ws]).unwrap();
        let mont = BigUint::from_slice(ws);
        assert_eq!(limbs, p.to_limbs(&mont));
        assert_eq!(e.run("pack", &[&limbs]).unwrap(), ws);
        let shift = (13 * p.n_limbs) as u32 - 32 * w as u32;
        let k = p.to_limbs(&(BigUint::from(1u32) << shift));
        let plain = e.run("mul", &[&limbs, &k]).unwrap();
        let int = BigUint::from_bytes_le(&ark_ff::BigInteger::to_bytes_le(&x.into_bigint()));
        assert_eq!(plain, p.to_limbs(&int));
    }
    let back: Vec<F> = zkgpu_limbs::unpack_slice(&words).unwrap();
    assert_eq!(back, vals);
    let mut bad = words.clone();
    bad[w..2 * w].copy_from_slice(
        &BigUint::from_bytes_le(&ark_ff::BigInteger::to_bytes_le(&F::MODULUS)).to_u32_digits()[..w],
    );
    assert!(zkgpu_limbs::unpack_slice::<F>(&bad).is_err());
}
