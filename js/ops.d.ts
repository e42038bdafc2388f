// Types for js/ops.js: the op table from JS (wt.ops, wt.trace, wt.explain); the
// functions and methods it makes from the registry at init are declared in
// js/optable.d.ts, generated from the op table by scripts/gen_types.mjs.
import type { DType, Tensor } from './weft.js';
import type { OpFunctions, OpMethods, OpName } from './optable.js';
import type { ReduceFunctions, ReduceTensorOps, ReductionPlan } from './reduce.js';
import type { ConvPlan, ConvTransposePlan, InvertedResidualPlan } from './conv.js';

export type { LinalgFunctions, OpFunctions, OpMethods, OpName } from './optable.js';

/** A Python number: JS numbers, booleans and bigints. */
export type Scalar = number | boolean | bigint;
/** A tensor operand; JS numbers and booleans act as PyTorch's Python scalars. */
export type Operand = Tensor | Scalar;
/** An index argument's plain-JS form (indexSelect, gather, scatter, take, ...): integers as an int64 tensor. */
export type IndexArray = readonly (number | bigint | IndexArray)[] | Int32Array | BigInt64Array | Uint8Array | Int16Array;
export interface OutOptions { out?: Tensor }
export interface AlphaOptions extends OutOptions { alpha?: number | boolean }

/**
 * One call or redispatch recorded by wt.trace, or (node: true) one autograd
 * node run by a backward pass, in the engine's order, with the ops its
 * formula dispatched after it at a greater depth.
 */
export interface TraceEntry {
  /** 'aten::add.Tensor'; for a node, its name: 'MulBackward0', 'AccumulateGrad', 'CopySlices' */
  op: string;
  /** The dispatch key whose kernel ran: 'CPU', 'Meta', 'BackendSelect', 'AutogradCPU', ...; 'Autograd' for a node */
  key: string;
  /** 0 for calls made outside any kernel or node. */
  depth: number;
  redispatch: boolean;
  /** An autograd node run by backward() or wt.autograd.grad(). */
  node: boolean;
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
  /** 'interleaved' / 'deinterleave': a pointwise op over 2..4 channels of pixels (an HWC image seen
   * as CHW) whose result interleaves them, or is planar beside an input that interleaves them. */
  loop: 'vectorized' | 'scalar-broadcast' | 'transpose' | 'strided' | 'interleaved' | 'deinterleave';
  /** A pointwise op's tiny inner dim (at most 4, e.g. channels) traded places with its longest dim. */
  widenedInner: boolean;
  /** Parallel chunks at the current thread count. */
  chunks: number;
  /** Reductions only. */
  reduction?: ReductionPlan;
}

/** What ops.call and explain accept: converted by the op's schema; a trailing plain object holds keywords. */
export type OpArg =
  | Tensor | number | boolean | bigint | string | null | undefined
  | readonly number[] | readonly (Tensor | null)[] | { [keyword: string]: unknown };
export type OpResult = Tensor | number | boolean | string | null | undefined | OpResult[] | Returns<string>;

/**
 * The tensors of an op with named returns, as PyTorch's torch.return_types: by name
 * (`wt.max(x, 1).indices`), by position (`r[0]`) and iterable (`const [values, indices] = wt.max(x, 1)`).
 * Unnamed returns (var_mean) come as an array instead: `const [v, m] = wt.varMean(x)`.
 */
export type Returns<K extends string, T = Tensor> = { readonly [P in K]: T } & Iterable<T> & {
  readonly [i: number]: T;
  readonly length: number;
};
/** max / min along a dim: PyTorch's (values, indices). */
export type ValuesIndices = Returns<'values' | 'indices'>;

export interface OpsNamespace {
  /** A boxed call by name: 'aten::add.Tensor', 'add.Tensor', or 'add' (overload chosen by the arguments). */
  call(name: OpName, ...args: OpArg[]): OpResult;
  list(): { name: OpName; schema: string }[];
  /** PyTorch's schema text. */
  schema(name: OpName): string;
  table(name: OpName): TableEntry[];
  /** The camelCase names generated at init. */
  readonly generated: { readonly functions: string[]; readonly methods: string[] };
}

/** wt.ops, wt.trace and wt.explain. */
export interface OpsApi {
  readonly ops: OpsNamespace;
  /** Runs fn with the dispatch trace on; every call and redispatch, nested ones included, and the nodes a backward pass runs. */
  trace(fn: () => unknown): TraceEntry[];
  /** The plan of the first TensorIterator the op would run (its loops are skipped); null when it runs none. */
  /** conv2d, conv1d, conv_transpose2d: the algorithm they run (js/conv.d.ts). */
  explain(op: 'conv2d' | 'conv2d.padding' | 'aten::conv2d' | 'aten::conv2d.padding' | 'conv1d' | 'conv1d.padding'
    | 'aten::conv1d' | 'aten::conv1d.padding', ...args: OpArg[]): ConvPlan;
  explain(op: 'conv_transpose2d' | 'conv_transpose2d.input' | 'aten::conv_transpose2d.input', ...args: OpArg[]):
    ConvTransposePlan;
  explain(op: '_inverted_residual', ...args: OpArg[]): InvertedResidualPlan | ConvPlan;
  explain(op: OpName, ...args: OpArg[]): ExplainPlan | null;
}

/** The op table's functions (wt.add, wt.view, ...) and wt.ops / trace / explain. */
export type OpsFunctions = OpFunctions & ReduceFunctions & OpsApi;
/** The op table's methods (t.add, t.add_, t.to, ...). */
export type TensorOps = OpMethods & ReduceTensorOps;
