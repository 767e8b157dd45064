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
#                                      result equals arkworks', then the npm package's API
#                                      (web/check/package.html) with and without WebGPU
#   scripts/web.sh pack                build, npm pack, and type-check a consumer of the tarball
# Installs what is missing: the wasm32 target (rustup), wasm-bindgen-cli at the version
# web/Cargo.toml pins (cargo install into <target dir>/tools, a few minutes once; a wasm-bindgen
# on PATH is left alone), Chromium (apt, for `test`), the
# browser driver playwright-core (npm, for `test`) and snarkjs (npm, scripts/circom.sh, for
# `test`: it verifies the page's circom proof).
# ZKGPU_WEB_PROFILE: the cargo profile of the wasm32 build (release unless set; scripts/test.sh
# sets web-check: opt-level 1, no LTO; 7m44s clean here against the release build's 8m55s).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
source scripts/common.sh

build() {
  zk_need_rust
  local target
  target=$(zk_target_dir)
  if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
  fi
  local want
  want=$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)"/\1/p' web/Cargo.toml)
  # The project's own copy, in the target directory: the user's global one is not touched.
  local bindgen=$target/tools/bin/wasm-bindgen
  if [[ $("$bindgen" --version 2>/dev/null) != "wasm-bindgen $want" ]]; then
    zk_step "installing wasm-bindgen-cli $want (matches the wasm-bindgen crate) into $target/tools" >&2
    # --locked first; the registry mirror may lack a locked dependency version. --force:
    # cargo skips a version its records list as installed even when the binary is gone.
    # Built under the target directory, not $TMPDIR (a small /tmp filled up in CI), and removed.
    # --debug at opt-level 1: it compiles in a fraction of a release build's time (7 min of
    # a CI run), and runs once per build on a few megabytes.
    local build="$target/tools-build"
    zk_cargo_plain install --quiet --debug --config profile.dev.opt-level=1 --config profile.dev.debug=false --force --locked --root "$target/tools" --target-dir "$build" \
      wasm-bindgen-cli --version "$want" ||
      zk_cargo_plain install --quiet --debug --config profile.dev.opt-level=1 --config profile.dev.debug=false --force --root "$target/tools" --target-dir "$build" \
        wasm-bindgen-cli --version "$want"
    rm -rf "$build"
  fi
  local profile=${ZKGPU_WEB_PROFILE:-release}
  zk_step "the page's wasm32 build (profile $profile)" >&2
  cargo build --profile "$profile" -p zkgpu-web --target wasm32-unknown-unknown
  "$bindgen" --target web --out-dir web/pkg \
    "$target/wasm32-unknown-unknown/$profile/zkgpu_web.wasm"
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
  zk_example zkgpu-web merkle_key "$1" "$2" "$file"
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
    zk_need_node
    exec node web/serve.mjs "${1:-8080}"
    ;;
  test)
    build
    prove=$(arg prove 10 "$@")
    ((prove > 0)) && key "$prove" "$(arg depth 2 "$@")"
    zk_need_node
    if [[ -z $(zk_find_chromium) ]]; then
      bash scripts/apt-install.sh "no Chromium found (the page test drives headless Chromium; or set CHROMIUM to a Chromium or Chrome binary)" chromium
    fi
    CHROMIUM=$(zk_find_chromium)
    [[ -n $CHROMIUM ]] || zk_die "no Chromium found after installing it; set CHROMIUM to a Chromium or Chrome binary"
    export CHROMIUM
    if [[ ! -f web/node_modules/playwright-core/package.json || ! -f web/node_modules/typescript/package.json ]]; then
      # playwright-core and typescript, pinned by web/package-lock.json.
      npm ci --prefix web --no-audit --no-fund
    fi
    # snarkjs, which verifies the page's circom proof (scripts/circom.sh installs it).
    bash scripts/circom.sh tools
    ZK_TARGET=$(zk_target_dir)
    export ZK_TARGET
    exec node web/e2e.mjs "$@"
    ;;
  pack)
    # The npm package: npm pack, then a consumer (web/check/consumer.ts) installs the tarball
    # and type-checks against it with tsc --noEmit (strict).
    build
    zk_need_node
    [[ -f web/node_modules/typescript/package.json ]] || npm ci --prefix web --no-audit --no-fund
    out=$(zk_target_dir)/npm
    rm -rf "$out" && mkdir -p "$out/consumer"
    tarball=$(cd web && npm pack --silent --pack-destination "$out")
    echo "packed $out/$tarball ($(du -h "$out/$tarball" | cut -f1)): $(tar tzf "$out/$tarball" | tr '\n' ' ')"
    cp web/check/consumer.ts "$out/consumer/"
    cat >"$out/consumer/package.json" <<'JSON'
{ "name": "zkgpu-consumer", "private": true, "type": "module" }
JSON
    cat >"$out/consumer/tsconfig.json" <<'JSON'
{ "compilerOptions": { "strict": true, "noEmit": true, "target": "es2022", "module": "nodenext",
  "moduleResolution": "nodenext", "lib": ["es2022", "dom"], "types": [] }, "files": ["consumer.ts"] }
JSON
    (cd "$out/consumer" && npm install --no-audit --no-fund --silent "../$tarball")
    node web/node_modules/typescript/bin/tsc -p "$out/consumer/tsconfig.json"
    echo "the packed package's types check (tsc --noEmit on web/check/consumer.ts)"
    ;;
  *)
    echo "usage: scripts/web.sh build | serve [PORT] | test [--msm K] [--ntt K] [--prove K] [--depth D] [--timeout S] | pack" >&2
    exit 2
    ;;
esac
