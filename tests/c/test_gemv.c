/* The matrix-vector kernels and driver (src/kernels/gemv.c, src/ops/cpu/gemv.c):
 *   - f32_gemv_t and f32_gemv_n: the SIMD backend against the scalar one,
 *     bit for bit, and both against a float64 reference, at m = 1..4, n and
 *     k across every tile / strip remainder, padded leading dimensions,
 *     alpha, accumulate, a bias, a clamp; y's padding is untouched;
 *   - the driver (through weft__gemm, and weft__gemv with a bias): 1 and 3
 *     threads and the scalar table give the same bits, both weight layouts,
 *     a strided x copied first, the transposed orientation (mv: n <= 4), and
 *     the cases it leaves to the GEMM (float64, 5 rows, no unit stride). */
#include <stdlib.h>

#include "kernel_test_util.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/gemv.h"
#include "test.h"
#include "weft/parallel.h"

/* y[i, j] for the kernel's inputs, in float64 */
static double ref_gemv(int t, size_t i, size_t j, size_t k, const float* x, size_t ldx, const float* w, size_t ldw) {
  double s = 0;
  for (size_t q = 0; q < k; q++) s += (double)x[i * ldx + q] * (t ? w[j * ldw + q] : w[q * ldw + j]);
  return s;
}

static int kernel_case(int t, size_t m, size_t n, size_t k, int variant) {
  const int al = variant & 1, acc = (variant >> 1) & 1, cl = variant >> 2; /* cl: 0 none, 1 bias, 2 bias + clamp */
  size_t ldx = k + (variant & 1), ldw = (t ? k : n) + 3 * (size_t)(variant & 1), ldy = n + 2;
  float* x = malloc(sizeof(float) * 4 * ldx);
  float* w = malloc(sizeof(float) * (t ? n : k) * ldw);
  float* bias = malloc(sizeof(float) * n);
  float y[2][4 * 80];
  for (size_t i = 0; i < 4 * ldx; i++) x[i] = kt_randf(-1, 1);
  for (size_t i = 0; i < (t ? n : k) * ldw; i++) w[i] = kt_randf(-1, 1);
  for (size_t i = 0; i < n; i++) bias[i] = kt_randf(-2, 2);
  for (size_t i = 0; i < 4 * ldy; i++) y[0][i] = y[1][i] = (float)i * 0.125f;
  struct weft_f32_gemm_params p = {al ? 0.5f : 1.0f, acc, cl == 2, -0.3f, 0.4f, cl ? bias : NULL, 0};
  for (int b = 0; b < 2; b++) {
    const weft_kernels* kt = kt_backend(b);
    (t ? kt->f32_gemv_t : kt->f32_gemv_n)(m, n, k, x, ldx, w, (ptrdiff_t)ldw, y[b], ldy, &p);
  }
  int bad = 0;
  for (size_t i = 0; i < 4; i++)
    for (size_t j = 0; j < ldy; j++) {
      size_t at = i * ldy + j;
      bad += !kt_same_f32(y[0][at], y[1][at]);
      double want = (float)at * 0.125f;
      if (i < m && j < n) {
        double s = (al ? 0.5 : 1.0) * ref_gemv(t, i, j, k, x, ldx, w, ldw);
        want = s + (acc ? want : cl ? bias[j] : 0);
        if (cl == 2) want = want < -0.3 ? -0.3 : want > 0.4 ? 0.4 : want;
        bad += fabs(y[0][at] - want) > 1e-5 * (double)(k + 1) * (1 + fabs(want));
      } else {
        bad += y[0][at] != want; /* rows past m, columns past n untouched */
      }
    }
  if (bad)
    fprintf(stderr, "gemv_%c m%zu n%zu k%zu variant %d: %d bad\n", t ? 't' : 'n', m, n, k, variant, bad);
  free(x);
  free(w);
  free(bias);
  return bad != 0;
}

static void test_kernels(void) {
  const size_t ns[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 70};
  const size_t ks[] = {1, 2, 3, 4, 5, 7, 8, 13, 64, 67};
  int bad = 0;
  for (int t = 0; t < 2; t++)
    for (size_t m = 1; m <= 4; m++)
      for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
          for (int v = 0; v < 12; v++) bad += kernel_case(t, m, ns[ni], ks[ki], v);
  CHECK(bad == 0);
}

/* ---- the driver ---- */

static float* randv(size_t n) {
  float* p = malloc(sizeof(float) * n);
  for (size_t i = 0; i < n; i++) p[i] = kt_randf(-1, 1);
  return p;
}

/* x [m, k] (column stride xcs) @ B, B = W^T (W [n, k]) when t else W [k, n],
 * into C [m, n] row-major: 1 thread, 3 threads and the scalar table equal,
 * and near the float64 reference. */
