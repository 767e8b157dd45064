//! Ids: jobs' and claims' are 128 random bits, keys' the 256-bit hash of their `.zkey`, all
//! lowercase hex. An id from a request is checked to be exactly that before it reaches a
//! query or a path, so none can name a file outside the data directory.

use crate::error::{Result, ServiceError};

/// 32 hex digits of the operating system's randomness.
pub(crate) fn random_id() -> String {
    let mut b = [0u8; 16];
    // The operating system's generator does not fail on the platforms the service runs on;
    // were it to, a time-derived id still keeps ids unique.
    if getrandom::fill(&mut b).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        b = t.to_le_bytes();
    }
    hex(&b)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn check(id: &str, len: usize, what: &str) -> Result<()> {
    let fine = id.len() == len && id.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
    if fine {
        Ok(())
    } else {
        Err(ServiceError::bad_request(format!(
            "{what} id {:?} is not {len} lowercase hex digits",
            id.chars().take(80).collect::<String>()
        )))
    }
}

/// A key id: 64 hex digits.
pub fn check_key_id(id: &str) -> Result<()> {
    check(id, 64, "key")
}

/// A job id: 32 hex digits.
pub fn check_job_id(id: &str) -> Result<()> {
    check(id, 32, "job")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked() {
        let j = random_id();
        assert_eq!(j.len(), 32);
        assert!(check_job_id(&j).is_ok());
        assert_ne!(j, random_id());
        for bad in [
            "",
            "../../etc/passwd",
            &j.to_uppercase(),
            &format!("{j}0"),
            "%2e%2e",
        ] {
            assert!(check_job_id(bad).is_err(), "{bad}");
        }
        assert!(check_key_id(&"ab".repeat(32)).is_ok());
        assert!(check_key_id(&format!("../{}", "a".repeat(61))).is_err());
    }
}
