//! circom in the page: a snarkjs `.zkey` uploaded once, `.wtns` witnesses proved on the
//! page's GPU, proofs in snarkjs' shape (`{ proof, publicSignals }`), as `groth16Prove` of
//! `web/zkgpu.js` returns them. Plain Rust, tested natively (`web/tests/circom.rs`).

use ark_bn254::{Bn254, Fr};
use web_time::Instant;
use zkgpu_circom::CircomKey;
use zkgpu_groth16::{GpuProver, PreparedProvingKey};
use zkgpu_runtime::GpuContext;

use crate::api::randomness;
use crate::ms;

/// Where the time of one [`CircomProver::prove`] went, milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CircomTimes {
    /// Reading the `.wtns`.
    pub witness_ms: f64,
    /// The witness map and the five MSMs on the GPU.
    pub gpu_ms: f64,
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
    /// Where the time went.
    pub times: CircomTimes,
}

/// A snarkjs key read and uploaded to one GPU context, proving witness after witness.
pub struct CircomProver {
    key: CircomKey,
    gpu: GpuProver<Bn254>,
    prepared: PreparedProvingKey<Bn254>,
    /// Reading the key's bytes, milliseconds.
    pub read_ms: f64,
    /// Uploading its bases and matrices, milliseconds.
    pub prepare_ms: f64,
}

impl std::fmt::Debug for CircomProver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CircomProver")
            .field("constraints", &self.key.num_constraints())
            .field("read_ms", &self.read_ms)
            .field("prepare_ms", &self.prepare_ms)
            .finish_non_exhaustive()
    }
}

fn proof_value(proof: &ark_groth16::Proof<Bn254>) -> Result<serde_json::Value, String> {
    serde_json::from_str(&zkgpu_circom::proof_json(proof)).map_err(|e| e.to_string())
}

impl CircomProver {
    /// Reads a snarkjs `.zkey` and uploads it (without window multiples: they cost seconds
    /// of GPU work on a slow adapter).
    pub async fn load(ctx: &GpuContext, zkey: &[u8]) -> Result<Self, String> {
        let t = Instant::now();
        let key = zkgpu_circom::read_zkey(zkey).map_err(|e| e.to_string())?;
        let read_ms = ms(t);
        let t = Instant::now();
        let gpu = GpuProver::<Bn254>::new(ctx)
            .map_err(|e| e.to_string())?
            .with_folding(false);
        let prepared = key.prepare_async(&gpu).await.map_err(|e| e.to_string())?;
        Ok(Self {
            key,
            gpu,
            prepared,
            read_ms,
            prepare_ms: ms(t),
        })
    }

    /// Constraints of the key's circuit.
    pub fn num_constraints(&self) -> usize {
        self.key.num_constraints()
    }

    /// Proves the `.wtns` with `r` and `s` from `seed` (32 bytes); the proof is checked
    /// against the key before it is returned.
    pub async fn prove(&self, wtns: &[u8], seed: &[u8]) -> Result<CircomProved, String> {
        let t = Instant::now();
        let values = zkgpu_circom::read_wtns(wtns).map_err(|e| e.to_string())?;
        let (r, s) = randomness::<Fr>(seed)?;
        let witness_ms = ms(t);
        let out = zkgpu_circom::prove_async(&self.gpu, &self.prepared, values, r, s)
            .await
            .map_err(|e| e.to_string())?;
        Ok(CircomProved {
            proof: proof_value(&out.proof)?,
            public_signals: out.public_signals.iter().map(ToString::to_string).collect(),
            times: CircomTimes {
                witness_ms,
                gpu_ms: out.timings.prove * 1e3,
                verify_ms: out.timings.verify * 1e3,
                total_ms: ms(t),
            },
        })
    }

    /// The CPU prover's proof (ark-groth16 with circom's reduction) of the same witness and
    /// seed: what [`CircomProver::prove`]'s proof must equal.
    pub fn reference(&self, wtns: &[u8], seed: &[u8]) -> Result<serde_json::Value, String> {
        let values = zkgpu_circom::read_wtns(wtns).map_err(|e| e.to_string())?;
        let (r, s) = randomness::<Fr>(seed)?;
        let proof =
            zkgpu_circom::reference_proof(&self.key, &values, r, s).map_err(|e| e.to_string())?;
        proof_value(&proof)
    }

    /// Whether a snarkjs proof (its JSON) verifies for the public signals (a JSON array of
    /// decimal strings) against the key's verifying key.
    pub fn verify(&self, public_signals: &str, proof: &str) -> Result<bool, String> {
        let proof = zkgpu_circom::read_proof_json(proof).map_err(|e| e.to_string())?;
        let public = zkgpu_circom::read_public_json(public_signals).map_err(|e| e.to_string())?;
        zkgpu_circom::verify(&self.key.proving_key.vk, &proof, &public).map_err(|e| e.to_string())
    }
}
