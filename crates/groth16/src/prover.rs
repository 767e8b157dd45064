//! The Groth16 prover with the witness map and all five MSMs on the GPU.
//!
//! ark-groth16 0.6 has no hook for its MSMs, so the proof is assembled here from the public
//! fields of [`ProvingKey`], term for term as `Groth16::create_proof_with_reduction` does; with
//! the same `r` and `s` the proof is the same.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use ark_ec::pairing::Pairing;
use ark_ec::{AffineRepr, CurveGroup, VariableBaseMSM};
use ark_ff::{UniformRand, Zero};
use ark_groth16::{Groth16, PreparedVerifyingKey, Proof, ProvingKey, prepare_verifying_key};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_relations::gr1cs::{ConstraintSynthesizer, SynthesisError};
use ark_std::rand::{CryptoRng, RngCore};
use zkgpu_curves::GpuCurve;
use zkgpu_msm::{Fold, GpuMsm, MsmConfig, MsmError, PreparedBases, PreparedScalars};
use zkgpu_ntt::{Direction, GpuNtt, NttError, NttField};
use zkgpu_runtime::GpuContext;

use crate::qap::{WitnessMapError, WitnessMapTimings, witness_map_gpu_timed};
use crate::synth::synthesize;

/// A pairing whose groups and scalar field the GPU engines support: BLS12-381 and BLS12-377.
pub trait GpuPairing: Pairing<ScalarField: NttField> {
    /// G1 on the GPU.
    type GpuG1: GpuCurve<Affine = Self::G1Affine, Projective = Self::G1, Scalar = Self::ScalarField>;
    /// G2 on the GPU.
    type GpuG2: GpuCurve<Affine = Self::G2Affine, Projective = Self::G2, Scalar = Self::ScalarField>;
}

impl GpuPairing for ark_bls12_381::Bls12_381 {
    type GpuG1 = zkgpu_curves::Bls12_381G1;
    type GpuG2 = zkgpu_curves::Bls12_381G2;
}

impl GpuPairing for ark_bls12_377::Bls12_377 {
    type GpuG1 = zkgpu_curves::Bls12_377G1;
    type GpuG2 = zkgpu_curves::Bls12_377G2;
}

