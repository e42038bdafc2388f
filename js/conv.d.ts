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

/** explain('conv2d', ...) / explain('_conv2d_fused', ...): the algorithm that runs and the GEMM it amounts to
 * (conv1d's: as the conv2d of height 1 it runs). */
export interface ConvPlan {
  op: 'conv2d' | 'conv1d';
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

/** explain('_inverted_residual', ...) of a channels_last float32 input (other inputs: the first
 * convolution's ConvPlan): the fused row-band driver, or with several threads and fewer images
 * than threads on a small map (at most 128K expanded values) the staged one. */
export interface InvertedResidualPlan {
  op: '_inverted_residual';
  algorithm: 'fused_row_bands_nhwc' | 'fused_staged_nhwc';
  memory_format: 'channels_last';
  dtype: 'float32';
  input: number[];
  /** Channels after the expansion (the input's without one). */
  hidden: number;
  output: number[];
  kernel: number[];
  stride: number;
  /** A 1x1 expansion ran first (expandWeight given). */
  expansion: boolean;
  residual: boolean;
  /** Output rows per band (the projection's GEMM rows: band_rows x output width). */
  band_rows: number;
  /** Row ranges run in parallel (an image's rows split when there are fewer images than threads);
   * staged: the threads' shares of the 1x1s' output channels. */
  tasks: number;
  buffers: string;
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
