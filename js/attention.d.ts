// Types for scaled dot product attention (src/ops/attention.def, issue 24):
// torch.nn.functional.scaled_dot_product_attention of PyTorch 2.x, tensors
// positional, options last.
import type { Tensor } from './weft.js';

export interface AttentionOptions {
  /**
   * Broadcast against the scores [..., L, S]: bool (true: the pair takes part, false: -inf) or a float mask
   * of the query's dtype, added to the scores. Not with isCausal.
   */
  attnMask?: Tensor | null;
  /** Dropout on the attention weights (the math path); default 0. */
  dropoutP?: number;
  /** Query i sees keys j <= i (tril(ones(L, S)), top-left aligned when L != S); default false. */
  isCausal?: boolean;
  /** Multiplies q k^T; default 1 / sqrt(E). */
  scale?: number | null;
  /** Key and value may have fewer heads (dim -3) than the query, each shared by a run of query heads; default false. */
  enableGqa?: boolean;
}

export interface AttentionFunctions {
  /**
   * softmax(query key^T * scale + mask) value for query [..., L, E], key [..., S, E], value [..., S, Ev]:
   * [..., L, Ev], contiguous. float32 without dropout runs fused (no [L, S] matrix; explain() says 'fused',
   * or 'decode' for fewer than 4 query rows); other dtypes and dropout the math path ('fallback'). A row with
   * every key masked is NaN.
   */
  scaledDotProductAttention(query: Tensor, key: Tensor, value: Tensor, options?: AttentionOptions): Tensor;
  scaledDotProductAttention(query: Tensor, key: Tensor, value: Tensor, attnMask?: Tensor | null, dropoutP?: number,
    isCausal?: boolean, options?: { scale?: number | null; enableGqa?: boolean }): Tensor;
}
