//! [`CircomError`]: what a bad `.zkey`, `.wtns` or JSON file gives, never a panic.

use zkgpu_groth16::ProveError;

/// Errors of reading circom's and snarkjs' files and proving with them.
#[derive(Debug, thiserror::Error)]
pub enum CircomError {
    /// The bytes are not a well-formed file of this kind: another magic, a truncated file, a
    /// section missing or of the wrong length, an index out of range.
    #[error("{file}: {what}")]
    Format {
        /// Which kind of file (`.zkey`, `.wtns`).
        file: &'static str,
        /// What is wrong.
        what: String,
    },
    /// The file is well formed but not for this prover: another proof system, curve or field.
    #[error("{file}: {what}")]
    Unsupported {
        /// Which kind of file.
        file: &'static str,
        /// What it holds instead.
        what: String,
    },
    /// A point of the key is not on BN254 (the key is damaged).
    #[error(".zkey: point {index} of section {section} is not on the curve")]
    NotOnCurve {
        /// The zkey section (2 for the header's points).
        section: u32,
        /// The point's index in it.
        index: usize,
    },
    /// The witness is not one of this key's circuit: its length or its constant differ.
    #[error("the witness does not fit the key: {0}")]
    WitnessMismatch(String),
    /// A snarkjs JSON file (verification key, proof, public signals) could not be read.
    #[error("{file}: {what}")]
    Json {
        /// Which file.
        file: &'static str,
        /// What is wrong.
        what: String,
    },
    /// The proof failed its own check against the key's verifying key, so none is returned:
    /// the witness does not satisfy the circuit (a snarkjs key carries no C matrix, so this
    /// check is where an unsatisfied constraint shows), or the key's points are damaged.
    #[error(
        "the proof does not verify against the key: the witness does not satisfy the circuit's \
         constraints (or the key is damaged)"
    )]
    NotSatisfied,
    /// A file could not be read (it vanished, or the disk failed, while its sections were
    /// read one at a time).
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The GPU prover refused or failed.
    #[error(transparent)]
    Prove(ProveError),
}

impl From<ProveError> for CircomError {
    fn from(e: ProveError) -> Self {
        match e {
            ProveError::ProofRejected => Self::NotSatisfied,
            e => Self::Prove(e),
        }
    }
}

impl CircomError {
    /// Whether the GPU ran out of memory ([`ProveError::is_out_of_memory`]).
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, Self::Prove(e) if e.is_out_of_memory())
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_owned(),
            source,
        }
    }

    pub(crate) fn format(file: &'static str, what: impl Into<String>) -> Self {
        Self::Format {
            file,
            what: what.into(),
        }
    }
}
