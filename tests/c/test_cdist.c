/* cdist in C (issue 25): the f32_cdist_rows kernel on every backend against
 * a float64 reference and bit for bit against the scalar backend (NaN kept
 * by the max of p = inf); the op threaded (the same bits at 1 and 3
 * threads), float32's kernel path against the float64 loops, the GEMM path
 * against the exact one, _cdist_backward against central differences, its
 * errors, and no leaks. PyTorch's values are replayed by
 * tests/js/cdist-fixtures.test.mjs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "kernel_test_util.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/alloc.h"
#include "weft/parallel.h"

static double ref_distance(size_t c, const float* a, const float* b, int kind) {
  double s = 0;
  for (size_t k = 0; k < c; k++) {
    double d = fabs((double)a[k] - (double)b[k]);
    s = kind == 2 ? s + d * d : kind == 1 ? s + d : (d > s ? d : s);
  }
  return kind == 2 ? sqrt(s) : s;
}

static void test_kernel(void) {
  enum { R2 = 5, MAXC = 1023 };
  float* a = malloc(MAXC * sizeof(float));
  float* b = malloc(R2 * MAXC * sizeof(float));
  for (size_t i = 0; i < MAXC; i++) a[i] = kt_randf(-2, 2);
  for (size_t i = 0; i < R2 * MAXC; i++) b[i] = kt_randf(-2, 2);
  for (int kind = 1; kind <= 3; kind++)
    for (size_t s = 0; s < KT_NSIZES; s++) {
      size_t c = kt_sizes[s];
      memcpy(b + c, a, c * sizeof(float)); /* row 1 equals a: distance 0 */
      float scalar[R2], got[R2];
      weft__kernels_scalar()->f32_cdist_rows(c, R2, a, b, scalar, kind);
      for (int be = 0; be < KT_NBACKENDS; be++) {
        kt_backend(be)->f32_cdist_rows(c, R2, a, b, got, kind);
        for (size_t q = 0; q < R2; q++) {
          double want = ref_distance(c, a, b + q * c, kind);
          CHECK(fabs(got[q] - want) <= 2e-6 * (want + 1) * (kind == 3 ? 1 : sqrt((double)c)));
          CHECK(kt_same_f32(got[q], scalar[q]));
        }
        CHECK(got[1] == 0.0f);
      }
    }
  a[2] = NAN; /* the max keeps NaN; the sums do anyway */
  float got[R2];
  for (int be = 0; be < KT_NBACKENDS; be++)
    for (int kind = 1; kind <= 3; kind++) {
      kt_backend(be)->f32_cdist_rows(9, R2, a, b, got, kind);
      for (size_t q = 0; q < R2; q++) CHECK(isnan(got[q]));
    }
  free(a);
  free(b);
}

static weft_tensor* randn3(int64_t b, int64_t r, int64_t c, weft_dtype t) {
  const int64_t s[3] = {b, r, c};
  return weft_randn(s, 3, t, WEFT_DEVICE_CPU);
}
static double at(const weft_tensor* t, int64_t i) {
  return t->dtype == WEFT_FLOAT64 ? ((const double*)weft_tensor_data_ptr(t))[i]
                                  : ((const float*)weft_tensor_data_ptr(t))[i];
}
static bool same_bits(const weft_tensor* a, const weft_tensor* b) {
  return a && b && a->numel == b->numel &&
         !memcmp(weft_tensor_data_ptr(a), weft_tensor_data_ptr(b), (size_t)a->numel * weft_dtype_size(a->dtype));
}
static double max_diff(const weft_tensor* a, const weft_tensor* b) {
  double m = 0;
  for (int64_t i = 0; a && b && i < a->numel; i++) m = fmax(m, fabs(at(a, i) - at(b, i)) / (1 + fabs(at(b, i))));
  return a && b && a->numel == b->numel ? m : INFINITY;
}

