/* scaled_dot_product_attention (issue 24), PyTorch 2.x's semantics: softmax
 * (q k^T scale + mask) v over [..., L, E] queries, [..., S, E] keys and
 * [..., S, Ev] values. A bool mask keeps the true entries (false becomes
 * -inf), a float mask is added; both broadcast against [..., L, S].
 * is_causal is 2.x's math path's tril(ones(L, S)): top-left aligned, query
 * i sees keys j <= i. scale defaults to 1 / sqrt(E). enable_gqa lets key and
 * value have fewer heads (dim -3) than the query, each shared by
 * query heads / key heads consecutive query heads (repeat_interleave).
 *
 * The op is a composite, as PyTorch's: float32 (dropout too, below 1)
 * takes the fused op (_scaled_dot_product_flash_attention_for_cpu: tiles and an
 * online softmax, or the decode path for a few query rows, with its own
 * backward; dropout's mask keyed by a seed drawn here, so the fused backward
 * regenerates it); everything else (other dtypes, dropoutP = 1, a float mask that
 * requires grad, batch dims that broadcast) the math path of matmul,
 * softmax and matmul, differentiated through its steps. A fully masked row
 * gives NaN on both paths (softmax of -inf everywhere). explain() names the
 * path: fused, decode or fallback. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "iter/iter_internal.h"
#include "kernels/kernels.h"
#include "ops/cpu/attention.h"
#include "ops/ops.h"
#include "weft/explain.h"

typedef const weft_tensor* T;
#define OP "scaled_dot_product_attention"

static void release_all(weft_tensor** ts, size_t n) {
  for (size_t i = 0; i < n; i++) weft_tensor_release(ts[i]);
}

/* ---- checks (2.x's validate_sdpa_input and the shape rules of its math path) ---- */

static bool check_inputs(T q, T k, T v, T mask, double p, bool causal) {
  if (q->dtype != k->dtype || q->dtype != v->dtype) {
    weft__error(WEFT_TYPE_ERROR,
                OP ": Expected query, key, and value to have the same dtype, but got query.dtype: %s key.dtype: %s "
                   "and value.dtype: %s instead.",
                weft_dtype_name(q->dtype), weft_dtype_name(k->dtype), weft_dtype_name(v->dtype));
    return false;
  }
  if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2) {
    weft__error(WEFT_SHAPE_ERROR,
                OP ": Expected query, key, and value to all be at least 2 dimensional, but got query.dim: %d "
                   "key.dim: %d and value.dim: %d instead.",
                (int)q->ndim, (int)k->ndim, (int)v->ndim);
    return false;
  }
  if (!weft_dtype_is_floating(q->dtype)) {
    weft__error(WEFT_TYPE_ERROR, OP ": \"softmax_lastdim_kernel_impl\" not implemented for '%s'",
                weft_dtype_name(q->dtype));
    return false;
  }
  if (mask && mask->dtype != WEFT_BOOL && mask->dtype != q->dtype) {
    weft__error(WEFT_TYPE_ERROR,
                OP ": Expected attn_mask dtype to be bool or to match query dtype, but got attn_mask.dtype: %s "
                   "and  query.dtype: %s instead.",
                weft_dtype_name(mask->dtype), weft_dtype_name(q->dtype));
    return false;
  }
  if (causal && mask) {
    weft__error(WEFT_INVALID_ARGUMENT, OP ": Explicit attnMask should not be set when isCausal is true");
    return false;
  }
  if (!(p >= 0 && p <= 1)) {
    weft__error(WEFT_INVALID_ARGUMENT, OP ": dropout probability has to be between 0 and 1, but got %g", p);
    return false;
  }
  int64_t e = q->sizes[q->ndim - 1], ek = k->sizes[k->ndim - 1], s = k->sizes[k->ndim - 2], sv = v->sizes[v->ndim - 2];
  if (e != ek) {
    weft__error(WEFT_SHAPE_ERROR,
                OP ": Expected query and key to have the same last dim, but got query.size(-1): %lld and "
                   "key.size(-1): %lld",
                (long long)e, (long long)ek);
    return false;
  }
  if (s != sv) {
    weft__error(WEFT_SHAPE_ERROR,
                OP ": Expected key and value to have the same sequence length (dim -2), but got key.size(-2): %lld "
                   "and value.size(-2): %lld",
                (long long)s, (long long)sv);
    return false;
  }
  return true;
}

