// Types for issue 24's functions in torch.nn.functional's calling forms
// (js/transformer.js; ops in src/ops/transformer.def). wt.indexCopy and
// x.indexCopy_ are the op table's generated functions (js/optable.d.ts).
import type { Shape, Tensor } from './weft.js';

export interface EmbeddingOptions {
  /** This row's gradient stays zero; a negative index counts from the end. Default null (none). */
  paddingIdx?: number | null;
  /** Rows the input reads whose normType-norm exceeds maxNorm are scaled down to it, in place (no gradient). */
  maxNorm?: number | null;
  /** The p of maxNorm's norm; default 2. */
  normType?: number;
  /** Each row's gradient divided by how often the input reads it; default false. */
  scaleGradByFreq?: boolean;
  /** Accepted for PyTorch's signature; weft's gradient is always dense. */
  sparse?: boolean;
}

export interface TransformerFunctions {
  /** F.embedding: rows of weight [numEmbeddings, embeddingDim] picked by int32 / int64 ids of any shape (result: ids' shape + [embeddingDim]). */
  embedding(input: Tensor, weight: Tensor, options?: EmbeddingOptions): Tensor;
  /**
   * F.rms_norm (PyTorch 2.4): x * rsqrt(mean(x², over normalizedShape's trailing dims) + eps) * weight;
   * eps null: the machine epsilon of float32 (float64 for float64 input).
   */
  rmsNorm(input: Tensor, normalizedShape: number | Shape, weight?: Tensor | null, options?: { eps?: number | null }): Tensor;
}
