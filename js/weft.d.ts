// weft: PyTorch's tensor machinery in WebAssembly. Typings for the package
// API (checked by tsc --noEmit over tests/types/example.ts).
import type { OpFunctions, OpMethods, OpsApi } from './ops.js';
import type { ReduceFunctions, ReduceTensorOps } from './reduce.js';
import type { ConvFunctions } from './conv.js';
export type { Conv2dOptions, ConvFunctions, ConvPlan } from './conv.js';
export type { Dims, MinMaxOptions, ReduceOptions, ReductionPlan, VarOptions } from './reduce.js';

export type {
  AlphaOptions, ExplainPlan, OpArg, OpFunctions, OpMethods, OpName, OpResult, Operand, OpsApi, OpsFunctions,
  OpsNamespace, OutOptions, Scalar, TableEntry, TensorOps, TraceEntry,
} from './ops.js';

export type DType =
  | 'bool' | 'uint8' | 'int8' | 'int16' | 'int32' | 'int64'
  | 'float16' | 'bfloat16' | 'float32' | 'float64';
/** PyTorch's names and aliases ('float', 'half', 'long', 'torch.float32', ...) are accepted too. */
export type DTypeName = DType | string;
export type MemoryFormat = 'contiguous_format' | 'channels_last' | 'channels_last_3d' | 'preserve_format';
export type Device = 'cpu' | 'meta';
export type Variant = 'simd-threads' | 'simd' | 'scalar';
export type Shape = readonly number[];
/** A shape given either as one array or as separate numbers: view(2, 3) or view([2, 3]). */
export type ShapeArgs = [Shape] | number[];

/** Float16Array where the engine has it (ES2025); typed structurally so older lib settings compile. */
export interface Float16ArrayLike extends ArrayBufferView {
  readonly length: number;
  readonly [Symbol.toStringTag]: 'Float16Array';
}

/**
 * Every TypedArray weft takes. Without a dtype: Float16Array → float16, Float32Array → float32,
 * Float64Array → float64, Int8/16/32Array → int8/16/32, Uint8(Clamped)Array → uint8,
 * Uint16Array → int32, Uint32Array / BigInt64Array / BigUint64Array → int64.
 */
export type TypedArrayInput =
  | Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | Uint8Array
  | Uint8ClampedArray | Uint16Array | Uint32Array | BigInt64Array | BigUint64Array | Float16ArrayLike;

/** A nested array of numbers/booleans/bigints, a number, a boolean, a bigint or a TypedArray. */
export type TensorData =
  | number | boolean | bigint
  | TypedArrayInput
  | readonly TensorData[];

/** What tensor.data() gives: float16/bfloat16 as Float32Array (or their Uint16Array bits with { bits: true }). */
export type TensorValues =
  | Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | BigInt64Array;

/** Nested plain values, like PyTorch's tolist(); int64 becomes number. */
export type NestedArray = number | boolean | NestedArray[];

/** Every failure weft reports. `code` is the C status name. */
export class WeftError extends Error {
  readonly name: 'WeftError';
  readonly code:
    | 'InvalidArgument' | 'IndexError' | 'TypeError' | 'ShapeError' | 'OverflowError'
    | 'OutOfMemory' | 'ZeroDivisionError' | 'NotImplemented' | 'DispatchError' | 'InternalError';
  constructor(code: string, message: string);
}

export interface InitOptions {
  /**
   * Threads for parallel ops: 'auto' (default) uses every thread the build allows. A number above 1
   * on a page that cannot run the threaded build logs one console warning saying why.
   */
  threads?: number | 'auto';
  /**
   * Only this variant (an error if it cannot run). Without it: 'simd-threads' when SharedArrayBuffer
   * and wasm threads are available (browsers: crossOriginIsolated), else 'simd', else 'scalar' (no
   * wasm SIMD); a variant that fails to load steps down to the next.
   */
  variant?: Variant;
  /** Where the .wasm (and pthread worker) files are: a base URL/directory, or a URL per file name. */
  wasmPaths?: string | URL | { [file: string]: string | URL };
  /** The .wasm bytes: for `variant`, or one entry per variant. Never cached. */
  wasmBinary?: ArrayBuffer | Uint8Array | { [V in Variant]?: ArrayBuffer | Uint8Array };
  /** Emscripten's locateFile, for the .wasm and worker files. */
  locateFile?: (path: string, prefix: string) => string;
}

/** What init() loaded, and why. */
export interface Backend {
  readonly variant: Variant;
  readonly simd: boolean;
  readonly threads: boolean;
  /** The page's crossOriginIsolated; null outside browsers (Node needs no isolation). */
  readonly crossOriginIsolated: boolean | null;
  /** Why this variant: what was skipped or failed, or that it was requested. */
  readonly reason: string;
  /** pthread workers loaded when init() resolved (0 without threads). */
  readonly workers: number;
  /** Threads parallel kernels use now (setNumThreads / init({ threads })). */
  readonly numThreads: number;
  /** Set when the last setNumThreads asked for more than maxThreads(): what was asked and used. */
  readonly threadClamp: { readonly requested: number; readonly used: number } | null;
}

