//! The HTTP API (axum): keys, jobs, proofs; health, readiness and metrics. JSON in and out,
//! errors as `{"error": {"code", "message"}}` ([`crate::ErrorCode`]).
//!
//! | route | what |
//! |---|---|
//! | `POST /v1/keys` | register a `.zkey` (the body); 201 new, 200 known |
//! | `GET /v1/keys`, `GET /v1/keys/{id}` | registered keys |
//! | `GET /v1/keys/{id}/zkey` | the `.zkey` itself (for workers on other machines) |
//! | `POST /v1/keys/{id}/jobs` | queue a proof of a witness: a `.wtns` body, or a JSON array of decimal strings |
//! | `GET /v1/jobs?state=&limit=` | jobs, newest first |
//! | `GET /v1/jobs/{id}?wait_ms=` | a job; waits up to `wait_ms` (at most 60 s) for it to end |
//! | `GET /v1/jobs/{id}/proof` | `{"proof": proof.json, "public": public.json}` of a done job |
//! | `GET /v1/jobs/{id}/witness` | a running job's `.wtns`, to the worker whose claim (header `x-zkgpu-claim`) holds it |
//! | `DELETE /v1/jobs/{id}` | cancel a queued or running job |
//! | `GET /healthz`, `GET /readyz` | alive; ready (the database answers) |
//! | `GET /metrics` | Prometheus' text format |

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use http_body_util::BodyExt;
use serde::Deserialize;

use crate::auth::Tokens;
use crate::bodies::Bodies;
use crate::db::{Db, JobState};
use crate::error::{ErrorCode, Result, ServiceError};
use crate::events::Events;
use crate::ids::{check_job_id, check_key_id, random_id};
use crate::keys::KeyStore;
use crate::metrics::Metrics;
use crate::witness::{Incoming, WitnessStore};

/// The header in which a worker shows the claim it holds on a job (its witness's route).
pub(crate) const CLAIM_HEADER: &str = "x-zkgpu-claim";

/// Body size limits of the API.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// A `.zkey`'s largest size.
    pub key_bytes: usize,
    /// A witness's largest size (`.wtns` or JSON).
    pub witness_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            key_bytes: 4 << 30,
            witness_bytes: 512 << 20,
        }
    }
}

/// What every handler shares.
#[derive(Clone, Debug)]
pub(crate) struct AppState {
    pub db: Db,
    pub keys: KeyStore,
    pub witnesses: WitnessStore,
    pub tokens: Tokens,
    pub events: Events,
    pub metrics: Arc<Metrics>,
    pub limits: Limits,
    /// Buffers for witness bodies, kept between submissions.
    pub bodies: Arc<Bodies>,
    /// How long ended jobs are kept.
    pub keep: Duration,
}

/// The API's routes over `state`.
pub(crate) fn router(state: AppState) -> Router {
    Router::new()
        // The key's and the witness's limits are counted by `receive_file` and `receive` as
        // the body arrives (the guard refuses a declared length over them first).
        .route("/v1/keys", post(register_key).get(list_keys))
        .route("/v1/keys/{id}/jobs", post(submit))
        .route("/v1/keys/{id}", get(get_key))
        .route("/v1/keys/{id}/zkey", get(get_zkey))
        .route("/v1/jobs", get(list_jobs))
        .route("/v1/jobs/{id}", get(get_job).delete(cancel))
        .route("/v1/jobs/{id}/proof", get(get_proof))
        .route("/v1/jobs/{id}/witness", get(get_witness))
        .route("/metrics", get(metrics))
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .with_state(state)
}

/// The guard before every route but health and readiness: the bearer token, then the
/// declared body length against the route's limit (refused before the body is read).
async fn guard(State(s): State<AppState>, req: Request, next: Next) -> Response {
    let route = route_name(req.uri().path());
    let auth = req.headers().get(header::AUTHORIZATION);
    let response = if !s.tokens.accepts(auth.and_then(|v| v.to_str().ok())) {
        Tokens::refusal().into_response()
    } else if let Some(e) = over_limit(&s.limits, &req) {
        e.into_response()
    } else {
        next.run(req).await
    };
    s.metrics.request(route, response.status().as_u16());
    response
}

