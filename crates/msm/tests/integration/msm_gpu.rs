//! GPU MSM against arkworks' `VariableBaseMSM::msm`, every group: sizes around powers of two,
//! edge-case scalar and base distributions, explicit window widths, length semantics, and
//! prepared bases reused across scalar vectors.

#![allow(clippy::unwrap_used)]

use zkgpu_msm::{MsmOutput, MsmRequest};
use zkgpu_runtime::{Arith, BlockOn, GpuContext};
use zkgpu_testing::{arith_context, shared_context as ctx, test_ariths_from_env};

use ark_ec::{AffineRepr, CurveGroup, VariableBaseMSM};
use ark_ff::{BigInteger, Field, One, PrimeField, UniformRand, Zero};
use ark_std::rand::{Rng, rngs::StdRng};
use zkgpu_curves::{Bls12_377G1, Bls12_377G2, Bls12_381G1, Bls12_381G2, EdOnBls12_377, GpuCurve};
use zkgpu_msm::{Fold, GpuMsm, MsmConfig, MsmError, PreparedBases, PreparedScalars};
use zkgpu_testing::rng_for;

fn random_bases<C: GpuCurve>(n: usize, rng: &mut StdRng) -> Vec<C::Affine> {
    // A few random points and their small multiples: cheap to make, all distinct.
    let seeds: Vec<C::Projective> = (0..n.min(16)).map(|_| C::Projective::rand(rng)).collect();
    let pts: Vec<C::Projective> = (0..n)
        .map(|i| seeds[i % seeds.len()] * C::Scalar::from((i / seeds.len() + 1) as u64))
        .collect();
    C::Projective::normalize_batch(&pts)
}

fn ark_msm<C: GpuCurve>(bases: &[C::Affine], scalars: &[C::Scalar]) -> C::Projective
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    <C::Projective as VariableBaseMSM>::msm(bases, scalars).unwrap()
}

/// `n` bases with the identity at 0, a duplicate (1 = 2) and a negation (3 = -4).
fn edge_bases<C: GpuCurve>(n: usize, rng: &mut StdRng) -> Vec<C::Affine> {
    let mut b = random_bases::<C>(n, rng);
    b[0] = C::Affine::zero();
    b[1] = b[2];
    b[3] = (-b[4].into_group()).into_affine();
    b
}

/// `n` scalars cycling through zero, one repeated value, `r - 1` and random ones.
fn mixed_scalars<C: GpuCurve>(n: usize, period: usize, rng: &mut StdRng) -> Vec<C::Scalar> {
    let x = C::Scalar::rand(rng);
    (0..n)
        .map(|i| match i % period {
            0 => C::Scalar::zero(),
            1 => x,
            2 => -C::Scalar::one(),
            _ => C::Scalar::rand(rng),
        })
        .collect()
}

/// arkworks over the shorter length.
fn ark_unchecked<C: GpuCurve>(bases: &[C::Affine], scalars: &[C::Scalar]) -> C::Projective
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let m = bases.len().min(scalars.len());
    <C::Projective as VariableBaseMSM>::msm_unchecked(&bases[..m], &scalars[..m])
}

fn check_sizes<C: GpuCurve>(ctx: &GpuContext, sizes: &[usize])
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let msm = GpuMsm::<C>::new(ctx).unwrap();
    let mut rng = rng_for::<C>("sizes");
    for &n in sizes {
        let bases = random_bases::<C>(n, &mut rng);
        let scalars: Vec<C::Scalar> = (0..n).map(|_| C::Scalar::rand(&mut rng)).collect();
        let got = msm.msm(&bases, &scalars).unwrap();
        assert_eq!(got, ark_msm::<C>(&bases, &scalars), "{} n = {n}", C::ID);
    }
    assert_eq!(msm.msm(&[], &[]).unwrap(), C::Projective::zero(), "empty");
}

fn check_distributions<C: GpuCurve>(ctx: &GpuContext)
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let msm = GpuMsm::<C>::new(ctx).unwrap();
    let mut rng = rng_for::<C>("distributions");
    let n = 64;
    let bases = random_bases::<C>(n, &mut rng);
    let r_minus_1 = -C::Scalar::one();
    let x = C::Scalar::rand(&mut rng);
    let cases: Vec<(&str, Vec<C::Scalar>)> = vec![
        ("zeros", vec![C::Scalar::zero(); n]),
        ("all equal", vec![x; n]),
        ("r - 1", vec![r_minus_1; n]),
        ("ones", vec![C::Scalar::one(); n]),
        ("twos", vec![C::Scalar::from(2u64); n]),
        (
            "0/1 heavy",
            (0..n)
                .map(|_| {
                    if rng.gen_bool(0.8) {
                        C::Scalar::from(rng.gen_range(0..2u64))
                    } else {
                        C::Scalar::rand(&mut rng)
                    }
                })
                .collect(),
        ),
        (
            "small",
            (0..n)
                .map(|_| C::Scalar::from(rng.gen_range(0..1000u64)))
                .collect(),
        ),
        (
            "top bits",
            (0..n)
                .map(|i| r_minus_1 - C::Scalar::from(i as u64))
                .collect(),
        ),
    ];
    for (name, scalars) in &cases {
        assert_eq!(
            msm.msm(&bases, scalars).unwrap(),
            ark_msm::<C>(&bases, scalars),
            "{} {name}",
            C::ID
        );
    }
    // Bases: identities, duplicates, and half of them the negations of the other half.
    let scalars: Vec<C::Scalar> = (0..n).map(|_| C::Scalar::rand(&mut rng)).collect();
    let mut odd = bases.clone();
    for (i, b) in odd.iter_mut().enumerate() {
        if i % 5 == 0 {
            *b = <C::Affine as AffineRepr>::zero();
        } else if i % 5 == 1 {
            *b = bases[0];
        }
    }
    assert_eq!(
        msm.msm(&odd, &scalars).unwrap(),
        ark_msm::<C>(&odd, &scalars),
        "{} odd bases",
        C::ID
    );
    let half: Vec<C::Affine> = bases[..n / 2]
        .iter()
        .copied()
        .chain(
            bases[..n / 2]
                .iter()
                .map(|b| (-b.into_group()).into_affine()),
        )
        .collect();
    let same: Vec<C::Scalar> = scalars[..n / 2]
        .iter()
        .chain(&scalars[..n / 2])
        .copied()
        .collect();
    let got = msm.msm(&half, &same).unwrap();
    assert_eq!(
        got,
        C::Projective::zero(),
        "{} P and -P with equal scalars cancel",
        C::ID
    );
    assert_eq!(
        msm.msm(&half, &scalars).unwrap(),
        ark_msm::<C>(&half, &scalars),
        "{} negated half",
        C::ID
    );
}

