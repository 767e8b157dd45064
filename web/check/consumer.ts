// A consumer of the packed npm package: `scripts/web.sh pack` installs the tarball next to
// this file and type-checks it with `tsc --noEmit` (strict), so the package's exports and
// types agree with how a page uses them.
import {
  ZkgpuError,
  groth16Prove,
  groth16Verify,
  hasWebGpu,
  loadCircomKey,
  type CircomKey,
  type ErrorCode,
  type Groth16Result,
  type SnarkjsProof,
} from "zkgpu";
import { createProverWorker, groth16Prove as proveInWorker } from "zkgpu/worker";

export async function onPage(wtns: Uint8Array): Promise<boolean> {
  const result: Groth16Result = await groth16Prove("circuit.zkey", wtns, { backend: "auto" });
  const proof: SnarkjsProof = result.proof;
  const a: string = proof.pi_a[0];
  const where: "webgpu" | "cpu" = result.backend;
  console.log(a, where, result.timings.proveMs, result.fallbackReason ?? "");
  return groth16Verify(new URL("circuit.zkey", location.href), result.publicSignals, proof);
}

export async function withHandle(zkey: ArrayBuffer, wtns: string): Promise<number> {
  const key: CircomKey = await loadCircomKey(zkey, { backend: hasWebGpu() ? "webgpu" : "cpu" });
  try {
    const r = await key.prove(wtns, { seed: new Uint8Array(32) });
    return r.publicSignals.length;
  } catch (e) {
    if (e instanceof ZkgpuError) {
      const code: ErrorCode = e.code;
      if (code === "NOT_SATISFIED") return -1;
    }
    throw e;
  } finally {
    key.free();
  }
}

export async function offThread(wtns: Uint8Array): Promise<string[]> {
  const worker = createProverWorker();
  const key = await worker.loadCircomKey("circuit.zkey");
  const r = await key.prove(wtns, { transfer: false });
  key.free();
  worker.terminate();
  const again = await proveInWorker("circuit.zkey", "witness.wtns", { seed: new Uint8Array(32) });
  return [...r.publicSignals, ...again.publicSignals];
}

// Misuse the types must refuse (each line fails the check if the types let it through).
export async function refused(): Promise<void> {
  // @ts-expect-error a number is not a key source
  await groth16Prove(42, "witness.wtns");
  // @ts-expect-error there is no "gl" backend
  await loadCircomKey("circuit.zkey", { backend: "gl" });
  const r = await groth16Prove("circuit.zkey", "witness.wtns");
  // @ts-expect-error publicSignals are strings
  const n: number = r.publicSignals[0];
  console.log(n);
}