/// Errors of the GPU prover.
#[derive(Debug, thiserror::Error)]
pub enum ProveError {
    /// Synthesizing the circuit failed (the circuit's own error).
    #[error("constraint synthesis failed: {0}")]
    Synthesis(SynthesisError),
    /// The witness does not satisfy the circuit.
    #[error("the witness does not satisfy constraint {index}{}", name.as_ref().map(|n| format!(" ({n})")).unwrap_or_default())]
    Unsatisfied {
        /// Index of the first unsatisfied constraint.
        index: usize,
        /// Its name, where the constraint system records one.
        name: Option<String>,
    },
    /// The proving key is not the key of this circuit: a dimension differs.
    #[error(
        "the proving key does not fit this circuit: it has {key} {what}, the circuit {circuit}"
    )]
    KeyMismatch {
        /// Which dimension.
        what: &'static str,
        /// The key's.
        key: usize,
        /// The circuit's.
        circuit: usize,
    },
    /// The proving key's vectors are inconsistent with each other.
    #[error("malformed proving key: {0}")]
    MalformedKey(String),
    /// The proof does not verify against the key's verifying key: the key belongs to another
    /// circuit of the same shape (or the device computed a wrong result). No proof is returned.
    #[error(
        "the proof does not verify against the proving key's verifying key: the key is not this circuit's"
    )]
    ProofRejected,
    /// An MSM failed on the GPU.
    #[error("MSM: {0}")]
    Msm(#[from] MsmError),
    /// The witness map failed on the GPU.
    #[error("witness map: {0}")]
    Ntt(#[from] NttError),
}

impl From<WitnessMapError> for ProveError {
    fn from(e: WitnessMapError) -> Self {
        match e {
            WitnessMapError::Synthesis(s) => Self::Synthesis(s),
            WitnessMapError::Unsatisfied { constraint } => Self::Unsatisfied {
                index: constraint,
                name: None,
            },
            WitnessMapError::Ntt(e) => Self::Ntt(e),
        }
    }
}

/// Where the time of one proof went (seconds, wall clock on the host).
#[derive(Clone, Copy, Debug, Default)]
pub struct ProofTimings {
    /// Constraint synthesis and matrix construction (arkworks, on the CPU).
    pub synthesis: f64,
    /// The witness map: sparse products on the CPU, NTTs and the quotient on the GPU.
    pub witness_map: f64,
    /// Its parts.
    pub witness_map_parts: WitnessMapTimings,
    /// The MSMs of the A, B in G1 and L queries: one MSM over three base sets, since they
    /// share the assignment as scalars (`GpuMsm::msm_sets`).
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
}

/// A proving key with its five base vectors on the GPU, reusable across proofs.
#[derive(Debug)]
pub struct PreparedProvingKey<E: GpuPairing> {
    /// The A and B-in-G1 queries past their first element, and the L query behind
    /// `num_inputs - 1` identities, as three base sets: all three pair with the assignment
    /// `full[1..]`.
    a_b_l: PreparedBases<E::GpuG1>,
    b_g2: PreparedBases<E::GpuG2>,
    h: PreparedBases<E::GpuG1>,
    a0: E::G1Affine,
    b_g1_0: E::G1Affine,
    b_g2_0: E::G2Affine,
    beta_g1: E::G1Affine,
    delta_g1: E::G1Affine,
    alpha_g1: E::G1Affine,
    beta_g2: E::G2Affine,
    delta_g2: E::G2Affine,
    pvk: PreparedVerifyingKey<E>,
    num_inputs: usize,
    num_witness: usize,
    domain_size: usize,
}

impl<E: GpuPairing> PreparedProvingKey<E> {
    /// Public inputs including the constant one (the key's `gamma_abc_g1` length).
    pub fn num_instance_variables(&self) -> usize {
        self.num_inputs
    }

    /// Witness variables (the key's `l_query` length).
    pub fn num_witness_variables(&self) -> usize {
        self.num_witness
    }

    /// Size of the evaluation domain (the key's `h_query` length plus one).
    pub fn domain_size(&self) -> usize {
        self.domain_size
    }

    /// The verifying key, prepared for pairings.
    pub fn verifying_key(&self) -> &PreparedVerifyingKey<E> {
        &self.pvk
    }
}

/// The GPU Groth16 prover of pairing `E` on one GPU context: the NTT engine and the MSM
/// engines of G1 and G2, pipelines built once.
#[derive(Debug)]
pub struct GpuProver<'c, E: GpuPairing> {
    ntt: GpuNtt<'c, E::ScalarField>,
    g1: GpuMsm<'c, E::GpuG1>,
    g2: GpuMsm<'c, E::GpuG2>,
    verify: bool,
    overlap: bool,
    warm_clock: bool,
    fold: bool,
    /// The witness map's sparse products run on their own thread pool (as many threads as
    /// rayon's global one): in the global pool they would hold every worker for 80-100 ms at
    /// 2^20 constraints, and the MSM thread's short parallel steps (scalars into staging,
    /// window sums) would queue behind them. None if the pool could not be built.
    products_pool: Option<rayon::ThreadPool>,
}

impl<'c, E: GpuPairing> GpuProver<'c, E> {
    /// The prover on `ctx`.
    pub fn new(ctx: &'c GpuContext) -> Result<Self, ProveError> {
        let products_pool = rayon::ThreadPoolBuilder::new()
            .num_threads(rayon::current_num_threads())
            .thread_name(|i| format!("zkgpu-witness-map-{i}"))
            .build()
            .ok();
        Ok(Self {
            ntt: GpuNtt::new(ctx),
            g1: GpuMsm::new(ctx)?,
            g2: GpuMsm::new(ctx)?,
            verify: true,
            overlap: true,
            warm_clock: true,
            fold: true,
            products_pool,
        })
    }

    /// Whether the GPU runs small NTTs during constraint synthesis (default: yes), so that
    /// its clock is up when the proof's GPU work starts. GPUs lower their clock within about a
    /// second of idleness and take a few hundred milliseconds of work to raise it again (the
    /// H100 drops from 1980 to 345 MHz): without the warm-up the first few hundred
    /// milliseconds of a proof that follows a long synthesis run up to 5x slower. The cost
    /// is GPU power during synthesis (one small transform after another; one host thread
    /// waits on them), not time.
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

