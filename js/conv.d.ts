// Types for conv2d (src/ops/conv.def) in its JS calling form: input, weight,
// bias, then an options object; padding a number, [h, w], 'same' or 'valid'.
import type { Shape, Tensor } from './weft.js';

export interface Conv2dOptions {
  /** One number for both dims, or [h, w]; default 1. */
  stride?: number | Shape;
  /** Zeros added on each side: a number, [h, w], 'valid' (none, the default) or 'same' (stride 1 only). */
  padding?: number | Shape | 'same' | 'valid';
  dilation?: number | Shape;
  groups?: number;
}

export interface ConvFunctions {
  /**
   * PyTorch's conv2d: input [N, C, H, W] or unbatched [C, H, W], weight [Cout, C / groups, kh, kw],
   * bias [Cout] or null. A channels_last input or weight gives a channels_last output.
   */
  conv2d(input: Tensor, weight: Tensor, bias?: Tensor | null, options?: Conv2dOptions): Tensor;
}

/** explain('conv2d', ...) / explain('_conv2d_fused', ...): the algorithm that runs and the GEMM it amounts to. */
export interface ConvPlan {
  op: 'conv2d';
  /** winograd_f2x2_3x3_nhwc: _conv2d_fused only (channels_last float32 3x3 stride 1, >= 96 channels, maps >= 10x10). */
  algorithm: 'implicit_gemm_nhwc' | 'im2col_gemm_nchw' | 'gemm_1x1_nhwc' | 'gemm_1x1_nchw' | 'depthwise_nhwc'
    | 'depthwise_nchw' | 'winograd_f2x2_3x3_nhwc';
  memory_format: 'contiguous_format' | 'channels_last';
  dtype: string;
  /** float32 for bfloat16, float64 for the integer dtypes. */
  compute_dtype: string;
  input: number[];
  weight: number[];
  output: number[];
  stride: number[];
  /** Top and left (padding='same' may add one more at the bottom / right). */
  padding: number[];
  dilation: number[];
  groups: number;
  /** The GEMM algorithms: M x N x K, count products (per group, and per image in NCHW). */
  gemm?: { m: number; n: number; k: number; count: number };
  /** _conv2d_fused: where its bias, residual and activation were applied. */
  epilogue?: { bias: string; residual: string | null; activation: 'none' | 'relu' | 'relu6'; where: string };
  /** _conv2d_fused: the packed weight kept on the weight's storage (null: the depthwise kernels read it as it is). */
  packed_weight?: string | null;
  threads: number;
}
