//! The service end to end on the GPU (lavapipe here): keys registered, 20 jobs of the small
//! circuit (witnesses as `.wtns` and as JSON) and two of the Merkle one from concurrent
//! clients, every proof verified against the key's verifying key for the witness's public
//! signals; a BLS12-381 key's jobs on the same lanes, and a witness of the other curve
//! refused; a witness that does not satisfy the circuit fails with its code and the worker
//! goes on serving; shutdown lets the lane finish.

#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use ark_bls12_381::Bls12_381;
use ark_bn254::{Bn254, Fr};
use ark_ff::PrimeField;
use common::{fixture, sqlite_url, temp_dir};
use zkgpu_circom::CircomCurve;
use zkgpu_runtime::DeviceSet;
use zkgpu_service::{Client, Limits, ServeConfig, Tokens, WorkerConfig, start};

/// The proof of `job` checked against `zkey`'s verifying key and `witness`'s public signals.
fn check_proof<E: CircomCurve>(c: &Client, job: &str, zkey: &[u8], witness: &[E::ScalarField]) {
    let done = c.wait(job).unwrap();
    assert_eq!(done.state, "done", "{done:?}");
    let out = c.proof(job).unwrap();
    let proof = zkgpu_circom::read_proof_json::<E>(&out.proof.to_string()).unwrap();
    let public = zkgpu_circom::read_public_json(&out.public.to_string()).unwrap();
    let key = zkgpu_circom::read_zkey::<E>(zkey).unwrap();
    assert_eq!(public, witness[1..=key.num_public].to_vec());
    assert!(zkgpu_circom::verify(&key.proving_key.vk, &proof, &public).unwrap());
}

fn witness_json<F: PrimeField>(values: &[F]) -> String {
    let items: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
    format!("[{}]", items.join(","))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn proofs_through_the_service() {
    let devices = DeviceSet::from_contexts(vec![zkgpu_testing::new_context()]).unwrap();
    let cfg = ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        db: sqlite_url("gpu"),
        data: temp_dir("gpu-data"),
        tokens: Tokens::new(["t"]),
        limits: Limits::default(),
        worker: WorkerConfig {
            cache_dir: Some(temp_dir("gpu-cache")),
            ..WorkerConfig::default()
        },
    };
    let running = start(cfg, Some(&devices)).await.unwrap();
    let base = format!("http://{}", running.addr);
    tokio::task::spawn_blocking(move || clients(&base))
        .await
        .unwrap();
    running.shutdown().await.unwrap();
}

fn clients(base: &str) {
    let small = fixture("multiplier.zkey");
    let small_w = zkgpu_circom::read_wtns::<Fr>(&fixture("multiplier.wtns")).unwrap();
    let c = Client::new(base, Some("t".into()));
    let key = c.register_key(&small).unwrap();
    // A witness that does not satisfy the circuit (its output changed): refused by the
    // proof's own check, the job failed with its code.
    let mut wrong = small_w.clone();
    wrong[1] += Fr::from(1u64);
    let bad = c.submit_json(&key.id, &witness_json(&wrong)).unwrap();
    // 20 jobs from 4 clients at once, half as JSON.
    std::thread::scope(|s| {
        for t in 0..4 {
            let (small, small_w, key) = (&small, &small_w, &key.id);
            s.spawn(move || {
                let c = Client::new(base, Some("t".into()));
                let wtns = zkgpu_circom::write_wtns(small_w);
                let jobs: Vec<String> = (0..5)
                    .map(|i| {
                        let j = if (t + i) % 2 == 0 {
                            c.submit(key, &wtns)
                        } else {
                            c.submit_json(key, &witness_json(small_w))
                        };
                        j.unwrap().id
                    })
                    .collect();
                for j in jobs {
                    check_proof::<Bn254>(&c, &j, small, small_w);
                }
            });
        }
    });
    let failed = c.wait(&bad.id).unwrap();
    assert_eq!(failed.state, "failed");
    assert_eq!(failed.error_code.as_deref(), Some("not_satisfied"));
    assert_eq!(failed.attempts, 1);
    // The Merkle circuit (2^12): the worker went on after the failure; a second key.
    let merkle = fixture("merkle.zkey");
    let merkle_w = zkgpu_circom::read_wtns::<Fr>(&fixture("merkle.wtns")).unwrap();
    let mkey = c.register_key(&merkle).unwrap();
    let jobs: Vec<String> = (0..2)
        .map(|_| c.submit(&mkey.id, &fixture("merkle.wtns")).unwrap().id)
        .collect();
    for j in &jobs {
        check_proof::<Bn254>(&c, j, &merkle, &merkle_w);
    }
    // Proofs of the same witness differ (fresh randomness each time).
    assert_ne!(
        c.proof(&jobs[0]).unwrap().proof,
        c.proof(&jobs[1]).unwrap().proof
    );
    let job = c.job(&jobs[0], Duration::ZERO).unwrap();
    assert!(job.prove_ms.unwrap() > 0.0);
    bls12_381_jobs(&c);
}

/// A BLS12-381 key on the same lanes: registered as such, its jobs (a `.wtns` and JSON)
/// proved and verified; a BN254 witness refused at submission.
fn bls12_381_jobs(c: &Client) {
    let zkey = fixture("merkle_bls12381.zkey");
    let wtns = fixture("merkle_bls12381.wtns");
    let values = zkgpu_circom::read_wtns::<ark_bls12_381::Fr>(&wtns).unwrap();
    let key = c.register_key(&zkey).unwrap();
    assert_eq!(key.curve, "bls12-381");
    let jobs = [
        c.submit(&key.id, &wtns).unwrap().id,
        c.submit_json(&key.id, &witness_json(&values)).unwrap().id,
    ];
    for j in &jobs {
        check_proof::<Bls12_381>(c, j, &zkey, &values);
    }
    let e = c.submit(&key.id, &fixture("merkle.wtns")).unwrap_err();
    assert_eq!(e.code.as_str(), "invalid_witness", "{e}");
}

/// A bounded loopback load: 200 jobs of the small circuit from 8 clients, every proof
/// checked; throughput and latency percentiles printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn load_of_200_jobs_from_8_clients() {
    let devices = DeviceSet::from_contexts(vec![zkgpu_testing::new_context()]).unwrap();
    let cfg = ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        db: sqlite_url("load"),
        data: temp_dir("load-data"),
        tokens: Tokens::default(),
        limits: Limits::default(),
        worker: WorkerConfig::default(),
    };
    let running = start(cfg, Some(&devices)).await.unwrap();
    let base = format!("http://{}", running.addr);
    let report = tokio::task::spawn_blocking(move || {
        let c = Client::new(&base, None);
        let plan = zkgpu_service::load::LoadPlan {
            jobs: 200,
            clients: 8,
        };
        zkgpu_service::load::run(
            &c,
            &fixture("multiplier.zkey"),
            &fixture("multiplier.wtns"),
            &plan,
        )
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(report.jobs, 200);
    #[allow(clippy::print_stdout)]
    {
        println!(
            "load: {} jobs in {:.2} s, {:.1} proofs/s; latency p50 {:?} p90 {:?} p99 {:?}; prover p50 {:.1} ms",
            report.jobs,
            report.wall.as_secs_f64(),
            report.throughput(),
            report.latency(0.5),
            report.latency(0.9),
            report.latency(0.99),
            report.prove_ms(0.5)
        );
    }
    running.shutdown().await.unwrap();
}
