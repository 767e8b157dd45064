//! Every generated field operation, run on the GPU over thousands of seeded random inputs plus
//! edge cases per dispatch, compared with ark-ff, in every arithmetic the tests run
//! (`zkgpu_testing::test_ariths_from_env`); and the GPU compared bit for bit with the CPU emulator of
//! its arithmetic (the portable one on arbitrary limb vectors, inputs outside the canonical
//! range included; a 64-bit one across its whole input range).

#![allow(clippy::unwrap_used)]

use zkgpu_runtime::{Arith, BlockOn};
use zkgpu_testing::{arith_context, test_ariths_from_env};

use ark_ff::{Field, PrimeField, UniformRand};
use ark_std::rand::{Rng, SeedableRng, rngs::StdRng};
use zkgpu_kernels::field::{FieldKernels, FieldOp};
use zkgpu_limbs::{KnownField, KnownFq2, LimbEncode, decode_slice, encode_slice};
use zkgpu_runtime::Checks;
use zkgpu_shaders::FieldModule;

const RANDOM_CASES: usize = 4096;

fn seed_for(name: &str) -> u64 {
    // Fixed per test, printed so a failure can be replayed.
    let s = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    eprintln!("{name}: seed {s:#x}");
    s
}

/// Operand pairs: edge cases against each other, then random pairs, some of them equal.
fn operands<F: Field + UniformRand>(edges: &[F], seed: u64) -> (Vec<F>, Vec<F>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in edges {
        for &y in edges {
            a.push(x);
            b.push(y);
        }
    }
    for i in 0..RANDOM_CASES {
        let x = F::rand(&mut rng);
        a.push(x);
        b.push(if i % 16 == 0 { x } else { F::rand(&mut rng) });
    }
    (a, b)
}

fn gpu<F: LimbEncode>(k: &FieldKernels, op: FieldOp, a: &[F], b: &[F]) -> Vec<u32> {
    let out = k
        .run(op, &encode_slice(a), &encode_slice(b), Checks::Default)
        .block_on()
        .unwrap_or_else(|e| panic!("{op:?}: {e}"));
    let expected_len = if op.predicate() {
        a.len()
    } else {
        a.len() * F::WORDS
    };
    assert_eq!(out.len(), expected_len, "{op:?}: output length");
    out
}

/// Compares every arithmetic op and predicate with arkworks.
fn check_against_ark<F: Field + LimbEncode + UniformRand>(
    module: FieldModule,
    edges: &[F],
    name: &str,
) {
    for arith in test_ariths_from_env() {
        check_against_ark_in::<F>(module, edges, &format!("{name} {arith}"), arith);
    }
}

fn kernels(module: FieldModule, arith: Arith) -> FieldKernels {
    FieldKernels::with_arith(arith_context(arith), module, arith).unwrap_or_else(|e| panic!("{e}"))
}

fn check_against_ark_in<F: Field + LimbEncode + UniformRand>(
    module: FieldModule,
    edges: &[F],
    name: &str,
    arith: Arith,
) {
    let k = kernels(module, arith);
    let (a, b) = operands(edges, seed_for(name));
    let elems = |op: FieldOp| -> Vec<F> {
        decode_slice::<F>(&gpu(&k, op, &a, &b))
            .unwrap_or_else(|e| panic!("{name} {op:?}: GPU output: {e}"))
    };
    type Binary<F> = fn(&F, &F) -> F;
    let cases: [(FieldOp, Binary<F>); 7] = [
        (FieldOp::Add, |x, y| *x + y),
        (FieldOp::Sub, |x, y| *x - y),
        (FieldOp::Neg, |x, _| -*x),
        (FieldOp::Double, |x, _| x.double()),
        (FieldOp::Mul, |x, y| *x * y),
        (FieldOp::Square, |x, _| x.square()),
        (FieldOp::MulChain { reps: 3 }, |x, y| *x * y.pow([3u64])),
    ];
    for (op, f) in cases {
        let got = elems(op);
        for i in 0..a.len() {
            assert_eq!(
                got[i],
                f(&a[i], &b[i]),
                "{name} {op:?} case {i}: a = {}, b = {}",
                a[i],
                b[i]
            );
        }
    }
    let z = gpu(&k, FieldOp::IsZero, &a, &b);
    let e = gpu(&k, FieldOp::Eq, &a, &b);
    for i in 0..a.len() {
        assert_eq!(z[i], u32::from(a[i].is_zero()), "{name} is_zero case {i}");
        assert_eq!(e[i], u32::from(a[i] == b[i]), "{name} eq case {i}");
    }
    assert!(
        e.iter().filter(|&&x| x == 1).count() > RANDOM_CASES / 32,
        "eq saw equal pairs"
    );
}

/// A CPU emulator: program name and argument limbs to result limbs.
type Emulate<'a> = dyn Fn(&str, &[&[u32]]) -> Vec<u32> + 'a;

