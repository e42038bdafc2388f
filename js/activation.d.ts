// Types for the activations, regression losses and dropout (issue 23) in
// torch.nn.functional's calling forms (js/activation.js over the op table's
// elu, hardtanh, ..., l1_loss, dropout, feature_dropout): PyTorch's
// positional order, options last. The activations keep their input's dtype
// (float32, float64, bfloat16; hardtanh and relu6 also integers) and memory
// format.
import type { Tensor } from './weft.js';
import type { Operand, Scalar } from './ops.js';

/** F.*'s `inplace`: write into x and return it. */
export interface InplaceOptions { inplace?: boolean }
export type Reduction = 'none' | 'mean' | 'sum';
export interface DropoutOptions {
  /** The probability of zeroing an element (dropout2d: a whole channel); default 0.5. */
  p?: number;
  /** false (eval) returns the input; default true. */
  training?: boolean;
  inplace?: boolean;
}

export interface ActivationFunctions {
  /** x > 0 ? scale x : alpha scale (exp(inputScale x) - 1) (EluBackward0). */
  elu(self: Operand, alpha?: Scalar, options?: InplaceOptions): Tensor;
  elu(self: Operand, alpha?: Scalar, scale?: Scalar, inputScale?: Scalar, options?: { out?: Tensor }): Tensor;
  /** clamp(x, min, max), default [-1, 1]. */
  hardtanh(self: Operand, minVal?: Scalar, maxVal?: Scalar, options?: InplaceOptions & { out?: Tensor }): Tensor;
  /** hardtanh(x, 0, 6). */
  relu6(self: Operand, options?: InplaceOptions): Tensor;
  /** x > 0 ? x : negativeSlope x (default 0.01). */
  leakyRelu(self: Operand, negativeSlope?: Scalar, options?: InplaceOptions & { out?: Tensor }): Tensor;
  /** log(1 + exp(beta x)) / beta, x where beta x > threshold. */
  softplus(self: Operand, beta?: Scalar, threshold?: Scalar, options?: { out?: Tensor }): Tensor;
  silu(self: Operand, options?: InplaceOptions & { out?: Tensor }): Tensor;
  mish(self: Operand, options?: InplaceOptions & { out?: Tensor }): Tensor;
  hardswish(self: Operand, options?: InplaceOptions & { out?: Tensor }): Tensor;
  hardsigmoid(self: Operand, options?: InplaceOptions & { out?: Tensor }): Tensor;
  logSigmoid(self: Operand, options?: { out?: Tensor }): Tensor;
  /** approximate: 'none' (erf) or 'tanh'. */
  gelu(self: Operand, options?: { approximate?: 'none' | 'tanh'; out?: Tensor }): Tensor;
  /** |x - target|, reduced (default 'mean'). */
  l1Loss(self: Operand, target: Operand, reduction?: Reduction): Tensor;
  l1Loss(self: Operand, target: Operand, options: { reduction?: Reduction }): Tensor;
  /** |d| < beta ? 0.5 d^2 / beta : |d| - beta / 2 (beta >= 0; 0 is l1Loss). */
  smoothL1Loss(self: Operand, target: Operand, reduction?: Reduction, beta?: number): Tensor;
  smoothL1Loss(self: Operand, target: Operand, options: { reduction?: Reduction; beta?: number }): Tensor;
  /** |d| < delta ? 0.5 d^2 : delta (|d| - delta / 2) (delta > 0); keeps self's dtype. */
  huberLoss(self: Operand, target: Operand, reduction?: Reduction, delta?: number): Tensor;
  huberLoss(self: Operand, target: Operand, options: { reduction?: Reduction; delta?: number }): Tensor;
  /** Zeroes elements with probability p, scales the rest by 1 / (1 - p); the mask is PyTorch's after manualSeed. */
  dropout(self: Tensor, p?: number, training?: boolean, options?: DropoutOptions): Tensor;
  dropout(self: Tensor, options?: DropoutOptions): Tensor;
  /** Zeroes whole channels ((N, C) of an [N, C, ...] input). */
  dropout2d(self: Tensor, p?: number, training?: boolean, options?: DropoutOptions): Tensor;
  dropout2d(self: Tensor, options?: DropoutOptions): Tensor;
}
