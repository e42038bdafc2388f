// weft: PyTorch's tensor machinery in WebAssembly. Typings for the package
// API (checked by tsc --noEmit over tests/types/example.ts).
import type { OpFunctions, OpMethods, Operand, OpsApi, Returns } from './ops.js';
import type { ReduceFunctions, ReduceTensorOps } from './reduce.js';
import type { ConvFunctions } from './conv.js';
export type { Conv1dOptions, Conv2dOptions, ConvTranspose1dOptions, ConvTranspose2dOptions, ConvFunctions, ConvPlan, ConvTransposePlan, InvertedResidualPlan } from './conv.js';
export type { Dims, MinMaxOptions, ReduceOptions, ReductionPlan, VarOptions } from './reduce.js';
import type { PoolFunctions, PoolTensorOps } from './pool.js';
import type { ResizeFunctions, ResizeTensorOps } from './resize.js';
export type { InterpolateMode, InterpolateOptions, PadMode, PadOptions } from './resize.js';
import type { NormFunctions } from './norm.js';
import type { EmbeddingFunctions } from './embedding.js';
import type { LinalgNamespace } from './linalg.js';
export type { EighOptions, EighResult, LinalgNamespace, LstsqOptions, MatrixNormOptions, QrOptions, SvdResult, VectorNormOptions } from './linalg.js';
export type { EmbeddingOptions, EmbeddingFunctions } from './embedding.js';
import type { DistanceFunctions } from './distance.js';
export type { DistanceFunctions } from './distance.js';
import type { AttentionFunctions } from './attention.js';
export type { AttentionFunctions, AttentionOptions } from './attention.js';
import type { EinsumFunctions } from './einsum.js';
export type { EinsumOptions, EinsumFunctions } from './einsum.js';
import type { WebGPUFunctions, WebGPUInfo, WebGPUTensorReads } from './webgpu.js';
export type { WebGPUFunctions, WebGPUInfo, WebGPUMemory, WebGPUNamespace, WebGPUTensorReads } from './webgpu.js';
export type { BatchNormOptions, NormFunctions } from './norm.js';
import type { ActivationFunctions } from './activation.js';
export type { ActivationFunctions, DropoutOptions, InplaceOptions, Reduction } from './activation.js';
import type { AutogradFunctions, AutogradTensorOps, WorkerAutogradFunctions, WorkerAutogradTensorOps } from './autograd.js';
export type {
  AutogradNamespace, BackwardOptions, GradFn, GradOptions, RemovableHandle, TensorBackwardOptions, WorkerGradFn, WorkerGradOptions,
} from './autograd.js';
import type { OptimNamespace, WorkerOptimNamespace } from './optim.js';
export type {
  AdamOptions, LRScheduler, LrSchedulerNamespace, LrSchedulerOptions, OptimNamespace, Optimizer, OptimizerStateDict, ParamGroup,
  ParamGroupInput, Params, SGDOptions, WorkerOptimizer, WorkerOptimNamespace,
} from './optim.js';
import type { NnUtils } from './nn_utils.js';
export type { ClipGradNormOptions, NnUtils } from './nn_utils.js';
import type { NnNamespace } from './nn.js';
export type { Module, Parameter, NnNamespace, NnInit, NnFunctional } from './nn.js';
export type { MultiheadAttention, TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder, TransformerDecoder, Transformer,
  AttentionCallOptions, MultiHeadAttentionForward } from './transformer.js';
