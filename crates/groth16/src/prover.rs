//! The Groth16 prover with the witness map and all five MSMs on the GPU.
//!
//! ark-groth16 0.6 has no hook for its MSMs, so the proof is assembled here from the public
//! fields of `ProvingKey`, term for term as `Groth16::create_proof_with_reduction` does; with
//! the same `r` and `s` the proof is the same.

use web_time::Instant;
#[cfg(not(target_arch = "wasm32"))]
use zkgpu_runtime::BlockOn;

use ark_ec::VariableBaseMSM;
use ark_ff::PrimeField;
use ark_groth16::{Groth16, Proof};
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, Matrix};
use ark_std::rand::{CryptoRng, RngCore};
use zkgpu_msm::GpuMsm;
use zkgpu_ntt::GpuNtt;
use zkgpu_runtime::GpuContext;

use crate::error::ProveError;
use crate::key::{GpuPairing, KeyLayout, PreparedProvingKey, check_counts};
use crate::matrices::R1csMatrices;
use crate::qap::WitnessMapTimings;
use crate::request::ProveRequest;
use crate::synth::{Witness, synthesize, synthesize_witness};

/// Where the time of one proof went (seconds, wall clock on the host).
#[derive(Clone, Copy, Debug, Default)]
pub struct ProofTimings {
    /// Constraint synthesis: the witness alone once the key holds the circuit's matrices,
    /// else with the matrices (arkworks, on the CPU). In a proving stream it ran on a worker
    /// thread while earlier proofs were on the GPU.
    pub synthesis: f64,
    /// Whether that synthesis built the matrices (the key's first proof).
    pub built_matrices: bool,
    /// The witness map: sparse products on the CPU, NTTs and the quotient on the GPU.
    pub witness_map: f64,
    /// Its parts.
    pub witness_map_parts: WitnessMapTimings,
    /// The MSMs of the A, B in G1 and L queries: one MSM over three base sets, since they
    /// share the assignment as scalars (one `GpuMsm::run` over three base sets).
    pub msm_a_b_l: f64,
    /// MSM of the B query in G2.
    pub msm_b_g2: f64,
    /// MSM of the H query (G1, after the witness map).
    pub msm_h: f64,
    /// Verification of the proof against the key's verifying key.
    pub verify: f64,
    /// Everything after synthesis and before the self-check: with overlap (the default) the
    /// witness map and the H MSM run on one thread and the other MSMs on another, sharing the
    /// GPU queue, so the stage times above add up to more than this.
    pub prove: f64,
    /// The whole call, synthesis and self-check included: what a caller waits for.
    pub total: f64,
}

/// A circuit after synthesis: the witness alone, or with its matrices (`Send`, so that a
/// proving stream's workers can hand it over).
#[derive(Debug)]
pub(crate) enum Synth<F> {
    /// Witness-only synthesis (the key holds the matrices).
    Witness(Witness<F>),
    /// Synthesis with the matrices (the key's first proof).
    Full {
        matrices: Vec<Matrix<F>>,
        witness: Witness<F>,
        num_constraints: usize,
    },
}

/// Synthesizes `circuit`: the witness alone when `with_matrices` is false. The constraint
/// system of a full synthesis comes with it (to name an unsatisfied constraint).
pub(crate) fn synthesize_as<F: PrimeField>(
    circuit: impl ConstraintSynthesizer<F>,
    with_matrices: bool,
) -> Result<(Synth<F>, Option<ConstraintSystemRef<F>>), ProveError> {
    if with_matrices {
        let syn = synthesize(circuit).map_err(ProveError::Synthesis)?;
        let synth = Synth::Full {
            witness: Witness {
                num_inputs: syn.num_inputs,
                full_assignment: syn.full_assignment,
            },
            matrices: syn.matrices,
            num_constraints: syn.num_constraints,
        };
        Ok((synth, Some(syn.cs)))
    } else {
        let w = synthesize_witness(circuit).map_err(ProveError::Synthesis)?;
        Ok((Synth::Witness(w), None))
    }
}