fn check_windows_and_semantics<C: GpuCurve>()
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let msm = GpuMsm::<C>::new(ctx()).unwrap();
    let mut rng = rng_for::<C>("windows");
    let n = 50;
    let bases = random_bases::<C>(n, &mut rng);
    let prepared = msm.prepare(&bases).unwrap();
    // Prepared bases reused across scalar vectors and window widths.
    // Chunks of 1..3 entries split every bucket into many chunks summed apart.
    // A chunk above 1024 entries puts two sizes in each bin of the chunk-size histogram.
    // (c, chunk, segments per window): one segment, or the most; 512 segments make 10 rows
    // of segment sums per window (all sums, then one row per bit of the segment index),
    // summed in GPU tree levels until the host has about 1024 sums left in all; 128
    // segments in fewer levels.
    for (c, chunk, segments) in [
        (2u32, 1u32, 1u32),
        (3, 2, 4),
        (5, 3, 16),
        (6, 2001, 1),
        (8, 7, 1),
        (8, 7, 128),
        (11, 64, 512),
    ] {
        let scalars: Vec<C::Scalar> = (0..n).map(|_| C::Scalar::rand(&mut rng)).collect();
        let got = msm
            .run(MsmRequest::new(&prepared, &scalars).config(MsmConfig {
                window_bits: Some(c),
                reduce_segments: Some(segments),
                chunk: Some(chunk),
                ..MsmConfig::default()
            }))
            .and_then(MsmOutput::sum)
            .unwrap();
        assert_eq!(got, ark_msm::<C>(&bases, &scalars), "{} c = {c}", C::ID);
    }
    // Scalars converted once, used whole and from an offset (as Groth16's A and L do).
    let scalars: Vec<C::Scalar> = (0..n).map(|_| C::Scalar::rand(&mut rng)).collect();
    let words = PreparedScalars::new(&scalars);
    assert_eq!(words.len(), n);
    let whole = msm
        .run(MsmRequest::new(&prepared, words.all()))
        .and_then(MsmOutput::sum)
        .unwrap();
    assert_eq!(
        whole,
        ark_msm::<C>(&bases, &scalars),
        "{} prepared scalars",
        C::ID
    );
    let tail = msm
        .run(MsmRequest::new(&prepared, words.tail(9)))
        .and_then(MsmOutput::sum)
        .unwrap();
    assert_eq!(
        tail,
        ark_msm::<C>(&bases[..n - 9], &scalars[9..]),
        "{} tail of prepared scalars",
        C::ID
    );
    let none = msm
        .run(MsmRequest::new(&prepared, words.tail(n + 5)))
        .and_then(MsmOutput::sum)
        .unwrap();
    assert_eq!(none, C::Projective::zero(), "{} empty tail", C::ID);
    // One bucket holding 300 points in chunks of 1 or 3: two or one tree levels over its
    // chunk sums before the last combine (16 per level), beside buckets of one chunk; with
    // groups of 2 and 5, nine and four levels, and the segment sums' tree in groups of 2, 5.
    // A large bucket's shorter chunks (more than chunk x group entries and eight mean buckets:
    // the 257-point bucket here; default: half or a quarter of the chunk, at least 16):
    // chunks of 3 or 5 there, 7 or 12 elsewhere.
    let many = random_bases::<C>(300, &mut rng);
    let x = C::Scalar::rand(&mut rng);
    for (chunk, group, large) in [
        (1u32, Some(16), None),
        (3, Some(16), None),
        (1, Some(2), None),
        (3, Some(5), None),
        (3, None, None),
        (7, Some(2), Some(3)),
        (12, None, Some(5)),
        (40, Some(2), None),
    ] {
        let scalars: Vec<C::Scalar> = (0..300)
            .map(|i| {
                if i % 7 == 0 {
                    C::Scalar::rand(&mut rng)
                } else {
                    x
                }
            })
            .collect();
        let got = msm
            .run(
                MsmRequest::new(&msm.prepare(&many).unwrap(), &scalars).config(MsmConfig {
                    chunk: Some(chunk),
                    large_chunk: large,
                    tree_group: group,
                    chunk_group: group,
                    reduce_segments: Some(128),
                    ..MsmConfig::default()
                }),
            )
            .and_then(MsmOutput::sum)
            .unwrap();
        assert_eq!(
            got,
            ark_msm::<C>(&many, &scalars),
            "{} chunk {chunk}, groups {group:?}, large chunks {large:?}",
            C::ID
        );
    }
    let bad = [
        MsmConfig {
            window_bits: Some(1),
            ..MsmConfig::default()
        },
        MsmConfig {
            window_bits: Some(4),
            reduce_segments: Some(3),
            ..MsmConfig::default()
        },
        MsmConfig {
            chunk: Some(0),
            ..MsmConfig::default()
        },
        MsmConfig {
            chunk: Some(zkgpu_msm::MAX_CHUNK + 1),
            ..MsmConfig::default()
        },
        MsmConfig {
            chunk: Some(4),
            large_chunk: Some(5),
            ..MsmConfig::default()
        },
        MsmConfig {
            large_chunk: Some(0),
            ..MsmConfig::default()
        },
        MsmConfig {
            tree_group: Some(1),
            ..MsmConfig::default()
        },
        MsmConfig {
            chunk_group: Some(1025),
            ..MsmConfig::default()
        },
    ];
    for config in bad {
        assert!(
            matches!(
                msm.run(MsmRequest::new(&prepared, &[C::Scalar::one()]).config(config))
                    .and_then(MsmOutput::sum),
                Err(MsmError::Config(_))
            ),
            "{config:?}"
        );
    }
    // Checked length mismatch; unchecked truncates to the shorter length, as arkworks does.
    let scalars: Vec<C::Scalar> = (0..n - 7).map(|_| C::Scalar::rand(&mut rng)).collect();
    assert!(matches!(
        msm.msm(&bases, &scalars),
        Err(MsmError::LengthMismatch { .. })
    ));
    let got = msm.msm_unchecked(&bases, &scalars).unwrap();
    assert_eq!(
        got,
        <C::Projective as VariableBaseMSM>::msm_unchecked(&bases, &scalars),
        "{} unchecked",
        C::ID
    );
}