fn route_name(path: &str) -> &'static str {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    match parts.as_slice() {
        ["v1", "keys"] => "keys",
        ["v1", "keys", _] => "key",
        ["v1", "keys", _, "zkey"] => "zkey",
        ["v1", "keys", _, "jobs"] => "submit",
        ["v1", "jobs"] => "jobs",
        ["v1", "jobs", _] => "job",
        ["v1", "jobs", _, "proof"] => "proof",
        ["v1", "jobs", _, "witness"] => "witness",
        ["metrics"] => "metrics",
        _ => "other",
    }
}

fn over_limit(limits: &Limits, req: &Request) -> Option<ServiceError> {
    let path = req.uri().path();
    let limit = if path == "/v1/keys" {
        limits.key_bytes
    } else if path.ends_with("/jobs") {
        limits.witness_bytes
    } else {
        return None;
    };
    let declared = content_length(req.headers())?;
    (declared > limit).then(|| too_large(limit))
}

/// The body's declared length (`Content-Length`), when given and well formed.
fn content_length(headers: &HeaderMap) -> Option<usize> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

fn too_large(limit: usize) -> ServiceError {
    ServiceError::new(
        ErrorCode::TooLarge,
        format!("the body is over the limit of {limit} bytes"),
    )
}

async fn ready(State(s): State<AppState>) -> Response {
    match s.db.ping().await {
        Ok(()) => "ready\n".into_response(),
        Err(e) => e.into_response(),
    }
}

async fn metrics(State(s): State<AppState>) -> Result<Response> {
    let text = s.metrics.render(&s.db).await?;
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response())
}

/// A `.zkey` upload: written to a part file as it arrives (the limit counted on the way),
/// hashed there, and read one section at a time: a key is never in the API's memory whole.
async fn register_key(State(s): State<AppState>, body: Body) -> Result<Response> {
    let part = s.keys.part();
    receive_file(body, s.limits.key_bytes, part.path()).await?;
    let path = part.path().to_owned();
    let id = blocking(move || {
        zkgpu_circom::zkey_file_hash(&path)
            .map(|h| crate::ids::hex(&h))
            .map_err(ServiceError::of_key)
    })
    .await?;
    // A key registered already (same hash, so same bytes) is not read again.
    if let Some(known) = s.db.key(&id).await? {
        return Ok((StatusCode::OK, Json(known)).into_response());
    }
    let store = s.keys.clone();
    // Reading the key checks every point: seconds for a large one, off the async threads.
    let info = blocking(move || store.add_part(part, &id)).await?;
    let new = s.db.insert_key(&info).await?;
    let status = if new {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    tracing::info!(key = %info.id, new, constraints = info.constraints, "key registered");
    Ok((status, Json(info)).into_response())
}

/// `f` on tokio's blocking threads.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ServiceError::new(ErrorCode::Internal, e.to_string()))?
}

/// The body written to `path` as it arrives, refused once it passes `limit` bytes.
async fn receive_file(mut body: Body, limit: usize, path: &std::path::Path) -> Result<()> {
    use tokio::io::AsyncWriteExt;
    let local = |e: std::io::Error| {
        ServiceError::new(ErrorCode::Internal, format!("{}: {e}", path.display()))
    };
    let mut file = tokio::fs::File::create(path).await.map_err(local)?;
    let mut got = 0usize;
    while let Some(piece) = next_piece(&mut body, got, limit).await? {
        got += piece.len();
        file.write_all(&piece).await.map_err(local)?;
    }
    file.flush().await.map_err(local)
}

/// The body's next piece of data (trailers skipped), refused when it would take the body,
/// `got` bytes so far, past `limit`; `None` at the end.
async fn next_piece(
    body: &mut Body,
    got: usize,
    limit: usize,
) -> Result<Option<axum::body::Bytes>> {
    while let Some(frame) = body.frame().await {
        let frame = frame
            .map_err(|e| ServiceError::bad_request(format!("the body could not be read: {e}")))?;
        let Ok(piece) = frame.into_data() else {
            continue;
        };
        if got + piece.len() > limit {
            return Err(too_large(limit));
        }
        return Ok(Some(piece));
    }
    Ok(None)
}

async fn list_keys(State(s): State<AppState>) -> Result<Response> {
    Ok(Json(s.db.keys().await?).into_response())
}

