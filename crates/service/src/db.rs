//! The durable job queue: keys and jobs in SQLite (one machine, one file) or PostgreSQL
//! (several machines), through one set of statements.
//!
//! A job is `queued`, then `running` under a worker's lease (a random claim token and an
//! expiry renewed by heartbeats), then `done`, `failed` or `cancelled`. Every change is one
//! statement, so one transaction; a worker's result is written only while its claim still
//! holds, so a job reclaimed after its lease expired is answered once, by the claim that
//! holds it. The clock is the database's, so workers' clocks need not agree.

use std::time::Duration;

use serde::Serialize;
use sqlx::AnyPool;
use sqlx::any::AnyPoolOptions;

use crate::error::{ErrorCode, Result, ServiceError};

/// Which database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite, embedded: a file.
    Sqlite,
    /// PostgreSQL: a server that several machines share.
    Postgres,
}

impl Dialect {
    /// Milliseconds since the Unix epoch, by the database's clock.
    pub(crate) fn now_ms(self) -> &'static str {
        match self {
            Self::Sqlite => "CAST((julianday('now') - 2440587.5) * 86400000.0 AS BIGINT)",
            Self::Postgres => "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
        }
    }

    pub(crate) fn blob(self) -> &'static str {
        match self {
            Self::Sqlite => "BLOB",
            Self::Postgres => "BYTEA",
        }
    }

    /// What the claim's inner select appends: PostgreSQL skips rows other workers hold;
    /// SQLite has one writer at a time, so its statement is atomic as it stands.
    fn skip_locked(self) -> &'static str {
        match self {
            Self::Sqlite => "",
            Self::Postgres => "FOR UPDATE SKIP LOCKED",
        }
    }
}

/// A job's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    /// Waiting for a worker.
    Queued,
    /// Being proved under a worker's lease.
    Running,
    /// Proved: its proof and public signals are kept until it expires.
    Done,
    /// Failed with an error code.
    Failed,
    /// Cancelled by a client.
    Cancelled,
}

impl JobState {
    /// The state's name in the database and the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// The state of a name.
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Queued,
            Self::Running,
            Self::Done,
            Self::Failed,
            Self::Cancelled,
        ]
        .into_iter()
        .find(|j| j.as_str() == s)
    }

    /// Whether the job will not change any more.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Done | Self::Failed | Self::Cancelled)
    }
}

/// A registered key's description.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct KeyInfo {
    /// The key's id: the hex of its `.zkey`'s hash.
    pub id: String,
    /// Its curve (`bn254`, `bls12-381`: `zkgpu_circom::Curve::name`).
    pub curve: String,
    /// The `.zkey`'s size.
    pub bytes: i64,
    /// Constraints of its circuit.
    pub constraints: i64,
    /// Signals, the constant one included (a witness's length).
    pub signals: i64,
    /// Public signals.
    pub public_signals: i64,
}

/// A job's description (no witness, no proof).
#[derive(Clone, Debug, Serialize)]
pub struct JobInfo {
    /// The job's id.
    pub id: String,
    /// The key it proves with.
    pub key: String,
    /// Its state.
    pub state: JobState,
    /// Claims so far (a lease that expired counts).
    pub attempts: i64,
    /// The failure's code, when failed.
    pub error_code: Option<String>,
    /// The failure's message.
    pub error_message: Option<String>,
    /// Milliseconds the proof took on its worker, when done.
    pub prove_ms: Option<f64>,
    /// When it was submitted (ms since the Unix epoch).
    pub created_ms: i64,
    /// When it last changed.
    pub updated_ms: i64,
}

/// A claimed job: what a worker proves.
#[derive(Debug)]
pub struct Claimed {
    /// The job's id.
    pub id: String,
    /// The key's id.
    pub key: String,
    /// The witness as a `.wtns` when the row holds one (rows queued before witnesses moved
    /// to the API's witness files); `None`: the worker reads it from there.
    pub witness: Option<Vec<u8>>,
    /// This claim's token: results are written only under it.
    pub claim: String,
    /// Which claim of the job this is (1 the first).
    pub attempt: i64,
}

impl Claimed {
    /// The claim without the witness (what a heartbeat needs).
    pub fn token(&self) -> Self {
        Self {
            id: self.id.clone(),
            key: self.key.clone(),
            witness: None,
            claim: self.claim.clone(),
            attempt: self.attempt,
        }
    }
}

/// A connection pool and its dialect.
#[derive(Clone, Debug)]
pub struct Db {
    pool: AnyPool,
    dialect: Dialect,
}

