//! The page's proving API over bytes and JSON, what `web/zkgpu.js` exposes to JavaScript as
//! `prove(keyBytes, inputs)`: a proving key as ark-serialize bytes (compressed, as
//! `ProvingKey::serialize_compressed` writes it), the witness of Poseidon Merkle paths
//! (`zkgpu-circuits`) as JSON, and the proof back as ark-serialize bytes with its public
//! inputs and timings. Plain Rust over a [`GpuContext`]: the native tests run it on lavapipe,
//! the page on the browser's WebGPU.
//!
//! Field elements travel as canonical decimal strings (snarkjs' convention): a value at or
//! above the field's modulus, a sign, leading zeros or other characters are refused, never
//! reduced.

use std::str::FromStr;

use ark_bls12_381::{Bls12_381, Fr};
use ark_ff::UniformRand;
use ark_groth16::{Groth16, Proof, ProvingKey};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use web_time::Instant;
use zkgpu_circuits::{MerklePath, MerklePaths, poseidon_config};
use zkgpu_groth16::{GpuProver, PreparedProvingKey, ProveError, ProveRequest};

use crate::error::WebError;
use zkgpu_runtime::GpuContext;

use crate::ms;

/// The witness of `paths` Merkle openings: per path its leaf (4 elements), its siblings from
/// the leaf up, and whether the running node is the right child at each level. The roots
/// (the public inputs) are computed from it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MerkleInputs {
    /// One entry per opening.
    pub paths: Vec<PathInputs>,
}

/// One opening of [`MerkleInputs`], field elements as decimal strings.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathInputs {
    /// The leaf's elements.
    pub leaf: Vec<String>,
    /// The siblings, leaf level first.
    pub siblings: Vec<String>,
    /// `true` where the running node is the right child.
    pub is_right: Vec<bool>,
}

/// Where the time of one [`Prover::prove`] went, milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProveTimes {
    /// Reading the inputs' JSON into the circuit.
    pub inputs_ms: f64,
    /// Constraint synthesis (with the matrices on a key's first proof, else the witness).
    pub synthesis_ms: f64,
    /// The witness map and the five MSMs on the GPU.
    pub gpu_ms: f64,
    /// The self-check: the proof verified against the key's verifying key.
    pub verify_ms: f64,
    /// The whole call.
    pub total_ms: f64,
}

/// A proof made by [`Prover::prove`].
#[derive(Clone, Debug, PartialEq)]
pub struct Proved {
    /// The proof, ark-serialize compressed (192 bytes for BLS12-381).
    pub proof: Vec<u8>,
    /// The public inputs (the roots), decimal.
    pub public_inputs: Vec<String>,
    /// Where the time went.
    pub times: ProveTimes,
}

fn field(what: &str, s: &str) -> Result<Fr, String> {
    let bad = || format!("{what}: {s:?} is not a canonical decimal BLS12-381 Fr element");
    let x = Fr::from_str(s).map_err(|_| bad())?;
    // `from_str` reduces modulo r and tolerates some spellings; only the canonical one is
    // taken, so nothing is silently changed.
    if x.to_string() != s {
        return Err(bad());
    }
    Ok(x)
}

impl MerkleInputs {
    /// Parses JSON such as `{"paths":[{"leaf":["1","2","3","4"],"siblings":["5"],"is_right":[true]}]}`.
    pub fn from_json(json: &str) -> Result<Self, String> {
        serde_json::from_str(json).map_err(|e| format!("inputs: {e}"))
    }

    /// The inputs as JSON.
    pub fn to_json(&self) -> String {
        // Strings, booleans and arrays only: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Random inputs: `paths` openings of `depth` levels from `seed`.
    pub fn random(paths: usize, depth: usize, seed: u64) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let circuit = MerklePaths::<Fr>::random(paths, depth, &mut rng);
        Self::of(&circuit)
    }

    /// The inputs of `circuit`.
    pub fn of(circuit: &MerklePaths<Fr>) -> Self {
        let dec = |v: &[Fr]| v.iter().map(Fr::to_string).collect();
        Self {
            paths: circuit
                .paths
                .iter()
                .map(|p| PathInputs {
                    leaf: dec(&p.leaf),
                    siblings: dec(&p.siblings),
                    is_right: p.is_right.clone(),
                })
                .collect(),
        }
    }

