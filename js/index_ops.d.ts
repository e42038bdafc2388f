// Types for indexing's JS calling forms (js/index_ops.js): x.index(...items)
// and x.indexPut_(items, values) in PyTorch's __getitem__ / __setitem__
// forms, nonzero's asTuple and where(cond). The ops themselves
// (indexSelect, gather, scatter, ...) are generated (js/optable.d.ts).
import type { Tensor } from './weft.js';

/**
 * One item of x.index(...): an integer (select; negative counts from the end), a slice string
 * ('1:3', '::2', ':', '-1:', '1:-1:2'), null (a new axis of size 1), '...' (every dim not otherwise
 * indexed), an int64 tensor or an array of integers (advanced indexing), or a bool / uint8 tensor
 * (a mask over as many dims as it has).
 */
export type IndexItem = number | string | null | Tensor | readonly number[];

export interface IndexPutOptions {
  /** Add values at the indexed positions (duplicates add up) instead of writing them. */
  accumulate?: boolean;
}

export interface IndexingFunctions {
  /** The [n, ndim] int64 coordinates of the nonzero elements, in C order. */
  nonzero(self: Tensor, options?: { asTuple?: false; out?: Tensor }): Tensor;
  /** One int64 1-D tensor of coordinates per dim (a 0-dim input counts as 1-D). */
  nonzero(self: Tensor, options: { asTuple: true }): Tensor[];
  /** nonzero(condition, { asTuple: true }). */
  where(condition: Tensor): Tensor[];
  where(condition: Tensor, self: Tensor | number | boolean, other: Tensor | number | boolean,
    options?: { out?: Tensor }): Tensor;
}

export interface IndexingTensorOps {
  nonzero(options?: { asTuple?: false; out?: Tensor }): Tensor;
  nonzero(options: { asTuple: true }): Tensor[];
  /**
   * PyTorch's x[items]: integers, slices, null and '...' give a view; tensor items (advanced
   * indexing) copy, their result dims where PyTorch puts them (in place when the tensor items are
   * adjacent, first otherwise).
   */
  index(...items: IndexItem[]): Tensor;
  /** PyTorch's x[items] = values (values broadcast to the indexed shape); returns this tensor. */
  indexPut_(items: IndexItem | readonly IndexItem[], values: Tensor | number | boolean, options?: IndexPutOptions): this;
}
