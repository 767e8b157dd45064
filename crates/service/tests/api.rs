//! The API without workers: tokens, ids, every malformed request class with its code (the
//! service serving after each), body limits (a declared length over the limit refused before
//! the body is sent), keys registered once, jobs listed and cancelled, health and metrics.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{fixture, sqlite_url, temp_dir};
use zkgpu_service::{Client, ErrorCode, Limits, ServeConfig, Tokens, WorkerConfig, start};

fn config(tokens: Tokens, limits: Limits) -> ServeConfig {
    ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        db: sqlite_url("api"),
        data: temp_dir("api-data"),
        tokens,
        limits,
        worker: WorkerConfig::default(),
    }
}

fn code<T: std::fmt::Debug>(r: zkgpu_service::Result<T>) -> ErrorCode {
    r.unwrap_err().code
}

/// A raw request: the status line's code and the body.
fn raw(addr: SocketAddr, request: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_required_and_checked() {
    let running = start(config(Tokens::new(["s3cret"]), Limits::default()), None)
        .await
        .unwrap();
    let base = format!("http://{}", running.addr);
    tokio::task::spawn_blocking(move || {
        for token in [None, Some("wrong".to_owned()), Some("s3cre".to_owned())] {
            let c = Client::new(&base, token);
            assert_eq!(code(c.register_key(b"x")), ErrorCode::Unauthorized);
            assert_eq!(
                code(c.job(&"0".repeat(32), Duration::ZERO)),
                ErrorCode::Unauthorized
            );
        }
        let ok = Client::new(&base, Some("s3cret".into()));
        assert_eq!(
            code(ok.job(&"0".repeat(32), Duration::ZERO)),
            ErrorCode::UnknownJob
        );
        // Health and readiness need no token; metrics do.
        let addr = base.trim_start_matches("http://").parse().unwrap();
        assert_eq!(
            raw(
                addr,
                "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            .0,
            200
        );
        assert_eq!(
            raw(
                addr,
                "GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            .0,
            200
        );
        assert_eq!(
            raw(
                addr,
                "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            .0,
            401
        );
    })
    .await
    .unwrap();
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn no_token_means_loopback_only() {
    let mut cfg = config(Tokens::default(), Limits::default());
    cfg.listen = "0.0.0.0:0".parse().unwrap();
    let e = start(cfg, None).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::BadRequest);
    assert!(e.message.contains("loopback"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_their_codes() {
    let limits = Limits {
        key_bytes: 64 << 10,
        witness_bytes: 64 << 10,
    };
    let cfg = config(Tokens::default(), limits);
    let data = cfg.data.clone();
    let running = start(cfg, None).await.unwrap();
    let addr = running.addr;
    tokio::task::spawn_blocking(move || bad_requests(addr, &data))
        .await
        .unwrap();
    running.shutdown().await.unwrap();
}

/// The names of the files in `dir`.
fn files(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn bad_requests(addr: SocketAddr, data: &std::path::Path) {
    let witnesses = &data.join("witnesses");
    let c = Client::new(&format!("http://{addr}"), None);
    let zkey = fixture("multiplier.zkey");
    // Keys: garbage, truncated, then the real one (new, then known).
    assert_eq!(code(c.register_key(b"not a zkey")), ErrorCode::InvalidKey);
    assert_eq!(
        code(c.register_key(&zkey[..zkey.len() / 2])),
        ErrorCode::InvalidKey
    );
    let key = c.register_key(&zkey).unwrap();
    assert_eq!(key.signals, 11);
    assert_eq!(c.register_key(&zkey).unwrap().id, key.id);
    // A key upload over the limit (64 KiB) with no declared length, counted as its chunks
    // arrive, and one cut short: refused, and like the refused keys above they leave nothing
    // in the key store but the registered key.
    let chunk = format!("{:x}\r\n{}\r\n", 40 << 10, "0".repeat(40 << 10));
    let (status, answer) = raw(
        addr,
        &format!(
            "POST /v1/keys HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\nContent-Type: application/octet-stream\r\n\r\n{chunk}{chunk}0\r\n\r\n"
        ),
    );
    assert!(status == 413 && answer.contains("too_large"), "{answer}");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(b"POST /v1/keys HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\nContent-Type: application/octet-stream\r\n\r\nzkey012345")
        .unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let _ = s.read_to_end(&mut Vec::new());
    assert_eq!(files(&data.join("keys")), [format!("{}.zkey", key.id)]);
    // A worker on another machine downloads the key to a file; an unknown key writes none.
    let got = data.join("downloaded.zkey");
    c.zkey_to_file(&key.id, &got).unwrap();
    assert_eq!(std::fs::read(&got).unwrap(), zkey);
    let missing = data.join("missing.zkey");
    let other = "ab".repeat(32);
    assert_eq!(
        code(c.zkey_to_file(&other, &missing)),
        ErrorCode::UnknownKey
    );
    assert!(!missing.exists());
    // Witnesses: another circuit's, garbage, a JSON value out of the field, JSON of another
    // length, a constant that is not one.
    let merkle_wtns = fixture("merkle.wtns");
    assert_eq!(
        code(c.submit(&key.id, &merkle_wtns[..60_000])),
        ErrorCode::InvalidWitness
    );
    let small = fixture("multiplier.wtns");
    assert_eq!(code(c.submit(&key.id, b"wtns")), ErrorCode::InvalidWitness);
    let p = "21888242871839275222246405745257275088548364400416034343698204186575808495617";
    let json = |v: &[&str]| {
        format!(
            "[{}]",
            v.iter()
                .map(|s| format!("\"{s}\""))
                .collect::<Vec<_>>()
                .join(",")
        )
    };
    let mut eleven = vec!["1"; 11];
    eleven[3] = p;
    assert_eq!(
        code(c.submit_json(&key.id, &json(&eleven))),
        ErrorCode::InvalidWitness
    );
    assert_eq!(
        code(c.submit_json(&key.id, &json(&["1"; 3]))),
        ErrorCode::WitnessMismatch
    );
    assert_eq!(
        code(c.submit_json(&key.id, &json(&["2"; 11]))),
        ErrorCode::WitnessMismatch
    );
    assert_eq!(
        code(c.submit_json(&key.id, "{not json")),
        ErrorCode::InvalidWitness
    );
    // Unknown key and job; ids crafted to escape the data directory.
    let other = "cd".repeat(32);
    assert_eq!(code(c.submit(&other, &small)), ErrorCode::UnknownKey);
    for path in [
        "/v1/keys/..%2F..%2Fetc%2Fpasswd/zkey",
        "/v1/keys/../../etc/passwd/zkey",
        "/v1/jobs/..%2fjobs.db",
        "/v1/jobs/XYZ/proof",
    ] {
        let (status, body) = raw(
            addr,
            &format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        );
        assert!(status == 400 || status == 404, "{path}: {status} {body}");
        assert!(!body.contains("root:"), "{path} leaked a file");
    }
    let (status, body) = raw(
        addr,
        "GET /v1/jobs?state=weird HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(status == 400 && body.contains("bad_request"), "{body}");
    // Over the limit: a body, and a declared length refused before the body is sent.
    let big = vec![0u8; 100 << 10];
    assert_eq!(code(c.submit(&key.id, &big)), ErrorCode::TooLarge);
    // A raw witness upload with `head` (its length or its chunking) and `body`: refused
    // as too large.
    let too_large = |head: &str, body: &str| {
        let (status, answer) = raw(
            addr,
            &format!(
                "POST /v1/keys/{}/jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{head}\r\nContent-Type: application/octet-stream\r\n\r\n{body}",
                key.id
            ),
        );
        assert_eq!(status, 413, "{answer}");
        assert!(answer.contains("too_large"), "{answer}");
    };
    let t = Instant::now();
    too_large("Content-Length: 10000000000", "abc");
    assert!(t.elapsed() < Duration::from_secs(10));
    // No declared length: counted as the chunks arrive, refused past the limit (2 x 40 KiB).
    let chunk = format!("{:x}\r\n{}\r\n", 40 << 10, "0".repeat(40 << 10));
    too_large(
        "Transfer-Encoding: chunked",
        &format!("{chunk}{chunk}0\r\n\r\n"),
    );
    // A body cut short (the client stops after 10 of 1000 bytes): refused, no job.
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let head = format!(
        "POST /v1/keys/{}/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\nContent-Type: application/octet-stream\r\n\r\n0123456789",
        key.id
    );
    s.write_all(head.as_bytes()).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let _ = s.read_to_end(&mut Vec::new());
    let (_, jobs) = raw(
        addr,
        "GET /v1/jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(jobs.ends_with("\r\n\r\n[]"), "{jobs}");
    // Neither left a part of its witness behind.
    let parts = files(witnesses);
    assert!(parts.is_empty(), "{parts:?}");
    // A job (no worker runs): queued, listed, no proof yet, cancelled, no proof ever.
    let job = c.submit(&key.id, &small).unwrap();
    assert_eq!(job.state, "queued");
    assert_eq!(code(c.proof(&job.id)), ErrorCode::NotReady);
    let t = Instant::now();
    assert_eq!(
        c.job(&job.id, Duration::from_millis(300)).unwrap().state,
        "queued"
    );
    assert!(t.elapsed() >= Duration::from_millis(250));
    assert_eq!(c.cancel(&job.id).unwrap().state, "cancelled");
    assert_eq!(code(c.proof(&job.id)), ErrorCode::NoProof);
    let (status, body) = raw(
        addr,
        "GET /v1/jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(status == 200 && body.contains(&job.id), "{body}");
    // The zkey served back is the one registered; metrics count what happened.
    assert_eq!(c.zkey(&key.id).unwrap(), zkey);
    let (_, metrics) = raw(
        addr,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(
        metrics.contains("zkgpu_jobs{state=\"cancelled\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("zkgpu_queue_depth 0"), "{metrics}");
    assert!(
        metrics.contains("route=\"submit\",status=\"400\""),
        "{metrics}"
    );
    // Still serving after all of it.
    assert_eq!(
        raw(
            addr,
            "GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .0,
        200
    );
}

/// A job's witness is a file while the job lives, served only under the claim that holds it,
/// and removed once the job ends (done or cancelled).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn witnesses_are_served_under_their_claim_and_swept() {
    let cfg = config(Tokens::default(), Limits::default());
    let (db_url, data) = (cfg.db.clone(), cfg.data.clone());
    let running = start(cfg, None).await.unwrap();
    let addr = running.addr;
    let c = Client::new(&format!("http://{addr}"), None);
    let small = fixture("multiplier.wtns");
    let (c2, w) = (c.clone(), small.clone());
    let (a, b) = tokio::task::spawn_blocking(move || {
        let key = c2.register_key(&fixture("multiplier.zkey")).unwrap();
        // A witness refused after it was written in part is not kept (the sweep would keep
        // it for 30 s, past this test's wait below).
        let mut bad = w.clone();
        bad.truncate(w.len() - 1);
        assert_eq!(code(c2.submit(&key.id, &bad)), ErrorCode::InvalidWitness);
        let mut other = w.clone();
        let last = other.len() - 32;
        other[last..].fill(0xff);
        assert_eq!(code(c2.submit(&key.id, &other)), ErrorCode::InvalidWitness);
        let a = c2.submit(&key.id, &w).unwrap();
        let b = c2.submit(&key.id, &w).unwrap();
        (a.id, b.id)
    })
    .await
    .unwrap();
    let file = |id: &str| data.join("witnesses").join(format!("{id}.wtns"));
    assert_eq!(std::fs::read(file(&a)).unwrap(), small);
    assert_eq!(std::fs::read(file(&b)).unwrap(), small);
    // A worker (here the queue itself) claims one (both were queued within a millisecond).
    let db = zkgpu_service::Db::connect(&db_url).await.unwrap();
    let claimed = db
        .claim("w", Duration::from_secs(60), 3)
        .await
        .unwrap()
        .unwrap();
    let (done, cancelled) = if claimed.id == a { (a, b) } else { (b, a) };
    assert_eq!(claimed.witness, None);
    let (c2, id, claim) = (c.clone(), done.clone(), claimed.claim.clone());
    let got = tokio::task::spawn_blocking(move || {
        let (status, body) = raw(
            addr,
            &format!("GET /v1/jobs/{id}/witness HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        );
        assert!(status == 400 && body.contains(CLAIM), "{body}");
        assert_eq!(code(c2.witness(&id, "forged")), ErrorCode::UnknownJob);
        c2.witness(&id, &claim).unwrap()
    })
    .await
    .unwrap();
    assert_eq!(got, small);
    // Done, and the other cancelled: both witnesses go within a sweep or two.
    assert!(
        db.complete(&claimed, "{}", "[]", 1.0, Duration::from_secs(60))
            .await
            .unwrap()
    );
    let (c2, id, claim) = (c.clone(), done.clone(), claimed.claim.clone());
    let after = tokio::task::spawn_blocking(move || {
        c2.cancel(&cancelled).unwrap();
        code(c2.witness(&id, &claim))
    })
    .await
    .unwrap();
    assert_eq!(after, ErrorCode::UnknownJob);
    let t = Instant::now();
    while std::fs::read_dir(data.join("witnesses")).unwrap().count() > 0 {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "witnesses of ended jobs kept"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    running.shutdown().await.unwrap();
}

const CLAIM: &str = "x-zkgpu-claim";