    /// Whether [`GpuProver::prepare`] stores window multiples of the G1 bases (A, B in G1, L
    /// and H; default: yes): those MSMs then reduce fewer bucket windows (`zkgpu_msm::Fold`),
    /// at the cost of the multiples' memory and of computing them once per key (doublings
    /// and an inversion per multiple, on the GPU: about 8 s at 2^20 constraints on the
    /// H100). Each base vector gets the most levels that keep it in one storage binding
    /// ([`GpuMsm::folds_in_one_part`]). B in G2 is never folded (slower on the H100).
    pub fn with_folding(mut self, fold: bool) -> Self {
        self.fold = fold;
        self
    }

    /// Checks `pk` and uploads its five base vectors (with window multiples unless
    /// [`GpuProver::with_folding`] turned them off).
    pub fn prepare(&self, pk: &ProvingKey<E>) -> Result<PreparedProvingKey<E>, ProveError> {
        let vars = pk.a_query.len();
        let num_inputs = pk.vk.gamma_abc_g1.len();
        let malformed = |what: String| Err(ProveError::MalformedKey(what));
        if vars == 0 || num_inputs == 0 {
            return malformed("empty a_query or gamma_abc_g1".into());
        }
        if pk.b_g1_query.len() != vars || pk.b_g2_query.len() != vars {
            return malformed(format!(
                "a_query has {vars} elements, b_g1_query {} and b_g2_query {}",
                pk.b_g1_query.len(),
                pk.b_g2_query.len()
            ));
        }
        if pk.l_query.len() + num_inputs != vars {
            return malformed(format!(
                "l_query ({}) and gamma_abc_g1 ({num_inputs}) do not add up to a_query ({vars})",
                pk.l_query.len()
            ));
        }
        let domain_size = pk.h_query.len() + 1;
        if !domain_size.is_power_of_two() {
            return malformed(format!(
                "h_query has {} elements, not a power of two minus one",
                pk.h_query.len()
            ));
        }
        // L pairs with the witness part of the assignment full[1..], which starts at
        // num_inputs - 1: identities in front align it with A and B.
        let l_aligned: Vec<E::G1Affine> = std::iter::repeat_n(E::G1Affine::zero(), num_inputs - 1)
            .chain(pk.l_query.iter().copied())
            .collect();
        let a_b_l: [&[E::G1Affine]; 3] = [&pk.a_query[1..], &pk.b_g1_query[1..], &l_aligned];
        let b_g2: [&[E::G2Affine]; 1] = [&pk.b_g2_query[1..]];
        let h: [&[E::G1Affine]; 1] = [&pk.h_query];
        fn fold_for<C: zkgpu_curves::GpuCurve>(
            on: bool,
            msm: &GpuMsm<'_, C>,
            sets: &[&[C::Affine]],
        ) -> Fold {
            let len = sets.iter().map(|s| s.len()).max().unwrap_or(0);
            Fold {
                folds: if on {
                    msm.folds_in_one_part(len, sets.len())
                } else {
                    1
                },
                window_bits: None,
            }
        }
        Ok(PreparedProvingKey {
            a_b_l: self
                .g1
                .prepare_sets_folded_blocking(&a_b_l, fold_for(self.fold, &self.g1, &a_b_l))?,
            // G2 stays unfolded: on the H100 its folded bases (8 levels, 1.6 GB at 2^20) made
            // the accumulation's gathers slower by more than the reduction saved (B in G2
            // 140 -> 159 ms in the prover; docs/PERFORMANCE.md).
            b_g2: self
                .g2
                .prepare_sets_folded_blocking(&b_g2, fold_for(false, &self.g2, &b_g2))?,
            h: self
                .g1
                .prepare_sets_folded_blocking(&h, fold_for(self.fold, &self.g1, &h))?,
            a0: pk.a_query[0],
            b_g1_0: pk.b_g1_query[0],
            b_g2_0: pk.b_g2_query[0],
            beta_g1: pk.beta_g1,
            delta_g1: pk.delta_g1,
            alpha_g1: pk.vk.alpha_g1,
            beta_g2: pk.vk.beta_g2,
            delta_g2: pk.vk.delta_g2,
            pvk: prepare_verifying_key(&pk.vk),
            num_inputs,
            num_witness: pk.l_query.len(),
            domain_size,
        })
    }

