// Types for padding and resizing (src/ops/resize.def), in torch.nn.functional's
// calling form (js/resize.js): the input, F.pad's pads, options last.
import type { Tensor } from './weft.js';

export type PadMode = 'constant' | 'reflect' | 'replicate' | 'circular';
export interface PadOptions {
  /** Default 'constant'. reflect / replicate / circular pad the last 1, 2 or 3 dims of a (batched) input. */
  mode?: PadMode;
  /** constant's fill (default 0); the other modes take none (or 0). */
  value?: number | null;
}

export type InterpolateMode = 'nearest' | 'nearest-exact' | 'linear' | 'bilinear' | 'bicubic' | 'area';
export interface InterpolateOptions {
  /** The output's spatial size: one number for every spatial dim, or one per dim. */
  size?: number | readonly number[] | null;
  /** Or a scale per spatial dim (one number for all): trunc(in * s) outputs, s passed on to the index math. */
  scaleFactor?: number | readonly number[] | null;
  /** Default 'nearest'. linear: [N, C, W] inputs; bilinear, bicubic, area: [N, C, H, W]. */
  mode?: InterpolateMode;
  /** linear, bilinear, bicubic only (default false): the corner pixels' centers stay aligned. */
  alignCorners?: boolean | null;
  /** Compute the scales from the floor(in * scaleFactor) output size instead of passing scaleFactor on. */
  recomputeScaleFactor?: boolean | null;
}

export interface ResizeFunctions {
  /** F.pad: pads last dim first, a (left, right) pair per dim; negative pads crop. */
  pad(self: Tensor, pads: readonly number[], options?: PadOptions): Tensor;
  pad(self: Tensor, pads: readonly number[], mode?: PadMode, value?: number | null): Tensor;
  /** F.interpolate (PyTorch 1.13): a channels_last input gives a channels_last output (not for bicubic). */
  interpolate(self: Tensor, options: InterpolateOptions): Tensor;
  interpolate(self: Tensor, size?: number | readonly number[] | null, scaleFactor?: number | readonly number[] | null,
    mode?: InterpolateMode, alignCorners?: boolean | null, recomputeScaleFactor?: boolean | null): Tensor;
}

export interface ResizeTensorOps {
  pad(pads: readonly number[], options?: PadOptions): Tensor;
  pad(pads: readonly number[], mode?: PadMode, value?: number | null): Tensor;
  interpolate(options: InterpolateOptions): Tensor;
  interpolate(size?: number | readonly number[] | null, scaleFactor?: number | readonly number[] | null,
    mode?: InterpolateMode, alignCorners?: boolean | null, recomputeScaleFactor?: boolean | null): Tensor;
}
