// Types of zkgpu.js, the npm package `zkgpu` (docs/web.md).

/** Bytes as the API takes them, or where to fetch them (a URL or a URL string). */
export type Source = Uint8Array | ArrayBuffer | ArrayBufferView | URL | string;

/** Where a proof was made. */
export type Backend = "webgpu" | "cpu";

/** Every code a {@link ZkgpuError} can have. */
export type ErrorCode =
  | "NO_WEBGPU"
  | "GPU"
  | "INVALID_KEY"
  | "INVALID_WITNESS"
  | "WITNESS_MISMATCH"
  | "NOT_SATISFIED"
  | "INVALID_INPUT"
  | "FETCH"
  | "FREED"
  | "INTERNAL";

export const ERROR_CODES: readonly ErrorCode[];

/** An Error with a stable code. */
export class ZkgpuError extends Error {
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown });
  readonly name: "ZkgpuError";
  readonly code: ErrorCode;
}

/** snarkjs' Groth16 proof object (proof.json). */
export interface SnarkjsProof {
  pi_a: [string, string, string];
  pi_b: [[string, string], [string, string], [string, string]];
  pi_c: [string, string, string];
  protocol: "groth16";
  curve: "bn128";
}

/** Where a circom proof's time went, milliseconds. */
export interface CircomTimings {
  /** Reading the key (on the key's first proof; 0 after). */
  keyReadMs: number;
  /** Uploading the key to the GPU (first proof; 0 after, and on the CPU). */
  keyUploadMs: number;
  /** Reading the witness. */
  witnessMs: number;
  /** The proof itself. */
  proveMs: number;
  /** Its check against the key's verifying key. */
  verifyMs: number;
  /** The whole call. */
  totalMs: number;
}

/** What snarkjs.groth16.prove resolves to, with where and how long. */
export interface Groth16Result {
  proof: SnarkjsProof;
  publicSignals: string[];
  backend: Backend;
  /** Why the CPU prover was used where WebGPU was asked for ("auto"). */
  fallbackReason?: string;
  timings: CircomTimings;
}

export interface LoadOptions {
  /** "auto" (default): WebGPU where there is an adapter, else the CPU prover. */
  backend?: "auto" | Backend;
}

export interface ProveOptions extends LoadOptions {
  /** 32 bytes fixing r and s (reproducible proofs); default crypto.getRandomValues. */
  seed?: Uint8Array;
}

/** A snarkjs key read (and uploaded) once, proving again and again. */
export interface CircomKey {
  readonly backend: Backend;
  readonly constraints: number;
  readonly readMs: number;
  readonly prepareMs: number;
  readonly fallbackReason?: string;
  prove(wtns: Source, options?: { seed?: Uint8Array }): Promise<Groth16Result>;
  verify(publicSignals: string[], proof: SnarkjsProof): Promise<boolean>;
  referenceProof(wtns: Source, seed: Uint8Array): Promise<SnarkjsProof>;
  /** Releases the key; later calls reject with FREED. */
  free(): void;
}

export function ready(): Promise<void>;
export function hasWebGpu(): boolean;
export function bytesOf(source: Source, what?: string): Promise<Uint8Array>;

export function loadCircomKey(zkey: Source, options?: LoadOptions): Promise<CircomKey>;
export function loadCircom(zkeyBytes: Uint8Array | ArrayBuffer): Promise<CircomKey>;
export function groth16Prove(
  zkey: Source | CircomKey,
  wtns: Source,
  options?: ProveOptions,
): Promise<Groth16Result>;
export function groth16Verify(
  zkey: Source | CircomKey,
  publicSignals: string[],
  proof: SnarkjsProof,
): Promise<boolean>;
export function groth16ReferenceProof(
  zkey: Source | CircomKey,
  wtns: Source,
  seed: Uint8Array,
): Promise<SnarkjsProof>;

/** Inputs of the Poseidon Merkle paths circuit compiled into the module. */
export interface MerkleInputs {
  paths: { leaf: string[]; siblings: string[]; is_right: boolean[] }[];
}

export interface MerkleTimings {
  keyReadMs: number;
  keyUploadMs: number;
  inputsMs: number;
  synthesisMs: number;
  gpuMs: number;
  verifyMs: number;
  totalMs: number;
}

export interface MerkleProver {
  readonly domainSize: number;
  readonly readMs: number;
  readonly prepareMs: number;
}

export function load(keyBytes: Uint8Array): Promise<MerkleProver>;
export function prove(
  keyBytes: Uint8Array,
  inputs: MerkleInputs | string,
  options?: { seed?: Uint8Array },
): Promise<{ proof: Uint8Array; publicInputs: string[]; timings: MerkleTimings }>;
export function verify(keyBytes: Uint8Array, publicInputs: string[], proof: Uint8Array): Promise<boolean>;
export function referenceProof(
  keyBytes: Uint8Array,
  inputs: MerkleInputs | string,
  seed: Uint8Array,
): Promise<Uint8Array>;
export function merkleKey(logConstraints: number, depth: number): Promise<Uint8Array>;
export function merkleInputs(logConstraints: number, depth: number, seed?: number): Promise<MerkleInputs>;