/* a and b (sizes aligned at the right) broadcast into out, PyTorch's message otherwise */
static bool broadcast_into(const int64_t* a, int64_t na, const int64_t* b, int64_t nb, int64_t* out, int64_t* nout) {
  int64_t n = na > nb ? na : nb;
  for (int64_t i = 0; i < n; i++) {
    int64_t x = i < n - na ? 1 : a[i - (n - na)], y = i < n - nb ? 1 : b[i - (n - nb)];
    if (x != y && x != 1 && y != 1) {
      weft__error(WEFT_SHAPE_ERROR,
                  OP ": The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                     "dimension %lld",
                  (long long)x, (long long)y, (long long)i);
      return false;
    }
    out[i] = x == 1 ? y : x;
  }
  *nout = n;
  return true;
}

/* key / value heads for grouped-query attention: 0 when not grouped */
static int64_t gqa_groups(T q, T k, T v, bool enable) {
  if (!enable || q->ndim < 3 || k->ndim < 3 || v->ndim < 3) return 0;
  int64_t hq = q->sizes[q->ndim - 3], hk = k->sizes[k->ndim - 3], hv = v->sizes[v->ndim - 3];
  if (hq == hk && hq == hv) return 0;
  if (hk == 0 || hv == 0 || hq % hk || hq % hv) {
    weft__error(WEFT_SHAPE_ERROR, OP ": Number of heads in key and value must divide the number of heads in query");
    return -1;
  }
  if (hk != hv) {
    weft__error(WEFT_SHAPE_ERROR, OP ": Expected key and value to have the same number of heads, but got %lld and %lld",
                (long long)hk, (long long)hv);
    return -1;
  }
  return hq / hk;
}

/* The [..., L, S] shape of the scores: the batch dims of q and k (with
 * groups, k's head dim counted as q's) and the mask broadcast together, as
 * the math path's matmul and add broadcast them. */
static bool scores_shape(T q, T k, T mask, int64_t groups, int64_t* out, int64_t* nout) {
  int64_t kl[WEFT_MAX_DIMS];
  memcpy(kl, k->sizes, sizeof(int64_t) * (size_t)k->ndim);
  if (groups) kl[k->ndim - 3] *= groups;
  int64_t tmp[WEFT_MAX_DIMS], nt;
  if (!broadcast_into(q->sizes, q->ndim - 2, kl, k->ndim - 2, tmp, &nt)) return false;
  tmp[nt] = q->sizes[q->ndim - 2], tmp[nt + 1] = k->sizes[k->ndim - 2];
  nt += 2;
  if (mask) return broadcast_into(tmp, nt, mask->sizes, mask->ndim, out, nout);
  memcpy(out, tmp, sizeof(int64_t) * (size_t)nt);
  *nout = nt;
  return true;
}

static double scale_or_default(double scale, T q) {
  return scale == scale ? scale : 1.0 / sqrt((double)q->sizes[q->ndim - 1]);
}

/* ---- masks ---- */

/* bool -> 0 / -inf in dtype (2.x's convert_boolean_attn_mask); float masks as they are */
static weft_tensor* additive_mask(T mask, weft_dtype dtype) {
  if (mask->dtype != WEFT_BOOL) return weft_tensor_retain((weft_tensor*)mask);
  weft_tensor* f = weft_where_scalar(mask, weft_scalar_double(0.0), weft_scalar_double(-INFINITY));
  if (!f) return NULL;
  weft_tensor* r = weft_to_dtype(f, dtype, false);
  weft_tensor_release(f);
  return r;
}

