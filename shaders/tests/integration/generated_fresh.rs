//! The committed files in `shaders/generated/` are what the generator produces now.

use std::path::Path;

#[test]
fn generated_shaders_are_fresh() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("generated");
    for (stem, text) in zkgpu_limbs::wgsl::generated_modules() {
        let path = dir.join(format!("{stem}.wgsl"));
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == text,
            "{} is stale: run `cargo xtask gen-shaders` and commit the result",
            path.display()
        );
    }
}
