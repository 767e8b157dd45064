// Runs the suite of web/src/lib.rs (MSM, NTTs), then a Groth16 proof through the page's
// proving API (zkgpu.js), and shows them. The title ends as "zkgpu: PASS", "zkgpu: FAIL ..."
// or "zkgpu: ERROR ..." for scripts that drive the page (web/e2e.mjs); window.zkgpuReport
// holds the report.
import { cpu_msm_ms, run } from "./pkg/zkgpu_web.js";
import { groth16Prove, groth16ReferenceProof, groth16Verify, load, loadCircom, merkleInputs,
  merkleKey, prove, ready, referenceProof, verify } from "./zkgpu.js";

const status = document.getElementById("status");
const params = new URLSearchParams(location.search);
const logMsm = Number(params.get("msm") ?? 10);
const logNtt = Number(params.get("ntt") ?? 12);
// A Groth16 proof of Poseidon Merkle paths of this depth in 2^prove constraints (0: none).
const logProve = Number(params.get("prove") ?? 10);
const depth = Number(params.get("depth") ?? 2);
// A circom proof of pkg/circom/NAME.zkey and NAME.wtns (scripts/web.sh copies the fixtures
// there; "none": no circom proof).
const circom = params.get("circom") ?? "merkle";

function finish(title, text) {
  status.textContent = text;
  document.title = `zkgpu: ${title}`;
}

// The proving key: the server's keys/merkle-K-D.pk (scripts/web.sh build writes the default
// one), else made in the page.
async function provingKey() {
  const t = performance.now();
  const res = await fetch(`pkg/keys/merkle-${logProve}-${depth}.pk`).catch(() => null);
  if (res?.ok) {
    return { bytes: new Uint8Array(await res.arrayBuffer()), source: "served", ms: performance.now() - t };
  }
  const bytes = await merkleKey(logProve, depth);
  return { bytes, source: "made in the page", ms: performance.now() - t };
}

// Two proofs through prove(keyBytes, inputs) for a fixed seed, ark-groth16's proof of the
// same inputs for the same seed, and the verification of both proofs.
async function proofRow() {
  const key = await provingKey();
  const inputs = await merkleInputs(logProve, depth, 0x51ab77c3);
  const seed = new Uint8Array(32).fill(7);
  const first = await prove(key.bytes, inputs, { seed });
  const second = await prove(key.bytes, inputs, { seed });
  const t = performance.now();
  const want = await referenceProof(key.bytes, inputs, seed);
  const cpuMs = performance.now() - t;
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  const verified = await verify(key.bytes, first.publicInputs, first.proof) &&
    await verify(key.bytes, second.publicInputs, second.proof);
  const prover = await load(key.bytes);
  const row = {
    what: `Groth16 proof, Merkle paths (${first.publicInputs.length} of depth ${depth})`,
    n: prover.domainSize,
    first_ms: first.timings.totalMs,
    gpu_ms: second.timings.totalMs,
    cpu_ms: cpuMs,
    ok: verified && same(first.proof, want) && same(second.proof, want),
  };
  const f = (x) => x.toFixed(1);
  const detail = `Proving key ${key.source} (${key.bytes.length} bytes, ${f(key.ms)} ms), ` +
    `read ${f(first.timings.keyReadMs)} ms, uploaded ${f(first.timings.keyUploadMs)} ms. ` +
    `First proof: synthesis with matrices ${f(first.timings.synthesisMs)} ms, GPU ` +
    `${f(first.timings.gpuMs)} ms (pipelines built), verified ${f(first.timings.verifyMs)} ms. ` +
    `Second: synthesis ${f(second.timings.synthesisMs)} ms, GPU ${f(second.timings.gpuMs)} ms, ` +
    `verified ${f(second.timings.verifyMs)} ms. ark-groth16 in this module: ${f(cpuMs)} ms. ` +
    `Verified: ${verified}.`;
  return { row, proof: { keySource: key.source, keyBytes: key.bytes.length, first: first.timings,
    second: second.timings, verified, detail } };
}

