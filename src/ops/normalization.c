/* batch_norm, group_norm and layer_norm (issue 23), PyTorch 1.13's
 * native_batch_norm / native_group_norm / native_layer_norm, their
 * backward ops, and the composites torch.nn.functional calls. CPU and Meta
 * kernels; float32 and float64 (other dtypes refused as 1.13's CPU dispatch
 * does for integers).
 *
 * Each op is two passes over the data at most: statistics (shifted sums in
 * double, one pass, src/ops/cpu/normalization.c) and one fused pass writing
 * y = x * a + b per (image, channel), with a and b folded from mean, invstd,
 * weight and bias. Eval-mode batch norm is that one pass alone. The
 * backward's sums are one pass, the input's gradient another (linear in dy
 * and x per channel).
 *
 * Layouts, as 1.13: batch_norm keeps the input's memory format (NCHW or
 * channels_last, whose channels are the inner dim: the kernels vectorize
 * across them), for both the output and the input's gradient; group_norm's
 * output keeps it, its input gradient is contiguous; layer_norm's output
 * and gradient are contiguous. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/overflow.h"
#include "core/internal.h"
#include "iter/iter_internal.h"
#include "core/scalar.h"
#include "kernels/kernels.h"
#include "ops/cpu/normalization.h"
#include "ops/ops.h"
#include "ops/reduce_webgpu.h"
#include "weft/iter.h"

typedef const weft_tensor* T;

/* ---- small helpers ---- */
static const char* shape_of(T t, char* buf, size_t cap) { return weft__sizes_str(t->sizes, t->ndim, buf, cap); }

static weft_tensor3 fail3(void) { return (weft_tensor3){{NULL, NULL, NULL}, weft_last_status()}; }

/* r when st is OK, else nothing (r released); the copies released either way */
static weft_tensor3 finish3(weft_status st, weft_tensor3 r, weft_tensor* xc, weft_tensor* gyc) {
  weft_tensor_release(xc);
  weft_tensor_release(gyc);
  if (st == WEFT_OK) return r;
  weft_tensor3_release(r);
  return fail3();
}

static double* dalloc(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(double)); }

/* element i (flat, row-major) of t */
static char* elem_ptr(T t, int64_t i) {
  int64_t off = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    off += (i % t->sizes[d]) * t->strides[d];
    i /= t->sizes[d];
  }
  return (char*)weft_tensor_data_ptr(t) + off * (int64_t)weft_dtype_size(t->dtype);
}

/* t's n values as doubles; dflt for every entry when t is NULL */
static void read_vec(T t, int64_t n, double dflt, double* out) {
  for (int64_t i = 0; i < n; i++) out[i] = t ? weft__load_f64(elem_ptr(t, i), t->dtype) : dflt;
}

static void write_vec(T t, const double* v) {
  for (int64_t i = 0; i < t->numel; i++) weft__store(elem_ptr(t, i), t->dtype, weft__value_from_double(v[i]));
}

static weft_tensor* alloc_fmt(const char* op, const int64_t* sizes, int64_t nd, weft_memory_format f, weft_dtype dt,
                              weft_device dev) {
  int64_t strides[WEFT_MAX_DIMS];
  if (!weft__strides_for_format(sizes, nd, f, strides))
    return weft__error_null(WEFT_OVERFLOW, "%s: the output's strides overflow int64", op);
  return weft__tensor_alloc(op, sizes, strides, nd, dt, dev);
}

/* a 1-D tensor of n values of t's dtype holding v */
static weft_tensor* vec_tensor(const char* op, T like, int64_t n, const double* v) {
  weft_tensor* r = alloc_fmt(op, &n, 1, WEFT_CONTIGUOUS_FORMAT, like->dtype, like->device);
  if (r && v && r->device != WEFT_DEVICE_META) write_vec(r, v);
  return r;
}

static bool computes(T x) { return x->device != WEFT_DEVICE_META && !weft_explaining(); }

/* ---- checks (PyTorch 1.13's, in its order; op names the call) ---- */
static weft_status check_floating(const char* op, const char* kernel, T x) {
  if (x->dtype == WEFT_FLOAT32 || x->dtype == WEFT_FLOAT64) return WEFT_OK;
  return weft__error(WEFT_TYPE_ERROR, "%s: \"%s\" not implemented for '%s'", op, kernel, weft_dtype_name(x->dtype));
}

static weft_status check_dtype(const char* op, T p, T x) {
  if (!p || p->dtype == x->dtype) return WEFT_OK;
  return weft__error(WEFT_TYPE_ERROR, "%s: expected scalar type %s but found %s", op, weft_dtype_name(x->dtype),
                     weft_dtype_name(p->dtype));
}

static weft_status check_same_device(const char* op, T p, T x) {
  if (!p || p->device == x->device) return WEFT_OK;
  return weft__error(WEFT_INVALID_ARGUMENT, "%s: expected all tensors to be on the same device", op);
}

/* the memory format a channels-first op keeps: channels_last(_3d) when
 * suggest_memory_format says so, else contiguous */
static weft_memory_format keep_format(T x) {
  weft_memory_format f = weft_tensor_suggest_memory_format(x);
  return f == WEFT_CHANNELS_LAST || f == WEFT_CHANNELS_LAST_3D ? f : WEFT_CONTIGUOUS_FORMAT;
}

static int64_t plane_size(T x) {
  int64_t s = 1;
  for (int d = 2; d < x->ndim; d++) s *= x->sizes[d];
  return s;
}

static weft_status explain(const char* op, const char* path, T x, int64_t rows, int64_t inner) {
  return weft__explain_kernel(op, "normalization", path, x->dtype, rows, inner);
}

/* ==== batch norm ==== */

/* at::batch_norm's checks (and native_batch_norm's: sizes first, so a
 * wrong running_mean is refused before it is written) */
static weft_status bn_checks(const char* op, T x, T w, T b, T rm, T rv, bool training) {
  if (x->ndim < 2)
    return weft__error(WEFT_INDEX_ERROR, "%s: Dimension out of range (expected to be in range of [%d, %d], but got 1)",
                       op, x->ndim ? -x->ndim : -1, x->ndim ? x->ndim - 1 : 0);
  const int64_t c = x->sizes[1];
  const char* names[4] = {"running_mean", "running_var", "weight", "bias"};
  T ts[4] = {rm, rv, w, b};
  for (int i = 0; i < 4; i++) {
    if (!ts[i] && i < 2 && !training)
      return weft__error(WEFT_INVALID_ARGUMENT, "%s: %s must be defined in evaluation mode", op, names[i]);
    if (ts[i] && ts[i]->numel != c)
      return weft__error(WEFT_SHAPE_ERROR, "%s: %s should contain %lld elements not %lld", op, names[i], (long long)c,
                         (long long)ts[i]->numel);
  }
  weft_status s = check_floating(op, "batch_norm", x);
  for (int i = 0; i < 4 && s == WEFT_OK; i++) {
    if (ts[i] && ts[i]->dtype != x->dtype)
      return weft__error(WEFT_TYPE_ERROR, "%s: mixed dtype (CPU): expect parameter to have scalar type of %s", op,
                         weft_dtype_name(x->dtype));
    s = check_same_device(op, ts[i], x);
  }
  return s;
}

/* The driver's view of a batch norm input in format f: channels-last
 * (or s == 1) as one image of n * s rows of c channels, else planes. */