const JOB_COLUMNS: &str = "id, key_id, state, attempts, error_code, error_message, prove_ms, \
                           created_ms, updated_ms";
type JobRow = (
    String,
    String,
    String,
    i64,
    Option<String>,
    Option<String>,
    Option<f64>,
    i64,
    i64,
);

fn job_info(r: JobRow) -> Result<JobInfo> {
    let state = JobState::parse(&r.2)
        .ok_or_else(|| ServiceError::new(ErrorCode::Database, format!("job state {:?}", r.2)))?;
    Ok(JobInfo {
        id: r.0,
        key: r.1,
        state,
        attempts: r.3,
        error_code: r.4,
        error_message: r.5,
        prove_ms: r.6,
        created_ms: r.7,
        updated_ms: r.8,
    })
}

impl Db {
    /// Connects to `url` (`sqlite://PATH` — created if missing — or
    /// `postgres://USER:PASSWORD@HOST:PORT/DB`) and migrates its schema.
    pub async fn connect(url: &str) -> Result<Self> {
        sqlx::any::install_default_drivers();
        let (dialect, url) = if let Some(path) = url.strip_prefix("sqlite://") {
            let sep = if path.contains('?') { '&' } else { '?' };
            (Dialect::Sqlite, format!("{url}{sep}mode=rwc"))
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            (Dialect::Postgres, url.to_owned())
        } else {
            return Err(ServiceError::bad_request(format!(
                "--db {url:?}: not sqlite://PATH or postgres://..."
            )));
        };
        let pool = AnyPoolOptions::new()
            .max_connections(if dialect == Dialect::Sqlite { 4 } else { 8 })
            .acquire_timeout(Duration::from_secs(10))
            .connect(&url)
            .await?;
        if dialect == Dialect::Sqlite {
            // Readers beside the one writer; a writer waits for the lock instead of failing.
            sqlx::query("PRAGMA journal_mode = WAL")
                .execute(&pool)
                .await?;
        }
        crate::schema::migrate(&pool, dialect).await?;
        Ok(Self { pool, dialect })
    }

