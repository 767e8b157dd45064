//! The job queue's guarantees on SQLite, and on PostgreSQL when scripts/service.sh runs the
//! ignored tests with a server: claims in order, leases that expire and are taken over with
//! exactly one result, attempts that run out, cancel and release, and many claimers at once
//! with no job claimed twice.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::{db_with_key, postgres_url, sqlite_url};
use zkgpu_service::{Db, ErrorCode, JobState, ServiceError};

const LONG: Duration = Duration::from_secs(60);
const KEEP: Duration = Duration::from_secs(3600);

fn key() -> String {
    "ab".repeat(32)
}

fn job_id(i: usize) -> String {
    format!("{i:032x}")
}

async fn state(db: &Db, id: &str) -> JobState {
    db.job(id).await.unwrap().unwrap().state
}

/// Claims in submission order; a result is written once, under its claim.
async fn claims_in_order(db: &Db) {
    for i in 0..3 {
        db.insert_job(&job_id(i), &key()).await.unwrap();
        // Distinct creation times (the order's first key).
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let a = db.claim("a", LONG, 3).await.unwrap().unwrap();
    let b = db.claim("b", LONG, 3).await.unwrap().unwrap();
    assert_eq!(
        (a.id.as_str(), a.witness.as_deref(), a.attempt),
        (job_id(0).as_str(), None, 1)
    );
    assert_eq!(b.id, job_id(1));
    assert!(db.heartbeat(&a, LONG).await.unwrap());
    assert!(
        db.complete(&a, "{\"p\":1}", "[\"1\"]", 2.5, KEEP)
            .await
            .unwrap()
    );
    // Twice: the claim is spent.
    assert!(!db.complete(&a, "{\"p\":2}", "[]", 1.0, KEEP).await.unwrap());
    assert_eq!(db.result(&a.id).await.unwrap().unwrap().0, "{\"p\":1}");
    assert!(!db.heartbeat(&a, LONG).await.unwrap());
    let job = db.job(&a.id).await.unwrap().unwrap();
    assert_eq!((job.state, job.prove_ms), (JobState::Done, Some(2.5)));
    // b gives its claim back: queued, the attempt not counted, claimed again first.
    assert!(db.release(&b).await.unwrap());
    let again = db.claim("c", LONG, 3).await.unwrap().unwrap();
    assert_eq!((again.id.as_str(), again.attempt), (b.id.as_str(), 1));
    assert!(!db.complete(&b, "{}", "[]", 1.0, KEEP).await.unwrap());
    let c = db.claim("c", LONG, 3).await.unwrap().unwrap();
    assert_eq!(c.id, job_id(2));
    assert!(db.claim("d", LONG, 3).await.unwrap().is_none());
    let mut live = db.live_jobs().await.unwrap();
    live.sort();
    assert_eq!(live, [job_id(1), job_id(2)]);
}

/// A lease that expires is taken over; the first claim's late result is discarded.
async fn expired_lease_taken_over(db: &Db) {
    db.insert_job(&job_id(10), &key()).await.unwrap();
    let dead = db
        .claim("dead", Duration::from_millis(40), 3)
        .await
        .unwrap()
        .unwrap();
    assert!(
        db.claim("other", LONG, 3).await.unwrap().is_none(),
        "the lease still holds"
    );
    tokio::time::sleep(Duration::from_millis(120)).await;
    let live = db.claim("live", LONG, 3).await.unwrap().unwrap();
    assert_eq!((live.id.as_str(), live.attempt), (job_id(10).as_str(), 2));
    // The witness is served under the claim that holds, not the expired one.
    assert!(db.claim_holds(&live.id, &live.claim).await.unwrap());
    assert!(!db.claim_holds(&dead.id, &dead.claim).await.unwrap());
    assert!(!db.heartbeat(&dead, LONG).await.unwrap());
    assert!(
        !db.complete(&dead, "{\"late\":1}", "[]", 1.0, KEEP)
            .await
            .unwrap()
    );
    assert!(
        db.complete(&live, "{\"live\":1}", "[]", 1.0, KEEP)
            .await
            .unwrap()
    );
    assert_eq!(
        db.result(&live.id).await.unwrap().unwrap().0,
        "{\"live\":1}"
    );
}

/// Failures: permanent ones at once, others until the attempts run out; a lease that
/// expires on the last attempt fails the job.
async fn failures(db: &Db) {
    let gpu = ServiceError::new(ErrorCode::Gpu, "device lost");
    let unsat = ServiceError::new(ErrorCode::NotSatisfied, "no");
    db.insert_job(&job_id(20), &key()).await.unwrap();
    let j = db.claim("a", LONG, 2).await.unwrap().unwrap();
    assert!(db.fail(&j, &gpu, 2, KEEP).await.unwrap());
    assert_eq!(state(db, &j.id).await, JobState::Queued);
    let j = db.claim("a", LONG, 2).await.unwrap().unwrap();
    assert_eq!(j.attempt, 2);
    assert!(db.fail(&j, &gpu, 2, KEEP).await.unwrap());
    let info = db.job(&j.id).await.unwrap().unwrap();
    assert_eq!(
        (info.state, info.error_code.as_deref()),
        (JobState::Failed, Some("gpu"))
    );
    assert!(db.result(&j.id).await.unwrap().is_none());

    db.insert_job(&job_id(21), &key()).await.unwrap();
    let j = db.claim("a", LONG, 2).await.unwrap().unwrap();
    assert!(db.fail(&j, &unsat, 2, KEEP).await.unwrap());
    let info = db.job(&j.id).await.unwrap().unwrap();
    assert_eq!((info.state, info.attempts), (JobState::Failed, 1));
    assert_eq!(info.error_code.as_deref(), Some("not_satisfied"));

    db.insert_job(&job_id(22), &key()).await.unwrap();
    let short = Duration::from_millis(30);
    db.claim("a", short, 2).await.unwrap().unwrap();
    tokio::time::sleep(Duration::from_millis(80)).await;
    let j = db.claim("b", short, 2).await.unwrap().unwrap();
    assert_eq!(j.attempt, 2);
    tokio::time::sleep(Duration::from_millis(80)).await;
    assert!(db.claim("c", short, 2).await.unwrap().is_none());
    let info = db.job(&j.id).await.unwrap().unwrap();
    assert_eq!(
        (info.state, info.error_code.as_deref()),
        (JobState::Failed, Some("lease_expired"))
    );
}

/// Cancel: a queued job is never claimed; a running one's result is discarded.
async fn cancels(db: &Db) {
    db.insert_job(&job_id(30), &key()).await.unwrap();
    assert!(db.cancel(&job_id(30), KEEP).await.unwrap());
    assert!(!db.cancel(&job_id(30), KEEP).await.unwrap());
    assert!(db.claim("a", LONG, 3).await.unwrap().is_none());
    db.insert_job(&job_id(31), &key()).await.unwrap();
    let j = db.claim("a", LONG, 3).await.unwrap().unwrap();
    assert!(db.cancel(&j.id, KEEP).await.unwrap());
    assert!(!db.complete(&j, "{}", "[]", 1.0, KEEP).await.unwrap());
    assert_eq!(state(db, &j.id).await, JobState::Cancelled);
    // Expiry: kept for zero time, deleted by the sweep.
    db.insert_job(&job_id(32), &key()).await.unwrap();
    assert!(db.cancel(&job_id(32), Duration::ZERO).await.unwrap());
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert!(db.delete_expired().await.unwrap() >= 1);
    assert!(db.job(&job_id(32)).await.unwrap().is_none());
}

/// Many claimers at once: every job done exactly once, none claimed twice.
async fn many_claimers(db: &Db) {
    let n = 60;
    for i in 0..n {
        db.insert_job(&job_id(100 + i), &key()).await.unwrap();
    }
    let mut tasks = Vec::new();
    for w in 0..8 {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(j) = db.claim(&format!("w{w}"), LONG, 3).await.unwrap() {
                assert!(db.complete(&j, "{}", "[]", 1.0, KEEP).await.unwrap());
                mine.push(j.id);
            }
            mine
        }));
    }
    let mut seen = HashSet::new();
    for t in tasks {
        for id in t.await.unwrap() {
            assert!(seen.insert(id.clone()), "{id} claimed twice");
        }
    }
    assert_eq!(seen.len(), n);
    let (states, _) = db.counts().await.unwrap();
    let done = states.iter().find(|(s, _)| s == "done").unwrap().1;
    assert!(done >= n as i64);
}

async fn suite(url: &str) {
    let db = db_with_key(url).await;
    // A second connection runs the migrations again: nothing to do.
    Db::connect(url).await.unwrap();
    claims_in_order(&db).await;
    expired_lease_taken_over(&db).await;
    failures(&db).await;
    cancels(&db).await;
    many_claimers(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn queue_on_sqlite() {
    suite(&sqlite_url("queue")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: scripts/service.sh test starts one and runs it"]
async fn queue_on_postgres() {
    suite(&postgres_url("queue").await).await;
}

#[tokio::test]
async fn bad_database_urls_are_refused() {
    let e = Db::connect("mysql://x").await.unwrap_err();
    assert_eq!(e.code, ErrorCode::BadRequest);
    let e = Db::connect("sqlite:///nonexistent-dir-zkgpu/x/jobs.db")
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Database);
}
