//! One proof asked of the prover: a [`ProveRequest`] (the key, a circuit or a witness, the
//! blinding pair), run on this thread ([`GpuProver::run`]) or, natively, with the prover's
//! host threads ([`GpuProver::run`]). Every public way of proving one circuit goes
//! through these two.

#[cfg(not(target_arch = "wasm32"))]
use std::sync::atomic::{AtomicBool, Ordering};
use web_time::Instant;

use ark_ff::PrimeField;
use ark_ff::UniformRand;
use ark_groth16::Proof;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};

use crate::error::ProveError;
use crate::key::{GpuPairing, PreparedProvingKey};
use crate::prover::{GpuProver, ProofTimings, Synth, synthesize_as};
use crate::synth::Witness;

/// The circuit type of a request made from a witness ([`ProveRequest::witness`]): there is
/// none (the type has no value).
#[derive(Clone, Copy, Debug)]
pub enum NoCircuit {}

impl<F: PrimeField> ConstraintSynthesizer<F> for NoCircuit {
    fn generate_constraints(self, _: ConstraintSystemRef<F>) -> Result<(), SynthesisError> {
        match self {}
    }
}

/// What a proof is made from.
#[derive(Debug)]
enum Input<F, C> {
    /// A circuit, synthesized by the prover (the witness alone once the key holds the
    /// circuit's matrices, else with them).
    Circuit(C),
    /// A witness synthesized by the caller ([`crate::synthesize_witness`]); the key must hold
    /// the circuit's matrices.
    Witness(Witness<F>),
}

/// One proof asked of a [`GpuProver`]: the prepared key, a circuit or a witness, and the
/// blinding pair `(r, s)` (the same pair gives ark-groth16's proof; [`ProveRequest::draw`]
/// draws it as arkworks does).
///
/// ```no_run
/// # use zkgpu_groth16::{GpuProver, PreparedProvingKey, ProveRequest, ProveError};
/// # use ark_bls12_381::{Bls12_381, Fr};
/// # fn demo<C: ark_relations::gr1cs::ConstraintSynthesizer<Fr>>(
/// #     prover: &GpuProver<Bls12_381>, key: &PreparedProvingKey<Bls12_381>, circuit: C,
/// # ) -> Result<(), ProveError> {
/// let mut rng = ark_std::test_rng();
/// let request = ProveRequest::circuit(key, circuit, ProveRequest::<Bls12_381>::draw(&mut rng));
/// let (proof, timings) = prover.run(request)?;
/// println!("{:.1} ms", timings.total * 1e3);
/// # let _ = proof; Ok(()) }
/// ```
#[derive(Debug)]
pub struct ProveRequest<'k, E: GpuPairing, C = NoCircuit> {
    key: &'k PreparedProvingKey<E>,
    input: Input<E::ScalarField, C>,
    r: E::ScalarField,
    s: E::ScalarField,
}

impl<'k, E: GpuPairing, C: ConstraintSynthesizer<E::ScalarField>> ProveRequest<'k, E, C> {
    /// A proof of `circuit` against `key`, blinded by `(r, s)`.
    pub fn circuit(
        key: &'k PreparedProvingKey<E>,
        circuit: C,
        (r, s): (E::ScalarField, E::ScalarField),
    ) -> Self {
        Self {
            key,
            input: Input::Circuit(circuit),
            r,
            s,
        }
    }
}

impl<'k, E: GpuPairing> ProveRequest<'k, E, NoCircuit> {
    /// A proof of a witness the caller synthesized ([`crate::synthesize_witness`], on any
    /// thread), blinded by `(r, s)`. The key must hold the circuit's matrices
    /// ([`PreparedProvingKey::matrices`]); the witness is checked against them.
    pub fn witness(
        key: &'k PreparedProvingKey<E>,
        witness: Witness<E::ScalarField>,
        (r, s): (E::ScalarField, E::ScalarField),
    ) -> Self {
        Self {
            key,
            input: Input::Witness(witness),
            r,
            s,
        }
    }
}

