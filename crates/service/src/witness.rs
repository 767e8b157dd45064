//! Witnesses: a submitted one checked before it is queued (well formed, every value in the
//! field, as many values as the key's circuit has signals, the constant one first), then kept
//! as a `.wtns` file of its job under the data directory until the job ends. The database
//! holds no witness: a large one written into a row costs a copy of it per state change
//! (SQLite rewrites a whole row on every update). A lane in the API's own process takes the
//! values the API's check parsed from memory instead of reading and parsing the file again.

use std::collections::{HashSet, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, SystemTime};

use axum::body::Bytes;
use zkgpu_circom::Curve;

use crate::curves::Values;
use crate::error::{ErrorCode, Result, ServiceError};
use crate::ids::check_job_id;

/// What a witness is checked against: its key's curve and circuit's signal count.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Circuit {
    /// The key's curve: the witness must be over its scalar field.
    pub(crate) curve: Curve,
    /// Signals, the constant one included: the witness's length.
    pub(crate) signals: usize,
}

/// The values of witness `body` (a `.wtns`, or with `json` an array of decimal strings),
/// checked against `circuit`.
fn checked(body: &[u8], json: bool, circuit: Circuit) -> Result<Values> {
    let values = Values::read(circuit.curve, body, json).map_err(ServiceError::of_witness)?;
    check(&values, circuit.signals)?;
    Ok(values)
}

/// The JSON witness `body` checked (well formed, every value in the key's scalar field, as
/// many as its circuit's signals, the constant one first) and stored as job `job`'s `.wtns`;
/// a `.wtns` body goes through [`WitnessStore::incoming`] instead.
pub(crate) fn store_json(
    store: &WitnessStore,
    job: &str,
    body: &[u8],
    circuit: Circuit,
) -> Result<()> {
    let values = checked(body, true, circuit)?;
    store.put(job, &values.to_wtns())?;
    store.keep_parsed(job, values);
    Ok(())
}

/// A `.wtns` on its way in: each piece of the body written to the job's part file as it
/// arrives, on a thread of its own (the write overlaps the upload), then the whole checked
/// and the part renamed to the job's witness, or removed. Dropped unfinished (an upload cut
/// short, a refused submission), the part is removed.
pub(crate) struct Incoming {
    store: WitnessStore,
    job: String,
    part: PathBuf,
    pieces: Option<mpsc::Sender<Bytes>>,
    writer: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Incoming {
    /// Queues `piece` for the part file (a failed write is reported by the finish).
    pub(crate) fn push(&self, piece: Bytes) {
        if let Some(tx) = &self.pieces {
            let _ = tx.send(piece);
        }
    }

    /// The write's outcome once every queued piece is written (the writer ends).
    fn close(&mut self) -> Result<()> {
        self.pieces = None;
        let Some(writer) = self.writer.take() else {
            return Ok(());
        };
        match writer.join() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(internal("cannot store the witness as", &self.part, &e)),
            Err(_) => Err(ServiceError::new(
                ErrorCode::Internal,
                "the witness writer panicked",
            )),
        }
    }

    /// `body` (every piece pushed, whole) checked against `circuit` while the last pieces are
    /// written; then the part becomes the job's witness and the values are kept for a lane of
    /// this process, or, when the check or the write fails, it is removed.
    pub(crate) fn finish_checked(mut self, body: &[u8], circuit: Circuit) -> Result<()> {
        let started = std::time::Instant::now();
        let values = checked(body, false, circuit);
        let parse_ms = started.elapsed().as_secs_f64() * 1e3;
        let written = self.close();
        let write_wait_ms = started.elapsed().as_secs_f64() * 1e3 - parse_ms;
        tracing::debug!(job = %self.job, parse_ms, write_wait_ms, "witness checked");
        let values = values.and_then(|v| written.map(|()| v))?;
        let path = self.store.path(&self.job)?;
        std::fs::rename(&self.part, &path)
            .map_err(|e| internal("cannot store the witness as", &path, &e))?;
        self.store.keep_parsed(&self.job, values);
        Ok(())
    }
}

impl Drop for Incoming {
    fn drop(&mut self) {
        // Finished: renamed, and this finds nothing; otherwise the part goes (a writer still
        // running writes the rest into the removed file and ends).
        self.pieces = None;
        let _ = std::fs::remove_file(&self.part);
    }
}

