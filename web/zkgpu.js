// zkgpu's proving API for web pages (the npm package `zkgpu`; types in zkgpu.d.ts,
// docs/web.md describes it).
//
// circom circuits (BN254), as snarkjs.groth16.prove(zkey, wtns) does, on the page's WebGPU
// device, or on the CPU in the same module where the page has no WebGPU:
//
//   import { groth16Prove } from "zkgpu";
//   const { proof, publicSignals, backend } = await groth16Prove("circuit.zkey", wtnsBytes);
//
// zkey and wtns: a Uint8Array, an ArrayBuffer, a URL or a URL string (fetched), as snarkjs
// takes them; proof and publicSignals: snarkjs' objects, for snarkjs.groth16.verify or a
// Solidity verifier. `loadCircomKey(zkey)` reads (and uploads) a key once and returns a
// handle that proves again and again; `free()` releases it. Errors are ZkgpuError objects
// (an Error with a stable `code`). Off the main thread: `zkgpu/worker` (worker.js).
//
// Groth16 proofs (BLS12-381) of the Poseidon Merkle paths circuit compiled into the module:
//
//   import { prove, verify } from "zkgpu";
//   const keyBytes = new Uint8Array(await (await fetch("merkle.pk")).arrayBuffer());
//   const { proof, publicInputs, timings } = await prove(keyBytes, inputs);
//   const ok = await verify(keyBytes, publicInputs, proof);
//
// keyBytes: an ark-serialize (compressed) ProvingKey<Bls12_381>; inputs: { paths: [{ leaf:
// [4 decimal strings], siblings: [decimal, leaf level first], is_right: [booleans] }] };
// proof: 192 bytes (ark-serialize, compressed); publicInputs: the roots, decimal. The key is
// read and uploaded once per keyBytes object and kept for the next calls.
import init, { CircomProver, Prover, merkle_inputs, merkle_key } from "./pkg/zkgpu_web.js";

let module;
const provers = new WeakMap();

// Every code a ZkgpuError can have (docs/web.md says what each means).
export const ERROR_CODES = Object.freeze(["NO_WEBGPU", "GPU", "INVALID_KEY", "INVALID_WITNESS",
  "WITNESS_MISMATCH", "NOT_SATISFIED", "INVALID_INPUT", "FETCH", "FREED", "INTERNAL"]);

// An Error with a stable `code` (one of ERROR_CODES).
export class ZkgpuError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.name = "ZkgpuError";
    this.code = code;
  }
}

// `e` as a ZkgpuError: the module's errors carry their code; anything else is INTERNAL.
function asError(e) {
  if (e instanceof ZkgpuError) return e;
  const code = typeof e?.code === "string" && ERROR_CODES.includes(e.code) ? e.code : "INTERNAL";
  return new ZkgpuError(code, String(e?.message ?? e), { cause: e });
}

// Runs f, turning whatever it throws into a ZkgpuError.
async function guarded(f) {
  try {
    return await f();
  } catch (e) {
    throw asError(e);
  }
}

// Loads the wasm module once (every function below awaits it).
export async function ready() {
  module ??= init();
  await guarded(() => module);
}

// Whether this page (or worker) has WebGPU at all (an adapter may still be refused).
export function hasWebGpu() {
  return typeof navigator !== "undefined" && !!navigator.gpu;
}

