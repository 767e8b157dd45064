//! The GPU backend for arkworks Groth16.
//!
//! - [`GpuProver`] proves any `ConstraintSynthesizer` over BLS12-381 or BLS12-377 with the
//!   witness map and all five MSMs (A, B in G1, B in G2, H, L) on the GPU, against a
//!   [`PreparedProvingKey`] whose bases were uploaded once. Its proofs equal ark-groth16's for
//!   the same `r` and `s`; bad input (an unsatisfied circuit, a key of another circuit) is a
//!   typed [`ProveError`], never a wrong proof.
//! - [`GpuReduction`] is an `ark_groth16::r1cs_to_qap::R1CSToQAP`: use it as
//!   `Groth16::<E, GpuReduction>` and arkworks' own prover runs its witness map (three inverse
//!   NTTs, three coset NTTs, the quotient and one inverse coset NTT) on the GPU, with data
//!   resident there between steps. Its output equals `LibsnarkReduction`'s bit for bit.

#[cfg(not(target_arch = "wasm32"))]
mod prover;
mod qap;
mod synth;

#[cfg(not(target_arch = "wasm32"))]
pub use prover::{GpuPairing, GpuProver, PreparedProvingKey, ProofTimings, ProveError};
pub use qap::{
    GpuReduction, WitnessMapError, WitnessMapTimings, gpu_context, gpu_witness_maps,
    witness_map_gpu, witness_map_gpu_timed,
};
pub use synth::{Synthesized, synthesize};
