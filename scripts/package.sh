#!/usr/bin/env bash
# `cargo package` of every library crate (CI runs it): each crate's files are inside its
# folder, its manifest is publishable, and each packaged crate builds on its own against the
# others' packages (cargo's verification). The verification builds with the workspace's
# build settings (naga optimized in build scripts, no debug info), or the shaders' build
# script, unoptimized, takes minutes.
#   scripts/package.sh [--no-verify]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
zk_need_rust
crates=(zkgpu-limbs zkgpu-shaders zkgpu-curves zkgpu-runtime zkgpu-kernels zkgpu-msm zkgpu-ntt
  zkgpu-groth16 zkgpu-circom zkgpu-circuits zkgpu-service zkgpu-cli)
args=()
for c in "${crates[@]}"; do args+=(-p "$c"); done
# cargo verifies each crate against the others' packages through a local registry, and
# extracts those under $CARGO_HOME/registry/src/-<hash>/ (the local registries' folders
# start with "-") once per version: a later run of the same version would build against
# the stale sources. Our crates' extractions go first.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/zkgpu-*
cargo package "${args[@]}" "$@" \
  --config 'profile.dev.build-override.opt-level=2' \
  --config 'profile.dev.debug=false' \
  --config 'profile.dev.package."*".opt-level=2'
echo "packaged: ${crates[*]}"
