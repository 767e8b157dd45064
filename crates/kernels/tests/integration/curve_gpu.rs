//! The curve VM on the GPU against ark-ec, for every group: random P+Q, P+P, P+(-P), P+O, O+P,
//! O+O, doubling of O, mixed addition with the affine identity, long accumulation chains, and
//! register encode/decode round trips; the VM's packed ADD, SUB and DBL at the edges of the
//! 32-bit words and of the modulus.

#![allow(clippy::unwrap_used)]

use zkgpu_runtime::{BlockOn, GpuContext};
use zkgpu_testing::{arith_context, shared_context as ctx, test_ariths_from_env};

use ark_ec::{AdditiveGroup, AffineRepr, CurveGroup};
use ark_ff::{Field, PrimeField, UniformRand, Zero};
use ark_std::rand::{Rng, rngs::StdRng};
use num_bigint::BigUint;
use zkgpu_curves::vm::{Asm, Reg};
use zkgpu_curves::{Arith, Bls12_381G1, GpuCurve, Program, decode_projective, encode_projective};
use zkgpu_kernels::curve::{CurveVm, VmJob};
use zkgpu_limbs::{LimbEncode, decode_slice, encode_slice};
use zkgpu_runtime::Checks;
use zkgpu_testing::{rescaled, rng_for};

/// Operand pairs covering every special case, then random pairs.
fn pairs<C: GpuCurve>(rng: &mut StdRng) -> (Vec<C::Projective>, Vec<C::Projective>) {
    let o = C::Projective::zero();
    let mut a = Vec::new();
    let mut b = Vec::new();
    for _ in 0..8 {
        let p = rescaled(C::Projective::rand(rng), rng);
        let q = C::Projective::rand(rng);
        for (x, y) in [
            (p, q),
            (p, rescaled(p, rng)),
            (p, rescaled(-p, rng)),
            (o, q),
            (p, o),
            (o, o),
            (q.double(), q),
        ] {
            a.push(x);
            b.push(y);
        }
    }
    for _ in 0..200 {
        a.push(rescaled(C::Projective::rand(rng), rng));
        b.push(C::Projective::rand(rng));
    }
    (a, b)
}

/// `C`'s programs, one per distinct form (with and without the VM's Karatsuba instructions,
/// `zkgpu_shaders::Group::vm_fq2_ops`): each runs on every arithmetic's module, so a test on
/// an adapter without the f64 arithmetic still runs the f64 arithmetic's program.
fn programs<C: GpuCurve>() -> Vec<&'static Program<C::Base>> {
    let mut progs: Vec<&'static Program<C::Base>> = Vec::new();
    for x in Arith::ALL {
        let p = C::program(x);
        if !progs.iter().any(|q| q.fq2_ops() == p.fq2_ops()) {
            progs.push(p);
        }
    }
    progs
}

fn check_ops<C: GpuCurve>(ctx: &GpuContext) {
    for prog in programs::<C>() {
        let vm = CurveVm::<C>::with_program(ctx, prog, 64).unwrap();
        check_ops_of(&vm, prog.fq2_ops());
    }
}

fn check_ops_of<C: GpuCurve>(vm: &CurveVm<C>, fq2_ops: bool) {
    let mut rng = rng_for::<C>("ops");
    let (a, b) = pairs::<C>(&mut rng);
    let want: Vec<C::Projective> = a.iter().zip(&b).map(|(x, y)| *x + y).collect();

    let got = vm.add(&a, &b).block_on().unwrap();
    assert_eq!(got.len(), a.len());
    for i in 0..a.len() {
        assert_eq!(
            got[i],
            want[i],
            "{} add case {i} (fq2 ops {fq2_ops})",
            C::ID
        );
    }

    let b_affine: Vec<C::Affine> = C::Projective::normalize_batch(&b);
    let got = vm.madd(&a, &b_affine).block_on().unwrap();
    for i in 0..a.len() {
        assert_eq!(
            got[i],
            want[i],
            "{} madd case {i} (fq2 ops {fq2_ops})",
            C::ID
        );
    }

    let got = vm.double(&a).block_on().unwrap();
    for i in 0..a.len() {
        assert_eq!(
            got[i],
            a[i].double(),
            "{} dbl case {i} (fq2 ops {fq2_ops})",
            C::ID
        );
    }
    assert!(
        a.iter().any(Zero::is_zero) && b_affine.iter().any(AffineRepr::is_zero),
        "identities covered"
    );
}

/// Chains of `steps` mixed additions per invocation, over a stream with duplicates, negations
/// and identities mixed in; compared with the CPU sums.
fn check_chains<C: GpuCurve>(ctx: &GpuContext, steps: usize) {
    let vm = CurveVm::<C>::new(ctx).unwrap();
    let mut rng = rng_for::<C>("chain");
    let chains = 8;
    let pool: Vec<C::Affine> = (0..16).map(|_| C::Affine::rand(&mut rng)).collect();
    let mut points = Vec::with_capacity(chains * steps);
    for _ in 0..chains * steps {
        let p = pool[rng.gen_range(0..pool.len())];
        points.push(match rng.gen_range(0..8) {
            0 => C::Affine::zero(),
            1 => (-p.into_group()).into_affine(),
            _ => p,
        });
    }
    let start: Vec<C::Projective> = (0..chains)
        .map(|i| {
            if i == 0 {
                C::Projective::zero()
            } else {
                C::Projective::rand(&mut rng)
            }
        })
        .collect();
    let got = vm.madd_chain(&start, &points).block_on().unwrap();
    for (i, s) in start.iter().enumerate() {
        let want = points[i * steps..(i + 1) * steps]
            .iter()
            .fold(*s, |acc, p| acc + p);
        assert_eq!(got[i], want, "{} chain {i} of {steps} madds", C::ID);
    }
}

