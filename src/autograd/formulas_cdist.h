/* torch.cdist's formulas (included by formulas.c): 1.13's derivatives.yaml
 * lines for _cdist_forward and _euclidean_dist. */

/* _cdist_forward: x1's gradient is _cdist_backward's; x2's the same with
 * the two swapped and the pairs transposed */
static T cdist_grad(weft__bctx* c, T g, int which) {
  if (!g) return NULL;
  if (which == 0) return keep(c, weft__cdist_backward(g, S(0), S(1), DBL(2), RES));
  T gt = transpose(c, g, -2, -1), rt = transpose(c, RES, -2, -1);
  return gt && rt ? keep(c, weft__cdist_backward(gt, S(1), S(0), DBL(2), rt)) : NULL;
}

/* _euclidean_dist_backward: ratio = g / res, 0 where res is 0 (the
 * subgradient there); g1 = x1 sum_j ratio - ratio x2, g2 = x2 sum_i ratio -
 * ratio^T x1 */
static T euclidean_dist_grad(weft__bctx* c, T g, int which) {
  T zero = RES ? keep(c, weft_eq_scalar(RES, weft_scalar_int(0))) : NULL;
  T ratio = zero ? where_scalar_self(c, zero, 0.0, div(c, g, RES)) : NULL;
  if (which == 1) ratio = transpose(c, ratio, -2, -1);
  T x = S(which), y = S(1 - which);
  return sub(c, mul(c, x, sum_dim(c, ratio, -1)), matmul2(c, ratio, y));
}
