//! `zkgpu serve` (the proving service's API, with a worker lane per GPU), `zkgpu worker`
//! (lanes alone, for other machines), `zkgpu submit` and `zkgpu fetch` (its client, with
//! rapidsnark's arguments).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use zkgpu_runtime::{DeviceChoice, DeviceSet};
use zkgpu_service::{Client, JobInputs, Limits, ServeConfig, Tokens, WorkerConfig};

use crate::prove_keys::{cache_dir, context_options};

type BoxError = Box<dyn std::error::Error>;

/// How worker lanes run (serve and worker).
#[derive(Args, Debug)]
pub struct LaneArgs {
    /// The GPUs to prove on: `all`, a count, or `adapters:0,1` (numbers of `zkgpu info`).
    #[arg(long, default_value = "all")]
    devices: DeviceChoice,
    /// Seconds a claim holds without a heartbeat (renewed every third of it); a job whose
    /// worker died is claimed again after this.
    #[arg(long, default_value_t = 30)]
    lease_secs: u64,
    /// Claims a job gets before it is failed (GPU errors and expired leases are retried).
    #[arg(long, default_value_t = 3)]
    max_attempts: i64,
    /// Keys each lane keeps prepared on its GPU.
    #[arg(long, default_value_t = 4)]
    resident_keys: usize,
    /// GiB of GPU memory a lane's prepared keys may hold together (least recently used out
    /// first) [default: no bound beyond --resident-keys]. Whatever the bound, a key that runs
    /// out of GPU memory while being prepared is prepared again after the lane's others go.
    #[arg(long)]
    resident_gib: Option<f64>,
    /// Lanes per GPU: with two, one lane's CPU steps overlap the other's GPU work. A
    /// `zkgpu worker` fetches and parses each witness: at 2^20 it needed four.
    #[arg(long, default_value_t = 2)]
    lanes_per_device: usize,
    /// Hours an ended job's proof or error is kept.
    #[arg(long, default_value_t = 24)]
    keep_hours: u64,
    /// Where prepared keys and the pipeline cache are kept [default: $ZKGPU_CACHE, else
    /// $XDG_CACHE_HOME/zkgpu, else ~/.cache/zkgpu].
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Bound the prepared-key cache to this many GiB (least recently used files go first).
    #[arg(long)]
    cache_max_gib: Option<f64>,
}

impl LaneArgs {
    fn config(&self, cache: Option<&Path>) -> WorkerConfig {
        WorkerConfig {
            lease: Duration::from_secs(self.lease_secs.max(1)),
            max_attempts: self.max_attempts.max(1),
            resident_keys: self.resident_keys.max(1),
            resident_bytes: self.resident_gib.map(gib_bytes),
            lanes_per_device: self.lanes_per_device.max(1),
            keep: Duration::from_secs(self.keep_hours * 3600),
            cache_dir: cache.map(Path::to_owned),
            cache_max_bytes: self.cache_max_gib.map(gib_bytes),
            ..WorkerConfig::default()
        }
    }

    fn open_devices(&self, cache: Option<&Path>) -> Result<DeviceSet, BoxError> {
        Ok(DeviceSet::open_blocking(
            context_options(cache)?,
            &self.devices,
        )?)
    }
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Where the API listens. Without tokens, loopback addresses only.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// The job database: sqlite://PATH or postgres://USER:PASSWORD@HOST:PORT/DB [default:
    /// sqlite://DATA/jobs.db].
    #[arg(long)]
    db: Option<String>,
    /// The data directory: registered keys, and the SQLite database by default.
    #[arg(long, default_value = "zkgpu-data")]
    data: PathBuf,
    /// Bearer tokens, one per line (also: ZKGPU_TOKENS, comma-separated).
    #[arg(long)]
    tokens_file: Option<PathBuf>,
    /// No local worker lanes: the API alone (workers run as `zkgpu worker`).
    #[arg(long)]
    no_workers: bool,
    /// The largest .zkey accepted, in MiB.
    #[arg(long, default_value_t = 4096)]
    max_key_mib: usize,
    /// The largest witness accepted, in MiB.
    #[arg(long, default_value_t = 512)]
    max_witness_mib: usize,
    #[command(flatten)]
    lanes: LaneArgs,
}

