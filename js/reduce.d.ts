// Types for the reductions of the op table (src/ops/reduce.def): PyTorch's
// positional order, options last. A dim is a number or a list; none (or [])
// reduces every dim.
import type { DTypeName, Tensor } from './weft.js';
import type { ValuesIndices } from './ops.js';

export type Dims = number | readonly number[];
export interface ReduceOptions {
  keepdim?: boolean;
  /** The result dtype; the input is converted to it first (PyTorch's dtype=). */
  dtype?: DTypeName;
  out?: Tensor;
}
export interface VarOptions {
  keepdim?: boolean;
  /** Subtracted from the count (default 1, Bessel's correction). */
  correction?: number | null;
  unbiased?: boolean;
  /** var.correction_out / std.correction_out (with a dim; not with unbiased): resized, the result copied in. */
  out?: Tensor;
}
export interface MinMaxOptions {
  keepdim?: boolean;
  out?: Tensor;
}

/** explain()'s reduction fields (TensorIterator in reduction mode). */
export interface ReductionPlan {
  /** The input's dims that are reduced. */
  reducedDims: number[];
  /** inner: rows contiguous in the input; outer: vectorized across the kept dim. */
  kind: 'none' | 'inner' | 'outer' | 'strided';
  numOutputs: number;
  reduceSize: number;
  /** How threads share the work: over outputs, or over the reduced range with partials. */
  split: 'serial' | 'outputs' | 'reduced';
  /** The iterator dim cut for the threads (-1: serial). */
  splitDim: number;
  chunks: number;
  accDtype: string;
}

/** max / min along a dim. */
export interface MinMaxDimOptions {
  keepdim?: boolean;
  /** [values, indices] to write into (PyTorch's out=(v, i)). */
  out?: readonly [Tensor, Tensor];
}
/** varMean / stdMean: var's options, and [var, mean] out tensors. */
export interface VarMeanOptions extends Omit<VarOptions, 'out'> {
  out?: readonly [Tensor, Tensor];
}

/** cumsum / cumprod. */
export interface ScanOptions {
  /** The result dtype (the input is converted first); integral and bool inputs give int64 without it. */
  dtype?: DTypeName;
  out?: Tensor;
}

export interface ReduceFunctions extends NormFunctions {
  sum(self: Tensor, options?: { dtype?: DTypeName }): Tensor;
  sum(self: Tensor, dim: Dims | null, options?: ReduceOptions): Tensor;
  mean(self: Tensor, options?: { dtype?: DTypeName }): Tensor;
  mean(self: Tensor, dim: Dims | null, options?: ReduceOptions): Tensor;
  prod(self: Tensor, options?: { dtype?: DTypeName }): Tensor;
  prod(self: Tensor, dim: number, options?: ReduceOptions): Tensor;
  amax(self: Tensor, dim?: Dims, options?: MinMaxOptions): Tensor;
  amin(self: Tensor, dim?: Dims, options?: MinMaxOptions): Tensor;
  /** Without a dim: the largest element (NaN wins), as a 0-dim tensor. */
  max(self: Tensor): Tensor;
  min(self: Tensor): Tensor;
  /** int64 indices; no dim: into the flattened input. The first index of ties; NaN wins. */
  argmax(self: Tensor, dim?: number | null, options?: MinMaxOptions): Tensor;
  argmin(self: Tensor, dim?: number | null, options?: MinMaxOptions): Tensor;
  /** Along one dim, shifted by the row's max (no overflow); dtype converts the input first. */
  softmax(self: Tensor, dim: number, options?: { dtype?: DTypeName }): Tensor;
  logSoftmax(self: Tensor, dim: number, options?: { dtype?: DTypeName }): Tensor;
  /** var(x), var(x, dim, { keepdim, correction }) or var(x, dim, { unbiased, keepdim }); floating inputs. */
  var(self: Tensor, options?: { unbiased?: boolean }): Tensor;
  var(self: Tensor, dim: Dims | null, options?: VarOptions): Tensor;
  std(self: Tensor, options?: { unbiased?: boolean }): Tensor;
  std(self: Tensor, dim: Dims | null, options?: VarOptions): Tensor;
  /**
   * Along a dim: { values, indices } (also `const [values, indices] = ...`); indices int64, the first of ties;
   * NaN wins. Without a dim: the largest element (worker mode: both through a promise).
   */
  max(self: Tensor, dim: number, options?: MinMaxDimOptions): ValuesIndices;
  min(self: Tensor, dim: number, options?: MinMaxDimOptions): ValuesIndices;
  /** PyTorch's max.other / min.other: the elementwise maximum (minimum) of two tensors, as wt.maximum. */
  max(self: Tensor, other: Tensor, options?: { out?: Tensor }): Tensor;
  min(self: Tensor, other: Tensor, options?: { out?: Tensor }): Tensor;
  /** [var, mean] in one call, var's overloads and options; floating inputs. */
  varMean(self: Tensor, options?: { unbiased?: boolean }): [Tensor, Tensor];
  varMean(self: Tensor, dim?: Dims | null, options?: VarMeanOptions): [Tensor, Tensor];
  /** [std, mean] */
  stdMean(self: Tensor, options?: { unbiased?: boolean }): [Tensor, Tensor];
  stdMean(self: Tensor, dim?: Dims | null, options?: VarMeanOptions): [Tensor, Tensor];
  /** Running sums (products) along dim, accumulated in float64 for float32 (PyTorch's CPU kernel). */
  cumsum(self: Tensor, dim: number, options?: ScanOptions): Tensor;
  cumprod(self: Tensor, dim: number, options?: ScanOptions): Tensor;
}

