// Types for js/ops.js: the op table from JS (wt.ops, wt.trace, wt.explain and
// the functions and methods generated from the registry at init).
import type { DType, DTypeName, MemoryFormat, Shape, ShapeArgs, Tensor } from './weft.js';
import type { ReduceFunctions, ReduceTensorOps, ReductionPlan } from './reduce.js';

/** A tensor operand; JS numbers and booleans act as PyTorch's Python scalars. */
export type Operand = Tensor | number | boolean | bigint;
export interface OutOptions { out?: Tensor }
export interface AlphaOptions extends OutOptions { alpha?: number | boolean }

/** One call or redispatch recorded by wt.trace. */
export interface TraceEntry {
  /** 'aten::add.Tensor' */
  op: string;
  /** The dispatch key whose kernel ran: 'CPU', 'Meta', 'BackendSelect', 'AutogradCPU', ... */
  key: string;
  /** 0 for calls made outside any kernel. */
  depth: number;
  redispatch: boolean;
}

/** One runtime key's column of an op's dispatch table. */
export interface TableEntry {
  key: string;
  kind: 'direct' | 'alias' | 'fallback' | 'fallthrough' | 'missing';
  /** The key the kernel was registered for (the alias key for 'alias'); null when missing. */
  source: string | null;
  kernel: string | null;
  boxedOnly: boolean;
}

/** The TensorIterator plan: shapes and strides fastest dimension first, strides in bytes. */
export interface ExplainPlan {
  op: string;
  numel: number;
  broadcastShape: number[];
  /** permutation[i] = the broadcast dimension iterator dimension i walks (empty when fast setup skipped it). */
  permutation: number[];
  /** After reordering and coalescing. */
  shape: number[];
  /** One array per operand, outputs first. */
  strides: number[][];
  dtypes: DType[];
  commonDtype: DType | null;
  fastSetup: 'none' | 'contiguous' | 'channels_last' | 'non_overlapping_dense';
  loop: 'vectorized' | 'scalar-broadcast' | 'transpose' | 'strided';
  /** Parallel chunks at the current thread count. */
  chunks: number;
  /** Reductions only. */
  reduction?: ReductionPlan;
}

/** What ops.call and explain accept: converted by the op's schema; a trailing plain object holds keywords. */
export type OpArg =
  | Tensor | number | boolean | bigint | string | null | undefined
  | readonly number[] | readonly (Tensor | null)[] | { [keyword: string]: unknown };
export type OpResult = Tensor | number | boolean | string | null | undefined | OpResult[];

export interface OpsNamespace {
  /** A boxed call by name: 'aten::add.Tensor', 'add.Tensor', or 'add' (overload chosen by the arguments). */
  call(name: string, ...args: OpArg[]): OpResult;
  list(): { name: string; schema: string }[];
  /** PyTorch's schema text. */
  schema(name: string): string;
  table(name: string): TableEntry[];
  /** The camelCase names generated at init. */
  readonly generated: { readonly functions: string[]; readonly methods: string[] };
}

type Binary = 'mul' | 'div' | 'floorDivide' | 'remainder' | 'pow' | 'maximum' | 'minimum'
  | 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge' | 'logicalAnd' | 'logicalOr' | 'logicalXor'
  | 'bitwiseAnd' | 'bitwiseOr' | 'bitwiseXor';
type Unary = 'neg' | 'abs' | 'sign' | 'exp' | 'log' | 'log1p' | 'expm1' | 'sqrt' | 'rsqrt' | 'sin' | 'cos'
  | 'tan' | 'tanh' | 'sigmoid' | 'relu' | 'gelu' | 'erf' | 'floor' | 'ceil' | 'round' | 'trunc'
  | 'reciprocal' | 'logicalNot';
type WithAlpha = 'add' | 'sub';

export type OpsFunctions =
  & ReduceFunctions
  & { [K in WithAlpha]: (self: Operand, other: Operand, options?: AlphaOptions) => Tensor }
  & { [K in Binary]: (self: Operand, other: Operand, options?: OutOptions) => Tensor }
  & { [K in Unary]: (self: Tensor, options?: OutOptions) => Tensor }
  & {
    readonly ops: OpsNamespace;
    /** Runs fn with the dispatch trace on; every call and redispatch, nested ones included. */
    trace(fn: () => unknown): TraceEntry[];
    /** The plan of the first TensorIterator the op would run (its loops are skipped); null when it runs none. */
    explain(op: string, ...args: OpArg[]): ExplainPlan | null;
    where(condition: Tensor, self: Operand, other: Operand, options?: OutOptions): Tensor;
    clone(self: Tensor, options?: { memoryFormat?: MemoryFormat }): Tensor;
    contiguous(self: Tensor, options?: { memoryFormat?: MemoryFormat }): Tensor;
    view(self: Tensor, ...shape: ShapeArgs): Tensor;
    reshape(self: Tensor, ...shape: ShapeArgs): Tensor;
    permute(self: Tensor, ...dims: ShapeArgs): Tensor;
    transpose(self: Tensor, dim0: number, dim1: number): Tensor;
    t(self: Tensor): Tensor;
    squeeze(self: Tensor, dim?: number): Tensor;
    unsqueeze(self: Tensor, dim: number): Tensor;
    narrow(self: Tensor, dim: number, start: number, length: number): Tensor;
    select(self: Tensor, dim: number, index: number): Tensor;
    flatten(self: Tensor, startDim?: number, endDim?: number): Tensor;
    movedim(self: Tensor, source: number | Shape, destination: number | Shape): Tensor;
  };

type InplaceBinary = `${WithAlpha | Binary}_`;
type InplaceUnary = `${Unary}_`;

export type TensorOps =
  & ReduceTensorOps
  & { [K in WithAlpha]: (other: Operand, options?: AlphaOptions) => Tensor }
  & { [K in Binary]: (other: Operand, options?: OutOptions) => Tensor }
  & { [K in Unary]: (options?: OutOptions) => Tensor }
  & { [K in InplaceBinary]: (other: Operand, options?: { alpha?: number | boolean }) => Tensor }
  & { [K in InplaceUnary]: () => Tensor }
  & {
    /** x.where(condition, y): condition ? x : y */
    where(condition: Tensor, other: Operand): Tensor;
    /** Copies src (broadcast, cast) into this tensor; returns it. */
    copy_(src: Tensor): Tensor;
    fill_(value: number | boolean | bigint): Tensor;
    zero_(): Tensor;
    to(dtype: DTypeName, options?: { copy?: boolean }): Tensor;
  };