/// The GPU equals the emulator bit for bit, on random 13-bit limb vectors and on all-0x1fff
/// limbs (values far outside the canonical range: this checks the algorithm, not the field).
fn check_against_emulator(module: FieldModule, emulate: &Emulate<'_>, name: &str) {
    let k = kernels(module, Arith::Portable);
    let w = k.words();
    let mut rng = StdRng::seed_from_u64(seed_for(name));
    let count = 512;
    let mut a: Vec<u32> = (0..count * w).map(|_| rng.gen_range(0..0x2000)).collect();
    let b: Vec<u32> = (0..count * w).map(|_| rng.gen_range(0..0x2000)).collect();
    a[..w].fill(0x1fff);
    for (op, prog) in [
        (FieldOp::Mul, "mul"),
        (FieldOp::Square, "square"),
        (FieldOp::ToMont, "to_mont"),
        (FieldOp::FromMont, "from_mont"),
    ] {
        let got = k
            .run(op, &a, &b, Checks::Default)
            .block_on()
            .unwrap_or_else(|e| panic!("{e}"));
        for i in 0..count {
            let (x, y) = (&a[i * w..][..w], &b[i * w..][..w]);
            let args: Vec<&[u32]> = if op.binary() { vec![x, y] } else { vec![x] };
            assert_eq!(
                &got[i * w..][..w],
                emulate(prog, &args).as_slice(),
                "{name} {prog} case {i}"
            );
        }
    }
}

