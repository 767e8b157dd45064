//! GPU workers: lanes (threads with their own prover; two per device by default) claiming jobs from
//! the queue, renewing its lease while it proves, keeping its most recently used keys
//! prepared on its GPU, and writing the proof (or the failure) under its claim.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ark_bls12_381::Bls12_381;
use ark_bn254::Bn254;
use ark_std::rand::SeedableRng;
use ark_std::rand::rngs::StdRng;
use zkgpu_circom::{CircomError, Curve};
use zkgpu_groth16::PreparedProvingKey;
use zkgpu_runtime::{DeviceSet, GpuContext};

use crate::client::Client;
use crate::curves::{Prepared, Provers, ServiceCurve, Values};
use crate::db::{Claimed, Db};
use crate::error::{ErrorCode, Result, ServiceError};
use crate::events::Events;
use crate::keys::{KeyStore, PartFile};
use crate::metrics::Metrics;
use crate::resident::{Limits, Resident};
use crate::witness::WitnessStore;

/// How workers claim and prove.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// This process's name in the jobs' `worker` column (a lane number is appended).
    pub name: String,
    /// How long a claim holds without a heartbeat (renewed every third of it).
    pub lease: Duration,
    /// Claims a job gets before it is failed (a GPU error or an expired lease is retried).
    pub max_attempts: i64,
    /// How often an idle lane asks the queue when nothing wakes it.
    pub poll: Duration,
    /// Keys each lane keeps prepared on its GPU (the least recently used one goes first).
    pub resident_keys: usize,
    /// GPU bytes a lane's prepared keys may hold together (least recently used out first;
    /// `None`: bounded by `resident_keys` alone). Whatever the bound, a key that runs out of
    /// GPU memory while being prepared is prepared again once the lane's other keys are
    /// dropped, and a proof that runs out of it drops them before the job's next attempt.
    pub resident_bytes: Option<u64>,
    /// Lanes per device: with two, one lane's CPU steps (the witness map's host side,
    /// recording, the next claim) overlap the other's GPU work.
    pub lanes_per_device: usize,
    /// Where prepared keys are cached on disk (`None`: prepared afresh on each start).
    pub cache_dir: Option<PathBuf>,
    /// The prepared-key cache's bound: after a key is written there, the least recently
    /// used files go until the rest fit (`None`: unbounded).
    pub cache_max_bytes: Option<u64>,
    /// How long an ended job's result is kept.
    pub keep: Duration,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            name: default_name(),
            lease: Duration::from_secs(30),
            max_attempts: 3,
            poll: Duration::from_millis(500),
            resident_keys: 4,
            resident_bytes: None,
            lanes_per_device: 2,
            cache_dir: None,
            cache_max_bytes: None,
            keep: Duration::from_secs(24 * 3600),
        }
    }
}

/// `host-pid`.
pub fn default_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "host".into());
    format!("{host}-{}", std::process::id())
}

/// Where a worker reads a job's `.zkey` and witness.
#[derive(Clone, Debug)]
pub enum JobInputs {
    /// The API's data directory (a worker in the API's process, or one sharing its disk).
    Local {
        /// The registered keys.
        keys: KeyStore,
        /// The witnesses of queued and running jobs.
        witnesses: WitnessStore,
    },
    /// The API over HTTP (a worker on another machine; the witness served under its claim).
    Server(Client),
}

impl JobInputs {
    /// The stores of the data directory `data`.
    pub fn local(data: &Path) -> Result<Self> {
        Ok(Self::Local {
            keys: KeyStore::open(data)?,
            witnesses: WitnessStore::open(data)?,
        })
    }

    /// The `.zkey` of `id` as a file: the store's, or downloaded into `scratch` (removed
    /// when the returned value is dropped). Read from there one section at a time.
    fn zkey_file(&self, id: &str, scratch: &Path) -> Result<ZkeyFile> {
        match self {
            Self::Local { keys, .. } => Ok(ZkeyFile {
                path: keys.file(id)?,
                _download: None,
            }),
            Self::Server(c) => {
                let name = format!(".{id}.{}.zkey.part", crate::ids::random_id());
                let download = PartFile::new(scratch.join(name));
                c.zkey_to_file(id, download.path())?;
                Ok(ZkeyFile {
                    path: download.path().to_owned(),
                    _download: Some(download),
                })
            }
        }
    }

    /// The values this process's API checked for `job`, when it still keeps them.
    fn parsed(&self, job: &Claimed) -> Option<Values> {
        match self {
            Self::Local { witnesses, .. } if job.witness.is_none() => {
                witnesses.take_parsed(&job.id)
            }
            _ => None,
        }
    }

