// weft: PyTorch's tensor machinery in WebAssembly. First typings (the
// foundation API); later issues extend them.
import type { OpsFunctions, TensorOps } from './ops.js';

export type {
  AlphaOptions, ExplainPlan, OpArg, OpResult, Operand, OpsFunctions, OpsNamespace, OutOptions, TableEntry,
  TensorOps, TraceEntry,
} from './ops.js';

export type DType =
  | 'bool' | 'uint8' | 'int8' | 'int16' | 'int32' | 'int64'
  | 'float16' | 'bfloat16' | 'float32' | 'float64';
/** PyTorch's names and aliases ('float', 'half', 'long', 'torch.float32', ...) are accepted too. */
export type DTypeName = DType | string;
export type MemoryFormat = 'contiguous_format' | 'channels_last' | 'channels_last_3d' | 'preserve_format';
export type Device = 'cpu' | 'meta';
export type Variant = 'simd-threads' | 'simd';
export type Shape = readonly number[];
/** A shape given either as one array or as separate numbers: view(2, 3) or view([2, 3]). */
export type ShapeArgs = [Shape] | number[];

/** A nested array of numbers/booleans/bigints, a number, a boolean, a bigint or a TypedArray. */
export type TensorData =
  | number | boolean | bigint
  | Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | Uint8Array
  | Uint8ClampedArray | BigInt64Array
  | readonly TensorData[];

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
  /** Worker threads for parallel ops: 'auto' (default) uses every thread the build allows. */
  threads?: number | 'auto';
  /** Node defaults to 'simd-threads'; browsers pick it only when crossOriginIsolated. */
  variant?: Variant;
  /** Browsers: where to find the .wasm and worker files (Emscripten's locateFile). */
  locateFile?: (path: string, prefix: string) => string;
}

export interface DTypeOptions { dtype?: DTypeName; device?: Device }
export interface EmptyOptions extends DTypeOptions { memoryFormat?: MemoryFormat }
export interface FormatOptions { memoryFormat?: MemoryFormat }

export interface MemoryStats {
  tensors: number;
  storages: number;
  bytesInUse: number;
  peakBytes: number;
}

/** Methods of the op table (elementwise ops, copy_, to, ...) come from TensorOps (js/ops.d.ts). */
export interface Tensor extends TensorOps {
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
  contiguous(options?: FormatOptions): Tensor;
  clone(options?: FormatOptions): Tensor;

  asStrided(size: Shape, stride: Shape, storageOffset?: number): Tensor;
  view(...shape: ShapeArgs): Tensor;
  reshape(...shape: ShapeArgs): Tensor;
  permute(...dims: ShapeArgs): Tensor;
  expand(...sizes: ShapeArgs): Tensor;
  transpose(dim0: number, dim1: number): Tensor;
  t(): Tensor;
  squeeze(dim?: number): Tensor;
  unsqueeze(dim: number): Tensor;
  narrow(dim: number, start: number, length: number): Tensor;
  /** x[start:end:step] along dim; start/end may be null or omitted. */
  slice(dim?: number, start?: number | null, end?: number | null, step?: number): Tensor;
  select(dim: number, index: number): Tensor;
  flatten(startDim?: number, endDim?: number): Tensor;
  unflatten(dim: number, sizes: Shape): Tensor;
  movedim(source: number | Shape, destination: number | Shape): Tensor;

  /** The values in logical order: float16/bfloat16 as Float32Array, int64 as BigInt64Array, bool as Uint8Array. */
  data(): Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | Uint8Array | BigInt64Array;
  toArray(): NestedArray;
  item(): number | boolean;
  /** PyTorch's printing: tensor([[0.1000, 0.2000]]). */
  toString(): string;
  /** Releases this handle's reference (idempotent). Views keep their storage alive. */
  dispose(): void;
  /** The weft_tensor* handle. */
  handle(): number;
}

/** wt.ops, trace, explain and the op table's functions come from OpsFunctions (js/ops.d.ts). */
export interface Weft extends OpsFunctions {
  readonly variant: Variant;
  readonly WeftError: typeof WeftError;
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
