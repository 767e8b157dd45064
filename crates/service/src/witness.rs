//! Witnesses: a submitted one checked before it is queued (well formed, every value in the
//! field, as many values as the key's circuit has signals, the constant one first), then kept
//! as a `.wtns` file of its job under the data directory until the job ends. The database
//! holds no witness: a large one written into a row costs a copy of it per state change
//! (SQLite rewrites a whole row on every update).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use ark_bn254::Fr;
use ark_std::One;

use crate::error::{ErrorCode, Result, ServiceError};
use crate::ids::check_job_id;

/// The values of witness `body` (a `.wtns`, or with `json` an array of decimal strings),
/// checked against a circuit of `signals` signals.
fn checked(body: &[u8], json: bool, signals: usize) -> Result<Vec<Fr>> {
    let values = if json {
        let text = std::str::from_utf8(body).map_err(|_| {
            ServiceError::new(ErrorCode::InvalidWitness, "the JSON witness is not UTF-8")
        })?;
        zkgpu_circom::read_witness_json(text).map_err(ServiceError::of_witness)?
    } else {
        zkgpu_circom::read_wtns(body).map_err(ServiceError::of_witness)?
    };
    check(&values, signals)?;
    Ok(values)
}

/// The witness `body` checked (well formed, every value in the field, as many as the key's
/// `signals`, the constant one first) and stored as job `job`'s: a `.wtns`
/// written while it is checked (and removed again when the check fails), a JSON one written
/// as a `.wtns` once checked.
pub(crate) fn store_checked(
    store: &WitnessStore,
    job: &str,
    body: &[u8],
    json: bool,
    signals: usize,
) -> Result<()> {
    if json {
        let values = checked(body, true, signals)?;
        return store.put(job, &zkgpu_circom::write_wtns(&values));
    }
    let (values, written) = std::thread::scope(|s| {
        let writer = s.spawn(|| store.put(job, body));
        let values = checked(body, false, signals);
        (values, writer.join())
    });
    let written = written.unwrap_or_else(|_| {
        Err(ServiceError::new(
            ErrorCode::Internal,
            "the witness writer panicked",
        ))
    });
    if let Err(e) = values {
        let _ = store.remove(job);
        return Err(e);
    }
    written
}

fn check(values: &[Fr], signals: usize) -> Result<()> {
    if values.len() != signals {
        return Err(ServiceError::new(
            ErrorCode::WitnessMismatch,
            format!(
                "the witness has {} values, the key's circuit {signals} signals",
                values.len()
            ),
        ));
    }
    if !values.first().is_some_and(|v| v.is_one()) {
        return Err(ServiceError::new(
            ErrorCode::WitnessMismatch,
            "its first value (the constant signal) is not 1",
        ));
    }
    Ok(())
}

/// The witnesses of queued and running jobs, as `witnesses/<job id>.wtns` under the data
/// directory.
#[derive(Clone, Debug)]
pub struct WitnessStore {
    dir: PathBuf,
}

fn internal(what: &str, path: &Path, e: &std::io::Error) -> ServiceError {
    ServiceError::new(
        ErrorCode::Internal,
        format!("{what} {}: {e}", path.display()),
    )
}

impl WitnessStore {
    /// The store under `data` (its `witnesses` folder, made if missing).
    pub fn open(data: &Path) -> Result<Self> {
        let dir = data.join("witnesses");
        std::fs::create_dir_all(&dir).map_err(|e| internal("cannot make", &dir, &e))?;
        Ok(Self { dir })
    }

    fn path(&self, job: &str) -> Result<PathBuf> {
        check_job_id(job)?;
        Ok(self.dir.join(format!("{job}.wtns")))
    }

    /// Writes the witness of `job` (beside, then renamed: a reader never sees half of one).
    pub fn put(&self, job: &str, wtns: &[u8]) -> Result<()> {
        let path = self.path(job)?;
        let tmp = self.dir.join(format!("{job}.part"));
        std::fs::write(&tmp, wtns)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                internal("cannot store the witness as", &path, &e)
            })
    }

    /// The witness of `job`; `witness_lost` when it is not there.
    pub fn read(&self, job: &str) -> Result<Vec<u8>> {
        let path = self.path(job)?;
        std::fs::read(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                lost(job)
            } else {
                internal("cannot read", &path, &e)
            }
        })
    }

    /// Removes the witness of `job` (nothing when it is not there).
    pub fn remove(&self, job: &str) -> Result<()> {
        match std::fs::remove_file(self.path(job)?) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(internal("cannot remove", &self.dir, &e))
            }
            _ => Ok(()),
        }
    }

    /// Removes the witnesses of `ended` jobs, and files of jobs in neither set once they are
    /// `grace` old (a submission writes its witness a moment before it queues its job; an
    /// upload cut short leaves a part); `live` jobs' witnesses stay. Returns how many went.
    pub fn sweep(
        &self,
        live: &HashSet<String>,
        ended: &HashSet<String>,
        grace: Duration,
    ) -> Result<usize> {
        let entries =
            std::fs::read_dir(&self.dir).map_err(|e| internal("cannot list", &self.dir, &e))?;
        let now = SystemTime::now();
        let mut gone = 0;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let job = name.strip_suffix(".wtns");
            if job.is_some_and(|j| live.contains(j)) {
                continue;
            }
            if job.is_some_and(|j| ended.contains(j)) {
                gone += usize::from(std::fs::remove_file(entry.path()).is_ok());
                continue;
            }
            let age = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .unwrap_or_default();
            if age < grace {
                continue;
            }
            gone += usize::from(std::fs::remove_file(entry.path()).is_ok());
        }
        Ok(gone)
    }
}

/// The error of a witness that is no longer kept.
pub(crate) fn lost(job: &str) -> ServiceError {
    ServiceError::new(
        ErrorCode::WitnessLost,
        format!("the witness of job {job} is no longer kept"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_read_and_swept() {
        let dir = std::env::temp_dir().join(format!("zkgpu-witness-{}", crate::ids::random_id()));
        let store = WitnessStore::open(&dir).unwrap();
        let [a, b, c] = [(); 3].map(|()| crate::ids::random_id());
        store.put(&a, b"first").unwrap();
        store.put(&b, b"second").unwrap();
        store.put(&c, b"third").unwrap();
        assert_eq!(store.read(&a).unwrap(), b"first");
        assert_eq!(
            store.read("../../x").unwrap_err().code,
            ErrorCode::BadRequest
        );
        // An ended job's witness goes at once; one of a job not in the table only when old.
        let live: HashSet<String> = [a.clone()].into();
        let ended: HashSet<String> = [b.clone()].into();
        let hour = Duration::from_secs(3600);
        assert_eq!(store.sweep(&live, &ended, hour).unwrap(), 1);
        assert_eq!(store.read(&b).unwrap_err().code, ErrorCode::WitnessLost);
        assert_eq!(store.read(&c).unwrap(), b"third");
        assert_eq!(store.sweep(&live, &ended, Duration::ZERO).unwrap(), 1);
        assert_eq!(store.read(&a).unwrap(), b"first");
        assert_eq!(store.read(&c).unwrap_err().code, ErrorCode::WitnessLost);
        store.remove(&a).unwrap();
        store.remove(&a).unwrap();
        assert_eq!(store.read(&a).unwrap_err().code, ErrorCode::WitnessLost);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