static void test_op_threads_and_paths(void) {
  const double ps[] = {0, 0.5, 1, 1.5, 2, 3, INFINITY};
  weft_tensor *x1 = randn3(3, 40, 33, WEFT_FLOAT64), *x2 = randn3(1, 29, 33, WEFT_FLOAT64);
  weft_tensor *y1 = weft_to_dtype(x1, WEFT_FLOAT32, false), *y2 = weft_to_dtype(x2, WEFT_FLOAT32, false);
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
    weft_tensor* r[2];
    for (int t = 0; t < 2; t++) {
      weft_set_num_threads(t ? 3 : 1);
      r[t] = weft_cdist(y1, y2, ps[i], "donot_use_mm_for_euclid_dist");
    }
    weft_set_num_threads(1);
    CHECK(same_bits(r[0], r[1]));
    weft_tensor* exact = weft_cdist(x1, x2, ps[i], "donot_use_mm_for_euclid_dist");
    CHECK_SIZES(exact, 3, 40, 29);
    CHECK(max_diff(r[0], exact) <= 2e-5); /* float32 (the kernel for p = 1, 2, inf) against float64 */
    weft_tensor_release(r[0]), weft_tensor_release(r[1]), weft_tensor_release(exact);
  }
  /* the GEMM path against the exact one, float64 */
  weft_tensor *mm = weft_cdist(x1, x2, 2, "use_mm_for_euclid_dist_if_necessary"),
              *exact = weft_cdist(x1, x2, 2, "donot_use_mm_for_euclid_dist");
  CHECK(max_diff(mm, exact) <= 1e-12);
  weft_tensor_release(mm), weft_tensor_release(exact);
  /* _cdist_forward asked for the GEMM (compute_mode 1) with two batch dims */
  const int64_t s4[4] = {2, 3, 4, 5}, t4[4] = {1, 3, 6, 5};
  weft_tensor *b1 = weft_randn(s4, 4, WEFT_FLOAT64, WEFT_DEVICE_CPU), *b2 = weft_randn(t4, 4, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  mm = weft__cdist_forward(b1, b2, 2, 1), exact = weft__cdist_forward(b1, b2, 2, 2);
  CHECK_SIZES(mm, 2, 3, 4, 6);
  CHECK(max_diff(mm, exact) <= 1e-12);
  weft_tensor_release(mm), weft_tensor_release(exact), weft_tensor_release(b1), weft_tensor_release(b2);
  weft_tensor_release(x1), weft_tensor_release(x2), weft_tensor_release(y1), weft_tensor_release(y2);
}

/* d sum(w * cdist) / d x1 by _cdist_backward against central differences */
static void test_backward(void) {
  const double ps[] = {1, 1.5, 2, 3, INFINITY, 0.7};
  weft_tensor *x1 = randn3(2, 3, 4, WEFT_FLOAT64), *x2 = randn3(2, 5, 4, WEFT_FLOAT64), *w = randn3(2, 3, 5, WEFT_FLOAT64);
  double* xv = weft_tensor_data_ptr(x1);
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
    weft_tensor* d = weft__cdist_forward(x1, x2, ps[i], INT64_MIN);
    weft_tensor* g = weft__cdist_backward(w, x1, x2, ps[i], d);
    CHECK_SIZES(g, 2, 3, 4);
    for (int64_t k = 0; g && k < x1->numel; k++) {
      double f[2], keep = xv[k];
      for (int s = 0; s < 2; s++) {
        xv[k] = keep + (s ? -1e-6 : 1e-6);
        weft_tensor* dd = weft__cdist_forward(x1, x2, ps[i], INT64_MIN);
        f[s] = 0;
        for (int64_t j = 0; j < dd->numel; j++) f[s] += at(dd, j) * at(w, j);
        weft_tensor_release(dd);
      }
      xv[k] = keep;
      double numeric = (f[0] - f[1]) / 2e-6;
      CHECK(fabs(at(g, k) - numeric) <= 1e-5 * (1 + fabs(numeric)));
    }
    weft_tensor_release(d), weft_tensor_release(g);
  }
  weft_tensor_release(x1), weft_tensor_release(x2), weft_tensor_release(w);
}

static void test_errors(void) {
  const int64_t s1[1] = {4}, s2[2] = {5, 4}, s3[2] = {5, 3};
  weft_tensor *v = weft_randn(s1, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU), *m = weft_randn(s2, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* m3 = weft_randn(s3, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(!weft_cdist(v, m, 2, "use_mm_for_euclid_dist_if_necessary"));
  CHECK_ERROR_HAS("cdist only supports at least 2D tensors, X1 got: 1D");
  CHECK(!weft_cdist(m, m3, 2, "donot_use_mm_for_euclid_dist"));
  CHECK_ERROR_HAS("X1 and X2 must have the same number of columns. X1: 4 X2: 3");
  CHECK(!weft_cdist(m, m, -1, "use_mm_for_euclid_dist"));
  CHECK_ERROR_HAS("cdist only supports non-negative p values");
  CHECK(!weft_cdist(m, m, 2, "sometimes"));
  CHECK_ERROR_HAS("sometimes is not a valid value for compute_mode");
  CHECK(!weft__cdist_forward(m, m, 2, 7));
  CHECK_ERROR_HAS("possible modes: 0, 1, 2, but was: 7");
  weft_tensor_release(v), weft_tensor_release(m), weft_tensor_release(m3);
}

int main(void) {
  weft_manual_seed(25);
  test_kernel();
  test_op_threads_and_paths();
  test_backward();
  test_errors();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