fn gib_bytes(gib: f64) -> u64 {
    (gib.max(0.0) * (1u64 << 30) as f64) as u64
}

fn tokens(file: Option<&Path>) -> Result<Tokens, BoxError> {
    if let Some(f) = file {
        return Ok(Tokens::from_file(f)?);
    }
    let env = std::env::var("ZKGPU_TOKENS").unwrap_or_default();
    Ok(Tokens::new(env.split(',')))
}

fn runtime() -> Result<tokio::runtime::Runtime, BoxError> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

pub fn serve(args: &ServeArgs) -> Result<(), BoxError> {
    let cache = cache_dir(args.lanes.cache_dir.as_deref());
    std::fs::create_dir_all(&args.data)
        .map_err(|e| format!("cannot make {}: {e}", args.data.display()))?;
    let db = args
        .db
        .clone()
        .unwrap_or_else(|| format!("sqlite://{}", args.data.join("jobs.db").display()));
    let cfg = ServeConfig {
        listen: args.listen,
        db,
        data: args.data.clone(),
        tokens: tokens(args.tokens_file.as_deref())?,
        limits: Limits {
            key_bytes: args.max_key_mib << 20,
            witness_bytes: args.max_witness_mib << 20,
        },
        worker: args.lanes.config(cache.as_deref()),
    };
    let devices = if args.no_workers {
        None
    } else {
        Some(args.lanes.open_devices(cache.as_deref())?)
    };
    runtime()?.block_on(async {
        let running = zkgpu_service::start(cfg, devices.as_ref()).await?;
        eprintln!(
            "zkgpu serve: listening on http://{} ({} worker lane(s)); Ctrl-C or SIGTERM stops",
            running.addr,
            devices.as_ref().map_or(0, DeviceSet::len)
        );
        shutdown_signal().await;
        eprintln!("zkgpu serve: stopping (running proofs finish) ...");
        running.shutdown().await?;
        Ok::<(), BoxError>(())
    })
}

#[derive(Args, Debug)]
pub struct WorkerArgs {
    /// The job database the API uses: postgres://... (or the same sqlite:// file).
    #[arg(long)]
    db: String,
    /// The API, where keys and witnesses are fetched from (else --data).
    #[arg(long, conflicts_with = "data")]
    server: Option<String>,
    /// The API's data directory, when this machine shares it (else --server).
    #[arg(long)]
    data: Option<PathBuf>,
    /// The bearer token for --server (also: ZKGPU_TOKEN).
    #[arg(long)]
    token: Option<String>,
    /// This worker's name in the jobs it claims (a lane number is appended) [default:
    /// HOST-PID].
    #[arg(long)]
    name: Option<String>,
    #[command(flatten)]
    lanes: LaneArgs,
}

fn token(arg: Option<&String>) -> Option<String> {
    arg.cloned().or_else(|| std::env::var("ZKGPU_TOKEN").ok())
}

pub fn worker(args: &WorkerArgs) -> Result<(), BoxError> {
    let cache = cache_dir(args.lanes.cache_dir.as_deref());
    let inputs = match (&args.server, &args.data) {
        (Some(url), _) => JobInputs::Server(Client::new(url, token(args.token.as_ref()))),
        (None, Some(dir)) => JobInputs::local(dir)?,
        (None, None) => {
            return Err("give --server URL (keys and witnesses from the API) or --data DIR".into());
        }
    };
    let devices = args.lanes.open_devices(cache.as_deref())?;
    let mut cfg = args.lanes.config(cache.as_deref());
    if let Some(n) = &args.name {
        cfg.name.clone_from(n);
    }
    runtime()?.block_on(async {
        let workers = zkgpu_service::start_workers(&args.db, &devices, inputs, cfg).await?;
        eprintln!(
            "zkgpu worker: {} lane(s) claiming jobs; Ctrl-C or SIGTERM stops",
            workers.len()
        );
        shutdown_signal().await;
        eprintln!("zkgpu worker: stopping (running proofs finish) ...");
        tokio::task::spawn_blocking(move || workers.stop()).await?;
        Ok::<(), BoxError>(())
    })
}