static weft_norm_geom bn_geom(T x, weft_memory_format f) {
  int64_t s = plane_size(x);
  if (f != WEFT_CONTIGUOUS_FORMAT || s == 1) return (weft_norm_geom){1, x->sizes[1], x->sizes[0] * s, true};
  return (weft_norm_geom){x->sizes[0], x->sizes[1], s, false};
}

/* per-channel values repeated for every image of g (planes) */
static void per_image(const weft_norm_geom* g, const double* v, double* out) {
  for (int64_t i = 0; i < g->n; i++) memcpy(out + i * g->c, v, sizeof(double) * (size_t)g->c);
}

/* training statistics per channel: mean, biased variance (count elements each) */
static weft_status bn_stats(const weft_norm_geom* g, T xc, double* mean, double* var) {
  const int64_t nc = g->n * g->c, cnt = g->n * g->s;
  double *k = dalloc(nc), *s = dalloc(nc), *q = dalloc(nc), *kc = dalloc(g->c);
  weft_status st = k && s && q && kc ? WEFT_OK : weft__error(WEFT_OUT_OF_MEMORY, "out of memory: batch_norm");
  if (st == WEFT_OK) {
    /* the shift: each channel's first element, the same for every image so the sums add */
    for (int64_t j = 0; j < g->c && cnt > 0; j++)
      kc[j] = weft__load_f64(
          (char*)weft_tensor_data_ptr(xc) + (g->nsc ? j : j * g->s) * (int64_t)weft_dtype_size(xc->dtype), xc->dtype);
    per_image(g, kc, k);
    st = weft__norm_moments(weft__kernels(), g, xc->dtype, weft_tensor_data_ptr(xc), k, s, q);
  }
  for (int64_t j = 0; st == WEFT_OK && j < g->c; j++) {
    double sj = 0, qj = 0;
    for (int64_t i = 0; i < g->n; i++) sj += s[i * g->c + j], qj += q[i * g->c + j];
    double d = sj / (double)cnt, v = qj / (double)cnt - d * d;
    mean[j] = kc[j] + d;
    var[j] = v > 0 ? v : (cnt > 0 ? 0 : NAN);
  }
  free(k), free(s), free(q), free(kc);
  return st;
}

/* running = (1 - momentum) running + momentum * stat (var unbiased) */
static void bn_update_running(T rm, T rv, const double* mean, const double* var, int64_t c, int64_t cnt,
                              double momentum) {
  for (int64_t j = 0; j < c; j++) {
    if (rm) {
      char* p = elem_ptr(rm, j);
      double v = weft__load_f64(p, rm->dtype) * (1 - momentum) + momentum * mean[j];
      weft__store(p, rm->dtype, weft__value_from_double(v));
    }
    if (rv) {
      char* p = elem_ptr(rv, j);
      double unbiased = var[j] * (double)cnt / (double)(cnt - 1);
      double v = weft__load_f64(p, rv->dtype) * (1 - momentum) + momentum * unbiased;
      weft__store(p, rv->dtype, weft__value_from_double(v));
    }
  }
}

/* y = x * a + b per channel, a = invstd * w, b = bias - mean * a */
static weft_status bn_apply(const weft_norm_geom* g, T xc, T w, T b, const double* mean, const double* invstd,
                            weft_tensor* y) {
  const int64_t c = g->c, nc = g->n * c;
  double *wv = dalloc(c), *bv = dalloc(c), *a = dalloc(nc), *sh = dalloc(nc);
  weft_status st = wv && bv && a && sh ? WEFT_OK : weft__error(WEFT_OUT_OF_MEMORY, "out of memory: batch_norm");
  if (st == WEFT_OK) {
    read_vec(w, c, 1.0, wv);
    read_vec(b, c, 0.0, bv);
    for (int64_t j = 0; j < c; j++) {
      wv[j] *= invstd[j];
      bv[j] -= mean[j] * wv[j];
    }
    per_image(g, wv, a);
    per_image(g, bv, sh);
    st = weft__norm_apply(weft__kernels(), g, xc->dtype, weft_tensor_data_ptr(xc), a, sh, weft_tensor_data_ptr(y));
  }
  free(wv), free(bv), free(a), free(sh);
  return st;
}

static weft_status bn_forward_compute(const weft_norm_geom* g, T xc, T w, T b, T rm, T rv, bool training,
                                      double momentum, double eps, weft_tensor* y, weft_tensor* sm, weft_tensor* si) {
  const int64_t c = g->c;
  double *mean = dalloc(c), *var = dalloc(c), *inv = dalloc(c);
  weft_status st = mean && var && inv ? WEFT_OK : weft__error(WEFT_OUT_OF_MEMORY, "out of memory: batch_norm");
  if (st == WEFT_OK && training) {
    st = bn_stats(g, xc, mean, var);
    if (st == WEFT_OK) bn_update_running(rm, rv, mean, var, c, g->n * g->s, momentum);
  } else if (st == WEFT_OK) {
    read_vec(rm, c, 0.0, mean);
    read_vec(rv, c, 1.0, var);
  }
  for (int64_t j = 0; j < c; j++) inv[j] = 1.0 / sqrt(var[j] + eps);
  if (st == WEFT_OK) st = bn_apply(g, xc, w, b, mean, inv, y);
  if (st == WEFT_OK && training) {
    write_vec(sm, mean);
    write_vec(si, inv);
  }
  free(mean), free(var), free(inv);
  return st;
}

static weft_tensor3 bn_forward(const char* op, T x, T w, T b, T rm, T rv, bool training, double momentum,
                               double eps) {
  if (bn_checks(op, x, w, b, rm, rv, training) != WEFT_OK) return fail3();
  weft_memory_format f = keep_format(x);
  weft_tensor* xc = weft_contiguous(x, f);
  if (!xc) return fail3();
  const int64_t nstat = training ? x->sizes[1] : 0;
  weft_tensor3 r = {{alloc_fmt(op, x->sizes, x->ndim, f, x->dtype, x->device), vec_tensor(op, x, nstat, NULL),
                     vec_tensor(op, x, nstat, NULL)},
                    WEFT_OK};
  weft_status st = r.t[0] && r.t[1] && r.t[2] ? WEFT_OK : weft_last_status();
  weft_norm_geom g = bn_geom(xc, f);
  if (st == WEFT_OK && x->device == WEFT_DEVICE_WEBGPU)
    st = weft__batch_norm_webgpu(xc, w, b, (weft_tensor*)rm, (weft_tensor*)rv, training, momentum, eps, r.t);
  else if (st == WEFT_OK && weft_explaining())
    st = explain(op, training ? (g.nsc ? "batch_norm_train_channels_last" : "batch_norm_train_planes")
                              : (g.nsc ? "batch_norm_eval_channels_last" : "batch_norm_eval_planes"),
                 x, g.nsc ? g.s : g.n * g.c, g.nsc ? g.c : g.s);
  else if (st == WEFT_OK && computes(x))
    st = bn_forward_compute(&g, xc, w, b, rm, rv, training, momentum, eps, r.t[0], r.t[1], r.t[2]);
  return finish3(st, r, xc, NULL);
}

static weft_tensor3 native_batch_norm_kernel(T x, T w, T b, T rm, T rv, bool training, double momentum, double eps) {
  return bn_forward("native_batch_norm", x, w, b, rm, rv, training, momentum, eps);
}

