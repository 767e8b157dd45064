//! The page's suite on the native adapter (lavapipe in CI): every row must agree with
//! arkworks, and the JSON the page parses must carry the rows.

#![allow(clippy::unwrap_used)]

use zkgpu_runtime::GpuContext;
use zkgpu_web::run_suite;

#[test]
fn page_suite_agrees_with_arkworks() {
    let ctx = GpuContext::from_env_blocking().unwrap_or_else(|e| panic!("{e}"));
    let report = pollster::block_on(run_suite(&ctx, 8, 10)).unwrap();
    assert_eq!(report.rows.len(), 4, "{report:?}");
    assert!(report.ok(), "{report:?}");
    assert_eq!(report.rows[0].n, 256);
    assert!(report.rows[1..].iter().all(|r| r.n == 1024));
    let json = report.to_json();
    assert!(json.starts_with(r#"{"adapter":"#), "{json}");
    assert!(json.contains(r#""ok":true,"rows":[{"what":"MSM, BLS12-381 G1","n":256"#));
    assert_eq!(json.matches(r#""ok":true}"#).count(), 4, "{json}");
    // Sizes beyond the page's are refused, not attempted.
    assert!(pollster::block_on(run_suite(&ctx, 30, 10)).is_err());
}
