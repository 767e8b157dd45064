//! Validates every shipped WGSL module with naga, using exactly the capabilities its
//! arithmetic needs (none beyond WebGPU's core language for the portable one; 64-bit integers,
//! and floats for `f64`), so a shader error fails `cargo build` with the file and line it came
//! from; then writes the Rust side of the shaders' contract (binding numbers by name, uniform
//! structs) from naga's reflection of the same modules (build/contract.rs), and the table of
//! the WGSL files the library embeds (files.rs).

#![allow(clippy::print_stdout)]

#[path = "build/capabilities.rs"]
mod capabilities;
#[path = "src/compose.rs"]
#[allow(dead_code)]
mod compose;
#[path = "build/contract.rs"]
mod contract;
#[path = "src/field.rs"]
#[allow(dead_code)]
mod field;
#[path = "src/group.rs"]
#[allow(dead_code)]
mod group;
#[path = "src/pairing.rs"]
#[allow(dead_code, unused_macros)]
mod pairing;
#[path = "src/prune.rs"]
mod prune;

/// The WGSL files of `shaders/`, read from disk (the library embeds the same files).
mod files {
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// The root of the WGSL files: this crate's own folder (`shaders/` of the workspace).
    pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

    /// The text of `shaders/{path}`, if it is a file.
    pub fn text(path: &str) -> Option<&'static str> {
        static READ: Mutex<Option<HashMap<String, &'static str>>> = Mutex::new(None);
        let mut read = READ
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let read = read.get_or_insert_with(HashMap::new);
        if let Some(t) = read.get(path) {
            return Some(t);
        }
        let text = std::fs::read_to_string(format!("{ROOT}/{path}")).ok()?;
        let text: &'static str = Box::leak(text.into_boxed_str());
        read.insert(path.to_owned(), text);
        Some(text)
    }
}

use capabilities::capabilities;
use naga::valid::{ValidationFlags, Validator};
use zkgpu_limbs::Arith;

fn main() {
    println!("cargo:rerun-if-changed=generated");
    println!("cargo:rerun-if-changed=kernels");
    println!("cargo:rerun-if-changed=src/compose.rs");
    println!("cargo:rerun-if-changed=src/prune.rs");
    println!("cargo:rerun-if-changed=src/group.rs");
    println!("cargo:rerun-if-changed=src/pairing.rs");
    println!("cargo:rerun-if-changed=build");
    let mut errors = Vec::new();
    let mut contract = contract::Contract::default();
    for m in compose::all() {
        match validate(&m) {
            Ok(module) => {
                // The hand-written kernel fragments declare the shared constants; the field's
                // generated code and shims do not.
                let own: String = m
                    .parts
                    .iter()
                    .filter(|p| p.origin.starts_with("shaders/kernels/"))
                    .map(|p| p.text.as_str())
                    .collect();
                if let Err(e) = contract.add(&m.name, &own, &module) {
                    errors.push(e);
                }
            }
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("{e}\n");
        }
        eprintln!(
            "error: {} WGSL module(s) failed naga validation",
            errors.len()
        );
        std::process::exit(1);
    }
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out_dir.join("contract.rs"), contract.rust()).expect("write contract.rs");
    std::fs::write(out_dir.join("files.rs"), files_table()).expect("write files.rs");
}

/// `text(path)` over every `.wgsl` file under `shaders/`, embedded with `include_str!`.
fn files_table() -> String {
    let root = std::fs::canonicalize(files::ROOT).expect("shaders/ exists");
    let mut paths = Vec::new();
    for dir in ["generated", "kernels"] {
        let entries = std::fs::read_dir(root.join(dir)).expect("read shaders/");
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".wgsl") {
                paths.push(format!("{dir}/{name}"));
            }
        }
    }
    paths.sort();
    let mut s = String::from(
        "/// The text of `shaders/{path}`, if it is a file.\npub fn text(path: &str) -> Option<&'static str> {\n    Some(match path {\n",
    );
    for p in &paths {
        s.push_str(&format!(
            "        {p:?} => include_str!({:?}),\n",
            root.join(p).display().to_string()
        ));
    }
    s.push_str("        _ => return None,\n    })\n}\n");
    s
}

fn validate(m: &compose::Composed) -> Result<naga::Module, String> {
    let src = m.source();
    let where_ = |line: Option<u32>| match line.and_then(|l| m.locate(l as usize)) {
        Some((origin, line)) => format!("{origin}:{line}"),
        None => "<unknown location>".to_owned(),
    };
    let module = naga::front::wgsl::parse_str(&src).map_err(|e| {
        format!(
            "error: {}: WGSL parse error in module `{}`\n{}",
            where_(e.location(&src).map(|l| l.line_number)),
            m.name,
            e.emit_to_string(&src)
        )
    })?;
    // WebGPU grants no optional capability: the portable modules are validated with none.
    Validator::new(ValidationFlags::all(), capabilities(m.arith))
        .validate(&module)
        .map_err(|e| {
            format!(
                "error: {}: WGSL validation error in module `{}`\n{}",
                where_(e.location(&src).map(|l| l.line_number)),
                m.name,
                e.emit_to_string(&src)
            )
        })?;
    Ok(module)
}