/* ---- native_batch_norm_backward ---- */

static weft_status grad_checks(const char* op, T gy, T x) {
  if (gy->dtype != x->dtype)
    return weft__error(WEFT_TYPE_ERROR, "%s: expected grad_out of dtype %s but got %s", op, weft_dtype_name(x->dtype),
                       weft_dtype_name(gy->dtype));
  if (gy->ndim != x->ndim || memcmp(gy->sizes, x->sizes, sizeof(int64_t) * (size_t)x->ndim) != 0) {
    char a[160], c[160];
    return weft__error(WEFT_SHAPE_ERROR, "%s: expected grad_out of size %s but got %s", op, shape_of(x, a, sizeof a),
                       shape_of(gy, c, sizeof c));
  }
  return check_same_device(op, gy, x);
}

/* gw = dot * invstd, gb = sum; dx = dy A + x B + C per channel */
static weft_status bn_backward_compute(const weft_norm_geom* g, T gyc, T xc, T w, const double* mean,
                                       const double* inv, bool train, weft_tensor* const* out) {
  const int64_t c = g->c, nc = g->n * c, cnt = g->n * g->s;
  double *k = dalloc(nc), *s = dalloc(nc), *d = dalloc(nc), *wv = dalloc(c), *co = dalloc(3 * nc);
  weft_status st = k && s && d && wv && co ? WEFT_OK : weft__error(WEFT_OUT_OF_MEMORY, "out of memory: batch_norm");
  double *sum = dalloc(c), *dot = dalloc(c);
  if (st == WEFT_OK && (!sum || !dot)) st = weft__error(WEFT_OUT_OF_MEMORY, "out of memory: batch_norm");
  const bool f32 = xc->dtype == WEFT_FLOAT32;
  if (st == WEFT_OK) {
    per_image(g, mean, k);
    if (f32) /* the kernels shift by the float mean: their sums stay exact for it */
      for (int64_t i = 0; i < nc; i++) k[i] = (float)k[i];
    st = weft__norm_dots(weft__kernels(), g, xc->dtype, weft_tensor_data_ptr(gyc), weft_tensor_data_ptr(xc), k, s, d);
  }
  for (int64_t j = 0; st == WEFT_OK && j < c; j++) {
    for (int64_t i = 0; i < g->n; i++) sum[j] += s[i * c + j], dot[j] += d[i * c + j];
    dot[j] += (k[j] - mean[j]) * sum[j]; /* from the float shift back to the mean */
  }
  if (st == WEFT_OK && out[0]) {
    read_vec(w, c, 1.0, wv);
    for (int64_t j = 0; j < c; j++) {
      double a = inv[j] * wv[j], bb = train ? -inv[j] * inv[j] * dot[j] / (double)cnt * a : 0;
      double cc = train ? -sum[j] / (double)cnt * a - mean[j] * bb : 0;
      for (int64_t i = 0; i < g->n; i++) co[i * c + j] = a, co[nc + i * c + j] = bb, co[2 * nc + i * c + j] = cc;
    }
    st = weft__norm_apply_backward(weft__kernels(), g, xc->dtype, weft_tensor_data_ptr(gyc), weft_tensor_data_ptr(xc),
                                   co, co + nc, co + 2 * nc, weft_tensor_data_ptr(out[0]));
  }
  if (st == WEFT_OK && out[1]) {
    for (int64_t j = 0; j < c; j++) dot[j] *= inv[j];
    write_vec(out[1], dot);
  }
  if (st == WEFT_OK && out[2]) write_vec(out[2], sum);
  free(k), free(s), free(d), free(wv), free(co), free(sum), free(dot);
  return st;
}

static weft_status mask_check(const char* op, int64_t nm) {
  if (nm == 3) return WEFT_OK;
  return weft__error(WEFT_INVALID_ARGUMENT, "%s: expected outputMask to be a list of 3 booleans, but got %lld", op,
                     (long long)nm);
}

/* the statistics backward uses: saved (train) or running (eval) */
static weft_status bn_backward_stats(const char* op, T x, T rm, T rv, T sm, T si, bool train, double eps,
                                     double* mean, double* inv) {
  const int64_t c = x->sizes[1];
  T m = train ? sm : rm, v = train ? si : rv;
  const char* mn = train ? "save_mean" : "running_mean";
  const char* vn = train ? "save_invstd" : "running_var";
  if (!m || !v)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: %s and %s must be defined %s", op, mn, vn,
                       train ? "in training mode" : "in evaluation mode");
  if (check_same_device(op, m, x) != WEFT_OK || check_same_device(op, v, x) != WEFT_OK) return weft_last_status();
  if (m->numel != c || v->numel != c)
    return weft__error(WEFT_SHAPE_ERROR, "%s: %s should contain %lld elements not %lld", op,
                       m->numel != c ? mn : vn, (long long)c, (long long)(m->numel != c ? m->numel : v->numel));
  if (x->device == WEFT_DEVICE_META || x->device == WEFT_DEVICE_WEBGPU) return WEFT_OK; /* read on the device */
  read_vec(m, c, 0.0, mean);
  read_vec(v, c, 1.0, inv);
  if (!train)
    for (int64_t j = 0; j < c; j++) inv[j] = 1.0 / sqrt(inv[j] + eps);
  return WEFT_OK;
}

static weft_tensor3 native_batch_norm_backward_kernel(T gy, T x, T w, T rm, T rv, T sm, T si, bool train, double eps,
                                                      const bool* mask, int64_t nm) {
  const char* op = "native_batch_norm_backward";
  if (mask_check(op, nm) != WEFT_OK || bn_checks(op, x, w, NULL, NULL, NULL, true) != WEFT_OK ||
      grad_checks(op, gy, x) != WEFT_OK)
    return fail3();
  const int64_t c = x->sizes[1];
  double *mean = dalloc(c), *inv = dalloc(c);
  weft_memory_format f = keep_format(x);
  weft_tensor *xc = NULL, *gyc = NULL;
  weft_tensor3 r = {{NULL, NULL, NULL}, WEFT_OK};
  weft_status st = mean && inv ? bn_backward_stats(op, x, rm, rv, sm, si, train, eps, mean, inv)
                               : weft__error(WEFT_OUT_OF_MEMORY, "out of memory: batch_norm");
  if (st == WEFT_OK && (!(xc = weft_contiguous(x, f)) || !(gyc = weft_contiguous(gy, f)))) st = weft_last_status();
  if (st == WEFT_OK && mask[0] && !(r.t[0] = alloc_fmt(op, x->sizes, x->ndim, f, x->dtype, x->device)))
    st = weft_last_status();
  for (int i = 1; i < 3 && st == WEFT_OK; i++)
    if (mask[i] && !(r.t[i] = vec_tensor(op, x, c, NULL))) st = weft_last_status();
  weft_norm_geom g = xc ? bn_geom(xc, f) : (weft_norm_geom){0, 0, 0, false};
  if (st == WEFT_OK && x->device == WEFT_DEVICE_WEBGPU)
    st = weft__batch_norm_backward_webgpu(gyc, xc, w, train ? sm : rm, train ? si : rv, train, eps, r.t);
  else if (st == WEFT_OK && computes(x)) st = bn_backward_compute(&g, gyc, xc, w, mean, inv, train, r.t);
  free(mean), free(inv);
  return finish3(st, r, xc, gyc);
}

