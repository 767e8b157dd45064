//! [`ProofStream`]: many circuits against one prepared key, their witnesses synthesized on
//! worker threads while the GPU proves the one before.

use std::collections::{BTreeMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Instant;
use zkgpu_runtime::BlockOn;

use ark_ff::UniformRand;
use ark_groth16::Proof;
use ark_relations::gr1cs::ConstraintSynthesizer;
use ark_std::rand::{CryptoRng, RngCore};

use crate::error::ProveError;
use crate::key::{GpuPairing, PreparedProvingKey};
use crate::prover::{GpuProver, ProofTimings, Synth, Unchecked, synthesize_as};

/// A circuit to synthesize: its place in the stream, and whether to build its matrices.
type Job<C> = (usize, C, bool);
/// A synthesis's result and its seconds.
type Synthesis<F> = (Result<Synth<F>, ProveError>, f64);
/// A synthesis done: its place, the result, and its seconds.
type Done<F> = (usize, Synthesis<F>);
/// A circuit ready to prove: its synthesis, the synthesis's seconds, `r` and `s`.
type Job2<F> = (Result<Synth<F>, ProveError>, f64, F, F);
/// A proof made, its self-check not yet run, and its synthesis's seconds.
type Proved<E> = (Result<Unchecked<E>, ProveError>, f64);
/// A proof checked (or its error) and where its time went.
type Checked<E> = (Result<Proof<E>, ProveError>, ProofTimings);
/// Circuits proved at a time per device.
const SLOTS: usize = 2;
/// Circuits per slot in a round of a stream: the round's end waits for its slowest proof,
/// and proofs are returned once their round is done.
const ROUND_PER_SLOT: usize = 8;
/// One device of a stream across devices: its prover and the key prepared on it.
pub type Lane<'p, E> = (&'p GpuProver<E>, &'p PreparedProvingKey<E>);

/// Proofs of a sequence of circuits against one [`PreparedProvingKey`], in order
/// ([`GpuProver::prove_stream`]). An iterator of `Result<Proof<E>, ProveError>`: a circuit
/// that fails (unsatisfied, of another key, its synthesis panicked) gives its error in its
/// place, and the stream goes on with the next.
///
/// Once the key holds its matrices, circuits are proved in rounds, two at a time per device
/// (lane, see [`prove_stream_across`]) on their own host threads sharing the device's queue,
/// so that one proof's host work and its start and end (scalar conversion, readbacks, the
/// proof's assembly) run while the other's GPU work does; a thread that finishes a proof
/// takes the round's next circuit at once. Each proof is verified (the self-check of
/// [`GpuProver::with_verification`]) on another thread as it arrives, and returned once its
/// round is done. Worker threads synthesize circuits ahead (at most
/// [`GpuProver::with_stream_workers`]).
/// `r` and `s` are drawn from the stream's generator in order, so a seeded generator gives
/// the proofs ark-groth16 gives for the same circuits one after the other. Dropping the
/// stream stops the workers after their current synthesis.
pub struct ProofStream<'p, E, C, I, R>
where
    E: GpuPairing,
{
    /// The devices' provers and keys; the first one's verifies every proof.
    lanes: Vec<Lane<'p, E>>,
    input: I,
    rng: R,
    jobs: Option<SyncSender<Job<C>>>,
    done: Receiver<Done<E::ScalarField>>,
    ready: BTreeMap<usize, Synthesis<E::ScalarField>>,
    sent: usize,
    next: usize,
    lookahead: usize,
    workers: Vec<JoinHandle<()>>,
    /// Results ready to return, in order.
    out: VecDeque<Checked<E>>,
    last: Option<ProofTimings>,
}

impl<E: GpuPairing, C, I, R> std::fmt::Debug for ProofStream<'_, E, C, I, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProofStream")
            .field("sent", &self.sent)
            .field("next", &self.next)
            .field("workers", &self.workers.len())
            .finish_non_exhaustive()
    }
}

