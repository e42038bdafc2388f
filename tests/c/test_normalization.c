/* Normalizations (issue 23). The kernels of src/kernels/norm.c on every
 * backend against a double reference and bit for bit against the scalar
 * backend, at tile sizes and around them; then the ops (native_batch_norm,
 * native_layer_norm, native_group_norm and their backward ops, the
 * composites) against plain double references, NCHW and channels_last,
 * at 1 and 3 threads (the same bits: the split depends on the shape only),
 * the gradients and (createGraph) the second derivatives against central
 * differences in float64, the errors, allocation failures at every step
 * (a clean OutOfMemory, nothing left), and no leaks. The PyTorch values are replayed by
 * tests/js/norm-ops-fixtures.test.mjs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "kernel_test_util.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/alloc.h"
#include "weft/autograd.h"
#include "weft/parallel.h"

static bool near(double got, double want, double tol) { return fabs(got - want) <= tol * (1 + fabs(want)); }

/* ---- kernels ---- */
static void test_row_kernels(void) {
  enum { N = 1100 };
  float *x = malloc(N * sizeof(float)), *dy = malloc(N * sizeof(float)), *w = malloc(N * sizeof(float));
  float *y = malloc(N * sizeof(float)), *ys = malloc(N * sizeof(float));
  for (int i = 0; i < N; i++) x[i] = kt_randf(99.0f, 101.0f), dy[i] = kt_randf(-1, 1), w[i] = kt_randf(0.5f, 2);
  const size_t sizes[] = {1, 3, 4, 7, 8, 15, 16, 63, 64, 65, 127, 128, 129, 200, 1099};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    size_t n = sizes[s];
    float k = x[0];
    double rs = 0, rq = 0, ds = 0, dq = 0, dws = 0, dwq = 0;
    for (size_t i = 0; i < n; i++) {
      double d = (double)x[i] - k, g = dy[i], gw = (double)dy[i] * w[i];
      rs += d, rq += d * d, ds += g, dq += g * d, dws += gw, dwq += gw * d;
    }
    double ref[3][2] = {{rs, rq}, {ds, dq}, {dws, dwq}}, scal[3][2] = {{0}};
    weft__kernels_scalar()->f32_rmoments(n, x, k, scal[0]);
    weft__kernels_scalar()->f32_rdotc(n, dy, x, NULL, k, scal[1]);
    weft__kernels_scalar()->f32_rdotc(n, dy, x, w, k, scal[2]);
    for (int b = 0; b < KT_NBACKENDS; b++) {
      double got[3][2] = {{0}};
      kt_backend(b)->f32_rmoments(n, x, k, got[0]);
      kt_backend(b)->f32_rdotc(n, dy, x, NULL, k, got[1]);
      kt_backend(b)->f32_rdotc(n, dy, x, w, k, got[2]);
      for (int q = 0; q < 3; q++)
        for (int j = 0; j < 2; j++) {
          CHECK(near(got[q][j], ref[q][j], 1e-5 * sqrt((double)n)));
          CHECK(got[q][j] == scal[q][j]);
        }
    }
    /* the apply kernels: every w / c combination, in place too */
    for (int combo = 0; combo < 4; combo++) {
      const float *wp = combo & 1 ? w : NULL, *cp = combo & 2 ? dy : NULL;
      weft__kernels_scalar()->f32_vnorm(n, x, 0.5f, -50.0f, wp, cp, ys);
      for (int b = 0; b < KT_NBACKENDS; b++) {
        kt_backend(b)->f32_vnorm(n, x, 0.5f, -50.0f, wp, cp, y);
        for (size_t i = 0; i < n; i++) {
          double r = ((double)x[i] * 0.5 - 50.0) * (wp ? wp[i] : 1) + (cp ? cp[i] : 0);
          CHECK(near(y[i], r, 1e-5));
          CHECK(kt_same_f32(y[i], ys[i]));
        }
      }
      weft__kernels_scalar()->f32_vnorm_bwd(n, dy, x, wp, 0.7f, -0.01f, 1.0f, ys);
      for (int b = 0; b < KT_NBACKENDS; b++) {
        kt_backend(b)->f32_vnorm_bwd(n, dy, x, wp, 0.7f, -0.01f, 1.0f, y);
        for (size_t i = 0; i < n; i++) {
          double r = (double)dy[i] * (wp ? wp[i] : 1) * 0.7 + (double)x[i] * -0.01f + 1.0;
          CHECK(near(y[i], r, 1e-5));
          CHECK(kt_same_f32(y[i], ys[i]));
        }
      }
    }
    weft__kernels_scalar()->f32_vnorm_c(n, x, w, dy, ys);
    for (int b = 0; b < KT_NBACKENDS; b++) {
      memcpy(y, x, n * sizeof(float));
      kt_backend(b)->f32_vnorm_c(n, y, w, dy, y); /* in place */
      for (size_t i = 0; i < n; i++) CHECK(kt_same_f32(y[i], ys[i]) && near(y[i], (double)x[i] * w[i] + dy[i], 1e-6));
      kt_backend(b)->f32_vnorm_bwd_c(n, dy, x, w, dy, w, y);
      for (size_t i = 0; i < n; i++) CHECK(near(y[i], (double)dy[i] * w[i] + (double)x[i] * dy[i] + w[i], 1e-5));
    }
  }
  free(x), free(dy), free(w), free(y), free(ys);
}

