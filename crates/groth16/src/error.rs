//! [`ProveError`]: what bad input and GPU failures give, never a panic or a wrong proof.

use ark_relations::gr1cs::SynthesisError;
use zkgpu_msm::MsmError;
use zkgpu_ntt::NttError;

#[cfg(not(target_arch = "wasm32"))]
use std::path::PathBuf;

use crate::matrices::MatrixError;
use crate::qap::WitnessMapError;

/// Errors of the GPU prover.
#[derive(Debug, thiserror::Error)]
pub enum ProveError {
    /// Synthesizing the circuit failed (the circuit's own error).
    #[error("constraint synthesis failed: {0}")]
    Synthesis(SynthesisError),
    /// The circuit's synthesis panicked (on a worker thread of a proving stream).
    #[error("constraint synthesis panicked: {0}")]
    SynthesisPanicked(String),
    /// The witness does not satisfy the circuit: constraint `index` of the key's matrices
    /// (those of the circuit the key's first proof was made for, or that
    /// `GpuProver::prepare_for` synthesized).
    #[error("the witness does not satisfy constraint {index}{}", name.as_ref().map(|n| format!(" ({n})")).unwrap_or_default())]
    Unsatisfied {
        /// Index of the first unsatisfied constraint.
        index: usize,
        /// Its name, where the constraint system records one (only when the proof's
        /// synthesis built the matrices).
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
    /// A proving stream across devices was given no devices, or keys on them that are not
    /// one proving key.
    #[error("proving stream across devices: {0}")]
    Lanes(String),
    /// The proving key's vectors are inconsistent with each other.
    #[error("malformed proving key: {0}")]
    MalformedKey(String),
    /// A witness synthesized alone was given for a key that does not hold its circuit's
    /// matrices yet (prove one circuit first, or prepare the key with
    /// `GpuProver::prepare_for`).
    #[error(
        "the key holds no circuit matrices for a witness-only proof: prove a circuit or prepare \
         the key with prepare_for first"
    )]
    NoMatrices,
    /// The circuit's matrices could not be stored in the compact form.
    #[error("R1CS matrices: {0}")]
    Matrices(#[from] MatrixError),
    /// The proof does not verify against the proving key's verifying key: the key (or the
    /// matrices it holds) belongs to another circuit of the same shape, or the device
    /// computed a wrong result. No proof is returned.
    #[error(
        "the proof does not verify against the proving key's verifying key: the key is not this circuit's"
    )]
    ProofRejected,
    /// A prepared-key cache file could not be used.
    #[cfg(not(target_arch = "wasm32"))]
    #[error("prepared-key cache: {0}")]
    Cache(#[from] CacheError),
    /// The GPU refused the work, e.g. a prepared key of another context
    /// (`GpuError::ForeignContext`).
    #[error(transparent)]
    Gpu(#[from] zkgpu_runtime::GpuError),
    /// An MSM failed on the GPU.
    #[error("MSM: {0}")]
    Msm(#[from] MsmError),
    /// The witness map failed on the GPU.
    #[error("witness map: {0}")]
    Ntt(#[from] NttError),
}

impl ProveError {
    /// Whether the GPU ran out of memory (directly, in an MSM or in the witness map): the
    /// same work may fit once other GPU memory (e.g. other prepared keys) is freed.
    pub fn is_out_of_memory(&self) -> bool {
        use zkgpu_runtime::GpuError::OutOfMemory;
        matches!(
            self,
            Self::Gpu(OutOfMemory { .. })
                | Self::Msm(MsmError::Gpu(OutOfMemory { .. }))
                | Self::Ntt(NttError::Gpu(OutOfMemory { .. }))
        )
    }
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

/// Why a prepared-key file could not be used. Never a wrong proof: a file is checked whole
/// (structure, digests, pairing, key) before any of it is trusted.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// The file is damaged: truncated, a digest that does not match, a structure that does
    /// not parse.
    #[error("{path} is corrupt: {what}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// The file is intact but not for this use: another format version, pairing or proving
    /// key, or a layout this device cannot hold.
    #[error("{path} does not fit: {what}")]
    Foreign {
        /// The file.
        path: PathBuf,
        /// Why.
        what: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use zkgpu_runtime::GpuError;

    #[test]
    fn out_of_memory_is_found_at_every_depth() {
        let oom = || GpuError::OutOfMemory {
            context: "test".into(),
        };
        assert!(ProveError::Gpu(oom()).is_out_of_memory());
        assert!(ProveError::Msm(MsmError::Gpu(oom())).is_out_of_memory());
        assert!(ProveError::Ntt(NttError::Gpu(oom())).is_out_of_memory());
        assert!(!ProveError::Gpu(GpuError::Device("lost".into())).is_out_of_memory());
        assert!(!ProveError::ProofRejected.is_out_of_memory());
    }
}
