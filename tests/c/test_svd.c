/* torch.linalg.svd (issue 25): the one-sided Jacobi driver
 * (src/ops/cpu/svd.c) on tall, square and wide matrices, reduced and full,
 * float32 and float64, against reconstruction (U S Vh = A), orthonormal U
 * and V, descending S, and known singular values (cond 1e12, rank-deficient,
 * repeated, zero); the ops' shapes, strides, empty inputs and errors; the
 * gradient against central differences (a sign-invariant loss, and
 * svdvals); a clean OutOfMemory at every failing allocation; no leaks.
 * PyTorch's values are replayed by tests/js/svd-fixtures.test.mjs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "ops/cpu/svd.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/alloc.h"
#include "weft/autograd.h"

static double frand(void) { return (double)rand() / RAND_MAX * 2 - 1; }

/* q (n x n row-major): orthonormal columns, Gram-Schmidt (twice) of a random matrix */
static void random_orthogonal(double* q, int64_t n) {
  for (int64_t i = 0; i < n * n; i++) q[i] = frand();
  for (int64_t j = 0; j < n; j++)
    for (int pass = 0; pass < 2; pass++) {
      for (int64_t c = 0; c < j; c++) {
        double d = 0;
        for (int64_t i = 0; i < n; i++) d += q[i * n + c] * q[i * n + j];
        for (int64_t i = 0; i < n; i++) q[i * n + j] -= d * q[i * n + c];
      }
      double nn = 0;
      for (int64_t i = 0; i < n; i++) nn += q[i * n + j] * q[i * n + j];
      for (int64_t i = 0; i < n; i++) q[i * n + j] /= sqrt(nn);
    }
}

/* a (m x n) = P[:, :k] diag(s) Q[:, :k]^T for random orthogonal P, Q */
static void with_values(double* a, int64_t m, int64_t n, const double* s) {
  int64_t k = m < n ? m : n;
  double *p = malloc(sizeof(double) * (size_t)(m * m)), *q = malloc(sizeof(double) * (size_t)(n * n));
  random_orthogonal(p, m);
  random_orthogonal(q, n);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double v = 0;
      for (int64_t l = 0; l < k; l++) v += p[i * m + l] * s[l] * q[j * n + l];
      a[i * n + j] = v;
    }
  free(p), free(q);
}

static double at(const void* p, weft_dtype t, int64_t i) {
  return t == WEFT_FLOAT64 ? ((const double*)p)[i] : ((const float*)p)[i];
}

typedef struct {
  double recon, orth_u, orth_v, value; /* the worst errors, relative to max S */
  bool descending;
} svd_errors;

/* max |columns^T columns - I| of c (rows x cols, element (i, j) at i * rs + j * cs) */
static double orthogonality(const void* c, weft_dtype t, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  double worst = 0;
  for (int64_t a = 0; a < cols; a++)
    for (int64_t b = 0; b < cols; b++) {
      double d = 0;
      for (int64_t i = 0; i < rows; i++) d += at(c, t, i * rs + a * cs) * at(c, t, i * rs + b * cs);
      worst = fmax(worst, fabs(d - (a == b)));
    }
  return worst;
}

static svd_errors check_svd(weft_dtype t, int64_t m, int64_t n, const double* a, const double* want, bool full) {
  int64_t k = m < n ? m : n, uc = full ? m : k, vr = full ? n : k;
  size_t es = t == WEFT_FLOAT64 ? 8 : 4;
  char *in = malloc(es * (size_t)(m * n)), *s = malloc(es * (size_t)k);
  char *u = malloc(es * (size_t)(m * uc)), *v = malloc(es * (size_t)(n * vr));
  for (int64_t i = 0; i < m * n; i++) {
    if (t == WEFT_FLOAT64) ((double*)in)[i] = a[i];
    else ((float*)in)[i] = (float)a[i];
  }
  svd_errors e = {0, 0, 0, 0, true};
  CHECK(weft__svd(t, m, n, in, s, u, v, full) == WEFT_OK);
  double top = fmax(at(s, t, 0), 1e-300);
  for (int64_t j = 1; j < k; j++) e.descending &= at(s, t, j) <= at(s, t, j - 1);
  for (int64_t j = 0; want && j < k; j++) e.value = fmax(e.value, fabs(at(s, t, j) - want[j]) / top);
  /* u[j * m + i] = U[i][j]; v[i * vr + j] = V[i][j], Vh[j][i] */
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double r = 0;
      for (int64_t l = 0; l < k; l++) r += at(u, t, l * m + i) * at(s, t, l) * at(v, t, j * vr + l);
      e.recon = fmax(e.recon, fabs(r - a[i * n + j]) / top);
    }
  e.orth_u = orthogonality(u, t, m, uc, 1, m);
  e.orth_v = orthogonality(v, t, n, vr, vr, 1);
  free(in), free(s), free(u), free(v);
  return e;
}