impl<E: GpuPairing> GpuProver<E> {
    /// Proves every circuit of `circuits` against `pk`, in order, with `r` and `s` drawn
    /// from `rng` as [`GpuProver::prove`] draws them: see [`ProofStream`].
    pub fn prove_stream<'p, C, I, R>(
        &'p self,
        pk: &'p PreparedProvingKey<E>,
        circuits: I,
        rng: R,
    ) -> ProofStream<'p, E, C, I::IntoIter, R>
    where
        C: ConstraintSynthesizer<E::ScalarField> + Send + 'static,
        I: IntoIterator<Item = C>,
        R: RngCore + CryptoRng,
    {
        ProofStream::new(vec![(self, pk)], self.stream_workers, circuits, rng)
    }
}

/// [`GpuProver::prove_stream`] across devices: every lane is a device's prover with the same
/// proving key prepared on that device, and each proves two circuits at a time while the
/// others do (whole proofs fanned out, for throughput). Proofs come in order and equal those
/// of one device. The synthesis threads are the lanes' together, at most the host's cores.
/// Keys that are not the same key (their verifying keys differ) are refused with
/// [`ProveError::Lanes`]; a key that learns its matrices (or holds them already)
/// shares them with the others.
pub fn prove_stream_across<'p, E, C, I, R>(
    lanes: &[Lane<'p, E>],
    circuits: I,
    rng: R,
) -> Result<ProofStream<'p, E, C, I::IntoIter, R>, ProveError>
where
    E: GpuPairing,
    C: ConstraintSynthesizer<E::ScalarField> + Send + 'static,
    I: IntoIterator<Item = C>,
    R: RngCore + CryptoRng,
{
    let Some((_, first)) = lanes.first() else {
        return Err(ProveError::Lanes("no devices".into()));
    };
    for (k, (_, pk)) in lanes.iter().enumerate() {
        if pk.pvk.vk != first.pvk.vk || pk.qap != first.qap || pk.num_witness != first.num_witness {
            return Err(ProveError::Lanes(format!(
                "the key on device {k} is not the key on device 0"
            )));
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = lanes.iter().map(|(p, _)| p.stream_workers).sum::<usize>();
    let stream = ProofStream::new(lanes.to_vec(), workers.min(cores), circuits, rng);
    stream.share_matrices();
    Ok(stream)
}

impl<'p, E: GpuPairing, C, I: Iterator<Item = C>, R> ProofStream<'p, E, C, I, R>
where
    C: ConstraintSynthesizer<E::ScalarField> + Send + 'static,
{
    /// The stream over `lanes` with `workers` synthesis threads.
    fn new(
        lanes: Vec<Lane<'p, E>>,
        workers: usize,
        circuits: impl IntoIterator<IntoIter = I>,
        rng: R,
    ) -> Self {
        let workers = workers.max(1);
        let (jobs, job_rx) = sync_channel::<Job<C>>(workers);
        let (done_tx, done) = sync_channel::<Done<E::ScalarField>>(workers);
        let job_rx = Arc::new(Mutex::new(job_rx));
        let workers = (0..workers)
            .filter_map(|i| {
                let job_rx = Arc::clone(&job_rx);
                let done_tx = done_tx.clone();
                std::thread::Builder::new()
                    .name(format!("zkgpu-synthesis-{i}"))
                    .spawn(move || synthesis_worker(&job_rx, &done_tx))
                    .ok()
            })
            .collect::<Vec<_>>();
        ProofStream {
            lanes,
            input: circuits.into_iter(),
            rng,
            jobs: Some(jobs),
            done,
            ready: BTreeMap::new(),
            sent: 0,
            next: 0,
            lookahead: workers.len().max(1),
            workers,
            out: VecDeque::new(),
            last: None,
        }
    }

    /// Gives every lane's key the matrices one of them holds.
    fn share_matrices(&self) {
        let known = self.lanes.iter().find_map(|(_, pk)| pk.matrices.get());
        if let Some(m) = known {
            for (_, pk) in &self.lanes {
                let _ = pk.matrices.set(Arc::clone(m));
            }
        }
    }
}

/// Synthesizes jobs until the job channel closes; a panicking circuit becomes an error.
fn synthesis_worker<F, C>(jobs: &Mutex<Receiver<Job<C>>>, done: &SyncSender<Done<F>>)
where
    F: ark_ff::PrimeField,
    C: ConstraintSynthesizer<F>,
{
    loop {
        let job = jobs.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok((k, circuit, with_matrices)) = job else {
            return;
        };
        let t = Instant::now();
        // The constraint system stays on this thread (it is not `Send`): an unsatisfied
        // constraint of a streamed proof is reported by index alone.
        let result = catch_unwind(AssertUnwindSafe(|| {
            synthesize_as(circuit, with_matrices).map(|(syn, _cs)| syn)
        }))
        .unwrap_or_else(|p| {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a non-string panic payload".into());
            Err(ProveError::SynthesisPanicked(msg))
        });
        let secs = t.elapsed().as_secs_f64();
        tracing::debug!(circuit = k, secs, "synthesized");
        if done.send((k, (result, secs))).is_err() {
            return;
        }
    }
}

impl<E, C, I, R> ProofStream<'_, E, C, I, R>
where
    E: GpuPairing,
    C: ConstraintSynthesizer<E::ScalarField> + Send + 'static,
    I: Iterator<Item = C>,
    R: RngCore + CryptoRng,
{
    /// Where the time of the last proof returned went: `synthesis` ran on a worker thread;
    /// `total` is its GPU part and self-check.
    pub fn last_timings(&self) -> Option<ProofTimings> {
        self.last
    }

    /// Synthesis threads working for the stream.
    pub fn workers(&self) -> usize {
        self.workers.len()
    }

    /// Hands circuits to the workers until `lookahead` are in flight. Until the key holds
    /// its matrices, circuits are synthesized with them (the first proof that verifies
    /// teaches the key).
    fn top_up(&mut self) {
        while self.sent - self.next < self.lookahead {
            let Some(jobs) = &self.jobs else { return };
            let Some(circuit) = self.input.next() else {
                self.jobs = None;
                return;
            };
            let with_matrices = self.lanes[0].1.matrices().is_none();
            if jobs.send((self.sent, circuit, with_matrices)).is_err() {
                self.jobs = None;
                return;
            }
            self.sent += 1;
        }
    }

    /// The next circuit's synthesis (waited for) with its `r` and `s`, drawn in order; None
    /// when every circuit is taken. Workers get the circuits after it first.
    fn take_job(&mut self) -> Option<Job2<E::ScalarField>> {
        self.top_up();
        if self.next == self.sent {
            return None;
        }
        let (syn, secs) = self.take_next();
        self.next += 1;
        self.top_up();
        let r = E::ScalarField::rand(&mut self.rng);
        let s = E::ScalarField::rand(&mut self.rng);
        Some((syn, secs, r, s))
    }

    /// Whether a circuit is left to prove.
    fn has_jobs(&mut self) -> bool {
        self.top_up();
        self.next < self.sent
    }

    /// Proves up to `count` circuits in order: this thread hands each to the slot threads
    /// (two per device, or one for a round of one) as its synthesis completes, and a slot
    /// takes the next one as soon as it is free, so no device waits for another's proofs
    /// within the round; another thread runs each proof's self-check as it arrives (a
    /// proof that verifies teaches the key its matrices). The results in circuit order.
    fn prove_round(&mut self, count: usize) -> Vec<Checked<E>> {
        let lanes = self.lanes.clone();
        let (prover, pk) = lanes[0];
        let finish = move |(u, secs): Proved<E>| match u.and_then(|u| prover.finish(pk, u)) {
            Ok((proof, mut t)) => {
                t.synthesis = secs;
                t.total = t.prove + t.verify;
                (Ok(proof), t)
            }
            Err(e) => (Err(e), ProofTimings::default()),
        };
        let (proved_tx, proved_rx) = std::sync::mpsc::channel::<(usize, Proved<E>)>();
        let slots = if count == 1 { 1 } else { SLOTS * lanes.len() };
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Job2<E::ScalarField>)>();
        let rx = Mutex::new(rx);
        // While the round's first circuit is still being synthesized (the stream's start),
        // the idle devices run small NTTs so that their clocks are up when it arrives.
        let stop = std::sync::atomic::AtomicBool::new(false);
        let warm = !self.next_is_ready();
        let mut checked = std::thread::scope(|scope| {
            for (prover, _) in lanes.iter().filter(|(p, _)| warm && p.warm_clock) {
                let stop = &stop;
                scope.spawn(move || prover.warm_clock_until(stop));
            }
            let checker = scope.spawn(move || {
                proved_rx
                    .into_iter()
                    .map(|(j, p)| (j, finish(p)))
                    .collect::<Vec<_>>()
            });
            let handles: Vec<_> = (0..slots)
                .map(|slot| {
                    let ((prover, pk), rx) = (lanes[slot % lanes.len()], &rx);
                    let proved_tx = proved_tx.clone();
                    scope.spawn(move || {
                        loop {
                            let job = rx.lock().unwrap_or_else(PoisonError::into_inner).recv();
                            let Ok((j, (syn, secs, r, s))) = job else {
                                return;
                            };
                            let u = syn.and_then(|syn| {
                                prover
                                    .prove_unchecked(pk, syn, None, (r, s), prover.overlap)
                                    .block_on()
                            });
                            if proved_tx.send((j, (u, secs))).is_err() {
                                return;
                            }
                        }
                    })
                })
                .collect();
            drop(proved_tx);
            for j in 0..count {
                let job = self.take_job();
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                let Some(job) = job else { break };
                if tx.send((j, job)).is_err() {
                    break;
                }
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            drop(tx);
            handles.into_iter().for_each(joined);
            joined(checker)
        });
        checked.sort_by_key(|(j, _)| *j);
        checked.into_iter().map(|(_, c)| c).collect()
    }

    /// Whether circuit `self.next`'s synthesis is done (or nothing is left), without
    /// waiting.
    fn next_is_ready(&mut self) -> bool {
        while let Ok((k, done)) = self.done.try_recv() {
            self.ready.insert(k, done);
        }
        self.next == self.sent || self.ready.contains_key(&self.next)
    }

    /// The synthesis of circuit `self.next`, waiting for it.
    fn take_next(&mut self) -> Synthesis<E::ScalarField> {
        loop {
            if let Some(done) = self.ready.remove(&self.next) {
                return done;
            }
            match self.done.recv() {
                Ok((k, done)) => {
                    self.ready.insert(k, done);
                }
                Err(_) => {
                    let lost = "the synthesis workers stopped".to_owned();
                    return (Err(ProveError::SynthesisPanicked(lost)), 0.0);
                }
            }
        }
    }
}

impl<E, C, I, R> Iterator for ProofStream<'_, E, C, I, R>
where
    E: GpuPairing,
    C: ConstraintSynthesizer<E::ScalarField> + Send + 'static,
    I: Iterator<Item = C>,
    R: RngCore + CryptoRng,
{
    type Item = Result<Proof<E>, ProveError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((result, timings)) = self.out.pop_front() {
                self.last = Some(timings);
                return Some(result);
            }
            // Once the key knows its matrices, rounds of several circuits per device (before,
            // the first proof teaches them and is checked before the next one starts).
            if !self.has_jobs() {
                return None;
            }
            let count = if self.lanes[0].1.matrices().is_some() {
                SLOTS * ROUND_PER_SLOT * self.lanes.len()
            } else {
                1
            };
            let done = self.prove_round(count);
            tracing::debug!(circuit = self.next - 1, "proved");
            self.share_matrices();
            self.out.extend(done);
        }
    }
}

/// A scoped thread's result; its panic (a bug of ours) passed on.
fn joined<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    match h.join() {
        Ok(done) => done,
        Err(p) => std::panic::resume_unwind(p),
    }
}

impl<E: GpuPairing, C, I, R> Drop for ProofStream<'_, E, C, I, R> {
    fn drop(&mut self) {
        // Closing the job channel ends each worker after its current synthesis. Its result
        // never blocks: the result channel holds as many as can be in flight.
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}