/* ---- batch_norm: torch.nn.functional's entry ---- */
static weft_status bn_batch_check(T x) {
  int64_t prod = x->sizes[0] * plane_size(x);
  if (prod != 1) return WEFT_OK;
  char buf[160];
  return weft__error(WEFT_INVALID_ARGUMENT,
                     "batch_norm: Expected more than 1 value per channel when training, got input size %s",
                     shape_of(x, buf, sizeof buf));
}

static weft_tensor* batch_norm_kernel(T x, T w, T b, T rm, T rv, bool training, double momentum, double eps,
                                      bool cudnn_enabled) {
  (void)cudnn_enabled;
  if (bn_checks("batch_norm", x, w, b, rm, rv, training) != WEFT_OK || (training && bn_batch_check(x) != WEFT_OK))
    return NULL;
  if (x->numel == 0) return weft_clone(x, WEFT_PRESERVE_FORMAT); /* as 1.13: no statistics, nothing updated */
  weft_tensor3 r = weft_native_batch_norm(x, w, b, rm, rv, training, momentum, eps);
  weft_tensor_release(r.t[1]);
  weft_tensor_release(r.t[2]);
  return r.t[0];
}

static weft_status stat_shape_check(const char* op, const char* name, T t, int64_t want) {
  if (t->numel == want) return WEFT_OK;
  return weft__error(WEFT_SHAPE_ERROR, "%s: expected %s to have %lld elements but got %lld", op, name, (long long)want,
                     (long long)t->numel);
}

/* ---- what the backward ops share ---- */

/* grad_out, mean and rstd against the input (m statistics) */
static weft_status stats_checks(const char* op, T gy, T x, T mean, T rstd, int64_t m) {
  weft_status s = grad_checks(op, gy, x);
  if (s == WEFT_OK) s = check_same_device(op, mean, x);
  if (s == WEFT_OK) s = check_same_device(op, rstd, x);
  if (s == WEFT_OK) s = stat_shape_check(op, "mean", mean, m);
  if (s == WEFT_OK) s = stat_shape_check(op, "rstd", rstd, m);
  if (s == WEFT_OK) s = check_dtype(op, mean, x);
  if (s == WEFT_OK) s = check_dtype(op, rstd, x);
  return s;
}

/* x and gy contiguous, and the outputs mask asks for: the input's gradient
 * (contiguous) and the parameters' (sizes ps) */
static weft_status backward_setup(const char* op, T gy, T x, const bool* mask, const int64_t* ps, int64_t np,
                                  weft_tensor** xc, weft_tensor** gyc, weft_tensor3* r) {
  *r = (weft_tensor3){{NULL, NULL, NULL}, WEFT_OK};
  if (!(*xc = weft_contiguous(x, WEFT_CONTIGUOUS_FORMAT)) || !(*gyc = weft_contiguous(gy, WEFT_CONTIGUOUS_FORMAT)))
    return weft_last_status();
  if (mask[0] && !(r->t[0] = alloc_fmt(op, x->sizes, x->ndim, WEFT_CONTIGUOUS_FORMAT, x->dtype, x->device)))
    return weft_last_status();
  for (int i = 1; i < 3; i++)
    if (mask[i] && !(r->t[i] = alloc_fmt(op, ps, np, WEFT_CONTIGUOUS_FORMAT, x->dtype, x->device)))
      return weft_last_status();
  return WEFT_OK;
}


/* ==== group norm ==== */

static weft_status gn_checks(const char* op, T x, T w, T b, int64_t n, int64_t c, int64_t hxw, int64_t group) {
  char bx[160], bp[160];
  if (group <= 0 || c % group != 0)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: Expected number of channels in input to be divisible by num_groups, but got input of "
                       "shape %s and num_groups=%lld",
                       op, shape_of(x, bx, sizeof bx), (long long)group);
  const char* names[2] = {"weight", "bias"};
  T ts[2] = {w, b};
  for (int i = 0; i < 2; i++)
    if (ts[i] && (ts[i]->ndim != 1 || ts[i]->numel != c))
      return weft__error(WEFT_SHAPE_ERROR,
                         "%s: Expected %s to be a vector of size equal to the number of channels in input, but got "
                         "%s of shape %s and input of shape %s",
                         op, names[i], names[i], shape_of(ts[i], bp, sizeof bp), shape_of(x, bx, sizeof bx));
  int64_t nc = 0, total = 0;
  if (n < 0 || c < 0 || hxw < 0 || weft__mul_overflow(n, c, &nc) || weft__mul_overflow(nc, hxw, &total) ||
      total != x->numel)
    return weft__error(WEFT_SHAPE_ERROR,
                       "%s: Expected input.numel() == N * C * HxW, but got %lld and N=%lld, C=%lld, HxW=%lld", op,
                       (long long)x->numel, (long long)n, (long long)c, (long long)hxw);
  weft_status s = check_floating(op, "GroupNormKernelImpl", x);
  if (s == WEFT_OK) s = check_dtype(op, w, x);
  if (s == WEFT_OK) s = check_dtype(op, b, x);
  if (s == WEFT_OK) s = check_same_device(op, w, x);
  if (s == WEFT_OK) s = check_same_device(op, b, x);
  return s;
}

/* N images of C channels of HxW; channels_last keeps its rows */
static weft_norm_geom gn_geom(T x, int64_t n, int64_t c, int64_t hxw, weft_memory_format f) {
  return (weft_norm_geom){n, c, hxw, f != WEFT_CONTIGUOUS_FORMAT || hxw == 1};
}

/* per (image, group): mean and rstd from per-channel shifted sums whose
 * shift is the group's first element */
static weft_status gn_stats(const weft_norm_geom* g, T xc, int64_t group, double eps, double* mean, double* rstd) {
  const int64_t nc = g->n * g->c, d = g->c / group, cnt = d * g->s;
  const size_t es = weft_dtype_size(xc->dtype);
  double *k = dalloc(nc), *s = dalloc(nc), *q = dalloc(nc);
  weft_status st = k && s && q ? WEFT_OK : weft__error(WEFT_OUT_OF_MEMORY, "out of memory: group_norm");
  const char* base = weft_tensor_data_ptr(xc);
  for (int64_t i = 0; st == WEFT_OK && i < g->n && cnt > 0; i++)
    for (int64_t j = 0; j < g->c; j++) {
      int64_t first = j / d * d, at = g->nsc ? i * g->s * g->c + first : (i * g->c + first) * g->s;
      k[i * g->c + j] = weft__load_f64(base + (size_t)at * es, xc->dtype);
    }
  if (st == WEFT_OK) st = weft__norm_moments(weft__kernels(), g, xc->dtype, base, k, s, q);
  for (int64_t i = 0; st == WEFT_OK && i < g->n; i++)
    for (int64_t h = 0; h < group; h++) {
      double sg = 0, qg = 0;
      for (int64_t j = h * d; j < (h + 1) * d; j++) sg += s[i * g->c + j], qg += q[i * g->c + j];
      double dm = sg / (double)cnt, v = qg / (double)cnt - dm * dm;
      mean[i * group + h] = (cnt > 0 ? k[i * g->c + h * d] : 0) + dm;
      rstd[i * group + h] = 1.0 / sqrt((v > 0 ? v : 0) + eps);
    }
  free(k), free(s), free(q);
  return st;
}

