//! Proving a circom circuit: its snarkjs key on the GPU, its `.wtns` witness, circom's
//! reduction; and the same proof on the CPU cores (ark-groth16 with circom's reduction, what
//! ark-circom runs) as the reference.

use ark_bn254::Bn254;
use ark_ff::One;
use ark_groth16::{Groth16, PreparedVerifyingKey, Proof, VerifyingKey};
use ark_std::rand::{CryptoRng, RngCore};
use zkgpu_groth16::{
    GpuProver, PreparedProvingKey, ProofTimings, ProveError, ProveRequest, Witness,
};

use crate::curve::CircomCurve;
use crate::error::CircomError;
use crate::reduction::CircomReduction;
use crate::zkey::CircomKey;

/// A proof with its public signals, as snarkjs' `groth16.prove` returns them.
#[derive(Clone, Debug)]
pub struct CircomProof<E: CircomCurve = Bn254> {
    /// The proof.
    pub proof: Proof<E>,
    /// The public signals (outputs, then public inputs): the witness's values 1 to
    /// `num_public`.
    pub public_signals: Vec<E::ScalarField>,
    /// Where the time went.
    pub timings: ProofTimings,
}

impl<E: CircomCurve> CircomKey<E> {
    /// Uploads the key's bases and matrices for `prover`: every proof then reads its witness
    /// alone.
    pub async fn prepare_async(
        &self,
        prover: &GpuProver<E>,
    ) -> Result<PreparedProvingKey<E>, CircomError> {
        let m = self.matrices()?;
        Ok(prover
            .prepare_with_matrices_async(&self.proving_key, m)
            .await?)
    }

    /// [`CircomKey::prepare_async`], blocking.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn prepare(&self, prover: &GpuProver<E>) -> Result<PreparedProvingKey<E>, CircomError> {
        Ok(prover.prepare_with_matrices(&self.proving_key, self.matrices()?)?)
    }
}

/// The hash a snarkjs key's prepared form is cached under: blake3 of the `.zkey`'s bytes
/// (derived for this use), so that a cache hit reads none of the key.
#[cfg(not(target_arch = "wasm32"))]
pub fn zkey_hash(zkey: &[u8]) -> [u8; 32] {
    let mut h = zkey_hasher();
    h.update_rayon(zkey);
    *h.finalize().as_bytes()
}

#[cfg(not(target_arch = "wasm32"))]
fn zkey_hasher() -> blake3::Hasher {
    blake3::Hasher::new_derive_key("zkgpu 2026 circom .zkey prepared key")
}

/// [`zkey_hash`] of the file at `path`, read in pieces of 16 MiB (each hashed on the CPU
/// cores), so the file is never in memory whole.
#[cfg(not(target_arch = "wasm32"))]
pub fn zkey_file_hash(path: &std::path::Path) -> Result<[u8; 32], CircomError> {
    use std::io::Read;
    const PIECE: usize = 16 << 20;
    let io = |e| CircomError::io(path, e);
    let mut f = std::fs::File::open(path).map_err(io)?;
    let mut h = zkey_hasher();
    let mut buf = vec![0u8; PIECE];
    loop {
        // Fill the piece (a read may return less), so each update but the last is whole.
        let mut got = 0;
        while got < PIECE {
            match f.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io(e)),
            }
        }
        h.update_rayon(&buf[..got]);
        if got < PIECE {
            return Ok(*h.finalize().as_bytes());
        }
    }
}

/// The `.zkey` prepared for `prover`, from its cache file under `dir` when one is there and
/// passes every check (the key is then not read at all), else read, prepared and written
/// there ([`GpuProver::prepare_cached_by_hash`]).
#[cfg(not(target_arch = "wasm32"))]
pub fn prepare_cached<E: CircomCurve>(
    prover: &GpuProver<E>,
    zkey: &[u8],
    dir: &std::path::Path,
) -> Result<(PreparedProvingKey<E>, zkgpu_groth16::CacheOutcome), CircomError> {
    prepare_cached_with(prover, zkey_hash(zkey), dir, || crate::read_zkey(zkey))
}

