#!/usr/bin/env bash
# The browser page (web/): an MSM, NTTs and a Groth16 proof on the browser's WebGPU, checked
# against arkworks compiled into the same wasm module; build and serve also write the proving
# key the page fetches (web/pkg/keys/, by the native example merkle_key).
#   scripts/web.sh build               wasm32 build + JS glue into web/pkg
#   scripts/web.sh serve [PORT]        build, then serve web/ on http://127.0.0.1:PORT (8080)
#   scripts/web.sh test [--msm K] [--ntt K] [--prove K] [--depth D] [--circom NAME|none]
#                       [--timeout S]
#                                      build, then run the page in headless Chromium with its
#                                      software WebGPU adapter; exits non-zero unless every
#                                      result equals arkworks'
# Installs what is missing: the wasm32 target (rustup), wasm-bindgen-cli at the version
# web/Cargo.toml pins (cargo install, a few minutes once), Chromium (apt, for `test`), the
# browser driver playwright-core (npm, for `test`) and snarkjs (npm, scripts/circom.sh, for
# `test`: it verifies the page's circom proof).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}

need() { command -v "$1" >/dev/null || { echo "error: $1 not found; $2" >&2; exit 1; }; }

build() {
  need cargo "install Rust 1.87 or newer (https://rustup.rs)"
  if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
  fi
  local want
  want=$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)"/\1/p' web/Cargo.toml)
  if [[ $(wasm-bindgen --version 2>/dev/null) != "wasm-bindgen $want" ]]; then
    echo "installing wasm-bindgen-cli $want (matches the wasm-bindgen crate) ..." >&2
    # --locked first; the registry mirror may lack a locked dependency version. --force:
    # cargo skips a version its records list as installed even when the binary is gone.
    cargo install --quiet --force --locked wasm-bindgen-cli --version "$want" ||
      cargo install --quiet --force wasm-bindgen-cli --version "$want"
  fi
  cargo build --release -p zkgpu-web --target wasm32-unknown-unknown
  wasm-bindgen --target web --no-typescript --out-dir web/pkg \
    target/wasm32-unknown-unknown/release/zkgpu_web.wasm
  # The circom fixtures the page proves (main.js: ?circom=NAME).
  mkdir -p web/pkg/circom
  cp crates/circom/tests/fixtures/*.zkey crates/circom/tests/fixtures/*.wtns web/pkg/circom/
  echo "built web/pkg ($(du -sh web/pkg | cut -f1))" >&2
}

# The proving key the page fetches for 2^$1 constraints of depth-$2 Merkle paths
# (web/pkg/keys/merkle-$1-$2.pk), made natively from the page's fixed seed.
key() {
  local file=web/pkg/keys/merkle-$1-$2.pk
  [[ -f $file ]] && return
  mkdir -p web/pkg/keys
  cargo run --quiet -p zkgpu-web --example merkle_key -- "$1" "$2" "$file"
}

# The value of --NAME in the arguments, else DEFAULT.
arg() {
  local name=$1 dflt=$2
  shift 2
  while (($#)); do
    [[ $1 == "--$name" ]] && { echo "${2:-$dflt}"; return; }
    shift
  done
  echo "$dflt"
}

cmd=${1:-test}
shift || true
case $cmd in
  build) build; key 10 2 ;;
  serve)
    build
    key 10 2
    need node "install Node.js 18 or newer"
    exec node web/serve.mjs "${1:-8080}"
    ;;
  test)
    build
    prove=$(arg prove 10 "$@")
    ((prove > 0)) && key "$prove" "$(arg depth 2 "$@")"
    need node "install Node.js 18 or newer"
    if [[ -z ${CHROMIUM:-} ]] && [[ ! -x /usr/lib/chromium/chromium ]] && ! command -v chromium >/dev/null; then
      bash scripts/apt-install.sh "no Chromium found (the page test drives headless Chromium)" chromium
    fi
    need npm "install npm (it comes with Node.js)"
    if [[ ! -f web/node_modules/playwright-core/package.json ]]; then
      # playwright-core, pinned by web/package-lock.json, drives the browser.
      npm ci --prefix web --no-audit --no-fund
    fi
    # snarkjs, which verifies the page's circom proof (scripts/circom.sh installs it).
    bash scripts/circom.sh tools
    exec node web/e2e.mjs "$@"
    ;;
  *)
    echo "usage: scripts/web.sh build | serve [PORT] | test [--msm K] [--ntt K] [--prove K] [--depth D] [--timeout S]" >&2
    exit 2
    ;;
esac
