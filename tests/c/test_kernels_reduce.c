/* f32 reduction kernels: every backend against a float64 reference and
 * bit for bit against the scalar backend (the same cascade on every
 * backend), at the tile sizes and around them; NaN and signed zeros for
 * max/min; the accuracy cases (16,777,217 ones; 10^7 uniform values).
 * The sums of x*x and |x| (norm's rsumsq / rasum / vsumsq_rows /
 * vasum_rows) run through the same tests as the plain sums. softmax's
 * f32_rexpsum: exp(x - c) stored and summed, against double exp, the same
 * bits on every backend, the same sum with and without storing, and the
 * special values (NaN, -inf, c = -inf, results below 2^-126 flushed). */
#include <math.h>
#include <stdlib.h>

#include "kernel_test_util.h"
#include "test.h"

#define MAXN 100003

/* the three sum kernels of each shape: x, x*x, |x| */
enum { XF_ID, XF_SQ, XF_ABS };
static double xf(int k, double v) { return k == XF_SQ ? v * v : k == XF_ABS ? fabs(v) : v; }
static weft_f32_rsum_fn* rsum_of(const weft_kernels* t, int k) {
  return k == XF_SQ ? t->f32_rsumsq : k == XF_ABS ? t->f32_rasum : t->f32_rsum;
}
static weft_f32_vsum_rows_fn* vsum_rows_of(const weft_kernels* t, int k) {
  return k == XF_SQ ? t->f32_vsumsq_rows : k == XF_ABS ? t->f32_vasum_rows : t->f32_vsum_rows;
}

static void test_rsum(int k) {
  float* x = malloc(MAXN * sizeof(float));
  for (size_t i = 0; i < MAXN; i++) x[i] = kt_randf(-1.0f, 1.0f);
  size_t extra[] = {4095, 4096, 4097, 65537, MAXN};
  for (size_t s = 0; s < KT_NSIZES + 5; s++) {
    size_t n = s < KT_NSIZES ? kt_sizes[s] : extra[s - KT_NSIZES];
    double ref = 0, mag = 0;
    for (size_t i = 0; i < n; i++) ref += xf(k, x[i]), mag += fabs(xf(k, x[i]));
    float scalar = rsum_of(weft__kernels_scalar(), k)(n, x);
    for (int b = 0; b < KT_NBACKENDS; b++) {
      float got = rsum_of(kt_backend(b), k)(n, x);
      CHECK(fabs(got - ref) <= 1e-6 * mag + 1e-7);
      CHECK(kt_same_f32(got, scalar));
    }
  }
  free(x);
}

static void test_rsum_accuracy(void) {
  size_t n = 16777217;
  float* x = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) x[i] = 1.0f;
  for (int b = 0; b < KT_NBACKENDS; b++) CHECK(kt_backend(b)->f32_rsum(n, x) == 16777216.0f); /* torch's */
  n = 10000000;
  double ref = 0;
  for (size_t i = 0; i < n; i++) ref += (x[i] = kt_randf(0.0f, 1.0f));
  for (int b = 0; b < KT_NBACKENDS; b++) {
    float got = kt_backend(b)->f32_rsum(n, x);
    CHECK(fabs(got - ref) / ref < 1e-6); /* naive float summation is off by ~1e-3 here */
  }
  free(x);
}


static void test_rminmax(void) {
  float x[1100];
  for (size_t s = 0; s < KT_NSIZES; s++) {
    size_t n = kt_sizes[s];
    for (int trial = 0; trial < 4; trial++) {
      for (size_t i = 0; i < n; i++) x[i] = kt_randf(-5.0f, 5.0f);
      if (trial == 1) x[kt_rand() % n] = NAN;
      if (trial == 2) for (size_t i = 0; i < n; i++) x[i] = (kt_rand() & 1) ? 0.0f : -0.0f;
      if (trial == 3) x[n - 1] = INFINITY;
      float mx = x[0], mn = x[0];
      for (size_t i = 1; i < n; i++) mx = kt_ref_max(mx, x[i]), mn = kt_ref_min(mn, x[i]);
      for (int b = 0; b < KT_NBACKENDS; b++) {
        CHECK(kt_same_f32(kt_backend(b)->f32_rmax(n, x), mx));
        CHECK(kt_same_f32(kt_backend(b)->f32_rmin(n, x), mn));
      }
    }
  }
}

static void test_vsum_rows(int k) {
  size_t rows_list[] = {1, 2, 3, 127, 128, 129, 300};
  size_t cols_list[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33};
  for (size_t ri = 0; ri < 7; ri++)
    for (size_t ci = 0; ci < 12; ci++) {
      size_t rows = rows_list[ri], cols = cols_list[ci], ld = cols + 3;
      float* x = malloc(rows * ld * sizeof(float));
      float y[40], y0[40], ys[40];
      for (size_t i = 0; i < rows * ld; i++) x[i] = kt_randf(-1.0f, 1.0f);
      for (size_t j = 0; j < cols + 2; j++) y0[j] = kt_randf(-1.0f, 1.0f);
      memcpy(ys, y0, sizeof y0);
      vsum_rows_of(weft__kernels_scalar(), k)(rows, cols, x, ld * 4, ys);
      for (int b = 0; b < KT_NBACKENDS; b++) {
        memcpy(y, y0, sizeof y0);
        vsum_rows_of(kt_backend(b), k)(rows, cols, x, ld * 4, y);
        int bad = 0;
        for (size_t j = 0; j < cols; j++) {
          double ref = y0[j];
          for (size_t r = 0; r < rows; r++) ref += xf(k, x[r * ld + j]);
          if (fabs(y[j] - ref) > 1e-5 * (double)(rows + 1)) bad++;
          if (!kt_same_f32(y[j], ys[j])) bad++;
        }
        for (size_t j = cols; j < cols + 2; j++) bad += y[j] != y0[j]; /* nothing past the end */
        CHECK_EQ_I64(bad, 0);
      }
      free(x);
    }
}