/* the causal mask of the math path: 0 where j <= i, -inf above */
static weft_tensor* causal_mask(int64_t l, int64_t s, weft_dtype dtype, weft_device dev) {
  const int64_t sizes[2] = {l, s};
  /* written on the host; a webgpu mask is that one uploaded */
  weft_device host = dev == WEFT_DEVICE_WEBGPU ? WEFT_DEVICE_CPU : dev;
  weft_tensor* keep = weft_empty(sizes, 2, WEFT_BOOL, host, WEFT_CONTIGUOUS_FORMAT);
  if (!keep) return NULL;
  if (host != WEFT_DEVICE_META) {
    uint8_t* d = weft_tensor_data_ptr(keep);
    for (int64_t i = 0; i < l; i++)
      for (int64_t j = 0; j < s; j++) d[i * s + j] = j <= i;
  }
  if (dev != host) {
    weft_tensor* up = weft_empty(sizes, 2, WEFT_BOOL, dev, WEFT_CONTIGUOUS_FORMAT);
    if (up && weft_copy_(up, keep) != WEFT_OK) weft_tensor_release(up), up = NULL;
    weft_tensor_release(keep);
    if (!(keep = up)) return NULL;
  }
  weft_tensor* r = additive_mask(keep, dtype);
  weft_tensor_release(keep);
  return r;
}

/* ---- the math path ---- */

/* k [..., H, S, E] -> [..., H * groups, S, E], each head repeated groups times in a row */
static weft_tensor* repeat_heads(T k, int64_t groups) {
  int64_t sizes[WEFT_MAX_DIMS + 1], n = k->ndim;
  weft_tensor* u = weft_unsqueeze(k, n - 2);
  if (!u) return NULL;
  memcpy(sizes, u->sizes, sizeof(int64_t) * (size_t)(n + 1));
  sizes[n - 2] = groups;
  weft_tensor* e = weft_expand(u, sizes, n + 1);
  weft_tensor_release(u);
  if (!e) return NULL;
  weft_tensor* r = weft_flatten(e, n - 3, n - 2);
  weft_tensor_release(e);
  return r;
}

static weft_tensor* fallback(T q, T k, T v, T mask, double p, bool causal, double scale) {
  /* q and k each scaled by sqrt(scale) before the product, as 2.x (the sign on q) */
  double sq = sqrt(fabs(scale));
  weft_tensor *qs = weft_mul_scalar(q, weft_scalar_double(scale < 0 ? -sq : sq)), *kt = weft_transpose(k, -2, -1);
  weft_tensor* kts = kt ? weft_mul_scalar(kt, weft_scalar_double(sq)) : NULL;
  weft_tensor* attn = qs && kts ? weft_matmul(qs, kts) : NULL;
  weft_tensor* m = NULL;
  if (attn && (mask || causal))
    m = causal ? causal_mask(q->sizes[q->ndim - 2], k->sizes[k->ndim - 2], q->dtype, q->device)
               : additive_mask(mask, q->dtype);
  weft_tensor* biased = attn && m ? weft_add(attn, m, weft_scalar_double(1)) : NULL;
  weft_tensor* sm = attn && (!(mask || causal) || biased) ? weft_softmax(biased ? biased : attn, -1, (weft_dtype)-1)
                                                          : NULL;
  weft_tensor* dropped = sm && p > 0 ? weft_dropout(sm, p, true) : NULL;
  weft_tensor* r = sm && (p == 0 || dropped) ? weft_matmul(dropped ? dropped : sm, v) : NULL;
  weft_tensor* tmp[] = {qs, kt, kts, attn, m, biased, sm, dropped};
  release_all(tmp, sizeof tmp / sizeof tmp[0]);
  return r;
}

/* ---- the fused path ---- */

