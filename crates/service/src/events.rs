//! Wake-ups inside one process: a submitted job wakes the local workers at once (workers
//! elsewhere poll), and an ended job wakes the requests waiting on it (which also re-read
//! the database on a short tick, for jobs that workers elsewhere end).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use crate::db::{Db, JobInfo};
use crate::error::Result;

/// How often a waiting request re-reads its job when no local wake-up comes.
const TICK: Duration = Duration::from_millis(25);

/// The process's wake-ups.
#[derive(Clone, Debug, Default)]
pub struct Events {
    submitted: Arc<Notify>,
    finished: Arc<Notify>,
}

impl Events {
    /// A job was queued.
    pub fn submitted(&self) {
        self.submitted.notify_waiters();
    }

    /// A job ended.
    pub fn finished(&self) {
        self.finished.notify_waiters();
    }

    /// The wake-up of the next submission (enable it before looking at the queue).
    pub fn submitted_notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.submitted.notified()
    }

    /// The job, once it has ended or `wait` has passed (None: no such job).
    pub async fn wait_final(&self, db: &Db, id: &str, wait: Duration) -> Result<Option<JobInfo>> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // Registered before the read, so an end between the two still wakes us.
            let woken = self.finished.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let job = db.job(id).await?;
            let now = tokio::time::Instant::now();
            match job {
                Some(j) if !j.state.is_final() && now < deadline => {
                    let nap = TICK.min(deadline - now);
                    let _ = tokio::time::timeout(nap, woken).await;
                }
                other => return Ok(other),
            }
        }
    }
}
