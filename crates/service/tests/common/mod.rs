//! Test support: fixtures, temporary directories and databases.

#![allow(dead_code, clippy::unwrap_used, clippy::print_stdout)]

use std::path::PathBuf;

use zkgpu_service::{Db, KeyInfo};

/// The bytes of circom fixture `name` (crates/circom/tests/fixtures).
pub fn fixture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../circom/tests/fixtures")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A fresh directory under the system's temporary one.
pub fn temp_dir(what: &str) -> PathBuf {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).unwrap();
    let d = std::env::temp_dir().join(format!(
        "zkgpu-service-{what}-{}",
        b.iter().map(|x| format!("{x:02x}")).collect::<String>()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A fresh SQLite database's URL.
pub fn sqlite_url(what: &str) -> String {
    format!("sqlite://{}", temp_dir(what).join("jobs.db").display())
}

/// A fresh PostgreSQL database on the server at `ZKGPU_TEST_POSTGRES` (a URL of a database
/// the user may create databases from; scripts/service.sh starts one). Panics without it:
/// the tests that call this are ignored unless run by that script.
pub async fn postgres_url(what: &str) -> String {
    use sqlx::Connection;
    let admin = std::env::var("ZKGPU_TEST_POSTGRES")
        .expect("ZKGPU_TEST_POSTGRES names no server: run scripts/service.sh test");
    let mut b = [0u8; 6];
    getrandom::fill(&mut b).unwrap();
    let name = format!(
        "zkgpu_{what}_{}",
        b.iter().map(|x| format!("{x:02x}")).collect::<String>()
    );
    let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .unwrap();
    let base = admin.rsplit_once('/').unwrap().0;
    format!("{base}/{name}")
}

/// A key row (its file is not needed by the queue).
pub fn key_info(id: &str) -> KeyInfo {
    KeyInfo {
        id: id.to_owned(),
        curve: "bn254".into(),
        bytes: 1,
        constraints: 1,
        signals: 1,
        public_signals: 0,
    }
}

/// A database with one key row, `"ab" * 32`.
pub async fn db_with_key(url: &str) -> Db {
    let db = Db::connect(url).await.unwrap();
    db.insert_key(&key_info(&"ab".repeat(32))).await.unwrap();
    db
}
