// Types for 2-D pooling (src/ops/pool.def), in torch.nn.functional's calling
// form (js/pool.js): the input, the kernel or output size, options last. A
// size is a number (both dims) or [h, w]; inputs are [C, H, W] or [N, C, H, W]
// and the result keeps the input's memory format (channels_last stays NHWC).
import type { Tensor } from './weft.js';

export type Size2 = number | readonly number[];
export interface MaxPool2dOptions {
  /** Default (null or omitted): the kernel size. */
  stride?: Size2 | null;
  padding?: Size2;
  dilation?: Size2;
  /** Round the output size up; the last window must start inside the input or its left padding. */
  ceilMode?: boolean;
  /** Also return the int64 indices (flat h * W + w into each input plane) of the maxima; int32 on the webgpu device (WGSL has no int64). */
  returnIndices?: boolean;
}
export interface AvgPool2dOptions {
  stride?: Size2 | null;
  padding?: Size2;
  ceilMode?: boolean;
  /** Count padded zeros in the divisor (default true). */
  countIncludePad?: boolean;
  /** Divide every window by this instead. */
  divisorOverride?: number | null;
  out?: Tensor;
}
/** An output size; null entries keep the input's size in that dim. */
export type AdaptiveSize = number | readonly (number | null)[];

/** explain()'s plan for a pooling op: which driver path runs. */
export interface PoolPlan {
  op: string;
  kind: 'pool2d';
  /** nchw_s1 / nchw_s2 (vectorized along the output width), nchw_generic, nhwc (across channels),
   * nhwc_indices, nchw_adaptive, nhwc_adaptive, or reference (float64, int64, NCHW indices). */
  path: string;
  memoryFormat: 'contiguous_format' | 'channels_last';
  dtype: string;
  computeDtype: string;
  input: number[];
  output: number[];
  kernel: number[];
  stride: number[];
  padding: number[];
  dilation: number[];
  indices: boolean;
  threads: number;
}

export interface PoolFunctions {
  maxPool2d(self: Tensor, kernelSize: Size2, options?: MaxPool2dOptions & { returnIndices?: false }): Tensor;
  maxPool2d(self: Tensor, kernelSize: Size2, options: MaxPool2dOptions & { returnIndices: true }): [Tensor, Tensor];
  avgPool2d(self: Tensor, kernelSize: Size2, options?: AvgPool2dOptions): Tensor;
  adaptiveAvgPool2d(self: Tensor, outputSize: AdaptiveSize, options?: { out?: Tensor }): Tensor;
}

export interface PoolTensorOps {
  maxPool2d(kernelSize: Size2, options?: MaxPool2dOptions & { returnIndices?: false }): Tensor;
  maxPool2d(kernelSize: Size2, options: MaxPool2dOptions & { returnIndices: true }): [Tensor, Tensor];
  avgPool2d(kernelSize: Size2, options?: AvgPool2dOptions): Tensor;
  adaptiveAvgPool2d(outputSize: AdaptiveSize, options?: { out?: Tensor }): Tensor;
}
