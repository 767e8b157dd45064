//! GPU NTTs against ark-poly's `Radix2EvaluationDomain`: both scalar fields, every size up to
//! 2^13 (2^15 for BLS12-381 forward), forward, inverse and coset, random and structured
//! inputs, resizing semantics, batches and the elementwise kernels.

#![allow(clippy::unwrap_used)]

use zkgpu_runtime::{Arith, BlockOn, GpuContext};
use zkgpu_testing::{arith_context, shared_context as ctx, test_ariths_from_env};

use ark_ff::{FftField, Field, UniformRand, Zero};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_limbs::PackedWords;
use zkgpu_ntt::{Direction, Elementwise, GpuNtt, NttError, NttField};

fn rng(seed: u64) -> StdRng {
    eprintln!("seed {seed}");
    StdRng::seed_from_u64(seed)
}

/// The inputs every size is checked on: random, zeros, ones, a single nonzero (at 0 and at the
/// last index), and p - 1 everywhere.
fn inputs<F: NttField>(n: usize, rng: &mut StdRng) -> Vec<Vec<F>> {
    let mut single = vec![F::zero(); n];
    single[0] = F::from(7u64);
    let mut last = vec![F::zero(); n];
    last[n - 1] = F::rand(rng);
    vec![
        (0..n).map(|_| F::rand(rng)).collect(),
        vec![F::zero(); n],
        vec![F::one(); n],
        single,
        last,
        vec![-F::one(); n],
    ]
}

fn domains<F: NttField>(log_n: u32) -> Vec<(&'static str, Radix2EvaluationDomain<F>)> {
    let d = Radix2EvaluationDomain::<F>::new(1 << log_n).unwrap();
    vec![
        ("plain", d),
        ("coset", d.get_coset(F::GENERATOR).unwrap()),
        ("coset 5", d.get_coset(F::from(5u64)).unwrap()),
    ]
}

fn check_sizes<F: NttField>(max_log: u32, seed: u64) {
    check_sizes_on::<F>(ctx(), max_log, seed);
}

fn check_sizes_on<F: NttField>(ctx: &GpuContext, max_log: u32, seed: u64) {
    let ntt = GpuNtt::<F>::new(ctx);
    let mut rng = rng(seed);
    for log_n in 0..=max_log {
        let n = 1usize << log_n;
        for (name, d) in domains::<F>(log_n) {
            for (i, v) in inputs::<F>(n, &mut rng).into_iter().enumerate() {
                let mut want = v.clone();
                d.fft_in_place(&mut want);
                let mut got = v.clone();
                ntt.fft(&d, &mut got).unwrap();
                assert!(got == want, "fft 2^{log_n} {name} input {i}");
                let mut want = v.clone();
                d.ifft_in_place(&mut want);
                let mut got = v;
                ntt.ifft(&d, &mut got).unwrap();
                assert!(got == want, "ifft 2^{log_n} {name} input {i}");
            }
        }
    }
}

#[test]
fn bls12_381_fr_every_size() {
    check_sizes::<ark_bls12_381::Fr>(13, 1);
}

#[test]
fn bls12_377_fr_every_size() {
    check_sizes::<ark_bls12_377::Fr>(13, 2);
}

#[test]
fn bn254_fr_every_size() {
    check_sizes::<ark_bn254::Fr>(13, 3);
}

/// The transforms and elementwise kernels in the 64-bit arithmetics of the run, every field.
#[test]
fn wide_arithmetics_match_arkworks() {
    for a in test_ariths_from_env()
        .into_iter()
        .filter(|&a| a != Arith::Portable)
    {
        eprintln!("{a}");
        let ctx = arith_context(a);
        check_sizes_on::<ark_bls12_381::Fr>(ctx, 10, 11);
        check_sizes_on::<ark_bls12_377::Fr>(ctx, 10, 12);
        check_sizes_on::<ark_bn254::Fr>(ctx, 10, 13);
        check_batches(GpuNtt::<ark_bls12_381::Fr>::new(ctx), 14);
        check_batches(GpuNtt::<ark_bn254::Fr>::new(ctx), 15);
    }
}