static void test_column_kernels(void) {
  const size_t rows[] = {1, 2, 15, 16, 17, 40}, cols[] = {1, 3, 4, 5, 8, 13, 64, 65};
  for (size_t ri = 0; ri < 6; ri++)
    for (size_t ci = 0; ci < 8; ci++) {
      size_t r = rows[ri], c = cols[ci], ld = c + 3; /* a row stride wider than the row */
      float *x = malloc(r * ld * sizeof(float)), *dy = malloc(r * ld * sizeof(float)), *k = malloc(c * sizeof(float));
      double *s = calloc(c, sizeof(double)), *q = calloc(c, sizeof(double));
      double *ss = calloc(c, sizeof(double)), *qs = calloc(c, sizeof(double));
      for (size_t i = 0; i < r * ld; i++) x[i] = kt_randf(-3, 5), dy[i] = kt_randf(-1, 1);
      for (size_t j = 0; j < c; j++) k[j] = x[j];
      for (int pass = 0; pass < 2; pass++) {
        memset(ss, 0, c * sizeof(double)), memset(qs, 0, c * sizeof(double));
        if (pass == 0) weft__kernels_scalar()->f32_vmoments_rows(r, c, x, ld * 4, k, ss, qs);
        else weft__kernels_scalar()->f32_vdotc_rows(r, c, dy, ld * 4, x, ld * 4, k, ss, qs);
        for (int b = 0; b < KT_NBACKENDS; b++) {
          memset(s, 0, c * sizeof(double)), memset(q, 0, c * sizeof(double));
          if (pass == 0) kt_backend(b)->f32_vmoments_rows(r, c, x, ld * 4, k, s, q);
          else kt_backend(b)->f32_vdotc_rows(r, c, dy, ld * 4, x, ld * 4, k, s, q);
          for (size_t j = 0; j < c; j++) {
            double rs = 0, rq = 0;
            for (size_t e = 0; e < r; e++) {
              double d = (double)x[e * ld + j] - k[j], g = pass ? dy[e * ld + j] : d;
              rs += g, rq += pass ? g * d : d * d;
            }
            CHECK(near(s[j], rs, 1e-5) && near(q[j], rq, 1e-5));
            CHECK(s[j] == ss[j] && q[j] == qs[j]);
          }
        }
      }
      free(x), free(dy), free(k), free(s), free(q), free(ss), free(qs);
    }
}

