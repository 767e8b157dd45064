//! Bearer tokens: from a file (one per line) or the environment (comma-separated), compared
//! in constant time (their hashes, so not even the length leaks).

use std::path::Path;

use crate::error::{ErrorCode, Result, ServiceError};

/// The accepted tokens; none means the API accepts every request, and then it must listen
/// on loopback only ([`crate::ServeConfig`] checks).
#[derive(Clone, Default)]
pub struct Tokens {
    hashes: Vec<[u8; 32]>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tokens({} configured)", self.hashes.len())
    }
}

fn digest(token: &[u8]) -> [u8; 32] {
    *blake3::Hasher::new_derive_key("zkgpu 2026 service bearer token")
        .update(token)
        .finalize()
        .as_bytes()
}

impl Tokens {
    /// The tokens listed (blank entries ignored).
    pub fn new<'a>(tokens: impl IntoIterator<Item = &'a str>) -> Self {
        Self {
            hashes: tokens
                .into_iter()
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(|t| digest(t.as_bytes()))
                .collect(),
        }
    }

    /// The tokens of a file, one per line (`#` starts a comment line).
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ServiceError::bad_request(format!("tokens file {}: {e}", path.display()))
        })?;
        let t = Self::new(text.lines().filter(|l| !l.trim_start().starts_with('#')));
        if t.is_empty() {
            return Err(ServiceError::bad_request(format!(
                "tokens file {} lists no token",
                path.display()
            )));
        }
        Ok(t)
    }

    /// Whether no token is configured.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Whether an `Authorization` header's value carries an accepted token. Every
    /// configured token is compared, each in constant time.
    pub fn accepts(&self, header: Option<&str>) -> bool {
        if self.hashes.is_empty() {
            return true;
        }
        let Some(token) = header.and_then(|h| h.strip_prefix("Bearer ")) else {
            return false;
        };
        let d = digest(token.trim().as_bytes());
        let mut any = 0u8;
        for h in &self.hashes {
            let diff = h.iter().zip(&d).fold(0u8, |acc, (a, b)| acc | (a ^ b));
            any |= u8::from(diff == 0);
        }
        any == 1
    }

    /// The refusal of a request without an accepted token.
    pub fn refusal() -> ServiceError {
        ServiceError::new(
            ErrorCode::Unauthorized,
            "a bearer token is needed: Authorization: Bearer <token>",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_checked() {
        let t = Tokens::new(["alpha", " beta ", ""]);
        assert!(t.accepts(Some("Bearer alpha")));
        assert!(t.accepts(Some("Bearer beta")));
        for bad in [
            None,
            Some("alpha"),
            Some("Bearer alph"),
            Some("Bearer "),
            Some("Basic alpha"),
        ] {
            assert!(!t.accepts(bad), "{bad:?}");
        }
        assert!(Tokens::default().accepts(None));
    }
}
