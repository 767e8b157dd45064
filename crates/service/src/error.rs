//! [`ServiceError`]: every refusal and failure of the service, with a stable code that the
//! HTTP API returns as `{"error": {"code": ..., "message": ...}}` and the database records
//! on a failed job.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use zkgpu_circom::CircomError;

/// The stable codes (part of the API: clients match on them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// No bearer token, or not one of the configured ones (401).
    Unauthorized,
    /// The request is malformed: an id that is not one, a bad query, a wrong content type
    /// (400).
    BadRequest,
    /// The body is over the configured limit (413).
    TooLarge,
    /// No key of that id is registered (404).
    UnknownKey,
    /// No job of that id (404).
    UnknownJob,
    /// The `.zkey` is not a well-formed snarkjs Groth16 key (400).
    InvalidKey,
    /// The key is well formed but of a curve or protocol the service does not prove (400).
    UnsupportedKey,
    /// The witness is not a well-formed `.wtns` or JSON witness, or a value is not in the
    /// field (400).
    InvalidWitness,
    /// The witness has another number of signals than the key's circuit, or its constant is
    /// not one (400).
    WitnessMismatch,
    /// The job's witness is no longer kept (its file was removed, or the machine holding it
    /// restarted without it) (410; a failed job).
    WitnessLost,
    /// The witness does not satisfy the circuit: the proof failed its check (a failed job).
    NotSatisfied,
    /// The job has no proof yet (409).
    NotReady,
    /// The job failed or was cancelled, so it has no proof (409).
    NoProof,
    /// The GPU failed (a failed job, after the retries).
    Gpu,
    /// The job's worker stopped renewing its lease more times than the retries allow.
    LeaseExpired,
    /// The database failed or cannot be reached (503).
    Database,
    /// Anything else (500).
    Internal,
}

impl ErrorCode {
    /// Every code, for the metrics' labels and the docs.
    pub const ALL: [ErrorCode; 17] = [
        Self::Unauthorized,
        Self::BadRequest,
        Self::TooLarge,
        Self::UnknownKey,
        Self::UnknownJob,
        Self::InvalidKey,
        Self::UnsupportedKey,
        Self::InvalidWitness,
        Self::WitnessMismatch,
        Self::WitnessLost,
        Self::NotSatisfied,
        Self::NotReady,
        Self::NoProof,
        Self::Gpu,
        Self::LeaseExpired,
        Self::Database,
        Self::Internal,
    ];

    /// The code as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unauthorized => "unauthorized",
            Self::BadRequest => "bad_request",
            Self::TooLarge => "too_large",
            Self::UnknownKey => "unknown_key",
            Self::UnknownJob => "unknown_job",
            Self::InvalidKey => "invalid_key",
            Self::UnsupportedKey => "unsupported_key",
            Self::InvalidWitness => "invalid_witness",
            Self::WitnessMismatch => "witness_mismatch",
            Self::WitnessLost => "witness_lost",
            Self::NotSatisfied => "not_satisfied",
            Self::NotReady => "not_ready",
            Self::NoProof => "no_proof",
            Self::Gpu => "gpu",
            Self::LeaseExpired => "lease_expired",
            Self::Database => "database",
            Self::Internal => "internal",
        }
    }

    /// The code of a spelling ([`ErrorCode::as_str`]'s inverse).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The HTTP status the API answers with.
    pub fn status(self) -> StatusCode {
        match self {
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnknownKey | Self::UnknownJob => StatusCode::NOT_FOUND,
            Self::NotReady | Self::NoProof => StatusCode::CONFLICT,
            Self::WitnessLost => StatusCode::GONE,
            Self::Database => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal | Self::Gpu | Self::LeaseExpired => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::BAD_REQUEST,
        }
    }

    /// Whether a job that failed this way is failed at once: the same input fails the same
    /// way on any worker. The others (the GPU, the key not at hand) are retried.
    pub fn is_permanent(self) -> bool {
        !matches!(self, Self::Gpu | Self::Database | Self::Internal)
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error with its code and a message for people.
#[derive(Debug, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ServiceError {
    /// The stable code.
    pub code: ErrorCode,
    /// What went wrong.
    pub message: String,
}

impl ServiceError {
    /// An error of `code`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// A malformed request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, message)
    }

    /// The error of reading a key: malformed, or of another curve or protocol.
    pub fn of_key(e: CircomError) -> Self {
        let code = match e {
            CircomError::Unsupported { .. } => ErrorCode::UnsupportedKey,
            CircomError::Io { .. } => ErrorCode::Internal,
            _ => ErrorCode::InvalidKey,
        };
        Self::new(code, e.to_string())
    }

    /// The error of reading a witness.
    pub fn of_witness(e: CircomError) -> Self {
        let code = match e {
            CircomError::WitnessMismatch(_) => ErrorCode::WitnessMismatch,
            _ => ErrorCode::InvalidWitness,
        };
        Self::new(code, e.to_string())
    }

    /// The error of a proof: the witness, the key or the GPU.
    pub fn of_proof(e: CircomError) -> Self {
        let code = match e {
            CircomError::NotSatisfied => ErrorCode::NotSatisfied,
            CircomError::WitnessMismatch(_) => ErrorCode::WitnessMismatch,
            CircomError::Format { file: ".wtns", .. } | CircomError::Json { .. } => {
                ErrorCode::InvalidWitness
            }
            CircomError::Format { .. } | CircomError::NotOnCurve { .. } => ErrorCode::InvalidKey,
            CircomError::Unsupported { .. } => ErrorCode::UnsupportedKey,
            CircomError::Prove(_) => ErrorCode::Gpu,
            CircomError::Io { .. } => ErrorCode::Internal,
        };
        Self::new(code, e.to_string())
    }
}

impl From<sqlx::Error> for ServiceError {
    fn from(e: sqlx::Error) -> Self {
        Self::new(ErrorCode::Database, e.to_string())
    }
}

impl IntoResponse for ServiceError {
    fn into_response(self) -> Response {
        if self.code.status().is_server_error() {
            tracing::warn!(code = %self.code, "{}", self.message);
        }
        let body = serde_json::json!({
            "error": { "code": self.code.as_str(), "message": self.message }
        });
        (self.code.status(), axum::Json(body)).into_response()
    }
}

/// The service's results.
pub type Result<T, E = ServiceError> = std::result::Result<T, E>;