import type { FusionUtils } from './fusion.js';
export type { FusableBatchNorm, FusableConv, FusionUtils } from './fusion.js';
import type { ShapeFunctions, ShapeTensorOps } from './shape.js';
export type { Bound, ClampOptions, FactoryOptions, LikeOptions, RepeatInterleaveOptions, TriOptions } from './shape.js';
import type { UniqueFunctions, UniqueTensorOps } from './unique.js';
import type { IndexingFunctions, IndexingTensorOps } from './index_ops.js';
import type { PointwiseFunctions, PointwiseTensorOps } from './pointwise.js';
export type { IscloseOptions, NanToNumOptions, PointwiseFunctions, PointwiseTensorOps } from './pointwise.js';
import type { BytesSource, CheckpointFunctions } from './checkpoint.js';
export type { Bytes, BytesSource, CheckpointFunctions, CheckpointValue, SaveableValue } from './checkpoint.js';
export type { IndexItem, IndexPutOptions } from './index_ops.js';
export type { AdaptiveSize, AvgPool2dOptions, MaxPool2dOptions, PoolPlan, Size2 } from './pool.js';
export type { UniqueOptions } from './unique.js';
export type { MinMaxDimOptions, ScanOptions, VarMeanOptions } from './reduce.js';
export type { IndexArray, Returns, ValuesIndices } from './ops.js';

export type {
  AlphaOptions, ExplainPlan, OpArg, OpFunctions, OpMethods, OpName, OpResult, Operand, OpsApi, OpsFunctions,
  OpsNamespace, OutOptions, Scalar, TableEntry, TensorOps, TraceEntry,
} from './ops.js';

export type DType =
  | 'bool' | 'uint8' | 'int8' | 'int16' | 'int32' | 'int64'
  | 'float16' | 'bfloat16' | 'float32' | 'float64';
/** PyTorch's other names of dtypes (torch.float is torch.float32, ...). */
export interface DTypeAliases {
  float: 'float32'; double: 'float64'; half: 'float16'; long: 'int64'; int: 'int32'; short: 'int16';
}
/** Every dtype name the API takes: weft's, PyTorch's aliases, and either with 'torch.' before it. */
export type DTypeName = DType | keyof DTypeAliases | `torch.${DType | keyof DTypeAliases}`;
/** The dtype a name stands for: DTypeOf<'torch.long'> is 'int64'. */
export type DTypeOf<N extends DTypeName> =
  N extends `torch.${infer M}` ? (M extends DTypeName ? DTypeOf<M> : never)
  : N extends keyof DTypeAliases ? DTypeAliases[N] : N extends DType ? N : never;
/** The dtypes JS numbers become (wt.setDefaultDtype). */
export type DefaultDType = 'float32' | 'float64';
/** What item() gives for a dtype: a boolean for bool, else a number. */
export type Item<D extends DType = DType> = D extends 'bool' ? boolean : number;
/** Nested arrays of T, as toArray() gives them (T itself for a 0-dim tensor). */
export type Nested<T> = T | Nested<T>[];
export type MemoryFormat = 'contiguous_format' | 'channels_last' | 'channels_last_3d' | 'preserve_format';
export type Device = 'cpu' | 'meta' | 'webgpu';
export type Variant = 'simd-threads' | 'simd' | 'scalar';
export type Shape = readonly number[];
/**
 * The URL class where the environment has one (browsers, Node with @types/node): the declarations
 * need no DOM library.
 */
export type URLLike = typeof globalThis extends { URL: abstract new (...args: never[]) => infer U } ? U : never;
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

/** A readonly nested array of T (what factories take). */
export type NestedInput<T> = T | readonly NestedInput<T>[];

/** The dtype wt.tensor(data) gives without a dtype option (DType when the data does not tell). */
export type DataDType<T> =
  T extends Float32Array ? 'float32' : T extends Float64Array ? 'float64' : T extends Int8Array ? 'int8'
  : T extends Int16Array ? 'int16' : T extends Int32Array | Uint16Array ? 'int32'
  : T extends Uint8Array | Uint8ClampedArray ? 'uint8' : T extends Uint32Array | BigInt64Array | BigUint64Array ? 'int64'
  : T extends Float16ArrayLike ? 'float16' : T extends NestedInput<boolean> ? 'bool'
  : T extends NestedInput<bigint> ? 'int64' : T extends NestedInput<number> ? DefaultDType : DType;

