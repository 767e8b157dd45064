//! circom in the page: a snarkjs `.zkey` read (and uploaded) once, `.wtns` witnesses proved
//! on the page's GPU, or on the CPU where the page has no WebGPU (the same module's
//! ark-groth16 with circom's reduction), proofs in snarkjs' shape (`{ proof, publicSignals }`),
//! as `groth16Prove` of `web/zkgpu.js` returns them. Plain Rust, tested natively
//! (`web/tests/integration/circom.rs`).

use ark_bn254::{Bn254, Fr};
use web_time::Instant;
use zkgpu_circom::CircomKey;
use zkgpu_groth16::{GpuProver, PreparedProvingKey};
use zkgpu_runtime::GpuContext;

use crate::api::randomness;
use crate::error::WebError;
use crate::ms;

/// Where the time of one [`CircomProver::prove`] went, milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CircomTimes {
    /// Reading the `.wtns`.
    pub witness_ms: f64,
    /// The proof itself: the witness map and the five MSMs on the GPU, or ark-groth16 on the
    /// CPU.
    pub prove_ms: f64,
    /// The self-check against the key's verifying key.
    pub verify_ms: f64,
    /// The whole call.
    pub total_ms: f64,
}

/// A proof as snarkjs' `groth16.prove` resolves: `proof` is `proof.json`'s object,
/// `public_signals` `public.json`'s array.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CircomProved {
    /// snarkjs' proof object.
    pub proof: serde_json::Value,
    /// The public signals, decimal.
    pub public_signals: Vec<String>,
    /// Where it was proved: `"webgpu"` or `"cpu"`.
    pub backend: &'static str,
    /// Where the time went.
    pub times: CircomTimes,
}

/// A snarkjs key read (and uploaded to one GPU context, or kept for the CPU prover), proving
/// witness after witness.
pub struct CircomProver {
    key: CircomKey,
    /// The GPU prover and the key in its form; `None`: the CPU prover.
    gpu: Option<(GpuProver<Bn254>, PreparedProvingKey<Bn254>)>,
    /// Reading the key's bytes, milliseconds.
    pub read_ms: f64,
    /// Uploading its bases and matrices, milliseconds.
    pub prepare_ms: f64,
}

impl std::fmt::Debug for CircomProver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CircomProver")
            .field("constraints", &self.key.num_constraints())
            .field("backend", &self.backend())
            .field("read_ms", &self.read_ms)
            .field("prepare_ms", &self.prepare_ms)
            .finish_non_exhaustive()
    }
}

fn proof_value(proof: &ark_groth16::Proof<Bn254>) -> Result<serde_json::Value, WebError> {
    serde_json::from_str(&zkgpu_circom::proof_json(proof)).map_err(|e| WebError::new("INTERNAL", e))
}

fn seed_randomness(seed: &[u8]) -> Result<(Fr, Fr), WebError> {
    randomness::<Fr>(seed).map_err(|e| WebError::new("INVALID_INPUT", e))
}

impl CircomProver {
    /// Reads a snarkjs `.zkey` and uploads it (without window multiples: they cost seconds
    /// of GPU work on a slow adapter).
    pub async fn load(ctx: &GpuContext, zkey: &[u8]) -> Result<Self, WebError> {
        let t = Instant::now();
        let key = zkgpu_circom::read_zkey(zkey).map_err(WebError::key)?;
        let read_ms = ms(t);
        let t = Instant::now();
        let gpu = GpuProver::<Bn254>::new(ctx)
            .map_err(|e| WebError::new("GPU", e))?
            .with_folding(false);
        let prepared = key
            .prepare_async(&gpu)
            .await
            .map_err(|e| WebError::new("GPU", e))?;
        Ok(Self {
            key,
            gpu: Some((gpu, prepared)),
            read_ms,
            prepare_ms: ms(t),
        })
    }