static void check_case(weft_dtype t, int64_t m, int64_t n, const double* a, const double* want, double tol) {
  for (int full = 0; full < 2; full++) {
    svd_errors e = check_svd(t, m, n, a, want, full);
    CHECK(e.descending);
    CHECK(e.recon < tol);
    CHECK(e.orth_u < tol && e.orth_v < tol);
    CHECK(e.value < tol);
    if (!(e.recon < tol && e.orth_u < tol && e.orth_v < tol && e.value < tol))
      fprintf(stderr, "  %s %lldx%lld full=%d: recon %g orth %g %g values %g\n", t == WEFT_FLOAT64 ? "f64" : "f32",
              (long long)m, (long long)n, full, e.recon, e.orth_u, e.orth_v, e.value);
  }
}

static void test_driver(void) {
  const int64_t shapes[][2] = {{1, 1}, {1, 5}, {5, 1}, {3, 3}, {7, 4}, {4, 7}, {20, 20}, {33, 12}, {12, 33}};
  for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
    int64_t m = shapes[c][0], n = shapes[c][1], k = m < n ? m : n;
    double* a = malloc(sizeof(double) * (size_t)(m * n));
    double* s = malloc(sizeof(double) * (size_t)k);
    /* known values: descending, cond 1e12 (float64), then rank-deficient with a repeated value */
    for (int64_t j = 0; j < k; j++) s[j] = k == 1 ? 2 : pow(10, -12.0 * (double)j / (double)(k - 1));
    with_values(a, m, n, s);
    check_case(WEFT_FLOAT64, m, n, a, s, 1e-13);
    for (int64_t j = 0; j < k; j++) s[j] = j < k / 2 ? 3 : j < k - 1 ? 1 : 0;
    with_values(a, m, n, s);
    check_case(WEFT_FLOAT64, m, n, a, s, 1e-13);
    check_case(WEFT_FLOAT32, m, n, a, s, 2e-6);
    for (int64_t i = 0; i < m * n; i++) a[i] = frand();
    check_case(WEFT_FLOAT32, m, n, a, NULL, 2e-6);
    free(a), free(s);
  }
  /* the zero matrix (every vector a completion), scaled extremes (no overflow / underflow) */
  double z[12] = {0}, big[6] = {1e300, 2e300, -3e300, 4e300, 5e300, 6e300}, tiny[6] = {1e-300, 0, 3e-310, 1e-305, 0, 2e-300};
  check_case(WEFT_FLOAT64, 3, 4, z, z, 1e-15);
  check_case(WEFT_FLOAT64, 2, 3, big, NULL, 1e-14);
  check_case(WEFT_FLOAT64, 3, 2, tiny, NULL, 1e-14);
  float f[2] = {1, INFINITY}, g[2] = {NAN, 1}, h[2] = {1, 2};
  CHECK_EQ_I64(weft__svd_classify(WEFT_FLOAT32, 2, f), 1);
  CHECK_EQ_I64(weft__svd_classify(WEFT_FLOAT32, 2, g), 2);
  CHECK_EQ_I64(weft__svd_classify(WEFT_FLOAT32, 2, h), 0);
}