#[test]
fn larger_sizes_round_trip() {
    // Three passes (2^19 needs them; 2^15 already takes two): forward against ark-poly, and
    // the inverse brings the input back.
    type F = ark_bls12_381::Fr;
    let ntt = GpuNtt::<F>::new(ctx());
    let mut rng = rng(3);
    for log_n in [15u32, 19] {
        let d = Radix2EvaluationDomain::<F>::new(1 << log_n).unwrap();
        let v: Vec<F> = (0..1usize << log_n).map(|_| F::rand(&mut rng)).collect();
        let mut got = v.clone();
        ntt.fft(&d, &mut got).unwrap();
        if log_n == 15 {
            let mut want = v.clone();
            d.fft_in_place(&mut want);
            assert!(got == want, "fft 2^{log_n}");
        } else {
            // A few evaluations directly, so the round trip below cannot pass on a GPU that
            // did nothing: X[k] = sum_j v_j w^(j k).
            for k in [0usize, 1, 12345, (1 << log_n) - 1] {
                let w = d.group_gen.pow([k as u64]);
                let mut x = F::zero();
                for c in v.iter().rev() {
                    x = x * w + c;
                }
                assert!(got[k] == x, "fft 2^{log_n} at {k}");
            }
        }
        ntt.ifft(&d, &mut got).unwrap();
        assert!(got == v, "ifft(fft) 2^{log_n}");
    }
}

#[test]
fn resizing_matches_arkworks() {
    type F = ark_bls12_377::Fr;
    let ntt = GpuNtt::<F>::new(ctx());
    let mut rng = rng(4);
    let d = Radix2EvaluationDomain::<F>::new(64).unwrap();
    let c = d.get_coset(F::GENERATOR).unwrap();
    for len in [0usize, 1, 3, 31, 33, 64, 65, 100] {
        for dom in [d, c] {
            let v: Vec<F> = (0..len).map(|_| F::rand(&mut rng)).collect();
            let (mut want, mut got) = (v.clone(), v.clone());
            dom.fft_in_place(&mut want);
            ntt.fft(&dom, &mut got).unwrap();
            assert!(got == want, "fft of {len} elements");
            let (mut want, mut got) = (v.clone(), v);
            dom.ifft_in_place(&mut want);
            ntt.ifft(&dom, &mut got).unwrap();
            assert!(got == want, "ifft of {len} elements");
        }
    }
}

#[test]
fn batches_and_elementwise_kernels() {
    check_batches(GpuNtt::<ark_bls12_381::Fr>::new(ctx()), 5);
}

/// `write_rows` fills every vector of a batch row by row, in one pass: on one page, across
/// pages (vectors that start inside a page and cross into the next, a vector of one and a
/// half pages, vectors of exactly one page), and a single row; the values land where
/// `download` finds them.
#[test]
fn rows_written_into_staging() {
    type F = ark_bls12_381::Fr;
    let value = |v: usize, row: usize| F::from((v * 1_000_003 + row) as u64) - F::from(5u64);
    for (page_log, len, batch) in [
        (22u32, 1000usize, 3usize),
        (10, 700, 3),
        (10, 1536, 2),
        (10, 1024, 3),
        (10, 1, 2),
    ] {
        let ntt = GpuNtt::<F>::new(ctx()).with_max_page_log(page_log);
        let dv = ntt.zeroed(len, batch).unwrap();
        ntt.write_rows(&dv, |row, blocks| {
            assert_eq!(blocks.len(), batch);
            for (v, block) in blocks.iter_mut().enumerate() {
                assert_eq!(block.len() % 8, 0);
                for (j, w) in block.as_chunks_mut::<8>().0.iter_mut().enumerate() {
                    value(v, row + j).write_packed(w);
                }
            }
        })
        .unwrap();
        for v in 0..batch {
            let want: Vec<F> = (0..len).map(|row| value(v, row)).collect();
            assert!(
                ntt.download(&dv, v).block_on().unwrap() == want,
                "vector {v} of {batch} x {len} in pages of 2^{page_log}"
            );
        }
    }
}