/// Where the service is (submit, fetch, load).
#[derive(Args, Debug)]
pub struct ServerArgs {
    /// The server.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    server: String,
    /// The bearer token (also: ZKGPU_TOKEN).
    #[arg(long)]
    token: Option<String>,
}

impl ServerArgs {
    fn client(&self) -> Client {
        Client::new(&self.server, token(self.token.as_ref()))
    }
}

#[derive(Args, Debug)]
pub struct SubmitArgs {
    /// The snarkjs .zkey (registered with the server; free when it has it already).
    zkey: PathBuf,
    /// The witness: a .wtns, or a .json array of decimal strings.
    witness: PathBuf,
    /// Where to write proof.json.
    proof: Option<PathBuf>,
    /// Where to write public.json.
    public: Option<PathBuf>,
    #[command(flatten)]
    server: ServerArgs,
    /// Queue the job and print its id without waiting (`zkgpu fetch` gets the proof).
    #[arg(long)]
    no_wait: bool,
}

pub fn submit(args: &SubmitArgs) -> Result<(), BoxError> {
    // Outputs checked before anything is sent: a proof is not made to be lost.
    for p in [&args.proof, &args.public].into_iter().flatten() {
        crate::circom_cmd::check_output(p)?;
    }
    let client = args.server.client();
    let zkey = std::fs::read(&args.zkey).map_err(|e| format!("{}: {e}", args.zkey.display()))?;
    let witness =
        std::fs::read(&args.witness).map_err(|e| format!("{}: {e}", args.witness.display()))?;
    let key = client.register_key(&zkey)?;
    let json = args.witness.extension().is_some_and(|e| e == "json");
    let job = if json {
        let text = String::from_utf8(witness).map_err(|_| "the JSON witness is not UTF-8")?;
        client.submit_json(&key.id, &text)?
    } else {
        client.submit(&key.id, &witness)?
    };
    if args.no_wait {
        #[allow(clippy::print_stdout)]
        {
            println!("{}", job.id);
        }
        return Ok(());
    }
    fetch_into(
        &client,
        &job.id,
        args.proof.as_deref(),
        args.public.as_deref(),
    )
}

#[derive(Args, Debug)]
pub struct FetchArgs {
    /// The job's id (`zkgpu submit --no-wait` printed it).
    job: String,
    /// Where to write proof.json.
    proof: Option<PathBuf>,
    /// Where to write public.json.
    public: Option<PathBuf>,
    #[command(flatten)]
    server: ServerArgs,
}

pub fn fetch(args: &FetchArgs) -> Result<(), BoxError> {
    let client = args.server.client();
    fetch_into(
        &client,
        &args.job,
        args.proof.as_deref(),
        args.public.as_deref(),
    )
}

/// Waits for the job, then writes its proof and public signals (or prints them).
fn fetch_into(
    client: &Client,
    id: &str,
    proof: Option<&Path>,
    public: Option<&Path>,
) -> Result<(), BoxError> {
    let job = client.wait(id)?;
    if job.state != "done" {
        let why = job.error_message.unwrap_or_default();
        let code = job.error_code.unwrap_or_default();
        return Err(format!("job {id} {}: {code} {why}", job.state).into());
    }
    let out = client.proof(id)?;
    let proof_text = serde_json::to_string_pretty(&out.proof)?;
    let public_text = serde_json::to_string_pretty(&out.public)?;
    match (proof, public) {
        (Some(p), q) => {
            crate::circom_cmd::write(p, &(proof_text + "\n"))?;
            if let Some(q) = q {
                crate::circom_cmd::write(q, &(public_text + "\n"))?;
            }
        }
        (None, _) => {
            #[allow(clippy::print_stdout)]
            {
                println!("{proof_text}\n{public_text}");
            }
        }
    }
    eprintln!(
        "job {id}: proved in {:.1} ms on its worker ({} attempt(s))",
        job.prove_ms.unwrap_or(0.0),
        job.attempts
    );
    Ok(())
}

