#!/usr/bin/env bash
# circom and snarkjs against zkgpu, with the real tools from the npm registry (snarkjs, the
# circom compiler's wasm build circom2, circomlib; pinned below, installed into
# <target dir>/circom-tools the first time).
#   scripts/circom.sh test       zkgpu prove-circom on the fixtures (the GPU wgpu finds, e.g.
#                                lavapipe); snarkjs verifies each proof and rejects a tampered
#                                public signal; a key made by zkgpu circom-setup is read by
#                                snarkjs and proves with both; a key of another circuit, a
#                                truncated key, a
#                                witness of the wrong length or field and an unsatisfying
#                                witness each fail with an error and no proof file; the same
#                                for BLS12-381 keys (snarkjs' and circom-setup's)
#   scripts/circom.sh fixtures [bn128|bls12381]...   remakes crates/circom/tests/fixtures
#                                (both curves unless named): compiles each .circom there for
#                                the curve's prime, a small powers-of-tau ceremony, snarkjs'
#                                Groth16 setup, its verification key and the witness of
#                                <name>_input.json; BLS12-381's files end in _bls12381
#   scripts/circom.sh verify VKEY PUBLIC PROOF...   snarkjs groth16 verify of each proof.json
#                                (PROOF beside PUBLIC pairs: public1 proof1 public2 proof2 ...)
set -euo pipefail
cd "$(dirname "$0")/.."
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
# Software Vulkan drivers warn about the SPIR-V of large shaders: errors only.
export ZKGPU_LOG=${ZKGPU_LOG:-error}
FIX=crates/circom/tests/fixtures
source scripts/common.sh
TOOLS=$(zk_target_dir)/circom-tools
SNARKJS=snarkjs@0.7.6
CIRCOM2=circom2@0.2.23
CIRCOMLIB=circomlib@2.0.5

tools() {
  zk_need_node
  if [[ ! -x $TOOLS/node_modules/.bin/snarkjs || ! -x $TOOLS/node_modules/.bin/circom2 ]]; then
    echo "installing $SNARKJS $CIRCOM2 $CIRCOMLIB into $TOOLS ..." >&2
    mkdir -p "$TOOLS"
    npm install --prefix "$TOOLS" --no-audit --no-fund --silent "$SNARKJS" "$CIRCOM2" "$CIRCOMLIB"
  fi
}

snarkjs() { node "$TOOLS/node_modules/snarkjs/build/cli.cjs" "$@"; }

# fixtures [CURVE...]: remakes the fixtures of each curve (bn128, bls12381; default both).
# BN254's are <name>.*, BLS12-381's <name>_bls12381.*.
fixtures() {
  tools
  local curves=("$@")
  [[ ${#curves[@]} -gt 0 ]] || curves=(bn128 bls12381)
  local curve
  for curve in "${curves[@]}"; do
    case $curve in
      bn128) fixtures_of bn128 bn128 "" ;;
      bls12381) fixtures_of bls12381 bls12381 _bls12381 ;;
      *) echo "unknown curve $curve (bn128, bls12381)" >&2; exit 2 ;;
    esac
  done
}

