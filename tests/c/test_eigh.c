/* torch.linalg.eigh's solver (src/ops/cpu/eigh.c) and ops
 * (src/ops/linalg_eigh.c): A V = V diag(w), V^T V = I and ascending order on
 * random sizes; eigenvalues of known spectra (spanning 1e-12..1, repeated,
 * graded) to float64 accuracy (sizes on both sides of the GEMM-blocked Q);
 * values-only equal to the values with vectors;
 * non-finite input reported as not converged; the ops' layouts, threaded
 * batches equal to one thread's, Meta shapes, errors; the gradient against
 * central differences; no leaks. PyTorch's values are replayed by
 * tests/js/eigh-fixtures.test.mjs. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "ops/cpu/eigh.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/autograd.h"
#include "weft/parallel.h"

static double frand(void) { return (double)rand() / RAND_MAX * 2 - 1; }

static void random_symmetric(double* a, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j <= i; j++) a[i * n + j] = a[j * n + i] = frand();
}

/* max |A v_j - w_j v_j| / max(1, max |A|) and max |V^T V - I| */
static void residuals(const double* a, int64_t n, const double* w, const double* vt, double* res, double* orth) {
  double big = 1;
  for (int64_t i = 0; i < n * n; i++) big = fmax(big, fabs(a[i]));
  *res = *orth = 0;
  for (int64_t k = 0; k < n; k++) {
    for (int64_t i = 0; i < n; i++) {
      double s = 0;
      for (int64_t j = 0; j < n; j++) s += a[i * n + j] * vt[k * n + j];
      *res = fmax(*res, fabs(s - w[k] * vt[k * n + i]) / big);
    }
    for (int64_t l = 0; l < n; l++) {
      double s = 0;
      for (int64_t j = 0; j < n; j++) s += vt[k * n + j] * vt[l * n + j];
      *orth = fmax(*orth, fabs(s - (k == l)));
    }
  }
}

/* solves a copy of a (upper triangle spoiled: never read); checks the decomposition */
static void check_solve(const double* a, int64_t n, double* w) {
  double* c = malloc(sizeof(double) * (size_t)(n * n));
  double* vt = malloc(sizeof(double) * (size_t)(n * n));
  double* w2 = malloc(sizeof(double) * (size_t)(n + 1));
  memcpy(c, a, sizeof(double) * (size_t)(n * n));
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++) c[i * n + j] = 1e30;
  int64_t info = -1;
  CHECK(weft__eigh(n, c, w, vt, &info) == WEFT_OK);
  CHECK_EQ_I64(info, 0);
  double res, orth;
  residuals(a, n, w, vt, &res, &orth);
  CHECK(res <= 1e-15 * (double)(n + 4));
  CHECK(orth <= 1e-15 * (double)(n + 4));
  for (int64_t k = 1; k < n; k++) CHECK(w[k - 1] <= w[k]);
  /* values only: the same QL arithmetic, the same values */
  memcpy(c, a, sizeof(double) * (size_t)(n * n));
  CHECK(weft__eigh(n, c, w2, NULL, &info) == WEFT_OK);
  CHECK(memcmp(w, w2, sizeof(double) * (size_t)n) == 0);
  free(c), free(vt), free(w2);
}

/* Q diag(lam) Q^T with Q a product of random reflectors */
static void with_spectrum(double* a, int64_t n, const double* lam) {
  double* q = calloc((size_t)(n * n), sizeof(double));
  double* v = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++) q[i * n + i] = 1;
  for (int r = 0; r < 3; r++) {
    double nn = 0;
    for (int64_t i = 0; i < n; i++) v[i] = frand(), nn += v[i] * v[i];
    for (int64_t i = 0; i < n; i++) { /* Q = Q (I - 2 v v^T / v.v) */
      double s = 0;
      for (int64_t j = 0; j < n; j++) s += q[i * n + j] * v[j];
      for (int64_t j = 0; j < n; j++) q[i * n + j] -= 2 * s * v[j] / nn;
    }
  }
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t k = 0; k < n; k++) s += q[i * n + k] * lam[k] * q[j * n + k];
      a[i * n + j] = s;
    }
  free(q), free(v);
}

static int cmp_double(const void* x, const void* y) {
  double a = *(const double*)x, b = *(const double*)y;
  return (a > b) - (a < b);
}