/// Batches paged across three bindings (one vector per page of 2^10 elements), a vector of
/// two pages transformed across the page boundary, vectors that straddle a page boundary in
/// the elementwise kernels and in uploads and downloads, and a batch too large for the
/// kernels' three bindings.
#[test]
fn data_paged_across_bindings() {
    type F = ark_bls12_381::Fr;
    let paged = || GpuNtt::<F>::new(ctx()).with_max_page_log(10);
    assert_eq!(paged().page_log(), 10);
    check_batches(paged(), 6);
    let ntt = paged();
    let mut rng = rng(7);
    for log_n in [11u32, 10] {
        for (name, d) in domains::<F>(log_n) {
            let v: Vec<F> = (0..1usize << log_n).map(|_| F::rand(&mut rng)).collect();
            let mut dv = ntt.upload(&v).unwrap();
            assert_eq!(dv.pages().len(), 1 << (log_n - 10));
            for dir in [Direction::Forward, Direction::Inverse] {
                let mut want = v.clone();
                match dir {
                    Direction::Forward => d.fft_in_place(&mut want),
                    Direction::Inverse => d.ifft_in_place(&mut want),
                }
                ntt.write(&dv, 0, &v).unwrap();
                ntt.transform(&mut dv, &d, dir).block_on().unwrap();
                assert!(
                    ntt.download(&dv, 0).block_on().unwrap() == want,
                    "2^{log_n} {name} {dir:?} in pages of 2^10"
                );
            }
        }
    }
    // 3 x 700 elements: vector 1 is 700..1400, across the boundary at 1024.
    let vs: Vec<Vec<F>> = (0..3)
        .map(|_| (0..700).map(|_| F::rand(&mut rng)).collect())
        .collect();
    let dv = ntt
        .upload_batch(&vs.iter().map(Vec::as_slice).collect::<Vec<_>>())
        .unwrap();
    assert_eq!(dv.pages().len(), 3);
    for (i, v) in vs.iter().enumerate() {
        assert!(
            ntt.download(&dv, i).block_on().unwrap() == *v,
            "round trip {i}"
        );
    }
    let mut enc = ntt.encoder();
    pollster::block_on(ntt.record_elementwise(&mut enc, &dv, Elementwise::Mul { a: 2, b: 1 }))
        .unwrap();
    pollster::block_on(ntt.record_elementwise(&mut enc, &dv, Elementwise::Sub { a: 1, b: 0 }))
        .unwrap();
    ntt.submit(enc).unwrap();
    let prod: Vec<F> = vs[2].iter().zip(&vs[1]).map(|(x, y)| *x * y).collect();
    let diff: Vec<F> = vs[1].iter().zip(&vs[0]).map(|(x, y)| *x - y).collect();
    assert!(
        ntt.download(&dv, 2).block_on().unwrap() == prod,
        "mul across pages"
    );
    assert!(
        ntt.download(&dv, 1).block_on().unwrap() == diff,
        "sub across pages"
    );
    // Four pages of 2^10 do not fit the kernels' three bindings: a typed error.
    assert!(matches!(ntt.zeroed(1 << 12, 1), Err(NttError::Shape(_))));
    assert!(matches!(ntt.zeroed(1 << 10, 4), Err(NttError::Shape(_))));
}