/// A proof before its self-check ([`GpuProver::finish`]).
#[derive(Debug)]
pub(crate) struct Unchecked<E: GpuPairing> {
    pub(crate) proof: Proof<E>,
    /// The public inputs (the assignment's instance part past the constant one).
    inputs: Vec<E::ScalarField>,
    /// Matrices the proof teaches the key once it verifies.
    pub(crate) learned: Option<R1csMatrices<E::ScalarField>>,
    pub(crate) timings: ProofTimings,
}

/// The GPU Groth16 prover of pairing `E` on one GPU context: the NTT engine and the MSM
/// engines of G1 and G2, pipelines built once.
#[derive(Debug)]
pub struct GpuProver<E: GpuPairing> {
    pub(crate) ctx: GpuContext,
    pub(crate) ntt: GpuNtt<E::ScalarField>,
    pub(crate) g1: GpuMsm<E::GpuG1>,
    pub(crate) g2: GpuMsm<E::GpuG2>,
    verify: bool,
    pub(crate) overlap: bool,
    pub(crate) warm_clock: bool,
    layout: Option<KeyLayout>,
    pub(crate) stream_workers: usize,
    /// The witness map's sparse products run on their own thread pool (as many threads as
    /// rayon's global one): in the global pool they would hold every worker for the whole
    /// pass, and the MSM thread's short parallel steps (scalars into staging, window sums)
    /// would queue behind them. None if the pool could not be built.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) products_pool: Option<rayon::ThreadPool>,
}