static void test_driver(void) {
  const int64_t sizes[] = {1, 2, 3, 4, 5, 8, 17, 33, 64, 100, 130};
  for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
    int64_t n = sizes[t];
    double* a = malloc(sizeof(double) * (size_t)(n * n));
    double* w = malloc(sizeof(double) * (size_t)n);
    random_symmetric(a, n);
    check_solve(a, n, w);
    free(a), free(w);
  }
  /* known spectra: +-1..1e-12, repeated, zero */
  enum { N = 24 };
  double a[N * N], lam[N], w[N];
  for (int kind = 0; kind < 3; kind++) {
    for (int i = 0; i < N; i++)
      lam[i] = kind == 0 ? (i % 2 ? -1 : 1) * pow(10.0, -12.0 * i / (N - 1)) : kind == 1 ? (double)(i % 3) : 0.0;
    with_spectrum(a, N, lam);
    check_solve(a, N, w);
    qsort(lam, N, sizeof(double), cmp_double);
    /* backward stable: within a small multiple of n eps ||A|| (the input's own rounding included) */
    double worst = 0, norm = fabs(lam[0]) > fabs(lam[N - 1]) ? fabs(lam[0]) : fabs(lam[N - 1]);
    for (int i = 0; i < N; i++) worst = fmax(worst, fabs(w[i] - lam[i]));
    if (!(worst <= 2 * N * DBL_EPSILON * fmax(norm, DBL_MIN))) printf("kind %d: eigenvalue error %g\n", kind, worst);
    CHECK(worst <= 2 * N * DBL_EPSILON * fmax(norm, DBL_MIN));
  }
  /* graded: diag(1, 1e-3, ..., 1e-21) with small couplings, its eigenvalues to relative accuracy */
  for (int i = 0; i < N * N; i++) a[i] = 0;
  for (int i = 0; i < 8; i++) a[i * N + i] = pow(10.0, -3.0 * i);
  for (int i = 0; i + 1 < 8; i++) a[(i + 1) * N + i] = a[i * N + i + 1] = 1e-3 * pow(10.0, -3.0 * i - 1.5);
  double g[8], vt[64];
  double sub[64];
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++) sub[i * 8 + j] = a[i * N + j];
  int64_t info;
  CHECK(weft__eigh(8, sub, g, vt, &info) == WEFT_OK && info == 0);
  for (int i = 0; i < 8; i++) CHECK(fabs(g[7 - i] / pow(10.0, -3.0 * i) - 1) < 1e-5);
  /* not finite: all n - 1 off-diagonals left, as LAPACK's */
  double bad[9] = {1, 0, 0, NAN, 2, 0, 0, 0, 3};
  CHECK(weft__eigh(3, bad, w, vt, &info) == WEFT_OK);
  CHECK_EQ_I64(info, 2);
  double one[1] = {INFINITY};
  CHECK(weft__eigh(1, one, w, vt, &info) == WEFT_OK && info == 0 && w[0] == INFINITY && vt[0] == 1);
}

/* ---- the ops ---- */
static weft_tensor* sym_batch(const int64_t* s, int nd, weft_dtype t) {
  weft_tensor* m = weft_randn(s, nd, t, WEFT_DEVICE_CPU);
  weft_tensor* mt = weft_transpose(m, -2, -1);
  weft_tensor* r = weft_add(m, mt, weft_scalar_int(1));
  weft_tensor_release(m), weft_tensor_release(mt);
  return r;
}

/* eigh of a at 1 and at 2 threads: the same bits (the batch split, or the GEMM's tiles) */
static void at_both_thread_counts(const weft_tensor* a, weft_tensor2* one, weft_tensor2* two) {
  weft_set_num_threads(1);
  *one = weft_linalg_eigh(a, "L");
  weft_set_num_threads(2);
  *two = weft_linalg_eigh(a, "L");
  weft_set_num_threads(1);
  size_t es = weft_dtype_size(a->dtype);
  CHECK(memcmp(weft_tensor_data_ptr(one->t[0]), weft_tensor_data_ptr(two->t[0]), es * (size_t)one->t[0]->numel) == 0);
  CHECK(memcmp(weft_tensor_data_ptr(one->t[1]), weft_tensor_data_ptr(two->t[1]), es * (size_t)one->t[1]->numel) == 0);
}