    /// Reads a snarkjs `.zkey` for the CPU prover (a page without WebGPU).
    pub fn load_cpu(zkey: &[u8]) -> Result<Self, WebError> {
        let t = Instant::now();
        let key = zkgpu_circom::read_zkey(zkey).map_err(WebError::key)?;
        Ok(Self {
            key,
            gpu: None,
            read_ms: ms(t),
            prepare_ms: 0.0,
        })
    }

    /// Where this prover proves: `"webgpu"` or `"cpu"`.
    pub fn backend(&self) -> &'static str {
        if self.gpu.is_some() { "webgpu" } else { "cpu" }
    }

    /// Constraints of the key's circuit.
    pub fn num_constraints(&self) -> usize {
        self.key.num_constraints()
    }

    /// Proves the `.wtns` with `r` and `s` from `seed` (32 bytes); the proof is checked
    /// against the key before it is returned.
    pub async fn prove(&self, wtns: &[u8], seed: &[u8]) -> Result<CircomProved, WebError> {
        let t = Instant::now();
        let values = zkgpu_circom::read_wtns(wtns).map_err(WebError::witness)?;
        let (r, s) = seed_randomness(seed)?;
        let witness_ms = ms(t);
        let t_prove = Instant::now();
        let (proof, public_signals, verify_ms) = match &self.gpu {
            Some((gpu, prepared)) => {
                let out = zkgpu_circom::prove_with_randomness_async(gpu, prepared, values, r, s)
                    .await
                    .map_err(WebError::prove)?;
                (out.proof, out.public_signals, out.timings.verify * 1e3)
            }
            None => self.prove_cpu(&values, r, s)?,
        };
        let prove_ms = ms(t_prove) - verify_ms;
        Ok(CircomProved {
            proof: proof_value(&proof)?,
            public_signals: public_signals.iter().map(ToString::to_string).collect(),
            backend: self.backend(),
            times: CircomTimes {
                witness_ms,
                prove_ms,
                verify_ms,
                total_ms: ms(t),
            },
        })
    }

    /// The CPU prover's proof, public signals and self-check time (ms): a proof that does not
    /// verify against the key is refused as the GPU path refuses it.
    fn prove_cpu(
        &self,
        values: &[Fr],
        r: Fr,
        s: Fr,
    ) -> Result<(ark_groth16::Proof<Bn254>, Vec<Fr>, f64), WebError> {
        let proof =
            zkgpu_circom::reference_proof(&self.key, values, r, s).map_err(WebError::prove)?;
        let public = values[1..=self.key.num_public].to_vec();
        let t = Instant::now();
        let ok = zkgpu_circom::verify(&self.key.proving_key.vk, &proof, &public)
            .map_err(|e| WebError::new("INTERNAL", e))?;
        if !ok {
            return Err(WebError::prove(zkgpu_circom::CircomError::NotSatisfied));
        }
        Ok((proof, public, ms(t)))
    }

    /// The CPU prover's proof (ark-groth16 with circom's reduction) of the same witness and
    /// seed: what [`CircomProver::prove`]'s proof must equal.
    pub fn reference(&self, wtns: &[u8], seed: &[u8]) -> Result<serde_json::Value, WebError> {
        let values = zkgpu_circom::read_wtns(wtns).map_err(WebError::witness)?;
        let (r, s) = seed_randomness(seed)?;
        let proof =
            zkgpu_circom::reference_proof(&self.key, &values, r, s).map_err(WebError::prove)?;
        proof_value(&proof)
    }

    /// Whether a snarkjs proof (its JSON) verifies for the public signals (a JSON array of
    /// decimal strings) against the key's verifying key.
    pub fn verify(&self, public_signals: &str, proof: &str) -> Result<bool, WebError> {
        let bad = |e: zkgpu_circom::CircomError| WebError::new("INVALID_INPUT", e);
        let proof = zkgpu_circom::read_proof_json(proof).map_err(bad)?;
        let public = zkgpu_circom::read_public_json(public_signals).map_err(bad)?;
        zkgpu_circom::verify(&self.key.proving_key.vk, &proof, &public).map_err(bad)
    }
}