impl<E: GpuPairing> GpuProver<E> {
    /// The prover on `ctx`.
    pub fn new(ctx: &GpuContext) -> Result<Self, ProveError> {
        #[cfg(not(target_arch = "wasm32"))]
        let products_pool = rayon::ThreadPoolBuilder::new()
            .num_threads(rayon::current_num_threads())
            .thread_name(|i| format!("zkgpu-witness-map-{i}"))
            .build()
            .ok();
        // Synthesis is single-threaded and takes longer than a proof's GPU part: half the
        // cores synthesize ahead of the GPU.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(Self {
            ctx: ctx.clone(),
            ntt: GpuNtt::new(ctx),
            g1: GpuMsm::new(ctx)?,
            g2: GpuMsm::new(ctx)?,
            verify: true,
            overlap: true,
            // A software adapter's "GPU" is the CPU: warm-up work would slow the synthesis.
            warm_clock: !ctx.is_software(),
            layout: None,
            stream_workers: (threads / 2).clamp(1, 8),
            #[cfg(not(target_arch = "wasm32"))]
            products_pool,
        })
    }

    /// Whether the GPU runs small NTTs during constraint synthesis (default: yes, but on a
    /// software adapter), so that its clock is up when the proof's GPU work starts: GPUs
    /// lower their clock within about a second of idleness and take a few hundred
    /// milliseconds of work to raise it again. The cost is GPU power during synthesis (one
    /// host thread waits on the transforms), not time.
    pub fn with_clock_warmup(mut self, warm: bool) -> Self {
        self.warm_clock = warm;
        self
    }

    /// Whether the witness map and MSM H run on a second host thread beside the other four
    /// MSMs (default: yes). Off, every stage runs alone, so [`ProofTimings`] is a clean
    /// per-stage profile (the proof is the same).
    pub fn with_overlap(mut self, overlap: bool) -> Self {
        self.overlap = overlap;
        self
    }

    /// Whether each proof is verified before it is returned (default: yes). The check costs
    /// a few pairings (milliseconds) and is what turns a proving key of another circuit of the
    /// same shape into [`ProveError::ProofRejected`] instead of a proof that does not verify.
    pub fn with_verification(mut self, verify: bool) -> Self {
        self.verify = verify;
        self
    }

    /// Whether [`GpuProver::prepare`] may store window multiples of the bases (A, B in G1
    /// and L together, B in G2, H): those MSMs then reduce fewer bucket windows
    /// (`zkgpu_msm::Fold`), at the cost of the multiples' memory and of computing them once
    /// per key on the GPU. `true` is [`KeyLayout::Planned`], `false` [`KeyLayout::Plain`].
    /// Default: planned, except on a software adapter (device type `Cpu`, e.g. lavapipe),
    /// where computing the multiples costs more than they save.
    pub fn with_folding(self, fold: bool) -> Self {
        self.with_key_layout(if fold {
            KeyLayout::Planned
        } else {
            KeyLayout::Plain
        })
    }

    /// The layout keys prepared from now on store their bases in ([`KeyLayout`]).
    pub fn with_key_layout(mut self, layout: KeyLayout) -> Self {
        self.layout = Some(layout);
        self
    }

    /// The layout keys prepared from now on store their bases in.
    pub fn key_layout(&self) -> KeyLayout {
        self.layout.unwrap_or(if self.ctx.is_software() {
            KeyLayout::Plain
        } else {
            KeyLayout::Planned
        })
    }

    /// Whether keys prepared from now on may store window multiples ([`GpuProver::with_folding`]).
    pub fn folding(&self) -> bool {
        self.key_layout() != KeyLayout::Plain
    }

    /// Synthesis threads of a proving stream ([`GpuProver::prove_stream`]; default: half
    /// the cores, 1 to 8): circuits synthesized ahead of the GPU at most.
    pub fn with_stream_workers(mut self, workers: usize) -> Self {
        self.stream_workers = workers.max(1);
        self
    }

    /// Synthesis threads of a proving stream.
    pub fn stream_workers(&self) -> usize {
        self.stream_workers
    }

    /// Builds every pipeline a proof uses (MSMs of G1 and G2, the NTT), so that the first
    /// proof does not; run it beside a key's upload. The three engines build theirs side by
    /// side (each engine's own pipelines too: `GpuContext::pipelines`).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn build_pipelines(&self) -> Result<(), ProveError> {
        std::thread::scope(|s| {
            let g2 = s.spawn(|| pollster::block_on(self.g2.build_pipelines()));
            let ntt = s.spawn(|| self.ntt.warm_up().block_on());
            pollster::block_on(self.g1.build_pipelines())?;
            g2.join().unwrap_or_else(|e| std::panic::resume_unwind(e))?;
            ntt.join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e))?;
            Ok(())
        })
    }

    /// A zero-knowledge proof of `circuit`, with `r` and `s` drawn from `rng` as arkworks
    /// draws them (so the same seeded generator gives ark-groth16's proof).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn prove<C, R>(
        &self,
        pk: &PreparedProvingKey<E>,
        circuit: C,
        rng: &mut R,
    ) -> Result<Proof<E>, ProveError>
    where
        C: ConstraintSynthesizer<E::ScalarField>,
        R: RngCore + CryptoRng,
    {
        let request = ProveRequest::circuit(pk, circuit, ProveRequest::<E>::draw(rng));
        Ok(self.run(request)?.0)
    }

    /// [`GpuProver::prove`] as a future, each step awaited in turn on this thread (the way in
    /// a browser; [`GpuProver::run_async`]). The same proof for the same `rng`.
    pub async fn prove_async<C, R>(
        &self,
        pk: &PreparedProvingKey<E>,
        circuit: C,
        rng: &mut R,
    ) -> Result<Proof<E>, ProveError>
    where
        C: ConstraintSynthesizer<E::ScalarField>,
        R: RngCore + CryptoRng,
    {
        let request = ProveRequest::circuit(pk, circuit, ProveRequest::<E>::draw(rng));
        Ok(self.run_async(request).await?.0)
    }

    /// A synthesized circuit's proof up to its self-check, which [`GpuProver::finish`]
    /// does (a proving stream runs it beside the next proof); `overlap`: on two host threads
    /// (native only), else as two futures joined on this thread.
    pub(crate) async fn prove_unchecked(
        &self,
        pk: &PreparedProvingKey<E>,
        syn: Synth<E::ScalarField>,
        cs: Option<&ConstraintSystemRef<E::ScalarField>>,
        (r, s): (E::ScalarField, E::ScalarField),
        overlap: bool,
    ) -> Result<Unchecked<E>, ProveError> {
        pk.check_context(&self.ctx)?;
        // A device lost or failed earlier is said as such, before any work is recorded.
        self.ctx.check_device()?;
        let t = Instant::now();
        let mut timings = ProofTimings::default();
        let (proof, full, learned) = match syn {
            Synth::Witness(w) => {
                let Some(m) = pk.matrices.get().cloned() else {
                    return Err(ProveError::NoMatrices);
                };
                check_counts(pk, w.num_inputs, w.num_witness(), m.num_constraints)?;
                let proof = self
                    .assemble(pk, &*m, &w.full_assignment, (r, s), overlap, &mut timings)
                    .await?;
                (proof, w.full_assignment, None)
            }
            Synth::Full {
                matrices,
                witness: w,
                num_constraints,
            } => {
                timings.built_matrices = true;
                check_counts(pk, w.num_inputs, w.num_witness(), num_constraints)?;
                let m = R1csMatrices::from_arkworks(
                    &matrices,
                    w.num_inputs,
                    w.num_witness(),
                    num_constraints,
                )?;
                drop(matrices);
                let assembled = self
                    .assemble(pk, &m, &w.full_assignment, (r, s), overlap, &mut timings)
                    .await;
                let proof = match assembled {
                    Err(ProveError::Unsatisfied { index, .. }) => {
                        return Err(ProveError::Unsatisfied {
                            index,
                            name: cs.and_then(|cs| cs.which_is_unsatisfied().ok().flatten()),
                        });
                    }
                    other => other?,
                };
                (proof, w.full_assignment, Some(m))
            }
        };
        timings.prove = t.elapsed().as_secs_f64();
        let mut inputs = full;
        inputs.truncate(pk.num_inputs);
        inputs.remove(0);
        Ok(Unchecked {
            proof,
            inputs,
            learned,
            timings,
        })
    }

    /// The self-check of a proof from [`GpuProver::prove_unchecked`], and the matrices it
    /// teaches the key. A key learns matrices only from a proof that verifies, even with
    /// verification off: matrices of another circuit would make every later proof fail.
    pub(crate) fn finish(
        &self,
        pk: &PreparedProvingKey<E>,
        u: Unchecked<E>,
    ) -> Result<(Proof<E>, ProofTimings), ProveError> {
        let mut timings = u.timings;
        if self.verify || u.learned.is_some() {
            let t = Instant::now();
            let checked = self.check_proof(pk, &u.proof, &u.inputs);
            timings.verify = t.elapsed().as_secs_f64();
            match (checked, u.learned) {
                (Ok(()), Some(m)) => pk.learn_matrices(m),
                (Err(e), _) if self.verify => return Err(e),
                _ => {}
            }
        }
        Ok((u.proof, timings))
    }

    /// Verifies `proof` against the key's verifying key and the public `inputs`.
    fn check_proof(
        &self,
        pk: &PreparedProvingKey<E>,
        proof: &Proof<E>,
        inputs: &[E::ScalarField],
    ) -> Result<(), ProveError> {
        // arkworks' prepare_inputs multiplies one input at a time; an MSM over the inputs is
        // the same point and much faster for hundreds of inputs.
        let gamma_abc = &pk.pvk.vk.gamma_abc_g1;
        let prepared_inputs =
            <E::G1 as VariableBaseMSM>::msm_unchecked(&gamma_abc[1..], inputs) + gamma_abc[0];
        let ok = Groth16::<E>::verify_proof_with_prepared_inputs(&pk.pvk, proof, &prepared_inputs)
            .map_err(ProveError::Synthesis)?;
        if ok {
            Ok(())
        } else {
            Err(ProveError::ProofRejected)
        }
    }
}
