// Types for the normalizations (src/ops/normalization.def) in
// torch.nn.functional's calling forms (js/norm.js): tensors positional,
// options last. weight, bias and the running statistics may be null or
// omitted. batch_norm and group_norm keep the input's memory format
// (channels_last stays NHWC); layer_norm's result is contiguous.
import type { Shape, Tensor } from './weft.js';

export interface BatchNormOptions {
  /** Batch statistics (and a running-stat update) when true; the running statistics when false (default). */
  training?: boolean;
  /** running = (1 - momentum) * running + momentum * batch statistic (the variance unbiased); default 0.1. */
  momentum?: number;
  /** Added to the variance; default 1e-5. */
  eps?: number;
}

export interface NormFunctions {
  /**
   * F.batch_norm: input [N, C, ...]; runningMean / runningVar [C] (updated in place in training;
   * needed in evaluation), weight / bias [C].
   */
  batchNorm(input: Tensor, runningMean?: Tensor | null, runningVar?: Tensor | null, weight?: Tensor | null,
    bias?: Tensor | null, options?: BatchNormOptions): Tensor;
  batchNorm(input: Tensor, runningMean: Tensor | null, runningVar: Tensor | null, weight: Tensor | null,
    bias: Tensor | null, training: boolean, momentum?: number, eps?: number): Tensor;
  /** F.layer_norm over the trailing dims normalizedShape; weight / bias of that shape. */
  layerNorm(input: Tensor, normalizedShape: number | Shape, weight?: Tensor | null, bias?: Tensor | null,
    options?: { eps?: number }): Tensor;
  /** F.group_norm: input [N, C, ...], C divisible by numGroups; weight / bias [C]. */
  groupNorm(input: Tensor, numGroups: number, weight?: Tensor | null, bias?: Tensor | null,
    options?: { eps?: number }): Tensor;
}
