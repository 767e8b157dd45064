// End-to-end test of the page in headless Chromium: serves web/, opens the page with
// Chromium's software WebGPU adapter (SwiftShader), waits for the page's verdict in its
// title, prints the table and exits 0 only when every result equals arkworks'.
// Driven by playwright-core (web/package.json; `scripts/web.sh test` installs it).
// `node web/e2e.mjs [--msm LOG2] [--ntt LOG2] [--prove LOG2] [--depth D] [--circom NAME]
// [--timeout SECONDS]` (`--prove 0`: no Groth16 proof; `--circom none`: no circom proof, else
// the page proves the fixture NAME of crates/circom/tests/fixtures and snarkjs, from
// target/circom-tools, verifies it here); env CHROMIUM overrides the browser binary.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { chromium as driver } from "playwright-core";
import { serve } from "./serve.mjs";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const logMsm = Number(arg("msm", 10));
const logNtt = Number(arg("ntt", 12));
const logProve = Number(arg("prove", 10));
const depth = Number(arg("depth", 2));
const circom = arg("circom", "merkle");
const timeoutS = Number(arg("timeout", 600));
const chromium = process.env.CHROMIUM ??
  ["/usr/lib/chromium/chromium", "/usr/bin/chromium"].find(existsSync);
if (!chromium) {
  console.error("error: no Chromium found (apt-get install chromium; or set CHROMIUM)");
  process.exit(2);
}

const server = await serve(0);
// The server answers a malformed URL with 400 and keeps serving.
{
  const base = `http://127.0.0.1:${server.address().port}`;
  const bad = await fetch(`${base}/%E0%A4%A`);
  const good = await fetch(`${base}/index.html`);
  if (bad.status !== 400 || good.status !== 200) {
    console.error(`error: the server answered a malformed URL with ${bad.status}, then the page with ${good.status}`);
    process.exit(1);
  }
  console.log("server: a malformed URL gets 400, and the page is still served");
}
const url = `http://127.0.0.1:${server.address().port}/index.html?msm=${logMsm}&ntt=${logNtt}&prove=${logProve}&depth=${depth}&circom=${circom}`;
const quiet = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
  "--disable-sync"];
const browser = await driver.launch({
  executablePath: chromium,
  headless: true,
  args: [...quiet, "--enable-unsafe-webgpu"],
});
let code = 1;
try {
  const page = await browser.newPage();
  page.on("console", (m) => console.log(`[page console] ${m.text()}`));
  page.on("pageerror", (e) => console.log(`[page exception] ${e.message}`));
  console.log(`chromium: ${chromium} (${browser.version()})\npage: ${url}`);
  await page.goto(url);
  await page.waitForFunction(() => /^zkgpu: (PASS|FAIL|ERROR)/.test(document.title), null, {
    timeout: timeoutS * 1000,
    polling: 500,
  });
  const title = await page.title();
  const status = await page.textContent("#status");
  const r = await page.evaluate(() => window.zkgpuReport ?? null);
  console.log(`page title: ${title}\npage status: ${status}`);
  if (r) {
    console.log(`${"computation".padEnd(44)} ${"n".padStart(7)} ${"first ms".padStart(10)} ` +
      `${"GPU ms".padStart(10)} ${"CPU ms".padStart(10)}  check`);
    for (const row of r.rows) {
      const ms = (x) => (x ?? NaN).toFixed(1).padStart(10);
      console.log(`${row.what.padEnd(44)} ${String(row.n).padStart(7)} ` +
        `${ms(row.first_ms)} ${ms(row.gpu_ms)} ${ms(row.cpu_ms)}  ` +
        `${row.ok ? "equal to arkworks" : "DIFFERS"}`);
    }
  }
  const rows = 4 + (logProve > 0 ? 1 : 0) + (circom !== "none" ? 1 : 0);
  code = title === "zkgpu: PASS" && r && r.ok && r.rows.length === rows ? 0 : 1;
  if (logProve > 0 && r?.proof) {
    console.log(`proof: ${r.proof.detail}`);
    // Where the server has the key (scripts/web.sh writes it), the page must have used it.
    const served = existsSync(fileURLToPath(new URL(`pkg/keys/merkle-${logProve}-${depth}.pk`, import.meta.url)));
    if (served && r.proof.keySource !== "served") {
      console.error(`error: the server has the proving key, but the page's key was ${r.proof.keySource}`);
      code = 1;
    }
  } else if (logProve > 0) {
    code = 1;
  }
  if (circom !== "none") code = (await snarkjsVerifies(r?.circom)) ? code : 1;
  // The npm package's API (check/package.html): with WebGPU, then in a browser started
  // without --enable-unsafe-webgpu (navigator.gpu there, no adapter).
  code = (await packageChecks(browser, "on")) ? code : 1;
  const noGpu = await driver.launch({
    executablePath: chromium,
    headless: true,
    args: quiet,
  });
  try {
    code = (await packageChecks(noGpu, "off")) ? code : 1;
  } finally {
    await noGpu.close();
  }
} catch (e) {
  console.error(`error: ${e.message}`);
  code = 1;
}

// Runs check/package.html in `b` (?gpu=on|off) and prints each check; true when all pass.
async function packageChecks(b, gpu) {
  const page = await b.newPage();
  page.on("console", (m) => console.log(`[package ${gpu} console] ${m.text()}`));
  page.on("pageerror", (e) => console.log(`[package ${gpu} exception] ${e.message}`));
  await page.goto(`http://127.0.0.1:${server.address().port}/check/package.html?gpu=${gpu}`);
  await page.waitForFunction(() => /^package: (PASS|FAIL)/.test(document.title), null, {
    timeout: timeoutS * 1000,
    polling: 500,
  });
  const r = await page.evaluate(() => window.zkgpuPackage);
  console.log(`npm package API, WebGPU ${gpu}:`);
  for (const c of r.results) console.log(`  ${c.ok ? "ok  " : "FAIL"} ${c.name}${c.detail ? `: ${c.detail}` : ""}`);
  await page.close();
  return r.ok;
}

// snarkjs verifies the page's circom proof with the fixture's verification key, and rejects
// it with a public signal changed.
async function snarkjsVerifies(c) {
  if (!c) {
    console.error("error: the page made no circom proof");
    return false;
  }
  console.log(c.detail);
  const root = new URL("../", import.meta.url);
  const target = process.env.ZK_TARGET ?? fileURLToPath(new URL("target", root));
  const cli = `${target}/circom-tools/node_modules/snarkjs/build/main.cjs`;
  if (!existsSync(cli)) {
    console.error("error: snarkjs is not installed (bash scripts/circom.sh tools)");
    return false;
  }
  const snarkjs = createRequire(import.meta.url)(cli);
  const vkey = JSON.parse(readFileSync(new URL(`crates/circom/tests/fixtures/${circom}_vkey.json`, root)));
  const ok = await snarkjs.groth16.verify(vkey, c.publicSignals, c.proof, { info() {}, error() {} });
  const tampered = [...c.publicSignals];
  tampered[0] = (BigInt(tampered[0]) + 1n).toString();
  const bad = await snarkjs.groth16.verify(vkey, tampered, c.proof, { info() {}, error() {} });
  console.log(`snarkjs: the page's circom proof ${ok ? "verifies" : "DOES NOT VERIFY"}; with a ` +
    `public signal changed it is ${bad ? "ACCEPTED" : "rejected"}`);
  return ok && !bad;
}
await browser.close();
server.close();
process.exit(code);
