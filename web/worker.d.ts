// Types of worker.js, the package's `zkgpu/worker` entry.
import type { Backend, Groth16Result, LoadOptions, ProveOptions, SnarkjsProof, Source } from "./zkgpu.js";

export interface TransferOption {
  /** Transfer Uint8Array / ArrayBuffer inputs to the worker (default true: the caller's copy becomes empty). */
  transfer?: boolean;
}

/** A key loaded in the worker. */
export interface WorkerCircomKey {
  readonly backend: Backend;
  readonly constraints: number;
  readonly readMs: number;
  readonly prepareMs: number;
  readonly fallbackReason?: string;
  prove(wtns: Source, options?: { seed?: Uint8Array } & TransferOption): Promise<Groth16Result>;
  verify(publicSignals: string[], proof: SnarkjsProof): Promise<boolean>;
  free(): void;
}

export interface ProverWorker {
  loadCircomKey(zkey: Source, options?: LoadOptions & TransferOption): Promise<WorkerCircomKey>;
  groth16Prove(
    zkey: Source | WorkerCircomKey,
    wtns: Source,
    options?: ProveOptions & TransferOption,
  ): Promise<Groth16Result>;
  terminate(): void;
}

export function createProverWorker(): ProverWorker;
export function groth16Prove(
  zkey: Source,
  wtns: Source,
  options?: ProveOptions & TransferOption,
): Promise<Groth16Result>;
