#!/usr/bin/env bash
# The main job: installs a software Vulkan driver where no Vulkan driver is present, builds the
# `zkgpu` CLI, lists the adapters, runs the field benchmark and one MSM, each checked against
# arkworks. Arguments go to the field benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "error: cargo not found; install Rust 1.87 or newer (https://rustup.rs)" >&2; exit 1; }
bash scripts/ensure-vulkan.sh
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
cargo build --release -p zkgpu-cli --bin zkgpu
./target/release/zkgpu info
./target/release/zkgpu bench field "$@"
./target/release/zkgpu msm --curve bls12-381-g1 --log-n "${ZKGPU_MSM_LOG_N:-12}" --runs 1