static void test_rexpsum(void) {
  float* x = malloc(MAXN * sizeof(float));
  float* y = malloc((MAXN + 1) * sizeof(float)); /* + a guard */
  float* ys = malloc(MAXN * sizeof(float));
  for (size_t i = 0; i < MAXN; i++) x[i] = kt_randf(-30.0f, 5.0f);
  size_t extra[] = {4095, 4097, 65537, MAXN};
  for (size_t s = 0; s < KT_NSIZES + 4; s++) {
    size_t n = s < KT_NSIZES ? kt_sizes[s] : extra[s - KT_NSIZES];
    float c = 5.0f;
    double ref = 0;
    for (size_t i = 0; i < n; i++) ref += exp((double)x[i] - c);
    float scalar = weft__kernels_scalar()->f32_rexpsum(n, x, c, ys);
    for (int b = 0; b < KT_NBACKENDS; b++) {
      y[n] = 42.0f;
      float got = kt_backend(b)->f32_rexpsum(n, x, c, y);
      CHECK(fabs(got - ref) <= 1e-6 * ref);
      CHECK(kt_same_f32(got, scalar));
      CHECK(kt_same_f32(kt_backend(b)->f32_rexpsum(n, x, c, NULL), got));
      CHECK(y[n] == 42.0f); /* nothing past the end */
      int bad = 0;
      for (size_t i = 0; i < n; i++) {
        double e = exp((double)(x[i] - c)); /* the float difference is the kernel's input */
        bad += fabs(y[i] - e) > 2.4e-7 * e || !kt_same_f32(y[i], ys[i]);
      }
      CHECK_EQ_I64(bad, 0);
    }
  }
  /* NaN stays NaN; -inf and anything below ln(2^-126) give 0; x = c gives 1 */
  float sp[] = {0.0f, -INFINITY, NAN, -87.0f, -87.4f, -200.0f, -1e30f, 0.0f, -0.5f};
  float expect[] = {1.0f, 0.0f, NAN, expf(-87.0f), 0.0f, 0.0f, 0.0f, 1.0f, expf(-0.5f)};
  for (int b = 0; b < KT_NBACKENDS; b++) {
    float out[9];
    float sum = kt_backend(b)->f32_rexpsum(9, sp, 0.0f, out);
    CHECK(sum != sum);
    for (int i = 0; i < 9; i++) CHECK(isnan(expect[i]) ? isnan(out[i]) : fabsf(out[i] - expect[i]) <= 2.4e-7f * expect[i]);
    /* a row of -inf: -inf - -inf is NaN, as PyTorch's softmax gives */
    float ninf[3] = {-INFINITY, -INFINITY, -INFINITY};
    CHECK(isnan(kt_backend(b)->f32_rexpsum(3, ninf, -INFINITY, NULL)));
  }
  free(x);
  free(y);
  free(ys);
}

/* softmax / log_softmax down columns: every width 1..64 (partial vectors),
 * against double, the same bits on every backend, nothing written past w */
static void test_softmax_cols(void) {
  size_t len = 37, xs = 70, ys = 67;
  float* x = malloc(len * xs * sizeof(float));
  float* y = malloc(len * ys * sizeof(float));
  float* ys0 = malloc(len * ys * sizeof(float));
  for (size_t i = 0; i < len * xs; i++) x[i] = kt_randf(-20.0f, 20.0f);
  x[5 * xs + 3] = NAN; /* column 3 is all NaN */
  for (int lg = 0; lg <= 1; lg++)
    for (size_t w = 1; w <= 64; w++) {
      for (size_t i = 0; i < len * ys; i++) ys0[i] = -7.0f;
      weft__kernels_scalar()->f32_softmax_cols(len, w, x, xs, ys0, ys, lg);
      for (int b = 0; b < KT_NBACKENDS; b++) {
        for (size_t i = 0; i < len * ys; i++) y[i] = -7.0f;
        kt_backend(b)->f32_softmax_cols(len, w, x, xs, y, ys, lg);
        int bad = 0;
        for (size_t j = 0; j < w; j++) {
          double mx = -INFINITY, sum = 0;
          for (size_t r = 0; r < len; r++) mx = fmax(mx, x[r * xs + j]);
          /* the kernel's input is the float difference x - max */
#define DIFF(r) ((double)(x[(r) * xs + j] - (float)mx))
          for (size_t r = 0; r < len; r++) sum += exp(DIFF(r));
          for (size_t r = 0; r < len; r++) {
            float got = y[r * ys + j];
            bad += !kt_same_f32(got, ys0[r * ys + j]);
            if (j == 3 && w > 3) {
              bad += !isnan(got);
              continue;
            }
            double ref = lg ? DIFF(r) - log(sum) : exp(DIFF(r)) / sum;
            bad += fabs(got - ref) > (lg ? 1e-5 * (1 + fabs(ref)) : 1e-6 * ref + 1e-38);
          }
        }
        for (size_t r = 0; r < len; r++)
          for (size_t j = w; j < ys; j++) bad += y[r * ys + j] != -7.0f;
        CHECK_EQ_I64(bad, 0);
      }
    }
#undef DIFF
  free(x);
  free(y);
  free(ys0);
}

int main(void) {
  test_rexpsum();
  test_softmax_cols();
  for (int k = XF_ID; k <= XF_ABS; k++) {
    test_rsum(k);
    test_vsum_rows(k);
  }
  test_rsum_accuracy();
  test_rminmax();
  TEST_REPORT();
}