static weft_status gn_forward_compute(const weft_norm_geom* g, T xc, T w, T b, int64_t group, double eps,
                                      weft_tensor* const* out) {
  const int64_t c = g->c, nc = g->n * c, ng = g->n * group, d = c / group;
  double *mean = dalloc(ng), *rstd = dalloc(ng), *wv = dalloc(c), *bv = dalloc(c), *a = dalloc(nc), *sh = dalloc(nc);
  weft_status st = mean && rstd && wv && bv && a && sh ? WEFT_OK
                                                        : weft__error(WEFT_OUT_OF_MEMORY, "out of memory: group_norm");
  if (st == WEFT_OK) st = gn_stats(g, xc, group, eps, mean, rstd);
  if (st == WEFT_OK) {
    read_vec(w, c, 1.0, wv);
    read_vec(b, c, 0.0, bv);
    for (int64_t i = 0; i < g->n; i++)
      for (int64_t j = 0; j < c; j++) {
        int64_t q = i * group + j / d;
        a[i * c + j] = rstd[q] * wv[j];
        sh[i * c + j] = bv[j] - mean[q] * a[i * c + j];
      }
    st = weft__norm_apply(weft__kernels(), g, xc->dtype, weft_tensor_data_ptr(xc), a, sh,
                          weft_tensor_data_ptr(out[0]));
  }
  if (st == WEFT_OK) {
    write_vec(out[1], mean);
    write_vec(out[2], rstd);
  }
  free(mean), free(rstd), free(wv), free(bv), free(a), free(sh);
  return st;
}

static weft_tensor3 gn_forward(const char* op, T x, T w, T b, int64_t n, int64_t c, int64_t hxw, int64_t group,
                               double eps) {
  if (gn_checks(op, x, w, b, n, c, hxw, group) != WEFT_OK) return fail3();
  weft_memory_format f = keep_format(x);
  weft_tensor* xc = weft_contiguous(x, f);
  if (!xc) return fail3();
  const int64_t ms[2] = {n, group};
  weft_tensor3 r = {{alloc_fmt(op, x->sizes, x->ndim, f, x->dtype, x->device),
                     alloc_fmt(op, ms, 2, WEFT_CONTIGUOUS_FORMAT, x->dtype, x->device),
                     alloc_fmt(op, ms, 2, WEFT_CONTIGUOUS_FORMAT, x->dtype, x->device)},
                    WEFT_OK};
  weft_status st = r.t[0] && r.t[1] && r.t[2] ? WEFT_OK : weft_last_status();
  weft_norm_geom g = gn_geom(x, n, c, hxw, f);
  if (st == WEFT_OK && x->device == WEFT_DEVICE_WEBGPU)
    st = weft__group_norm_webgpu(xc, w, b, group, eps, r.t);
  else if (st == WEFT_OK && weft_explaining())
    st = explain(op, g.nsc ? "group_norm_channels_last" : "group_norm_planes", x, g.nsc ? n * hxw : n * c,
                 g.nsc ? c : hxw);
  else if (st == WEFT_OK && computes(x))
    st = gn_forward_compute(&g, xc, w, b, group, eps, r.t);
  return finish3(st, r, xc, NULL);
}

static weft_tensor3 native_group_norm_kernel(T x, T w, T b, int64_t n, int64_t c, int64_t hxw, int64_t group,
                                             double eps) {
  return gn_forward("native_group_norm", x, w, b, n, c, hxw, group, eps);
}

/* dx = dy A + x B + C with A = rstd w, and per (image, group)
 * B = -rstd^3 t / cnt, C = -rstd s / cnt - mean B, s = sum w dy,
 * t = sum w dy (x - mean) over the group; gw = sum_n t_c rstd, gb = sum_n s_c */
static weft_status gn_backward_compute(const weft_norm_geom* g, T gyc, T xc, T mean_t, T rstd_t, T w, int64_t group,
                                       weft_tensor* const* out) {
  const int64_t c = g->c, nc = g->n * c, ng = g->n * group, d = c / group;
  const double cnt = (double)(d * g->s);
  double *mean = dalloc(ng), *rstd = dalloc(ng), *k = dalloc(nc), *s = dalloc(nc), *t = dalloc(nc), *wv = dalloc(c);
  double *co = dalloc(3 * nc), *acc = dalloc(2 * c);
  weft_status st = mean && rstd && k && s && t && wv && co && acc
                       ? WEFT_OK
                       : weft__error(WEFT_OUT_OF_MEMORY, "out of memory: group_norm");
  const bool f32 = xc->dtype == WEFT_FLOAT32;
  if (st == WEFT_OK) {
    read_vec(mean_t, ng, 0.0, mean);
    read_vec(rstd_t, ng, 0.0, rstd);
    read_vec(w, c, 1.0, wv);
    for (int64_t i = 0; i < nc; i++)
      k[i] = f32 ? (float)mean[i / c * group + i % c / d] : mean[i / c * group + i % c / d];
    st = weft__norm_dots(weft__kernels(), g, xc->dtype, weft_tensor_data_ptr(gyc), weft_tensor_data_ptr(xc), k, s, t);
  }
  for (int64_t i = 0; st == WEFT_OK && i < nc; i++) t[i] += (k[i] - mean[i / c * group + i % c / d]) * s[i];
  for (int64_t i = 0; st == WEFT_OK && i < g->n; i++)
    for (int64_t h = 0; h < group; h++) {
      const int64_t q = i * group + h;
      double sg = 0, tg = 0;
      for (int64_t j = h * d; j < (h + 1) * d; j++) sg += wv[j] * s[i * c + j], tg += wv[j] * t[i * c + j];
      double r = rstd[q], bb = -r * r * r * tg / cnt, cc = -r * sg / cnt - mean[q] * bb;
      for (int64_t j = h * d; j < (h + 1) * d; j++) {
        co[i * c + j] = r * wv[j], co[nc + i * c + j] = bb, co[2 * nc + i * c + j] = cc;
        acc[j] += t[i * c + j] * r;
        acc[c + j] += s[i * c + j];
      }
    }
  if (st == WEFT_OK && out[0] && cnt > 0)
    st = weft__norm_apply_backward(weft__kernels(), g, xc->dtype, weft_tensor_data_ptr(gyc), weft_tensor_data_ptr(xc),
                                   co, co + nc, co + 2 * nc, weft_tensor_data_ptr(out[0]));
  if (st == WEFT_OK && out[1]) write_vec(out[1], acc);
  if (st == WEFT_OK && out[2]) write_vec(out[2], acc + c);
  free(mean), free(rstd), free(k), free(s), free(t), free(wv), free(co), free(acc);
  return st;
}


