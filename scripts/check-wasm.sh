#!/usr/bin/env bash
# The MSM and NTT engines, the Groth16 prover (and everything below them) and the page crate for the browser: wasm32-unknown-unknown
# with wgpu's WebGPU backend, checked with clippy (adds the target through rustup if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
fi
cargo clippy --target wasm32-unknown-unknown -p zkgpu-msm -p zkgpu-ntt -p zkgpu-groth16 -p zkgpu-web -- -D warnings
