//! Starting and stopping the service: the API (with or without local worker lanes), or
//! worker lanes alone against a shared database.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use zkgpu_runtime::DeviceSet;

use crate::api::{AppState, Limits, router};
use crate::auth::Tokens;
use crate::db::Db;
use crate::error::{ErrorCode, Result, ServiceError};
use crate::events::Events;
use crate::keys::KeyStore;
use crate::metrics::Metrics;
use crate::witness::WitnessStore;
use crate::worker::{JobInputs, WorkerConfig, Workers};

/// How the API runs.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Where it listens (port 0: any free port, see [`Running::addr`]).
    pub listen: SocketAddr,
    /// The database: `sqlite://PATH` or `postgres://...`.
    pub db: String,
    /// The data directory (registered keys under `keys/`, queued jobs' witnesses under
    /// `witnesses/`).
    pub data: PathBuf,
    /// Accepted bearer tokens; none configured means loopback only.
    pub tokens: Tokens,
    /// Body size limits.
    pub limits: Limits,
    /// The local lanes' settings (and how long ended jobs are kept).
    pub worker: WorkerConfig,
}

/// A running API (and its lanes).
#[derive(Debug)]
pub struct Running {
    /// The address it listens on.
    pub addr: SocketAddr,
    stop: oneshot::Sender<()>,
    http: JoinHandle<std::io::Result<()>>,
    sweeper: JoinHandle<()>,
    workers: Option<Workers>,
}

/// Starts the API; with `devices`, local worker lanes on each device too.
pub async fn start(cfg: ServeConfig, devices: Option<&DeviceSet>) -> Result<Running> {
    if cfg.tokens.is_empty() && !cfg.listen.ip().is_loopback() {
        return Err(ServiceError::bad_request(format!(
            "no bearer token is configured, so the API listens on loopback only, not {}: give tokens (--tokens-file or ZKGPU_TOKENS) or listen on 127.0.0.1",
            cfg.listen
        )));
    }
    // The data directory first: the default SQLite file lives in it.
    let keys = KeyStore::open(&cfg.data)?;
    let witnesses = WitnessStore::open(&cfg.data)?;
    let db = Db::connect(&cfg.db).await?;
    let events = Events::default();
    let metrics = Arc::new(Metrics::default());
    let listener = tokio::net::TcpListener::bind(cfg.listen)
        .await
        .map_err(|e| ServiceError::bad_request(format!("cannot listen on {}: {e}", cfg.listen)))?;
    let addr = listener
        .local_addr()
        .map_err(|e| ServiceError::new(ErrorCode::Internal, e.to_string()))?;
    let state = AppState {
        db: db.clone(),
        keys: keys.clone(),
        witnesses: witnesses.clone(),
        tokens: cfg.tokens.clone(),
        events: events.clone(),
        metrics: metrics.clone(),
        limits: cfg.limits,
        bodies: Default::default(),
        keep: cfg.worker.keep,
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let app = router(state);
    let http = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
    });
    let sweeper = tokio::spawn(sweep(db.clone(), witnesses.clone()));
    let workers = match devices {
        Some(d) => Some(Workers::start(
            tokio::runtime::Handle::current(),
            db,
            d,
            JobInputs::Local { keys, witnesses },
            cfg.worker.clone(),
            events,
            metrics,
        )?),
        None => None,
    };
    tracing::info!(%addr, lanes = workers.as_ref().map_or(0, Workers::len), "zkgpu service listening");
    Ok(Running {
        addr,
        stop,
        http,
        sweeper,
        workers,
    })
}

/// Removes the witnesses of ended jobs every two seconds, and expired results once a minute.
async fn sweep(db: Db, witnesses: WitnessStore) {
    let mut tick = tokio::time::interval(Duration::from_secs(2));
    let mut round = 0u64;
    loop {
        tick.tick().await;
        sweep_witnesses(&db, &witnesses).await;
        round = round.wrapping_add(1);
        if round % 30 != 1 {
            continue;
        }
        match db.delete_expired().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(jobs = n, "expired results deleted"),
            Err(e) => tracing::warn!("deleting expired results: {e}"),
        }
    }
}

/// A witness file of no job in the table goes once it is this old (a submission writes its
/// witness a moment before it queues the job; one whose job was deleted goes too). A
/// submission whose insert took longer than this could lose its witness to the sweep; its
/// job would then fail with `witness_lost`.
const WITNESS_GRACE: Duration = Duration::from_secs(30);

async fn sweep_witnesses(db: &Db, witnesses: &WitnessStore) {
    // Jobs that ended in the last minute go at once; any older are past the grace period.
    let sets = async {
        let live = db.live_jobs().await?.into_iter().collect();
        let ended = db
            .ended_within(Duration::from_secs(60))
            .await?
            .into_iter()
            .collect();
        Ok::<_, ServiceError>((live, ended))
    };
    let (live, ended) = match sets.await {
        Ok(sets) => sets,
        Err(e) => return tracing::warn!("listing jobs for the witness sweep: {e}"),
    };
    let store = witnesses.clone();
    let swept =
        tokio::task::spawn_blocking(move || store.sweep(&live, &ended, WITNESS_GRACE)).await;
    match swept {
        Ok(Ok(0)) => {}
        Ok(Ok(n)) => tracing::debug!(files = n, "witnesses of ended jobs removed"),
        Ok(Err(e)) => tracing::warn!("removing witnesses: {e}"),
        Err(e) => tracing::warn!("removing witnesses: {e}"),
    }
}

impl Running {
    /// Stops: no new requests (those in flight are answered), the lanes finish the proofs
    /// they are making and record them.
    pub async fn shutdown(self) -> Result<()> {
        let _ = self.stop.send(());
        let served = self.http.await;
        self.sweeper.abort();
        if let Some(w) = self.workers {
            tokio::task::spawn_blocking(move || w.stop())
                .await
                .map_err(|e| ServiceError::new(ErrorCode::Internal, e.to_string()))?;
        }
        match served {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(ServiceError::new(ErrorCode::Internal, e.to_string())),
            Err(e) => Err(ServiceError::new(ErrorCode::Internal, e.to_string())),
        }
    }
}

/// Worker lanes alone (no API), one per device of `devices`, against the database at
/// `db`, until [`Workers::stop`].
pub async fn start_workers(
    db: &str,
    devices: &DeviceSet,
    inputs: JobInputs,
    cfg: WorkerConfig,
) -> Result<Workers> {
    let db = Db::connect(db).await?;
    Workers::start(
        tokio::runtime::Handle::current(),
        db,
        devices,
        inputs,
        cfg,
        Events::default(),
        Arc::new(Metrics::default()),
    )
}