/// Bases stored in several parts (buffers), as inputs larger than one storage binding are:
/// parts of 16 points here, against arkworks, with the scalars ending inside a part, at a part
/// boundary, and before the last part; prepared scalars from an offset that crosses parts.
fn check_parts<C: GpuCurve>()
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let msm = GpuMsm::<C>::new(ctx()).unwrap().with_max_part(16);
    assert_eq!(msm.part_len(), 16);
    let mut rng = rng_for::<C>("parts");
    let n = 16 * 4 + 5;
    let bases = random_bases::<C>(n, &mut rng);
    let prepared = msm.prepare(&bases).unwrap();
    assert_eq!((prepared.len(), prepared.parts()), (n, 5));
    // Zero scalars and a duplicated scalar across parts, the rest random.
    let x = C::Scalar::rand(&mut rng);
    let scalars: Vec<C::Scalar> = (0..n)
        .map(|i| match i % 5 {
            0 => C::Scalar::zero(),
            1 => x,
            _ => C::Scalar::rand(&mut rng),
        })
        .collect();
    for m in [n, 16 * 3, 16 * 2 + 1, 7, 1] {
        let got = msm
            .run(MsmRequest::new(&prepared, &scalars[..m]))
            .and_then(MsmOutput::sum)
            .unwrap();
        assert_eq!(
            got,
            ark_msm::<C>(&bases[..m], &scalars[..m]),
            "{} parts of 16, {m} scalars",
            C::ID
        );
    }
    let words = PreparedScalars::new(&scalars);
    let tail = msm
        .run(MsmRequest::new(&prepared, words.tail(20)))
        .and_then(MsmOutput::sum)
        .unwrap();
    assert_eq!(
        tail,
        ark_msm::<C>(&bases[..n - 20], &scalars[20..]),
        "{} parts, tail",
        C::ID
    );
    // Unprepared calls split too.
    assert_eq!(
        msm.msm(&bases, &scalars).unwrap(),
        ark_msm::<C>(&bases, &scalars),
        "{} parts, msm",
        C::ID
    );
}

/// Bases in exactly two parts run as one MSM where the device binds eight storage buffers
/// (the split accumulation reads both parts; docs/msm.md "Limits"): plain and folded, edge
/// bases and mixed scalars, scalars ending in the second part, at the boundary and in the
/// first, against arkworks; `MsmTimings::runs` says which way each ran.
fn check_two_parts<C: GpuCurve>(ctx: &GpuContext)
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let msm = GpuMsm::<C>::new(ctx).unwrap().with_max_part(24);
    let split = ctx.limits().max_storage_buffers_per_shader_stage >= 8;
    let mut rng = rng_for::<C>("two parts");
    let n = 41;
    let bases = edge_bases::<C>(n, &mut rng);
    let scalars = mixed_scalars::<C>(n, 5, &mut rng);
    let fold = Fold {
        folds: 4,
        window_bits: Some(6),
    };
    let plain = msm.prepare(&bases).unwrap();
    let folded = msm.prepare_sets_folded(&[&bases], fold).block_on().unwrap();
    for (what, prepared) in [("plain", &plain), ("folded", &folded)] {
        assert_eq!(prepared.parts(), 2, "{} {what}", C::ID);
        for m in [n, 30, 25, 24, 10] {
            let out = msm.run(MsmRequest::new(prepared, &scalars[..m])).unwrap();
            let runs = if split && m > 24 {
                1
            } else {
                m.div_ceil(24) as u32
            };
            assert_eq!(out.timings.runs, runs, "{} {what}, {m} scalars", C::ID);
            assert_eq!(
                out.sum().unwrap(),
                ark_msm::<C>(&bases[..m], &scalars[..m]),
                "{} {what}, {m} scalars",
                C::ID
            );
        }
    }
}