static weft_tensor3 native_group_norm_backward_kernel(T gy, T x, T mean, T rstd, T w, int64_t n, int64_t c,
                                                      int64_t hxw, int64_t group, const bool* mask, int64_t nm) {
  const char* op = "native_group_norm_backward";
  if (mask_check(op, nm) != WEFT_OK || gn_checks(op, x, w, NULL, n, c, hxw, group) != WEFT_OK ||
      stats_checks(op, gy, x, mean, rstd, n * group) != WEFT_OK)
    return fail3();
  weft_tensor *xc = NULL, *gyc = NULL;
  weft_tensor3 r;
  weft_status st = backward_setup(op, gy, x, mask, &c, 1, &xc, &gyc, &r);
  weft_norm_geom g = gn_geom(x, n, c, hxw, WEFT_CONTIGUOUS_FORMAT);
  if (st == WEFT_OK && x->device == WEFT_DEVICE_WEBGPU)
    st = weft__group_norm_backward_webgpu(gyc, xc, mean, rstd, w, group, r.t);
  else if (st == WEFT_OK && computes(x)) st = gn_backward_compute(&g, gyc, xc, mean, rstd, w, group, r.t);
  return finish3(st, r, xc, gyc);
}

static weft_tensor* group_norm_kernel(T x, int64_t groups, T w, T b, double eps, bool cudnn_enabled) {
  (void)cudnn_enabled;
  if (x->ndim < 2) { /* 1.13 reads input.size(1) first */
    weft__error(WEFT_INDEX_ERROR, "group_norm: Dimension out of range (expected to be in range of [%d, %d], but got 1)",
                x->ndim ? -x->ndim : -1, x->ndim ? x->ndim - 1 : 0);
    return NULL;
  }
  const int64_t n = x->sizes[0], c = x->sizes[1], hxw = plane_size(x);
  if (gn_checks("group_norm", x, w, b, n, c, hxw, groups) != WEFT_OK) return NULL;
  weft_tensor3 r = weft_native_group_norm(x, w, b, n, c, hxw, groups, eps);
  weft_tensor_release(r.t[1]);
  weft_tensor_release(r.t[2]);
  return r.t[0];
}

/* ==== layer norm ==== */

/* _check_layer_norm_inputs' shapes; *m rows of *k elements */
static weft_status ln_shape_checks(const char* op, T x, const int64_t* ns, int64_t nn, T w, T b, int64_t* m,
                                   int64_t* k) {
  char bn[160], bx[160];
  if (nn < 1)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                       "element, but got normalized_shape = %s",
                       op, weft__sizes_str(ns, nn, bn, sizeof bn));
  const char* names[2] = {"weight", "bias"};
  T ts[2] = {w, b};
  for (int i = 0; i < 2; i++)
    if (ts[i] && (ts[i]->ndim != nn || memcmp(ts[i]->sizes, ns, sizeof(int64_t) * (size_t)nn) != 0))
      return weft__error(WEFT_SHAPE_ERROR,
                         "%s: Expected %s to be of same shape as normalized_shape, but got %s of shape %s and "
                         "normalized_shape = %s",
                         op, names[i], names[i], shape_of(ts[i], bx, sizeof bx), weft__sizes_str(ns, nn, bn, sizeof bn));
  int64_t axis = x->ndim - nn;
  bool ok = axis >= 0;
  for (int64_t i = 0; ok && i < nn; i++) ok = x->sizes[axis + i] == ns[i];
  if (!ok) {
    char bs[160];
    weft__sizes_str(ns, nn, bn, sizeof bn);
    snprintf(bs, sizeof bs, "%.*s", (int)(strlen(bn) - 2), bn + 1); /* the list without its brackets */
    return weft__error(WEFT_SHAPE_ERROR,
                       "%s: Given normalized_shape=%s, expected input with shape [*, %s], but got input of size%s", op,
                       bn, bs, shape_of(x, bx, sizeof bx));
  }
  *m = 1, *k = 1;
  for (int64_t d = 0; d < x->ndim; d++) *(d < axis ? m : k) *= x->sizes[d];
  return WEFT_OK;
}

/* _check_layer_norm_inputs, then the dtypes and devices LayerNormKernelImpl takes */
static weft_status ln_checks(const char* op, T x, const int64_t* ns, int64_t nn, T w, T b, int64_t* m, int64_t* k) {
  if (ln_shape_checks(op, x, ns, nn, w, b, m, k) != WEFT_OK) return weft_last_status();
  weft_status s = check_floating(op, "LayerNormKernelImpl", x);
  T ts[2] = {w, b};
  for (int i = 0; i < 2 && s == WEFT_OK; i++) {
    s = check_dtype(op, ts[i], x);
    if (s == WEFT_OK) s = check_same_device(op, ts[i], x);
  }
  return s;
}

/* mean / rstd: the input's shape with 1 over the normalized dims */
static void ln_stat_shape(T x, int64_t nn, int64_t* out) {
  for (int64_t d = 0; d < x->ndim; d++) out[d] = d < x->ndim - nn ? x->sizes[d] : 1;
}

