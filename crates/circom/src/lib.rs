//! circom and snarkjs on the GPU: prove a snarkjs `.zkey` and a `.wtns` witness with the
//! GPU prover, as rapidsnark or `snarkjs groth16 prove` would.
//!
//! - BN254 (snarkjs' `bn128`) and BLS12-381 (`bls12381`), both [`CircomCurve`]s;
//!   [`zkey_curve`], [`wtns_curve`] and [`r1cs_curve`] tell which [`Curve`] a file is over.
//! - [`read_zkey`] reads a Groth16 `.zkey` into a [`CircomKey`] (the proving key and
//!   the A and B matrices); [`read_wtns`] a witness. Both check every length, the primes and
//!   every point, and build for wasm32 (no ark-circom, which pulls wasmer).
//!   [`read_zkey_file`] reads a `.zkey` file one section at a time (the file never in
//!   memory whole); [`zkey_file_hash`] and [`prepare_cached_file`] hash and prepare it the
//!   same way, through the prepared-key cache.
//! - [`CircomKey::prepare`] uploads the key for a `zkgpu_groth16::GpuProver` with
//!   circom's reduction ([`zkgpu_groth16::Qap::Circom`]); [`prove`] / [`prove_async`] prove.
//!   The proofs equal [`reference_proof`]'s (ark-groth16 with [`CircomReduction`], which is
//!   ark-circom's prover) for the same `r` and `s`.
//! - [`read_r1cs`] and [`setup`] make a key for a circom `.r1cs` with ark-groth16's generator
//!   and circom's reduction (for circuits too large for snarkjs' setup); [`write_zkey`]
//!   writes it as a `.zkey` that snarkjs proves with too.
//! - [`proof_json`] and [`public_json`] write snarkjs' `proof.json` and `public.json`;
//!   [`read_verifying_key_json`] reads `verification_key.json` for [`verify`].
//!
//! # Example
//!
//! ```no_run
//! use ark_bn254::Bn254;
//! use zkgpu_groth16::GpuProver;
//! use zkgpu_runtime::GpuContext;
//!
//! let ctx = GpuContext::from_env_blocking()?;
//! let prover = GpuProver::<Bn254>::new(&ctx)?;
//! let key = zkgpu_circom::read_zkey_file::<Bn254>(std::path::Path::new("circuit.zkey"))?;
//! let prepared = key.prepare(&prover)?; // once per key
//! let values = zkgpu_circom::read_wtns(&std::fs::read("witness.wtns")?)?;
//! // r and s must be secret: a generator seeded from the operating system.
//! let mut seed = [0u8; 32];
//! getrandom::fill(&mut seed).map_err(|e| e.to_string())?;
//! let mut rng = <ark_std::rand::rngs::StdRng as ark_std::rand::SeedableRng>::from_seed(seed);
//! let out = zkgpu_circom::prove(&prover, &prepared, values, &mut rng)?;
//! std::fs::write("proof.json", zkgpu_circom::proof_json(&out.proof))?;
//! std::fs::write("public.json", zkgpu_circom::public_json(&out.public_signals))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod binfile;
mod curve;
mod error;
mod field;
mod json;
mod prove;
mod r1cs;
mod reduction;
mod wtns;
mod zkey;
mod zkey_write;

pub use curve::{CircomCurve, Curve, r1cs_curve, wtns_curve, zkey_curve, zkey_file_curve};
pub use error::CircomError;
pub use json::{
    proof_json, public_json, read_proof_json, read_public_json, read_verifying_key_json,
    read_witness_json,
};
pub use prove::{
    CircomProof, check_witness, prove_async, prove_with_randomness_async, reference_proof, verify,
};
#[cfg(not(target_arch = "wasm32"))]
pub use prove::{
    prepare_cached, prepare_cached_file, prove, prove_with_randomness, zkey_file_hash, zkey_hash,
};
pub use r1cs::{CircomR1cs, read_r1cs, setup};
pub use reduction::CircomReduction;
pub use wtns::{read_wtns, write_wtns};
pub use zkey::{CircomKey, read_zkey, read_zkey_file};
pub use zkey_write::write_zkey;