    /// A zero-knowledge proof of `circuit`, with `r` and `s` drawn from `rng` as arkworks
    /// draws them (so the same seeded generator gives ark-groth16's proof).
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
        let r = E::ScalarField::rand(rng);
        let s = E::ScalarField::rand(rng);
        Ok(self.prove_with_randomness(pk, circuit, r, s)?.0)
    }

    /// The proof of `circuit` for the given `r` and `s`, and where the time went.
    pub fn prove_with_randomness<C>(
        &self,
        pk: &PreparedProvingKey<E>,
        circuit: C,
        r: E::ScalarField,
        s: E::ScalarField,
    ) -> Result<(Proof<E>, ProofTimings), ProveError>
    where
        C: ConstraintSynthesizer<E::ScalarField>,
    {
        let mut timings = ProofTimings::default();
        let t = Instant::now();
        let stop = AtomicBool::new(false);
        let syn = std::thread::scope(|scope| {
            if self.warm_clock {
                scope.spawn(|| self.warm_clock_until(&stop));
            }
            let syn = synthesize(circuit);
            stop.store(true, Ordering::Relaxed);
            syn
        })
        .map_err(ProveError::Synthesis)?;
        let (num_inputs, num_constraints) = (syn.num_inputs, syn.num_constraints);
        let num_witness = syn.num_witness();
        for (what, key, circuit) in [
            ("instance variables", pk.num_inputs, num_inputs),
            ("witness variables", pk.num_witness, num_witness),
            (
                "domain elements",
                pk.domain_size,
                (num_constraints + num_inputs).next_power_of_two(),
            ),
        ] {
            if key != circuit {
                return Err(ProveError::KeyMismatch { what, key, circuit });
            }
        }
        timings.synthesis = t.elapsed().as_secs_f64();

        let t = Instant::now();
        let result = self.assemble(
            pk,
            &syn.matrices,
            num_constraints,
            &syn.full_assignment,
            r,
            s,
            &mut timings,
        );
        let proof = match result {
            Err(ProveError::Unsatisfied { index, .. }) => {
                return Err(ProveError::Unsatisfied {
                    index,
                    name: syn.cs.which_is_unsatisfied().ok().flatten(),
                });
            }
            other => other?,
        };
        timings.prove = t.elapsed().as_secs_f64();
        if self.verify {
            let t = Instant::now();
            // arkworks' prepare_inputs multiplies one input at a time; an MSM over the
            // inputs is the same point (hundreds of inputs: 100 ms against 1 ms).
            let gamma_abc = &pk.pvk.vk.gamma_abc_g1;
            let inputs = &syn.full_assignment[1..num_inputs];
            let prepared_inputs =
                <E::G1 as VariableBaseMSM>::msm_unchecked(&gamma_abc[1..], inputs) + gamma_abc[0];
            let ok =
                Groth16::<E>::verify_proof_with_prepared_inputs(&pk.pvk, &proof, &prepared_inputs)
                    .map_err(ProveError::Synthesis)?;
            timings.verify = t.elapsed().as_secs_f64();
            if !ok {
                return Err(ProveError::ProofRejected);
            }
        }
        Ok((proof, timings))
    }

    /// The witness map and the five MSMs (two host threads sharing the GPU queue, so one
    /// thread's host work overlaps the other's GPU work), then the proof's few group
    /// operations on the CPU.
    #[allow(clippy::too_many_arguments)]
    fn assemble(
        &self,
        pk: &PreparedProvingKey<E>,
        matrices: &[ark_relations::gr1cs::Matrix<E::ScalarField>],
        num_constraints: usize,
        full: &[E::ScalarField],
        r: E::ScalarField,
        s: E::ScalarField,
        timings: &mut ProofTimings,
    ) -> Result<Proof<E>, ProveError> {
        let num_inputs = pk.num_inputs;
        let cfg = MsmConfig::default();
        let matrices: Vec<_> = matrices.iter().collect();
        let quotient = || -> Result<_, ProveError> {
            let t = Instant::now();
            let mut parts = WitnessMapTimings::default();
            let mut map = || {
                pollster::block_on(witness_map_gpu_timed(
                    &self.ntt,
                    &matrices,
                    num_inputs,
                    num_constraints,
                    full,
                    &mut parts,
                ))
            };
            let h = match (&self.products_pool, self.overlap) {
                (Some(pool), true) => pool.install(map),
                _ => map(),
            }?;
            let wm = t.elapsed().as_secs_f64();
            let (h_acc, th) = timed(|| self.g1.msm_prepared_blocking(&pk.h, &h, cfg))?;
            Ok((h_acc, wm, parts, th))
        };
        let others = || -> Result<_, ProveError> {
            // One conversion of the assignment for A, B (G1 and G2) and L; its time is
            // counted in MSM B in G2.
            let t = Instant::now();
            let assignment = PreparedScalars::new(&full[1..]);
            let convert = t.elapsed().as_secs_f64();
            // B in G2 first: the longest MSM runs while the other thread computes the sparse
            // products on the CPU, and the witness map's transforms, submitted when those
            // end, queue behind it rather than behind the G1 MSMs too (the queue is FIFO); H
            // then overlaps the G1 MSMs.
            let (b2, tb2) = timed(|| {
                self.g2
                    .msm_prepared_scalars_blocking(&pk.b_g2, assignment.all(), cfg)
            })?;
            let tb2 = tb2 + convert;
            // Then A, B in G1 and L as one MSM over three base sets: one upload of the
            // scalars, one digit decomposition and bucket sort, and each later stage once
            // for all three (arkworks skips B in G1 when r = 0; its sum is then unused).
            let (sums, tabl) =
                timed(|| self.g1.msm_sets_blocking(&pk.a_b_l, assignment.all(), cfg))?;
            let [a, b1, l]: [E::G1; 3] = sums
                .try_into()
                .map_err(|_| ProveError::Msm(MsmError::Config("expected three sums".into())))?;
            Ok(((a, b1, b2, l), (tabl, tb2)))
        };
        let (quotient, others) = if self.overlap {
            // Both threads use the G1 pipelines: build them first, once.
            pollster::block_on(self.g1.build_pipelines())?;
            std::thread::scope(|scope| {
                let quotient = scope.spawn(quotient);
                let others = others();
                // A panic on the witness-map thread is a bug of ours: pass it on.
                match quotient.join() {
                    Ok(q) => (q, others),
                    Err(p) => std::panic::resume_unwind(p),
                }
            })
        } else {
            (quotient(), others())
        };
        let (h_acc, wm, wm_parts, th) = quotient?;
        let ((a_acc, b1_acc, b2_acc, l_acc), (tabl, tb2)) = others?;
        timings.witness_map = wm;
        timings.witness_map_parts = wm_parts;
        timings.msm_h = th;
        timings.msm_a_b_l = tabl;
        timings.msm_b_g2 = tb2;

        // Groth16::create_proof_with_assignment, term for term.
        let g_a: E::G1 = pk.delta_g1 * r + pk.a0 + a_acc + pk.alpha_g1;
        let g1_b: E::G1 = if r.is_zero() {
            E::G1::zero()
        } else {
            pk.delta_g1 * s + pk.b_g1_0 + b1_acc + pk.beta_g1
        };
        let g2_b: E::G2 = pk.delta_g2 * s + pk.b_g2_0 + b2_acc + pk.beta_g2;
        let g_c: E::G1 = g_a * s + g1_b * r - pk.delta_g1 * (r * s) + l_acc + h_acc;
        Ok(Proof {
            a: g_a.into_affine(),
            b: g2_b.into_affine(),
            c: g_c.into_affine(),
        })
    }
}

impl<E: GpuPairing> GpuProver<'_, E> {
    /// Small NTTs, eight per submission (about a millisecond of GPU work), until `stop` is
    /// set; a failure ends the warm-up quietly (the proof reports GPU errors itself).
    fn warm_clock_until(&self, stop: &AtomicBool) {
        const LOG: usize = 14;
        let Some(domain) = Radix2EvaluationDomain::<E::ScalarField>::new(1 << LOG) else {
            return;
        };
        let Ok(mut dv) = self.ntt.zeroed(1 << LOG, 1) else {
            return;
        };
        while !stop.load(Ordering::Relaxed) {
            let mut enc = self.ntt.encoder();
            for _ in 0..8 {
                let rec =
                    self.ntt
                        .record_transform(&mut enc, &mut dv, &domain, Direction::Forward, None);
                if pollster::block_on(rec).is_err() {
                    return;
                }
            }
            if self.ntt.submit(enc).is_err() {
                return;
            }
        }
    }
}

/// `f()` and its wall time in seconds.
fn timed<T>(f: impl FnOnce() -> Result<T, MsmError>) -> Result<(T, f64), MsmError> {
    let t = Instant::now();
    let v = f()?;
    Ok((v, t.elapsed().as_secs_f64()))
}