    /// Which database this is.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    fn sql(&self, s: &str) -> String {
        s.replace("{now}", self.dialect.now_ms())
            .replace("{skip_locked}", self.dialect.skip_locked())
    }

    /// Records a key; false when it was there already (same id, same bytes).
    pub async fn insert_key(&self, k: &KeyInfo) -> Result<bool> {
        let sql = self.sql(
            "INSERT INTO zkgpu_keys (id, curve, bytes, constraints, signals, public_signals, \
             created_ms) VALUES ($1, $2, $3, $4, $5, $6, {now}) ON CONFLICT (id) DO NOTHING",
        );
        let done = sqlx::query(&sql)
            .bind(&k.id)
            .bind(&k.curve)
            .bind(k.bytes)
            .bind(k.constraints)
            .bind(k.signals)
            .bind(k.public_signals)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The key of `id`.
    pub async fn key(&self, id: &str) -> Result<Option<KeyInfo>> {
        let row: Option<(String, String, i64, i64, i64, i64)> = sqlx::query_as(
            "SELECT id, curve, bytes, constraints, signals, public_signals FROM zkgpu_keys \
             WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| KeyInfo {
            id: r.0,
            curve: r.1,
            bytes: r.2,
            constraints: r.3,
            signals: r.4,
            public_signals: r.5,
        }))
    }

    /// Every registered key, oldest first.
    pub async fn keys(&self) -> Result<Vec<KeyInfo>> {
        let rows: Vec<(String, String, i64, i64, i64, i64)> = sqlx::query_as(
            "SELECT id, curve, bytes, constraints, signals, public_signals FROM zkgpu_keys \
             ORDER BY created_ms, id",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| KeyInfo {
                id: r.0,
                curve: r.1,
                bytes: r.2,
                constraints: r.3,
                signals: r.4,
                public_signals: r.5,
            })
            .collect())
    }

    /// Queues job `id` of `key` (its witness, checked, stored by the caller first).
    pub async fn insert_job(&self, id: &str, key: &str) -> Result<()> {
        let sql = self.sql(
            "INSERT INTO zkgpu_jobs (id, key_id, state, created_ms, updated_ms, attempts) \
             VALUES ($1, $2, 'queued', {now}, {now}, 0)",
        );
        sqlx::query(&sql)
            .bind(id)
            .bind(key)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The ids of the queued and running jobs (whose witnesses are kept).
    pub async fn live_jobs(&self) -> Result<Vec<String>> {
        let rows: Vec<(String,)> =
            sqlx::query_as("SELECT id FROM zkgpu_jobs WHERE state IN ('queued', 'running')")
                .fetch_all(&self.pool)
                .await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    /// The ids of the jobs that ended within `within` (whose witnesses can go).
    pub async fn ended_within(&self, within: Duration) -> Result<Vec<String>> {
        let sql = self.sql(
            "SELECT id FROM zkgpu_jobs WHERE state IN ('done', 'failed', 'cancelled') \
             AND updated_ms > {now} - $1",
        );
        let rows: Vec<(String,)> = sqlx::query_as(&sql)
            .bind(within.as_millis() as i64)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    /// Whether `claim` holds job `id` (it runs under that claim).
    pub async fn claim_holds(&self, id: &str, claim: &str) -> Result<bool> {
        let row: Option<(String,)> = sqlx::query_as(
            "SELECT id FROM zkgpu_jobs WHERE id = $1 AND claim = $2 AND state = 'running'",
        )
        .bind(id)
        .bind(claim)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.is_some())
    }

    /// The job of `id`.
    pub async fn job(&self, id: &str) -> Result<Option<JobInfo>> {
        let sql = format!("SELECT {JOB_COLUMNS} FROM zkgpu_jobs WHERE id = $1");
        let row: Option<JobRow> = sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(job_info).transpose()
    }

    /// Jobs, newest first, at most `limit`, of one state or all.
    pub async fn jobs(&self, state: Option<JobState>, limit: i64) -> Result<Vec<JobInfo>> {
        let filter = if state.is_some() {
            "WHERE state = $2"
        } else {
            ""
        };
        let sql = format!(
            "SELECT {JOB_COLUMNS} FROM zkgpu_jobs {filter} ORDER BY created_ms DESC, id LIMIT $1"
        );
        let mut q = sqlx::query_as::<_, JobRow>(&sql).bind(limit);
        if let Some(s) = state {
            q = q.bind(s.as_str());
        }
        q.fetch_all(&self.pool)
            .await?
            .into_iter()
            .map(job_info)
            .collect()
    }

    /// The proof and public signals (snarkjs' JSON) of a done job.
    pub async fn result(&self, id: &str) -> Result<Option<(String, String)>> {
        let row: Option<(Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT proof, public_signals FROM zkgpu_jobs WHERE id = $1 AND state = 'done'",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.and_then(|(p, s)| Some((p?, s?))))
    }

    /// Fails the running jobs whose lease expired on their last allowed attempt; returns how
    /// many.
    pub async fn fail_expired(&self, max_attempts: i64) -> Result<u64> {
        let sql = self.sql(
            "UPDATE zkgpu_jobs SET state = 'failed', error_code = 'lease_expired', \
             error_message = 'the worker stopped renewing its lease on the last attempt', \
             witness = NULL, claim = NULL, updated_ms = {now} \
             WHERE state = 'running' AND lease_until_ms < {now} AND attempts >= $1",
        );
        let done = sqlx::query(&sql)
            .bind(max_attempts)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }

    /// Claims the oldest queued job, or a running one whose lease expired, for `worker` with
    /// a lease of `lease`.
    pub async fn claim(
        &self,
        worker: &str,
        lease: Duration,
        max_attempts: i64,
    ) -> Result<Option<Claimed>> {
        self.fail_expired(max_attempts).await?;
        let claim = crate::ids::random_id();
        let sql = self.sql(
            "UPDATE zkgpu_jobs SET state = 'running', worker = $1, claim = $2, \
             lease_until_ms = {now} + $3, attempts = attempts + 1, updated_ms = {now} \
             WHERE id = (SELECT id FROM zkgpu_jobs WHERE state = 'queued' \
               OR (state = 'running' AND lease_until_ms < {now}) \
               ORDER BY created_ms, id LIMIT 1 {skip_locked}) \
             RETURNING id, key_id, witness, attempts",
        );
        let row: Option<(String, String, Option<Vec<u8>>, i64)> = sqlx::query_as(&sql)
            .bind(worker)
            .bind(&claim)
            .bind(lease.as_millis() as i64)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|(id, key, witness, attempt)| Claimed {
            id,
            key,
            witness,
            claim,
            attempt,
        }))
    }

    /// Renews a claim's lease; false when the claim no longer holds (the job was cancelled,
    /// or reclaimed after the lease expired).
    pub async fn heartbeat(&self, job: &Claimed, lease: Duration) -> Result<bool> {
        let sql = self.sql(
            "UPDATE zkgpu_jobs SET lease_until_ms = {now} + $3 \
             WHERE id = $1 AND claim = $2 AND state = 'running'",
        );
        let done = sqlx::query(&sql)
            .bind(&job.id)
            .bind(&job.claim)
            .bind(lease.as_millis() as i64)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records a claim's proof (kept for `keep`); false when the claim no longer holds, and
    /// then nothing is written.
    pub async fn complete(
        &self,
        job: &Claimed,
        proof: &str,
        public: &str,
        prove_ms: f64,
        keep: Duration,
    ) -> Result<bool> {
        let sql = self.sql(
            "UPDATE zkgpu_jobs SET state = 'done', proof = $3, public_signals = $4, \
             prove_ms = $5, witness = NULL, claim = NULL, updated_ms = {now}, \
             expires_ms = {now} + $6 \
             WHERE id = $1 AND claim = $2 AND state = 'running'",
        );
        let done = sqlx::query(&sql)
            .bind(&job.id)
            .bind(&job.claim)
            .bind(proof)
            .bind(public)
            .bind(prove_ms)
            .bind(keep.as_millis() as i64)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records a claim's failure: final when the error is permanent or the attempts are
    /// spent, else the job is queued again. False when the claim no longer holds.
    pub async fn fail(
        &self,
        job: &Claimed,
        error: &ServiceError,
        max_attempts: i64,
        keep: Duration,
    ) -> Result<bool> {
        let last = error.code.is_permanent() || job.attempt >= max_attempts;
        let q = if last {
            "UPDATE zkgpu_jobs SET state = 'failed', error_code = $3, error_message = $4, \
             witness = NULL, claim = NULL, updated_ms = {now}, expires_ms = {now} + $5 \
             WHERE id = $1 AND claim = $2 AND state = 'running'"
        } else {
            "UPDATE zkgpu_jobs SET state = 'queued', error_code = $3, error_message = $4, \
             claim = NULL, worker = NULL, updated_ms = {now} \
             WHERE id = $1 AND claim = $2 AND state = 'running'"
        };
        let sql = self.sql(q);
        let mut q = sqlx::query(&sql)
            .bind(&job.id)
            .bind(&job.claim)
            .bind(error.code.as_str())
            .bind(&error.message);
        if last {
            q = q.bind(keep.as_millis() as i64);
        }
        let done = q.execute(&self.pool).await?;
        Ok(done.rows_affected() == 1)
    }

    /// Gives a claim back unproved (a worker shutting down): queued again, the attempt not
    /// counted.
    pub async fn release(&self, job: &Claimed) -> Result<bool> {
        let sql = self.sql(
            "UPDATE zkgpu_jobs SET state = 'queued', claim = NULL, worker = NULL, \
             attempts = attempts - 1, updated_ms = {now} \
             WHERE id = $1 AND claim = $2 AND state = 'running'",
        );
        let done = sqlx::query(&sql)
            .bind(&job.id)
            .bind(&job.claim)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Cancels a queued or running job (kept for `keep`); false when it had already ended.
    pub async fn cancel(&self, id: &str, keep: Duration) -> Result<bool> {
        let sql = self.sql(
            "UPDATE zkgpu_jobs SET state = 'cancelled', witness = NULL, claim = NULL, \
             updated_ms = {now}, expires_ms = {now} + $2 \
             WHERE id = $1 AND state IN ('queued', 'running')",
        );
        let done = sqlx::query(&sql)
            .bind(id)
            .bind(keep.as_millis() as i64)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Deletes the ended jobs past their expiry; returns how many.
    pub async fn delete_expired(&self) -> Result<u64> {
        let sql = self.sql("DELETE FROM zkgpu_jobs WHERE expires_ms < {now}");
        Ok(sqlx::query(&sql).execute(&self.pool).await?.rows_affected())
    }

    /// Jobs by state, and failed jobs by error code.
    pub async fn counts(&self) -> Result<(Vec<(String, i64)>, Vec<(String, i64)>)> {
        let states = sqlx::query_as("SELECT state, COUNT(*) FROM zkgpu_jobs GROUP BY state")
            .fetch_all(&self.pool)
            .await?;
        let codes = sqlx::query_as(
            "SELECT COALESCE(error_code, ''), COUNT(*) FROM zkgpu_jobs WHERE state = 'failed' \
             GROUP BY error_code",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok((states, codes))
    }
}
