#!/usr/bin/env bash
# The test command: installs a software Vulkan driver where no Vulkan driver is present, then
# runs every test of the workspace. GPU tests fail (never skip) when no adapter is found.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "error: cargo not found; install Rust 1.87 or newer (https://rustup.rs)" >&2; exit 1; }
bash scripts/ensure-vulkan.sh
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
cargo run --quiet --release -p zkgpu-cli --bin zkgpu -- info
cargo test --workspace "$@"
