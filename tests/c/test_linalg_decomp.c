/* Issue 25's torch.linalg decompositions: the blocked LU and Cholesky
 * drivers (src/ops/cpu/lu.c) at sizes on both sides of the blocking
 * threshold and on remainders of the panel width, against reconstruction
 * (P A = L U, A X = B, L L^T = A) in float32 and float64; the ops' results,
 * layouts and errors (singular, batch element, non-positive-definite);
 * the gradients of solve and inv against central differences; a clean
 * OutOfMemory at every failing allocation; no leaks. PyTorch's values are
 * replayed by tests/js/linalg25-fixtures.test.mjs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "ops/cpu/lu.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/alloc.h"
#include "weft/autograd.h"

static double frand(void) { return (double)rand() / RAND_MAX * 2 - 1; }

/* a random matrix with a weighted diagonal (well conditioned) */
static void fill_well(double* a, int64_t n) {
  for (int64_t i = 0; i < n * n; i++) a[i] = frand();
  for (int64_t i = 0; i < n; i++) a[i * n + i] += 2 * sqrt((double)n);
}

static void to_f32(const double* a, float* b, int64_t k) {
  for (int64_t i = 0; i < k; i++) b[i] = (float)a[i];
}
static double at(const void* p, weft_dtype t, int64_t i) {
  return t == WEFT_FLOAT64 ? ((const double*)p)[i] : ((const float*)p)[i];
}

/* max |A X - B| / max |B| for X from the LU driver */
static double solve_residual(weft_dtype t, int64_t n, int64_t k) {
  double* a = malloc(sizeof(double) * (size_t)(n * n));
  double* b = malloc(sizeof(double) * (size_t)(n * k));
  fill_well(a, n);
  for (int64_t i = 0; i < n * k; i++) b[i] = frand();
  size_t es = t == WEFT_FLOAT64 ? 8 : 4;
  char *lu = malloc(es * (size_t)(n * n)), *x = malloc(es * (size_t)(n * k));
  if (t == WEFT_FLOAT64) memcpy(lu, a, 8 * (size_t)(n * n)), memcpy(x, b, 8 * (size_t)(n * k));
  else to_f32(a, (float*)lu, n * n), to_f32(b, (float*)x, n * k);
  int64_t* piv = malloc(sizeof(int64_t) * (size_t)n);
  int64_t info = -1;
  CHECK(weft__lu_factor(t, n, lu, piv, &info) == WEFT_OK);
  CHECK_EQ_I64(info, 0);
  weft__lu_solve(t, n, k, lu, piv, x);
  double worst = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t c = 0; c < k; c++) {
      double s = 0;
      for (int64_t j = 0; j < n; j++) s += a[i * n + j] * at(x, t, j * k + c);
      worst = fmax(worst, fabs(s - b[i * k + c]));
    }
  free(a), free(b), free(lu), free(x), free(piv);
  return worst;
}

/* max |L L^T - A| / max |A| for A = M M^T + n I */
static double cholesky_residual(weft_dtype t, int64_t n) {
  double *m = malloc(sizeof(double) * (size_t)(n * n)), *a = malloc(sizeof(double) * (size_t)(n * n));
  for (int64_t i = 0; i < n * n; i++) m[i] = frand();
  double big = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = i == j ? (double)n : 0;
      for (int64_t k = 0; k < n; k++) s += m[i * n + k] * m[j * n + k];
      a[i * n + j] = s, big = fmax(big, fabs(s));
    }
  size_t es = t == WEFT_FLOAT64 ? 8 : 4;
  char* l = malloc(es * (size_t)(n * n));
  if (t == WEFT_FLOAT64) memcpy(l, a, 8 * (size_t)(n * n));
  else to_f32(a, (float*)l, n * n);
  int64_t info = -1;
  CHECK(weft__cholesky(t, n, l, &info) == WEFT_OK);
  CHECK_EQ_I64(info, 0);
  double worst = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      if (j > i) CHECK(at(l, t, i * n + j) == 0);
      double s = 0;
      for (int64_t k = 0; k < n; k++) s += at(l, t, i * n + k) * at(l, t, j * n + k);
      worst = fmax(worst, fabs(s - a[i * n + j]));
    }
  free(m), free(a), free(l);
  return worst / big;
}

