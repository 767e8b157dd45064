// zkgpu off the main thread (the package's `zkgpu/worker` entry): the same circom API as
// zkgpu.js, run in a module worker (worker-main.js) so that reading a key, uploading it and
// proving never block the page. Types in worker.d.ts.
//
//   import { createProverWorker } from "zkgpu/worker";
//   const worker = createProverWorker();
//   const key = await worker.loadCircomKey("circuit.zkey");       // fetched in the worker
//   const { proof, publicSignals } = await key.prove(wtnsBytes);  // wtnsBytes transferred
//   key.free(); worker.terminate();
//
// Inputs given as Uint8Array or ArrayBuffer are transferred to the worker (the caller's
// copy becomes empty) unless options.transfer is false; URL inputs are fetched in the worker.
import { ZkgpuError } from "./zkgpu.js";

// The buffers to transfer for inputs, unless transfer is false.
function transferables(inputs, transfer) {
  if (transfer === false) return [];
  const out = [];
  for (const x of inputs) {
    const buffer = x instanceof ArrayBuffer ? x : ArrayBuffer.isView(x) ? x.buffer : null;
    if (buffer && !out.includes(buffer)) out.push(buffer);
  }
  return out;
}

// A source as it crosses to the worker: URLs as absolute strings (URL objects do not clone,
// and the worker would resolve a relative one against its own script), bytes as they are.
function wire(source) {
  if (source instanceof URL) return source.href;
  if (typeof source === "string") return new URL(source, globalThis.location?.href).href;
  return source;
}

// Functions and handles don't cross to a worker: options without them.
function plain(options = {}) {
  const { seed, backend } = options;
  return { seed, backend };
}

// A prover worker: { loadCircomKey, groth16Prove, terminate }.
export function createProverWorker() {
  const worker = new Worker(new URL("./worker-main.js", import.meta.url), { type: "module" });
  const pending = new Map();
  let nextId = 1;
  worker.onmessage = ({ data }) => {
    const p = pending.get(data.id);
    if (!p) return;
    pending.delete(data.id);
    if (data.ok) p.resolve(data.result);
    else p.reject(new ZkgpuError(data.error.code, data.error.message));
  };
  worker.onerror = (e) => {
    const err = new ZkgpuError("INTERNAL", `the prover worker failed: ${e.message ?? e}`);
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  const call = (op, args, transfer = []) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, op, args }, transfer);
    });

  class WorkerCircomKey {
    #handle;
    constructor(info) {
      this.#handle = info.handle;
      this.backend = info.backend;
      this.constraints = info.constraints;
      this.readMs = info.readMs;
      this.prepareMs = info.prepareMs;
      if (info.fallbackReason) this.fallbackReason = info.fallbackReason;
    }

    get handle() {
      if (this.#handle === undefined) {
        throw new ZkgpuError("FREED", "this key was freed (loadCircomKey it again)");
      }
      return this.#handle;
    }

    async prove(wtns, options = {}) {
      return call("prove", { handle: this.handle, wtns: wire(wtns), options: plain(options) },
        transferables([wtns], options.transfer));
    }

    async verify(publicSignals, proof) {
      return call("verify", { handle: this.handle, publicSignals, proof });
    }

    free() {
      if (this.#handle === undefined) return;
      call("free", { handle: this.#handle }).catch(() => {});
      this.#handle = undefined;
    }
  }

  return {
    async loadCircomKey(zkey, options = {}) {
      const info = await call("load", { zkey: wire(zkey), options: plain(options) },
        transferables([zkey], options.transfer));
      return new WorkerCircomKey(info);
    },
    groth16Prove(zkey, wtns, options = {}) {
      if (zkey instanceof WorkerCircomKey) return zkey.prove(wtns, options);
      return call("groth16Prove", { zkey: wire(zkey), wtns: wire(wtns), options: plain(options) },
        transferables([zkey, wtns], options.transfer));
    },
    terminate() {
      worker.terminate();
      const err = new ZkgpuError("FREED", "the prover worker was terminated");
      for (const p of pending.values()) p.reject(err);
      pending.clear();
    },
  };
}

let shared;

// snarkjs.groth16.prove in a worker this module starts on first use and keeps.
export function groth16Prove(zkey, wtns, options = {}) {
  shared ??= createProverWorker();
  return shared.groth16Prove(zkey, wtns, options);
}