    fn witness<'a>(&self, job: &'a Claimed) -> Result<Cow<'a, [u8]>> {
        if let Some(w) = &job.witness {
            return Ok(Cow::Borrowed(w));
        }
        Ok(Cow::Owned(match self {
            Self::Local { witnesses, .. } => witnesses.read(&job.id)?,
            Self::Server(c) => c.witness(&job.id, &job.claim)?,
        }))
    }
}

/// Where a remote worker downloads keys: the cache folder, else the system's temporary one.
fn scratch_dir(cfg: &WorkerConfig) -> std::path::PathBuf {
    cfg.cache_dir.clone().unwrap_or_else(std::env::temp_dir)
}

/// What every lane shares.
#[derive(Debug)]
struct Shared {
    rt: tokio::runtime::Handle,
    db: Db,
    inputs: JobInputs,
    cfg: WorkerConfig,
    events: Events,
    metrics: Arc<Metrics>,
    stop: AtomicBool,
}

/// The running lanes.
#[derive(Debug)]
pub struct Workers {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Workers {
    /// Starts [`WorkerConfig::lanes_per_device`] lanes per device of `devices` (their
    /// database calls on `rt`).
    pub fn start(
        rt: tokio::runtime::Handle,
        db: Db,
        devices: &DeviceSet,
        inputs: JobInputs,
        cfg: WorkerConfig,
        events: Events,
        metrics: Arc<Metrics>,
    ) -> Result<Self> {
        let shared = Arc::new(Shared {
            rt,
            db,
            inputs,
            cfg,
            events,
            metrics,
            stop: AtomicBool::new(false),
        });
        if matches!(shared.inputs, JobInputs::Server(_)) {
            // Key downloads of an earlier worker killed in the middle of one.
            let scratch = scratch_dir(&shared.cfg);
            let gone = crate::keys::sweep_parts(&scratch, crate::keys::STALE_PART, |n| {
                n.starts_with('.') && n.ends_with(".zkey.part")
            });
            if gone > 0 {
                tracing::info!(dir = %scratch.display(), "removed {gone} unfinished key downloads");
            }
        }
        let mut threads = Vec::new();
        let per_device = shared.cfg.lanes_per_device.max(1);
        for (d, ctx) in devices.contexts().iter().enumerate() {
            for l in 0..per_device {
                let (s, ctx, i) = (shared.clone(), ctx.clone(), d * per_device + l);
                let t = std::thread::Builder::new()
                    .name(format!("zkgpu-lane-{i}"))
                    .spawn(move || lane(&s, &ctx, i))
                    .map_err(|e| ServiceError::new(ErrorCode::Internal, e.to_string()))?;
                threads.push(t);
            }
        }
        Ok(Self { shared, threads })
    }

    /// Lanes running.
    pub fn len(&self) -> usize {
        self.threads.len()
    }

    /// Whether no lane runs.
    pub fn is_empty(&self) -> bool {
        self.threads.is_empty()
    }

