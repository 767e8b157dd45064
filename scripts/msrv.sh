#!/usr/bin/env bash
# Checks (cargo check, every target) the workspace with the Rust version its manifest states
# (`rust-version` in Cargo.toml, which scripts/common.sh's ZK_RUST_MIN repeats), so that code
# needing a newer compiler than stated fails CI. The toolchain comes from rustup (minimal
# profile); where rustup cannot install it (no network) the check says so and is skipped,
# since the stable build is tested anyway.
#   scripts/msrv.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
ver=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml)
[[ -n $ver ]] || zk_die "no rust-version in Cargo.toml"
[[ $ver == "$ZK_RUST_MIN" ]] ||
  zk_die "Cargo.toml states Rust $ver, scripts/common.sh ZK_RUST_MIN=$ZK_RUST_MIN: make them agree"
command -v rustup >/dev/null || zk_die "rustup not found: it installs Rust $ver for this check"
if ! rustup toolchain install "$ver" --profile minimal --no-self-update; then
  echo "msrv: rustup could not install Rust $ver; the check against it did not run" >&2
  exit 0
fi
# Its own target folder (a toolchain's artefacts are not another's), removed afterwards.
target="$(zk_target_dir)/msrv"
cargo +"$ver" check --workspace --all-targets --locked --target-dir "$target"
rm -rf "$target"
echo "msrv: the workspace builds with Rust $ver"