/// `folds_in_one_msm`: more levels than one part holds where two parts run as one MSM
/// (2^20 BLS12-381 G1 points under lavapipe's 128 MiB bindings: two levels need two parts),
/// the one-part answer for several sets or where parts are capped.
#[test]
fn folds_in_one_msm_span_two_parts() {
    let msm = GpuMsm::<Bls12_381G1>::new(ctx()).unwrap();
    let n = 1 << 20;
    let (one, two) = (msm.folds_in_one_part(n, 1), msm.folds_in_one_msm(n, 1));
    if ctx().limits().max_storage_buffers_per_shader_stage >= 8
        && ctx().max_binding_bytes() <= 1 << 27
    {
        assert!(two > one, "{two} levels in one MSM, {one} in one part");
    }
    assert!(two >= one);
    assert_eq!(msm.folds_in_one_msm(n, 3), msm.folds_in_one_part(n, 3));
    let capped = GpuMsm::<Bls12_381G1>::new(ctx()).unwrap().with_max_part(16);
    assert_eq!(
        capped.folds_in_one_msm(40, 1),
        capped.folds_in_one_part(40, 1)
    );
}

/// Base sets sharing scalars (`prepare_sets`, one request): three sets of different lengths
/// (one holding the identity, duplicates and a point's negation), scalars longer and shorter
/// than the sets, each set's sum against arkworks' `msm_unchecked`; the same across parts of
/// 16 points; one set equal to a plain MSM; misuse as typed errors.
fn check_sets<C: GpuCurve>()
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let mut rng = rng_for::<C>("sets");
    let a = random_bases::<C>(50, &mut rng);
    let b = random_bases::<C>(37, &mut rng);
    let c = edge_bases::<C>(45, &mut rng);
    let sets: [&[C::Affine]; 3] = [&a, &b, &c];
    let scalars = mixed_scalars::<C>(60, 7, &mut rng);
    let unchecked = ark_unchecked::<C>;
    // Parts: one of all three sets; parts of 16 points, each of one set (the sets do not fit
    // one part together); parts of 64 points, which hold all three.
    for (max_part, per_part, parts) in [(None, 3, 1), (Some(16), 1, 12), (Some(64), 3, 1)] {
        let mut msm = GpuMsm::<C>::new(ctx()).unwrap();
        if let Some(p) = max_part {
            msm = msm.with_max_part(p);
        }
        let prepared = msm.prepare_sets(&sets).unwrap();
        assert_eq!((prepared.len(), prepared.sets()), (50, 3));
        let layout = (prepared.sets_per_part(), prepared.parts());
        assert_eq!(layout, (per_part, parts), "{} parts {max_part:?}", C::ID);
        let counts: &[usize] = match max_part {
            Some(64) => &[50, 37],
            _ => &[60, 50, 40, 37, 36, 1, 0],
        };
        for &m in counts {
            let words = PreparedScalars::new(&scalars[..m]);
            let got = msm
                .run(MsmRequest::new(&prepared, words.all()))
                .map(MsmOutput::into_sums)
                .unwrap();
            let want: Vec<C::Projective> =
                sets.iter().map(|s| unchecked(s, &scalars[..m])).collect();
            assert_eq!(got, want, "{} sets, {m} scalars, parts {max_part:?}", C::ID);
        }
        // A plain MSM refuses bases prepared as sets.
        assert!(matches!(
            msm.run(MsmRequest::new(&prepared, &scalars))
                .and_then(MsmOutput::sum),
            Err(MsmError::Config(_))
        ));
        if max_part == Some(16) {
            check_sets_restored(&msm, &prepared, &sets, &scalars);
        }
    }
    let msm = GpuMsm::<C>::new(ctx()).unwrap();
    let one = msm.prepare_sets(&[&a]).unwrap();
    let words = PreparedScalars::new(&scalars);
    assert_eq!(
        msm.run(MsmRequest::new(&one, words.all()))
            .map(MsmOutput::into_sums)
            .unwrap(),
        vec![unchecked(&a, &scalars)],
        "{} one set",
        C::ID
    );
    assert!(matches!(msm.prepare_sets(&[]), Err(MsmError::Config(_))));
}

/// Base sets of one set per part read back and restored in their GPU form (the prover's key
/// cache): the same sums; a layout claiming another number of sets per part is refused.
fn check_sets_restored<C: GpuCurve>(
    msm: &GpuMsm<C>,
    prepared: &zkgpu_msm::PreparedBases<C>,
    sets: &[&[C::Affine]],
    scalars: &[C::Scalar],
) where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let layout = prepared.layout();
    let bytes: Vec<Vec<u8>> = (0..prepared.parts())
        .map(|k| {
            let mut out = vec![0u8; layout.part_bytes(k) as usize];
            msm.read_bases_part(prepared, k, &mut out)
                .block_on()
                .unwrap();
            out
        })
        .collect();
    let fill = |k: usize, at: usize, block: &mut [u8]| {
        block.copy_from_slice(&bytes[k][at..at + block.len()]);
    };
    let restored = msm.restore_bases(&layout, 256, fill).unwrap();
    let words = PreparedScalars::new(&scalars[..45]);
    let got = msm
        .run(MsmRequest::new(&restored, words.all()))
        .map(MsmOutput::into_sums)
        .unwrap();
    let want: Vec<C::Projective> = sets
        .iter()
        .map(|s| ark_unchecked::<C>(s, &scalars[..45]))
        .collect();
    assert_eq!(got, want, "{} sets restored", C::ID);
    let mut wrong = layout.clone();
    wrong.sets_per_part = sets.len();
    assert!(matches!(
        msm.restore_bases(&wrong, 256, fill),
        Err(MsmError::Config(_))
    ));
}