/** Nested plain values, like PyTorch's tolist(); int64 becomes number. */
export type NestedArray = Nested<number | boolean>;

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
  wasmPaths?: string | URLLike | { [file: string]: string | URLLike };
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
  /** pthread workers loaded so far (0 without threads): init() does not wait for them; see threadsReady(). */
  readonly workers: number;
  /** Threads parallel kernels use now (setNumThreads / init({ threads })). */
  readonly numThreads: number;
  /** Set when the last setNumThreads asked for more than maxThreads(): what was asked and used. */
  readonly threadClamp: { readonly requested: number; readonly used: number } | null;
  /** The adapter wt.initWebGPU() found; null before (and where there is none). */
  readonly webgpu: WebGPUInfo | null;
}

/** requiresGrad: the result is a leaf that requires grad (floating dtypes). */
export interface DTypeOptions { dtype?: DTypeName; device?: Device; requiresGrad?: boolean }
export interface EmptyOptions extends DTypeOptions { memoryFormat?: MemoryFormat }
/** Options naming the dtype N: the result is a Tensor<DTypeOf<N>>. */
export interface WithDType<N extends DTypeName> { dtype: N; device?: Device; requiresGrad?: boolean }
/** A factory's arguments: a shape (as one array or as numbers), then options O. */
export type FactoryArgs<O> = [...ShapeArgs, O] | [Shape, O];

/** One tensor's entry in a safetensors header. */
export interface SafetensorsInfo {
  dtype: DType;
  shape: number[];
  /** [begin, end) in the data that follows the header. */
  dataOffsets: [number, number];
}
/** The tensors of a safetensors file by name (an object without a prototype). */
export type TensorMap = { [name: string]: Tensor };
/** A safetensors file's `__metadata__`: strings by string (null when the file has none). */
export type SafetensorsMetadata = { [key: string]: string };
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
  /** Bytes of live webgpu storages (GPU memory, apart from bytesInUse; wt.webgpu.memory() has the allocator's). */
  webgpuBytes: number;
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
 * reductions, pools and shape ops are declared by hand (js/reduce.d.ts, js/pool.d.ts, js/shape.d.ts: options
 * objects, the JS calling form).
 */
export interface Tensor<D extends DType = DType>
  extends TensorCore<D>, TensorShortcuts<D>, ReduceTensorOps, PoolTensorOps, ResizeTensorOps, ShapeTensorOps,
  AutogradTensorOps, UniqueTensorOps, IndexingTensorOps, PointwiseTensorOps, WebGPUTensorReads<D>,
  Omit<OpMethods, keyof TensorCore | keyof TensorShortcuts |
    keyof ReduceTensorOps | keyof PoolTensorOps | keyof ResizeTensorOps | keyof ShapeTensorOps | keyof AutogradTensorOps |
    keyof UniqueTensorOps | keyof IndexingTensorOps | keyof PointwiseTensorOps> {}