export interface DTypeOptions { dtype?: DTypeName; device?: Device }
export interface EmptyOptions extends DTypeOptions { memoryFormat?: MemoryFormat }
export interface FormatOptions { memoryFormat?: MemoryFormat }

export interface MemoryStats {
  /** Live C tensors (handles), storages and their bytes. */
  tensors: number;
  storages: number;
  /** Bytes of live storages that hold data (meta tensors allocate nothing and count in metaBytes). */
  bytesInUse: number;
  peakBytes: number;
  /** Bytes that live meta (shape-only) tensors describe; no memory is behind them. */
  metaBytes: number;
  /** Size of the wasm memory. */
  heapBytes: number;
  /** JS Tensor objects not yet disposed or collected. */
  jsTensors: number;
  /** Tensors released by the garbage-collection safety net (forgotten without dispose()). */
  collected: number;
  /** tidy() scopes open right now. */
  tidyScopes: number;
}

/**
 * A tensor: the methods of js/core.js (TensorCore) and those of the op table (OpMethods, generated in
 * js/optable.d.ts: elementwise ops, copy_, to, ...) that core.js does not have, as at run time. The
 * reductions are declared by hand (js/reduce.d.ts: keepdim and dtype as options, the JS calling form).
 */
export interface Tensor extends TensorCore, ReduceTensorOps, Omit<OpMethods, keyof TensorCore | keyof ReduceTensorOps> {}

/** The methods js/core.js writes by hand. */
export interface TensorCore {
  readonly shape: number[];
  readonly dtype: DType;
  readonly device: Device;
  readonly isDisposed: boolean;
  size(): number[];
  size(dim: number): number;
  stride(): number[];
  stride(dim: number): number;
  storageOffset(): number;
  dim(): number;
  ndimension(): number;
  numel(): number;
  elementSize(): number;
  /** Byte address of element [0, ..., 0] in wasm memory (0 for meta tensors). */
  dataPtr(): number;
  isContiguous(memoryFormat?: MemoryFormat): boolean;
  isNonOverlappingAndDense(): boolean;
  suggestMemoryFormat(): MemoryFormat;
  // contiguous, clone and the views (view, slice, ...) are written in core.js too, taking what
  // their OpMethods declarations say; these two take other arguments than the op table's:
  unflatten(dim: number, sizes: Shape): Tensor;
  movedim(source: number | Shape, destination: number | Shape): Tensor;

  /**
   * The values in logical order, a fresh copy: float16/bfloat16 as Float32Array (their Uint16Array
   * bits with { bits: true }), int64 as BigInt64Array, bool as Uint8Array.
   */
  data(options?: { bits?: boolean }): TensorValues;
  /** NumPy .npy bytes (format 1.0, C order, little-endian). bfloat16 has no NumPy dtype. */
  toNpy(): Uint8Array;
  toArray(): NestedArray;
  item(): number | boolean;
  /** PyTorch's printing: tensor([[0.1000, 0.2000]]). */
  toString(): string;
  /** Releases this handle's reference (idempotent). Views keep their storage alive. */
  dispose(): void;
  /** The weft_tensor* handle. */
  handle(): number;
}

/**
 * The API: what js/core.js and js/index.js write by hand (WeftCore), wt.ops / trace / explain, and the
 * functions of the op table (OpFunctions, generated in js/optable.d.ts) the hand-written API does not
 * have, as at run time.
 */
export interface Weft extends WeftCore, ReduceFunctions, ConvFunctions,
  Omit<OpFunctions, keyof WeftCore | keyof ReduceFunctions | keyof ConvFunctions> {}