/// Folded bases (`prepare_sets_folded`: window multiples computed on the GPU): several fold
/// counts and widths (one bucket window, levels that do not divide the windows, the default
/// width), bases holding the identity, duplicates and negations, two sets, parts of 16 points,
/// narrow scalars; every sum against arkworks. A conflicting width is a typed error.
fn check_folded<C: GpuCurve>()
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let mut rng = rng_for::<C>("folded");
    let a = edge_bases::<C>(40, &mut rng);
    let b = random_bases::<C>(29, &mut rng);
    let scalars = mixed_scalars::<C>(45, 6, &mut rng);
    let unchecked = ark_unchecked::<C>;
    let field_bits = C::Scalar::MODULUS_BIT_SIZE;
    // (folds, width, stored levels): every window into one bucket window; levels that do not
    // divide the windows; the default width.
    let w5 = (field_bits + 1).div_ceil(5);
    let w12 = (field_bits + 1).div_ceil(12);
    for (folds, window_bits, levels) in [
        (
            1000,
            Some(5),
            w5.div_ceil(w5.div_ceil(zkgpu_msm::MAX_FOLDS)),
        ),
        (4, Some(5), 4),
        (7, Some(12), w12.div_ceil(w12.div_ceil(7))),
        (3, None, 3),
    ] {
        for max_part in [None, Some(16)] {
            let mut msm = GpuMsm::<C>::new(ctx()).unwrap();
            if let Some(p) = max_part {
                msm = msm.with_max_part(p);
            }
            // The most levels (of the default width's windows) that keep two sets of 40 bases
            // in one part; none when parts are shorter than the bases.
            let f = msm.folds_in_one_part(40, 2) as usize;
            let windows = (field_bits + 1).div_ceil(zkgpu_msm::default_window_bits(40));
            if max_part.is_some() {
                assert_eq!(f, 1, "{}", C::ID);
            } else {
                assert!(msm.part_len_sets(2 * f) >= 40, "{} {f}", C::ID);
                assert!(
                    f == windows.min(zkgpu_msm::MAX_FOLDS) as usize
                        || msm.part_len_sets(2 * (f + 1)) < 40,
                    "{} {f}",
                    C::ID
                );
            }
            let fold = Fold { folds, window_bits };
            let what = format!(
                "{} folds {folds}, c {window_bits:?}, parts {max_part:?}",
                C::ID
            );
            let one = msm.prepare_sets_folded(&[&a], fold).block_on().unwrap();
            assert_eq!(one.folds(), levels, "{what}");
            for m in [40, 33, 1, 0] {
                let got = msm
                    .run(MsmRequest::new(&one, &scalars[..m]))
                    .and_then(MsmOutput::sum)
                    .unwrap();
                assert_eq!(
                    got,
                    ark_msm::<C>(&a[..m], &scalars[..m]),
                    "{what}, {m} scalars"
                );
            }
            let two = msm.prepare_sets_folded(&[&a, &b], fold).block_on().unwrap();
            let words = PreparedScalars::new(&scalars);
            let got = msm
                .run(MsmRequest::new(&two, words.all()))
                .map(MsmOutput::into_sums)
                .unwrap();
            assert_eq!(
                got,
                vec![unchecked(&a, &scalars), unchecked(&b, &scalars)],
                "{what}, two sets"
            );
            // Narrow scalars use fewer digit windows of the same folding.
            let narrow: Vec<C::Scalar> =
                (0..40).map(|_| narrow_scalar::<C>(70, &mut rng)).collect();
            let config = MsmConfig {
                scalar_bits: Some(70),
                ..MsmConfig::default()
            };
            assert_eq!(
                msm.run(MsmRequest::new(&one, &narrow).config(config))
                    .and_then(MsmOutput::sum)
                    .unwrap(),
                ark_msm::<C>(&a, &narrow),
                "{what}, 70-bit scalars"
            );
        }
    }
    let msm = GpuMsm::<C>::new(ctx()).unwrap();
    let fold = Fold {
        folds: 4,
        window_bits: Some(6),
    };
    let folded = msm.prepare_sets_folded(&[&a], fold).block_on().unwrap();
    assert_eq!(folded.window_bits(), Some(6));
    let config = MsmConfig {
        window_bits: Some(7),
        ..MsmConfig::default()
    };
    assert!(matches!(
        msm.run(MsmRequest::new(&folded, &scalars[..40]).config(config))
            .and_then(MsmOutput::sum),
        Err(MsmError::Config(_))
    ));
    // Windows wider than 16 bits: folded into one bucket window, and plain with scalars that
    // need one window; past MAX_WINDOW_BITS a typed error.
    let wide = msm
        .prepare_sets_folded(
            &[&a],
            Fold {
                folds: 1000,
                window_bits: Some(17),
            },
        )
        .block_on()
        .unwrap();
    assert_eq!(wide.window_bits(), Some(17));
    assert_eq!(
        msm.run(MsmRequest::new(&wide, &scalars[..40]))
            .and_then(MsmOutput::sum)
            .unwrap(),
        ark_msm::<C>(&a, &scalars[..40]),
        "{} folded, c 17",
        C::ID
    );
    let short: Vec<C::Scalar> = (0..40).map(|_| narrow_scalar::<C>(16, &mut rng)).collect();
    let config = MsmConfig {
        window_bits: Some(17),
        scalar_bits: Some(16),
        ..MsmConfig::default()
    };
    let plain_a = msm.prepare(&a).unwrap();
    assert_eq!(
        msm.run(MsmRequest::new(&plain_a, &short).config(config))
            .and_then(MsmOutput::sum)
            .unwrap(),
        ark_msm::<C>(&a, &short),
        "{} c 17, 16-bit scalars",
        C::ID
    );
    let too_wide = MsmConfig {
        window_bits: Some(zkgpu_msm::MAX_WINDOW_BITS + 1),
        ..MsmConfig::default()
    };
    assert!(matches!(
        msm.run(MsmRequest::new(&plain_a, &short).config(too_wide))
            .and_then(MsmOutput::sum),
        Err(MsmError::Config(_))
    ));
    // One level is no folding.
    let plain = msm
        .prepare_sets_folded(
            &[&a],
            Fold {
                folds: 1,
                window_bits: None,
            },
        )
        .block_on()
        .unwrap();
    assert_eq!((plain.folds(), plain.window_bits()), (1, None));
    assert!(matches!(
        msm.prepare_sets_folded(
            &[&a],
            Fold {
                folds: 2,
                window_bits: Some(zkgpu_msm::MAX_WINDOW_BITS + 1)
            }
        )
        .block_on(),
        Err(MsmError::Config(_))
    ));
}