/* t as 4 dims [B, H, rows, cols]: 1s in front, or the batch dims flattened */
static weft_tensor* as4d(T t) {
  if (t->ndim == 4) return weft_tensor_retain((weft_tensor*)t);
  if (t->ndim > 4) return weft_flatten(t, 0, t->ndim - 4);
  int64_t sizes[4] = {1, 1, 1, 1};
  memcpy(sizes + 4 - t->ndim, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
  return weft_reshape(t, sizes, 4);
}

/* a unit last stride for the kernels */
static weft_tensor* rows_dense(T t) {
  if (t->ndim == 0 || t->strides[t->ndim - 1] == 1 || t->sizes[t->ndim - 1] <= 1)
    return weft_tensor_retain((weft_tensor*)t);
  return weft_contiguous(t, WEFT_CONTIGUOUS_FORMAT);
}

/* the fused kernel takes q's batch dims as they are: k and v share them
 * (heads divided by groups), the mask broadcasts into them */
static bool fused_fits(T q, T k, T v, T mask, double p, int64_t groups, const int64_t* shape, int64_t nshape) {
  if (q->dtype != WEFT_FLOAT32 || p >= 1 || k->sizes[k->ndim - 2] == 0) return false;
  if (nshape != q->ndim || memcmp(shape, q->sizes, sizeof(int64_t) * (size_t)(nshape - 2)) != 0) return false;
  if (mask && mask->dtype != WEFT_BOOL && mask->requires_grad) return false; /* its gradient: the math path */
  if (q->ndim != k->ndim || q->ndim != v->ndim) return false;
  for (int64_t d = 0; d + 2 < q->ndim; d++) {
    bool head = d == q->ndim - 3;
    if (k->sizes[d] != v->sizes[d]) return false;
    if (k->sizes[d] != q->sizes[d] && !(head && groups && k->sizes[d] * groups == q->sizes[d])) return false;
  }
  return true;
}

/* the dropout mask's key: one draw of the generator (wt.manualSeed) per call */
static bool draw_seed(double p, weft_device dev, int64_t* seed) {
  *seed = 0;
  if (p == 0 || dev == WEFT_DEVICE_META) return true;
  const int64_t one = 1;
  weft_tensor* r = weft_randint_low(0, (int64_t)1 << 62, &one, 1, WEFT_INT64, WEFT_DEVICE_CPU);
  if (!r) return false;
  *seed = *(const int64_t*)weft_tensor_data_ptr(r);
  weft_tensor_release(r);
  return true;
}

static weft_tensor* fused(T q, T k, T v, T mask, double p, bool causal, double scale, const int64_t* shape,
                          int64_t nshape) {
  weft_tensor *q4 = as4d(q), *k4 = as4d(k), *v4 = as4d(v), *m4 = NULL, *mf = NULL, *me = NULL;
  weft_tensor *qd = q4 ? rows_dense(q4) : NULL, *kd = k4 ? rows_dense(k4) : NULL, *vd = v4 ? rows_dense(v4) : NULL;
  int64_t seed;
  bool ok = qd && kd && vd && draw_seed(p, q->device, &seed);
  if (ok && mask) {
    int64_t msizes[WEFT_MAX_DIMS];
    memcpy(msizes, q->sizes, sizeof(int64_t) * (size_t)(q->ndim - 2));
    msizes[q->ndim - 2] = shape[nshape - 2], msizes[q->ndim - 1] = shape[nshape - 1];
    ok = (mf = additive_mask(mask, q->dtype)) && (me = weft_expand(mf, msizes, q->ndim)) && (m4 = as4d(me));
  }
  weft_tensor2 r = {{NULL, NULL}};
  if (ok) r = weft__scaled_dot_product_flash_attention_for_cpu(qd, kd, vd, p, causal, m4, scale, seed);
  weft_tensor* out = NULL;
  if (r.t[0] && q->ndim == 4) {
    out = weft_tensor_retain(r.t[0]);
  } else if (r.t[0]) {
    int64_t osizes[WEFT_MAX_DIMS];
    memcpy(osizes, q->sizes, sizeof(int64_t) * (size_t)q->ndim);
    osizes[q->ndim - 1] = v->sizes[v->ndim - 1];
    out = weft_reshape(r.t[0], osizes, q->ndim);
  }
  weft_tensor* tmp[] = {q4, k4, v4, qd, kd, vd, mf, me, m4, r.t[0], r.t[1]};
  release_all(tmp, sizeof tmp / sizeof tmp[0]);
  return out;
}

static weft_tensor* sdpa_kernel(T q, T k, T v, T mask, double p, bool causal, double scale, bool enable_gqa) {
  if (!check_inputs(q, k, v, mask, p, causal)) return NULL;
  int64_t groups = gqa_groups(q, k, v, enable_gqa), shape[WEFT_MAX_DIMS], nshape;
  if (groups < 0 || !scores_shape(q, k, mask, groups, shape, &nshape)) return NULL;
  double sc = scale_or_default(scale, q);
  if (fused_fits(q, k, v, mask, p, groups, shape, nshape)) return fused(q, k, v, mask, p, causal, sc, shape, nshape);
  if (weft_explaining()) {
    int64_t rows = 1;
    for (int64_t d = 0; d + 1 < nshape; d++) rows *= shape[d];
    weft_status s = weft__explain_kernel(OP, "attention", "fallback", q->dtype, rows,
                                         shape[nshape - 1] * (q->sizes[q->ndim - 1] + v->sizes[v->ndim - 1]));
    if (s != WEFT_OK) return NULL;
  }
  if (!groups) return fallback(q, k, v, mask, p, causal, sc);
  weft_tensor *kr = repeat_heads(k, groups), *vr = kr ? repeat_heads(v, groups) : NULL;
  weft_tensor* r = vr ? fallback(q, kr, vr, mask, p, causal, sc) : NULL;
  weft_tensor_release(kr);
  weft_tensor_release(vr);
  return r;
}

/* ---- the fused op and its backward ---- */

#define FOP "_scaled_dot_product_flash_attention_for_cpu"

/* the fused op's own contract (the composite meets it): 4-D float32, unit
 * last strides, key/value heads dividing the query's, a 4-D mask of sizes 1
 * or the scores' */
static bool fused_args(const char* op, T q, T k, T v, T mask, double p, bool causal, double scale, int64_t seed,
                       weft_attn_args* a) {
  if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4 || q->dtype != WEFT_FLOAT32 || k->dtype != WEFT_FLOAT32 ||
      v->dtype != WEFT_FLOAT32) {
    weft__error(WEFT_INVALID_ARGUMENT, "%s: expected 4-D float32 query, key and value", op);
    return false;
  }
  if (!(p >= 0 && p < 1)) {
    weft__error(WEFT_INVALID_ARGUMENT, "%s: dropoutP must be in [0, 1) for the fused kernel, but got %g", op, p);
    return false;
  }
  memset(a, 0, sizeof *a);
  a->b = q->sizes[0], a->hq = q->sizes[1], a->hkv = k->sizes[1], a->l = q->sizes[2], a->s = k->sizes[2];
  a->e = q->sizes[3], a->ev = v->sizes[3];
  bool shapes = k->sizes[0] == a->b && v->sizes[0] == a->b && v->sizes[1] == a->hkv && v->sizes[2] == a->s &&
                k->sizes[3] == a->e && a->hkv > 0 && a->hq % a->hkv == 0;
  bool dense = (q->strides[3] == 1 || a->e <= 1) && (k->strides[3] == 1 || a->e <= 1) &&
               (v->strides[3] == 1 || a->ev <= 1);
  const int64_t want[4] = {a->b, a->hq, a->l, a->s};
  for (int d = 0; mask && d < 4; d++) shapes = shapes && (mask->sizes[d] == want[d] || mask->sizes[d] == 1);
  if (!shapes || !dense || (mask && (mask->ndim != 4 || mask->dtype != WEFT_FLOAT32))) {
    weft__error(WEFT_SHAPE_ERROR, "%s: query, key, value and attnMask do not fit the fused kernel", op);
    return false;
  }
  for (int d = 0; d < 3; d++) a->qst[d] = q->strides[d], a->kst[d] = k->strides[d], a->vst[d] = v->strides[d];
  for (int d = 0; mask && d < 4; d++) a->mst[d] = mask->sizes[d] == 1 ? 0 : mask->strides[d];
  a->scale = (float)scale_or_default(scale, q);
  a->causal = causal;
  a->dropout_p = (float)p, a->seed = (uint64_t)seed;
  return true;
}