impl<E: GpuPairing, C> ProveRequest<'_, E, C> {
    /// `(r, s)` drawn from `rng` as arkworks' `Groth16::prove` draws them (so a generator
    /// seeded alike gives ark-groth16's proof).
    pub fn draw<R: ark_std::rand::Rng + ?Sized>(rng: &mut R) -> (E::ScalarField, E::ScalarField) {
        (E::ScalarField::rand(rng), E::ScalarField::rand(rng))
    }
}

/// A request's input after synthesis, the constraint system of a full synthesis (it names
/// an unsatisfied constraint), and the synthesis' seconds.
type Synthesized<F> = (Synth<F>, Option<ConstraintSystemRef<F>>, f64);

/// Synthesizes a circuit (the witness alone when `with_matrices` is false); a witness is
/// taken as it is.
fn synthesize_input<F: PrimeField, C: ConstraintSynthesizer<F>>(
    input: Input<F, C>,
    with_matrices: bool,
) -> Result<Synthesized<F>, ProveError> {
    let t = Instant::now();
    let (syn, cs) = match input {
        Input::Witness(w) => (Synth::Witness(w), None),
        Input::Circuit(c) => synthesize_as(c, with_matrices)?,
    };
    Ok((syn, cs, t.elapsed().as_secs_f64()))
}

impl<E: GpuPairing> GpuProver<E> {
    /// The proof a request asks for, and where the time went, on this thread: synthesis,
    /// then the witness map and the five MSMs as two joined futures, then the self-check.
    /// No other thread and no blocking wait, so it runs in a browser on the page's WebGPU
    /// device; natively it is the single-threaded path (the same proof as
    /// [`GpuProver::run`]).
    pub async fn run_async<C: ConstraintSynthesizer<E::ScalarField>>(
        &self,
        request: ProveRequest<'_, E, C>,
    ) -> Result<(Proof<E>, ProofTimings), ProveError> {
        let t = Instant::now();
        let ProveRequest { key, input, r, s } = request;
        let with_matrices = key.matrices().is_none();
        let synthesized = synthesize_input(input, with_matrices)?;
        self.finish_request(key, synthesized, (r, s), false, t)
            .await
    }

    /// The proof a request asks for, natively with the prover's host threads: the GPU's
    /// clock warmed during synthesis ([`GpuProver::with_clock_warmup`]), the witness map and
    /// MSM H on a second thread beside the other MSMs ([`GpuProver::with_overlap`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn run<C: ConstraintSynthesizer<E::ScalarField>>(
        &self,
        request: ProveRequest<'_, E, C>,
    ) -> Result<(Proof<E>, ProofTimings), ProveError> {
        use zkgpu_runtime::BlockOn;
        let t = Instant::now();
        let ProveRequest { key, input, r, s } = request;
        let with_matrices = key.matrices().is_none();
        // A circuit's synthesis keeps the GPU idle: small transforms meanwhile keep its
        // clock up.
        let warm = self.warm_clock && matches!(input, Input::Circuit(_));
        let stop = AtomicBool::new(false);
        let synthesized = std::thread::scope(|scope| {
            if warm {
                scope.spawn(|| self.warm_clock_until(&stop));
            }
            let out = synthesize_input(input, with_matrices);
            stop.store(true, Ordering::Relaxed);
            out
        })?;
        self.finish_request(key, synthesized, (r, s), self.overlap, t)
            .block_on()
    }

    /// A synthesized request's proof: assembled, checked, its timings completed.
    async fn finish_request(
        &self,
        key: &PreparedProvingKey<E>,
        (syn, cs, synthesis): Synthesized<E::ScalarField>,
        rs: (E::ScalarField, E::ScalarField),
        overlap: bool,
        start: Instant,
    ) -> Result<(Proof<E>, ProofTimings), ProveError> {
        let unchecked = self
            .prove_unchecked(key, syn, cs.as_ref(), rs, overlap)
            .await?;
        let (proof, mut timings) = self.finish(key, unchecked)?;
        timings.synthesis = synthesis;
        timings.total = start.elapsed().as_secs_f64();
        Ok((proof, timings))
    }
}