/// A scalar below `2^bits`: random limbs, masked.
fn narrow_scalar<C: GpuCurve>(bits: u32, rng: &mut StdRng) -> C::Scalar {
    let mut limbs = <C::Scalar as PrimeField>::BigInt::rand(rng);
    for (k, w) in limbs.as_mut().iter_mut().enumerate() {
        let lo = 64 * k as u32;
        if lo >= bits {
            *w = 0;
        } else if bits - lo < 64 {
            *w &= (1u64 << (bits - lo)) - 1;
        }
    }
    C::Scalar::from_bigint(limbs).unwrap()
}

/// `MsmConfig::scalar_bits`: fewer windows for narrow scalars (GLV halves, small scalars),
/// equal to arkworks at several widths and window sizes, across parts; a wider scalar is an
/// error naming it, not a wrong sum; out-of-range bounds are configuration errors.
fn check_scalar_bits<C: GpuCurve>()
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let msm = GpuMsm::<C>::new(ctx()).unwrap().with_max_part(64);
    let mut rng = rng_for::<C>("scalar bits");
    let n = 100;
    let bases = random_bases::<C>(n, &mut rng);
    let prepared = msm.prepare(&bases).unwrap();
    let field_bits = C::Scalar::MODULUS_BIT_SIZE;
    for (bits, window_bits) in [
        (128, None),
        (128, Some(5)),
        (64, Some(8)),
        (1, None),
        (13, Some(13)),
    ] {
        let mut scalars: Vec<C::Scalar> =
            (0..n).map(|_| narrow_scalar::<C>(bits, &mut rng)).collect();
        // The widest scalar that fits, and zero.
        scalars[3] = C::Scalar::from_bigint({
            let mut b = <C::Scalar as PrimeField>::BigInt::from(1u64);
            b <<= bits;
            b.sub_with_borrow(&1u64.into());
            b
        })
        .unwrap();
        scalars[4] = C::Scalar::zero();
        let config = MsmConfig {
            scalar_bits: Some(bits),
            window_bits,
            ..MsmConfig::default()
        };
        let got = msm
            .run(MsmRequest::new(&prepared, &scalars).config(config))
            .and_then(MsmOutput::sum)
            .unwrap();
        assert_eq!(
            got,
            ark_msm::<C>(&bases, &scalars),
            "{} scalar_bits {bits}, c {window_bits:?}",
            C::ID
        );
    }
    // Full-width field scalars: every group uploads them in Montgomery form and converts them
    // on the GPU (0, 1, 2, r - 1 and random ones); a width to check converts on the host.
    // Both must match arkworks.
    let mut scalars: Vec<C::Scalar> = (0..n).map(|_| C::Scalar::rand(&mut rng)).collect();
    scalars[..4].copy_from_slice(&[
        C::Scalar::zero(),
        C::Scalar::one(),
        C::Scalar::from(2u64),
        -C::Scalar::one(),
    ]);
    let (got, timings) = msm
        .run(MsmRequest::new(&prepared, &scalars).timed())
        .and_then(MsmOutput::sum_timed)
        .unwrap();
    assert!(timings.scalars_on_gpu, "{}", C::ID);
    assert_eq!(
        got,
        ark_msm::<C>(&bases, &scalars),
        "{} scalars converted on the GPU",
        C::ID
    );
    // A width to check: the host converts (and checks).
    let narrow: Vec<C::Scalar> = (0..n).map(|_| narrow_scalar::<C>(128, &mut rng)).collect();
    let config = MsmConfig {
        scalar_bits: Some(128),
        ..MsmConfig::default()
    };
    let (got, timings) = msm
        .run(MsmRequest::new(&prepared, &narrow).config(config).timed())
        .and_then(MsmOutput::sum_timed)
        .unwrap();
    assert!(!timings.scalars_on_gpu, "{}", C::ID);
    assert_eq!(got, ark_msm::<C>(&bases, &narrow), "{} narrow", C::ID);
    // One scalar too wide, in the second part: an error naming it.
    let mut scalars: Vec<C::Scalar> = (0..n).map(|_| narrow_scalar::<C>(128, &mut rng)).collect();
    scalars[70] = C::Scalar::from_bigint({
        let mut b = <C::Scalar as PrimeField>::BigInt::from(1u64);
        b <<= 128;
        b
    })
    .unwrap();
    let config = MsmConfig {
        scalar_bits: Some(128),
        ..MsmConfig::default()
    };
    match msm
        .run(MsmRequest::new(&prepared, &scalars).config(config))
        .and_then(MsmOutput::sum)
    {
        Err(MsmError::ScalarTooWide { index, bits, limit }) => {
            assert_eq!((index, bits, limit), (70, 129, 128), "{}", C::ID);
        }
        other => panic!("{}: expected ScalarTooWide, got {other:?}", C::ID),
    }
    // The engine still works after the error (its buffers went back to the pool).
    scalars[70] = C::Scalar::one();
    assert_eq!(
        msm.run(MsmRequest::new(&prepared, &scalars).config(config))
            .and_then(MsmOutput::sum)
            .unwrap(),
        ark_msm::<C>(&bases, &scalars),
        "{} after an error",
        C::ID
    );
    for bits in [0, field_bits + 1] {
        let config = MsmConfig {
            scalar_bits: Some(bits),
            ..MsmConfig::default()
        };
        assert!(
            matches!(
                msm.run(MsmRequest::new(&prepared, &scalars).config(config))
                    .and_then(MsmOutput::sum),
                Err(MsmError::Config(_))
            ),
            "{} scalar_bits {bits}",
            C::ID
        );
    }
}