fn check_batches<F: NttField>(ntt: GpuNtt<F>, seed: u64) {
    let mut rng = rng(seed);
    let n = 1024;
    let d = Radix2EvaluationDomain::<F>::new(n).unwrap();
    let coset = d.get_coset(F::GENERATOR).unwrap();
    let vs: Vec<Vec<F>> = (0..3)
        .map(|_| (0..n).map(|_| F::rand(&mut rng)).collect())
        .collect();
    let mut dv = ntt
        .upload_batch(&vs.iter().map(Vec::as_slice).collect::<Vec<_>>())
        .unwrap();
    // All three through ifft then coset fft; then only the first two through one more
    // inverse (an odd pass count leaves the third in the other buffer: it must be copied).
    let mut enc = ntt.encoder();
    pollster::block_on(ntt.record_transform(&mut enc, &mut dv, &d, Direction::Inverse, None))
        .unwrap();
    pollster::block_on(ntt.record_transform(&mut enc, &mut dv, &coset, Direction::Forward, None))
        .unwrap();
    ntt.submit(enc).unwrap();
    let mut want: Vec<Vec<F>> = vs.clone();
    for w in &mut want {
        d.ifft_in_place(w);
        coset.fft_in_place(w);
    }
    for (i, w) in want.iter().enumerate() {
        assert!(ntt.download(&dv, i).block_on().unwrap() == *w, "vector {i}");
    }
    let small = Radix2EvaluationDomain::<F>::new(n).unwrap();
    let mut enc = ntt.encoder();
    pollster::block_on(ntt.record_transform(
        &mut enc,
        &mut dv,
        &small,
        Direction::Inverse,
        Some(2),
    ))
    .unwrap();
    ntt.submit(enc).unwrap();
    for w in &mut want[..2] {
        small.ifft_in_place(w);
    }
    for (i, w) in want.iter().enumerate() {
        assert!(
            ntt.download(&dv, i).block_on().unwrap() == *w,
            "vector {i} after a partial batch"
        );
    }

    // Elementwise operations, one after another in one submission.
    let c = F::rand(&mut rng);
    let mut enc = ntt.encoder();
    for op in [
        Elementwise::Mul { a: 0, b: 1 },
        Elementwise::Sub { a: 1, b: 2 },
        Elementwise::Scale { a: 2, c },
        Elementwise::MulSubScale {
            a: 0,
            b: 1,
            d: 2,
            c,
        },
    ] {
        pollster::block_on(ntt.record_elementwise(&mut enc, &dv, op)).unwrap();
    }
    ntt.submit(enc).unwrap();
    let (a, b, cc) = (&want[0], &want[1], &want[2]);
    let a1: Vec<F> = a.iter().zip(b).map(|(x, y)| *x * y).collect();
    let b1: Vec<F> = b.iter().zip(cc).map(|(x, y)| *x - y).collect();
    let c1: Vec<F> = cc.iter().map(|x| *x * c).collect();
    let a2: Vec<F> = a1
        .iter()
        .zip(&b1)
        .zip(&c1)
        .map(|((x, y), z)| (*x * y - z) * c)
        .collect();
    assert!(ntt.download(&dv, 1).block_on().unwrap() == b1, "sub");
    assert!(ntt.download(&dv, 2).block_on().unwrap() == c1, "scale");
    assert!(
        ntt.download(&dv, 0).block_on().unwrap() == a2,
        "mul, then mul-sub-scale"
    );
}

#[test]
fn shape_errors_are_typed() {
    type F = ark_bls12_381::Fr;
    let ntt = GpuNtt::<F>::new(ctx());
    let d = Radix2EvaluationDomain::<F>::new(16).unwrap();
    let mut dv = ntt.upload(&[F::zero(); 8]).unwrap();
    let e = ntt.transform(&mut dv, &d, Direction::Forward).block_on();
    assert!(matches!(e, Err(NttError::Shape(_))), "{e:?}");
    assert!(matches!(
        ntt.upload_batch(&[&[F::zero(); 2], &[F::zero(); 3]]),
        Err(NttError::Shape(_))
    ));
    assert!(matches!(
        ntt.download(&dv, 1).block_on(),
        Err(NttError::Shape(_))
    ));
}

#[test]
fn many_small_passes() {
    // Passes of 1 to 4 bits: up to 10 passes, every stride and twist pattern.
    type F = ark_bls12_377::Fr;
    let mut rng = rng(6);
    for bits in 1..=4 {
        let ntt = GpuNtt::<F>::new(ctx()).with_max_pass_bits(bits);
        for log_n in [5u32, 10] {
            for (name, d) in domains::<F>(log_n) {
                let v: Vec<F> = (0..1usize << log_n).map(|_| F::rand(&mut rng)).collect();
                let (mut want, mut got) = (v.clone(), v.clone());
                d.fft_in_place(&mut want);
                ntt.fft(&d, &mut got).unwrap();
                assert!(got == want, "fft 2^{log_n} {name}, {bits}-bit passes");
                let (mut want, mut got) = (v.clone(), v);
                d.ifft_in_place(&mut want);
                ntt.ifft(&d, &mut got).unwrap();
                assert!(got == want, "ifft 2^{log_n} {name}, {bits}-bit passes");
            }
        }
    }
}

