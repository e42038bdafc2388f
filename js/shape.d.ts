// Types for the shape, fill and random ops (src/ops/shape.def) in their JS
// calling forms: PyTorch's positional order, options last, where an option
// may name any argument with a default (x.clamp({ max: 6 }), x.tril({ diagonal: 1 })).
import type { DType, DTypeName, DTypeOf, Device, MemoryFormat, Shape, Tensor } from './weft.js';

export type Bound = number | Tensor | null;
export interface ClampOptions { min?: Bound; max?: Bound; out?: Tensor }
export interface TriOptions { diagonal?: number; out?: Tensor }
export interface RepeatInterleaveOptions {
  /** The dim to repeat along; none: the flattened input. */
  dim?: number | null;
  /** The total size along dim, when known (checked). */
  outputSize?: number | null;
}
export interface LikeOptions<N extends DTypeName = DTypeName> {
  dtype?: N | null;
  /** 'preserve_format' (default) keeps the strides of a dense input, like PyTorch. */
  memoryFormat?: MemoryFormat | null;
  /** The result is a leaf that requires grad (floating dtypes). */
  requiresGrad?: boolean;
}
export interface FactoryOptions<N extends DTypeName = DTypeName> {
  dtype?: N | null;
  device?: Device | null;
  /** The result is a leaf that requires grad (floating dtypes; randint/randperm refuse it, as PyTorch). */
  requiresGrad?: boolean;
}

export interface ShapeTensorOps {
  /** The dims listed (varargs or an array) reversed: a copy in the input's layout. */
  flip(...dims: number[] | [readonly number[]]): Tensor;
  /** Rolled by shifts along dims (none: the flattened tensor, shape kept). */
  roll(shifts: number | readonly number[], dims?: number | readonly number[]): Tensor;
  /** Tiled repeats times (at least one repeat per dim; more add leading dims). */
  repeat(...repeats: number[] | [readonly number[]]): Tensor;
  tile(dims: number | readonly number[]): Tensor;
  repeatInterleave(repeats: number | Tensor, dim?: number | null, options?: RepeatInterleaveOptions): Tensor;
  repeatInterleave(repeats: number | Tensor, options?: RepeatInterleaveOptions): Tensor;
  tril(diagonal?: number, options?: TriOptions): Tensor;
  tril(options: TriOptions): Tensor;
  triu(diagonal?: number, options?: TriOptions): Tensor;
  triu(options: TriOptions): Tensor;
  tril_(diagonal?: number): Tensor;
  triu_(diagonal?: number): Tensor;
  /** 1-D: the square matrix with it on the diagonal'th diagonal; 2-D: that diagonal (a copy). */
  diag(diagonal?: number, options?: { out?: Tensor }): Tensor;
  /** A view of the diagonal of the dim1 x dim2 matrices, as a last dim. */
  diagonal(offset?: number, dim1?: number, dim2?: number): Tensor;
  diagonal(options: { offset?: number; dim1?: number; dim2?: number }): Tensor;
  /** At least one bound; numbers promote an integer tensor as PyTorch's Python scalars do. */
  clamp(min?: Bound, max?: Bound, options?: ClampOptions): Tensor;
  clamp(options: ClampOptions): Tensor;
  clamp_(min?: Bound, max?: Bound): Tensor;
  clamp_(options: { min?: Bound; max?: Bound }): Tensor;
  clampMin(min: number | Tensor, options?: { out?: Tensor }): Tensor;
  clampMax(max: number | Tensor, options?: { out?: Tensor }): Tensor;
  clampMin_(min: number): Tensor;
  clampMax_(max: number): Tensor;
  /** Each element 1 with probability p (this tensor's values, or the number). */
  bernoulli(p?: number, options?: { out?: Tensor }): Tensor;
  bernoulli_(p?: number | Tensor): Tensor;
  /** numSamples category indices per row (int64), with or without replacement. */
  multinomial(numSamples: number, replacement?: boolean, options?: { out?: Tensor }): Tensor;
}

