// Types for unique (js/unique.js over the op table's _unique2): the unique
// values as a Tensor, or { values, inverse?, counts? } when the options ask
// for more (only those asked, in that order, also iterable).
import type { Tensor } from './weft.js';
import type { Returns } from './ops.js';

export interface UniqueOptions {
  /** Default true. The result is sorted either way (a valid order of an unsorted unique). */
  sorted?: boolean;
  returnInverse?: boolean;
  returnCounts?: boolean;
  /** Only null (the flattened input) for now. */
  dim?: null;
}
type Plain = UniqueOptions & { returnInverse?: false; returnCounts?: false };
type WithInverse = UniqueOptions & { returnInverse: true; returnCounts?: false };
type WithCounts = UniqueOptions & { returnInverse?: false; returnCounts: true };
type WithBoth = UniqueOptions & { returnInverse: true; returnCounts: true };

export interface UniqueFunctions {
  unique(self: Tensor, options?: Plain): Tensor;
  unique(self: Tensor, options: WithInverse): Returns<'values' | 'inverse'>;
  unique(self: Tensor, options: WithCounts): Returns<'values' | 'counts'>;
  unique(self: Tensor, options: WithBoth): Returns<'values' | 'inverse' | 'counts'>;
}

export interface UniqueTensorOps {
  unique(options?: Plain): Tensor;
  unique(options: WithInverse): Returns<'values' | 'inverse'>;
  unique(options: WithCounts): Returns<'values' | 'counts'>;
  unique(options: WithBoth): Returns<'values' | 'inverse' | 'counts'>;
}