/// A 64-bit arithmetic's `mul` and `square` on the GPU equal its emulator's `mul` bit for bit
/// across the whole input range (values below `2p`: zero, `2p - 1`, every `2^t - 1`, random).
fn check_against_wide_emulator(field: KnownField, module: FieldModule, name: &str) {
    let p = field.params();
    let twice = &p.modulus * 2u32;
    let mut rng = StdRng::seed_from_u64(seed_for(name));
    let mut values: Vec<num_bigint::BigUint> = vec![0u32.into(), &twice - 1u32];
    values.extend((1..twice.bits()).map(|t| (num_bigint::BigUint::from(1u32) << t) - 1u32));
    values.extend((0..256).map(|_| {
        let words: Vec<u32> = (0..2 * p.n_limbs).map(|_| rng.r#gen()).collect();
        num_bigint::BigUint::from_slice(&words) % &twice
    }));
    let limbs =
        |v: &[num_bigint::BigUint]| -> Vec<u32> { v.iter().flat_map(|x| p.to_limbs(x)).collect() };
    let rotated: Vec<_> = values
        .iter()
        .cycle()
        .skip(7)
        .take(values.len())
        .cloned()
        .collect();
    let (a, b) = (limbs(&values), limbs(&rotated));
    let w = p.n_limbs;
    for arith in test_ariths_from_env()
        .into_iter()
        .filter(|&a| a != Arith::Portable)
    {
        let k = kernels(module, arith);
        let emu = field.wide_emulator(arith).unwrap();
        for (op, square) in [(FieldOp::Mul, false), (FieldOp::Square, true)] {
            let got = k.run(op, &a, &b, Checks::Default).block_on().unwrap();
            for i in 0..values.len() {
                let x = &a[i * w..][..w];
                let y = if square { x } else { &b[i * w..][..w] };
                let want = emu.run("mul", &[x, y]).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(
                    &got[i * w..][..w],
                    want.as_slice(),
                    "{name} {arith} {op:?} case {i}"
                );
            }
        }
    }
}

/// mul, square and from_mont accept inputs in [p, 2p): the GPU gives the canonical result.
fn check_lazy_inputs<F: PrimeField + LimbEncode>(
    module: FieldModule,
    field: KnownField,
    name: &str,
) {
    for arith in test_ariths_from_env() {
        check_lazy_inputs_in::<F>(module, field, &format!("{name} {arith}"), arith);
    }
}

fn check_lazy_inputs_in<F: PrimeField + LimbEncode>(
    module: FieldModule,
    field: KnownField,
    name: &str,
    arith: Arith,
) {
    let k = kernels(module, arith);
    let p = field.params();
    let mut rng = StdRng::seed_from_u64(seed_for(name));
    let xs: Vec<F> = (0..256)
        .map(|_| F::rand(&mut rng))
        .chain([F::zero(), F::one(), -F::one()])
        .collect();
    let ys: Vec<F> = xs.iter().rev().copied().collect();
    let lift = |v: &[F]| -> Vec<u32> {
        encode_slice(v)
            .chunks_exact(F::WORDS)
            .flat_map(|c| p.to_limbs(&(p.from_limbs(c) + &p.modulus)))
            .collect()
    };
    let (xh, yh) = (lift(&xs), lift(&ys));
    let mul = decode_slice::<F>(
        &k.run(FieldOp::Mul, &xh, &yh, Checks::Default)
            .block_on()
            .unwrap(),
    )
    .unwrap();
    let sq = decode_slice::<F>(
        &k.run(FieldOp::Square, &xh, &yh, Checks::Default)
            .block_on()
            .unwrap(),
    )
    .unwrap();
    for i in 0..xs.len() {
        assert_eq!(mul[i], xs[i] * ys[i], "{name} lazy mul {i}");
        assert_eq!(sq[i], xs[i].square(), "{name} lazy square {i}");
    }
    // from_mont of x + p is the canonical integer of x.
    let plain = k
        .run(FieldOp::FromMont, &xh, &yh, Checks::Default)
        .block_on()
        .unwrap();
    for (i, x) in xs.iter().enumerate() {
        let int = num_bigint_of(x);
        assert_eq!(
            &plain[i * F::WORDS..][..F::WORDS],
            p.to_limbs(&int).as_slice(),
            "{name} from_mont {i}"
        );
    }
    // to_mont of canonical integers gives the Montgomery limbs of encode().
    let ints: Vec<u32> = xs
        .iter()
        .flat_map(|x| p.to_limbs(&num_bigint_of(x)))
        .collect();
    let mont = k
        .run(FieldOp::ToMont, &ints, &ints, Checks::Default)
        .block_on()
        .unwrap();
    assert_eq!(mont, encode_slice(&xs), "{name} to_mont");
}

fn num_bigint_of<F: PrimeField>(x: &F) -> num_bigint::BigUint {
    num_bigint::BigUint::from_bytes_le(&ark_ff::BigInteger::to_bytes_le(&x.into_bigint()))
}

macro_rules! prime_field_tests {
    ($name:ident, $ty:ty, $module:expr, $known:expr) => {
        mod $name {
            use super::*;

            #[test]
            fn ops_match_arkworks() {
                check_against_ark::<$ty>(
                    $module,
                    &zkgpu_testing::field_edges::<$ty>(),
                    stringify!($name),
                );
            }

            #[test]
            fn gpu_matches_emulator() {
                check_against_emulator(
                    $module,
                    &|op, args| $known.emulator().run(op, args).unwrap(),
                    concat!(stringify!($name), "_emu"),
                );
            }

            #[test]
            fn lazy_inputs_and_conversions() {
                check_lazy_inputs::<$ty>($module, $known, concat!(stringify!($name), "_lazy"));
            }

            #[test]
            fn wide_gpu_matches_wide_emulator() {
                check_against_wide_emulator($known, $module, concat!(stringify!($name), "_wide"));
            }
        }
    };
}

macro_rules! fq2_tests {
    ($name:ident, $ty:ty, $base:ty, $module:expr, $known:expr) => {
        mod $name {
            use super::*;

            fn edges() -> Vec<$ty> {
                let b = zkgpu_testing::field_edges::<$base>();
                vec![
                    <$ty>::new(b[0], b[0]),
                    <$ty>::new(b[1], b[0]),
                    <$ty>::new(b[0], b[1]),
                    <$ty>::new(b[2], b[2]),
                    <$ty>::new(b[3], b[4]),
                ]
            }

            #[test]
            fn ops_match_arkworks() {
                check_against_ark::<$ty>($module, &edges(), stringify!($name));
            }

            #[test]
            fn gpu_matches_emulator() {
                let emu = $known.emulator();
                check_against_emulator(
                    $module,
                    &|op, args| emu.run(op, args).unwrap(),
                    concat!(stringify!($name), "_emu"),
                );
            }
        }
    };
}

/// Every field of the registry: its prime fields and extensions.
macro_rules! per_field {
    (; prime $(($f:ident, $stem:ident, $ark:path))* ; fq2 $(($q:ident, $m:ident, $qstem:ident, $base:ident, $qark:path))*) => {
        $(prime_field_tests!($stem, $ark, FieldModule::$f, KnownField::$f);)*
        $(fq2_tests!($qstem, $qark, <$qark as ark_ff::Field>::BasePrimeField, FieldModule::$m, KnownFq2::$q);)*
    };
}

zkgpu_limbs::for_each_field!(per_field);

/// A long chain through the single multiplication site, with loop bounding on and off, in
/// every arithmetic.
#[test]
fn long_mul_chain_matches_arkworks() {
    use ark_bls12_381::Fq;
    let mut rng = StdRng::seed_from_u64(seed_for("long_chain"));
    let a: Vec<Fq> = (0..64).map(|_| Fq::rand(&mut rng)).collect();
    let b: Vec<Fq> = (0..64).map(|_| Fq::rand(&mut rng)).collect();
    let reps = 1000;
    for arith in test_ariths_from_env() {
        let k = kernels(FieldModule::Bls12_381Fq, arith);
        for checks in [Checks::Default, Checks::TrustedLoops] {
            let out = k
                .run(
                    FieldOp::MulChain { reps },
                    &encode_slice(&a),
                    &encode_slice(&b),
                    checks,
                )
                .block_on()
                .unwrap();
            let got = decode_slice::<Fq>(&out).unwrap();
            for i in 0..a.len() {
                assert_eq!(
                    got[i],
                    a[i] * b[i].pow([u64::from(reps)]),
                    "{arith} {checks:?} case {i}"
                );
            }
        }
    }
}

#[test]
fn mismatched_operands_are_an_error() {
    let k = kernels(FieldModule::Bls12_381Fr, Arith::Portable);
    assert!(
        k.run(FieldOp::Mul, &[0; 40], &[0; 20], Checks::Default)
            .block_on()
            .is_err()
    );
    assert!(
        k.run(FieldOp::Neg, &[0; 21], &[], Checks::Default)
            .block_on()
            .is_err()
    );
}