async fn get_key(State(s): State<AppState>, Path(id): Path<String>) -> Result<Response> {
    check_key_id(&id)?;
    let key = s.db.key(&id).await?.ok_or_else(|| unknown_key(&id))?;
    Ok(Json(key).into_response())
}

async fn get_zkey(State(s): State<AppState>, Path(id): Path<String>) -> Result<Response> {
    check_key_id(&id)?;
    s.db.key(&id).await?.ok_or_else(|| unknown_key(&id))?;
    let path = s.keys.file(&id)?;
    let file = std::fs::File::open(&path)
        .map_err(|e| ServiceError::new(ErrorCode::Internal, format!("{}: {e}", path.display())))?;
    Ok((
        [(header::CONTENT_TYPE, "application/octet-stream")],
        Body::new(FileBody::of(file)),
    )
        .into_response())
}

/// A file sent in pieces of 1 MiB, read on a blocking thread a few pieces ahead of the
/// socket: a `.zkey` is never in the API's memory whole.
struct FileBody(tokio::sync::mpsc::Receiver<std::io::Result<axum::body::Bytes>>);

impl FileBody {
    fn of(mut file: std::fs::File) -> Self {
        use std::io::Read;
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tokio::task::spawn_blocking(move || {
            loop {
                let mut piece = vec![0u8; 1 << 20];
                let sent = match file.read(&mut piece) {
                    Ok(0) => return,
                    Ok(n) => {
                        piece.truncate(n);
                        tx.blocking_send(Ok(piece.into()))
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        let _ = tx.blocking_send(Err(e));
                        return;
                    }
                };
                // The client went away: nothing more to read.
                if sent.is_err() {
                    return;
                }
            }
        });
        Self(rx)
    }
}

impl http_body::Body for FileBody {
    type Data = axum::body::Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<std::io::Result<http_body::Frame<Self::Data>>>> {
        self.get_mut()
            .0
            .poll_recv(cx)
            .map(|piece| piece.map(|r| r.map(http_body::Frame::data)))
    }
}

fn unknown_key(id: &str) -> ServiceError {
    ServiceError::new(ErrorCode::UnknownKey, format!("no key {id} is registered"))
}

fn unknown_job(id: &str) -> ServiceError {
    ServiceError::new(ErrorCode::UnknownJob, format!("no job {id}"))
}

