//! A blocking client of the API (what `zkgpu submit` and workers on other machines use).

use std::time::Duration;

use serde::de::DeserializeOwned;

use crate::error::{ErrorCode, Result, ServiceError};

/// A server's address and token.
#[derive(Clone)]
pub struct Client {
    base: String,
    token: Option<String>,
    agent: ureq::Agent,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("base", &self.base).finish()
    }
}

/// A proof as the API returns it: snarkjs' `proof.json` and `public.json`.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct ProofResult {
    /// `proof.json`.
    pub proof: serde_json::Value,
    /// `public.json`.
    pub public: serde_json::Value,
}

/// A key's description as the API returns it.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct RemoteKey {
    /// Its id.
    pub id: String,
    /// Its curve (`bn254`, `bls12-381`).
    pub curve: String,
    /// Signals, the constant one included.
    pub signals: i64,
    /// Constraints.
    pub constraints: i64,
    /// Public signals.
    pub public_signals: i64,
}

/// A job's description as the API returns it.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct RemoteJob {
    /// Its id.
    pub id: String,
    /// `queued`, `running`, `done`, `failed` or `cancelled`.
    pub state: String,
    /// The failure's code.
    pub error_code: Option<String>,
    /// The failure's message.
    pub error_message: Option<String>,
    /// Claims so far.
    pub attempts: i64,
    /// The worker's prover time.
    pub prove_ms: Option<f64>,
    /// When it was queued (ms since the Unix epoch, the database's clock).
    #[serde(default)]
    pub created_ms: i64,
    /// When it last changed (for an ended job: when it ended).
    #[serde(default)]
    pub updated_ms: i64,
}

impl RemoteJob {
    /// Whether the job has ended.
    pub fn is_final(&self) -> bool {
        matches!(self.state.as_str(), "done" | "failed" | "cancelled")
    }
}

fn transport(e: ureq::Error) -> ServiceError {
    ServiceError::new(ErrorCode::Internal, format!("the server: {e}"))
}