/* ---- ops ---- */
static double at(const weft_tensor* t, const int64_t* idx) {
  int64_t off = 0;
  for (int d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
  char* p = (char*)weft_tensor_data_ptr(t) + off * (int64_t)weft_dtype_size(t->dtype);
  if (t->dtype == WEFT_FLOAT32) return *(float*)p;
  return *(double*)p;
}

/* flat row-major index -> multi-index */
static void unflat(const weft_tensor* t, int64_t i, int64_t* idx) {
  for (int d = t->ndim - 1; d >= 0; d--) idx[d] = i % t->sizes[d], i /= t->sizes[d];
}

static double flat_at(const weft_tensor* t, int64_t i) {
  int64_t idx[8];
  unflat(t, i, idx);
  return at(t, idx);
}

static weft_tensor* randn4(const int64_t* s, weft_dtype dt, bool cl, double shift) {
  weft_tensor* r = weft_randn(s, 4, dt, WEFT_DEVICE_CPU);
  weft_tensor* a = weft_add_scalar(r, weft_scalar_double(shift), weft_scalar_int(1));
  weft_tensor* c = weft_contiguous(a, cl ? WEFT_CHANNELS_LAST : WEFT_CONTIGUOUS_FORMAT);
  weft_tensor_release(r), weft_tensor_release(a);
  return c;
}

/* batch norm / group norm reference: per (image, group) or per channel stats */
static void check_normalized(const weft_tensor* x, const weft_tensor* y, int64_t group, bool per_channel, double tol) {
  const int64_t n = x->sizes[0], c = x->sizes[1], s = x->numel / (n * c), d = per_channel ? 1 : c / group;
  const int64_t units = per_channel ? c : n * group;
  for (int64_t u = 0; u < units; u++) {
    double sum = 0, sq = 0, cnt = 0;
    for (int64_t i = 0; i < x->numel; i++) {
      int64_t img = i / (c * s), ch = i / s % c;
      if (per_channel ? ch != u : img * group + ch / d != u) continue;
      sum += flat_at(x, i), cnt += 1;
    }
    double mean = sum / cnt;
    for (int64_t i = 0; i < x->numel; i++) {
      int64_t img = i / (c * s), ch = i / s % c;
      if (per_channel ? ch != u : img * group + ch / d != u) continue;
      sq += (flat_at(x, i) - mean) * (flat_at(x, i) - mean);
    }
    double rstd = 1 / sqrt(sq / cnt + 1e-5);
    for (int64_t i = 0; i < x->numel; i++) {
      int64_t img = i / (c * s), ch = i / s % c;
      if (per_channel ? ch != u : img * group + ch / d != u) continue;
      CHECK(near(flat_at(y, i), (flat_at(x, i) - mean) * rstd, tol));
    }
  }
}

static bool same_bits(const weft_tensor* a, const weft_tensor* b) {
  if (a->numel != b->numel) return false;
  for (int64_t i = 0; i < a->numel; i++)
    if (flat_at(a, i) != flat_at(b, i)) return false;
  return true;
}

/* the three backward ops at 1 and 3 threads: the same bits */
static void check_backward_threads(const weft_tensor* x, const weft_tensor3* bn, const weft_tensor3* gn,
                                   const weft_tensor3* ln) {
  const bool mask[3] = {true, true, true};
  weft_tensor* gy = weft_randn(x->sizes, x->ndim, x->dtype, WEFT_DEVICE_CPU);
  weft_tensor* w = weft_randn(&x->sizes[1], 1, x->dtype, WEFT_DEVICE_CPU);
  weft_tensor* lw = weft_randn(&x->sizes[2], 2, x->dtype, WEFT_DEVICE_CPU);
  weft_tensor3 r[3][2];
  for (int th = 0; th < 2; th++) {
    weft_set_num_threads(th ? 3 : 1);
    r[0][th] = weft_native_batch_norm_backward(gy, x, w, NULL, NULL, bn->t[1], bn->t[2], true, 1e-5, mask, 3);
    r[1][th] = weft_native_group_norm_backward(gy, x, gn->t[1], gn->t[2], w, x->sizes[0], x->sizes[1],
                                               x->sizes[2] * x->sizes[3], 4, mask, 3);
    r[2][th] = weft_native_layer_norm_backward(gy, x, &x->sizes[2], 2, ln->t[1], ln->t[2], lw, NULL, mask, 3);
  }
  weft_set_num_threads(1);
  for (int q = 0; q < 3; q++) {
    CHECK(r[q][0].status == WEFT_OK && r[q][1].status == WEFT_OK);
    for (int i = 0; i < 3 && r[q][0].status == WEFT_OK && r[q][1].status == WEFT_OK; i++)
      CHECK(same_bits(r[q][0].t[i], r[q][1].t[i]));
    weft_tensor3_release(r[q][0]), weft_tensor3_release(r[q][1]);
  }
  weft_tensor_release(gy), weft_tensor_release(w), weft_tensor_release(lw);
}

static void test_forward_ops(void) {
  /* large enough for several tasks: 128 planes of 576, 4608 rows of 16 channels */
  const int64_t sz[4] = {8, 16, 24, 24};
  for (int cl = 0; cl < 2; cl++) {
    weft_tensor* x = randn4(sz, WEFT_FLOAT32, cl, 50.0);
    weft_tensor *rm = weft_full((int64_t[]){16}, 1, 0.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
    weft_tensor *rv = weft_full((int64_t[]){16}, 1, 1.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
    weft_tensor3 r1[2], g1[2];
    for (int th = 0; th < 2; th++) {
      weft_set_num_threads(th ? 3 : 1);
      r1[th] = weft_native_batch_norm(x, NULL, NULL, rm, rv, true, 0.1, 1e-5);
      g1[th] = weft_native_group_norm(x, NULL, NULL, 8, 16, 576, 4, 1e-5);
      CHECK(r1[th].status == WEFT_OK && g1[th].status == WEFT_OK);
    }
    weft_set_num_threads(1);
    if (r1[0].t[0] && r1[1].t[0] && g1[0].t[0] && g1[1].t[0]) {
      CHECK(same_bits(r1[0].t[0], r1[1].t[0]) && same_bits(g1[0].t[0], g1[1].t[0]));
      CHECK(weft_tensor_is_contiguous(r1[0].t[0], cl ? WEFT_CHANNELS_LAST : WEFT_CONTIGUOUS_FORMAT));
      CHECK(weft_tensor_is_contiguous(g1[0].t[0], cl ? WEFT_CHANNELS_LAST : WEFT_CONTIGUOUS_FORMAT));
      check_normalized(x, r1[0].t[0], 1, true, 2e-4);
      check_normalized(x, g1[0].t[0], 4, false, 2e-4);
      CHECK_SIZES(g1[0].t[1], 8, 4);
      /* twice updated: 0.19 of the mean (about 50) */
      CHECK(near(flat_at(rm, 0), 0.19 * flat_at(r1[0].t[1], 0), 1e-3));
    }
    /* layer norm over the last two dims: rows of 576, contiguous output */
    weft_tensor3 l = weft_native_layer_norm(x, (int64_t[]){24, 24}, 2, NULL, NULL, 1e-5);
    CHECK(l.status == WEFT_OK);
    if (l.t[0]) {
      CHECK(l.t[0]->is_contiguous);
      CHECK_SIZES(l.t[1], 8, 16, 1, 1);
      weft_tensor* xv = weft_reshape(x, (int64_t[]){128, 1, 576}, 3);
      weft_tensor* yv = weft_reshape(l.t[0], (int64_t[]){128, 1, 576}, 3);
      check_normalized(xv, yv, 1, false, 2e-4);
      weft_tensor_release(xv), weft_tensor_release(yv);
    }
    if (l.t[0] && r1[0].t[0] && g1[0].t[0]) check_backward_threads(x, &r1[0], &g1[0], &l);
    for (int th = 0; th < 2; th++) weft_tensor3_release(r1[th]), weft_tensor3_release(g1[th]);
    weft_tensor3_release(l);
    weft_tensor_release(x), weft_tensor_release(rm), weft_tensor_release(rv);
  }
}

/* sum(y * g) of op(x, w, b) in float64, for the central differences */
typedef weft_tensor* (*norm_fn)(const weft_tensor* x, const weft_tensor* w, const weft_tensor* b);
static weft_tensor* bn_fn(const weft_tensor* x, const weft_tensor* w, const weft_tensor* b) {
  return weft_batch_norm(x, w, b, NULL, NULL, true, 0.1, 1e-5, true);
}
static weft_tensor* gn_fn(const weft_tensor* x, const weft_tensor* w, const weft_tensor* b) {
  return weft_group_norm(x, 2, w, b, 1e-5, true);
}
static weft_tensor* ln_fn(const weft_tensor* x, const weft_tensor* w, const weft_tensor* b) {
  return weft_layer_norm(x, (int64_t[]){4}, 1, w, b, 1e-5, true);
}

static double objective(norm_fn f, const weft_tensor* x, const weft_tensor* w, const weft_tensor* b,
                        const weft_tensor* g) {
  weft_tensor* y = f(x, w, b);
  weft_tensor* p = y ? weft_mul(y, g) : NULL;
  weft_tensor* s = p ? weft_sum(p, (weft_dtype)-1) : NULL;
  double v = s ? flat_at(s, 0) : NAN;
  weft_tensor_release(y), weft_tensor_release(p), weft_tensor_release(s);
  return v;
}

static void nudge(weft_tensor* t, int64_t i, double h) {
  int64_t idx[8], off = 0;
  unflat(t, i, idx);
  for (int d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
  ((double*)weft_tensor_data_ptr(t))[off] += h;
}

/* each gradient of sum(f(x, w, b) * g) against central differences */
static void check_grads(norm_fn f, bool cl, const int64_t* xs, int64_t c) {
  weft_tensor* x = randn4(xs, WEFT_FLOAT64, cl, 0.3);
  weft_tensor* w = weft_randn(&c, 1, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor* b = weft_randn(&c, 1, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor* g = weft_randn(xs, 4, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor* leaf[3] = {x, w, b};
  for (int i = 0; i < 3; i++) weft_set_requires_grad(leaf[i], true);
  weft_tensor* y = f(x, w, b);
  weft_tensor* p = y ? weft_mul(y, g) : NULL;
  weft_tensor* s = p ? weft_sum(p, (weft_dtype)-1) : NULL;
  CHECK(s && weft_backward(&s, NULL, 1, false, false) == WEFT_OK);
  for (int i = 0; i < 3; i++) weft_set_requires_grad(leaf[i], false);
  for (int q = 0; q < 3 && s; q++) {
    weft_tensor* gr = weft_tensor_grad(leaf[q]);
    CHECK(gr != NULL);
    for (int64_t i = 0; gr && i < leaf[q]->numel; i += 1 + leaf[q]->numel / 13) {
      nudge(leaf[q], i, 1e-6);
      double hi = objective(f, x, w, b, g);
      nudge(leaf[q], i, -2e-6);
      double lo = objective(f, x, w, b, g);
      nudge(leaf[q], i, 1e-6);
      CHECK(near(flat_at(gr, i), (hi - lo) / 2e-6, 1e-5));
    }
    weft_tensor_release(gr);
  }
  weft_tensor_release(y), weft_tensor_release(p), weft_tensor_release(s);
  for (int i = 0; i < 3; i++) weft_tensor_release(leaf[i]);
  weft_tensor_release(g);
}

/* q = sum(dx * v) + sum(dw * u) of the first-order gradients of sum(f * g) (create_graph: recorded) */
static double first_order_q(norm_fn f, weft_tensor* x, weft_tensor* w, const weft_tensor* g, const weft_tensor* v,
                            const weft_tensor* u, bool create, weft_tensor** qout) {
  weft_tensor* y = f(x, w, NULL);
  weft_tensor* p = y ? weft_mul(y, g) : NULL;
  weft_tensor* s = p ? weft_sum(p, (weft_dtype)-1) : NULL;
  weft_tensor* in[2] = {x, w};
  weft_tensor* gr[2] = {NULL, NULL};
  double r = NAN;
  if (s && weft_autograd_grad(&s, NULL, 1, in, 2, create, create, false, gr) == WEFT_OK) {
    weft_tensor *a = weft_mul(gr[0], v), *b = weft_mul(gr[1], u);
    weft_tensor *sa = weft_sum(a, (weft_dtype)-1), *sb = weft_sum(b, (weft_dtype)-1);
    weft_tensor* q = weft_add(sa, sb, weft_scalar_int(1));
    r = flat_at(q, 0);
    if (qout) *qout = weft_tensor_retain(q);
    weft_tensor_release(a), weft_tensor_release(b), weft_tensor_release(sa), weft_tensor_release(sb);
    weft_tensor_release(q);
  }
  weft_tensor_release(gr[0]), weft_tensor_release(gr[1]);
  weft_tensor_release(y), weft_tensor_release(p), weft_tensor_release(s);
  return r;
}

/* createGraph: the second derivative d q / d x against central differences of q */
static void check_double_backward(norm_fn f, bool cl, const int64_t* xs, int64_t c) {
  weft_tensor* x = randn4(xs, WEFT_FLOAT64, cl, 0.3);
  weft_tensor* w = weft_randn(&c, 1, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor* g = weft_randn(xs, 4, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor* v = weft_randn(xs, 4, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor* u = weft_randn(&c, 1, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_set_requires_grad(x, true), weft_set_requires_grad(w, true);
  weft_tensor *q = NULL, *hx = NULL;
  first_order_q(f, x, w, g, v, u, true, &q);
  CHECK(q && weft_autograd_grad(&q, NULL, 1, &x, 1, false, false, false, &hx) == WEFT_OK);
  for (int64_t i = 0; hx && i < x->numel; i += 1 + x->numel / 11) {
    nudge(x, i, 1e-5);
    double hi = first_order_q(f, x, w, g, v, u, false, NULL);
    nudge(x, i, -2e-5);
    double lo = first_order_q(f, x, w, g, v, u, false, NULL);
    nudge(x, i, 1e-5);
    CHECK(near(flat_at(hx, i), (hi - lo) / 2e-5, 1e-4));
  }
  weft_tensor_release(q), weft_tensor_release(hx);
  weft_tensor* all[5] = {x, w, g, v, u};
  for (int i = 0; i < 5; i++) weft_tensor_release(all[i]);
}

static void test_gradients(void) {
  const int64_t xs[4] = {3, 4, 3, 4};
  for (int cl = 0; cl < 2; cl++) {
    check_grads(bn_fn, cl, xs, 4);
    check_grads(gn_fn, cl, xs, 4);
    check_double_backward(bn_fn, cl, xs, 4);
    check_double_backward(gn_fn, cl, xs, 4);
  }
  check_grads(ln_fn, false, xs, 4);
  check_double_backward(ln_fn, false, xs, 4);
}

static void test_errors(void) {
  const int64_t sz[4] = {2, 6, 3, 4};
  weft_tensor* x = weft_randn(sz, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* i64 = weft_to_dtype(x, WEFT_INT64, false);
  weft_tensor* v5 = weft_full((int64_t[]){5}, 1, 0.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* r = weft_batch_norm(x, NULL, NULL, v5, v5, true, 0.1, 1e-5, true);
  CHECK(!r);
  CHECK_ERROR_HAS("batch_norm: running_mean should contain 6 elements not 5");
  r = weft_batch_norm(i64, NULL, NULL, NULL, NULL, true, 0.1, 1e-5, true);
  CHECK(!r);
  CHECK_ERROR_HAS("\"batch_norm\" not implemented for 'int64'");
  r = weft_group_norm(x, 4, NULL, NULL, 1e-5, true);
  CHECK(!r);
  CHECK_ERROR_HAS("group_norm: Expected number of channels in input to be divisible by num_groups");
  r = weft_layer_norm(x, (int64_t[]){3, 5}, 2, NULL, NULL, 1e-5, true);
  CHECK(!r);
  CHECK_ERROR_HAS("expected input with shape [*, 3, 5], but got input of size[2, 6, 3, 4]");
  weft_tensor3 t = weft_native_group_norm(x, NULL, NULL, 2, 6, 11, 3, 1e-5);
  CHECK(t.status != WEFT_OK && !t.t[0]);
  CHECK_ERROR_HAS("native_group_norm: Expected input.numel() == N * C * HxW");
  t = weft_native_group_norm(x, NULL, NULL, INT64_MAX / 2, 6, 12, 3, 1e-5); /* N * C * HxW overflows */
  CHECK(t.status != WEFT_OK && !t.t[0]);
  CHECK_ERROR_HAS("native_group_norm: Expected input.numel() == N * C * HxW");
  const bool mask[3] = {true, true, true};
  weft_tensor* meta = weft_empty((int64_t[]){2, 3}, 2, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  t = weft_native_group_norm_backward(x, x, meta, meta, NULL, 2, 6, 12, 3, mask, 3);
  CHECK(t.status != WEFT_OK);
  CHECK_ERROR_HAS("native_group_norm_backward: expected all tensors to be on the same device");
  weft_tensor_release(meta);
  t = weft_native_batch_norm_backward(x, x, NULL, NULL, NULL, NULL, NULL, true, 1e-5, mask, 3);
  CHECK(t.status != WEFT_OK);
  CHECK_ERROR_HAS("save_mean and save_invstd must be defined in training mode");
  weft_tensor_release(x), weft_tensor_release(i64), weft_tensor_release(v5);
}

/* ---- allocation failures: the Nth allocation fails, for N = 1, 2, ... until
 * the run completes; every failed run is a clean OutOfMemory, nothing left ---- */
/* forward and backward of one op (which: 0 batch_norm train, 1 eval, 2 group_norm, 3 layer_norm) */
static weft_tensor* fault_run(int which, weft_tensor* x, weft_tensor* w, weft_tensor* rm, weft_tensor* rv) {
  weft_tensor* y = which < 2   ? weft_batch_norm(x, w, NULL, rm, rv, which == 0, 0.1, 1e-5, true)
                   : which == 2 ? weft_group_norm(x, 2, w, NULL, 1e-5, true)
                                : weft_layer_norm(x, &x->sizes[3], 1, NULL, NULL, 1e-5, true);
  weft_tensor* s = y ? weft_sum(y, (weft_dtype)-1) : NULL;
  weft_tensor* in[2] = {x, w};
  weft_tensor* g[2] = {NULL, NULL};
  weft_status st =
      s ? weft_autograd_grad(&s, NULL, 1, in, which == 3 ? 1 : 2, false, false, false, g) : weft_last_status();
  weft_tensor_release(y), weft_tensor_release(s), weft_tensor_release(g[1]);
  if (st != WEFT_OK) weft_tensor_release(g[0]);
  return st == WEFT_OK ? g[0] : NULL;
}

typedef struct {
  int which;
  weft_tensor *x, *w, *rm, *rv;
} fault_ctx;

static bool fault_ok(void* ctx) {
  const fault_ctx* c = ctx;
  weft_tensor* r = fault_run(c->which, c->x, c->w, c->rm, c->rv);
  weft_tensor_release(r);
  return r != NULL;
}

static void test_allocation_failures(void) {
  const int64_t sz[4] = {2, 4, 3, 5}, c = 4;
  for (int cl = 0; cl < 2; cl++)
    for (int which = 0; which < 4; which++) {
      weft_tensor* x = randn4(sz, WEFT_FLOAT32, cl, 0.0);
      weft_tensor* w = weft_randn(&c, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
      weft_tensor* rm = weft_full(&c, 1, 0.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
      weft_tensor* rv = weft_full(&c, 1, 1.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
      weft_set_requires_grad(x, true), weft_set_requires_grad(w, true);
      check_fails_cleanly(fault_ok, &(fault_ctx){which, x, w, rm, rv}, 2000);
      weft_tensor* all[4] = {x, w, rm, rv};
      for (int i = 0; i < 4; i++) weft_tensor_release(all[i]);
    }
}

int main(void) {
  weft_manual_seed(23);
  test_row_kernels();
  test_column_kernels();
  test_forward_ops();
  test_gradients();
  test_errors();
  test_allocation_failures();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