/** PyTorch's shortcuts (js/core.js): casts by name, T, mT, ndim, tolist; and to(dtype) typed by the dtype. */
export interface TensorShortcuts<D extends DType = DType> {
  /** The dims reversed (permute(n - 1, ..., 0)): a view. */
  readonly T: Tensor<D>;
  /** The last two dims swapped (a batch of matrices transposed): a view. */
  readonly mT: Tensor<D>;
  /** The number of dims (dim()). */
  readonly ndim: number;
  float(): Tensor<'float32'>;
  double(): Tensor<'float64'>;
  half(): Tensor<'float16'>;
  bfloat16(): Tensor<'bfloat16'>;
  int(): Tensor<'int32'>;
  long(): Tensor<'int64'>;
  bool(): Tensor<'bool'>;
  byte(): Tensor<'uint8'>;
  short(): Tensor<'int16'>;
  char(): Tensor<'int8'>;
  /** toArray() under PyTorch's name. */
  tolist<A extends Nested<Item<D>> = Nested<Item<D>>>(): A;
  /** The op table's to(dtype), typed by the dtype: a copy (the same data when the dtype is already D, unless copy). */
  to<N extends DTypeName>(dtype: N, options?: { copy?: boolean; memoryFormat?: MemoryFormat }): Tensor<DTypeOf<N>>;
  /** PyTorch's to.device: the tensor's own device (no copy unless copy), else a WeftError; a dtype may follow. */
  to(device: Device, options?: { copy?: boolean; memoryFormat?: MemoryFormat }): Tensor<D>;
  to<N extends DTypeName>(device: Device, dtype: N, options?: { copy?: boolean; memoryFormat?: MemoryFormat }): Tensor<DTypeOf<N>>;
  /** PyTorch's iteration: the rows along dim 0 (views, the caller's to dispose); a 0-dim tensor throws. */
  [Symbol.iterator](): IterableIterator<Tensor<D>>;
  /** PyTorch's to.other: other's dtype (other must be on this tensor's device). */
  to<E extends DType>(other: Tensor<E>, options?: { copy?: boolean }): Tensor<E>;
  /** True division, or PyTorch's rounding_mode: 'trunc' (toward zero; integers stay integers) or 'floor'. */
  div(other: Operand, options?: DivOptions): Tensor;
  div_(other: Operand, options?: { roundingMode?: RoundingMode }): Tensor;
}

export type RoundingMode = 'trunc' | 'floor' | null;
export interface DivOptions { roundingMode?: RoundingMode; out?: Tensor }