static int driver_case(int t, int64_t m, int64_t n, int64_t k, int64_t xcs, bool acc) {
  float* x = randv((size_t)(m * k * xcs));
  float* w = randv((size_t)(n * k));
  float* c[3];
  weft_gemm_operand a = {x, k * xcs, xcs};
  weft_gemm_operand b = t ? (weft_gemm_operand){w, 1, k} : (weft_gemm_operand){w, n, 1};
  float* c0 = randv((size_t)(m * n));
  for (int v = 0; v < 3; v++) {
    c[v] = malloc(sizeof(float) * (size_t)(m * n));
    memcpy(c[v], c0, sizeof(float) * (size_t)(m * n));
    weft_set_num_threads(v == 1 ? 3 : 1);
    CHECK(weft__gemm(v == 2 ? weft__kernels_scalar() : weft__kernels(), WEFT_FLOAT32, m, n, k, 1.0, a, b, acc, c[v],
                     n, 1) == WEFT_OK);
  }
  weft_set_num_threads(1);
  int bad = memcmp(c[0], c[1], sizeof(float) * (size_t)(m * n)) != 0;
  bad += memcmp(c[0], c[2], sizeof(float) * (size_t)(m * n)) != 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = acc ? c0[i * n + j] : 0;
      for (int64_t q = 0; q < k; q++) s += (double)x[i * k * xcs + q * xcs] * (t ? w[j * k + q] : w[q * n + j]);
      bad += fabs(c[0][i * n + j] - s) > 1e-5 * (double)k;
    }
  if (bad) fprintf(stderr, "driver %c m%lld n%lld k%lld xcs %lld: bad\n", t ? 't' : 'n', (long long)m, (long long)n,
                   (long long)k, (long long)xcs);
  for (int v = 0; v < 3; v++) free(c[v]);
  free(c0);
  free(x);
  free(w);
  return bad;
}

static void test_driver(void) {
  int bad = 0;
  for (int t = 0; t < 2; t++)
    for (int64_t m = 1; m <= 4; m++) {
      bad += driver_case(t, m, 1000, 288, 1, m % 2 == 0); /* threaded: >= 2^18 multiply-adds */
      bad += driver_case(t, m, 77, 33, 2, m == 3);        /* serial, x strided (copied) */
    }
  bad += driver_case(1, 1, 4099, 65, 1, false);
  CHECK(bad == 0);
}

/* mv: W [m, k] @ v [k] is the n = 1 side, C^T = v^T W^T */
static void test_transposed(void) {
  int64_t m = 300, k = 129;
  float* w = randv((size_t)(m * k));
  float* v = randv((size_t)(2 * k));
  float c[300];
  for (int layout = 0; layout < 2; layout++) {
    weft_gemm_operand a = layout ? (weft_gemm_operand){w, 1, m} : (weft_gemm_operand){w, k, 1};
    weft_gemm_operand b = {v, 2, 0}; /* every other element of v */
    weft_status s = WEFT_INTERNAL;
    CHECK(weft__gemv(weft__kernels(), WEFT_FLOAT32, m, 1, k, 1.0, a, b, false, NULL, c, 1, 1, &s));
    CHECK(s == WEFT_OK);
    int bad = 0;
    for (int64_t i = 0; i < m; i++) {
      double r = 0;
      for (int64_t q = 0; q < k; q++) r += (double)(layout ? w[q * m + i] : w[i * k + q]) * v[2 * q];
      bad += fabs(c[i] - r) > 1e-4;
    }
    CHECK(bad == 0);
  }
  free(w);
  free(v);
}

/* the fused bias, and what the driver leaves to the GEMM */
static void test_bias_and_refusals(void) {
  int64_t n = 50, k = 20;
  float* x = randv((size_t)(5 * k));
  float* w = randv((size_t)(n * k));
  float* bias = randv((size_t)n);
  float c[5 * 50];
  weft_gemm_operand a = {x, k, 1}, b = {w, 1, k};
  weft_status s = WEFT_INTERNAL;
  CHECK(weft__gemv(weft__kernels(), WEFT_FLOAT32, 2, n, k, 1.0, a, b, false, bias, c, n, 1, &s) && s == WEFT_OK);
  int bad = 0;
  for (int64_t i = 0; i < 2; i++)
    for (int64_t j = 0; j < n; j++) {
      double r = bias[j];
      for (int64_t q = 0; q < k; q++) r += (double)x[i * k + q] * w[j * k + q];
      bad += fabs(c[i * n + j] - r) > 1e-4;
    }
  CHECK(bad == 0);
  const weft_kernels* kt = weft__kernels();
  CHECK(!weft__gemv(kt, WEFT_FLOAT64, 1, n, k, 1.0, a, b, false, NULL, c, n, 1, &s));
  CHECK(!weft__gemv(kt, WEFT_FLOAT32, 5, n, k, 1.0, a, b, false, NULL, c, n, 1, &s));
  CHECK(!weft__gemv(kt, WEFT_FLOAT32, 1, n, 0, 1.0, a, b, false, NULL, c, n, 1, &s));
  weft_gemm_operand strided = {w, 2, 2 * k};
  CHECK(!weft__gemv(kt, WEFT_FLOAT32, 1, n / 2, k / 2, 1.0, a, strided, false, NULL, c, n, 1, &s));
  /* a bias needs C's columns unit-strided (no transposed orientation) */
  CHECK(!weft__gemv(kt, WEFT_FLOAT32, 50, 2, k, 1.0, b, a, false, bias, c, 1, 50, &s));
  free(x);
  free(w);
  free(bias);
}

int main(void) {
  weft_set_num_threads(1);
  test_kernels();
  test_driver();
  test_transposed();
  test_bias_and_refusals();
  TEST_REPORT();
}
