//! Criterion benchmarks live in `benches/`; this library holds what they share.

/// The comma-separated values of environment variable `name` (or of `default` when it is
/// unset), trimmed, empty ones dropped.
pub fn env_list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}