static weft_tensor* from(const double* v, const int64_t* sizes, int nd, weft_dtype t) {
  weft_tensor* r = weft_empty(sizes, nd, t, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  for (int64_t i = 0; i < r->numel; i++) {
    if (t == WEFT_FLOAT64) ((double*)weft_tensor_data_ptr(r))[i] = v[i];
    else ((float*)weft_tensor_data_ptr(r))[i] = (float)v[i];
  }
  return r;
}

/* a and b hold the same values (any layouts) */
static bool same_values(weft_tensor* a, weft_tensor* b) {
  weft_tensor *ac = weft_contiguous(a, WEFT_CONTIGUOUS_FORMAT), *bc = weft_contiguous(b, WEFT_CONTIGUOUS_FORMAT);
  bool same = ac->numel == bc->numel && ac->dtype == bc->dtype;
  for (int64_t i = 0; same && i < ac->numel; i++) same = at(weft_tensor_data_ptr(ac), ac->dtype, i) == at(weft_tensor_data_ptr(bc), bc->dtype, i);
  weft_tensor_release(ac), weft_tensor_release(bc);
  return same;
}

static void release_all(weft_tensor** list, size_t n) {
  for (size_t i = 0; i < n; i++) weft_tensor_release(list[i]);
}

static void test_ops(void) {
  const int64_t s3[3] = {2, 3, 5};
  weft_tensor* a = weft_randn(s3, 3, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor3 full = weft_linalg_svd(a, true), red = weft_linalg_svd(a, false);
  CHECK_SIZES(full.t[0], 2, 3, 3);
  CHECK_STRIDES(full.t[0], 9, 1, 3);
  CHECK_SIZES(full.t[1], 2, 3);
  CHECK_SIZES(full.t[2], 2, 5, 5);
  CHECK_STRIDES(full.t[2], 25, 1, 5);
  CHECK_SIZES(red.t[2], 2, 3, 5);
  CHECK_STRIDES(red.t[2], 15, 1, 3);
  weft_tensor* sv = weft_linalg_svdvals(a);
  CHECK(sv && same_values(sv, red.t[1])); /* the same computation */
  /* empty: the complete bases are identities */
  const int64_t e[2] = {0, 3};
  weft_tensor* z = weft_full(e, 2, 0.0, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor3 ez = weft_linalg_svd(z, true);
  CHECK_SIZES(ez.t[0], 0, 0);
  CHECK_SIZES(ez.t[2], 3, 3);
  weft_tensor* eye = weft_eye(3, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  CHECK(same_values(ez.t[2], eye));
  /* errors */
  const double nan2[8] = {1, 0, 0, 1, 1, NAN, 0, 1}, inf2[4] = {1, INFINITY, 0, 1};
  const int64_t s2[2] = {2, 2}, b2[3] = {2, 2, 2};
  weft_tensor *bn = from(nan2, b2, 3, WEFT_FLOAT64), *bi = from(inf2, s2, 2, WEFT_FLOAT64);
  CHECK(!weft_linalg_svdvals(bn));
  CHECK_ERROR_HAS("linalg.svd: (Batch element 1): The algorithm failed to converge because the input matrix "
                  "contained non-finite values.");
  weft_tensor* si = weft_linalg_svdvals(bi);
  CHECK(si && isnan(((double*)weft_tensor_data_ptr(si))[0]));
  weft_tensor* i64 = weft_to_dtype(bi, WEFT_INT64, false);
  CHECK(!weft_linalg_svdvals(i64));
  CHECK_ERROR_HAS("linalg.svd: Expected a floating point or complex tensor as input. Got int64");
  weft_tensor* list[] = {a, full.t[0], full.t[1], full.t[2], red.t[0], red.t[1], red.t[2], sv, z,
                         ez.t[0], ez.t[1], ez.t[2], eye, bn, bi, si, i64};
  release_all(list, sizeof list / sizeof list[0]);
}

/* sum(w1 * S) + sum(w2 * (U diag(c) Vh)): the second term does not change
 * when a singular pair flips sign, so its gradient is defined; with vals,
 * sum(w1 * svdvals(A)) alone. keep_graph: the loss tensor, for backward. */
static double loss_value(weft_tensor* a, weft_tensor* w1, weft_tensor* w2, weft_tensor* c, bool full, bool vals,
                         weft_tensor** keep_graph) {
  weft_tensor3 r = weft_linalg_svd(a, full);
  int64_t k = r.t[1]->sizes[r.t[1]->ndim - 1];
  weft_tensor* u = weft_narrow(r.t[0], -1, 0, k);
  weft_tensor* vh = weft_narrow(r.t[2], -2, 0, k);
  weft_tensor* cu = weft_mul(u, c);
  weft_tensor* usv = weft_matmul(cu, vh);
  weft_tensor* sv = vals ? weft_linalg_svdvals(a) : weft_tensor_retain(r.t[1]);
  weft_tensor *p1 = weft_mul(sv, w1), *p2 = weft_mul(usv, w2);
  weft_tensor *l1 = weft_sum(p1, (weft_dtype)-1), *l2 = weft_sum(p2, (weft_dtype)-1);
  weft_tensor* l = vals ? weft_tensor_retain(l1) : weft_add(l1, l2, weft_scalar_int(1));
  double v = *(double*)weft_tensor_data_ptr(l);
  if (keep_graph) *keep_graph = l;
  else weft_tensor_release(l);
  weft_tensor* list[] = {r.t[0], r.t[1], r.t[2], u, vh, cu, usv, sv, p1, p2, l1, l2};
  release_all(list, sizeof list / sizeof list[0]);
  return v;
}

static void test_gradients(void) {
  const int64_t shapes[][3] = {{2, 5, 3}, {1, 4, 4}, {2, 3, 5}};
  for (size_t sh = 0; sh < 3; sh++) {
    for (int mode = 0; mode < 3; mode++) { /* reduced, full, svdvals */
      const int64_t* s = shapes[sh];
      int64_t k = s[1] < s[2] ? s[1] : s[2], sk[2] = {s[0], k}, ck[3] = {s[0], 1, k};
      weft_tensor* a = weft_randn(s, 3, WEFT_FLOAT64, WEFT_DEVICE_CPU);
      weft_tensor* w1 = weft_randn(sk, 2, WEFT_FLOAT64, WEFT_DEVICE_CPU);
      weft_tensor* w2 = weft_randn(s, 3, WEFT_FLOAT64, WEFT_DEVICE_CPU);
      weft_tensor* c = weft_randn(ck, 3, WEFT_FLOAT64, WEFT_DEVICE_CPU);
      weft_set_requires_grad(a, true);
      weft_tensor *l = NULL, *g = NULL;
      loss_value(a, w1, w2, c, mode == 1, mode == 2, &l);
      CHECK(weft_autograd_grad(&l, NULL, 1, &a, 1, false, false, false, &g) == WEFT_OK);
      weft_set_requires_grad(a, false);
      weft_tensor* gc = weft_contiguous(g, WEFT_CONTIGUOUS_FORMAT);
      double* ap = weft_tensor_data_ptr(a);
      double worst = 0;
      for (int64_t i = 0; i < a->numel; i++) {
        double keep = ap[i], h = 1e-6;
        ap[i] = keep + h;
        double up = loss_value(a, w1, w2, c, mode == 1, mode == 2, NULL);
        ap[i] = keep - h;
        double dn = loss_value(a, w1, w2, c, mode == 1, mode == 2, NULL);
        ap[i] = keep;
        double want = (up - dn) / (2 * h), got = ((double*)weft_tensor_data_ptr(gc))[i];
        worst = fmax(worst, fabs(got - want) / (1 + fabs(want)));
      }
      CHECK(worst < 1e-6);
      if (!(worst < 1e-6)) fprintf(stderr, "  gradient %lldx%lld mode %d: %g\n", (long long)s[1], (long long)s[2], mode, worst);
      weft_tensor* list[] = {a, w1, w2, c, l, g, gc};
      release_all(list, sizeof list / sizeof list[0]);
    }
  }
}

/* ---- allocation failures: clean OutOfMemory, nothing left ---- */
static weft_tensor* fault_run(weft_tensor* a) {
  weft_tensor* n = weft_linalg_matrix_norm_str_ord(a, "nuc", (const int64_t[]){-2, -1}, 2, false, (weft_dtype)-1);
  weft_tensor3 r = n ? weft_linalg_svd(a, true) : (weft_tensor3){{NULL, NULL, NULL}, weft_last_status()};
  weft_tensor* us = r.t[0] ? weft_sum(r.t[0], (weft_dtype)-1) : NULL;
  weft_tensor* un = us ? weft_add(us, n, weft_scalar_int(1)) : NULL;
  weft_tensor* l = un ? weft_sum(un, (weft_dtype)-1) : NULL;
  weft_tensor* g = NULL;
  weft_status st = l ? weft_autograd_grad(&l, NULL, 1, &a, 1, false, false, false, &g) : weft_last_status();
  weft_tensor* list[] = {n, r.t[0], r.t[1], r.t[2], us, un, l};
  release_all(list, sizeof list / sizeof list[0]);
  if (st != WEFT_OK) weft_tensor_release(g);
  return st == WEFT_OK ? g : NULL;
}

/* the gradient's success, for check_fails_cleanly */
static bool fault_ok(void* a) {
  weft_tensor* r = fault_run(a);
  weft_tensor_release(r);
  return r != NULL;
}

static void test_allocation_failures(void) {
  const int64_t sa[3] = {2, 4, 3};
  weft_tensor* a = weft_randn(sa, 3, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_set_requires_grad(a, true);
  check_fails_cleanly(fault_ok, a, 5000);
  weft_tensor_release(a);
}

int main(void) {
  srand(11);
  weft_manual_seed(11);
  test_driver();
  test_ops();
  test_gradients();
  test_allocation_failures();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
