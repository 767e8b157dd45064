//! The page's suite on the native adapter (lavapipe in CI): every row must agree with
//! arkworks, and the JSON the page parses must carry the rows.

#![allow(clippy::unwrap_used)]

use zkgpu_runtime::GpuContext;
use zkgpu_web::{Report, Row, Sizes, run_suite};

#[test]
fn page_suite_agrees_with_arkworks() {
    let ctx = GpuContext::from_env_blocking().unwrap_or_else(|e| panic!("{e}"));
    let sizes = Sizes {
        msm: 8,
        ntt: 10,
        prove: 10,
        depth: 2,
    };
    let report = pollster::block_on(run_suite(&ctx, sizes)).unwrap();
    assert_eq!(report.rows.len(), 5, "{report:?}");
    assert!(report.ok(), "{report:?}");
    assert_eq!(report.rows[0].n, 256);
    assert!(report.rows[1..4].iter().all(|r| r.n == 1024));
    assert!(
        report.rows[4].what.starts_with("Groth16 proof"),
        "{report:?}"
    );
    assert_eq!(report.rows[4].n, 1024);
    let json = report.to_json();
    assert!(json.starts_with(r#"{"adapter":"#), "{json}");
    assert!(json.contains(r#""ok":true,"rows":[{"what":"MSM, BLS12-381 G1","n":256"#));
    assert_eq!(json.matches(r#""ok":true}"#).count(), 5, "{json}");
    // Sizes beyond the page's are refused, not attempted.
    let too_big = Sizes { msm: 30, ..sizes };
    assert!(pollster::block_on(run_suite(&ctx, too_big)).is_err());
    let too_deep = Sizes { depth: 40, ..sizes };
    assert!(pollster::block_on(run_suite(&ctx, too_deep)).is_err());
}

#[test]
fn report_json_escapes_and_round_trips() {
    let report = Report {
        adapter: "a \"quoted\" \\ name\n".into(),
        backend: "Vulkan".into(),
        rows: vec![Row {
            what: "MSM".into(),
            n: 3,
            first_ms: 1.5,
            gpu_ms: 0.25,
            cpu_ms: f64::NAN,
            ok: true,
        }],
    };
    let v: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(v["adapter"], "a \"quoted\" \\ name\n");
    assert_eq!(v["ok"], true);
    assert_eq!(v["rows"][0]["n"], 3);
    assert_eq!(v["rows"][0]["gpu_ms"], 0.25);
    assert!(v["rows"][0]["cpu_ms"].is_null());
    // No rows: not ok.
    let empty = Report {
        rows: vec![],
        ..report
    };
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&empty.to_json()).unwrap()["ok"],
        false
    );
}
