#!/usr/bin/env bash
# The main job: installs a software Vulkan driver where no Vulkan driver is present, builds the
# `zkgpu` CLI, lists the adapters, then proves a real circuit with Groth16 on the GPU and with
# ark-groth16 on the CPU cores (same key, witness and randomness), verifies and compares both
# proofs and prints the times. Arguments go to `zkgpu prove` (default: a SHA-256 chain filling
# a 2^16 domain on BLS12-381, one timed proof).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
zk_need_rust
bash scripts/ensure-vulkan.sh
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
cargo build --release -p zkgpu-cli --bin zkgpu
"$(zk_target_dir)/release/zkgpu" info
if (( $# == 0 )); then
  set -- --circuit sha256 --log-constraints 16 --curve bls12-381 --runs 1
fi
"$(zk_target_dir)/release/zkgpu" prove "$@"
