/* Issue 24's ops: embedding (the row gather, the backward's deterministic
 * row sums, padding_idx, scale_grad_by_freq, embedding_renorm_),
 * rms_norm (the fused forward and the backward op against float64
 * references) and index_copy_, at 1 and 3 threads (the same bits), their
 * errors, a clean OutOfMemory at every failing allocation, and no leaks.
 * PyTorch's values are replayed by tests/js/transformer-fixtures.test.mjs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "kernels/kernels.h"
#include "ops/cpu/normalization.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/alloc.h"
#include "weft/autograd.h"
#include "weft/parallel.h"

static bool near(double got, double want, double tol) { return fabs(got - want) <= tol * (1 + fabs(want)); }

static weft_tensor* ids(const int64_t* sizes, int nd, weft_dtype dt, int64_t hi, unsigned seed) {
  weft_tensor* t = weft_empty(sizes, nd, dt, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  srand(seed);
  for (int64_t i = 0; i < t->numel; i++) {
    int64_t v = rand() % hi;
    if (dt == WEFT_INT32) ((int32_t*)weft_tensor_data_ptr(t))[i] = (int32_t)v;
    else ((int64_t*)weft_tensor_data_ptr(t))[i] = v;
  }
  return t;
}
static int64_t id_at(const weft_tensor* t, int64_t i) {
  return t->dtype == WEFT_INT32 ? ((int32_t*)weft_tensor_data_ptr(t))[i] : ((int64_t*)weft_tensor_data_ptr(t))[i];
}
static const float* f32(const weft_tensor* t) { return weft_tensor_data_ptr(t); }

static bool same_bits(const weft_tensor* a, const weft_tensor* b) {
  return a && b && a->numel == b->numel &&
         !memcmp(weft_tensor_data_ptr(a), weft_tensor_data_ptr(b), (size_t)a->numel * weft_dtype_size(a->dtype));
}

/* ---- embedding ---- */
static void test_embedding_forward(void) {
  const int64_t ws[2] = {37, 50}, is[2] = {3, 400};
  weft_tensor* wt = weft_randn(ws, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* w = weft_t(wt); /* [50, 37], rows not contiguous: gathered from a contiguous copy */
  weft_tensor* wc = weft_contiguous(w, WEFT_CONTIGUOUS_FORMAT);
  for (int dt = 0; dt < 2; dt++) {
    weft_tensor* idx = ids(is, 2, dt ? WEFT_INT32 : WEFT_INT64, 50, 5 + dt);
    weft_tensor* r[2];
    for (int th = 0; th < 2; th++) {
      weft_set_num_threads(th ? 3 : 1);
      r[th] = weft_embedding(th ? w : wc, idx, -1, false, false);
    }
    weft_set_num_threads(1);
    CHECK(r[0] && r[1] && same_bits(r[0], r[1]));
    if (r[0]) {
      CHECK_SIZES(r[0], 3, 400, 50 - 13);
      bool ok = true;
      for (int64_t i = 0; i < idx->numel; i++)
        ok = ok && !memcmp(f32(r[0]) + i * 37, f32(wc) + id_at(idx, i) * 37, 37 * sizeof(float));
      CHECK(ok);
    }
    weft_tensor_release(r[0]), weft_tensor_release(r[1]), weft_tensor_release(idx);
  }
  weft_tensor_release(wt), weft_tensor_release(w), weft_tensor_release(wc);
}

/* the backward against a float64 sum in position order */
static void test_embedding_backward(void) {
  const int64_t is[2] = {4, 300}, gs[3] = {4, 300, 24}, nw = 40, pad = 7;
  weft_tensor* idx = ids(is, 2, WEFT_INT64, nw, 11);
  weft_tensor* g = weft_randn(gs, 3, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  for (int sgf = 0; sgf < 2; sgf++) {
    weft_tensor* r[2];
    for (int th = 0; th < 2; th++) {
      weft_set_num_threads(th ? 3 : 1);
      r[th] = weft_embedding_dense_backward(g, idx, nw, pad, sgf);
    }
    weft_set_num_threads(1);
    CHECK(r[0] && same_bits(r[0], r[1]));
    if (!r[0]) continue;
    CHECK_SIZES(r[0], 40, 24);
    double* ref = calloc(nw * 24, sizeof(double));
    int64_t cnt[40] = {0};
    for (int64_t i = 0; i < idx->numel; i++) cnt[id_at(idx, i)]++;
    for (int64_t i = 0; i < idx->numel; i++) {
      int64_t k = id_at(idx, i);
      if (k == pad) continue;
      for (int e = 0; e < 24; e++) ref[k * 24 + e] += f32(g)[i * 24 + e] / (sgf ? (double)cnt[k] : 1.0);
    }
    bool ok = true;
    for (int64_t e = 0; e < nw * 24; e++) ok = ok && near(f32(r[0])[e], ref[e], 1e-5);
    CHECK(ok);
    for (int e = 0; e < 24; e++) CHECK(f32(r[0])[pad * 24 + e] == 0.0f);
    free(ref);
    weft_tensor_release(r[0]), weft_tensor_release(r[1]);
  }
  weft_tensor_release(idx), weft_tensor_release(g);
}

static void test_embedding_renorm(void) {
  const int64_t ws[2] = {6, 4}, is[1] = {4};
  weft_tensor* w = weft_randn(ws, 2, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor* before = weft_clone(w, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* idx = weft_empty(is, 1, WEFT_INT64, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  int64_t* ip = weft_tensor_data_ptr(idx);
  ip[0] = 1, ip[1] = 3, ip[2] = 1, ip[3] = 0;
  CHECK(weft_embedding_renorm_(w, idx, 0.5, 2.0) == WEFT_OK);
  const double *a = weft_tensor_data_ptr(before), *b = weft_tensor_data_ptr(w);
  for (int k = 0; k < 6; k++) {
    double n = 0;
    for (int e = 0; e < 4; e++) n += a[k * 4 + e] * a[k * 4 + e];
    n = sqrt(n);
    bool touched = k == 0 || k == 1 || k == 3;
    double s = touched && n > 0.5 ? 0.5 / (n + 1e-7) : 1.0;
    for (int e = 0; e < 4; e++) CHECK(near(b[k * 4 + e], a[k * 4 + e] * s, 1e-12));
  }
  weft_tensor_release(w), weft_tensor_release(before), weft_tensor_release(idx);
}

static void test_embedding_errors(void) {
  const int64_t ws[2] = {5, 3}, is[1] = {2};
  weft_tensor* w = weft_randn(ws, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* bad = weft_full(is, 1, 5.0, WEFT_INT64, WEFT_DEVICE_CPU);
  weft_tensor* neg = weft_full(is, 1, -1.0, WEFT_INT32, WEFT_DEVICE_CPU);
  weft_tensor* fl = weft_full(is, 1, 1.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(!weft_embedding(w, bad, -1, false, false));
  CHECK_ERROR_HAS("index out of range in self");
  CHECK(!weft_embedding(w, neg, -1, false, false));
  CHECK_ERROR_HAS("index out of range in self");
  CHECK(!weft_embedding(w, fl, -1, false, false));
  CHECK_ERROR_HAS("scalar types: int64, int32; but got float32 instead (while checking arguments for embedding)");
  CHECK(!weft_embedding(fl, bad, -1, false, false));
  CHECK_ERROR_HAS("'weight' must be 2-D");
  CHECK(weft_embedding_renorm_(fl, bad, 1.0, 2.0) != WEFT_OK);
  CHECK_ERROR_HAS("Expected 2-dimensional tensor, but got 1-dimensional tensor for argument #1 'self'");
  weft_tensor_release(w), weft_tensor_release(bad), weft_tensor_release(neg), weft_tensor_release(fl);
}

/* ---- rms_norm ---- */
static void rms_reference(const float* x, const float* w, const float* gy, int64_t m, int64_t k, double eps,
                          double* y, double* gx, double* gw) {
  memset(gw, 0, sizeof(double) * (size_t)k);
  for (int64_t r = 0; r < m; r++) {
    const float *xr = x + r * k, *gr = gy + r * k;
    double ss = 0, dot = 0;
    for (int64_t e = 0; e < k; e++) ss += (double)xr[e] * xr[e], dot += (double)gr[e] * w[e] * xr[e];
    double rs = 1 / sqrt(ss / (double)k + eps);
    for (int64_t e = 0; e < k; e++) {
      y[r * k + e] = xr[e] * rs * w[e];
      gx[r * k + e] = rs * gr[e] * w[e] - xr[e] * rs * rs * rs * dot / (double)k;
      gw[e] += gr[e] * xr[e] * rs;
    }
  }
}

static void test_rms_norm(void) {
  const int64_t m = 96, k = 300, xs[2] = {m, k};
  weft_tensor *x = weft_randn(xs, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU), *w = weft_randn(&k, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* gy = weft_randn(xs, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor2 f[2];
  weft_tensor3 b[2];
  const bool mask[2] = {true, true};
  for (int th = 0; th < 2; th++) {
    weft_set_num_threads(th ? 3 : 1);
    f[th] = weft_op__fused_rms_norm(x, &k, 1, w, NAN);
    b[th] = f[th].t[1] ? weft_op__rms_norm_backward(gy, x, &k, 1, f[th].t[1], w, mask, 2)
                       : (weft_tensor3){{NULL, NULL, NULL}, WEFT_INTERNAL};
  }
  weft_set_num_threads(1);
  CHECK(f[0].t[0] && f[1].t[0] && b[0].status == WEFT_OK && b[1].status == WEFT_OK);
  if (b[0].status == WEFT_OK && b[1].status == WEFT_OK) {
    CHECK(same_bits(f[0].t[0], f[1].t[0]) && same_bits(b[0].t[0], b[1].t[0]) && same_bits(b[0].t[1], b[1].t[1]));
    CHECK(b[0].t[2] == NULL);
    CHECK_SIZES(f[0].t[1], 96, 1);
    double *y = malloc(sizeof(double) * m * k), *gx = malloc(sizeof(double) * m * k), gw[300];
    rms_reference(f32(x), f32(w), f32(gy), m, k, 1.1920928955078125e-07, y, gx, gw);
    bool ok = true;
    for (int64_t i = 0; i < m * k; i++) ok = ok && near(f32(f[0].t[0])[i], y[i], 1e-5) && near(f32(b[0].t[0])[i], gx[i], 1e-4);
    for (int64_t e = 0; e < k; e++) ok = ok && near(f32(b[0].t[1])[e], gw[e], 1e-4);
    CHECK(ok);
    free(y), free(gx);
  }
  for (int th = 0; th < 2; th++) weft_tensor_release(f[th].t[0]), weft_tensor_release(f[th].t[1]), weft_tensor3_release(b[th]);
  /* errors: 2.4's shape checks, no integer input */
  const int64_t bad_ns[1] = {7};
  CHECK(!weft_rms_norm(x, bad_ns, 1, NULL, NAN));
  CHECK_ERROR_HAS("Given normalized_shape=[7], expected input with shape [*, 7], but got input of size[96, 300]");
  CHECK(!weft_rms_norm(x, &k, 1, gy, NAN));
  CHECK_ERROR_HAS("Expected weight to be of same shape as normalized_shape");
  weft_tensor* xi = weft_full(xs, 2, 1.0, WEFT_INT64, WEFT_DEVICE_CPU);
  CHECK(!weft_rms_norm(xi, &k, 1, NULL, NAN));
  CHECK_ERROR_HAS("\"rms_norm\" not implemented for 'int64'");
  weft_tensor_release(xi), weft_tensor_release(x), weft_tensor_release(w), weft_tensor_release(gy);
}

/* the driver on the scalar backend and the best one: the same values within rounding (their sums of squares
 * may group differently) */
static void test_rms_backends(void) {
  enum { M = 7, K = 133 };
  float x[M * K], w[K], y0[M * K], y1[M * K];
  double r0[M], r1[M];
  srand(3);
  for (int i = 0; i < M * K; i++) x[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  for (int i = 0; i < K; i++) w[i] = (float)rand() / (float)RAND_MAX + 0.5f;
  CHECK(weft__rms_norm_forward(weft__kernels_scalar(), M, K, WEFT_FLOAT32, x, 1e-6, w, y0, r0) == WEFT_OK);
  CHECK(weft__rms_norm_forward(weft__kernels(), M, K, WEFT_FLOAT32, x, 1e-6, w, y1, r1) == WEFT_OK);
  bool ok = true;
  for (int i = 0; i < M * K; i++) ok = ok && near(y0[i], y1[i], 1e-6);
  for (int i = 0; i < M; i++) ok = ok && near(r0[i], r1[i], 1e-6);
  CHECK(ok);
}

/* ---- index_copy_ ---- */
static void test_index_copy(void) {
  const int64_t s[2] = {3, 5}, ss[2] = {3, 2}, is[1] = {2};
  weft_tensor* x = weft_full(s, 2, 0.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* src = weft_arange(0, 6, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* src2 = weft_reshape(src, ss, 2);
  weft_tensor* idx = weft_full(is, 1, 4.0, WEFT_INT64, WEFT_DEVICE_CPU); /* [4, 4]: the last write wins */
  CHECK(weft_index_copy_(x, 1, idx, src2) == WEFT_OK);
  for (int r = 0; r < 3; r++) CHECK(f32(x)[r * 5 + 4] == (float)(r * 2 + 1) && f32(x)[r * 5 + 3] == 0.0f);
  ((int64_t*)weft_tensor_data_ptr(idx))[1] = 5;
  CHECK(weft_index_copy_(x, 1, idx, src2) != WEFT_OK);
  CHECK_ERROR_HAS("index_copy_(): index 5 is out of bounds for dimension 1 with size 5");
  CHECK(f32(x)[4] == 1.0f); /* checked before anything moved */
  CHECK(weft_index_copy_(x, 0, idx, src2) != WEFT_OK);
  CHECK_ERROR_HAS("Source/destination tensor must have same slice shapes. Destination slice shape: [5] at dimension 0 "
                  "and source slice shape: [2] at dimension 0.");
  weft_tensor_release(x), weft_tensor_release(src), weft_tensor_release(src2), weft_tensor_release(idx);
}

/* ---- allocation failures: every failing allocation gives a clean OutOfMemory and leaves nothing ---- */
/* the gradient of sum(op(...)) for the first of in[] (the others' released) */
static weft_tensor* fault_run(int which, weft_tensor* const* in) {
  const int64_t ns = 6;
  weft_tensor* y = which == 0   ? weft_embedding(in[1], in[0], 1, true, false)
                   : which == 1 ? weft_rms_norm(in[0], &ns, 1, in[1], NAN)
                                : weft_index_copy(in[0], 0, in[1], in[2]);
  weft_tensor* s = y ? weft_sum(y, (weft_dtype)-1) : NULL;
  weft_tensor* diff[2] = {in[0], which == 2 ? in[2] : in[1]};
  weft_tensor* g[2] = {NULL, NULL};
  int first = which == 0 ? 1 : 0; /* embedding: the weight (the ids take none) */
  weft_status st = s ? weft_autograd_grad(&s, NULL, 1, diff + first, 2 - first, false, false, false, g)
                     : weft_last_status();
  weft_tensor_release(y), weft_tensor_release(s), weft_tensor_release(g[1]);
  if (st != WEFT_OK) weft_tensor_release(g[0]);
  return st == WEFT_OK ? g[0] : NULL;
}

typedef struct {
  int which;
  weft_tensor* const* in;
} fault_ctx;

static bool fault_ok(void* ctx) {
  const fault_ctx* c = ctx;
  weft_tensor* r = fault_run(c->which, c->in);
  weft_tensor_release(r);
  return r != NULL;
}

static void test_allocation_failures(void) {
  const int64_t is[2] = {2, 3}, ws[2] = {5, 6}, xs[2] = {4, 6}, ns = 6, src[2] = {2, 6};
  for (int which = 0; which < 3; which++) {
    weft_tensor* in[3];
    if (which == 0) in[0] = ids(is, 2, WEFT_INT64, 5, 9), in[1] = weft_randn(ws, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
    if (which == 1) in[0] = weft_randn(xs, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU), in[1] = weft_randn(&ns, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
    if (which == 2) in[0] = weft_randn(xs, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU), in[1] = ids(&src[0], 1, WEFT_INT64, 4, 2);
    in[2] = weft_randn(src, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
    for (int i = 0; i < 3; i++)
      if (in[i]->dtype == WEFT_FLOAT32) weft_set_requires_grad(in[i], true);
    check_fails_cleanly(fault_ok, &(fault_ctx){which, in}, 2000);
    for (int i = 0; i < 3; i++) weft_tensor_release(in[i]);
  }
}

int main(void) {
  weft_manual_seed(24);
  test_embedding_forward();
  test_embedding_backward();
  test_embedding_renorm();
  test_embedding_errors();
  test_rms_norm();
  test_rms_backends();
  test_index_copy();
  test_allocation_failures();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