    /// Stops claiming; each lane finishes the proof it is making, then ends. Blocks until
    /// they have (call it off the async runtime's threads).
    pub fn stop(self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.events.submitted();
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// One lane: claim, prove, record, until stopped.
fn lane(s: &Shared, ctx: &GpuContext, index: usize) {
    let name = format!("{}-{index}", s.cfg.name);
    // BN254's prover at once (a device that cannot run one gets no lane); BLS12-381's when
    // its first key comes.
    let mut provers = Provers::new(ctx);
    if let Err(e) = Bn254::prover(&mut provers) {
        tracing::error!(lane = %name, "no prover on {}: {e}", provers.device());
        return;
    }
    tracing::info!(lane = %name, gpu = %ctx.info().name, "worker lane started");
    let mut resident = Resident::new();
    let mut backoff = Duration::from_millis(100);
    while !s.stop.load(Ordering::SeqCst) {
        match s.rt.block_on(next_job(s, &name)) {
            Ok(Some(job)) => {
                backoff = Duration::from_millis(100);
                run_job(s, &mut provers, &mut resident, job);
            }
            Ok(None) => {}
            Err(e) => {
                // The database is unreachable: back off (up to 10 s) and try again.
                tracing::warn!(lane = %name, "claiming: {e}; again in {backoff:?}");
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_secs(10));
            }
        }
    }
    tracing::info!(lane = %name, "worker lane stopped");
}

/// A claimed job, or None after waiting up to the poll interval for a submission.
async fn next_job(s: &Shared, name: &str) -> Result<Option<Claimed>> {
    let woken = s.events.submitted_notified();
    tokio::pin!(woken);
    woken.as_mut().enable();
    if let Some(job) = s.db.claim(name, s.cfg.lease, s.cfg.max_attempts).await? {
        if job.attempt > 1 {
            s.metrics.reclaimed();
        }
        return Ok(Some(job));
    }
    let _ = tokio::time::timeout(s.cfg.poll, woken).await;
    Ok(None)
}

/// Proves a claimed job under a heartbeat and records the outcome.
fn run_job(s: &Shared, provers: &mut Provers, resident: &mut Resident<Prepared>, job: Claimed) {
    let beat =
        s.rt.spawn(heartbeat(s.db.clone(), job.token(), s.cfg.lease));
    let outcome = prove_job(s, provers, resident, &job);
    beat.abort();
    let at = Instant::now();
    let recorded = s.rt.block_on(record(s, &job, outcome));
    tracing::debug!(job = %job.id, record_ms = at.elapsed().as_secs_f64() * 1e3, "recorded");
    match recorded {
        Ok(true) => {}
        Ok(false) => {
            s.metrics.lost_claim();
            tracing::warn!(job = %job.id, "result discarded: the claim no longer holds");
        }
        Err(e) => tracing::warn!(job = %job.id, "result not recorded: {e}"),
    }
    s.events.finished();
}

/// Renews the lease every third of it until aborted or the claim is lost.
async fn heartbeat(db: Db, job: Claimed, lease: Duration) {
    let mut tick = tokio::time::interval(lease / 3);
    tick.tick().await;
    loop {
        tick.tick().await;
        match db.heartbeat(&job, lease).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => tracing::warn!(job = %job.id, "heartbeat: {e}"),
        }
    }
}

/// The proof's `proof.json`, `public.json` and prover milliseconds.
type Proved = (String, String, f64);

fn prove_job(
    s: &Shared,
    provers: &mut Provers,
    resident: &mut Resident<Prepared>,
    job: &Claimed,
) -> Result<Proved> {
    let limits = Limits {
        count: s.cfg.resident_keys,
        bytes: s.cfg.resident_bytes,
    };
    let key = resident
        .get_or_prepare(
            &job.key,
            limits,
            Prepared::gpu_bytes,
            || prepare(s, provers, &job.key),
            |f: &PrepareFailure| f.out_of_memory,
        )
        .map_err(|f| f.error)?;
    let read = Instant::now();
    let values = match s.inputs.parsed(job) {
        Some(values) => values,
        None => {
            let wtns = s.inputs.witness(job)?;
            Values::read(key.curve(), &wtns, false).map_err(ServiceError::of_witness)?
        }
    };
    let read_ms = read.elapsed().as_secs_f64() * 1e3;
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed)
        .map_err(|e| ServiceError::new(ErrorCode::Internal, format!("no randomness: {e}")))?;
    let mut rng = StdRng::from_seed(seed);
    let started = Instant::now();
    let out = match key {
        Prepared::Bn254(k) => prove_as(provers, k.as_ref(), values, &mut rng),
        Prepared::Bls12_381(k) => prove_as(provers, k.as_ref(), values, &mut rng),
    };
    let (proof, public) = match out {
        Ok(out) => out,
        Err(e) => {
            // Out of GPU memory: the lane's other keys go, so that the queue's next attempt
            // (a GPU failure is retried) finds the memory they held.
            if e.is_out_of_memory() {
                let dropped = resident.keep_most_recent();
                tracing::info!(job = %job.id, dropped, "out of GPU memory proving");
            }
            return Err(ServiceError::of_proof(e));
        }
    };
    let ms = started.elapsed().as_secs_f64() * 1e3;
    tracing::debug!(job = %job.id, read_ms, prove_ms = ms, "proved");
    Ok((proof, public, ms))
}

/// The proof of `values` against `key` on the lane's prover of `E`: its `proof.json` and
/// `public.json`.
fn prove_as<E: ServiceCurve>(
    provers: &mut Provers,
    key: &PreparedProvingKey<E>,
    values: Values,
    rng: &mut StdRng,
) -> std::result::Result<(String, String), CircomError> {
    let values = E::values(values).ok_or_else(|| {
        CircomError::WitnessMismatch(format!("the witness is not over {}'s field", E::CURVE))
    })?;
    let out = zkgpu_circom::prove(E::prover(provers)?, key, values, rng)?;
    Ok((
        zkgpu_circom::proof_json(&out.proof),
        zkgpu_circom::public_json(&out.public_signals),
    ))
}

