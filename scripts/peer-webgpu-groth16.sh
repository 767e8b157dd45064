#!/usr/bin/env bash
# Builds the wgpu Groth16 prover the project is compared with, webgpu-groth16 0.2.0 from
# crates.io, as its authors benchmark it: its own `examples/profile.rs` (a chain of squarings
# over bellman/blstrs BLS12-381), with the crate's lock file. Not part of the workspace (other
# arkworks/bellman versions, wgpu 28) and not run by CI.
#   scripts/peer-webgpu-groth16.sh [OUT_DIR]   build; copy the binary to OUT_DIR/wg16-profile
#                                              (default .devrun/bin, next to a staged zkgpu)
# Then, on the device machine: .devrun/run.sh .devrun/bin/wg16-profile <constraints> <proofs>
# docs/log/2026-11.md (2026-11-23) has what it did on the H100.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.devrun/bin}
version=0.2.0
work=${CARGO_TARGET_DIR:-target}/peer-webgpu-groth16
mkdir -p "$work" "$out"
if [ ! -f "$work/src/Cargo.toml" ]; then
  # A throwaway manifest that depends on the crate, so cargo downloads its source.
  mkdir -p "$work/fetch/src"
  printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nwebgpu-groth16 = "=%s"\n[workspace]\n' \
    "$version" > "$work/fetch/Cargo.toml"
  echo 'fn main() {}' > "$work/fetch/src/main.rs"
  cargo fetch --manifest-path "$work/fetch/Cargo.toml"
  src=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -maxdepth 2 -type d -name "webgpu-groth16-$version" | head -1)
  [ -n "$src" ] || { echo "error: webgpu-groth16 $version not found after cargo fetch" >&2; exit 1; }
  rm -rf "$work/src" && cp -r "$src" "$work/src"
  # Its own workspace root, so that this repository's workspace does not claim it.
  grep -q '^\[workspace\]' "$work/src/Cargo.toml" || printf '\n[workspace]\n' >> "$work/src/Cargo.toml"
fi
cargo build --release --locked --example profile --manifest-path "$work/src/Cargo.toml"
cp "$work/src/target/release/examples/profile" "$out/wg16-profile"
echo "built $out/wg16-profile (webgpu-groth16 $version, examples/profile.rs)"