/// Bases on the curve but outside the prime-order subgroup (`point` draws one, or `None`),
/// mixed with the identity, a subgroup point, a duplicate and a negation: arkworks sums them
/// in the whole curve group with the scalars' canonical integers, and so must the GPU, plain
/// and with folded bases (whose window multiples are computed from these points too).
fn check_off_subgroup<C: GpuCurve>(mut point: impl FnMut(&mut StdRng) -> Option<C::Affine>)
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let mut rng = rng_for::<C>("off-subgroup");
    let n = 37;
    let mut bases = Vec::with_capacity(n);
    let mut tries = 0;
    while bases.len() < n {
        tries += 1;
        assert!(tries < 100 * n, "{}: no points off the subgroup", C::ID);
        if let Some(p) = point(&mut rng) {
            bases.push(p);
        }
    }
    bases[0] = C::Affine::zero();
    bases[1] = C::Projective::rand(&mut rng).into_affine();
    bases[2] = bases[3];
    bases[5] = (-bases[6].into_group()).into_affine();
    let mut scalars = mixed_scalars::<C>(n, 5, &mut rng);
    // Equal bases with equal scalars meet in one bucket: P + P off the subgroup.
    scalars[2] = scalars[3];
    scalars[5] = scalars[6];
    let want = ark_msm::<C>(&bases, &scalars);
    let naive: C::Projective = bases
        .iter()
        .zip(&scalars)
        .map(|(b, s)| b.mul_bigint(s.into_bigint()))
        .sum();
    // arkworks takes scalars within 2^64 below r (here r - 1) as negative: (s - r) P, not s P.
    assert_ne!(naive, want, "{}: arkworks' sum equals the plain one", C::ID);
    let msm = GpuMsm::<C>::new(ctx()).unwrap();
    assert_eq!(msm.msm(&bases, &scalars).unwrap(), want, "{}", C::ID);
    let fold = Fold {
        folds: 4,
        window_bits: Some(7),
    };
    let folded = msm.prepare_sets_folded(&[&bases], fold).block_on().unwrap();
    assert_eq!(
        msm.run(MsmRequest::new(
            &folded,
            PreparedScalars::new(&scalars).all()
        ))
        .map(MsmOutput::into_sums)
        .unwrap(),
        vec![want],
        "{} folded",
        C::ID
    );
}

