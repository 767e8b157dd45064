//! The GPU backend for arkworks Groth16.
//!
//! - [`GpuProver`] proves any `ConstraintSynthesizer` over BLS12-381, BLS12-377 or BN254 with
//!   the witness map and all five MSMs on the GPU, against a [`PreparedProvingKey`] whose bases
//!   were uploaded once and which holds the circuit's R1CS matrices once known, so that
//!   proofs synthesize the witness alone. Its proofs equal ark-groth16's for the same `r`
//!   and `s`; bad input (an unsatisfied circuit, a key of another circuit) is a typed
//!   [`ProveError`], never a wrong proof.
//! - [`GpuProver::prove_stream`] proves many circuits against one key, synthesizing the next
//!   ones on CPU threads while the GPU proves the current one.
//! - [`GpuProver::prepare_cached`] keeps prepared keys (bases in GPU form, window multiples,
//!   matrices) in files keyed by a hash of the proving key ([`key_hash`]), so that a process
//!   that has seen a key before is ready at disk and transfer speed.
//! - [`GpuReduction`] is an `ark_groth16::r1cs_to_qap::R1CSToQAP`: use it as
//!   `Groth16::<E, GpuReduction>` and arkworks' own prover runs its witness map (three inverse
//!   NTTs, three coset NTTs, the quotient and one inverse coset NTT) on the GPU, with data
//!   resident there between steps. Its output equals `LibsnarkReduction`'s bit for bit.
//!
//! # Example
//!
//! ```no_run
//! use ark_bls12_381::{Bls12_381, Fr};
//! use ark_groth16::Groth16;
//! use ark_std::rand::{SeedableRng, rngs::StdRng};
//! use zkgpu_circuits::MerklePaths;
//! use zkgpu_groth16::GpuProver;
//! use zkgpu_runtime::GpuContext;
//!
//! let mut rng = StdRng::seed_from_u64(1);
//! let circuit = MerklePaths::<Fr>::random(1, 2, &mut rng);
//! let pk = Groth16::<Bls12_381>::generate_random_parameters_with_reduction(circuit.clone(), &mut rng)?;
//! let ctx = GpuContext::from_env_blocking()?;
//! let prover = GpuProver::<Bls12_381>::new(&ctx)?;
//! let prepared = prover.prepare(&pk)?; // once per key
//! // r and s must be secret: a generator seeded from the operating system.
//! let mut seed = [0u8; 32];
//! getrandom::fill(&mut seed).map_err(|e| e.to_string())?;
//! let mut rng = StdRng::from_seed(seed);
//! let proof = prover.prove(&prepared, circuit, &mut rng)?;
//! # let _ = proof;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod assemble;
#[cfg(not(target_arch = "wasm32"))]
mod cache;
mod error;
mod key;
mod matrices;
mod prepare;
mod prover;
mod qap;
mod reduction;
mod request;
#[cfg(not(target_arch = "wasm32"))]
mod stream;
mod synth;

#[cfg(not(target_arch = "wasm32"))]
pub use cache::{CacheEntry, CacheOutcome, cache_entries, key_hash, prune_cache};
#[cfg(not(target_arch = "wasm32"))]
pub use error::CacheError;
pub use error::ProveError;
pub use key::{GpuPairing, KeyLayout, PreparedProvingKey};
pub use matrices::{ConstraintRows, MatrixError, Qap, R1csMatrices};
pub use prover::{GpuProver, ProofTimings};
#[cfg(not(target_arch = "wasm32"))]
pub use qap::gpu_context;
pub use qap::{
    GpuReduction, WitnessMapError, WitnessMapTimings, gpu_witness_maps, witness_map_gpu,
    witness_map_gpu_timed, witness_map_rows_timed,
};
pub use reduction::circom_domain;
pub use request::{NoCircuit, ProveRequest};
#[cfg(not(target_arch = "wasm32"))]
pub use stream::{Lane, ProofStream, prove_stream_across};
pub use synth::{Synthesized, Witness, synthesize, synthesize_matrices, synthesize_witness};
pub use zkgpu_shaders::{Pairing, for_each_pairing};