export interface ShapeFunctions {
  flip(x: Tensor, dims: number | readonly number[]): Tensor;
  roll(x: Tensor, shifts: number | readonly number[], dims?: number | readonly number[]): Tensor;
  repeatInterleave(x: Tensor, repeats: number | Tensor, dim?: number | null, options?: RepeatInterleaveOptions): Tensor;
  repeatInterleave(x: Tensor, repeats: number | Tensor, options?: RepeatInterleaveOptions): Tensor;
  /** repeat_interleave.Tensor: [0] * repeats[0] + [1] * repeats[1] + ... */
  repeatInterleave(repeats: Tensor, options?: { outputSize?: number | null }): Tensor;
  tile(x: Tensor, dims: number | readonly number[]): Tensor;
  tril(x: Tensor, diagonal?: number, options?: TriOptions): Tensor;
  triu(x: Tensor, diagonal?: number, options?: TriOptions): Tensor;
  diag(x: Tensor, diagonal?: number, options?: { out?: Tensor }): Tensor;
  diagonal(x: Tensor, offset?: number, dim1?: number, dim2?: number): Tensor;
  clamp(x: Tensor, min?: Bound, max?: Bound, options?: ClampOptions): Tensor;
  clamp(x: Tensor, options: ClampOptions): Tensor;
  clampMin(x: Tensor, min: number | Tensor, options?: { out?: Tensor }): Tensor;
  clampMax(x: Tensor, max: number | Tensor, options?: { out?: Tensor }): Tensor;
  linspace<N extends DTypeName = 'float32'>(start: number, end: number, steps: number,
    options?: FactoryOptions<N>): Tensor<DTypeOf<N>>;
  logspace<N extends DTypeName = 'float32'>(start: number, end: number, steps: number, base?: number,
    options?: FactoryOptions<N>): Tensor<DTypeOf<N>>;
  eye<N extends DTypeName = 'float32'>(n: number, m?: number, options?: FactoryOptions<N>): Tensor<DTypeOf<N>>;
  eye<N extends DTypeName = 'float32'>(n: number, options?: FactoryOptions<N>): Tensor<DTypeOf<N>>;
  zerosLike<N extends DTypeName>(x: Tensor, options: LikeOptions<N> & { dtype: N }): Tensor<DTypeOf<N>>;
  zerosLike<D extends DType>(x: Tensor<D>, options?: LikeOptions): Tensor<D>;
  onesLike<N extends DTypeName>(x: Tensor, options: LikeOptions<N> & { dtype: N }): Tensor<DTypeOf<N>>;
  onesLike<D extends DType>(x: Tensor<D>, options?: LikeOptions): Tensor<D>;
  fullLike<N extends DTypeName>(x: Tensor, fillValue: number | boolean, options: LikeOptions<N> & { dtype: N }):
    Tensor<DTypeOf<N>>;
  fullLike<D extends DType>(x: Tensor<D>, fillValue: number | boolean, options?: LikeOptions): Tensor<D>;
  /** Uniform [0, 1) (PyTorch's stream for a seed, in memory order). */
  randLike<D extends DType>(x: Tensor<D>, options?: LikeOptions): Tensor<D>;
  randnLike<D extends DType>(x: Tensor<D>, options?: LikeOptions): Tensor<D>;
  /** Integers in [low, high) (low 0 when omitted); int64 unless dtype says. */
  randint(high: number, size: Shape, options?: FactoryOptions): Tensor;
  randint(low: number, high: number, size: Shape, options?: FactoryOptions): Tensor;
  randperm(n: number, options?: FactoryOptions): Tensor;
  bernoulli(x: Tensor, p?: number, options?: { out?: Tensor }): Tensor;
  multinomial(x: Tensor, numSamples: number, replacement?: boolean, options?: { out?: Tensor }): Tensor;
}