/// A random point of a short Weierstrass curve off its prime-order subgroup.
fn sw_off_subgroup<P: ark_ec::short_weierstrass::SWCurveConfig>(
    rng: &mut StdRng,
) -> Option<ark_ec::short_weierstrass::Affine<P>> {
    let x = P::BaseField::rand(rng);
    ark_ec::short_weierstrass::Affine::<P>::get_point_from_x_unchecked(x, rng.r#gen())
        .filter(|p| p.is_on_curve() && !p.is_in_correct_subgroup_assuming_on_curve())
}

#[test]
fn off_subgroup_bases_match_arkworks() {
    check_off_subgroup::<Bls12_381G1>(sw_off_subgroup::<ark_bls12_381::g1::Config>);
    check_off_subgroup::<Bls12_377G1>(sw_off_subgroup::<ark_bls12_377::g1::Config>);
    check_off_subgroup::<Bls12_381G2>(sw_off_subgroup::<ark_bls12_381::g2::Config>);
    check_off_subgroup::<Bls12_377G2>(sw_off_subgroup::<ark_bls12_377::g2::Config>);
    check_off_subgroup::<EdOnBls12_377>(|rng| {
        let y = ark_ed_on_bls12_377::Fq::rand(rng);
        ark_ed_on_bls12_377::EdwardsAffine::get_point_from_y_unchecked(y, rng.r#gen())
            .filter(|p| p.is_on_curve() && !p.is_in_correct_subgroup_assuming_on_curve())
    });
}

/// BLS12-377 G1 runs in a twisted Edwards form that is not complete
/// (crates/curves/src/te_map.rs): a point of order 2 without an image, and `P` beside `P + T`
/// in one bucket, are exceptions. The one-shot MSM must still equal arkworks (it sums on the
/// host), a request on prepared bases must say `ExceptionalBases`, and a base without an
/// image whose scalar is zero adds nothing and is no exception.
#[test]
fn bls12_377_g1_exceptions_are_caught() {
    use ark_bls12_377::{Fq, G1Affine, G1Projective};
    type C = Bls12_377G1;
    let mut rng = rng_for::<C>("exceptions");
    let sqrt_m3 = (-Fq::from(3u64)).sqrt().unwrap();
    let x = (Fq::from(1u64) + sqrt_m3) * Fq::from(2u64).inverse().unwrap();
    let t = G1Affine::new_unchecked(x, Fq::from(0u64));
    let n = 33;
    let mut bases: Vec<G1Affine> = (0..n)
        .map(|_| G1Projective::rand(&mut rng).into_affine())
        .collect();
    let mut scalars: Vec<<C as GpuCurve>::Scalar> =
        (0..n).map(|_| UniformRand::rand(&mut rng)).collect();
    let msm = GpuMsm::<C>::new(ctx()).unwrap();
    // Zero scalar: no exception, the right sum.
    bases[7] = t;
    scalars[7] = Zero::zero();
    let want = ark_msm::<C>(&bases, &scalars);
    assert_eq!(msm.msm(&bases, &scalars).unwrap(), want);
    let prepared = msm.prepare(&bases).unwrap();
    let run = |p: &PreparedBases<C>, s: &[<C as GpuCurve>::Scalar]| {
        msm.run(MsmRequest::new(p, s)).and_then(MsmOutput::sum)
    };
    assert_eq!(run(&prepared, &scalars).unwrap(), want);
    // A non-zero scalar on the point without an image.
    scalars[7] = scalars[8];
    let want = ark_msm::<C>(&bases, &scalars);
    assert_eq!(msm.msm(&bases, &scalars).unwrap(), want);
    assert!(matches!(
        run(&prepared, &scalars),
        Err(MsmError::ExceptionalBases)
    ));
    // Folded: its window multiples, made on the GPU from the stored (0, 0, 0), keep the mark.
    let fold = Fold {
        folds: 4,
        window_bits: Some(7),
    };
    let folded = msm.prepare_sets_folded(&[&bases], fold).block_on().unwrap();
    assert!(matches!(
        run(&folded, &scalars),
        Err(MsmError::ExceptionalBases)
    ));
    // P and P +- T with equal scalars: one bucket, and its sum divides by zero (the sign
    // and the point of order 2 chosen where the host's formula says it does).
    let m = zkgpu_curves::TeMap::get();
    let p = bases[8].into_group();
    let q = [
        t,
        G1Affine::new_unchecked(Fq::from(1u64) - x, Fq::from(0u64)),
    ]
    .into_iter()
    .flat_map(|t| [p + t, -(p + t)])
    .find(|q| {
        let s = zkgpu_curves::te_add(&m.to_extended(&p), &m.to_extended(q), m.d + m.d);
        m.from_extended(&s).is_none()
    })
    .unwrap();
    // Only these two scalars non-zero, so that each bucket they reach adds just them.
    bases[7] = G1Projective::rand(&mut rng).into_affine();
    bases[9] = q.into_affine();
    let s = scalars[8];
    scalars.iter_mut().for_each(|x| *x = Zero::zero());
    scalars[8] = s;
    scalars[9] = s;
    let want = ark_msm::<C>(&bases, &scalars);
    assert_eq!(msm.msm(&bases, &scalars).unwrap(), want);
    let prepared = msm.prepare(&bases).unwrap();
    assert!(matches!(
        run(&prepared, &scalars),
        Err(MsmError::ExceptionalBases)
    ));
}

/// Bases prepared (plain and folded) by an engine of one arithmetic serve an engine of another
/// on the same context: every arithmetic keeps the portable Montgomery form, so stored bases
/// are the same bytes whichever made them.
fn check_bases_across_arithmetics<C: GpuCurve>(ctx: &GpuContext)
where
    C::Projective: VariableBaseMSM<MulBase = C::Affine, ScalarField = C::Scalar>,
{
    let wide = GpuMsm::<C>::new(ctx).unwrap();
    let portable = GpuMsm::<C>::new(ctx)
        .unwrap()
        .with_arith(Arith::Portable)
        .unwrap();
    let mut rng = rng_for::<C>("across arithmetics");
    let n = 40;
    let bases = edge_bases::<C>(n, &mut rng);
    let scalars = mixed_scalars::<C>(n, 7, &mut rng);
    let want = ark_msm::<C>(&bases, &scalars);
    let fold = Fold {
        folds: 3,
        window_bits: Some(5),
    };
    for (made, used) in [(&portable, &wide), (&wide, &portable)] {
        let plain = made.prepare(&bases).unwrap();
        let folded = made
            .prepare_sets_folded(&[&bases], fold)
            .block_on()
            .unwrap();
        for prepared in [&plain, &folded] {
            let out = used.run(MsmRequest::new(prepared, &scalars)).unwrap();
            assert_eq!(
                out.sum().unwrap(),
                want,
                "{} {} -> {}",
                C::ID,
                made.arith(),
                used.arith()
            );
        }
    }
}

/// The sizes `check_sizes` runs: around the bucket and chunk edges, fewer for G2 (slow on a
/// software adapter).
fn sizes<C: GpuCurve>() -> &'static [usize] {
    if C::DEGREE == 2 {
        &[1, 2, 3, 31, 32, 33, 128, 129]
    } else {
        &[1, 2, 3, 31, 32, 33, 256, 257, 1000]
    }
}

macro_rules! msm_tests {
    (; $(($curve:ident, $name:ident))*) => {$(
        mod $name {
            use super::*;
            type C = zkgpu_curves::$curve;
            #[test]
            fn sizes_match_arkworks() {
                check_sizes::<C>(ctx(), sizes::<C>());
            }
            #[test]
            fn distributions_match_arkworks() {
                check_distributions::<C>(ctx());
            }
            /// The MSM's kernels in the 64-bit arithmetics of the run: sizes, scalar and
            /// base distributions, and two parts as one MSM (plain and folded bases).
            #[test]
            fn wide_arithmetics_match_arkworks() {
                for a in test_ariths_from_env().into_iter().filter(|&a| a != Arith::Portable) {
                    eprintln!("{a}");
                    let ctx = arith_context(a);
                    assert_eq!(GpuMsm::<C>::new(ctx).unwrap().arith(), a);
                    check_sizes::<C>(ctx, &sizes::<C>()[..7]);
                    check_distributions::<C>(ctx);
                    check_two_parts::<C>(ctx);
                    check_bases_across_arithmetics::<C>(ctx);
                }
            }
            #[test]
            fn windows_and_length_semantics() {
                check_windows_and_semantics::<C>();
            }
            #[test]
            fn bases_in_parts() {
                check_parts::<C>();
            }
            #[test]
            fn two_parts_as_one_msm() {
                check_two_parts::<C>(ctx());
            }
            #[test]
            fn narrow_scalars() {
                check_scalar_bits::<C>();
            }
            #[test]
            fn base_sets_sharing_scalars() {
                check_sets::<C>();
            }
            #[test]
            fn folded_bases() {
                check_folded::<C>();
            }
        }
    )*};
}

zkgpu_curves::for_each_group!(msm_tests);
