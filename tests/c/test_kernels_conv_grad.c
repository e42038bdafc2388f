/* The backward pass's kernels (issue 15): f32_dwconv_wgrad (the weight's
 * gradient of one input channel, src/kernels/conv.c) against a double
 * reference, bit for bit between the best backend and the scalar one, at
 * stride 1 (the vector path) and 2, widths around the 4- and 8-lane blocks,
 * accumulating onto acc; f64_dwconv_wgrad against the same reference.
 * f32_maxpool_cw_idx (max pooling with indices along an NCHW row,
 * src/kernels/pool.c) on every backend against a one-window-at-a-time
 * reference written here: values and indices, at strides 1, 2 and 3 with
 * and without dilation, odd and even kw, ties, NaNs (the last NaN's index
 * wins), -inf windows and an empty window. The threaded drivers over them
 * are tested in test_conv_grad.c and test_pool.c (the same bits at 1 and 3
 * threads). */
#include <math.h>
#include <stdlib.h>

#include "kernel_test_util.h"
#include "test.h"

/* ---- dwconv_wgrad ---- */

static double ref_wgrad(size_t ho, size_t wo, const float* x, size_t xr, size_t xs, const float* gy) {
  double s = 0;
  for (size_t i = 0; i < ho; i++)
    for (size_t j = 0; j < wo; j++) s += (double)gy[i * wo + j] * x[i * xr + j * xs];
  return s;
}

static void test_wgrad(void) {
  const size_t wos[] = {1, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31};
  const size_t hos[] = {1, 2, 5, 8};
  for (size_t a = 0; a < sizeof wos / sizeof wos[0]; a++)
    for (size_t b = 0; b < sizeof hos / sizeof hos[0]; b++)
      for (size_t xs = 1; xs <= 2; xs++) {
        size_t wo = wos[a], ho = hos[b], kh = 3, kw = 2, taps = kh * kw;
        size_t xr = (wo - 1) * xs + kw + 3, rows = ho + kh; /* a plane with room for every tap */
        float* x = malloc(rows * xr * sizeof(float));
        float* gy = malloc(ho * wo * sizeof(float));
        double* xd = malloc(rows * xr * sizeof(double));
        double* gyd = malloc(ho * wo * sizeof(double));
        for (size_t i = 0; i < rows * xr; i++) xd[i] = x[i] = kt_randf(-1.0f, 1.0f);
        for (size_t i = 0; i < ho * wo; i++) gyd[i] = gy[i] = kt_randf(-1.0f, 1.0f);
        const float* ptr[6];
        const double* ptrd[6];
        for (size_t t = 0; t < taps; t++) ptr[t] = x + t / kw * xr + t % kw, ptrd[t] = xd + t / kw * xr + t % kw;
        float got[2][6];
        for (int k = 0; k < KT_NBACKENDS; k++) {
          for (size_t t = 0; t < taps; t++) got[k][t] = 0.25f * (float)t; /* it accumulates */
          kt_backend(k)->f32_dwconv_wgrad(ho, wo, taps, ptr, xr, xs, gy, got[k]);
        }
        double gotd[6];
        for (size_t t = 0; t < taps; t++) gotd[t] = 0.25 * (double)t;
        weft__kernels()->f64_dwconv_wgrad(ho, wo, taps, ptrd, xr, xs, gyd, gotd);
        int bad = 0;
        for (size_t t = 0; t < taps; t++) {
          double want = 0.25 * (double)t + ref_wgrad(ho, wo, ptr[t], xr, xs, gy);
          bad += fabs(got[0][t] - want) > 1e-5 * (double)(ho * wo) + 1e-6;
          bad += !kt_same_f32(got[0][t], got[1][t]);
          bad += fabs(gotd[t] - want) > 1e-12 * (double)(ho * wo);
        }
        CHECK_EQ_I64(bad, 0);
        free(x), free(gy), free(xd), free(gyd);
      }
}

/* ---- maxpool_cw_idx ---- */

typedef struct {
  size_t kh, kw, sw, dw, dh;
} pool_case;

/* output j's window: rows r * dh, columns j * sw + q * dw of a plane w wide */
static void ref_pool(const pool_case* c, size_t n, const float* x, size_t w, int64_t i0, float* y, int64_t* idx) {
  for (size_t j = 0; j < n; j++) {
    float m = -INFINITY;
    int64_t mi = i0 + (int64_t)(j * c->sw);
    for (size_t r = 0; r < c->kh; r++)
      for (size_t q = 0; q < c->kw; q++) {
        size_t at = r * c->dh * w + j * c->sw + q * c->dw;
        if (x[at] > m || x[at] != x[at]) m = x[at], mi = i0 + (int64_t)at;
      }
    y[j] = m, idx[j] = mi;
  }
}

static void test_pool_idx(void) {
  const pool_case cases[] = {{2, 2, 2, 1, 1}, {3, 3, 2, 1, 1}, {3, 3, 1, 1, 1}, {2, 3, 1, 2, 2}, {3, 2, 3, 1, 1},
                             {1, 5, 2, 1, 1}, {2, 2, 2, 2, 1}, {0, 2, 2, 1, 1}};
  const size_t ns[] = {1, 3, 4, 5, 8, 9, 13};
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
      for (int trial = 0; trial < 4; trial++) {
        const pool_case* c = &cases[ci];
        size_t n = ns[ni], w = (n - 1) * c->sw + (c->kw ? c->kw - 1 : 0) * c->dw + 1, h = c->kh * c->dh + 1;
        float* x = malloc(h * w * sizeof(float));
        for (size_t i = 0; i < h * w; i++) /* trial 1: few values (ties); 2: NaNs; 3: -inf */
          x[i] = trial == 1 ? (float)(kt_rand() % 3) : trial == 3 ? -INFINITY : kt_randf(-1.0f, 1.0f);
        if (trial == 2)
          for (int k = 0; k < 3; k++) x[kt_rand() % (h * w)] = NAN;
        float want[16], y[16];
        int64_t wi[16], yi[16];
        const int64_t i0 = 7;
        ref_pool(c, n, x, w, i0, want, wi);
        struct weft_f32_pool_params p = {0};
        p.kh = c->kh, p.kw = c->kw, p.sw = c->sw, p.dw = c->dw;
        p.rs = c->dh * w * sizeof(float);
        p.i0 = i0, p.istep = (int64_t)c->sw, p.irs = (int64_t)(c->dh * w), p.ics = (int64_t)c->dw;
        for (int b = 0; b < KT_NBACKENDS; b++) {
          for (size_t j = 0; j < 16; j++) y[j] = 5.0f, yi[j] = -9;
          kt_backend(b)->f32_maxpool_cw_idx(n, x, y, yi, &p);
          int bad = 0;
          for (size_t j = 0; j < n; j++) bad += !kt_same_f32(y[j], want[j]) || yi[j] != wi[j];
          for (size_t j = n; j < 16; j++) bad += y[j] != 5.0f || yi[j] != -9; /* nothing past n */
          CHECK_EQ_I64(bad, 0);
        }
        free(x);
      }
}

int main(void) {
  test_wgrad();
  test_pool_idx();
  TEST_REPORT();
}
