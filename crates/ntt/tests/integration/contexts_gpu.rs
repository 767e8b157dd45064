//! Device vectors and command encoders of one GPU context given to an engine of another: a
//! typed error before anything is recorded, and both engines still transform their own
//! vectors as ark-poly does.

#![allow(clippy::unwrap_used)]

use ark_bls12_381::Fr;
use ark_ff::UniformRand;
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_ntt::{Direction, Elementwise, GpuNtt};
use zkgpu_runtime::BlockOn;
use zkgpu_testing::assert_foreign;

#[test]
fn vectors_of_another_context_are_refused() {
    let [a, b] = zkgpu_testing::shared_contexts();
    let (na, nb) = (GpuNtt::<Fr>::new(a), GpuNtt::<Fr>::new(b));
    let mut rng = StdRng::seed_from_u64(72);
    let n = 1 << 10;
    let domain = Radix2EvaluationDomain::<Fr>::new(n).unwrap();
    let values: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
    let mut want = values.clone();
    domain.fft_in_place(&mut want);

    let mut on_a = na.upload_batch(&[&values]).unwrap();
    assert_eq!(on_a.context(), a.id());
    assert_foreign(
        "transform",
        nb.transform(&mut on_a, &domain, Direction::Forward)
            .block_on(),
    );
    assert_foreign("download", nb.download(&on_a, 0).block_on());
    assert_foreign("write", nb.write(&on_a, 0, &values));
    assert_foreign("write_rows", nb.write_rows(&on_a, |_, _| {}));
    let mut enc = nb.encoder();
    assert_foreign(
        "record_elementwise",
        pollster::block_on(nb.record_elementwise(
            &mut enc,
            &on_a,
            Elementwise::Scale {
                a: 0,
                c: Fr::from(2u64),
            },
        )),
    );
    drop(enc);
    // An encoder of the other context's engine, with this engine's own vectors.
    let mut enc_b = nb.encoder();
    assert_eq!(enc_b.context(), b.id());
    assert_foreign(
        "record_transform",
        pollster::block_on(na.record_transform(
            &mut enc_b,
            &mut on_a,
            &domain,
            Direction::Forward,
            None,
        )),
    );
    assert_foreign(
        "record_elementwise",
        pollster::block_on(na.record_elementwise(
            &mut enc_b,
            &on_a,
            Elementwise::Scale {
                a: 0,
                c: Fr::from(2u64),
            },
        )),
    );
    assert_foreign("record_download", na.record_download(&mut enc_b, &on_a, 0));
    assert_foreign("submit", na.submit(enc_b));

    // Each engine still transforms its own vectors as ark-poly does, and no device reports
    // an error.
    na.transform(&mut on_a, &domain, Direction::Forward)
        .block_on()
        .unwrap();
    assert!(na.download(&on_a, 0).block_on().unwrap() == want);
    let mut got = values.clone();
    nb.fft(&domain, &mut got).unwrap();
    assert!(got == want);
    a.check_device().unwrap();
    b.check_device().unwrap();
}