#[test]
fn twists_from_two_tables() {
    // Every twist from the two small tables (the path of transforms past the full table's
    // limit), and the full table at a size where a plain inverse has two twisted passes (its
    // first scaled by 1/N, from the table; the second from the two tables).
    type F = ark_bls12_381::Fr;
    let mut rng = rng(7);
    for (twist_log, bits, logs) in [(0u32, 8u32, &[10u32, 12, 19][..]), (31, 4, &[12][..])] {
        let ntt = GpuNtt::<F>::new(ctx())
            .with_max_pass_bits(bits)
            .with_max_twist_log(twist_log);
        for &log_n in logs {
            for (name, d) in domains::<F>(log_n) {
                let v: Vec<F> = (0..1usize << log_n).map(|_| F::rand(&mut rng)).collect();
                let (mut want, mut got) = (v.clone(), v.clone());
                d.fft_in_place(&mut want);
                ntt.fft(&d, &mut got).unwrap();
                assert!(
                    got == want,
                    "fft 2^{log_n} {name}, twist table to 2^{twist_log}"
                );
                let (mut want, mut got) = (v.clone(), v);
                d.ifft_in_place(&mut want);
                ntt.ifft(&d, &mut got).unwrap();
                assert!(
                    got == want,
                    "ifft 2^{log_n} {name}, twist table to 2^{twist_log}"
                );
            }
        }
    }
}

/// Uploads and downloads through the staging pieces: a vector of 2^18 elements (8 MiB: one
/// pooled readback piece) and one of 2^18 + 5 (a pooled piece and a small fresh one),
/// downloaded repeatedly with different contents, so a reused staging buffer that still held
/// the previous download would show; and one of 3 x 2^18 + 1 elements (four pieces, three of
/// them from the pool at once).
#[test]
fn transfers_through_reused_staging() {
    let ntt = GpuNtt::<ark_bls12_381::Fr>::new(ctx());
    let mut rng = rng(77);
    for n in [1 << 18, (1 << 18) + 5, 3 * (1 << 18) + 1] {
        let dv = ntt.zeroed(n, 1).unwrap();
        for round in 0..3 {
            let values: Vec<ark_bls12_381::Fr> =
                (0..n).map(|_| ark_bls12_381::Fr::rand(&mut rng)).collect();
            ntt.write(&dv, 0, &values).unwrap();
            assert_eq!(
                ntt.download(&dv, 0).block_on().unwrap(),
                values,
                "n = {n}, round {round}"
            );
        }
    }
}

/// A transform and the download of its result in one submission (`record_download`,
/// `submit_indexed`, `finish_download`, as the Groth16 witness map does), for both vectors of
/// a batch, against ark-poly; a vector index past the batch is an error.
#[test]
fn download_in_the_transforms_submission() {
    type F = ark_bls12_381::Fr;
    let ntt = GpuNtt::<F>::new(ctx());
    let mut rng = rng(91);
    let n = 1 << 10;
    let d = Radix2EvaluationDomain::<F>::new(n).unwrap();
    let vs = inputs::<F>(n, &mut rng);
    let (v0, v1): (Vec<F>, Vec<F>) = (vs[0].clone(), (0..n).map(|_| F::rand(&mut rng)).collect());
    let mut dv = ntt.upload_batch(&[&v0, &v1]).unwrap();
    let mut enc = ntt.encoder();
    pollster::block_on(ntt.record_transform(&mut enc, &mut dv, &d, Direction::Forward, None))
        .unwrap();
    let p0 = ntt.record_download(&mut enc, &dv, 0).unwrap();
    let p1 = ntt.record_download(&mut enc, &dv, 1).unwrap();
    assert!(matches!(
        ntt.record_download(&mut enc, &dv, 2),
        Err(NttError::Shape(_))
    ));
    let (_, submission) = ntt.submit_indexed(enc).unwrap();
    let got0 = pollster::block_on(ntt.finish_download(p0, submission.clone())).unwrap();
    let got1 = pollster::block_on(ntt.finish_download(p1, submission)).unwrap();
    assert_eq!(got0, d.fft(&v0));
    assert_eq!(got1, d.fft(&v1));
}

