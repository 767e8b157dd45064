//! Random sequences of calls on NTT engines of two GPU contexts (two engines on the first),
//! each result compared with ark-poly: sizes 2^0..2^8, plain and coset domains, domains with
//! their generators swapped, resizing inputs, device vectors used by the engine that made them
//! and by engines of the other context (a typed error, and everything still works after).
//! CI runs a fixed number of cases; `PROPTEST_CASES=2000` runs more (docs/ntt.md).

#![allow(clippy::unwrap_used)]

use std::sync::OnceLock;
use zkgpu_runtime::BlockOn;
use zkgpu_testing::shared_contexts as contexts;

use ark_bls12_381::Fr;
use ark_ff::{Field, UniformRand};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use proptest::prelude::*;
use zkgpu_ntt::{Direction, GpuNtt, NttError};
use zkgpu_runtime::GpuError;

/// Three engines, each with its context's index: 0 and 1 on the first context, 2 on the
/// second.
fn engines() -> &'static [(usize, GpuNtt<Fr>)] {
    static ENGINES: OnceLock<Vec<(usize, GpuNtt<Fr>)>> = OnceLock::new();
    ENGINES.get_or_init(|| zkgpu_testing::engines_on_two_contexts(GpuNtt::new))
}

#[derive(Clone, Copy, Debug)]
enum Domain {
    Plain,
    Swapped,
    Coset(u64),
    CosetSwapped(u64),
}

impl Domain {
    fn make(self, log_n: u32) -> Radix2EvaluationDomain<Fr> {
        let d = Radix2EvaluationDomain::<Fr>::new(1 << log_n).unwrap();
        let swap = |mut d: Radix2EvaluationDomain<Fr>| {
            std::mem::swap(&mut d.group_gen, &mut d.group_gen_inv);
            d
        };
        match self {
            Self::Plain => d,
            Self::Swapped => swap(d),
            Self::Coset(g) => d.get_coset(Fr::from(g)).unwrap(),
            Self::CosetSwapped(g) => swap(d.get_coset(Fr::from(g)).unwrap()),
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// `fft` / `ifft` of `len` values (resized to the domain as ark-poly
    /// resizes them).
    Transform {
        engine: usize,
        log_n: u32,
        domain: Domain,
        inverse: bool,
        len: usize,
        seed: u64,
    },
    /// A device vector made by `maker`, transformed and downloaded by `user`.
    Resident {
        maker: usize,
        user: usize,
        log_n: u32,
        domain: Domain,
        inverse: bool,
        seed: u64,
    },
}

fn domain() -> impl Strategy<Value = Domain> {
    prop_oneof![
        Just(Domain::Plain),
        Just(Domain::Swapped),
        (2u64..9).prop_map(Domain::Coset),
        (2u64..9).prop_map(Domain::CosetSwapped),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (
            0usize..3,
            0u32..9,
            domain(),
            any::<bool>(),
            0usize..300,
            any::<u64>()
        )
            .prop_map(
                |(engine, log_n, domain, inverse, len, seed)| Op::Transform {
                    engine,
                    log_n,
                    domain,
                    inverse,
                    len,
                    seed
                }
            ),
        (
            0usize..3,
            0usize..3,
            0u32..9,
            domain(),
            any::<bool>(),
            any::<u64>()
        )
            .prop_map(|(maker, user, log_n, domain, inverse, seed)| Op::Resident {
                maker,
                user,
                log_n,
                domain,
                inverse,
                seed
            }),
    ]
}

fn values(len: usize, seed: u64) -> Vec<Fr> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..len)
        .map(|i| match i % 7 {
            0 => Fr::from(0u64),
            1 => -Fr::ONE,
            _ => Fr::rand(&mut rng),
        })
        .collect()
}

fn run(op: &Op) {
    let engines = engines();
    match *op {
        Op::Transform {
            engine,
            log_n,
            domain,
            inverse,
            len,
            seed,
        } => {
            let d = domain.make(log_n);
            let v = values(len, seed);
            let (mut want, mut got) = (v.clone(), v);
            let ntt = &engines[engine].1;
            if inverse {
                d.ifft_in_place(&mut want);
                ntt.ifft(&d, &mut got).unwrap();
            } else {
                d.fft_in_place(&mut want);
                ntt.fft(&d, &mut got).unwrap();
            }
            assert!(got == want, "{op:?}");
        }
        Op::Resident {
            maker,
            user,
            log_n,
            domain,
            inverse,
            seed,
        } => {
            let d = domain.make(log_n);
            let v = values(1 << log_n, seed);
            let (cm, m) = (&engines[maker].0, &engines[maker].1);
            let (cu, u) = (&engines[user].0, &engines[user].1);
            let mut dv = m.upload_batch(&[&v]).unwrap();
            let dir = if inverse {
                Direction::Inverse
            } else {
                Direction::Forward
            };
            let r = u.transform(&mut dv, &d, dir).block_on();
            if cm != cu {
                assert!(
                    matches!(r, Err(NttError::Gpu(GpuError::ForeignContext { .. }))),
                    "{op:?}: {r:?}"
                );
                return;
            }
            r.unwrap();
            let mut want = v;
            if inverse {
                d.ifft_in_place(&mut want);
            } else {
                d.fft_in_place(&mut want);
            }
            assert!(u.download(&dv, 0).block_on().unwrap() == want, "{op:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(zkgpu_testing::proptest_cases_from_env(12)))]

    #[test]
    fn random_call_sequences_equal_ark_poly(ops in prop::collection::vec(op(), 1..8)) {
        for op in &ops {
            run(op);
            // No refused call leaves an error on either device.
            for c in contexts() {
                c.check_device().unwrap();
            }
        }
    }
}