impl Client {
    /// A client of the server at `base` (e.g. `http://127.0.0.1:8080`), with a bearer token.
    pub fn new(base: &str, token: Option<String>) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(10)))
            .build()
            .into();
        Self {
            base: base.trim_end_matches('/').to_owned(),
            token,
            agent,
        }
    }

    /// `req` with the bearer token, when there is one.
    fn authorized<B>(&self, req: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match &self.token {
            Some(t) => req.header("Authorization", format!("Bearer {t}")),
            None => req,
        }
    }

    /// The answer's body, or the server's typed error.
    fn answer(mut r: ureq::http::Response<ureq::Body>) -> Result<Vec<u8>> {
        let status = r.status();
        let body = r
            .body_mut()
            .with_config()
            .limit(u64::MAX)
            .read_to_vec()
            .map_err(transport)?;
        if status.is_success() {
            return Ok(body);
        }
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let code = v["error"]["code"]
            .as_str()
            .and_then(ErrorCode::parse)
            .unwrap_or(ErrorCode::Internal);
        let message = v["error"]["message"]
            .as_str()
            .map_or_else(|| format!("HTTP {status}"), str::to_owned);
        Err(ServiceError::new(code, message))
    }

    fn json<T: DeserializeOwned>(body: &[u8]) -> Result<T> {
        serde_json::from_slice(body).map_err(|e| {
            ServiceError::new(ErrorCode::Internal, format!("the server's answer: {e}"))
        })
    }

    fn get(&self, path: &str) -> Result<Vec<u8>> {
        let req = self.authorized(self.agent.get(format!("{}{path}", self.base)));
        Self::answer(req.call().map_err(transport)?)
    }

    fn post(&self, path: &str, content_type: &str, body: &[u8]) -> Result<Vec<u8>> {
        let req = self.authorized(
            self.agent
                .post(format!("{}{path}", self.base))
                .header("Content-Type", content_type),
        );
        Self::answer(req.send(body).map_err(transport)?)
    }

    /// Registers a `.zkey`: its hash first, and the key is sent only when the server does
    /// not have it.
    pub fn register_key(&self, zkey: &[u8]) -> Result<RemoteKey> {
        let id = crate::keys::KeyStore::id_of(zkey);
        match self.get(&format!("/v1/keys/{id}")) {
            Ok(body) => Self::json(&body),
            Err(e) if e.code == ErrorCode::UnknownKey => {
                Self::json(&self.post("/v1/keys", "application/octet-stream", zkey)?)
            }
            Err(e) => Err(e),
        }
    }

    /// The `.zkey` of a registered key.
    pub fn zkey(&self, id: &str) -> Result<Vec<u8>> {
        crate::ids::check_key_id(id)?;
        self.get(&format!("/v1/keys/{id}/zkey"))
    }

    /// The `.zkey` of a registered key, written to `path` as it arrives: never in memory
    /// whole. `path` is left partly written when the transfer fails.
    pub fn zkey_to_file(&self, id: &str, path: &std::path::Path) -> Result<()> {
        crate::ids::check_key_id(id)?;
        let req = self.authorized(self.agent.get(format!("{}/v1/keys/{id}/zkey", self.base)));
        let mut r = req.call().map_err(transport)?;
        if !r.status().is_success() {
            return Self::answer(r).map(drop);
        }
        let local = |e: std::io::Error| {
            ServiceError::new(ErrorCode::Internal, format!("{}: {e}", path.display()))
        };
        let mut out = std::fs::File::create(path).map_err(local)?;
        let mut body = r.body_mut().with_config().limit(u64::MAX).reader();
        std::io::copy(&mut body, &mut out).map_err(|e| {
            // ureq's reader reports the transfer's own failures as io errors.
            ServiceError::new(ErrorCode::Internal, format!("the .zkey of key {id}: {e}"))
        })?;
        out.sync_all().map_err(local)
    }

    /// The witness of job `id`, to the worker whose claim `claim` holds it.
    pub fn witness(&self, id: &str, claim: &str) -> Result<Vec<u8>> {
        crate::ids::check_job_id(id)?;
        let req = self.authorized(
            self.agent
                .get(format!("{}/v1/jobs/{id}/witness", self.base))
                .header(crate::api::CLAIM_HEADER, claim),
        );
        Self::answer(req.call().map_err(transport)?)
    }

    /// Queues a proof of a `.wtns` witness.
    pub fn submit(&self, key: &str, wtns: &[u8]) -> Result<RemoteJob> {
        crate::ids::check_key_id(key)?;
        let path = format!("/v1/keys/{key}/jobs");
        Self::json(&self.post(&path, "application/octet-stream", wtns)?)
    }

    /// Queues a proof of a witness given as JSON (an array of decimal strings).
    pub fn submit_json(&self, key: &str, witness_json: &str) -> Result<RemoteJob> {
        crate::ids::check_key_id(key)?;
        let path = format!("/v1/keys/{key}/jobs");
        Self::json(&self.post(&path, "application/json", witness_json.as_bytes())?)
    }

    /// A job, after waiting up to `wait` for it to end.
    pub fn job(&self, id: &str, wait: Duration) -> Result<RemoteJob> {
        crate::ids::check_job_id(id)?;
        Self::json(&self.get(&format!("/v1/jobs/{id}?wait_ms={}", wait.as_millis()))?)
    }

    /// Waits until the job ends (each request waits up to 30 s), then returns it.
    pub fn wait(&self, id: &str) -> Result<RemoteJob> {
        loop {
            let job = self.job(id, Duration::from_secs(30))?;
            if job.is_final() {
                return Ok(job);
            }
        }
    }

    /// The proof of a done job.
    pub fn proof(&self, id: &str) -> Result<ProofResult> {
        crate::ids::check_job_id(id)?;
        Self::json(&self.get(&format!("/v1/jobs/{id}/proof"))?)
    }

    /// Cancels a job.
    pub fn cancel(&self, id: &str) -> Result<RemoteJob> {
        crate::ids::check_job_id(id)?;
        let req = self.authorized(self.agent.delete(format!("{}/v1/jobs/{id}", self.base)));
        Self::json(&Self::answer(req.call().map_err(transport)?)?)
    }
}
