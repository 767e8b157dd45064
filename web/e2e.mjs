// End-to-end test of the page in headless Chromium: serves web/, opens the page with
// Chromium's software WebGPU adapter (SwiftShader), waits for the page's verdict in its
// title, prints the table and exits 0 only when every result equals arkworks'.
// Driven over the DevTools protocol on a pipe (no npm packages).
// `node web/e2e.mjs [--msm LOG2] [--ntt LOG2] [--timeout SECONDS]`; env CHROMIUM overrides
// the browser binary.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "./serve.mjs";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const logMsm = Number(arg("msm", 10));
const logNtt = Number(arg("ntt", 12));
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
const url = `http://127.0.0.1:${server.address().port}/index.html?msm=${logMsm}&ntt=${logNtt}`;
const profile = mkdtempSync(join(tmpdir(), "zkgpu-chromium-"));
const browser = spawn(chromium, [
  "--headless=new", "--no-sandbox", "--enable-unsafe-webgpu",
  `--user-data-dir=${profile}`, "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--remote-debugging-pipe", "about:blank",
], { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] });
let stderr = "";
browser.stderr.on("data", (d) => { stderr += d; });

// DevTools protocol over fds 3 (to the browser) and 4 (from it), NUL-separated JSON.
let nextId = 1;
const pending = new Map();
let buffered = "";
browser.stdio[4].on("data", (chunk) => {
  buffered += chunk;
  let end;
  while ((end = buffered.indexOf("\0")) >= 0) {
    const msg = JSON.parse(buffered.slice(0, end));
    buffered = buffered.slice(end + 1);
    if (msg.id && pending.has(msg.id)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      msg.error ? reject(new Error(JSON.stringify(msg.error))) : resolve(msg.result);
    } else if (msg.method === "Runtime.consoleAPICalled") {
      console.log(`[page console] ${msg.params.args.map((a) => a.value ?? a.description).join(" ")}`);
    } else if (msg.method === "Runtime.exceptionThrown") {
      console.log(`[page exception] ${JSON.stringify(msg.params.exceptionDetails.exception?.description ?? msg.params.exceptionDetails.text)}`);
    }
  }
});
const send = (method, params = {}, sessionId) => new Promise((resolve, reject) => {
  const id = nextId++;
  pending.set(id, { resolve, reject });
  browser.stdio[3].write(JSON.stringify({ id, method, params, sessionId }) + "\0");
});

let code = 1;
const exited = new Promise((resolve) => browser.on("exit", resolve));
const cleanup = async () => {
  // Close politely (the browser's helpers still write to the profile), then make sure.
  send("Browser.close").catch(() => {});
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  browser.kill("SIGKILL");
  server.close();
  try {
    rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  } catch (e) {
    console.error(`warning: could not remove ${profile}: ${e.message}`);
  }
};
const deadline = setTimeout(() => {
  console.error(`error: no verdict from the page within ${timeoutS} s`);
  if (stderr) console.error(`chromium stderr (tail):\n${stderr.slice(-2000)}`);
  cleanup().then(() => process.exit(1));
}, timeoutS * 1000);

try {
  const { targetId } = await send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
  await send("Runtime.enable", {}, sessionId);
  console.log(`chromium: ${chromium}\npage: ${url}`);
  await send("Page.navigate", { url }, sessionId);
  const evaluate = async (expression) =>
    (await send("Runtime.evaluate", { expression, returnByValue: true }, sessionId)).result.value;
  let title = "";
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    title = (await evaluate("document.title")) ?? "";
    if (/^zkgpu: (PASS|FAIL|ERROR)/.test(title)) break;
  }
  const status = await evaluate("document.getElementById('status').textContent");
  const report = await evaluate("JSON.stringify(window.zkgpuReport ?? null)");
  console.log(`page title: ${title}\npage status: ${status}`);
  const r = JSON.parse(report);
  if (r) {
    console.log(`${"computation".padEnd(34)} ${"n".padStart(7)} ${"first ms".padStart(10)} ` +
      `${"GPU ms".padStart(10)} ${"CPU ms".padStart(10)}  check`);
    for (const row of r.rows) {
      console.log(`${row.what.padEnd(34)} ${String(row.n).padStart(7)} ` +
        `${row.first_ms.toFixed(1).padStart(10)} ${row.gpu_ms.toFixed(1).padStart(10)} ` +
        `${row.cpu_ms.toFixed(1).padStart(10)}  ${row.ok ? "equal to arkworks" : "DIFFERS"}`);
    }
  }
  code = title === "zkgpu: PASS" && r && r.ok && r.rows.length === 4 ? 0 : 1;
} catch (e) {
  console.error(`error: ${e.message}`);
}
clearTimeout(deadline);
await cleanup();
process.exit(code);
