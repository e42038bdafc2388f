// wt.nn.utils (js/nn_utils.js): torch.nn.utils' gradient clipping.
import type { Tensor } from './weft.js';

export interface ClipGradNormOptions {
  /** The p of the norm (default 2), or 'inf' / Infinity for the largest magnitude. */
  normType?: number | 'inf';
  /** Throw when the total norm is NaN or infinite (default false: scale by it anyway, as PyTorch 1.13). */
  errorIfNonfinite?: boolean;
}

export interface NnUtils {
  /**
   * Scales every .grad in place so that their total norm (of all of them, as one vector) is at most
   * maxNorm; returns that total norm before clipping (a 0-dim tensor). Parameters without .grad are skipped.
   */
  clipGradNorm_(parameters: Tensor | Iterable<Tensor>, maxNorm: number, options?: ClipGradNormOptions): Tensor;
  /** Clamps every .grad to [-clipValue, clipValue] in place. */
  clipGradValue_(parameters: Tensor | Iterable<Tensor>, clipValue: number): void;
}