/// The cache lookup of a key of hash `hash`, read by `read` on a miss.
#[cfg(not(target_arch = "wasm32"))]
fn prepare_cached_with<E: CircomCurve>(
    prover: &GpuProver<E>,
    hash: [u8; 32],
    dir: &std::path::Path,
    read: impl FnOnce() -> Result<CircomKey<E>, CircomError>,
) -> Result<(PreparedProvingKey<E>, zkgpu_groth16::CacheOutcome), CircomError> {
    let mut unread = None;
    let prepared = prover.prepare_cached_by_hash(hash, dir, || {
        let read = read().and_then(|k| Ok((k.matrices()?, k.proving_key)));
        match read {
            Ok((m, pk)) => Ok((pk, m)),
            Err(e) => {
                let what = e.to_string();
                unread = Some(e);
                Err(ProveError::MalformedKey(what))
            }
        }
    });
    match (prepared, unread) {
        (Err(_), Some(e)) => Err(e),
        (other, _) => Ok(other?),
    }
}

/// [`prepare_cached`] of the `.zkey` at `path` whose [`zkey_file_hash`] is `hash` (callers
/// that check a content address have it already): on a cache miss the key is read one
/// section at a time ([`crate::read_zkey_file`]), so its file is never in memory whole.
#[cfg(not(target_arch = "wasm32"))]
pub fn prepare_cached_file<E: CircomCurve>(
    prover: &GpuProver<E>,
    path: &std::path::Path,
    hash: [u8; 32],
    dir: &std::path::Path,
) -> Result<(PreparedProvingKey<E>, zkgpu_groth16::CacheOutcome), CircomError> {
    prepare_cached_with(prover, hash, dir, || crate::read_zkey_file(path))
}

/// The witness `values` (a `.wtns`'s) checked against `key`: its length and its constant one.
pub fn check_witness<E: CircomCurve>(
    key: &PreparedProvingKey<E>,
    values: Vec<E::ScalarField>,
) -> Result<Witness<E::ScalarField>, CircomError> {
    let (inputs, witness) = (key.num_instance_variables(), key.num_witness_variables());
    if values.len() != inputs + witness {
        return Err(CircomError::WitnessMismatch(format!(
            "the witness has {} values, the key's circuit {} signals",
            values.len(),
            inputs + witness
        )));
    }
    if !values[0].is_one() {
        return Err(CircomError::WitnessMismatch(
            "its first value (the constant signal) is not 1".into(),
        ));
    }
    Ok(Witness {
        full_assignment: values,
        num_inputs: inputs,
    })
}

/// The proof and the public signals of the witness `values`, proved by `prove`.
async fn prove_with<E: CircomCurve, Fut>(
    key: &PreparedProvingKey<E>,
    values: Vec<E::ScalarField>,
    prove: impl FnOnce(Witness<E::ScalarField>) -> Fut,
) -> Result<CircomProof<E>, CircomError>
where
    Fut: std::future::Future<Output = Result<(Proof<E>, ProofTimings), ProveError>>,
{
    let w = check_witness(key, values)?;
    let public_signals = w.full_assignment[1..w.num_inputs].to_vec();
    let (proof, timings) = prove(w).await?;
    Ok(CircomProof {
        proof,
        public_signals,
        timings,
    })
}

/// The proof of the witness `values` against `key` on the GPU, its randomness `r` and `s`
/// drawn from `rng` as ark-groth16 draws them; the witness map and the MSMs on two host
/// threads. A witness that does not satisfy the circuit gives [`CircomError::NotSatisfied`].
#[cfg(not(target_arch = "wasm32"))]
pub fn prove<E: CircomCurve, R: RngCore + CryptoRng>(
    prover: &GpuProver<E>,
    key: &PreparedProvingKey<E>,
    values: Vec<E::ScalarField>,
    rng: &mut R,
) -> Result<CircomProof<E>, CircomError> {
    let (r, s) = ProveRequest::<E>::draw(rng);
    prove_with_randomness(prover, key, values, r, s)
}