static void test_ops(void) {
  /* 300 matrices of 8 x 8: three chunks of the batch at 2 threads */
  enum { B = 300, n = 8 };
  const int64_t s[3] = {B, n, n};
  for (int f64 = 0; f64 < 2; f64++) {
    weft_dtype t = f64 ? WEFT_FLOAT64 : WEFT_FLOAT32;
    weft_tensor* a = sym_batch(s, 3, t);
    weft_tensor2 one, two;
    at_both_thread_counts(a, &one, &two);
    CHECK_SIZES(one.t[0], B, n);
    CHECK_STRIDES(one.t[1], n * n, 1, n);
    CHECK(one.t[1]->dtype == t);
    size_t es = weft_dtype_size(t);
    weft_tensor* vals = weft_linalg_eigvalsh(a, "l");
    CHECK(memcmp(weft_tensor_data_ptr(vals), weft_tensor_data_ptr(one.t[0]), es * B * n) == 0);
    weft_tensor* list[] = {a, one.t[0], one.t[1], two.t[0], two.t[1], vals};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
  }
  /* one 100 x 100 matrix: Q formed on the GEMM, threaded inside; the same at 1 and 2 threads */
  const int64_t s1[2] = {100, 100};
  weft_tensor* big = sym_batch(s1, 2, WEFT_FLOAT64);
  weft_tensor2 b1, b2;
  at_both_thread_counts(big, &b1, &b2);
  weft_tensor* blist[] = {big, b1.t[0], b1.t[1], b2.t[0], b2.t[1]};
  for (size_t i = 0; i < sizeof blist / sizeof blist[0]; i++) weft_tensor_release(blist[i]);
  /* Meta: shapes only */
  const int64_t ms[4] = {2, 3, 5, 5};
  weft_tensor* m = weft_empty(ms, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor2 r = weft_linalg_eigh(m, "U");
  CHECK_SIZES(r.t[0], 2, 3, 5);
  CHECK_STRIDES(r.t[1], 75, 25, 1, 5);
  weft_tensor_release(r.t[0]), weft_tensor_release(r.t[1]);
  /* errors */
  const int64_t ns[2] = {2, 3};
  weft_tensor* ns_t = weft_empty(ns, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  r = weft_linalg_eigh(ns_t, "L");
  CHECK(!r.t[0] && !r.t[1]);
  CHECK_ERROR_HAS("linalg.eigh: A must be batches of square matrices, but they are 2 by 3 matrices");
  CHECK(!weft_linalg_eigvalsh(m, "X"));
  CHECK_ERROR_HAS("linalg.eigvalsh: Expected UPLO argument to be 'L' or 'U', but got X");
  const int64_t sq[2] = {3, 3};
  weft_tensor* ints = weft_full(sq, 2, 0, WEFT_INT64, WEFT_DEVICE_CPU);
  CHECK(!weft_linalg_eigvalsh(ints, "L"));
  CHECK_ERROR_HAS("\"linalg_eigh_cpu\" not implemented for 'int64'");
  weft_tensor* nan = weft_full(sq, 2, NAN, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  CHECK(!weft_linalg_eigvalsh(nan, "L"));
  CHECK_ERROR_HAS("linalg.eigh: The algorithm failed to converge because the input matrix is ill-conditioned or "
                  "has too many repeated eigenvalues (error code: 2).");
  weft_tensor_release(m), weft_tensor_release(ns_t), weft_tensor_release(ints), weft_tensor_release(nan);
}

/* sum(cl * L) + sum(cv * V * V), A read from its lower triangle */
static double loss(weft_tensor* a, weft_tensor* cl, weft_tensor* cv, weft_tensor** out) {
  weft_tensor2 r = weft_linalg_eigh(a, "L");
  weft_tensor* v2 = weft_mul(r.t[1], r.t[1]);
  weft_tensor *p1 = weft_mul(r.t[0], cl), *p2 = weft_mul(v2, cv);
  weft_tensor *s1 = weft_sum(p1, (weft_dtype)-1), *s2 = weft_sum(p2, (weft_dtype)-1);
  weft_tensor* s = weft_add(s1, s2, weft_scalar_int(1));
  double v = *(double*)weft_tensor_data_ptr(s);
  weft_tensor* list[] = {r.t[0], r.t[1], v2, p1, p2, s1, s2};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
  if (out)
    *out = s;
  else
    weft_tensor_release(s);
  return v;
}

/* d loss / d a_ij for the read (lower) triangle is gA_ij + gA_ji off the diagonal */
static void test_gradient(void) {
  enum { n = 5 };
  const int64_t s[2] = {n, n}, sl[1] = {n};
  weft_tensor* a = sym_batch(s, 2, WEFT_FLOAT64);
  weft_tensor* cl = weft_randn(sl, 1, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor* cv = weft_randn(s, 2, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_set_requires_grad(a, true);
  weft_tensor *l = NULL, *g = NULL;
  loss(a, cl, cv, &l);
  CHECK(weft_autograd_grad(&l, NULL, 1, &a, 1, false, false, false, &g) == WEFT_OK);
  weft_set_requires_grad(a, false);
  weft_tensor* gc = weft_contiguous(g, WEFT_CONTIGUOUS_FORMAT);
  const double* gp = weft_tensor_data_ptr(gc);
  double* ap = weft_tensor_data_ptr(a);
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      double keep = ap[i * n + j], h = 1e-6;
      ap[i * n + j] = keep + h;
      double up = loss(a, cl, cv, NULL);
      ap[i * n + j] = keep - h;
      double dn = loss(a, cl, cv, NULL);
      ap[i * n + j] = keep;
      double want = (up - dn) / (2 * h), got = gp[i * n + j] + (i != j ? gp[j * n + i] : 0);
      CHECK(fabs(got - want) <= 1e-6 * (1 + fabs(want)));
    }
  weft_tensor* list[] = {a, cl, cv, l, g, gc};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
}

int main(void) {
  srand(25);
  weft_manual_seed(25);
  test_driver();
  test_ops();
  test_gradient();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
