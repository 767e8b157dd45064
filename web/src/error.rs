//! The errors the browser API rejects with: a message and a stable `code` a page can branch
//! on (`web/zkgpu.js` turns them into `Error` objects with `code` set; docs/web.md lists the
//! codes).

use zkgpu_circom::CircomError;

/// An error of the browser API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebError {
    /// Stable code: one of [`WebError::CODES`].
    pub code: &'static str,
    /// What went wrong, for people.
    pub message: String,
}

impl WebError {
    /// Every code the API uses.
    pub const CODES: &'static [&'static str] = &[
        "NO_WEBGPU",
        "GPU",
        "INVALID_KEY",
        "INVALID_WITNESS",
        "WITNESS_MISMATCH",
        "NOT_SATISFIED",
        "INVALID_INPUT",
        "INTERNAL",
    ];

    /// An error with `code` (one of [`WebError::CODES`]).
    pub fn new(code: &'static str, message: impl std::fmt::Display) -> Self {
        debug_assert!(Self::CODES.contains(&code), "unlisted code {code}");
        Self {
            code,
            message: message.to_string(),
        }
    }

    /// A `.zkey` that could not be read, classified.
    pub fn key(e: CircomError) -> Self {
        Self::new("INVALID_KEY", e)
    }

    /// A `.wtns` that could not be read, classified.
    pub fn witness(e: CircomError) -> Self {
        Self::new("INVALID_WITNESS", e)
    }

    /// A proof that failed, classified by its cause.
    pub fn prove(e: CircomError) -> Self {
        use zkgpu_groth16::ProveError as P;
        let code = match &e {
            CircomError::WitnessMismatch(_) => "WITNESS_MISMATCH",
            CircomError::NotSatisfied | CircomError::Prove(P::Unsatisfied { .. }) => {
                "NOT_SATISFIED"
            }
            CircomError::Prove(P::Gpu(_) | P::Msm(_)) => "GPU",
            _ => "INTERNAL",
        };
        Self::new(code, e)
    }
}

impl std::fmt::Display for WebError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for WebError {}

impl From<WebError> for String {
    fn from(e: WebError) -> Self {
        e.to_string()
    }
}