async fn submit(
    State(s): State<AppState>,
    Path(key_id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response> {
    check_key_id(&key_id)?;
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let id = random_id();
    // A `.wtns` is written to the job's part file as it arrives; the key is looked up
    // meanwhile. The body is read whole either way, so that a refusal reaches the client.
    let declared = content_length(&headers).unwrap_or(0);
    let incoming = (!json).then(|| s.witnesses.incoming(&id)).transpose()?;
    let room = declared.min(s.limits.witness_bytes);
    let buffer = s.bodies.take(room);
    let (key, witness) = tokio::join!(
        s.db.key(&key_id),
        receive(body, buffer, s.limits.witness_bytes, incoming.as_ref())
    );
    let witness = witness?;
    let key = key?.ok_or_else(|| unknown_key(&key_id))?;
    let started = std::time::Instant::now();
    let curve = zkgpu_circom::Curve::from_name(&key.curve).ok_or_else(|| {
        ServiceError::new(
            ErrorCode::Internal,
            format!(
                "key {key_id} is registered over an unknown curve {:?}",
                key.curve
            ),
        )
    })?;
    let circuit = crate::witness::Circuit {
        curve,
        signals: key.signals as usize,
    };
    let (store, job, bodies) = (s.witnesses.clone(), id.clone(), s.bodies.clone());
    // Checked, and the job's witness file complete, before the job is queued.
    blocking(move || {
        let checked = match incoming {
            Some(incoming) => incoming.finish_checked(&witness, circuit),
            None => crate::witness::store_json(&store, &job, &witness, circuit),
        };
        bodies.give(witness);
        checked
    })
    .await?;
    let checked_ms = started.elapsed().as_secs_f64() * 1e3;
    if let Err(e) = s.db.insert_job(&id, &key_id).await {
        let _ = s.witnesses.remove(&id);
        return Err(e);
    }
    s.events.submitted();
    let queued_ms = started.elapsed().as_secs_f64() * 1e3;
    tracing::debug!(job = %id, checked_ms, queued_ms, "submitted (times after the body's end)");
    let job = s.db.job(&id).await?.ok_or_else(|| unknown_job(&id))?;
    Ok((StatusCode::ACCEPTED, Json(job)).into_response())
}

/// The whole of `body` in `whole` (an empty buffer with room for the declared length: a
/// growing one would copy a large witness several times, and a kept one has its pages
/// resident, `crate::bodies`), refused once past `limit` bytes; each piece also goes to
/// `sink` as it arrives.
async fn receive(
    mut body: Body,
    mut whole: Vec<u8>,
    limit: usize,
    sink: Option<&Incoming>,
) -> Result<Vec<u8>> {
    while let Some(piece) = next_piece(&mut body, whole.len(), limit).await? {
        whole.extend_from_slice(&piece);
        if let Some(sink) = sink {
            sink.push(piece);
        }
    }
    Ok(whole)
}

#[derive(Deserialize)]
struct ListQuery {
    state: Option<String>,
    limit: Option<i64>,
}

async fn list_jobs(State(s): State<AppState>, Query(q): Query<ListQuery>) -> Result<Response> {
    let state = match q.state.as_deref() {
        None => None,
        Some(name) => Some(JobState::parse(name).ok_or_else(|| {
            ServiceError::bad_request(format!(
                "state {name:?} is not queued, running, done, failed or cancelled"
            ))
        })?),
    };
    let limit = q.limit.unwrap_or(100).clamp(1, 10_000);
    Ok(Json(s.db.jobs(state, limit).await?).into_response())
}

#[derive(Deserialize)]
struct WaitQuery {
    wait_ms: Option<u64>,
}

async fn get_job(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<WaitQuery>,
) -> Result<Response> {
    check_job_id(&id)?;
    let wait = Duration::from_millis(q.wait_ms.unwrap_or(0).min(60_000));
    let job = s.events.wait_final(&s.db, &id, wait).await?;
    Ok(Json(job.ok_or_else(|| unknown_job(&id))?).into_response())
}

async fn get_proof(State(s): State<AppState>, Path(id): Path<String>) -> Result<Response> {
    check_job_id(&id)?;
    let job = s.db.job(&id).await?.ok_or_else(|| unknown_job(&id))?;
    match job.state {
        JobState::Done => {}
        JobState::Queued | JobState::Running => {
            return Err(ServiceError::new(
                ErrorCode::NotReady,
                format!("job {id} is {}", job.state.as_str()),
            ));
        }
        JobState::Failed | JobState::Cancelled => {
            let why = job
                .error_code
                .map(|c| format!(" ({c})"))
                .unwrap_or_default();
            return Err(ServiceError::new(
                ErrorCode::NoProof,
                format!("job {id} is {}{why}", job.state.as_str()),
            ));
        }
    }
    let (proof, public) = s.db.result(&id).await?.ok_or_else(|| unknown_job(&id))?;
    let parse = |t: &str| {
        serde_json::from_str::<serde_json::Value>(t)
            .map_err(|e| ServiceError::new(ErrorCode::Internal, e.to_string()))
    };
    let out = serde_json::json!({ "proof": parse(&proof)?, "public": parse(&public)? });
    Ok(Json(out).into_response())
}

async fn get_witness(
    State(s): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response> {
    check_job_id(&id)?;
    let claim = headers
        .get(CLAIM_HEADER)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| {
            ServiceError::bad_request(format!(
                "a job's witness is served under its claim: give {CLAIM_HEADER}"
            ))
        })?;
    if !s.db.claim_holds(&id, claim).await? {
        return Err(ServiceError::new(
            ErrorCode::UnknownJob,
            format!("no job {id} runs under that claim"),
        ));
    }
    let store = s.witnesses.clone();
    let bytes = blocking(move || store.read(&id)).await?;
    Ok(([(header::CONTENT_TYPE, "application/octet-stream")], bytes).into_response())
}

async fn cancel(State(s): State<AppState>, Path(id): Path<String>) -> Result<Response> {
    check_job_id(&id)?;
    s.db.cancel(&id, s.keep).await?;
    s.events.finished();
    let job = s.db.job(&id).await?.ok_or_else(|| unknown_job(&id))?;
    Ok(Json(job).into_response())
}