#[derive(Args, Debug)]
pub struct LoadArgs {
    /// The snarkjs .zkey.
    zkey: PathBuf,
    /// The witness (.wtns) every job proves.
    wtns: PathBuf,
    /// Jobs in all.
    #[arg(long, default_value_t = 200)]
    jobs: usize,
    /// Clients sending at once.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    #[command(flatten)]
    server: ServerArgs,
}

/// `zkgpu load`: jobs from concurrent clients against a service, every proof checked;
/// throughput, latency percentiles and the workers' prover time.
pub fn load(args: &LoadArgs) -> Result<(), BoxError> {
    let client = args.server.client();
    let zkey = std::fs::read(&args.zkey).map_err(|e| format!("{}: {e}", args.zkey.display()))?;
    let wtns = std::fs::read(&args.wtns).map_err(|e| format!("{}: {e}", args.wtns.display()))?;
    let plan = zkgpu_service::load::LoadPlan {
        jobs: args.jobs,
        clients: args.clients,
    };
    eprintln!(
        "zkgpu load: {} jobs from {} clients against {} ...",
        plan.jobs, plan.clients, args.server.server
    );
    let r = zkgpu_service::load::run(&client, &zkey, &wtns, &plan)?;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    #[allow(clippy::print_stdout)]
    {
        println!(
            "{} jobs, every proof verified: {:.2} s, {:.2} proofs/s",
            r.jobs,
            r.wall.as_secs_f64(),
            r.throughput()
        );
        println!(
            "latency (submit to proof fetched): p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            ms(r.latency(0.5)),
            ms(r.latency(0.9)),
            ms(r.latency(0.99)),
            ms(r.latency(1.0))
        );
        println!(
            "prover time on the workers: p50 {:.1} ms, p90 {:.1} ms",
            r.prove_ms(0.5),
            r.prove_ms(0.9)
        );
        println!(
            "where it went, p50: the submission {:.1} ms (upload, checks, witness stored), queued to ended {:.1} ms (claim, witness read, proof, recording)",
            r.submit_ms(0.5),
            r.service_ms(0.5)
        );
    }
    Ok(())
}

#[derive(Args, Debug)]
pub struct CacheArgs {
    /// `list` the prepared-key files (most recently used first), or `prune` them.
    #[arg(value_parser = ["list", "prune"])]
    action: String,
    /// With prune: keep at most this many GiB (least recently used files go first).
    #[arg(long, default_value_t = 0.0)]
    max_gib: f64,
    /// The cache [default: $ZKGPU_CACHE, else $XDG_CACHE_HOME/zkgpu, else ~/.cache/zkgpu].
    #[arg(long)]
    cache_dir: Option<PathBuf>,
}

/// `zkgpu cache list|prune`: the prepared-key cache.
pub fn cache(args: &CacheArgs) -> Result<(), BoxError> {
    let dir =
        cache_dir(args.cache_dir.as_deref()).ok_or("no cache directory (give --cache-dir)")?;
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    #[allow(clippy::print_stdout)]
    if args.action == "list" {
        let entries = zkgpu_groth16::cache_entries(&dir)?;
        for e in &entries {
            let age = e.last_used.elapsed().map_or(0, |d| d.as_secs());
            println!(
                "{:>10.1} MiB  used {:>8} s ago  {}",
                mib(e.bytes),
                age,
                e.path.display()
            );
        }
        let total: u64 = entries.iter().map(|e| e.bytes).sum();
        println!(
            "{} prepared key(s), {:.1} MiB in {}",
            entries.len(),
            mib(total),
            dir.display()
        );
    } else {
        let gone = zkgpu_groth16::prune_cache(&dir, gib_bytes(args.max_gib))?;
        let freed: u64 = gone.iter().map(|e| e.bytes).sum();
        println!("removed {} file(s), {:.1} MiB", gone.len(), mib(freed));
    }
    Ok(())
}
