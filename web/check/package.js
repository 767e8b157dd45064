// The npm package's API in a real browser (web/e2e.mjs loads package.html twice: with
// WebGPU, and with WebGPU disabled, where every proof must come from the CPU fallback).
import { ZkgpuError, groth16Prove, groth16ReferenceProof, hasWebGpu, loadCircomKey } from "../zkgpu.js";
import { createProverWorker } from "../worker.js";

const gpuOff = new URLSearchParams(location.search).get("gpu") === "off";
const want = gpuOff ? "cpu" : "webgpu";
const results = [];
const log = (s) => {
  document.getElementById("log").textContent += `${s}\n`;
};
const check = (name, ok, detail = "") => {
  results.push({ name, ok: !!ok, detail });
  log(`${ok ? "ok  " : "FAIL"} ${name}${detail ? `: ${detail}` : ""}`);
};
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const rejection = (p) => p.then(() => null, (e) => e);
const about = (r) =>
  `backend ${r.backend}${r.fallbackReason ? ` (fallback: ${r.fallbackReason})` : ""}, ${r.timings.totalMs.toFixed(1)} ms`;

async function run() {
  // Started without --enable-unsafe-webgpu, Chromium keeps navigator.gpu but offers no adapter.
  const adapter = hasWebGpu() ? await navigator.gpu.requestAdapter() : null;
  check(gpuOff ? "the browser offers no WebGPU adapter" : "the browser has a WebGPU adapter", !!adapter === !gpuOff);
  const dir = new URL("../pkg/circom/", location.href);
  const zkeyUrl = new URL("merkle.zkey", dir).href;
  const wtnsUrl = new URL("merkle.wtns", dir).href;
  const seed = new Uint8Array(32).fill(5);
  const reference = await groth16ReferenceProof(zkeyUrl, wtnsUrl, seed);

  // The main thread: URL inputs (a string and a URL object), as snarkjs takes them.
  const a = await groth16Prove(zkeyUrl, new URL(wtnsUrl), { seed });
  check("main thread, URL inputs: the CPU prover's proof", same(a.proof, reference) && a.backend === want, about(a));
  check("fallback reported", gpuOff ? typeof a.fallbackReason === "string" : a.fallbackReason === undefined);

  // A key handle, an ArrayBuffer witness, free().
  const key = await loadCircomKey(zkeyUrl);
  const wtns = await (await fetch(wtnsUrl)).arrayBuffer();
  const b = await key.prove(wtns, { seed });
  const b2 = await key.prove(new Uint8Array(wtns), { seed });
  check("key handle, ArrayBuffer and Uint8Array witnesses", same(b.proof, reference) && same(b2.proof, reference) &&
    b.backend === want && (await key.verify(b.publicSignals, b.proof)), about(b2));
  key.free();
  const freed = await rejection(key.prove(wtns, { seed }));
  check("a freed key rejects with FREED", freed instanceof ZkgpuError && freed.code === "FREED", freed?.message);

  // Errors: Error objects with stable codes.
  const errors = [
    ["a malformed witness", groth16Prove(zkeyUrl, new Uint8Array([1, 2, 3]), { seed }), "INVALID_WITNESS"],
    ["a missing URL", groth16Prove(new URL("missing.zkey", dir), wtnsUrl), "FETCH"],
    ["a witness as the key", groth16Prove(wtnsUrl, wtnsUrl), "INVALID_KEY"],
    ["another circuit's witness", groth16Prove(zkeyUrl, new URL("multiplier.wtns", dir)), "WITNESS_MISMATCH"],
    ["a number as the key", groth16Prove(42, wtnsUrl), "INVALID_INPUT"],
  ];
  for (const [what, p, code] of errors) {
    const e = await rejection(p);
    check(`${what}: ${code}`, e instanceof Error && e instanceof ZkgpuError && e.code === code, e?.message);
  }

  if (gpuOff) {
    // Asked for WebGPU alone: NO_WEBGPU, no fallback.
    const e = await rejection(loadCircomKey(zkeyUrl, { backend: "webgpu" }));
    check("backend webgpu without an adapter: NO_WEBGPU", e instanceof ZkgpuError && e.code === "NO_WEBGPU", e?.message);
    // A page without navigator.gpu at all falls back too, without asking for an adapter.
    Object.defineProperty(Navigator.prototype, "gpu", { get: () => undefined, configurable: true });
    const k = await loadCircomKey(zkeyUrl);
    const r = await k.prove(wtnsUrl, { seed });
    k.free();
    check("no navigator.gpu: the CPU prover's proof", !hasWebGpu() && r.backend === "cpu" &&
      /navigator\.gpu/.test(r.fallbackReason ?? "") && same(r.proof, reference), about(r));
  }

  // The worker: a key loaded there from a URL, a witness transferred, a URL proof, an error.
  const worker = createProverWorker();
  const wk = await worker.loadCircomKey(zkeyUrl);
  const bytes = new Uint8Array(await (await fetch(wtnsUrl)).arrayBuffer());
  const c = await wk.prove(bytes, { seed });
  check("worker: key handle, transferred witness", same(c.proof, reference) && c.backend === want &&
    bytes.byteLength === 0, `${about(c)}, the caller's witness now ${bytes.byteLength} bytes`);
  const kept = new Uint8Array(await (await fetch(wtnsUrl)).arrayBuffer());
  const d = await worker.groth16Prove(zkeyUrl, kept, { seed, transfer: false });
  check("worker: URL key, copied witness", same(d.proof, reference) && kept.byteLength > 0, about(d));
  const e = await rejection(worker.groth16Prove(zkeyUrl, new Uint8Array([1]), { seed }));
  check("worker: errors keep their code", e instanceof ZkgpuError && e.code === "INVALID_WITNESS", e?.message);
  wk.free();
  const gone = await rejection(wk.prove(wtnsUrl, { seed }));
  check("worker: a freed key rejects with FREED", gone?.code === "FREED");
  worker.terminate();
}

run()
  .catch((e) => check("the checks ran to the end", false, `${e?.code ?? ""} ${e?.message ?? e}`))
  .finally(() => {
    const ok = results.length > 0 && results.every((r) => r.ok);
    window.zkgpuPackage = { ok, results };
    document.title = `package: ${ok ? "PASS" : "FAIL"}`;
  });
