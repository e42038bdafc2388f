// Types for conv2d, conv1d, conv_transpose2d and conv_transpose1d (src/ops/conv.def) in their JS
// calling form: input, weight, bias, then an options object; padding a
// number, per-dim array, 'same' or 'valid' (not for convTranspose2d).
import type { Shape, Tensor } from './weft.js';

export interface Conv2dOptions {
  /** One number for both dims, or [h, w]; default 1. */
  stride?: number | Shape;
  /** Zeros added on each side: a number, [h, w], 'valid' (none, the default) or 'same' (stride 1 only). */
  padding?: number | Shape | 'same' | 'valid';
  dilation?: number | Shape;
  groups?: number;
}

export interface Conv1dOptions {
  /** default 1 */
  stride?: number | [number];
  /** Zeros added on each side: a number, 'valid' (none, the default) or 'same' (stride 1 only). */
  padding?: number | [number] | 'same' | 'valid';
  dilation?: number | [number];
  groups?: number;
}

export interface ConvTranspose2dOptions {
  /** One number for both dims, or [h, w]; default 1. */
  stride?: number | Shape;
  /** dilation * (k - 1) - padding zeros around the input, per side; default 0. */
  padding?: number | Shape;
  /** Added to one side of the output; each must be below the stride or the dilation of its dim. */
  outputPadding?: number | Shape;
  groups?: number;
  dilation?: number | Shape;
}

export interface ConvTranspose1dOptions {
  stride?: number | [number];
  padding?: number | [number];
  outputPadding?: number | [number];
  groups?: number;
  dilation?: number | [number];
}

export interface ConvFunctions {
  /**
   * PyTorch's conv2d: input [N, C, H, W] or unbatched [C, H, W], weight [Cout, C / groups, kh, kw],
   * bias [Cout] or null. A channels_last input or weight gives a channels_last output.
   */
  conv2d(input: Tensor, weight: Tensor, bias?: Tensor | null, options?: Conv2dOptions): Tensor;
  /** PyTorch's conv1d: input [N, C, L] or unbatched [C, L], weight [Cout, C / groups, k], bias [Cout] or null. */
  conv1d(input: Tensor, weight: Tensor, bias?: Tensor | null, options?: Conv1dOptions): Tensor;
  /**
   * PyTorch's conv_transpose2d: input [N, Cin, H, W] or unbatched [Cin, H, W], weight
   * [Cin, Cout / groups, kh, kw], bias [Cout] or null. Output
   * [N, Cout, (H - 1) * stride - 2 * padding + dilation * (kh - 1) + outputPadding + 1, ...], contiguous.
   */
  convTranspose2d(input: Tensor, weight: Tensor, bias?: Tensor | null, options?: ConvTranspose2dOptions): Tensor;
  /** PyTorch's conv_transpose1d: input [N, Cin, L] or unbatched [Cin, L], weight [Cin, Cout / groups, k], bias [Cout] or null. */
  convTranspose1d(input: Tensor, weight: Tensor, bias?: Tensor | null, options?: ConvTranspose1dOptions): Tensor;
}

/** explain('conv2d', ...): the algorithm conv2d runs and the GEMM it amounts to (conv1d's: as the conv2d of height 1 it runs). */
export interface ConvPlan {
  op: 'conv2d' | 'conv1d';
  algorithm: 'implicit_gemm_nhwc' | 'im2col_gemm_nchw' | 'gemm_1x1_nhwc' | 'gemm_1x1_nchw' | 'depthwise_nhwc'
    | 'depthwise_nchw';
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
  threads: number;
}

/** explain('conv_transpose2d', ...): per image and group the GEMM W^T x (M = Cout/groups*kh*kw, N = H*W, K = Cin/groups), then col2im. */
export interface ConvTransposePlan extends Omit<ConvPlan, 'op' | 'algorithm' | 'memory_format' | 'gemm'> {
  op: 'conv_transpose2d';
  algorithm: 'gemm_col2im_nchw';
  memory_format: 'contiguous_format';
  output_padding: number[];
  gemm: { m: number; n: number; k: number; count: number };
}
