// wt.nn.utils' eval-mode fusion (js/fusion.js): torch.nn.utils.fusion in camelCase.
import type { Tensor } from './weft.js';

/** The fields fuseConvBnEval reads from a convolution module (wt.nn.Conv2d's). */
export interface FusableConv {
  weight: Tensor;
  bias?: Tensor | null;
  stride?: unknown;
  padding?: unknown;
  dilation?: unknown;
  groups?: number;
  training?: boolean;
  clone?(): FusableConv;
}

/** The fields fuseConvBnEval reads from a BatchNorm module (wt.nn.BatchNorm2d's). */
export interface FusableBatchNorm {
  runningMean: Tensor;
  runningVar: Tensor;
  eps: number;
  weight?: Tensor | null;
  bias?: Tensor | null;
  training?: boolean;
}

export interface FusionUtils {
  /**
   * torch.nn.utils.fusion.fuse_conv_bn_weights: the conv weight scaled by bnW / sqrt(bnRv + bnEps) along its
   * output channels (dim 1 when transpose) and the bias (convB - bnRm) * bnW / sqrt(bnRv + bnEps) + bnB; null
   * convB / bnW / bnB are zeros / ones / zeros. New tensors that require grad.
   */
  fuseConvBnWeights(convW: Tensor, convB: Tensor | null, bnRm: Tensor, bnRv: Tensor, bnEps: number,
    bnW: Tensor | null, bnB: Tensor | null, options?: { transpose?: boolean }): [Tensor, Tensor];
  /** torch.nn.utils.fusion.fuse_conv_bn_eval: a copy of conv (both in eval) with bn folded into its weight and bias. */
  fuseConvBnEval<C extends FusableConv>(conv: C, bn: FusableBatchNorm, options?: { transpose?: boolean }): C;
}

export interface NnNamespace {
  readonly utils: FusionUtils;
}
