#!/usr/bin/env bash
# Sourced by the scripts: the versions zkgpu needs, checked with messages that say what to
# install; the build's target directory (CARGO_TARGET_DIR or cargo's configuration honoured);
# the browser.

# Rust: what the workspace's rust-version says (let-chains need 1.88).
ZK_RUST_MIN=1.88
# The newest Rust whose clippy lints the tree is kept free of (the one CI runs). A newer
# clippy brings new lints: with it they are warnings, unless ZK_LINTS=deny (CI sets it).
ZK_RUST_LINTED=1.95
# Node.js: the pinned playwright-core and snarkjs need 20.
ZK_NODE_MIN=20

zk_die() { echo "error: $*" >&2; exit 1; }

# "a.b.c" >= "x.y"?
zk_version_ge() {
  local have=$1 want=$2
  [[ $(printf '%s\n%s\n' "$want" "$have" | sort -V | head -1) == "$want" ]]
}

zk_need_rust() {
  command -v cargo >/dev/null ||
    zk_die "cargo not found; install Rust $ZK_RUST_MIN or newer (https://rustup.rs)"
  local v
  v=$(rustc --version 2>/dev/null | awk '{print $2}')
  zk_version_ge "${v%%-*}" "$ZK_RUST_MIN" ||
    zk_die "Rust ${v:-?} found; zkgpu needs $ZK_RUST_MIN or newer (rustup update stable)"
}

zk_need_node() {
  command -v node >/dev/null ||
    zk_die "node not found; install Node.js $ZK_NODE_MIN or newer (e.g. apt-get install nodejs on Debian 13 / Ubuntu 24.04, or https://nodejs.org)"
  local v
  v=$(node --version 2>/dev/null)
  v=${v#v}
  zk_version_ge "$v" "$ZK_NODE_MIN" ||
    zk_die "Node.js $v found; zkgpu's browser and circom tests need $ZK_NODE_MIN or newer"
  command -v npm >/dev/null || zk_die "npm not found; install it with Node.js (apt-get install npm)"
}

# The absolute target directory cargo builds into (CARGO_TARGET_DIR, .cargo/config.toml or
# ./target), set once as ZK_TARGET.
zk_target_dir() {
  if [[ -z ${ZK_TARGET:-} ]]; then
    ZK_TARGET=$(cargo metadata --format-version 1 --no-deps 2>/dev/null |
      sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
    [[ -n $ZK_TARGET ]] || zk_die "cargo metadata did not name a target directory"
    export ZK_TARGET
  fi
  echo "$ZK_TARGET"
}

# The Chromium (or Chrome) binary to drive: $CHROMIUM, else where Debian, Ubuntu or Google put
# it; empty when there is none.
zk_find_chromium() {
  local c
  if [[ -n ${CHROMIUM:-} ]]; then
    echo "$CHROMIUM"
    return
  fi
  for c in /usr/lib/chromium/chromium /usr/bin/chromium /usr/lib/chromium-browser/chromium-browser \
    /snap/bin/chromium /usr/bin/chromium-browser /usr/bin/google-chrome-stable /usr/bin/google-chrome \
    /opt/google/chrome/chrome; do
    if [[ -x $c ]]; then
      echo "$c"
      return
    fi
  done
}

# A step's heading with the wall clock, so a log shows where a run's time went.
zk_step() { echo "== [$(date +%H:%M:%S)] $*"; }

# clippy's lints inside a build: cargo runs clippy-driver (rustc with clippy's lints, as
# `cargo clippy` does for a check) on the workspace's own crates, with -D warnings (with a Rust
# newer than ZK_RUST_LINTED, unless ZK_LINTS=deny, lints warn instead), so one build
# compiles and lints instead of compiling the workspace twice. Both variables are part of cargo's
# fingerprint: every cargo command that should reuse that build runs with them, and a cargo
# install of another project runs without them (zk_cargo_plain).
zk_lint_in_build() {
  local driver v
  driver=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver || true)
  [[ -n $driver ]] || zk_die "clippy-driver not found; install clippy (rustup component add clippy)"
  export RUSTC_WORKSPACE_WRAPPER=$driver
  v=$(rustc --version | awk '{print $2}' | cut -d. -f1,2)
  if [[ ${ZK_LINTS:-} == deny ]] || zk_version_ge "$ZK_RUST_LINTED" "$v"; then
    export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
  else
    unset CLIPPY_ARGS
    echo "note: Rust $v is newer than $ZK_RUST_LINTED, whose clippy lints this tree is kept free of: its lints are warnings here (ZK_LINTS=deny makes them errors)" >&2
  fi
}
zk_cargo_plain() { env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS cargo "$@"; }

# The zkgpu binary the scripts run: $ZKGPU_BUILT/zkgpu when scripts/test.sh has built the
# workspace (the test profile, whose build the scripts then share instead of compiling every
# crate again in another profile or with other features), else built here.
zk_zkgpu() {
  if [[ -n ${ZKGPU_BUILT:-} ]]; then
    [[ -x $ZKGPU_BUILT/zkgpu ]] || zk_die "ZKGPU_BUILT=$ZKGPU_BUILT has no zkgpu binary"
    echo "$ZKGPU_BUILT/zkgpu"
    return
  fi
  cargo build --quiet -p zkgpu-cli --bin zkgpu >&2
  echo "$(zk_target_dir)/debug/zkgpu"
}

# Runs the example $2 of package $1 with the remaining arguments: the one under
# $ZKGPU_BUILT/examples when scripts/test.sh has built it, else through cargo run.
zk_example() {
  local pkg=$1 name=$2
  shift 2
  if [[ -n ${ZKGPU_BUILT:-} && -x $ZKGPU_BUILT/examples/$name ]]; then
    "$ZKGPU_BUILT/examples/$name" "$@"
  else
    cargo run --quiet -p "$pkg" --example "$name" -- "$@"
  fi
}