    /// The circuit these inputs open: every path of the same depth, leaves of 4 elements.
    pub fn circuit(&self) -> Result<MerklePaths<Fr>, String> {
        let depth = self.paths.first().ok_or("inputs: no paths")?.siblings.len();
        let mut paths = Vec::with_capacity(self.paths.len());
        for (i, p) in self.paths.iter().enumerate() {
            if p.leaf.len() != 4 || p.siblings.len() != depth || p.is_right.len() != depth {
                return Err(format!(
                    "inputs: path {i} has {} leaf elements, {} siblings and {} directions \
                     (want 4, {depth} and {depth}, as path 0)",
                    p.leaf.len(),
                    p.siblings.len(),
                    p.is_right.len()
                ));
            }
            let parse = |what: &str, v: &[String]| -> Result<Vec<Fr>, String> {
                v.iter()
                    .map(|s| field(&format!("path {i}'s {what}"), s))
                    .collect()
            };
            paths.push(MerklePath {
                leaf: parse("leaf", &p.leaf)?,
                siblings: parse("sibling", &p.siblings)?,
                is_right: p.is_right.clone(),
            });
        }
        Ok(MerklePaths {
            config: poseidon_config(),
            paths,
        })
    }
}

/// Reads a proving key (ark-serialize, compressed, points checked).
pub fn read_key(key: &[u8]) -> Result<ProvingKey<Bls12_381>, String> {
    ProvingKey::deserialize_compressed(key).map_err(|e| format!("proving key: {e}"))
}

/// A proving key for `paths` Merkle openings of `depth` levels, from `seed`, as bytes (what
/// `cargo run -p zkgpu-web --example merkle_key` writes for the page's server).
pub fn merkle_key(paths: usize, depth: usize, seed: u64) -> Result<Vec<u8>, String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let circuit = MerklePaths::<Fr>::random(paths, depth, &mut rng);
    let pk = Groth16::<Bls12_381>::generate_random_parameters_with_reduction(circuit, &mut rng)
        .map_err(|e| format!("key generation: {e}"))?;
    let mut bytes = Vec::with_capacity(pk.compressed_size());
    pk.serialize_compressed(&mut bytes)
        .map_err(|e| format!("key: {e}"))?;
    Ok(bytes)
}

/// `r` and `s` drawn from a 32-byte seed (the page passes 32 bytes from
/// `crypto.getRandomValues` unless the caller fixes them).
pub(crate) fn randomness<F: UniformRand>(seed: &[u8]) -> Result<(F, F), String> {
    let seed: [u8; 32] = seed
        .try_into()
        .map_err(|_| format!("the randomness seed has {} bytes, not 32", seed.len()))?;
    let mut rng = StdRng::from_seed(seed);
    Ok((F::rand(&mut rng), F::rand(&mut rng)))
}

fn proof_bytes(proof: &Proof<Bls12_381>) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(proof.compressed_size());
    // Writing into a Vec cannot fail.
    let _ = proof.serialize_compressed(&mut bytes);
    bytes
}

/// A proving key read and prepared on one GPU context, proving again and again.
pub struct Prover {
    pk: ProvingKey<Bls12_381>,
    gpu: GpuProver<Bls12_381>,
    prepared: PreparedProvingKey<Bls12_381>,
    /// Reading the key's bytes, milliseconds.
    pub read_ms: f64,
    /// Uploading its bases to the GPU, milliseconds.
    pub prepare_ms: f64,
}

impl std::fmt::Debug for Prover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prover")
            .field("domain_size", &self.domain_size())
            .field("read_ms", &self.read_ms)
            .field("prepare_ms", &self.prepare_ms)
            .finish_non_exhaustive()
    }
}