static void bind_data(weft_attn_args* a, T q, T k, T v, T mask) {
  a->q = weft_tensor_data_ptr((weft_tensor*)q), a->k = weft_tensor_data_ptr((weft_tensor*)k);
  a->v = weft_tensor_data_ptr((weft_tensor*)v), a->mask = mask ? weft_tensor_data_ptr((weft_tensor*)mask) : NULL;
}

static weft_tensor2 flash_kernel(T q, T k, T v, double p, bool causal, T mask, double scale, int64_t seed) {
  weft_attn_args a;
  weft_tensor2 r = {{NULL, NULL}};
  if (!fused_args(FOP, q, k, v, mask, p, causal, scale, seed, &a)) return r;
  const int64_t osizes[4] = {a.b, a.hq, a.l, a.ev}, lsizes[3] = {a.b, a.hq, a.l};
  r.t[0] = weft_empty(osizes, 4, WEFT_FLOAT32, q->device, WEFT_CONTIGUOUS_FORMAT);
  r.t[1] = r.t[0] ? weft_empty(lsizes, 3, WEFT_FLOAT32, q->device, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_attn_path path = weft__attn_path(&a);
  weft_status s = r.t[1] ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && weft_explaining())
    s = weft__explain_kernel(OP, "attention", weft__attn_path_name(path), WEFT_FLOAT32, a.b * a.hq * a.l,
                             a.s * (a.e + a.ev));
  if (s == WEFT_OK && q->device != WEFT_DEVICE_META && !weft_explaining()) {
    bind_data(&a, q, k, v, mask);
    s = weft__attn_forward(weft__kernels(), &a, path, weft_tensor_data_ptr(r.t[0]), weft_tensor_data_ptr(r.t[1]));
  }
  if (s != WEFT_OK) {
    weft_tensor_release(r.t[0]);
    weft_tensor_release(r.t[1]);
    r.t[0] = r.t[1] = NULL;
  }
  return r;
}

