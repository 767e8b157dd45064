// The worker's side of zkgpu/worker (worker.js starts it as a module worker): keys loaded
// and proofs made here, off the page's main thread, with this file's own copy of the wasm
// module and its own WebGPU device. Messages: { id, op, args } in, { id, ok, result | error }
// out; byte results and inputs travel as transferred ArrayBuffers.
import { ZkgpuError, groth16Prove, loadCircomKey } from "./zkgpu.js";

const keys = new Map();
let nextHandle = 1;

function keyOf(handle) {
  const key = keys.get(handle);
  if (!key) throw new ZkgpuError("FREED", "this key was freed (loadCircomKey it again)");
  return key;
}

const ops = {
  async load({ zkey, options }) {
    const key = await loadCircomKey(zkey, options);
    const handle = nextHandle++;
    keys.set(handle, key);
    const { backend, constraints, readMs, prepareMs, fallbackReason } = key;
    return { handle, backend, constraints, readMs, prepareMs, fallbackReason };
  },
  prove: ({ handle, wtns, options }) => keyOf(handle).prove(wtns, options),
  verify: ({ handle, publicSignals, proof }) => keyOf(handle).verify(publicSignals, proof),
  free({ handle }) {
    keys.get(handle)?.free();
    keys.delete(handle);
  },
  groth16Prove: ({ zkey, wtns, options }) => groth16Prove(zkey, wtns, options),
};

self.onmessage = async ({ data }) => {
  const { id, op, args } = data;
  try {
    if (!ops[op]) throw new ZkgpuError("INVALID_INPUT", `unknown operation ${op}`);
    const result = await ops[op](args);
    self.postMessage({ id, ok: true, result });
  } catch (e) {
    const code = typeof e?.code === "string" ? e.code : "INTERNAL";
    self.postMessage({ id, ok: false, error: { code, message: String(e?.message ?? e) } });
  }
};