/** The methods js/core.js writes by hand. */
export interface TensorCore<D extends DType = DType> {
  readonly shape: number[];
  readonly dtype: D;
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
  /**
   * Nested arrays of numbers (booleans for bool); a 0-dim tensor gives its value. The nesting can
   * be stated: t.toArray<number[][]>().
   */
  toArray<A extends Nested<Item<D>> = Nested<Item<D>>>(): A;
  /** The value of a one-element tensor: a boolean for bool, else a number. */
  item(): Item<D>;
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
export interface Weft extends WeftCore, ReduceFunctions, PoolFunctions, ResizeFunctions, ConvFunctions, NormFunctions,
  ShapeFunctions, AutogradFunctions, UniqueFunctions, IndexingFunctions, CheckpointFunctions, ActivationFunctions,
  EmbeddingFunctions, AttentionFunctions, EinsumFunctions, DistanceFunctions, PointwiseFunctions, WebGPUFunctions,
  Omit<OpFunctions, keyof WeftCore | keyof ReduceFunctions | keyof PoolFunctions | keyof ResizeFunctions |
    keyof ConvFunctions | keyof NormFunctions | keyof ShapeFunctions | keyof AutogradFunctions | keyof UniqueFunctions |
    keyof IndexingFunctions | keyof CheckpointFunctions | keyof ActivationFunctions | keyof EmbeddingFunctions | keyof AttentionFunctions | keyof EinsumFunctions | keyof DistanceFunctions | keyof PointwiseFunctions> {}

/** The API js/core.js and js/index.js write by hand, with wt.ops, wt.trace and wt.explain. */
export interface WeftCore extends OpsApi {
  /** True division (div.Tensor / div.Scalar), or div.Tensor_mode's roundingMode: 'trunc' or 'floor'. */
  div(self: Operand, other: Operand, options?: DivOptions): Tensor;
  readonly variant: Variant;
  /** torch.optim's SGD, Adam and AdamW over tensors or parameter groups, and lrScheduler (js/optim.js). */
  readonly optim: OptimNamespace;
  /** torch.nn: Module, containers, layers, init, functional (js/nn/), utils (js/nn_utils.js, js/fusion.js). */
  readonly nn: NnNamespace & { readonly utils: NnUtils & FusionUtils };
  /** torch.linalg: solve, inv, det, slogdet, cholesky, qr, lstsq, eigh, eigvalsh, svd, svdvals, vectorNorm, matrixNorm (js/linalg.d.ts). */
  readonly linalg: LinalgNamespace;
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
  /** Takes t out of the open tidy() scopes and wt.nn's training-step rule. */
  keep<T extends Tensor>(t: T): T;
  /** Every tensor in an array, Map or object (a state dict) kept. */
  keep<T extends object>(tensors: T): T;
  /** Reads a NumPy .npy file (v1/v2/v3; C or Fortran order; big-endian converted). */
  fromNpy(bytes: ArrayBufferLike | ArrayBufferView): Tensor;
  /**
   * Reads a safetensors file: its tensors by name (every weft dtype; U16, U32, U64 and the 8-bit
   * floats are refused). The header is validated before any tensor is made. With
   * { metadata: true }: { tensors, metadata }. Given a Response, Blob or File: a Promise of the same.
   */
  loadSafetensors(bytes: ArrayBufferLike | ArrayBufferView, options?: { metadata?: false }): TensorMap;
  loadSafetensors(bytes: ArrayBufferLike | ArrayBufferView, options: { metadata: true }):
    { tensors: TensorMap; metadata: SafetensorsMetadata | null };
  loadSafetensors(source: BytesSource, options?: { metadata?: false }): Promise<TensorMap>;
  loadSafetensors(source: BytesSource, options: { metadata: true }):
    Promise<{ tensors: TensorMap; metadata: SafetensorsMetadata | null }>;
  /** A safetensors file's header, validated, without loading its tensors. */
  readSafetensorsHeader(bytes: ArrayBufferLike | ArrayBufferView):
    { tensors: { [name: string]: SafetensorsInfo }; metadata: SafetensorsMetadata | null };
  readSafetensorsHeader(source: BytesSource):
    Promise<{ tensors: { [name: string]: SafetensorsInfo }; metadata: SafetensorsMetadata | null }>;
  /**
   * A safetensors file: the tensors (contiguous copies) sorted by element size, largest first, then
   * name, so each is aligned to its element size; metadata becomes `__metadata__`.
   */
  saveSafetensors(tensors: { readonly [name: string]: Tensor }, options?: { metadata?: SafetensorsMetadata | null }): Uint8Array;
  empty<N extends DTypeName>(...args: FactoryArgs<WithDType<N> & { memoryFormat?: MemoryFormat }>): Tensor<DTypeOf<N>>;
  empty(...args: [...ShapeArgs, EmptyOptions?] | [Shape, EmptyOptions?]): Tensor<DefaultDType>;
  emptyStrided<N extends DTypeName>(size: Shape, stride: Shape, options: WithDType<N>): Tensor<DTypeOf<N>>;
  emptyStrided(size: Shape, stride: Shape, options?: DTypeOptions): Tensor<DefaultDType>;
  emptyLike<N extends DTypeName>(t: Tensor, options: { dtype: N; memoryFormat?: MemoryFormat }): Tensor<DTypeOf<N>>;
  emptyLike<D extends DType>(t: Tensor<D>, options?: { memoryFormat?: MemoryFormat }): Tensor<D>;
  zeros<N extends DTypeName>(...args: FactoryArgs<WithDType<N>>): Tensor<DTypeOf<N>>;
  zeros(...args: [...ShapeArgs, DTypeOptions?] | [Shape, DTypeOptions?]): Tensor<DefaultDType>;
  ones<N extends DTypeName>(...args: FactoryArgs<WithDType<N>>): Tensor<DTypeOf<N>>;
  ones(...args: [...ShapeArgs, DTypeOptions?] | [Shape, DTypeOptions?]): Tensor<DefaultDType>;
  /** dtype follows the value when not given: boolean → bool, bigint → int64, number → the default dtype. */
  full<N extends DTypeName>(size: Shape | number, value: number | boolean | bigint, options: WithDType<N>): Tensor<DTypeOf<N>>;
  full(size: Shape | number, value: boolean, options?: { device?: Device }): Tensor<'bool'>;
  full(size: Shape | number, value: bigint, options?: { device?: Device }): Tensor<'int64'>;
  full(size: Shape | number, value: number | boolean | bigint, options?: DTypeOptions): Tensor;
  /** Integer arguments give int64 (PyTorch's rule), any fractional one the default dtype. */
  arange<N extends DTypeName>(end: number, options: WithDType<N>): Tensor<DTypeOf<N>>;
  arange<N extends DTypeName>(start: number, end: number, options: WithDType<N>): Tensor<DTypeOf<N>>;
  arange<N extends DTypeName>(start: number, end: number, step: number, options: WithDType<N>): Tensor<DTypeOf<N>>;
  arange(end: number, options?: DTypeOptions): Tensor<'int64' | DefaultDType>;
  arange(start: number, end: number, step?: number, options?: DTypeOptions): Tensor<'int64' | DefaultDType>;
  /** Raw float16/bfloat16 bits. */
  tensor<N extends 'float16' | 'bfloat16' | 'half' | 'torch.float16' | 'torch.bfloat16' | 'torch.half'>(
    data: Uint16Array, options: { dtype: N; bits: true; device?: Device }): Tensor<DTypeOf<N>>;
  tensor<N extends DTypeName>(data: TensorData, options: WithDType<N>): Tensor<DTypeOf<N>>;
  /**
   * Numbers give the default dtype (float32), booleans bool, bigints int64; a TypedArray keeps its
   * type (DataDType).
   */
  tensor<T extends TensorData>(data: T, options?: DTypeOptions): Tensor<DataDType<T>>;
  rand<N extends DTypeName>(...args: FactoryArgs<WithDType<N>>): Tensor<DTypeOf<N>>;
  rand(...args: [...ShapeArgs, DTypeOptions?] | [Shape, DTypeOptions?]): Tensor<DefaultDType>;
  randn<N extends DTypeName>(...args: FactoryArgs<WithDType<N>>): Tensor<DTypeOf<N>>;
  randn(...args: [...ShapeArgs, DTypeOptions?] | [Shape, DTypeOptions?]): Tensor<DefaultDType>;
  /** The dtype JS numbers become in factories (float32 until changed), as torch.set_default_dtype. */
  setDefaultDtype(dtype: DefaultDType): void;
  getDefaultDtype(): DefaultDType;
  manualSeed(seed: number | bigint): void;
  memory(): MemoryStats;
  /** torch.promote_types */
  promoteTypes(a: DTypeName, b: DTypeName): DType;
  /** torch.can_cast (same-kind rule) */
  canCast(from: DTypeName, to: DTypeName): boolean;
  setNumThreads(n: number): void;
  getNumThreads(): number;
  maxThreads(): number;
  /** Resolves with the number of pthread workers once all have loaded (or one failed); they load in the
   * background after init(), and parallel kernels use the ones loaded so far. 0 without threads. */
  threadsReady(): Promise<number>;
}

export function init(options?: InitOptions): Promise<Weft>;

// ---- worker mode ----

/** An argument as worker mode takes it: tensors are WorkerTensors, in arrays and objects too. */
type WorkerArg<T> = T extends Tensor ? WorkerTensor
  : T extends ArrayBufferLike | ArrayBufferView | string | number | boolean | bigint | null | undefined |
    ((...args: never[]) => unknown) ? T
  : { [K in keyof T]: WorkerArg<T[K]> };
type WorkerArgs<A extends unknown[]> = { [I in keyof A]: WorkerArg<A[I]> };
/** A result as worker mode gives it: tensors at once, values through promises. */
type WorkerResult<R> = R extends Tensor ? WorkerTensor : R extends Tensor[] ? Promise<WorkerTensor[]>
  : R extends Returns<infer K> ? Promise<Returns<K, WorkerTensor>> : Promise<R>;
/**
 * A function as worker mode calls it: each of its overloads (up to the last four; generic ones at
 * their constraints) with WorkerTensor arguments and results, so t.sum() and t.sum(1) both type.
 */
type WorkerFn<F> =
  F extends { (...a: infer A1): infer R1; (...a: infer A2): infer R2; (...a: infer A3): infer R3; (...a: infer A4): infer R4 }
    ? ((...args: WorkerArgs<A1>) => WorkerResult<R1>) & ((...args: WorkerArgs<A2>) => WorkerResult<R2>) &
      ((...args: WorkerArgs<A3>) => WorkerResult<R3>) & ((...args: WorkerArgs<A4>) => WorkerResult<R4>)
    : never;

/**
 * A tensor that lives in the worker. Calls returning tensors return WorkerTensors at once (chain
 * freely); values come through promises: `await t.toArray()`, `await t.shape`. A failed call
 * surfaces as the rejection of the first value read from its result.
 */
export type WorkerTensor = {
  readonly [K in Exclude<keyof Tensor, 'dispose' | 'handle' | keyof AutogradTensorOps>]: Tensor[K] extends (...args: never[]) => unknown
    ? WorkerFn<Tensor[K]>
    : Tensor[K] extends Tensor ? WorkerTensor : Promise<Tensor[K]>;
} & {
  /** Sends the dispose; never throws. */
  dispose(): void;
  /** Resolves with the metadata once the worker made the tensor; rejects with its error. */
  readonly ready: Promise<{ shape: number[]; dtype: DType; device: Device }>;
  readonly id: number;
} & WorkerAutogradTensorOps;

type WeftCalls = Omit<Weft, 'tidy' | 'keep' | 'backend' | 'buildId' | 'variant' | 'WeftError' | 'Tensor' | 'tensor' |
  keyof WebGPUFunctions |
  'loadSafetensors' | 'optim' | 'nn' | keyof AutogradFunctions | keyof CheckpointFunctions>;

/** The weft API running in a dedicated Worker (see initWorker). */
export type WorkerWeft = {
  readonly [K in keyof WeftCalls]: WeftCalls[K] extends (...args: never[]) => unknown ? WorkerFn<WeftCalls[K]> : never;
} & {
  /**
   * A tensor from data. The data is copied to the worker; with { transfer: true } the ArrayBuffers of
   * TypedArray data are transferred instead (and detached here).
   */
  tensor(data: TensorData, options?: { dtype?: DTypeName; bits?: boolean; transfer?: boolean }): WorkerTensor;
  /** The file's tensors, made in the worker (the bytes are copied there, or transferred with { transfer: true }). */
  loadSafetensors(bytes: ArrayBufferLike | ArrayBufferView, options?: { metadata?: false; transfer?: boolean }):
    Promise<{ [name: string]: WorkerTensor }>;
  loadSafetensors(bytes: ArrayBufferLike | ArrayBufferView, options: { metadata: true; transfer?: boolean }):
    Promise<{ tensors: { [name: string]: WorkerTensor }; metadata: SafetensorsMetadata | null }>;
  /** Disposes the WorkerTensors made while fn ran, except those in its result. */
  tidy<T>(fn: (wt: WorkerWeft) => T): T;
  keep(t: WorkerTensor): WorkerTensor;
  backend(): Promise<Backend>;
  buildId(): Promise<string>;
  /** Stops the worker; pending calls reject. */
  terminate(): Promise<void>;
  readonly WeftError: typeof WeftError;
  /** torch.optim's SGD, Adam and AdamW, each living in the worker. */
  readonly optim: WorkerOptimNamespace;
} & WorkerAutogradFunctions;

/**
 * Worker mode: weft in a dedicated Worker (browsers: a module Worker from worker.js next to the
 * package's files; Node: worker_threads), so kernels never block the calling thread.
 */
export function initWorker(options?: InitOptions): Promise<WorkerWeft>;