# fixtures_of PTAU_CURVE CIRCOM_PRIME SUFFIX
fixtures_of() {
  local ptau_curve=$1 prime=$2 sfx=$3 work
  work=$(mktemp -d)
  # circom2 runs under WASI and opens only paths below its working directory: circomlib is
  # copied there.
  cp -r "$TOOLS/node_modules/circomlib" "$work/"
  cp "$FIX"/*.circom "$FIX"/*_input.json "$work/"
  local root=$PWD
  (
    cd "$work"
    snarkjs powersoftau new "$ptau_curve" 12 pot0.ptau >/dev/null
    snarkjs powersoftau contribute pot0.ptau pot1.ptau --name=zkgpu -e="zkgpu fixtures" >/dev/null
    snarkjs powersoftau prepare phase2 pot1.ptau pot.ptau >/dev/null
    for src in *.circom; do
      local c=${src%.circom} f
      f=$c$sfx
      "$TOOLS/node_modules/.bin/circom2" "$src" --r1cs --wasm --prime "$prime" -o . -l . >/dev/null
      [[ $c == "$f" ]] || mv "$c.r1cs" "$f.r1cs"
      snarkjs groth16 setup "$f.r1cs" pot.ptau "${f}_0.zkey" >/dev/null
      snarkjs zkey contribute "${f}_0.zkey" "$f.zkey" --name=zkgpu -e="zkgpu $f" >/dev/null
      snarkjs zkey export verificationkey "$f.zkey" "${f}_vkey.json" >/dev/null
      snarkjs wtns calculate "${c}_js/$c.wasm" "${c}_input.json" "$f.wtns"
      cp "$f.r1cs" "$f.zkey" "$f.wtns" "${f}_vkey.json" "$root/$FIX/"
      echo "$FIX/$f: $(snarkjs r1cs info "$f.r1cs" | grep -o '# of Constraints: [0-9]*')" >&2
    done
  )
  rm -rf "$work"
}

# Fails the run with a message.
fail() { echo "circom test FAILED: $*" >&2; exit 1; }

# `zkgpu prove-circom` must fail on these arguments and leave no proof file.
refused() {
  local what=$1 out=$2
  shift 2
  rm -f "$out/proof.json" "$out/public.json"
  if "$ZKGPU" prove-circom "$@" "$out/proof.json" "$out/public.json" 2>"$out/err"; then
    fail "$what: proved"
  fi
  [[ ! -e $out/proof.json && ! -e $out/public.json ]] || fail "$what: left a proof file"
  echo "refused, $what: $(tail -1 "$out/err")"
}

# Copies $1 to $2 with the bytes at offset $3 replaced by the hex string $4.
patch() {
  node -e 'const fs=require("fs");const b=fs.readFileSync(process.argv[1]);
    Buffer.from(process.argv[4],"hex").copy(b,Number(process.argv[3]));
    fs.writeFileSync(process.argv[2],b);' "$1" "$2" "$3" "$4"
}

# zkgpu prove-circom on fixture $1 into $2, --compare: the CPU prover (circom's reduction)
# makes the same proof for the same r, s; the key's prepared form cached in $2/cache on the
# first run. Then snarkjs verifies the proof.
proved_and_verified() {
  local c=$1 out=$2
  "$ZKGPU" prove-circom "$FIX/$c.zkey" "$FIX/$c.wtns" "$out/$c-proof.json" "$out/$c-public.json" \
    --verify "$FIX/${c}_vkey.json" --compare --runs 1 --cache-dir "$out/cache" ||
    fail "$c: zkgpu prove-circom"
  snarkjs groth16 verify "$FIX/${c}_vkey.json" "$out/$c-public.json" "$out/$c-proof.json" ||
    fail "$c: snarkjs rejected zkgpu's proof"
  echo "snarkjs verified zkgpu's proof of $c"
}

test_() {
  tools
  ZKGPU=$(zk_zkgpu)
  local out
  out=$(mktemp -d)
  for c in multiplier merkle; do
    proved_and_verified "$c" "$out"
  done
  # The second run loads the prepared key from the cache (and does not read the .zkey).
  "$ZKGPU" prove-circom "$FIX/merkle.zkey" "$FIX/merkle.wtns" "$out/c-proof.json" "$out/c-public.json" \
    --cache-dir "$out/cache" 2>"$out/cached.log" >/dev/null || fail "zkgpu prove-circom, cached key"
  grep -q "loaded from" "$out/cached.log" || fail "the cached key was not loaded: $(cat "$out/cached.log")"
  snarkjs groth16 verify "$FIX/merkle_vkey.json" "$out/c-public.json" "$out/c-proof.json" ||
    fail "snarkjs rejected zkgpu's proof from the cached key"
  echo "snarkjs verified zkgpu's proof from the cached prepared key"
  # --quiet prints nothing on success (as rapidsnark); --json one object on stdout.
  "$ZKGPU" prove-circom "$FIX/merkle.zkey" "$FIX/merkle.wtns" "$out/q-proof.json" "$out/q-public.json" \
    --cache-dir "$out/cache" --quiet >"$out/quiet.out" 2>"$out/quiet.err" || fail "zkgpu prove-circom --quiet"
  # (stderr may carry the driver's own notes, e.g. lavapipe's conformance warning.)
  [[ ! -s $out/quiet.out ]] && ! grep -qi "proof\|key\|context" "$out/quiet.err" ||
    fail "--quiet printed: $(cat "$out/quiet.out" "$out/quiet.err")"
  "$ZKGPU" prove-circom "$FIX/merkle.zkey" "$FIX/merkle.wtns" "$out/j-proof.json" "$out/j-public.json" \
    --cache-dir "$out/cache" --json --runs 1 --verify "$FIX/merkle_vkey.json" >"$out/report.json" ||
    fail "zkgpu prove-circom --json"
  node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1]));
    if (r.verified !== true || r.timed_proofs_seconds.length !== 1 || !(r.steps_seconds.first_proof > 0))
      { console.error("unexpected --json report: " + JSON.stringify(r)); process.exit(1); }' "$out/report.json" ||
    fail "--json's report"
  snarkjs groth16 verify "$FIX/merkle_vkey.json" "$out/q-public.json" "$out/q-proof.json" >/dev/null ||
    fail "snarkjs rejected the --quiet run's proof"
  echo "--quiet printed nothing, --json printed one object, and both proofs verify"
  # A public signal changed by one: snarkjs must reject the proof.
  node -e 'const fs=require("fs");const p=JSON.parse(fs.readFileSync(process.argv[1]));
    p[p.length-1]=(BigInt(p[p.length-1])+1n).toString();
    fs.writeFileSync(process.argv[2],JSON.stringify(p));' "$out/merkle-public.json" "$out/tampered.json"
  if snarkjs groth16 verify "$FIX/merkle_vkey.json" "$out/tampered.json" "$out/merkle-proof.json"; then
    fail "snarkjs accepted a tampered public signal"
  fi
  echo "snarkjs rejected the proof with a tampered public signal"
  # A key made from the .r1cs by zkgpu circom-setup: snarkjs reads it, both provers prove
  # with it, snarkjs verifies both proofs.
  "$ZKGPU" circom-setup "$FIX/merkle.r1cs" "$out/setup.zkey" --seed 34 || fail "zkgpu circom-setup"
  snarkjs zkey export verificationkey "$out/setup.zkey" "$out/setup_vkey.json" >/dev/null ||
    fail "snarkjs could not read zkgpu circom-setup's key"
  "$ZKGPU" prove-circom "$out/setup.zkey" "$FIX/merkle.wtns" "$out/s-proof.json" "$out/s-public.json" \
    --verify "$out/setup_vkey.json" --no-cache >/dev/null || fail "zkgpu prove-circom with circom-setup's key"
  snarkjs groth16 verify "$out/setup_vkey.json" "$out/s-public.json" "$out/s-proof.json" ||
    fail "snarkjs rejected zkgpu's proof with circom-setup's key"
  snarkjs groth16 prove "$out/setup.zkey" "$FIX/merkle.wtns" "$out/j-proof.json" "$out/j-public.json"
  snarkjs groth16 verify "$out/setup_vkey.json" "$out/j-public.json" "$out/j-proof.json" ||
    fail "snarkjs rejected its own proof with circom-setup's key"
  echo "circom-setup's key: snarkjs exported its verification key and verified zkgpu's and its own proofs"
  bls12_381 "$out"
  export ZKGPU_CACHE=$out/cache
  refused "a key of another circuit" "$out" "$FIX/multiplier.zkey" "$FIX/merkle.wtns"
  head -c 500000 "$FIX/merkle.zkey" >"$out/truncated.zkey"
  refused "a truncated key" "$out" "$out/truncated.zkey" "$FIX/merkle.wtns"
  head -c 60000 "$FIX/merkle.wtns" >"$out/short.wtns"
  refused "a truncated witness" "$out" "$FIX/merkle.zkey" "$out/short.wtns"
  # The witness's prime (bytes 28..60: after the magic, version, section count, the section's
  # type and length and the byte size) changed to BLS12-381's scalar field.
  patch "$FIX/merkle.wtns" "$out/field.wtns" 28 \
    01000000fffffffffe5bfeff02a4bd5305d8a10908d83933487d9d2953a7ed73
  refused "a witness over another field" "$out" "$FIX/merkle.zkey" "$out/field.wtns"
  # The last signal (an intermediate of the last hash) changed: the witness satisfies no more.
  local size
  size=$(stat -c %s "$FIX/merkle.wtns")
  patch "$FIX/merkle.wtns" "$out/unsat.wtns" $((size - 32)) 05
  refused "a witness that does not satisfy the circuit" "$out" "$FIX/merkle.zkey" "$out/unsat.wtns"
  rm -rf "$out"
  echo "circom test: passed"
}

# BLS12-381 (snarkjs' bls12381): zkgpu proves snarkjs' keys (equal to the CPU prover's proof,
# verified by snarkjs), and a key made by zkgpu circom-setup proves with snarkjs and zkgpu
# alike (both take their roots of unity from the field's smallest non-residue).
bls12_381() {
  local out=$1 c
  for c in multiplier_bls12381 merkle_bls12381; do
    proved_and_verified "$c" "$out"
  done
  "$ZKGPU" circom-setup "$FIX/merkle_bls12381.r1cs" "$out/bls.zkey" --seed 35 ||
    fail "zkgpu circom-setup (BLS12-381)"
  snarkjs zkey export verificationkey "$out/bls.zkey" "$out/bls_vkey.json" >/dev/null ||
    fail "snarkjs could not read zkgpu circom-setup's BLS12-381 key"
  "$ZKGPU" prove-circom "$out/bls.zkey" "$FIX/merkle_bls12381.wtns" "$out/b-proof.json" \
    "$out/b-public.json" --verify "$out/bls_vkey.json" --no-cache >/dev/null ||
    fail "zkgpu prove-circom with circom-setup's BLS12-381 key"
  snarkjs groth16 prove "$out/bls.zkey" "$FIX/merkle_bls12381.wtns" "$out/bj-proof.json" "$out/bj-public.json"
  for p in b bj; do
    snarkjs groth16 verify "$out/bls_vkey.json" "$out/$p-public.json" "$out/$p-proof.json" ||
      fail "snarkjs rejected the $p proof with circom-setup's BLS12-381 key"
  done
  echo "BLS12-381: circom-setup's key proved by zkgpu and by snarkjs, both verified by snarkjs"
  refused "a BN254 witness for a BLS12-381 key" "$out" "$FIX/merkle_bls12381.zkey" "$FIX/merkle.wtns"
}

# snarkjs verifies each (public.json, proof.json) pair against VKEY (its library, in one
# node process); fails on the first it rejects.
verify() {
  tools
  node -e '
    const snarkjs = require(process.argv[1]);
    const fs = require("fs");
    const read = (f) => JSON.parse(fs.readFileSync(f, "utf8"));
    (async () => {
      const vk = read(process.argv[2]);
      const a = process.argv.slice(3);
      for (let i = 0; i + 1 < a.length; i += 2) {
        if (!(await snarkjs.groth16.verify(vk, read(a[i]), read(a[i + 1])))) {
          console.error("snarkjs rejected " + a[i + 1]);
          process.exit(1);
        }
      }
      console.error("snarkjs verified " + Math.floor(a.length / 2) + " proof(s)");
      process.exit(0);
    })().catch((e) => { console.error(e); process.exit(1); });
  ' "$TOOLS/node_modules/snarkjs" "$@"
}

case ${1:-test} in
  test) test_ ;;
  verify) shift; verify "$@" ;;
  fixtures) shift; fixtures "$@" ;;
  tools) tools ;;
  *) echo "usage: scripts/circom.sh [test|fixtures [CURVE...]|tools|verify VKEY PUBLIC PROOF...]" >&2; exit 2 ;;
esac
