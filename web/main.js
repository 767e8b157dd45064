// Runs the suite of web/src/lib.rs and shows it. The title ends as "zkgpu: PASS",
// "zkgpu: FAIL ..." or "zkgpu: ERROR ..." for scripts that drive the page (scripts/web-e2e.mjs);
// window.zkgpuReport holds the report.
import init, { run, cpu_msm_ms } from "./pkg/zkgpu_web.js";

const status = document.getElementById("status");
const params = new URLSearchParams(location.search);
const logMsm = Number(params.get("msm") ?? 10);
const logNtt = Number(params.get("ntt") ?? 12);
// A Groth16 proof of Poseidon Merkle paths of this depth in 2^prove constraints (0: none).
const logProve = Number(params.get("prove") ?? 10);
const depth = Number(params.get("depth") ?? 2);

function finish(title, text) {
  status.textContent = text;
  document.title = `zkgpu: ${title}`;
}

try {
  await init();
  const adapter = navigator.gpu ? await navigator.gpu.requestAdapter() : null;
  if (!adapter) {
    const ms = cpu_msm_ms(10);
    const why = navigator.gpu ? "offers no WebGPU adapter" : "has no WebGPU (navigator.gpu)";
    finish("ERROR no WebGPU adapter", `This browser ${why}. The wasm module loaded; arkworks ` +
      `alone ran a 2^10 MSM in it in ${ms.toFixed(1)} ms.`);
  } else {
    const proof = logProve > 0 ? `, a Groth16 proof of 2^${logProve} constraints` : "";
    status.textContent = `running: MSM of 2^${logMsm} points, NTTs of 2^${logNtt} elements${proof} ...`;
    const report = JSON.parse(await run(logMsm, logNtt, logProve, depth));
    window.zkgpuReport = report;
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
