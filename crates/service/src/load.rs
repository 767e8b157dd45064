//! A load generator: jobs of one key and witness from concurrent clients, every proof
//! checked against the key's verifying key, with throughput and latency percentiles (what
//! `zkgpu load` prints, and what the service's tests run against loopback).

use std::time::{Duration, Instant};

use ark_bls12_381::Bls12_381;
use ark_bn254::Bn254;
use ark_groth16::{Groth16, PreparedVerifyingKey};
use zkgpu_circom::{CircomCurve, Curve};

use crate::client::Client;
use crate::error::{ErrorCode, Result, ServiceError};

/// What to send.
#[derive(Clone, Debug)]
pub struct LoadPlan {
    /// Jobs in all.
    pub jobs: usize,
    /// Clients sending at once (each submits, waits, checks, then submits its next).
    pub clients: usize,
}

/// What it measured.
#[derive(Clone, Debug)]
pub struct LoadReport {
    /// Jobs done and checked.
    pub jobs: usize,
    /// Wall time from the first submission to the last proof checked.
    pub wall: Duration,
    /// Submission to proof fetched, per job, sorted.
    pub latencies: Vec<Duration>,
    /// The workers' prover time per job, sorted (ms).
    pub prove_ms: Vec<f64>,
    /// The submission's request per job (upload, checks, witness stored, job queued), sorted
    /// (ms, the client's clock).
    pub submit_ms: Vec<f64>,
    /// Queued to ended per job (the claim's wait, reading the witness, the proof,
    /// recording), sorted (ms, the database's clock).
    pub service_ms: Vec<f64>,
}

impl LoadReport {
    /// Proofs a second.
    pub fn throughput(&self) -> f64 {
        self.jobs as f64 / self.wall.as_secs_f64()
    }

    /// The latency at quantile `q` (0 to 1).
    pub fn latency(&self, q: f64) -> Duration {
        quantile(&self.latencies, q).unwrap_or_default()
    }

    /// The workers' prover time at quantile `q`, in ms.
    pub fn prove_ms(&self, q: f64) -> f64 {
        quantile(&self.prove_ms, q).unwrap_or_default()
    }

    /// The submission's request time at quantile `q`, in ms.
    pub fn submit_ms(&self, q: f64) -> f64 {
        quantile(&self.submit_ms, q).unwrap_or_default()
    }

    /// Queued to ended at quantile `q`, in ms.
    pub fn service_ms(&self, q: f64) -> f64 {
        quantile(&self.service_ms, q).unwrap_or_default()
    }
}

fn quantile<T: Copy>(sorted: &[T], q: f64) -> Option<T> {
    let i = ((sorted.len() as f64 - 1.0) * q.clamp(0.0, 1.0)).round() as usize;
    sorted.get(i).copied()
}

/// Runs `plan` against the server of `client`: registers `zkey` (BN254 or BLS12-381), sends
/// `wtns` `plan.jobs` times, and checks each proof against the key and the witness's public
/// signals.
pub fn run(client: &Client, zkey: &[u8], wtns: &[u8], plan: &LoadPlan) -> Result<LoadReport> {
    match zkgpu_circom::zkey_curve(zkey).map_err(ServiceError::of_key)? {
        Curve::Bn254 => run_as::<Bn254>(client, zkey, wtns, plan),
        Curve::Bls12_381 => run_as::<Bls12_381>(client, zkey, wtns, plan),
    }
}

fn run_as<E: CircomCurve>(
    client: &Client,
    zkey: &[u8],
    wtns: &[u8],
    plan: &LoadPlan,
) -> Result<LoadReport> {
    let key = zkgpu_circom::read_zkey::<E>(zkey).map_err(ServiceError::of_key)?;
    let values =
        zkgpu_circom::read_wtns::<E::ScalarField>(wtns).map_err(ServiceError::of_witness)?;
    let public = values
        .get(1..=key.num_public)
        .ok_or_else(|| ServiceError::new(ErrorCode::WitnessMismatch, "witness too short"))?
        .to_vec();
    let pvk = ark_groth16::prepare_verifying_key(&key.proving_key.vk);
    let id = client.register_key(zkey)?.id;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let started = Instant::now();
    let per_client: Vec<Result<Vec<JobTimes>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..plan.clients.max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    while next.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < plan.jobs {
                        out.push(one(client, &id, wtns, &pvk, &public)?);
                    }
                    Ok(out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(ServiceError::new(
                        ErrorCode::Internal,
                        "a client thread panicked",
                    ))
                })
            })
            .collect()
    });
    let wall = started.elapsed();
    let mut times = Vec::new();
    for r in per_client {
        times.extend(r?);
    }
    let sorted = |f: fn(&JobTimes) -> f64| {
        let mut v: Vec<f64> = times.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let mut latencies: Vec<Duration> = times.iter().map(|t| t.latency).collect();
    latencies.sort();
    Ok(LoadReport {
        jobs: latencies.len(),
        wall,
        latencies,
        prove_ms: sorted(|t| t.prove_ms),
        submit_ms: sorted(|t| t.submit_ms),
        service_ms: sorted(|t| t.service_ms),
    })
}

/// One job's times.
struct JobTimes {
    latency: Duration,
    submit_ms: f64,
    service_ms: f64,
    prove_ms: f64,
}

/// One job: submitted, waited for, fetched, checked.
fn one<E: CircomCurve>(
    c: &Client,
    key: &str,
    wtns: &[u8],
    pvk: &PreparedVerifyingKey<E>,
    public: &[E::ScalarField],
) -> Result<JobTimes> {
    let t = Instant::now();
    let job = c.submit(key, wtns)?;
    let submit_ms = t.elapsed().as_secs_f64() * 1e3;
    let done = c.wait(&job.id)?;
    if done.state != "done" {
        return Err(ServiceError::new(
            ErrorCode::Internal,
            format!("job {} {}: {:?}", job.id, done.state, done.error_message),
        ));
    }
    let out = c.proof(&job.id)?;
    let latency = t.elapsed();
    let bad = |what: String| ServiceError::new(ErrorCode::Internal, what);
    let proof = zkgpu_circom::read_proof_json::<E>(&out.proof.to_string())
        .map_err(|e| bad(e.to_string()))?;
    let got = zkgpu_circom::read_public_json::<E::ScalarField>(&out.public.to_string())
        .map_err(|e| bad(e.to_string()))?;
    let fine = got == public
        && Groth16::<E>::verify_proof(pvk, &proof, public).map_err(|e| bad(e.to_string()))?;
    if !fine {
        return Err(bad(format!("job {}: the proof does not verify", job.id)));
    }
    Ok(JobTimes {
        latency,
        submit_ms,
        service_ms: (done.updated_ms - done.created_ms) as f64,
        prove_ms: done.prove_ms.unwrap_or(0.0),
    })
}