// A circom proof through groth16Prove(zkey, wtns) twice for a fixed seed, the CPU prover's
// proof for the same seed, and the verification of both; the proof and its public signals
// go in the report for web/e2e.mjs to check with snarkjs.
async function circomRow() {
  const bytes = async (ext) => {
    const res = await fetch(`pkg/circom/${circom}.${ext}`);
    if (!res.ok) throw new Error(`pkg/circom/${circom}.${ext}: ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  };
  const [zkey, wtns] = [await bytes("zkey"), await bytes("wtns")];
  const seed = new Uint8Array(32).fill(9);
  const first = await groth16Prove(zkey, wtns, { seed });
  const second = await groth16Prove(zkey, wtns, { seed });
  const t = performance.now();
  const want = await groth16ReferenceProof(zkey, wtns, seed);
  const cpuMs = performance.now() - t;
  const same = JSON.stringify(first.proof) === JSON.stringify(want) &&
    JSON.stringify(second.proof) === JSON.stringify(want);
  const verified = await groth16Verify(zkey, first.publicSignals, first.proof);
  const prover = await loadCircom(zkey);
  const row = {
    what: `circom Groth16 proof (BN254), ${circom}.zkey`,
    n: prover.constraints,
    first_ms: first.timings.totalMs,
    gpu_ms: second.timings.totalMs,
    cpu_ms: cpuMs,
    ok: same && verified && first.backend === "webgpu",
  };
  const f = (x) => x.toFixed(1);
  const detail = `circom: ${circom}.zkey (${zkey.length} bytes) read ${f(first.timings.keyReadMs)} ms, ` +
    `uploaded ${f(first.timings.keyUploadMs)} ms; first proof ${f(first.timings.totalMs)} ms ` +
    `(proof ${f(first.timings.proveMs)} ms on ${first.backend}, pipelines built), second ${f(second.timings.totalMs)} ms; ` +
    `the CPU prover ${f(cpuMs)} ms; equal: ${same}; verified: ${verified}.`;
  return { row, circom: { proof: first.proof, publicSignals: first.publicSignals, detail } };
}

function show(report) {
  const body = document.querySelector("#results tbody");
  for (const r of report.rows) {
    const tr = document.createElement("tr");
    const cells = [r.what, r.n, r.first_ms.toFixed(1), r.gpu_ms.toFixed(1), r.cpu_ms.toFixed(1),
      (r.cpu_ms / r.gpu_ms).toFixed(2), r.ok ? "equal to arkworks" : "DIFFERS"];
    for (const c of cells) {
      const td = document.createElement("td");
      td.textContent = c;
      tr.appendChild(td);
    }
    tr.lastChild.className = r.ok ? "ok" : "bad";
    body.appendChild(tr);
  }
  document.getElementById("results").hidden = false;
  const details = [report.proof?.detail, report.circom?.detail].filter(Boolean);
  if (details.length) document.getElementById("proof").textContent = details.join(" ");
}

try {
  await ready();
  const adapter = navigator.gpu ? await navigator.gpu.requestAdapter() : null;
  if (!adapter) {
    const ms = cpu_msm_ms(10);
    const why = navigator.gpu ? "offers no WebGPU adapter" : "has no WebGPU (navigator.gpu)";
    finish("ERROR no WebGPU adapter", `This browser ${why}. The wasm module loaded; arkworks ` +
      `alone ran a 2^10 MSM in it in ${ms.toFixed(1)} ms.`);
  } else {
    const proof = logProve > 0 ? `, a Groth16 proof of 2^${logProve} constraints` : "";
    status.textContent = `running: MSM of 2^${logMsm} points, NTTs of 2^${logNtt} elements${proof} ...`;
    const report = JSON.parse(await run(logMsm, logNtt, 0, depth));
    if (logProve > 0) {
      const { row, proof } = await proofRow();
      report.rows.push(row);
      report.proof = proof;
      report.ok = report.ok && row.ok;
    }
    if (circom !== "none") {
      const { row, circom: c } = await circomRow();
      report.rows.push(row);
      report.circom = c;
      report.ok = report.ok && row.ok;
    }
    window.zkgpuReport = report;
    show(report);
    // Browsers hide the adapter's name from wgpu; the page may read vendor and architecture.
    const info = adapter.info ?? {};
    const name = report.adapter || [info.vendor, info.architecture].filter(Boolean).join(" ");
    const where = `adapter: ${name || "unnamed"} (${report.backend}` +
      `${(info.isFallbackAdapter ?? adapter.isFallbackAdapter) ? ", software fallback" : ""})`;
    finish(report.ok ? "PASS" : "FAIL results differ",
      `${where}. ${report.ok ? "Every result equals arkworks'." : "Some results differ from arkworks'."}`);
  }
} catch (e) {
  window.zkgpuError = String(e);
  finish(`ERROR ${e}`, `error: ${e}`);
}
