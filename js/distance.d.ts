// Types for issue 25's functions composed in JS (js/distance.js) and its
// data ops' option objects. bincount, histc, oneHot, indexAdd(_) and
// indexFill(_) are the op table's generated functions (js/optable.d.ts).
import type { Tensor } from './weft.js';

export interface DistanceFunctions {
  /** F.normalize (1.13): input / max(‖input‖ₚ over dim, eps); p 2, dim 1, eps 1e-12 by default. */
  normalize(input: Tensor, options?: { p?: number; dim?: number; eps?: number }): Tensor;
  normalize(input: Tensor, p?: number, dim?: number, eps?: number): Tensor;
  /** F.cosine_similarity (1.13): each side over max(its 2-norm over dim, eps), the products summed over dim (broadcast first). */
  cosineSimilarity(x1: Tensor, x2: Tensor, options?: { dim?: number; eps?: number }): Tensor;
  cosineSimilarity(x1: Tensor, x2: Tensor, dim?: number, eps?: number): Tensor;
  /** F.pairwise_distance (1.13): ‖x1 − x2 + eps‖ₚ over the last dim of the broadcast; p 2, eps 1e-6. */
  pairwiseDistance(x1: Tensor, x2: Tensor, options?: { p?: number; eps?: number; keepdim?: boolean }): Tensor;
  pairwiseDistance(x1: Tensor, x2: Tensor, p?: number, eps?: number, keepdim?: boolean): Tensor;
  /**
   * torch.cdist (1.13, an op of the table: src/ops/cdist.c): the p-norm distance of every row of x1 (…, r1, c)
   * to every row of x2 (…, r2, c), batch dims broadcast, result (…, r1, r2); float32 or float64. p = 2 goes through
   * the GEMM (|a|² − 2a·b + |b|²) when computeMode says so: by default when r1 or r2 is above 25.
   */
  cdist(x1: Tensor, x2: Tensor, options?: { p?: number; computeMode?: CdistComputeMode }): Tensor;
  cdist(x1: Tensor, x2: Tensor, p?: number, computeMode?: CdistComputeMode): Tensor;
}

/** torch.cdist's compute_mode. */
export type CdistComputeMode = 'use_mm_for_euclid_dist_if_necessary' | 'use_mm_for_euclid_dist' | 'donot_use_mm_for_euclid_dist';
