//! Writes the proving key the page loads from its server: Poseidon Merkle paths of depth D
//! in a domain of 2^K constraints, from the page's fixed seed, ark-serialize compressed.
//!
//! `cargo run -p zkgpu-web --example merkle_key -- K D FILE` (`scripts/web.sh build` writes
//! `web/pkg/keys/merkle-10-2.pk`, the page's default).

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use zkgpu_web::{api, prove};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [k, d, file] = args.as_slice() else {
        eprintln!("usage: merkle_key LOG_CONSTRAINTS DEPTH FILE");
        return ExitCode::from(2);
    };
    let (Ok(k), Ok(d)) = (k.parse::<u32>(), d.parse::<usize>()) else {
        eprintln!("error: LOG_CONSTRAINTS and DEPTH are integers, not {k:?} and {d:?}");
        return ExitCode::from(2);
    };
    let key = prove::paths_for(k, d).and_then(|paths| api::merkle_key(paths, d, prove::KEY_SEED));
    match key.and_then(|key| {
        std::fs::write(file, &key)
            .map(|()| key.len())
            .map_err(|e| format!("{file}: {e}"))
    }) {
        Ok(bytes) => {
            println!(
                "wrote {file}: the proving key of 2^{k} constraints, depth {d} ({bytes} bytes)"
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