static bool same_sizes(T t, const int64_t* sizes, int64_t n) {
  return t->ndim == n && memcmp(t->sizes, sizes, sizeof(int64_t) * (size_t)n) == 0;
}

static weft_tensor3 flash_backward_kernel(T g, T q, T k, T v, T lse, double p, bool causal, T mask, double scale,
                                          int64_t seed) {
  weft_attn_args a;
  weft_tensor3 r = {{NULL, NULL, NULL}, WEFT_OK};
  if (!fused_args(FOP "_backward", q, k, v, mask, p, causal, scale, seed, &a)) {
    r.status = weft_last_status();
    return r;
  }
  const int64_t gsizes[4] = {a.b, a.hq, a.l, a.ev}, lsizes[3] = {a.b, a.hq, a.l};
  if (!same_sizes(g, gsizes, 4) || !same_sizes(lse, lsizes, 3) || g->dtype != WEFT_FLOAT32 ||
      lse->dtype != WEFT_FLOAT32) {
    r.status = weft__error(WEFT_SHAPE_ERROR, FOP "_backward: gradOut or logsumexp does not fit the inputs");
    return r;
  }
  weft_tensor *gc = weft_contiguous(g, WEFT_CONTIGUOUS_FORMAT), *lc = weft_contiguous(lse, WEFT_CONTIGUOUS_FORMAT);
  const int64_t qs[4] = {a.b, a.hq, a.l, a.e}, ks[4] = {a.b, a.hkv, a.s, a.e}, vs[4] = {a.b, a.hkv, a.s, a.ev};
  r.t[0] = weft_empty(qs, 4, WEFT_FLOAT32, q->device, WEFT_CONTIGUOUS_FORMAT);
  r.t[1] = weft_full(ks, 4, 0.0, WEFT_FLOAT32, q->device);
  r.t[2] = weft_full(vs, 4, 0.0, WEFT_FLOAT32, q->device);
  weft_status s = gc && lc && r.t[0] && r.t[1] && r.t[2] ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && q->device != WEFT_DEVICE_META) {
    bind_data(&a, q, k, v, mask);
    s = weft__attn_backward(weft__kernels(), &a, weft_tensor_data_ptr(gc), weft_tensor_data_ptr(lc),
                            weft_tensor_data_ptr(r.t[0]), weft_tensor_data_ptr(r.t[1]), weft_tensor_data_ptr(r.t[2]));
  }
  weft_tensor_release(gc);
  weft_tensor_release(lc);
  if (s != WEFT_OK) {
    weft_tensor3_release(r);
    r = (weft_tensor3){{NULL, NULL, NULL}, s};
  }
  return r;
}

weft_status weft__attention_register(void) {
  WEFT_KERNEL(scaled_dot_product_attention, COMPOSITE_IMPLICIT_AUTOGRAD, sdpa_kernel);
  WEFT_KERNEL(_scaled_dot_product_flash_attention_for_cpu, CPU, flash_kernel);
  WEFT_KERNEL(_scaled_dot_product_flash_attention_for_cpu, META, flash_kernel);
  WEFT_KERNEL(_scaled_dot_product_flash_attention_for_cpu_backward, CPU, flash_backward_kernel);
  WEFT_KERNEL(_scaled_dot_product_flash_attention_for_cpu_backward, META, flash_backward_kernel);
  return WEFT_OK;
}