static weft_status ln_forward_compute(T xc, T w, T b, int64_t m, int64_t k, double eps, weft_tensor* const* out) {
  double *mean = dalloc(m), *rstd = dalloc(m);
  weft_tensor *wc = w ? weft_contiguous(w, WEFT_CONTIGUOUS_FORMAT) : NULL,
              *bc = b ? weft_contiguous(b, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_status st = mean && rstd ? WEFT_OK : weft__error(WEFT_OUT_OF_MEMORY, "out of memory: layer_norm");
  if (st == WEFT_OK && ((w && !wc) || (b && !bc))) st = weft_last_status();
  if (st == WEFT_OK)
    st = weft__layer_norm_stats(weft__kernels(), m, k, xc->dtype, weft_tensor_data_ptr(xc), eps, mean, rstd);
  if (st == WEFT_OK)
    st = weft__layer_norm_apply(weft__kernels(), m, k, xc->dtype, weft_tensor_data_ptr(xc), mean, rstd,
                                wc ? weft_tensor_data_ptr(wc) : NULL, bc ? weft_tensor_data_ptr(bc) : NULL,
                                weft_tensor_data_ptr(out[0]));
  if (st == WEFT_OK) {
    write_vec(out[1], mean);
    write_vec(out[2], rstd);
  }
  weft_tensor_release(wc);
  weft_tensor_release(bc);
  free(mean), free(rstd);
  return st;
}

static weft_tensor3 ln_forward(const char* op, T x, const int64_t* ns, int64_t nn, T w, T b, double eps) {
  int64_t m, k, ss[WEFT_MAX_DIMS];
  if (ln_checks(op, x, ns, nn, w, b, &m, &k) != WEFT_OK) return fail3();
  weft_tensor* xc = weft_contiguous(x, WEFT_CONTIGUOUS_FORMAT);
  if (!xc) return fail3();
  ln_stat_shape(x, nn, ss);
  weft_tensor3 r = {{alloc_fmt(op, x->sizes, x->ndim, WEFT_CONTIGUOUS_FORMAT, x->dtype, x->device),
                     alloc_fmt(op, ss, x->ndim, WEFT_CONTIGUOUS_FORMAT, x->dtype, x->device),
                     alloc_fmt(op, ss, x->ndim, WEFT_CONTIGUOUS_FORMAT, x->dtype, x->device)},
                    WEFT_OK};
  weft_status st = r.t[0] && r.t[1] && r.t[2] ? WEFT_OK : weft_last_status();
  if (st == WEFT_OK && x->device == WEFT_DEVICE_WEBGPU) st = weft__layer_norm_webgpu(xc, w, b, nn, eps, r.t);
  else if (st == WEFT_OK && weft_explaining()) st = explain(op, "layer_norm_rows", x, m, k);
  else if (st == WEFT_OK && computes(x)) st = ln_forward_compute(xc, w, b, m, k, eps, r.t);
  return finish3(st, r, xc, NULL);
}

static weft_tensor3 native_layer_norm_kernel(T x, const int64_t* ns, int64_t nn, T w, T b, double eps) {
  return ln_forward("native_layer_norm", x, ns, nn, w, b, eps);
}

static weft_status ln_backward_compute(T gyc, T xc, T mean_t, T rstd_t, T w, int64_t m, int64_t k,
                                       weft_tensor* const* out) {
  double *mean = dalloc(m), *rstd = dalloc(m);
  weft_tensor* wc = w ? weft_contiguous(w, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_status st = mean && rstd ? WEFT_OK : weft__error(WEFT_OUT_OF_MEMORY, "out of memory: layer_norm");
  if (st == WEFT_OK && w && !wc) st = weft_last_status();
  if (st == WEFT_OK) {
    read_vec(mean_t, m, 0.0, mean);
    read_vec(rstd_t, m, 0.0, rstd);
    st = weft__layer_norm_backward(weft__kernels(), m, k, xc->dtype, weft_tensor_data_ptr(gyc),
                                   weft_tensor_data_ptr(xc), mean, rstd, wc ? weft_tensor_data_ptr(wc) : NULL,
                                   out[0] ? weft_tensor_data_ptr(out[0]) : NULL,
                                   out[1] ? weft_tensor_data_ptr(out[1]) : NULL,
                                   out[2] ? weft_tensor_data_ptr(out[2]) : NULL);
  }
  weft_tensor_release(wc);
  free(mean), free(rstd);
  return st;
}

static weft_tensor3 native_layer_norm_backward_kernel(T gy, T x, const int64_t* ns, int64_t nn, T mean, T rstd, T w,
                                                      T b, const bool* mask, int64_t nm) {
  const char* op = "native_layer_norm_backward";
  int64_t m = 0, k = 0;
  if (mask_check(op, nm) != WEFT_OK || ln_checks(op, x, ns, nn, w, b, &m, &k) != WEFT_OK ||
      stats_checks(op, gy, x, mean, rstd, m) != WEFT_OK)
    return fail3();
  weft_tensor *xc = NULL, *gyc = NULL;
  weft_tensor3 r;
  weft_status st = backward_setup(op, gy, x, mask, ns, nn, &xc, &gyc, &r);
  if (st == WEFT_OK && x->device == WEFT_DEVICE_WEBGPU)
    st = weft__layer_norm_backward_webgpu(gyc, xc, nn, mean, rstd, w, r.t);
  else if (st == WEFT_OK && computes(x)) st = ln_backward_compute(gyc, xc, mean, rstd, w, m, k, r.t);
  return finish3(st, r, xc, gyc);
}

static weft_tensor* layer_norm_kernel(T x, const int64_t* ns, int64_t nn, T w, T b, double eps, bool cudnn_enable) {
  (void)cudnn_enable;
  int64_t m, k;
  if (ln_checks("layer_norm", x, ns, nn, w, b, &m, &k) != WEFT_OK) return NULL;
  weft_tensor3 r = weft_native_layer_norm(x, ns, nn, w, b, eps);
  weft_tensor_release(r.t[1]);
  weft_tensor_release(r.t[2]);
  return r.t[0];
}

/* ==== rms_norm (PyTorch 2.4's semantics) ==== */

/* the fused kernel's checks: layer_norm's shapes (no bias), float32 / float64, weight of the input's dtype */
static weft_status rms_checks(const char* op, T x, const int64_t* ns, int64_t nn, T w, int64_t* m, int64_t* k) {
  if (ln_shape_checks(op, x, ns, nn, w, NULL, m, k) != WEFT_OK) return weft_last_status();
  weft_status s = check_floating(op, "rms_norm", x);
  if (s == WEFT_OK) s = check_dtype(op, w, x);
  if (s == WEFT_OK) s = check_same_device(op, w, x);
  return s;
}

static weft_status rms_forward_compute(T xc, T w, int64_t m, int64_t k, double eps, weft_tensor* const* out) {
  double* rstd = dalloc(m);
  weft_tensor* wc = w ? weft_contiguous(w, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_status st = rstd ? WEFT_OK : weft__error(WEFT_OUT_OF_MEMORY, "out of memory: rms_norm");
  if (st == WEFT_OK && w && !wc) st = weft_last_status();
  if (st == WEFT_OK)
    st = weft__rms_norm_forward(weft__kernels(), m, k, xc->dtype, weft_tensor_data_ptr(xc), eps,
                                wc ? weft_tensor_data_ptr(wc) : NULL, weft_tensor_data_ptr(out[0]), rstd);
  if (st == WEFT_OK) write_vec(out[1], rstd);
  weft_tensor_release(wc);
  free(rstd);
  return st;
}

/* _fused_rms_norm: (out, rstd), rstd of the input's shape with 1 over the normalized dims */
static weft_tensor2 fused_rms_norm_kernel(T x, const int64_t* ns, int64_t nn, T w, double eps) {
  const char* op = "rms_norm";
  const weft_tensor2 none = {{NULL, NULL}};
  int64_t m, k, ss[WEFT_MAX_DIMS];
  if (rms_checks(op, x, ns, nn, w, &m, &k) != WEFT_OK) return none;
  if (isnan(eps)) eps = weft__rms_norm_default_eps(x->dtype);
  weft_tensor* xc = weft_contiguous(x, WEFT_CONTIGUOUS_FORMAT);
  if (!xc) return none;
  ln_stat_shape(x, nn, ss);
  weft_tensor3 r = {{alloc_fmt(op, x->sizes, x->ndim, WEFT_CONTIGUOUS_FORMAT, x->dtype, x->device),
                     alloc_fmt(op, ss, x->ndim, WEFT_CONTIGUOUS_FORMAT, x->dtype, x->device), NULL},
                    WEFT_OK};
  weft_status st = r.t[0] && r.t[1] ? WEFT_OK : weft_last_status();
  if (st == WEFT_OK && x->device == WEFT_DEVICE_WEBGPU) st = weft__rms_norm_webgpu(xc, w, nn, eps, r.t);
  else if (st == WEFT_OK && weft_explaining()) st = explain(op, "rms_norm_rows", x, m, k);
  else if (st == WEFT_OK && computes(x)) st = rms_forward_compute(xc, w, m, k, eps, r.t);
  r = finish3(st, r, xc, NULL);
  return (weft_tensor2){{r.t[0], r.t[1]}};
}

static weft_status rms_backward_compute(T gyc, T xc, T rstd_t, T w, int64_t m, int64_t k, weft_tensor* const* out) {
  double* rstd = dalloc(m);
  weft_tensor* wc = w ? weft_contiguous(w, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_status st = rstd ? WEFT_OK : weft__error(WEFT_OUT_OF_MEMORY, "out of memory: rms_norm");
  if (st == WEFT_OK && w && !wc) st = weft_last_status();
  if (st == WEFT_OK) {
    read_vec(rstd_t, m, 0.0, rstd);
    st = weft__rms_norm_backward(weft__kernels(), m, k, xc->dtype, weft_tensor_data_ptr(gyc),
                                 weft_tensor_data_ptr(xc), rstd, wc ? weft_tensor_data_ptr(wc) : NULL,
                                 out[0] ? weft_tensor_data_ptr(out[0]) : NULL,
                                 out[1] ? weft_tensor_data_ptr(out[1]) : NULL);
  }
  weft_tensor_release(wc);
  free(rstd);
  return st;
}

/* _rms_norm_backward: (grad_input, grad_weight, None) as output_mask asks */
static weft_tensor3 rms_norm_backward_kernel(T gy, T x, const int64_t* ns, int64_t nn, T rstd, T w, const bool* mask,
                                             int64_t nm) {
  const char* op = "_rms_norm_backward";
  int64_t m = 0, k = 0;
  if (nm != 2)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: expected outputMask to be a list of 2 booleans, but got %lld", op,
                       (long long)nm),
           fail3();
  if (rms_checks(op, x, ns, nn, w, &m, &k) != WEFT_OK || grad_checks(op, gy, x) != WEFT_OK ||
      check_same_device(op, rstd, x) != WEFT_OK || stat_shape_check(op, "rstd", rstd, m) != WEFT_OK ||
      check_dtype(op, rstd, x) != WEFT_OK)
    return fail3();
  const bool mask3[3] = {mask[0], mask[1] && w, false};
  weft_tensor *xc = NULL, *gyc = NULL;
  weft_tensor3 r;
  weft_status st = backward_setup(op, gy, x, mask3, ns, nn, &xc, &gyc, &r);
  if (st == WEFT_OK && x->device == WEFT_DEVICE_WEBGPU)
    st = weft__rms_norm_backward_webgpu(gyc, xc, nn, rstd, w, r.t);
  else if (st == WEFT_OK && computes(x)) st = rms_backward_compute(gyc, xc, rstd, w, m, k, r.t);
  return finish3(st, r, xc, gyc);
}

/* y in x's layout, as 2.4's elementwise ops give it (the fused kernel writes contiguous rows) */
static weft_tensor* like_input(T x, weft_tensor* y) {
  if (!y || weft_tensor_is_contiguous(x, WEFT_CONTIGUOUS_FORMAT)) return y;
  weft_tensor* r = weft_empty_like(x, (weft_dtype)-1, WEFT_PRESERVE_FORMAT);
  if (r && weft_copy_(r, y) != WEFT_OK) weft_tensor_release(r), r = NULL;
  weft_tensor_release(y);
  return r;
}

static weft_tensor* fused_out(T x, const int64_t* ns, int64_t nn, T w, double eps) {
  weft_tensor2 r = weft_op__fused_rms_norm(x, ns, nn, w, eps);
  weft_tensor_release(r.t[1]);
  return r.t[0];
}

/* rms_norm: the fused kernel; float16 / bfloat16 through float32 (one rounding at the end where 2.4 rounds
 * after each step), a weight of another dtype multiplied after, with type promotion, as 2.4's composite does */
static weft_tensor* rms_norm_kernel(T x, const int64_t* ns, int64_t nn, T w, double eps) {
  const char* op = "rms_norm";
  int64_t m, k;
  if (ln_shape_checks(op, x, ns, nn, w, NULL, &m, &k) != WEFT_OK) return NULL;
  bool half = x->dtype == WEFT_FLOAT16 || x->dtype == WEFT_BFLOAT16;
  if (!half && check_floating(op, "rms_norm", x) != WEFT_OK) return NULL;
  if (isnan(eps)) eps = weft__rms_norm_default_eps(x->dtype);
  bool same = !w || w->dtype == x->dtype;
  if (!half) {
    weft_tensor* y = like_input(x, fused_out(x, ns, nn, same ? w : NULL, eps));
    if (same || !y) return y;
    weft_tensor* r = weft_mul(y, w);
    weft_tensor_release(y);
    return r;
  }
  weft_tensor *xf = weft_to_dtype(x, WEFT_FLOAT32, false), *wf = w && same ? weft_to_dtype(w, WEFT_FLOAT32, false) : NULL;
  weft_tensor *y = xf && (!w || !same || wf) ? fused_out(xf, ns, nn, wf, eps) : NULL, *r = NULL;
  if (y) r = weft_to_dtype(y, x->dtype, false);
  weft_tensor_release(xf), weft_tensor_release(wf), weft_tensor_release(y);
  if (!r || same) return like_input(x, r);
  weft_tensor* rw = weft_mul(r, w);
  weft_tensor_release(r);
  return like_input(x, rw);
}

weft_status weft__normalization_register(void) {
  WEFT_KERNEL(native_batch_norm, CPU, native_batch_norm_kernel);
  WEFT_KERNEL(native_batch_norm, META, native_batch_norm_kernel);
  WEFT_KERNEL(native_batch_norm_backward, CPU, native_batch_norm_backward_kernel);
  WEFT_KERNEL(native_batch_norm_backward, META, native_batch_norm_backward_kernel);
  WEFT_KERNEL(native_group_norm, CPU, native_group_norm_kernel);
  WEFT_KERNEL(native_group_norm, META, native_group_norm_kernel);
  WEFT_KERNEL(native_group_norm_backward, CPU, native_group_norm_backward_kernel);
  WEFT_KERNEL(native_group_norm_backward, META, native_group_norm_backward_kernel);
  WEFT_KERNEL(native_layer_norm, CPU, native_layer_norm_kernel);
  WEFT_KERNEL(native_layer_norm, META, native_layer_norm_kernel);
  WEFT_KERNEL(native_layer_norm_backward, CPU, native_layer_norm_backward_kernel);
  WEFT_KERNEL(native_layer_norm_backward, META, native_layer_norm_backward_kernel);
  WEFT_KERNEL(native_layer_norm, WEBGPU, native_layer_norm_kernel);
  WEFT_KERNEL(native_batch_norm, WEBGPU, native_batch_norm_kernel);
  WEFT_KERNEL(native_group_norm, WEBGPU, native_group_norm_kernel);
  WEFT_KERNEL(native_group_norm_backward, WEBGPU, native_group_norm_backward_kernel);
  WEFT_KERNEL(native_batch_norm_backward, WEBGPU, native_batch_norm_backward_kernel);
  WEFT_KERNEL(op__fused_rms_norm, WEBGPU, fused_rms_norm_kernel);
  WEFT_KERNEL(op__rms_norm_backward, WEBGPU, rms_norm_backward_kernel);
  WEFT_KERNEL(native_layer_norm_backward, WEBGPU, native_layer_norm_backward_kernel);
  WEFT_KERNEL(batch_norm, COMPOSITE_IMPLICIT_AUTOGRAD, batch_norm_kernel);
  WEFT_KERNEL(group_norm, COMPOSITE_IMPLICIT_AUTOGRAD, group_norm_kernel);
  WEFT_KERNEL(layer_norm, COMPOSITE_IMPLICIT_AUTOGRAD, layer_norm_kernel);
  WEFT_KERNEL(op__fused_rms_norm, CPU, fused_rms_norm_kernel);
  WEFT_KERNEL(op__fused_rms_norm, META, fused_rms_norm_kernel);
  WEFT_KERNEL(op__rms_norm_backward, CPU, rms_norm_backward_kernel);
  WEFT_KERNEL(op__rms_norm_backward, META, rms_norm_backward_kernel);
  WEFT_KERNEL(rms_norm, COMPOSITE_IMPLICIT_AUTOGRAD, rms_norm_kernel);
  return WEFT_OK;
}
