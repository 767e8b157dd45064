// zkgpu's proving API for web pages: Groth16 proofs (BLS12-381) of the Poseidon Merkle paths
// circuit compiled into the module, on the page's WebGPU device. docs/web.md describes it.
//
//   import { prove, verify } from "./zkgpu.js";
//   const keyBytes = new Uint8Array(await (await fetch("merkle.pk")).arrayBuffer());
//   const { proof, publicInputs, timings } = await prove(keyBytes, inputs);
//   const ok = await verify(keyBytes, publicInputs, proof);
//
// keyBytes: an ark-serialize (compressed) ProvingKey<Bls12_381>; inputs: { paths: [{ leaf:
// [4 decimal strings], siblings: [decimal, leaf level first], is_right: [booleans] }] };
// proof: 192 bytes (ark-serialize, compressed); publicInputs: the roots, decimal. The key is
// read and uploaded once per keyBytes object and kept for the next calls.
//
// circom circuits (BN254), as snarkjs.groth16.prove(zkey, wtns) does, on the GPU:
//
//   import { groth16Prove } from "./zkgpu.js";
//   const { proof, publicSignals } = await groth16Prove(zkeyBytes, wtnsBytes);
//
// zkeyBytes: a snarkjs Groth16 .zkey; wtnsBytes: a .wtns witness (snarkjs wtns calculate,
// or circom's witness calculator); proof and publicSignals: snarkjs' objects, for
// snarkjs.groth16.verify or a Solidity verifier.
import init, { CircomProver, Prover, merkle_inputs, merkle_key } from "./pkg/zkgpu_web.js";

let module;
const provers = new WeakMap();

// Loads the wasm module once (every function below awaits it).
export async function ready() {
  module ??= init();
  await module;
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
    throw e;
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
  const out = JSON.parse(await p.prove(text, seed));
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

const circomProvers = new WeakMap();

// The CircomProver of zkeyBytes: read and uploaded on first use (readMs, prepareMs), then
// reused.
export async function loadCircom(zkeyBytes) {
  await ready();
  let p = circomProvers.get(zkeyBytes);
  if (!p) {
    p = CircomProver.load(zkeyBytes);
    circomProvers.set(zkeyBytes, p);
  }
  try {
    return await p;
  } catch (e) {
    circomProvers.delete(zkeyBytes);
    throw e;
  }
}

// snarkjs.groth16.prove on the page's WebGPU: resolves to { proof, publicSignals, timings }
// with proof and publicSignals in snarkjs' shapes; r and s from crypto.getRandomValues unless
// options.seed (32 bytes) fixes them. Rejects with the reason (a malformed or foreign key, a
// witness of another circuit or that does not satisfy it, no WebGPU adapter).
export async function groth16Prove(zkeyBytes, wtnsBytes, options = {}) {
  const first = !circomProvers.has(zkeyBytes);
  const p = await loadCircom(zkeyBytes);
  const seed = options.seed ?? crypto.getRandomValues(new Uint8Array(32));
  const out = JSON.parse(await p.prove(wtnsBytes, seed));
  const timings = { ...out.times, keyReadMs: first ? p.readMs : 0, keyUploadMs: first ? p.prepareMs : 0 };
  return { proof: out.proof, publicSignals: out.publicSignals, timings };
}

// Whether a snarkjs proof verifies for publicSignals against zkeyBytes' verifying key.
export async function groth16Verify(zkeyBytes, publicSignals, proof) {
  const p = await loadCircom(zkeyBytes);
  return p.verify(JSON.stringify(publicSignals), JSON.stringify(proof));
}

// The CPU prover's proof (ark-groth16 with circom's reduction, in the module) of the same
// witness for the same seed: what groth16Prove's proof must equal.
export async function groth16ReferenceProof(zkeyBytes, wtnsBytes, seed) {
  const p = await loadCircom(zkeyBytes);
  return JSON.parse(p.reference(wtnsBytes, seed));
}
