/* f32 scan kernels (src/kernels/scan.c): every backend bit for bit against a
 * plain double-accumulating reference (PyTorch's cumsum/cumprod of float32)
 * at the sizes around the 4- and 8-column panels, with strided rows, in
 * place, NaN and infinities; nothing written past the last column. The
 * threaded runs are in test_reduce2.c (the op splits lines over the pool). */
#include <math.h>
#include <stdlib.h>

#include "kernel_test_util.h"
#include "test.h"

static void ref_scan(bool prod, size_t rows, size_t cols, const float* x, size_t ld, float* y, size_t yld) {
  for (size_t j = 0; j < cols; j++) {
    double acc = prod ? 1 : 0;
    for (size_t i = 0; i < rows; i++) {
      acc = prod ? acc * x[i * ld + j] : acc + x[i * ld + j];
      y[i * yld + j] = (float)acc;
    }
  }
}

static void fill(float* x, size_t n, bool prod, int trial) {
  for (size_t i = 0; i < n; i++) x[i] = prod ? kt_randf(0.5f, 1.5f) : kt_randf(-10.0f, 10.0f);
  if (trial == 1 && n > 2) x[kt_rand() % n] = NAN;
  if (trial == 2 && n > 2) x[kt_rand() % n] = INFINITY, x[kt_rand() % n] = -INFINITY;
}

static void test_rows(bool prod) {
  size_t rows_list[] = {1, 2, 3, 17, 128};
  size_t cols_list[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 33};
  for (size_t ri = 0; ri < 5; ri++)
    for (size_t ci = 0; ci < 13; ci++)
      for (int trial = 0; trial < 3; trial++) {
        size_t rows = rows_list[ri], cols = cols_list[ci], ld = cols + 3, yld = cols + 2;
        float* x = malloc(rows * ld * sizeof(float));
        float* want = malloc(rows * yld * sizeof(float));
        float* y = malloc(rows * yld * sizeof(float));
        fill(x, rows * ld, prod, trial);
        for (size_t i = 0; i < rows * yld; i++) want[i] = -7.0f;
        ref_scan(prod, rows, cols, x, ld, want, yld);
        for (int b = 0; b < KT_NBACKENDS; b++) {
          const weft_kernels* k = kt_backend(b);
          for (size_t i = 0; i < rows * yld; i++) y[i] = -7.0f;
          (prod ? k->f32_vcumprod_rows : k->f32_vcumsum_rows)(rows, cols, x, ld * 4, y, yld * 4);
          int bad = 0;
          for (size_t i = 0; i < rows * yld; i++) bad += !kt_same_f32(y[i], want[i]); /* padding untouched too */
          CHECK_EQ_I64(bad, 0);
        }
        /* in place, rows contiguous */
        for (int b = 0; b < KT_NBACKENDS; b++) {
          float* z = malloc(rows * ld * sizeof(float));
          memcpy(z, x, rows * ld * sizeof(float));
          (prod ? kt_backend(b)->f32_vcumprod_rows : kt_backend(b)->f32_vcumsum_rows)(rows, cols, z, ld * 4, z,
                                                                                     ld * 4);
          int bad = 0;
          for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < cols; j++) bad += !kt_same_f32(z[i * ld + j], want[i * yld + j]);
          CHECK_EQ_I64(bad, 0);
          free(z);
        }
        free(x);
        free(want);
        free(y);
      }
}

static void test_line(bool prod) {
  for (size_t s = 0; s < KT_NSIZES; s++)
    for (size_t st = 1; st <= 3; st += 2)
      for (int trial = 0; trial < 3; trial++) {
        size_t n = kt_sizes[s];
        float* x = malloc(n * st * sizeof(float));
        float* want = malloc(n * sizeof(float));
        float* y = malloc(n * sizeof(float));
        fill(x, n * st, prod, trial);
        ref_scan(prod, n, 1, x, st, want, 1);
        for (int b = 0; b < KT_NBACKENDS; b++) {
          (prod ? kt_backend(b)->f32_cumprod : kt_backend(b)->f32_cumsum)(n, x, st * 4, y, 4);
          int bad = 0;
          for (size_t i = 0; i < n; i++) bad += !kt_same_f32(y[i], want[i]);
          CHECK_EQ_I64(bad, 0);
        }
        free(x);
        free(want);
        free(y);
      }
}

int main(void) {
  for (int prod = 0; prod < 2; prod++) {
    test_rows(prod);
    test_line(prod);
  }
  TEST_REPORT();
}