impl Prover {
    /// Reads `key` and uploads its bases (no window multiples: computing them costs seconds
    /// of GPU work on a slow adapter). The circuit's matrices come from the first proof.
    pub async fn load(ctx: &GpuContext, key: &[u8]) -> Result<Self, WebError> {
        let t = Instant::now();
        let pk = read_key(key).map_err(|e| WebError::new("INVALID_KEY", e))?;
        let read_ms = ms(t);
        let t = Instant::now();
        let gpu = GpuProver::<Bls12_381>::new(ctx)
            .map_err(|e| WebError::new("GPU", e))?
            .with_folding(false);
        let prepared = gpu
            .prepare_async(&pk)
            .await
            .map_err(|e| WebError::new("GPU", e))?;
        Ok(Self {
            pk,
            gpu,
            prepared,
            read_ms,
            prepare_ms: ms(t),
        })
    }

    /// The domain size of the key's circuit.
    pub fn domain_size(&self) -> usize {
        self.prepared.domain_size()
    }

    /// Proves the circuit of `inputs` (JSON, [`MerkleInputs`]) with `r` and `s` from `seed`
    /// (32 bytes). The proof is verified before it is returned; inputs of another shape than
    /// the key's circuit are an error.
    pub async fn prove(&self, inputs: &str, seed: &[u8]) -> Result<Proved, WebError> {
        let t = Instant::now();
        let bad = |e: String| WebError::new("INVALID_INPUT", e);
        let circuit = MerkleInputs::from_json(inputs)
            .and_then(|i| i.circuit())
            .map_err(bad)?;
        let public = circuit.public_inputs();
        let (r, s) = randomness::<Fr>(seed).map_err(bad)?;
        let inputs_ms = ms(t);
        let (proof, timings) = self
            .gpu
            .run_async(ProveRequest::circuit(&self.prepared, circuit, (r, s)))
            .await
            .map_err(prove_error)?;
        Ok(Proved {
            proof: proof_bytes(&proof),
            public_inputs: public.iter().map(Fr::to_string).collect(),
            times: ProveTimes {
                inputs_ms,
                synthesis_ms: timings.synthesis * 1e3,
                gpu_ms: timings.prove * 1e3,
                verify_ms: timings.verify * 1e3,
                total_ms: ms(t),
            },
        })
    }

    /// ark-groth16's proof of the same inputs with the same `r` and `s`, on the CPU, as bytes.
    pub fn reference(&self, inputs: &str, seed: &[u8]) -> Result<Vec<u8>, WebError> {
        let bad = |e: String| WebError::new("INVALID_INPUT", e);
        let circuit = MerkleInputs::from_json(inputs)
            .and_then(|i| i.circuit())
            .map_err(bad)?;
        let (r, s) = randomness::<Fr>(seed).map_err(bad)?;
        let proof = Groth16::<Bls12_381>::create_proof_with_reduction(circuit, &self.pk, r, s)
            .map_err(|e| WebError::new("INTERNAL", format!("ark-groth16: {e}")))?;
        Ok(proof_bytes(&proof))
    }

    /// Whether `proof` (bytes) verifies for `public_inputs` (decimal) with ark-groth16 against
    /// the key's verifying key; malformed bytes or inputs are an error.
    pub fn verify(&self, public_inputs: &[String], proof: &[u8]) -> Result<bool, WebError> {
        let bad = |e: String| WebError::new("INVALID_INPUT", e);
        let proof = Proof::<Bls12_381>::deserialize_compressed(proof)
            .map_err(|e| bad(format!("proof: {e}")))?;
        let public = public_inputs
            .iter()
            .enumerate()
            .map(|(i, s)| field(&format!("public input {i}"), s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(bad)?;
        Groth16::<Bls12_381>::verify_proof(self.prepared.verifying_key(), &proof, &public)
            .map_err(|e| WebError::new("INTERNAL", e))
    }
}

/// A failed proof, classified: an unsatisfied circuit, inputs of another circuit than the
/// key's, the GPU, or anything else.
fn prove_error(e: ProveError) -> WebError {
    let code = match &e {
        ProveError::Unsatisfied { .. } | ProveError::ProofRejected => "NOT_SATISFIED",
        ProveError::KeyMismatch { .. } => "INVALID_INPUT",
        ProveError::Gpu(_) | ProveError::Msm(_) => "GPU",
        _ => "INTERNAL",
    };
    WebError::new(code, e)
}