static void test_drivers(void) {
  const int64_t sizes[] = {1, 2, 7, 31, 95, 96, 97, 130, 161};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    int64_t n = sizes[i];
    CHECK(solve_residual(WEFT_FLOAT64, n, 3) < 1e-11);
    CHECK(solve_residual(WEFT_FLOAT32, n, 2) < 2e-4);
    CHECK(cholesky_residual(WEFT_FLOAT64, n) < 1e-13);
    CHECK(cholesky_residual(WEFT_FLOAT32, n) < 1e-5);
  }
  /* a zero pivot: getrf's info, the factorization completes */
  double a[9] = {1, 2, 3, 2, 4, 6, 1, 0, 1};
  int64_t piv[3], info;
  CHECK(weft__lu_factor(WEFT_FLOAT64, 3, a, piv, &info) == WEFT_OK);
  CHECK_EQ_I64(info, 3);
  double s[4] = {1, 2, 2, 1};
  CHECK(weft__cholesky(WEFT_FLOAT64, 2, s, &info) == WEFT_OK);
  CHECK_EQ_I64(info, 2);
}

static weft_tensor* from(const double* v, const int64_t* sizes, int nd, weft_dtype t) {
  weft_tensor* r = weft_empty(sizes, nd, t, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  for (int64_t i = 0; i < r->numel; i++) {
    if (t == WEFT_FLOAT64) ((double*)weft_tensor_data_ptr(r))[i] = v[i];
    else ((float*)weft_tensor_data_ptr(r))[i] = (float)v[i];
  }
  return r;
}

static void test_ops(void) {
  const int64_t s2[2] = {2, 2}, s3[3] = {2, 2, 2};
  const double av[4] = {4, 1, 2, 3}, sing[8] = {1, 0, 0, 1, 1, 2, 2, 4};
  weft_tensor* a = from(av, s2, 2, WEFT_FLOAT64);
  weft_tensor* inv = weft_linalg_inv(a);
  CHECK_STRIDES(inv, 1, 2); /* column-major, as 1.13's */
  weft_tensor* c = weft_contiguous(inv, WEFT_CONTIGUOUS_FORMAT);
  const double* iv = weft_tensor_data_ptr(c);
  CHECK(fabs(iv[0] - 0.3) < 1e-15 && fabs(iv[1] + 0.1) < 1e-15 && fabs(iv[2] + 0.2) < 1e-15 && fabs(iv[3] - 0.4) < 1e-15);
  weft_tensor* det = weft_linalg_det(a);
  CHECK(fabs(*(double*)weft_tensor_data_ptr(det) - 10) < 1e-13);
  weft_tensor2 sl = weft_linalg_slogdet(a);
  CHECK(*(double*)weft_tensor_data_ptr(sl.t[0]) == 1 && fabs(*(double*)weft_tensor_data_ptr(sl.t[1]) - log(10)) < 1e-14);
  weft_tensor* b = from(sing, s3, 3, WEFT_FLOAT64);
  CHECK(!weft_linalg_inv(b));
  CHECK_ERROR_HAS("linalg.inv: (Batch element 1): The diagonal element 2 is zero, the inversion could not be completed");
  CHECK(!weft_linalg_solve(b, b, true));
  CHECK_ERROR_HAS("torch.linalg.solve: (Batch element 1): The solver failed because the input matrix is singular.");
  weft_tensor* bd = weft_linalg_det(b);
  CHECK(fabs(((double*)weft_tensor_data_ptr(bd))[0] - 1) < 1e-15 && ((double*)weft_tensor_data_ptr(bd))[1] == 0);
  CHECK(!weft_linalg_cholesky(b, false));
  CHECK_ERROR_HAS("linalg.cholesky: (Batch element 1): The factorization could not be completed because the input is "
                  "not positive-definite (the leading minor of order 2 is not positive-definite).");
  weft_tensor* i64 = weft_to_dtype(a, WEFT_INT64, false);
  CHECK(!weft_linalg_det(i64));
  CHECK_ERROR_HAS("linalg.det: Expected a floating point or complex tensor as input. Got int64");
  weft_tensor* list[] = {a, inv, c, det, sl.t[0], sl.t[1], b, bd, i64};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
}

/* d sum(w * op(A, B)) / dA against central differences, float64 */
static double loss(int which, weft_tensor* a, weft_tensor* b, weft_tensor* w) {
  weft_tensor* y = which == 0 ? weft_linalg_solve(a, b, true) : which == 1 ? weft_linalg_inv(a) : weft_linalg_det(a);
  weft_tensor* p = weft_mul(y, w);
  weft_tensor* s = weft_sum(p, (weft_dtype)-1);
  double v = *(double*)weft_tensor_data_ptr(s);
  weft_tensor_release(y), weft_tensor_release(p), weft_tensor_release(s);
  return v;
}

static void test_gradients(void) {
  const int64_t s[2] = {4, 4}, sb[2] = {4, 3};
  for (int which = 0; which < 3; which++) {
    weft_tensor* a = weft_randn(s, 2, WEFT_FLOAT64, WEFT_DEVICE_CPU);
    double* ap = weft_tensor_data_ptr(a);
    for (int i = 0; i < 4; i++) ap[i * 4 + i] += 4;
    weft_tensor* b = weft_randn(sb, 2, WEFT_FLOAT64, WEFT_DEVICE_CPU);
    weft_tensor* w = which == 0 ? weft_randn(sb, 2, WEFT_FLOAT64, WEFT_DEVICE_CPU)
                     : which == 1 ? weft_randn(s, 2, WEFT_FLOAT64, WEFT_DEVICE_CPU)
                                  : weft_randn(s, 0, WEFT_FLOAT64, WEFT_DEVICE_CPU);
    weft_set_requires_grad(a, true);
    weft_tensor* y = which == 0 ? weft_linalg_solve(a, b, true) : which == 1 ? weft_linalg_inv(a) : weft_linalg_det(a);
    weft_tensor* p = weft_mul(y, w);
    weft_tensor* l = weft_sum(p, (weft_dtype)-1);
    weft_tensor* g = NULL;
    CHECK(weft_autograd_grad(&l, NULL, 1, &a, 1, false, false, false, &g) == WEFT_OK);
    weft_set_requires_grad(a, false);
    weft_tensor* gc = weft_contiguous(g, WEFT_CONTIGUOUS_FORMAT);
    for (int i = 0; i < 16; i++) {
      double keep = ap[i], h = 1e-6;
      ap[i] = keep + h;
      double up = loss(which, a, b, w);
      ap[i] = keep - h;
      double dn = loss(which, a, b, w);
      ap[i] = keep;
      double want = (up - dn) / (2 * h), got = ((double*)weft_tensor_data_ptr(gc))[i];
      CHECK(fabs(got - want) <= 1e-6 * (1 + fabs(want)));
    }
    weft_tensor* list[] = {a, b, w, y, p, l, g, gc};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
  }
}

/* the values of t (float64, any layout) against want, row-major */
static bool values_are(weft_tensor* t, const double* want, int64_t n) {
  weft_tensor* c = t ? weft_contiguous(t, WEFT_CONTIGUOUS_FORMAT) : NULL;
  bool ok = c != NULL;
  for (int64_t i = 0; ok && i < n; i++) {
    double v = ((double*)weft_tensor_data_ptr(c))[i];
    ok = isinf(want[i]) ? v == want[i] : fabs(v - want[i]) < 1e-12;
  }
  weft_tensor_release(c);
  return ok;
}

/* 1.13's gradients at singular matrices: det's with createGraph (the
 * cofactors through the SVD, and their own gradient), slogdet's without
 * (the zero pivot's infinities) and with (linalg.solve's refusal), inv_ex */
static void test_singular_gradients(void) {
  const int64_t s2[2] = {2, 2}, s3[3] = {2, 2, 2};
  const double sv[4] = {1, 2, 2, 4}, mixed[8] = {1, 2, 2, 4, 4, 1, 2, 3}, wv[4] = {0, 1, 2, 3};
  weft_tensor* a = from(sv, s2, 2, WEFT_FLOAT64);
  weft_tensor* w = from(wv, s2, 2, WEFT_FLOAT64);
  weft_set_requires_grad(a, true);
  weft_tensor *d = weft_linalg_det(a), *g = NULL, *h = NULL;
  CHECK(weft_autograd_grad(&d, NULL, 1, &a, 1, true, true, false, &g) == WEFT_OK);
  CHECK(values_are(g, (const double[]){4, -2, -2, 1}, 4));
  weft_tensor* gw = weft_mul(g, w);
  weft_tensor* l = weft_sum(gw, (weft_dtype)-1);
  CHECK(weft_autograd_grad(&l, NULL, 1, &a, 1, false, false, false, &h) == WEFT_OK);
  CHECK(values_are(h, (const double[]){3, -2, -1, 0}, 4)); /* 1.13's, to rounding */
  weft_tensor2 sl = weft_linalg_slogdet(a);
  weft_tensor* gs = NULL;
  CHECK(weft_autograd_grad(&sl.t[1], NULL, 1, &a, 1, true, false, false, &gs) == WEFT_OK);
  CHECK(values_are(gs, (const double[]){-INFINITY, INFINITY, INFINITY, -INFINITY}, 4));
  weft_tensor* gs2 = NULL;
  CHECK(weft_autograd_grad(&sl.t[1], NULL, 1, &a, 1, false, true, false, &gs2) != WEFT_OK);
  CHECK_ERROR_HAS("torch.linalg.solve: The solver failed because the input matrix is singular.");
  /* a batch of a singular and a regular matrix: each its branch */
  weft_tensor* b = from(mixed, s3, 3, WEFT_FLOAT64);
  weft_set_requires_grad(b, true);
  weft_tensor *db = weft_linalg_det(b), *sb = weft_sum(db, (weft_dtype)-1), *gb = NULL;
  CHECK(weft_autograd_grad(&sb, NULL, 1, &b, 1, false, true, false, &gb) == WEFT_OK);
  CHECK(values_are(gb, (const double[]){4, -2, -2, 1, 3, -2, -1, 4}, 8));
  weft_tensor2 ie = weft_linalg_inv_ex(b, false);
  CHECK(ie.t[1] && ((int32_t*)weft_tensor_data_ptr(ie.t[1]))[0] == 2 && ((int32_t*)weft_tensor_data_ptr(ie.t[1]))[1] == 0);
  weft_tensor2 bad = weft_linalg_inv_ex(b, true);
  CHECK(!bad.t[0]);
  CHECK_ERROR_HAS("linalg.inv_ex: (Batch element 0): The diagonal element 2 is zero, the inversion could not be");
  weft_tensor* list[] = {a, w, d, g, h, gw, l, sl.t[0], sl.t[1], gs, b, db, sb, gb, ie.t[0], ie.t[1]};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
}

/* ---- allocation failures: clean OutOfMemory, nothing left ---- */
static weft_tensor* fault_run(weft_tensor* a, weft_tensor* b) {
  weft_tensor* y = weft_linalg_solve(a, b, true);
  weft_tensor* z = y ? weft_linalg_inv(a) : NULL;
  weft_tensor* yz = z ? weft_matmul(z, y) : NULL;
  weft_tensor* s = yz ? weft_sum(yz, (weft_dtype)-1) : NULL;
  weft_tensor* g = NULL;
  weft_status st = s ? weft_autograd_grad(&s, NULL, 1, &a, 1, false, false, false, &g) : weft_last_status();
  weft_tensor_release(y), weft_tensor_release(z), weft_tensor_release(yz), weft_tensor_release(s);
  if (st != WEFT_OK) weft_tensor_release(g);
  return st == WEFT_OK ? g : NULL;
}

static bool fault_ok(void* ctx) {
  weft_tensor** ab = ctx;
  weft_tensor* r = fault_run(ab[0], ab[1]);
  weft_tensor_release(r);
  return r != NULL;
}

static void test_allocation_failures(void) {
  const int64_t sa[3] = {2, 3, 3}, sb[2] = {3, 2};
  weft_tensor* a = weft_randn(sa, 3, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor* b = weft_randn(sb, 2, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_set_requires_grad(a, true);
  check_fails_cleanly(fault_ok, (weft_tensor*[2]){a, b}, 3000);
  weft_tensor_release(a), weft_tensor_release(b);
}

int main(void) {
  srand(25);
  weft_manual_seed(25);
  test_drivers();
  test_ops();
  test_gradients();
  test_singular_gradients();
  test_allocation_failures();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