fn check(values: &Values, signals: usize) -> Result<()> {
    if values.len() != signals {
        return Err(ServiceError::new(
            ErrorCode::WitnessMismatch,
            format!(
                "the witness has {} values, the key's circuit {signals} signals",
                values.len()
            ),
        ));
    }
    if !values.starts_with_one() {
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
    parsed: Arc<Mutex<Parsed>>,
}

/// How many parsed values the store keeps in memory for this process's lanes (32 bytes
/// each: 256 MiB, about seven witnesses of 2^20 signals); the oldest go first, and their
/// jobs' lanes read the file.
const PARSED_VALUES: usize = 8 << 20;

/// Witnesses checked by this process's API, parsed, until a lane here takes them.
#[derive(Debug)]
struct Parsed {
    jobs: VecDeque<(String, Values)>,
    values: usize,
    cap: usize,
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
        Ok(Self {
            dir,
            parsed: Arc::new(Mutex::new(Parsed {
                jobs: VecDeque::new(),
                values: 0,
                cap: PARSED_VALUES,
            })),
        })
    }

    fn parsed(&self) -> std::sync::MutexGuard<'_, Parsed> {
        self.parsed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps the checked `values` of `job` for a lane of this process (the oldest kept ones
    /// go when they pass [`PARSED_VALUES`]; one larger than that is not kept).
    fn keep_parsed(&self, job: &str, values: Values) {
        let mut p = self.parsed();
        if values.len() > p.cap {
            return;
        }
        while p.values + values.len() > p.cap {
            let Some((_, old)) = p.jobs.pop_front() else {
                break;
            };
            p.values -= old.len();
        }
        p.values += values.len();
        p.jobs.push_back((job.to_owned(), values));
    }

    /// The values of `job` when this process's API checked it and still keeps them (taken:
    /// a second call gets None, and the file stays the witness).
    pub(crate) fn take_parsed(&self, job: &str) -> Option<Values> {
        let mut p = self.parsed();
        let at = p.jobs.iter().position(|(id, _)| id == job)?;
        let (_, values) = p.jobs.remove(at)?;
        p.values -= values.len();
        Some(values)
    }

    fn forget_parsed(&self, keep: impl Fn(&str) -> bool) {
        let mut p = self.parsed();
        p.jobs.retain(|(id, _)| keep(id));
        p.values = p.jobs.iter().map(|(_, v)| v.len()).sum();
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

    /// The part file of `job`'s witness, written as the body's pieces are pushed.
    pub(crate) fn incoming(&self, job: &str) -> Result<Incoming> {
        self.path(job)?;
        let part = self.dir.join(format!("{job}.part"));
        let mut file =
            std::fs::File::create(&part).map_err(|e| internal("cannot create", &part, &e))?;
        let (tx, rx) = mpsc::channel::<Bytes>();
        let writer = std::thread::Builder::new()
            .name("zkgpu-witness-writer".into())
            .spawn(move || rx.iter().try_for_each(|piece| file.write_all(&piece)))
            .map_err(|e| internal("cannot start the writer of", &part, &e))?;
        Ok(Incoming {
            store: self.clone(),
            job: job.to_owned(),
            part,
            pieces: Some(tx),
            writer: Some(writer),
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
        self.forget_parsed(|id| id != job);
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
        self.forget_parsed(|id| !ended.contains(id));
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
    use ark_bn254::Fr;

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

    /// A whole witness stored as the API stores one: JSON checked then written, a `.wtns`
    /// through its part file.
    fn store_checked(
        store: &WitnessStore,
        job: &str,
        body: &[u8],
        json: bool,
        signals: usize,
    ) -> Result<()> {
        let circuit = Circuit {
            curve: Curve::Bn254,
            signals,
        };
        if json {
            return store_json(store, job, body, circuit);
        }
        let incoming = store.incoming(job)?;
        incoming.push(Bytes::copy_from_slice(body));
        incoming.finish_checked(body, circuit)
    }

    fn bn254(v: &[u64]) -> Values {
        Values::Bn254(v.iter().map(|&x| Fr::from(x)).collect())
    }

    /// A BLS12-381 witness is checked against its own scalar field, and refused by a BN254
    /// key's check (and the other way round).
    #[test]
    fn witnesses_are_checked_against_their_keys_curve() {
        let dir = std::env::temp_dir().join(format!("zkgpu-witness-{}", crate::ids::random_id()));
        let store = WitnessStore::open(&dir).unwrap();
        let bls = Values::Bls12_381(vec![1u64.into(), 2u64.into()]);
        let bls_circuit = Circuit {
            curve: Curve::Bls12_381,
            signals: 2,
        };
        let [a, b, c] = [(); 3].map(|()| crate::ids::random_id());
        let incoming = store.incoming(&a).unwrap();
        incoming.push(Bytes::copy_from_slice(&bls.to_wtns()));
        incoming
            .finish_checked(&bls.to_wtns(), bls_circuit)
            .unwrap();
        assert_eq!(store.take_parsed(&a), Some(bls.clone()));
        store_json(&store, &b, br#"["1","2"]"#, bls_circuit).unwrap();
        assert_eq!(store.read(&b).unwrap(), bls.to_wtns());
        let e = store_checked(&store, &c, &bls.to_wtns(), false, 2).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidWitness);
        let incoming = store.incoming(&c).unwrap();
        let bn = bn254(&[1, 2]).to_wtns();
        incoming.push(Bytes::copy_from_slice(&bn));
        let e = incoming.finish_checked(&bn, bls_circuit).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidWitness);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn checked_values_are_handed_to_this_process_once() {
        let dir = std::env::temp_dir().join(format!("zkgpu-witness-{}", crate::ids::random_id()));
        let store = WitnessStore::open(&dir).unwrap();
        store.parsed().cap = 7;
        let w = bn254;
        let [a, b, c, d] = [(); 4].map(|()| crate::ids::random_id());
        let wtns = w(&[1, 5, 7]).to_wtns();
        store_checked(&store, &a, &wtns, false, 3).unwrap();
        store_checked(&store, &b, br#"["1","8","9"]"#, true, 3).unwrap();
        // The file is the witness either way; the values are taken once.
        assert_eq!(store.read(&a).unwrap(), wtns);
        assert_eq!(store.take_parsed(&a), Some(w(&[1, 5, 7])));
        assert_eq!(store.take_parsed(&a), None);
        assert_eq!(store.read(&a).unwrap(), wtns);
        // Past the cap (7 values) the oldest go; a refused witness is not kept.
        store_checked(&store, &c, &w(&[1, 2, 3, 4]).to_wtns(), false, 4).unwrap();
        assert!(store_checked(&store, &d, &wtns, false, 4).is_err());
        assert_eq!(store.take_parsed(&d), None);
        assert_eq!(store.take_parsed(&b), Some(w(&[1, 8, 9])));
        store_checked(&store, &a, &w(&[1, 0, 0, 0, 0]).to_wtns(), false, 5).unwrap();
        assert_eq!(store.take_parsed(&c), None);
        // A removed job's values go with its file; one larger than the cap is not kept.
        store.remove(&a).unwrap();
        assert_eq!(store.take_parsed(&a), None);
        store_checked(&store, &d, &w(&[1; 8]).to_wtns(), false, 8).unwrap();
        assert_eq!(store.take_parsed(&d), None);
        assert!(store.read(&d).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_incoming_witness_is_written_in_pieces_or_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("zkgpu-witness-{}", crate::ids::random_id()));
        let store = WitnessStore::open(&dir).unwrap();
        let files = || std::fs::read_dir(dir.join("witnesses")).unwrap().count();
        let values = Values::Bn254((1..=300u64).map(Fr::from).collect());
        let wtns = values.to_wtns();
        let [a, b, c] = [(); 3].map(|()| crate::ids::random_id());
        // Pieces of every size, the file the same bytes, the values kept.
        let incoming = store.incoming(&a).unwrap();
        for piece in wtns.chunks(97) {
            incoming.push(Bytes::copy_from_slice(piece));
        }
        let circuit = |signals| Circuit {
            curve: Curve::Bn254,
            signals,
        };
        incoming.finish_checked(&wtns, circuit(300)).unwrap();
        assert_eq!(store.read(&a).unwrap(), wtns);
        assert_eq!(store.take_parsed(&a), Some(values));
        // A check that fails, and an upload dropped half way, leave no file behind.
        let incoming = store.incoming(&b).unwrap();
        incoming.push(Bytes::copy_from_slice(&wtns));
        let e = incoming.finish_checked(&wtns, circuit(301)).unwrap_err();
        assert_eq!(e.code, ErrorCode::WitnessMismatch);
        let incoming = store.incoming(&c).unwrap();
        incoming.push(Bytes::copy_from_slice(&wtns[..100]));
        drop(incoming);
        assert_eq!(files(), 1);
        assert_eq!(store.read(&b).unwrap_err().code, ErrorCode::WitnessLost);
        assert!(store.incoming("../x").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