/** The API js/core.js and js/index.js write by hand, with wt.ops, wt.trace and wt.explain. */
export interface WeftCore extends OpsApi {
  readonly variant: Variant;
  readonly backend: Backend;
  /** "<version>+<git hash>" of the loaded .wasm (equal to the JS files' id). */
  readonly buildId: string;
  readonly WeftError: typeof WeftError;
  readonly Tensor: abstract new (...args: never[]) => Tensor;
  /**
   * Runs fn and disposes every tensor created while it ran synchronously, except those in its
   * result. Nests. An async fn's tensors (created before its first await) are disposed when its
   * promise settles.
   */
  tidy<T>(fn: () => T): T;
  /** Takes t out of the open tidy() scopes. */
  keep<T extends Tensor>(t: T): T;
  /** Reads a NumPy .npy file (v1/v2/v3; C or Fortran order; big-endian converted). */
  fromNpy(bytes: ArrayBufferLike | ArrayBufferView): Tensor;
  empty(...args: [...ShapeArgs, EmptyOptions?] | [Shape, EmptyOptions?]): Tensor;
  emptyStrided(size: Shape, stride: Shape, options?: DTypeOptions): Tensor;
  emptyLike(t: Tensor, options?: { dtype?: DTypeName; memoryFormat?: MemoryFormat }): Tensor;
  zeros(...args: [...ShapeArgs, DTypeOptions?] | [Shape, DTypeOptions?]): Tensor;
  ones(...args: [...ShapeArgs, DTypeOptions?] | [Shape, DTypeOptions?]): Tensor;
  /** dtype follows the value when not given: boolean → bool, integer → int64, else float32. */
  full(size: Shape | number, value: number | boolean | bigint, options?: DTypeOptions): Tensor;
  /** Integer arguments give int64, any fractional one float32. */
  arange(end: number, options?: DTypeOptions): Tensor;
  arange(start: number, end: number, step?: number, options?: DTypeOptions): Tensor;
  /** Integers give int64, booleans bool, anything fractional float32; a TypedArray keeps its type. */
  tensor(data: TensorData, options?: DTypeOptions): Tensor;
  /** Raw float16/bfloat16 bits. */
  tensor(data: Uint16Array, options: { dtype: 'float16' | 'bfloat16' | 'half'; bits: true; device?: Device }): Tensor;
  rand(...args: [...ShapeArgs, DTypeOptions?] | [Shape, DTypeOptions?]): Tensor;
  randn(...args: [...ShapeArgs, DTypeOptions?] | [Shape, DTypeOptions?]): Tensor;
  manualSeed(seed: number | bigint): void;
  memory(): MemoryStats;
  /** torch.promote_types */
  promoteTypes(a: DTypeName, b: DTypeName): DType;
  /** torch.can_cast (same-kind rule) */
  canCast(from: DTypeName, to: DTypeName): boolean;
  setNumThreads(n: number): void;
  getNumThreads(): number;
  maxThreads(): number;
}

export function init(options?: InitOptions): Promise<Weft>;

// ---- worker mode ----

/** An argument as worker mode takes it: tensors are WorkerTensors. */
type WorkerArg<T> = T extends Tensor ? WorkerTensor : T;
type WorkerArgs<A extends unknown[]> = { [I in keyof A]: WorkerArg<A[I]> };
/** A result as worker mode gives it: tensors at once, values through promises. */
type WorkerResult<R> = R extends Tensor ? WorkerTensor : R extends Tensor[] ? Promise<WorkerTensor[]> : Promise<R>;

/**
 * A tensor that lives in the worker. Calls returning tensors return WorkerTensors at once (chain
 * freely); values come through promises: `await t.toArray()`, `await t.shape`. A failed call
 * surfaces as the rejection of the first value read from its result.
 */
export type WorkerTensor = {
  readonly [K in Exclude<keyof Tensor, 'dispose' | 'handle'>]: Tensor[K] extends (...args: infer A) => infer R
    ? (...args: WorkerArgs<A>) => WorkerResult<R>
    : Promise<Tensor[K]>;
} & {
  /** Sends the dispose; never throws. */
  dispose(): void;
  /** Resolves with the metadata once the worker made the tensor; rejects with its error. */
  readonly ready: Promise<{ shape: number[]; dtype: DType; device: Device }>;
  readonly id: number;
};

type WeftCalls = Omit<Weft, 'tidy' | 'keep' | 'backend' | 'buildId' | 'variant' | 'WeftError' | 'Tensor' | 'tensor'>;

/** The weft API running in a dedicated Worker (see initWorker). */
export type WorkerWeft = {
  readonly [K in keyof WeftCalls]: WeftCalls[K] extends (...args: infer A) => infer R
    ? (...args: WorkerArgs<A>) => WorkerResult<R>
    : never;
} & {
  /**
   * A tensor from data. The data is copied to the worker; with { transfer: true } the ArrayBuffers of
   * TypedArray data are transferred instead (and detached here).
   */
  tensor(data: TensorData, options?: { dtype?: DTypeName; bits?: boolean; transfer?: boolean }): WorkerTensor;
  /** Disposes the WorkerTensors made while fn ran, except those in its result. */
  tidy<T>(fn: (wt: WorkerWeft) => T): T;
  keep(t: WorkerTensor): WorkerTensor;
  backend(): Promise<Backend>;
  buildId(): Promise<string>;
  /** Stops the worker; pending calls reject. */
  terminate(): Promise<void>;
  readonly WeftError: typeof WeftError;
};

/**
 * Worker mode: weft in a dedicated Worker (browsers: a module Worker from worker.js next to the
 * package's files; Node: worker_threads), so kernels never block the calling thread.
 */
export function initWorker(options?: InitOptions): Promise<WorkerWeft>;
