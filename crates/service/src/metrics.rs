//! Counters of this process and the queue's gauges, written in Prometheus' text format at
//! `/metrics`.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::db::Db;
use crate::error::Result;

/// This process's counters (the queue's state is read from the database at each scrape).
#[derive(Debug, Default)]
pub struct Metrics {
    proofs: AtomicU64,
    prove_us: AtomicU64,
    reclaims: AtomicU64,
    lost_claims: AtomicU64,
    failures: Mutex<BTreeMap<&'static str, u64>>,
    requests: Mutex<BTreeMap<(&'static str, u16), u64>>,
}

impl Metrics {
    /// A proof made here, in `ms` of prover time.
    pub fn proved(&self, ms: f64) {
        self.proofs.fetch_add(1, Ordering::Relaxed);
        self.prove_us
            .fetch_add((ms * 1000.0) as u64, Ordering::Relaxed);
    }

    /// A job claimed again (its earlier attempt failed or its lease expired).
    pub fn reclaimed(&self) {
        self.reclaims.fetch_add(1, Ordering::Relaxed);
    }

    /// A result not written because its claim no longer held.
    pub fn lost_claim(&self) {
        self.lost_claims.fetch_add(1, Ordering::Relaxed);
    }

    /// A failed attempt here, by code.
    pub fn failed(&self, code: &'static str) {
        if let Ok(mut m) = self.failures.lock() {
            *m.entry(code).or_default() += 1;
        }
    }

    /// An API response, by route and status.
    pub fn request(&self, route: &'static str, status: u16) {
        if let Ok(mut m) = self.requests.lock() {
            *m.entry((route, status)).or_default() += 1;
        }
    }

    /// The proofs made here.
    pub fn proofs(&self) -> u64 {
        self.proofs.load(Ordering::Relaxed)
    }

    /// Everything, in Prometheus' text format.
    pub async fn render(&self, db: &Db) -> Result<String> {
        let (states, codes) = db.counts().await?;
        let mut out = String::from(
            "# HELP zkgpu_jobs Jobs in the database by state.\n# TYPE zkgpu_jobs gauge\n",
        );
        for state in ["queued", "running", "done", "failed", "cancelled"] {
            let n = states
                .iter()
                .find(|(k, _)| k == state)
                .map_or(0, |(_, n)| *n);
            let _ = writeln!(out, "zkgpu_jobs{{state=\"{state}\"}} {n}");
        }
        let queued = states
            .iter()
            .find(|(k, _)| k == "queued")
            .map_or(0, |(_, n)| *n);
        let _ = writeln!(
            out,
            "# HELP zkgpu_queue_depth Jobs waiting for a worker.\n# TYPE zkgpu_queue_depth gauge\nzkgpu_queue_depth {queued}"
        );
        let _ = writeln!(
            out,
            "# HELP zkgpu_failed_jobs Failed jobs in the database by error code.\n# TYPE zkgpu_failed_jobs gauge"
        );
        for (code, n) in &codes {
            let _ = writeln!(out, "zkgpu_failed_jobs{{code=\"{code}\"}} {n}");
        }
        self.render_counters(&mut out);
        Ok(out)
    }

    fn render_counters(&self, out: &mut String) {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "# HELP zkgpu_proofs_total Proofs made by this process's workers.\n# TYPE zkgpu_proofs_total counter\nzkgpu_proofs_total {}",
            load(&self.proofs)
        );
        let _ = writeln!(
            out,
            "# HELP zkgpu_prove_seconds Prover time of this process's proofs.\n# TYPE zkgpu_prove_seconds summary\nzkgpu_prove_seconds_sum {}\nzkgpu_prove_seconds_count {}",
            load(&self.prove_us) as f64 / 1e6,
            load(&self.proofs)
        );
        let _ = writeln!(
            out,
            "# HELP zkgpu_reclaims_total Jobs this process claimed again after a failed attempt or an expired lease.\n# TYPE zkgpu_reclaims_total counter\nzkgpu_reclaims_total {}",
            load(&self.reclaims)
        );
        let _ = writeln!(
            out,
            "# HELP zkgpu_lost_claims_total Results discarded because their lease had expired or the job was cancelled.\n# TYPE zkgpu_lost_claims_total counter\nzkgpu_lost_claims_total {}",
            load(&self.lost_claims)
        );
        let _ = writeln!(
            out,
            "# HELP zkgpu_attempt_failures_total Failed attempts in this process by error code.\n# TYPE zkgpu_attempt_failures_total counter"
        );
        if let Ok(m) = self.failures.lock() {
            for (code, n) in m.iter() {
                let _ = writeln!(out, "zkgpu_attempt_failures_total{{code=\"{code}\"}} {n}");
            }
        }
        let _ = writeln!(
            out,
            "# HELP zkgpu_http_responses_total API responses by route and status.\n# TYPE zkgpu_http_responses_total counter"
        );
        if let Ok(m) = self.requests.lock() {
            for ((route, status), n) in m.iter() {
                let _ = writeln!(
                    out,
                    "zkgpu_http_responses_total{{route=\"{route}\",status=\"{status}\"}} {n}"
                );
            }
        }
    }
}
