#!/usr/bin/env bash
# The test command: installs a software Vulkan driver where no Vulkan driver is present, builds
# the workspace once in the test profile (its zkgpu, xtask and examples are what the scripts
# below run: ZKGPU_BUILT), checks the generated shaders (xtask gen-shaders --check), then
# runs every test of the workspace, then circom's tools against zkgpu (scripts/circom.sh
# test: snarkjs from npm verifies zkgpu prove-circom's proofs), then the proving service
# against a PostgreSQL server it starts (scripts/service.sh test), then the browser page in
# headless Chromium and the npm package's types
# (scripts/web.sh test and pack; installs Chromium and wasm-bindgen-cli if missing; skipped when
# arguments filter the tests or ZKGPU_SKIP_BROWSER=1). GPU tests fail (never skip) when no
# adapter is found.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
zk_need_rust
bash scripts/ensure-vulkan.sh
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
# clippy lints every crate of the workspace as it is compiled (all targets; the page's wasm32
# build below too): a lint fails the build (with a Rust newer than the one CI lints with, it
# warns: scripts/common.sh), and nothing is compiled twice.
zk_lint_in_build
# The page's wasm module for the browser test and the npm package check: optimized, without
# the release profile's thin LTO (Cargo.toml, profile web-check).
export ZKGPU_WEB_PROFILE=${ZKGPU_WEB_PROFILE:-web-check}
if (( $# == 0 )); then
  # One build of everything the tests and the scripts below run, in the test profile with the
  # test build's features: the scripts use its zkgpu binary and examples (ZKGPU_BUILT), and
  # cargo test finds its test binaries built; the benches are built for clippy's sake.
  zk_step "build and lint: every target of the workspace (test profile, clippy's lints)"
  cargo build --workspace --profile test --all-targets
  ZKGPU_BUILT=$(zk_target_dir)/debug
  export ZKGPU_BUILT
  "$ZKGPU_BUILT/zkgpu" info
  # `cargo xtask gen-shaders --check`, from the same build.
  "$ZKGPU_BUILT/xtask" gen-shaders --check
else
  cargo run --quiet -p zkgpu-cli --bin zkgpu -- info
fi
zk_step "cargo test --workspace"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --workspace --no-fail-fast "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# One closing line for the whole workspace (cargo prints one per test binary).
awk '/^test result:/ { p += $4; f += $6 } END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
# circom and snarkjs: zkgpu prove-circom on the fixtures, snarkjs verifies (unless filtered).
if (( $# == 0 )); then
  zk_step "circom: scripts/circom.sh test (snarkjs from npm verifies zkgpu's proofs)"
  if bash scripts/circom.sh test; then
    echo "circom test: passed"
  else
    echo "circom test: FAILED"
    status=1
  fi
fi
# The proving service with a real PostgreSQL server and real processes (unless filtered).
if (( $# == 0 )); then
  zk_step "service: scripts/service.sh test (PostgreSQL started here; serve, workers, faults)"
  if bash scripts/service.sh test; then
    echo "service test: passed"
  else
    echo "service test: FAILED"
    status=1
  fi
fi
# The browser page in headless Chromium (software WebGPU), unless test filters were given.
if (( $# == 0 )) && [[ ${ZKGPU_SKIP_BROWSER:-0} != 1 ]]; then
  zk_step "browser: scripts/web.sh test (wasm32 build, headless Chromium, WebGPU)"
  if bash scripts/web.sh test; then
    echo "browser test: passed"
  else
    echo "browser test: FAILED"
    status=1
  fi
  zk_step "npm package: scripts/web.sh pack (npm pack, a consumer's tsc --noEmit)"
  if bash scripts/web.sh pack; then
    echo "npm package: passed"
  else
    echo "npm package: FAILED"
    status=1
  fi
fi
zk_step "tests done"
exit "$status"
