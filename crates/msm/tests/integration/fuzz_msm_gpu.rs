//! Random sequences of MSM calls on engines of two GPU contexts (two engines on the first),
//! each result compared with arkworks: lengths 0..48 with bases and scalars of different
//! lengths, the identity, duplicate and negated bases, zero, one, -1 and small scalars;
//! plain, prepared, multi-set and folded bases; prepared bases used by the engine that made
//! them and by engines of the other context (a typed error, and everything still works
//! after). CI runs a fixed number of cases; `PROPTEST_CASES=2000` runs more (docs/msm.md).

#![allow(clippy::unwrap_used)]

use std::sync::OnceLock;
use zkgpu_msm::{MsmOutput, MsmRequest};
use zkgpu_runtime::BlockOn;
use zkgpu_testing::shared_contexts as contexts;

use ark_bls12_381::{Fr, G1Affine, G1Projective};
use ark_ec::{AffineRepr, CurveGroup, VariableBaseMSM};
use ark_ff::{Field, UniformRand, Zero};
use ark_std::rand::{Rng, SeedableRng, rngs::StdRng};
use proptest::prelude::*;
use zkgpu_curves::Bls12_381G1;
use zkgpu_msm::{Fold, GpuMsm, MsmConfig, PreparedScalars};

/// Three engines, each with its context's index: 0 and 1 on the first context, 2 on the
/// second.
fn engines() -> &'static [(usize, GpuMsm<Bls12_381G1>)] {
    static ENGINES: OnceLock<Vec<(usize, GpuMsm<Bls12_381G1>)>> = OnceLock::new();
    ENGINES.get_or_init(|| zkgpu_testing::engines_on_two_contexts(|c| GpuMsm::new(c).unwrap()))
}

#[derive(Clone, Copy, Debug)]
enum Prep {
    /// `msm_unchecked` on slices.
    Plain,
    /// Prepared bases.
    Prepared,
    /// Two base sets sharing the scalars (the second the bases reversed).
    Sets,
    /// Prepared with window multiples.
    Folded(u32),
}

#[derive(Clone, Debug)]
struct Op {
    maker: usize,
    user: usize,
    bases: usize,
    scalars: usize,
    prep: Prep,
    seed: u64,
}

fn op() -> impl Strategy<Value = Op> {
    let prep = prop_oneof![
        Just(Prep::Plain),
        Just(Prep::Prepared),
        Just(Prep::Sets),
        (2u32..6).prop_map(Prep::Folded),
    ];
    (
        0usize..3,
        0usize..3,
        0usize..48,
        0usize..48,
        prep,
        any::<u64>(),
    )
        .prop_map(|(maker, user, bases, scalars, prep, seed)| Op {
            maker,
            user,
            bases,
            scalars,
            prep,
            seed,
        })
}

/// Bases with the identity, duplicates and negations among them; scalars with 0, 1, -1 and
/// small values among them.
fn inputs(op: &Op) -> (Vec<G1Affine>, Vec<Fr>) {
    let mut rng = StdRng::seed_from_u64(op.seed);
    let mut bases: Vec<G1Affine> = Vec::with_capacity(op.bases);
    for i in 0..op.bases {
        let p = match (i % 6, bases.last().copied()) {
            (0, _) => G1Affine::zero(),
            (1, Some(q)) => q,
            (2, Some(q)) => -q,
            _ => G1Projective::rand(&mut rng).into_affine(),
        };
        bases.push(p);
    }
    let scalars = (0..op.scalars)
        .map(|i| match i % 5 {
            0 => Fr::zero(),
            1 => Fr::ONE,
            2 => -Fr::ONE,
            3 => Fr::from(rng.gen_range(0u64..1000)),
            _ => Fr::rand(&mut rng),
        })
        .collect();
    (bases, scalars)
}

fn run(op: &Op) {
    let engines = engines();
    let (bases, scalars) = inputs(op);
    let want = G1Projective::msm_unchecked(&bases, &scalars);
    let (cm, m) = (&engines[op.maker].0, &engines[op.maker].1);
    let (cu, u) = (&engines[op.user].0, &engines[op.user].1);
    let cfg = MsmConfig::default();
    let same = cm == cu;
    match op.prep {
        Prep::Plain => assert_eq!(u.msm_unchecked(&bases, &scalars).unwrap(), want),
        Prep::Prepared | Prep::Folded(_) => {
            let fold = match op.prep {
                Prep::Folded(f) => Fold {
                    folds: f,
                    window_bits: None,
                },
                _ => Fold::default(),
            };
            let p = m.prepare_sets_folded(&[&bases], fold).block_on().unwrap();
            let got = u
                .run(MsmRequest::new(&p, &scalars).config(cfg))
                .and_then(MsmOutput::sum);
            if same {
                assert_eq!(got.unwrap(), want, "{op:?}");
            } else {
                zkgpu_testing::assert_foreign(op, got);
            }
        }
        Prep::Sets => {
            let reversed: Vec<G1Affine> = bases.iter().rev().copied().collect();
            let p = m.prepare_sets(&[&bases, &reversed]).unwrap();
            let prepared = PreparedScalars::new(&scalars);
            let got = u
                .run(MsmRequest::new(&p, prepared.all()).config(cfg))
                .map(MsmOutput::into_sums);
            if same {
                let want2 = G1Projective::msm_unchecked(&reversed, &scalars);
                assert_eq!(got.unwrap(), vec![want, want2], "{op:?}");
            } else {
                zkgpu_testing::assert_foreign(op, got);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(zkgpu_testing::proptest_cases_from_env(10)))]

    #[test]
    fn random_call_sequences_equal_arkworks(ops in prop::collection::vec(op(), 1..6)) {
        for op in &ops {
            run(op);
            // No refused call leaves an error on either device.
            for c in contexts() {
                c.check_device().unwrap();
            }
        }
    }
}
