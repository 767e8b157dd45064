//! `cargo xtask gen-shaders [--check]`: writes the generated field WGSL into
//! `shaders/generated/`, or with `--check` fails when a committed file differs from what the
//! generator produces now.

#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: cargo xtask gen-shaders [--check]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["gen-shaders"] => gen_shaders(false),
        ["gen-shaders", "--check"] => gen_shaders(true),
        _ => usage(),
    }
}

fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The generated files, checked against or written to `shaders/generated/`.
fn gen_shaders(check: bool) -> ExitCode {
    let dir = project_root().join("shaders").join("generated");
    let modules = zkgpu_limbs::wgsl::generated_modules();
    let mut stale = Vec::new();
    for (stem, text) in &modules {
        let path = dir.join(format!("{stem}.wgsl"));
        let current = std::fs::read_to_string(&path).ok();
        if current.as_deref() == Some(text.as_str()) {
            continue;
        }
        if check {
            stale.push(path);
        } else {
            if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, text))
            {
                eprintln!("error: writing {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
            println!("wrote {} ({} bytes)", path.display(), text.len());
        }
    }
    // Files in the folder that the generator no longer produces are stale too.
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let known = modules
                .iter()
                .any(|(stem, _)| format!("{stem}.wgsl") == name);
            if name.ends_with(".wgsl") && !known {
                if check {
                    stale.push(e.path());
                } else if std::fs::remove_file(e.path()).is_ok() {
                    println!("removed {}", e.path().display());
                }
            }
        }
    }
    if check {
        if stale.is_empty() {
            println!(
                "shaders/generated is up to date ({} modules)",
                modules.len()
            );
        } else {
            for p in &stale {
                eprintln!("stale: {}", p.display());
            }
            eprintln!(
                "error: generated shaders are out of date; run `cargo xtask gen-shaders` and commit the result"
            );
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