/// [`prove`] as a future, each step awaited in turn on this thread (the way in a browser).
pub async fn prove_async<E: CircomCurve, R: RngCore + CryptoRng>(
    prover: &GpuProver<E>,
    key: &PreparedProvingKey<E>,
    values: Vec<E::ScalarField>,
    rng: &mut R,
) -> Result<CircomProof<E>, CircomError> {
    let (r, s) = ProveRequest::<E>::draw(rng);
    prove_with_randomness_async(prover, key, values, r, s).await
}

/// [`prove`] for the given `r` and `s` (reproducible proofs, and tests against the CPU
/// prover with the same randomness).
#[cfg(not(target_arch = "wasm32"))]
pub fn prove_with_randomness<E: CircomCurve>(
    prover: &GpuProver<E>,
    key: &PreparedProvingKey<E>,
    values: Vec<E::ScalarField>,
    r: E::ScalarField,
    s: E::ScalarField,
) -> Result<CircomProof<E>, CircomError> {
    use zkgpu_runtime::BlockOn;
    // The future is ready at once: the proof is made on this call's threads.
    prove_with(key, values, |w| {
        std::future::ready(prover.run(ProveRequest::witness(key, w, (r, s))))
    })
    .block_on()
}

/// [`prove_with_randomness`] as a future, each step awaited in turn on this thread.
pub async fn prove_with_randomness_async<E: CircomCurve>(
    prover: &GpuProver<E>,
    key: &PreparedProvingKey<E>,
    values: Vec<E::ScalarField>,
    r: E::ScalarField,
    s: E::ScalarField,
) -> Result<CircomProof<E>, CircomError> {
    prove_with(key, values, |w| {
        prover.run_async(ProveRequest::witness(key, w, (r, s)))
    })
    .await
}

/// The same proof on the CPU: ark-groth16 with circom's reduction over the key's matrices
/// (ark-circom's prover), for the given `r` and `s`.
pub fn reference_proof<E: CircomCurve>(
    key: &CircomKey<E>,
    values: &[E::ScalarField],
    r: E::ScalarField,
    s: E::ScalarField,
) -> Result<Proof<E>, CircomError> {
    if values.len() != key.num_variables {
        return Err(CircomError::WitnessMismatch(format!(
            "the witness has {} values, the key's circuit {} signals",
            values.len(),
            key.num_variables
        )));
    }
    Groth16::<E, CircomReduction>::create_proof_with_reduction_and_matrices(
        &key.proving_key,
        r,
        s,
        &key.ab,
        key.num_public + 1,
        key.num_constraints(),
        values,
    )
    .map_err(|e| CircomError::Prove(zkgpu_groth16::ProveError::Synthesis(e)))
}

/// Whether `proof` verifies against `vk` for the public signals (snarkjs' `groth16 verify`).
pub fn verify<E: CircomCurve>(
    vk: &VerifyingKey<E>,
    proof: &Proof<E>,
    public_signals: &[E::ScalarField],
) -> Result<bool, CircomError> {
    if public_signals.len() + 1 != vk.gamma_abc_g1.len() {
        return Err(CircomError::WitnessMismatch(format!(
            "{} public signals for a verifying key of {}",
            public_signals.len(),
            vk.gamma_abc_g1.len() - 1
        )));
    }
    let pvk: PreparedVerifyingKey<E> = ark_groth16::prepare_verifying_key(vk);
    Groth16::<E>::verify_proof(&pvk, proof, public_signals)
        .map_err(|e| CircomError::Prove(zkgpu_groth16::ProveError::Synthesis(e)))
}
