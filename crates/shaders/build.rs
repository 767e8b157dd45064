//! Validates every shipped WGSL module with naga, using WebGPU's capabilities (none beyond the
//! core language), so a shader error fails `cargo build` with the file and line it came from;
//! then writes the Rust side of the shaders' contract (binding numbers by name, uniform
//! structs) from naga's reflection of the same modules (build/contract.rs).

#![allow(clippy::print_stdout)]

#[path = "src/compose.rs"]
#[allow(dead_code)]
mod compose;
#[path = "build/contract.rs"]
mod contract;
#[path = "src/group.rs"]
#[allow(dead_code)]
mod group;

use naga::valid::{Capabilities, ValidationFlags, Validator};

fn main() {
    println!("cargo:rerun-if-changed=../../shaders");
    println!("cargo:rerun-if-changed=src/compose.rs");
    println!("cargo:rerun-if-changed=build");
    let mut errors = Vec::new();
    let mut contract = contract::Contract::default();
    for m in compose::all() {
        match validate(&m) {
            Ok(module) => {
                let kernel = m.name.split('/').next().unwrap_or(&m.name);
                let origin = format!("shaders/kernels/{kernel}.wgsl");
                let own: String = m
                    .parts
                    .iter()
                    .filter(|p| p.origin == origin)
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
    let out = std::path::Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("contract.rs");
    std::fs::write(&out, contract.rust()).expect("write contract.rs");
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
    // WebGPU grants no optional capability: validate with none.
    Validator::new(ValidationFlags::all(), Capabilities::empty())
        .validate(&module)
        .map_err(|e| {
            format!(
                "error: {}: WGSL validation error in module `{}`\n{}",
                where_(e.location(&src).map(|l| l.line_number)),
                m.name,
                e.emit_to_string(&src)
            )
        })?;
    for ep in m.entry_points {
        if !module.entry_points.iter().any(|e| e.name == *ep) {
            return Err(format!(
                "error: module `{}` has no entry point `{ep}`",
                m.name
            ));
        }
    }
    Ok(module)
}
