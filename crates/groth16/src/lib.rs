//! The GPU backend for arkworks Groth16.
//!
//! [`GpuReduction`] is an `ark_groth16::r1cs_to_qap::R1CSToQAP`: use it as
//! `Groth16::<E, GpuReduction>` and the prover's witness map (three inverse NTTs, three coset
//! NTTs, the quotient and one inverse coset NTT) runs on the GPU with data resident there
//! between steps. Its output equals `LibsnarkReduction`'s bit for bit, so proofs are the same
//! for the same randomness.

mod qap;

pub use qap::{GpuReduction, WitnessMapError, gpu_context, gpu_witness_maps, witness_map_gpu};