/// ark-poly's domains have public fields and transform with their own generator: a domain of
/// a size already transformed, with its generators swapped (another primitive root) or
/// another offset, is transformed with its own, not with a plan cached for the canonical one.
fn domains_keyed_by_their_elements<F: NttField>(seed: u64) {
    let ntt = GpuNtt::<F>::new(ctx());
    let mut rng = rng(seed);
    for log_n in [3u32, 10] {
        let n = 1usize << log_n;
        let canonical = Radix2EvaluationDomain::<F>::new(n).unwrap();
        let mut swapped = canonical;
        std::mem::swap(&mut swapped.group_gen, &mut swapped.group_gen_inv);
        let coset = canonical.get_coset(F::from(3u64)).unwrap();
        let mut coset_swapped = coset;
        std::mem::swap(
            &mut coset_swapped.group_gen,
            &mut coset_swapped.group_gen_inv,
        );
        for (name, d) in [
            ("canonical", canonical),
            ("swapped", swapped),
            ("coset", coset),
            ("coset swapped", coset_swapped),
            ("canonical again", canonical),
        ] {
            let v: Vec<F> = (0..n).map(|_| F::rand(&mut rng)).collect();
            let mut want = v.clone();
            d.fft_in_place(&mut want);
            let mut got = v.clone();
            ntt.fft(&d, &mut got).unwrap();
            assert!(got == want, "fft 2^{log_n} {name}");
            let mut want = v.clone();
            d.ifft_in_place(&mut want);
            let mut got = v;
            ntt.ifft(&d, &mut got).unwrap();
            assert!(got == want, "ifft 2^{log_n} {name}");
        }
    }
}

#[test]
fn bls12_381_domains_keyed_by_their_elements() {
    domains_keyed_by_their_elements::<ark_bls12_381::Fr>(61);
}

#[test]
fn bls12_377_domains_keyed_by_their_elements() {
    domains_keyed_by_their_elements::<ark_bls12_377::Fr>(62);
}

#[test]
fn bn254_domains_keyed_by_their_elements() {
    domains_keyed_by_their_elements::<ark_bn254::Fr>(63);
}

/// `prepare` on plain and coset domains, then transforms of them (and of another size) on a
/// fresh engine: each equal to ark-poly's; `prepare` itself leaves no trace in the results.
#[test]
fn prepared_domains_match_arkworks() {
    type F = ark_bls12_381::Fr;
    let ntt = GpuNtt::<F>::new(ctx());
    let mut rng = rng(91);
    for (name, domain) in domains::<F>(9) {
        ntt.prepare(&domain).unwrap();
        let values: Vec<F> = (0..domain.size()).map(|_| F::rand(&mut rng)).collect();
        let (mut got, mut want) = (values.clone(), values.clone());
        ntt.fft(&domain, &mut got).unwrap();
        domain.fft_in_place(&mut want);
        assert!(got == want, "{name}: fft after prepare");
        ntt.ifft(&domain, &mut got).unwrap();
        assert!(got == values, "{name}: ifft after prepare");
    }
    let other = Radix2EvaluationDomain::<F>::new(1 << 5).unwrap();
    let values: Vec<F> = (0..32).map(|_| F::rand(&mut rng)).collect();
    let (mut got, mut want) = (values.clone(), values);
    ntt.fft(&other, &mut got).unwrap();
    other.fft_in_place(&mut want);
    assert!(got == want, "an unprepared size after prepare");
}