// The bytes of a source: a Uint8Array (as is), an ArrayBuffer or typed array (viewed), or a
// URL / URL string (fetched).
export async function bytesOf(source, what = "input") {
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) {
    return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  }
  if (source instanceof URL || typeof source === "string") {
    let res;
    try {
      res = await fetch(source);
    } catch (e) {
      throw new ZkgpuError("FETCH", `${what}: could not fetch ${source}: ${e.message}`, { cause: e });
    }
    if (!res.ok) throw new ZkgpuError("FETCH", `${what}: ${source} answered ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  }
  throw new ZkgpuError("INVALID_INPUT",
    `${what}: expected a Uint8Array, an ArrayBuffer, a URL or a URL string, got ${typeof source}`);
}

// The Prover of keyBytes: read and uploaded on first use (its readMs and prepareMs say how
// long that took), then reused.
export async function load(keyBytes) {
  await ready();
  let p = provers.get(keyBytes);
  if (!p) {
    p = Prover.load(keyBytes);
    provers.set(keyBytes, p);
  }
  try {
    return await p;
  } catch (e) {
    provers.delete(keyBytes);
    throw asError(e);
  }
}

// Proves inputs against keyBytes. r and s come from 32 random bytes (crypto.getRandomValues)
// unless options.seed (a Uint8Array of 32 bytes) fixes them. Resolves to { proof (Uint8Array),
// publicInputs (decimal strings), timings (ms: key read and upload on first use, inputs,
// synthesis, GPU, verification, total) }; rejects with the reason (a malformed key or
// inputs, inputs of another circuit than the key's, no WebGPU adapter).
export async function prove(keyBytes, inputs, options = {}) {
  const first = !provers.has(keyBytes);
  const p = await load(keyBytes);
  const seed = options.seed ?? crypto.getRandomValues(new Uint8Array(32));
  const text = typeof inputs === "string" ? inputs : JSON.stringify(inputs);
  const out = JSON.parse(await guarded(() => p.prove(text, seed)));
  const timings = { ...out.times, keyReadMs: first ? p.readMs : 0, keyUploadMs: first ? p.prepareMs : 0 };
  return { proof: new Uint8Array(out.proof), publicInputs: out.publicInputs, timings };
}

// Whether proof verifies for publicInputs against keyBytes' verifying key (arkworks, in the
// module).
export async function verify(keyBytes, publicInputs, proof) {
  const p = await load(keyBytes);
  return p.verify(JSON.stringify(publicInputs), proof);
}

// ark-groth16's proof (on the CPU, in the same module) of the same inputs for the same seed:
// what prove's proof must equal.
export async function referenceProof(keyBytes, inputs, seed) {
  const p = await load(keyBytes);
  return p.reference(typeof inputs === "string" ? inputs : JSON.stringify(inputs), seed);
}

// A proving key made in the page (the same key the server's keys/merkle-K-D.pk holds), and
// random inputs for it, for 2^logConstraints constraints of depth-`depth` paths.
export async function merkleKey(logConstraints, depth) {
  await ready();
  return merkle_key(logConstraints, depth);
}

export async function merkleInputs(logConstraints, depth, seed = 1) {
  await ready();
  return JSON.parse(merkle_inputs(logConstraints, depth, seed));
}

// A snarkjs key read (and uploaded) once: what loadCircomKey resolves to.
class CircomKey {
  #inner;
  constructor(inner, fallbackReason) {
    this.#inner = inner;
    this.backend = inner.backend;
    this.constraints = inner.constraints;
    this.readMs = inner.readMs;
    this.prepareMs = inner.prepareMs;
    if (fallbackReason) this.fallbackReason = fallbackReason;
    this.proofs = 0;
  }

  #live() {
    if (!this.#inner) throw new ZkgpuError("FREED", "this key was freed (loadCircomKey it again)");
    return this.#inner;
  }

  // snarkjs.groth16.prove with this key: { proof, publicSignals, backend, timings }.
  async prove(wtns, options = {}) {
    const inner = this.#live();
    const bytes = await bytesOf(wtns, "witness");
    const seed = options.seed ?? crypto.getRandomValues(new Uint8Array(32));
    const out = JSON.parse(await guarded(() => inner.prove(bytes, seed)));
    const first = this.proofs++ === 0;
    const timings = { ...out.times, keyReadMs: first ? this.readMs : 0, keyUploadMs: first ? this.prepareMs : 0 };
    const result = { proof: out.proof, publicSignals: out.publicSignals, backend: out.backend, timings };
    if (this.fallbackReason) result.fallbackReason = this.fallbackReason;
    return result;
  }

  // Whether a snarkjs proof verifies for publicSignals against this key.
  async verify(publicSignals, proof) {
    const inner = this.#live();
    return guarded(() => inner.verify(JSON.stringify(publicSignals), JSON.stringify(proof)));
  }

  // The CPU prover's proof (ark-groth16 with circom's reduction) of the same witness for the
  // same seed: what prove's proof must equal.
  async referenceProof(wtns, seed) {
    const inner = this.#live();
    const bytes = await bytesOf(wtns, "witness");
    return JSON.parse(await guarded(() => inner.reference(bytes, seed)));
  }

  // Releases the key's memory (and its GPU buffers); later calls reject with FREED.
  free() {
    const inner = this.#inner;
    this.#inner = undefined;
    inner?.free();
  }
}

// Reads (and on WebGPU uploads) a snarkjs .zkey: resolves to a key handle. options.backend:
// "auto" (default: WebGPU where the page has an adapter, else the CPU prover, the reason in
// the handle's fallbackReason), "webgpu" or "cpu".
export async function loadCircomKey(zkey, options = {}) {
  const backend = options.backend ?? "auto";
  if (!["auto", "webgpu", "cpu"].includes(backend)) {
    throw new ZkgpuError("INVALID_INPUT", `backend: "auto", "webgpu" or "cpu", not ${backend}`);
  }
  const bytes = await bytesOf(zkey, "key");
  await ready();
  let reason;
  if (backend !== "cpu") {
    if (hasWebGpu()) {
      try {
        return new CircomKey(await CircomProver.load(bytes));
      } catch (e) {
        const err = asError(e);
        if (backend === "webgpu" || err.code !== "NO_WEBGPU") throw err;
        reason = err.message;
      }
    } else if (backend === "webgpu") {
      throw new ZkgpuError("NO_WEBGPU", "this browser has no WebGPU (navigator.gpu)");
    } else {
      reason = "this browser has no WebGPU (navigator.gpu)";
    }
  }
  return new CircomKey(await guarded(() => CircomProver.loadCpu(bytes)), reason);
}

const circomKeys = new WeakMap();

// The key handle of zkey: a handle as is; bytes loaded once per Uint8Array or ArrayBuffer
// object and kept for the next calls; a URL fetched and loaded for this call.
async function circomKeyOf(zkey, options) {
  if (zkey instanceof CircomKey) return { key: zkey, owned: false };
  const cacheable = zkey instanceof Uint8Array || zkey instanceof ArrayBuffer;
  if (!cacheable) return { key: await loadCircomKey(zkey, options), owned: true };
  let p = circomKeys.get(zkey);
  if (!p) {
    p = loadCircomKey(zkey, options);
    circomKeys.set(zkey, p);
  }
  try {
    return { key: await p, owned: false };
  } catch (e) {
    circomKeys.delete(zkey);
    throw e;
  }
}

// The CircomProver of zkeyBytes, read and uploaded on first use (kept for compatibility with
// earlier pages; loadCircomKey is the handle).
export async function loadCircom(zkeyBytes) {
  return (await circomKeyOf(zkeyBytes, {})).key;
}

// Runs f on zkey's handle, freeing a handle loaded for this call alone.
async function withKey(zkey, options, f) {
  const { key, owned } = await circomKeyOf(zkey, options);
  try {
    return await f(key);
  } finally {
    if (owned) key.free();
  }
}

// snarkjs.groth16.prove on the page's WebGPU (or the CPU where there is none): resolves to
// { proof, publicSignals, backend, timings } with proof and publicSignals in snarkjs' shapes;
// r and s from crypto.getRandomValues unless options.seed (32 bytes) fixes them. Rejects with
// a ZkgpuError (a malformed or foreign key, a witness of another circuit or that does not
// satisfy it, a fetch that failed, a GPU error).
export async function groth16Prove(zkey, wtns, options = {}) {
  return withKey(zkey, options, (key) => key.prove(wtns, options));
}

// Whether a snarkjs proof verifies for publicSignals against zkey's verifying key.
export async function groth16Verify(zkey, publicSignals, proof) {
  return withKey(zkey, { backend: "cpu" }, (key) => key.verify(publicSignals, proof));
}

// The CPU prover's proof (ark-groth16 with circom's reduction, in the module) of the same
// witness for the same seed: what groth16Prove's proof must equal.
export async function groth16ReferenceProof(zkey, wtns, seed) {
  return withKey(zkey, { backend: "cpu" }, (key) => key.referenceProof(wtns, seed));
}