export interface ReduceTensorOps extends NormTensorOps {
  sum(options?: { dtype?: DTypeName }): Tensor;
  sum(dim: Dims | null, options?: ReduceOptions): Tensor;
  mean(options?: { dtype?: DTypeName }): Tensor;
  mean(dim: Dims | null, options?: ReduceOptions): Tensor;
  prod(options?: { dtype?: DTypeName }): Tensor;
  prod(dim: number, options?: ReduceOptions): Tensor;
  amax(dim?: Dims, options?: MinMaxOptions): Tensor;
  amin(dim?: Dims, options?: MinMaxOptions): Tensor;
  max(): Tensor;
  min(): Tensor;
  argmax(dim?: number | null, options?: MinMaxOptions): Tensor;
  argmin(dim?: number | null, options?: MinMaxOptions): Tensor;
  softmax(dim: number, options?: { dtype?: DTypeName }): Tensor;
  logSoftmax(dim: number, options?: { dtype?: DTypeName }): Tensor;
  var(options?: { unbiased?: boolean }): Tensor;
  var(dim: Dims | null, options?: VarOptions): Tensor;
  std(options?: { unbiased?: boolean }): Tensor;
  std(dim: Dims | null, options?: VarOptions): Tensor;
  max(dim: number, options?: MinMaxDimOptions): ValuesIndices;
  min(dim: number, options?: MinMaxDimOptions): ValuesIndices;
  max(other: Tensor, options?: { out?: Tensor }): Tensor;
  min(other: Tensor, options?: { out?: Tensor }): Tensor;
  varMean(options?: { unbiased?: boolean }): [Tensor, Tensor];
  varMean(dim?: Dims | null, options?: VarMeanOptions): [Tensor, Tensor];
  stdMean(options?: { unbiased?: boolean }): [Tensor, Tensor];
  stdMean(dim?: Dims | null, options?: VarMeanOptions): [Tensor, Tensor];
  cumsum(dim: number, options?: ScanOptions): Tensor;
  cumprod(dim: number, options?: ScanOptions): Tensor;
  /** In place: self keeps its dtype (a different dtype= is refused). */
  cumsum_(dim: number, options?: { dtype?: DTypeName }): Tensor;
  cumprod_(dim: number, options?: { dtype?: DTypeName }): Tensor;
}

// norm, all, any, logsumexp (src/ops/norm.c).
export interface NormOptions {
  keepdim?: boolean;
  /** The result dtype (floating); the input is converted to it first. */
  dtype?: DTypeName;
  out?: Tensor;
}
/** p: a number (0 counts non-zeros, Infinity / -Infinity the max / min of |x|), null for 2, or 'fro'. */
export type NormP = number | boolean | 'fro' | null;

export interface NormFunctions {
  /** The p-norm of every element (p default 2), or over dim; floating inputs (or a floating dtype). */
  norm(self: Tensor, p?: NormP, options?: NormOptions): Tensor;
  norm(self: Tensor, p: NormP, dim: Dims, options?: NormOptions): Tensor;
  /** bool (uint8 for uint8 inputs): every element non-zero (NaN counts as true). */
  all(self: Tensor, options?: { out?: Tensor }): Tensor;
  all(self: Tensor, dim: number, options?: MinMaxOptions): Tensor;
  any(self: Tensor, options?: { out?: Tensor }): Tensor;
  any(self: Tensor, dim: number, options?: MinMaxOptions): Tensor;
  /** log(sum(exp(x))) over dim, shifted by the max (no overflow); integral inputs give float32. */
  logsumexp(self: Tensor, dim: Dims, options?: MinMaxOptions): Tensor;
}

export interface NormTensorOps {
  norm(p?: NormP, options?: NormOptions): Tensor;
  norm(p: NormP, dim: Dims, options?: NormOptions): Tensor;
  all(options?: { out?: Tensor }): Tensor;
  all(dim: number, options?: MinMaxOptions): Tensor;
  any(options?: { out?: Tensor }): Tensor;
  any(dim: number, options?: MinMaxOptions): Tensor;
  logsumexp(dim: Dims, options?: MinMaxOptions): Tensor;
}