/// A job's `.zkey` on disk; a download is removed when dropped.
struct ZkeyFile {
    path: PathBuf,
    _download: Option<PartFile>,
}

/// A key that could not be prepared, and whether the GPU ran out of memory doing it.
struct PrepareFailure {
    error: ServiceError,
    out_of_memory: bool,
}

impl From<ServiceError> for PrepareFailure {
    fn from(error: ServiceError) -> Self {
        Self {
            error,
            out_of_memory: false,
        }
    }
}

impl From<zkgpu_circom::CircomError> for PrepareFailure {
    fn from(e: zkgpu_circom::CircomError) -> Self {
        Self {
            out_of_memory: e.is_out_of_memory(),
            error: ServiceError::of_proof(e),
        }
    }
}

/// The key `id` prepared on the lane's GPU, by the prover of its curve (told by the file's
/// header): its file hashed in pieces (it must hash to its id) and, unless the prepared-key
/// cache has it, read one section at a time, so the `.zkey` is never in host memory whole.
fn prepare(s: &Shared, provers: &mut Provers, id: &str) -> Result<Prepared, PrepareFailure> {
    let scratch = scratch_dir(&s.cfg);
    let zkey = s.inputs.zkey_file(id, &scratch)?;
    let got = zkgpu_circom::zkey_file_hash(&zkey.path).map_err(ServiceError::of_key)?;
    if crate::ids::hex(&got) != id {
        return Err(ServiceError::new(
            ErrorCode::InvalidKey,
            format!("the .zkey fetched for key {id} has another hash"),
        )
        .into());
    }
    let curve = zkgpu_circom::zkey_file_curve(&zkey.path).map_err(ServiceError::of_key)?;
    match curve {
        Curve::Bn254 => prepare_as::<Bn254>(s, provers, &zkey.path, got),
        Curve::Bls12_381 => prepare_as::<Bls12_381>(s, provers, &zkey.path, got),
    }
}

/// [`prepare`] of the `.zkey` at `path` (of hash `hash`) over `E`.
fn prepare_as<E: ServiceCurve>(
    s: &Shared,
    provers: &mut Provers,
    path: &Path,
    hash: [u8; 32],
) -> Result<Prepared, PrepareFailure> {
    let prover = E::prover(provers).map_err(CircomError::from)?;
    let Some(dir) = &s.cfg.cache_dir else {
        let key = zkgpu_circom::read_zkey_file::<E>(path).and_then(|k| k.prepare(prover))?;
        return Ok(E::prepared(key));
    };
    let (prepared, outcome) = zkgpu_circom::prepare_cached_file(prover, path, hash, dir)?;
    let written = !matches!(outcome, zkgpu_groth16::CacheOutcome::Loaded(_));
    if let (true, Some(max)) = (written, s.cfg.cache_max_bytes) {
        match zkgpu_groth16::prune_cache(dir, max) {
            Ok(gone) if !gone.is_empty() => {
                tracing::info!(files = gone.len(), "prepared-key cache pruned to its bound");
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("pruning the prepared-key cache: {e}"),
        }
    }
    Ok(E::prepared(prepared))
}

/// Writes the outcome under the claim, retrying while the database is unreachable (up to
/// one lease: after that the job is someone else's).
async fn record(s: &Shared, job: &Claimed, outcome: Result<Proved>) -> Result<bool> {
    let deadline = tokio::time::Instant::now() + s.cfg.lease;
    let mut nap = Duration::from_millis(50);
    loop {
        let written = match &outcome {
            Ok((proof, public, ms)) => {
                let w = s.db.complete(job, proof, public, *ms, s.cfg.keep).await;
                if matches!(w, Ok(true)) {
                    s.metrics.proved(*ms);
                }
                w
            }
            Err(e) => {
                let w = s.db.fail(job, e, s.cfg.max_attempts, s.cfg.keep).await;
                if matches!(w, Ok(true)) {
                    s.metrics.failed(e.code.as_str());
                    tracing::info!(job = %job.id, code = %e.code, "job failed: {}", e.message);
                }
                w
            }
        };
        match written {
            Err(e) if tokio::time::Instant::now() < deadline => {
                tracing::warn!(job = %job.id, "recording: {e}; again in {nap:?}");
                tokio::time::sleep(nap).await;
                nap = (nap * 2).min(Duration::from_secs(2));
            }
            other => return other,
        }
    }
}