fn check_round_trip<C: GpuCurve>() {
    let mut rng = rng_for::<C>("round trip");
    let pts: Vec<C::Projective> = (0..32)
        .map(|_| C::Projective::rand(&mut rng))
        .chain([C::Projective::zero()])
        .collect();
    let words = encode_projective::<C>(&pts);
    assert_eq!(words.len(), pts.len() * C::acc_words());
    assert_eq!(decode_projective::<C>(&words).unwrap(), pts);
}

/// The element whose register holds the integer `v` (< p): registers keep `x R mod p` with the
/// limb layout's `R = 2^(13 n)`, so `x = v / R`.
fn with_register_value<F: PrimeField + LimbEncode>(v: &BigUint) -> F {
    let r_inv = F::from(2u64).pow([13 * F::WORDS as u64]).inverse().unwrap();
    F::from(v.clone()) * r_inv
}

/// ADD, SUB, DBL (packed, carry chains over 32-bit words) and MUL on every pair of register
/// values at the edges: 0, 1, 2, p - 1, p - 2, (p -+ 1) / 2, p - 2^32, 2^(32 k) -+ 1, and
/// random values, against arkworks.
fn check_field_instructions<C: GpuCurve>(ctx: &GpuContext)
where
    C::Base: PrimeField + LimbEncode,
{
    let mut rng = rng_for::<C>("field instructions");
    let p: BigUint = <C::Base as PrimeField>::MODULUS.into();
    let one = BigUint::from(1u32);
    let mut values: Vec<BigUint> = vec![
        BigUint::ZERO,
        one.clone(),
        BigUint::from(2u32),
        &p - 1u32,
        &p - 2u32,
        (&p - 1u32) / 2u32,
        (&p + 1u32) / 2u32,
        &p - (BigUint::from(1u64) << 32),
    ];
    let mut k = 32;
    while (BigUint::from(1u32) << k) < p {
        values.push((&one << k) - 1u32);
        values.push((&one << k) + 1u32);
        k += 32;
    }
    let mut xs: Vec<C::Base> = values.iter().map(with_register_value::<C::Base>).collect();
    xs.extend((0..6).map(|_| C::Base::rand(&mut rng)));

    let mut asm = Asm::<C::Base>::new();
    let r = Reg;
    asm.entry("ops");
    asm.add(r(2), r(0), r(1));
    asm.sub(r(3), r(0), r(1));
    asm.sub(r(4), r(1), r(0));
    asm.dbl(r(5), r(0));
    asm.mul(r(6), r(0), r(1));
    asm.add(r(7), r(0), r(0));
    asm.sub(r(8), r(0), r(0));
    asm.mul(r(9), r(1), r(1));
    asm.halt();
    let prog = asm.finish();
    let vm = CurveVm::<C>::with_program(ctx, &prog, 64).unwrap();

    let mut init = Vec::new();
    for a in &xs {
        for b in &xs {
            init.extend([*a, *b]);
        }
    }
    let job = VmJob {
        entry: "ops",
        init: &encode_slice(&init),
        n_load: 2,
        stream_regs: 0,
        stream_reg: 0,
        stream: &[],
        steps: 1,
        n_store: 10,
    };
    let out: Vec<C::Base> =
        decode_slice(&vm.exec(&job, Checks::Default).block_on().unwrap()).unwrap();
    assert_eq!(out.len(), init.len() / 2 * 10);
    for (i, pair) in init.chunks(2).enumerate() {
        let (a, b) = (pair[0], pair[1]);
        let got = &out[i * 10..][..10];
        let want = [
            a,
            b,
            a + b,
            a - b,
            b - a,
            a.double(),
            a * b,
            a + a,
            C::Base::zero(),
            b.square(),
        ];
        assert_eq!(got, &want, "{} pair {i}", C::ID);
    }
}

macro_rules! curve_tests {
    (; $(($curve:ident, $name:ident))*) => {$(
        mod $name {
            use super::*;
            type C = zkgpu_curves::$curve;
            // Every test in each arithmetic of the run (zkgpu_testing::test_ariths_from_env).
            #[test]
            fn ops_match_ark_ec() {
                for a in test_ariths_from_env() {
                    eprintln!("{a}");
                    check_ops::<C>(arith_context(a));
                }
            }
            #[test]
            fn madd_chains_match_ark_ec() {
                // G2 is slow on a software adapter: shorter chains.
                for a in test_ariths_from_env() {
                    eprintln!("{a}");
                    check_chains::<C>(arith_context(a), if C::DEGREE == 2 { 400 } else { 1000 });
                }
            }
            #[test]
            fn field_instructions_match_arkworks() {
                for a in test_ariths_from_env() {
                    eprintln!("{a}");
                    check_field_instructions::<C>(arith_context(a));
                }
            }
            #[test]
            fn encode_decode_round_trip() {
                check_round_trip::<C>();
            }
        }
    )*};
}

zkgpu_curves::for_each_group!(curve_tests);

#[test]
fn bad_job_shapes_are_errors() {
    let vm = CurveVm::<Bls12_381G1>::new(ctx()).unwrap();
    let p = vec![ark_bls12_381::G1Projective::zero(); 3];
    let q = vec![ark_bls12_381::G1Affine::zero(); 4];
    assert!(vm.madd(&p, &q).block_on().is_err());
    assert!(vm.madd_chain(&p, &q).block_on().is_err());
}
