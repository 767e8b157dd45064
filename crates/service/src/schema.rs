//! The database's schema and its migrations, for SQLite and PostgreSQL: each migration runs
//! once, in one transaction with its row in `zkgpu_schema` (the versions applied).

use sqlx::{AnyPool, Executor};

use crate::db::Dialect;
use crate::error::Result;

/// The migrations in order: (version, what it does, its statements with `{blob}` for the
/// dialect's byte-string type). Jobs' `witness` column is written no more (witnesses are
/// files: crate::witness); a row queued before that still has its witness there and is
/// proved from it.
const MIGRATIONS: &[(i64, &str, &str)] = &[(
    1,
    "keys and jobs",
    "CREATE TABLE zkgpu_keys (
        id TEXT PRIMARY KEY,
        curve TEXT NOT NULL,
        bytes BIGINT NOT NULL,
        constraints BIGINT NOT NULL,
        signals BIGINT NOT NULL,
        public_signals BIGINT NOT NULL,
        created_ms BIGINT NOT NULL
    );
    CREATE TABLE zkgpu_jobs (
        id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL REFERENCES zkgpu_keys(id),
        state TEXT NOT NULL,
        witness {blob},
        created_ms BIGINT NOT NULL,
        updated_ms BIGINT NOT NULL,
        worker TEXT,
        claim TEXT,
        lease_until_ms BIGINT,
        attempts BIGINT NOT NULL DEFAULT 0,
        error_code TEXT,
        error_message TEXT,
        proof TEXT,
        public_signals TEXT,
        prove_ms DOUBLE PRECISION,
        expires_ms BIGINT
    );
    CREATE INDEX zkgpu_jobs_queue ON zkgpu_jobs (state, created_ms);
    CREATE INDEX zkgpu_jobs_expiry ON zkgpu_jobs (expires_ms);",
)];

/// The newest schema version this build knows.
pub const SCHEMA_VERSION: i64 = 1;

/// Applies the migrations not yet applied. Several processes may start at once: on
/// PostgreSQL an advisory lock orders them; SQLite's write lock does the same.
pub(crate) async fn migrate(pool: &AnyPool, dialect: Dialect) -> Result<()> {
    let mut conn = pool.acquire().await?;
    if dialect == Dialect::Postgres {
        conn.execute("SELECT pg_advisory_lock(7234001)").await?;
    }
    let outcome = apply(&mut conn, dialect).await;
    if dialect == Dialect::Postgres {
        conn.execute("SELECT pg_advisory_unlock(7234001)").await?;
    }
    outcome
}

async fn apply(conn: &mut sqlx::AnyConnection, dialect: Dialect) -> Result<()> {
    conn.execute(
        "CREATE TABLE IF NOT EXISTS zkgpu_schema (
            version BIGINT PRIMARY KEY, description TEXT NOT NULL, applied_ms BIGINT NOT NULL)",
    )
    .await?;
    let (have,): (i64,) = sqlx::query_as("SELECT COALESCE(MAX(version), 0) FROM zkgpu_schema")
        .fetch_one(&mut *conn)
        .await?;
    if have > SCHEMA_VERSION {
        return Err(crate::ServiceError::new(
            crate::ErrorCode::Database,
            format!(
                "the database's schema is version {have}, newer than this build's {SCHEMA_VERSION}: upgrade zkgpu"
            ),
        ));
    }
    for &(version, description, sql) in MIGRATIONS.iter().filter(|m| m.0 > have) {
        let sql = sql.replace("{blob}", dialect.blob());
        let mut tx = sqlx::Acquire::begin(&mut *conn).await?;
        for statement in sql.split(';').filter(|s| !s.trim().is_empty()) {
            tx.execute(statement).await?;
        }
        sqlx::query(&format!(
            "INSERT INTO zkgpu_schema (version, description, applied_ms) VALUES ($1, $2, {})",
            dialect.now_ms()
        ))
        .bind(version)
        .bind(description)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        tracing::info!(version, description, "database migrated");
    }
    Ok(())
}
