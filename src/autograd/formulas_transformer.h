/* Issue 24's formulas (included by formulas.c after the normalizations'):
 * embedding, rms_norm, index_copy. */
#include "ops/cpu/normalization.h"

/* embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse): weft
 * has no sparse tensors, so sparse=True gives the dense gradient (as gather's
 * sparse_grad) */
static T embedding_backward(weft__bctx* c, T g) {
  return g ? keep(c, weft_embedding_dense_backward(g, S(1), SIZES(0)[0], INT(2), BOOLA(3))) : NULL;
}

/* embedding_dense_backward's own derivative in grad_output (1.13's
 * embedding_dense_double_backward): the rows gathered back, the padding
 * positions' zeroed; like 1.13 it does not scale by frequency */
static T embedding_double_backward(weft__bctx* c, T gg) {
  T idx = S(1), rows = gg ? keep(c, weft_embedding(gg, idx, -1, false, false)) : NULL;
  if (!rows || INT(3) < 0) return rows;
  T pad = keep(c, weft_eq_scalar(idx, weft_scalar_int(INT(3))));
  T mask = pad ? keep(c, weft_unsqueeze(pad, -1)) : NULL;
  return mask ? keep(c, weft_masked_fill_scalar(rows, mask, weft_scalar_int(0))) : NULL;
}

/* _fused_rms_norm(input, normalized_shape, weight, eps); RES is rstd. Under
 * createGraph, differentiable ops over the saved input, rstd recomputed:
 * dx = rstd (gh - x rstd^2 mean(gh x)), gh = g * w; gw = sum of g x rstd
 * over the leading dims. */
static T rms_norm_composite(weft__bctx* c, int which) {
  T g = grad, x = S(0), w = S(2);
  int64_t nn = ILN(1), axis = x->ndim - nn, dims[WEFT_MAX_DIMS], lead[WEFT_MAX_DIMS];
  for (int64_t i = 0; i < nn; i++) dims[i] = axis + i;
  for (int64_t i = 0; i < axis; i++) lead[i] = i;
  double eps = ARG(3)->tag == WEFT_IV_NONE ? weft__rms_norm_default_eps(x->dtype) : DBL(3);
  T rstd = rsqrt_eps(c, mean_k(c, mul(c, x, x), dims, nn), eps);
  T gh = w ? mul(c, g, w) : g;
  T corr = mul(c, mul(c, x, mul(c, rstd, rstd)), mean_k(c, mul(c, gh, x), dims, nn));
  T gx = mul(c, rstd, sub(c, gh, corr));
  T gp = w ? mul(c, g, mul(c, x, rstd)) : NULL;
  T gw = gp && axis ? sum_k(c, gp, lead, axis, false) : gp;
  return trio_set(c, gx, gw, NULL, which);
}
static T rms_norm_grads(weft__bctx* c, int which) {
  if (c->trio_done) return c->trio[which];
  if (weft_grad_enabled()) return rms_norm_composite(c, which);
  bool mask[2] = {(c->needs & A(0)) != 0, (c->needs & A(2)) != 0};
  return trio_pick(c, weft_op__rms_norm_backward(grad, S(0), IL(1), ILN(1), RES, S(2), mask, 2), which);
}

/* index_copy(self, dim, index, source): self's gradient is grad with the
 * copied slices zeroed (written over with zeros of source's shape, which
 * is grad.index_fill(dim, index, 0)); source's, the slices it went to. */
static T index_copy_self_backward(weft__bctx* c, T g) {
  T z = g ? zeros(c, g, SIZES(3), NDIM(3)) : NULL;
  return z ? keep(c, weft_index_copy(g, INT(1), S(2), z)) : NULL;
}
static T index_copy_source_backward(weft__bctx* c, T g) {
  T sel = g ? keep(c, weft_index_select(g, NDIM(0) ? INT(1) : 0, S(2))) : NULL;
  return sel && NDIM(3) == 0 ? reshape(c, sel, SIZES(3), 0) : sel;
}
