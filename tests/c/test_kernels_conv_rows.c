/* The conv drivers' run kernels (src/kernels/conv_rows.c, conv.c):
 *   - f32_gemm_4x8_rows: m rows in one call against f32_gemm_4x8 called on
 *     each group of 4 (its definition), bit for bit, on the best backend
 *     and the scalar one, A in place (lda) and packed, accumulating or
 *     with a bias or neither, clamped or not, nc 1..8, m across the 4-row
 *     groups, alpha 1 and not;
 *   - f32_dwconv_nhwc_px: a run of pixels against a plain C reference (the
 *     taps in order, multiply then add, then the residual, then
 *     PyTorch's clamp), bit for bit on both backends: odd and even runs
 *     (the pixel pairs and the last one alone), channels around the 8- and
 *     4-lane blocks, with and without bias and residual, relu / relu6 /
 *     none, NaN kept.
 * The threaded drivers over them (1 and 2 threads, every algorithm, against
 * the unfused composition) are test_conv_fused.c's and test_conv.c's. */
#include <math.h>
#include <stdlib.h>

#include "kernel_test_util.h"
#include "test.h"

/* ---- f32_gemm_4x8_rows ---- */

static int rows_case(size_t m, size_t nc, size_t kc, int packed, int acc, int with_bias, int clamp, float alpha) {
  size_t lda = kc + 3, cs = 11;
  size_t groups = (m + 3) / 4;
  float* a = malloc(sizeof(float) * (packed ? groups * 4 * kc : m * lda) + 4);
  float* b = malloc(sizeof(float) * kc * 8 + 4);
  float bias[8], c0[20 * 11];
  float got[KT_NBACKENDS][20 * 11], want[KT_NBACKENDS][20 * 11];
  for (size_t i = 0; i < (packed ? groups * 4 * kc : m * lda); i++) a[i] = kt_randf(-2, 2);
  for (size_t i = 0; i < kc * 8; i++) b[i] = kt_randf(-2, 2);
  for (int j = 0; j < 8; j++) bias[j] = kt_randf(-1, 1);
  for (size_t i = 0; i < 20 * 11; i++) c0[i] = kt_randf(-3, 3);
  c0[0] = NAN, c0[1] = -0.0f;
  const struct weft_f32_gemm_params p = {alpha, acc, clamp, 0.0f, 6.0f, with_bias ? bias : NULL, packed ? 0 : lda};
  int bad = 0;
  for (int k = 0; k < KT_NBACKENDS; k++) {
    memcpy(got[k], c0, sizeof c0);
    memcpy(want[k], c0, sizeof c0);
    kt_backend(k)->f32_gemm_4x8_rows(m, nc, kc, a, b, got[k], cs, &p);
    for (size_t i = 0; i < m; i += 4)
      kt_backend(k)->f32_gemm_4x8(m - i < 4 ? m - i : 4, nc, kc, packed ? a + i * kc : a + i * lda, b, want[k] + i * cs,
                                  cs, &p);
    for (size_t i = 0; i < 20 * 11; i++) bad += !kt_same_f32(got[k][i], want[k][i]);
  }
  for (size_t i = 0; i < 20 * 11; i++) bad += !kt_same_f32(got[0][i], got[1][i]);
  free(a);
  free(b);
  return bad;
}

static void test_gemm_rows(void) {
  const size_t ms[] = {1, 3, 4, 5, 8, 13, 16, 20};
  const size_t kcs[] = {1, 3, 16, 24, 33};
  int bad = 0;
  for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
    for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++)
      for (size_t nc = 1; nc <= 8; nc++)
        for (int form = 0; form < 12; form++)
          bad += rows_case(ms[mi], nc, kcs[ki], form & 1, form >> 1 & 1, form >> 2 == 1, form >> 2 == 2,
                           nc == 5 && form == 3 ? 0.5f : 1.0f);
  CHECK_EQ_I64(bad, 0);
}

/* ---- f32_dwconv_nhwc_px ---- */

static float ref_clamp(float v, float lo, float hi) {
  float c = v < lo ? lo : v; /* std::min(std::max(v, lo), hi): NaN and -0 stay */
  return hi < c ? hi : c;
}

static void test_dwconv_px(void) {
  const size_t cs[] = {1, 3, 4, 5, 8, 9, 16, 17, 24, 30};
  const struct weft_f32_clamp_params bounds[3] = {{0.0f, INFINITY}, {0.0f, 6.0f}, {-INFINITY, INFINITY}};
  enum { TAPS = 9, NMAX = 7, CMAX = 30 };
  int bad = 0;
  for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
    for (size_t n = 1; n <= NMAX; n++)
      for (int form = 0; form < 12; form++) {
        size_t c = cs[ci];
        int with_bias = form & 1, with_r = form >> 1 & 1;
        const struct weft_f32_clamp_params* bd = &bounds[form >> 2];
        /* a pool of input pixels; each output pixel's taps pick some of them */
        float pool[12 * CMAX], w[TAPS * CMAX], bias[CMAX], r[NMAX * CMAX];
        for (size_t i = 0; i < 12 * CMAX; i++) pool[i] = kt_randf(-2, 2);
        for (size_t i = 0; i < TAPS * CMAX; i++) w[i] = kt_randf(-1, 1);
        for (size_t i = 0; i < CMAX; i++) bias[i] = kt_randf(-1, 1);
        for (size_t i = 0; i < NMAX * CMAX; i++) r[i] = kt_randf(-2, 2);
        pool[CMAX + 2] = NAN;
        const float* x[NMAX * TAPS];
        for (size_t i = 0; i < n * TAPS; i++) x[i] = pool + (kt_rand() % 12) * CMAX;
        float got[KT_NBACKENDS][NMAX * CMAX + 1];
        for (int k = 0; k < KT_NBACKENDS; k++) {
          for (size_t i = 0; i < NMAX * CMAX + 1; i++) got[k][i] = 99.0f;
          kt_backend(k)->f32_dwconv_nhwc_px(n, c, TAPS, x, w, with_bias ? bias : NULL, with_r ? r : NULL, got[k], bd);
        }
        for (size_t q = 0; q < n; q++)
          for (size_t j = 0; j < c; j++) {
            float a = with_bias ? bias[j] : 0.0f;
            for (size_t t = 0; t < TAPS; t++) a = x[q * TAPS + t][j] * w[t * c + j] + a;
            if (with_r) a = a + r[q * c + j];
            float want = ref_clamp(a, bd->lo, bd->hi);
            for (int k = 0; k < KT_NBACKENDS; k++) bad += !kt_same_f32(got[k][q * c + j], want);
          }
        for (int k = 0; k < KT_NBACKENDS; k++) bad += got[k][n * c] != 99.0f; /* nothing past the run */
      }
  CHECK_EQ_I64(bad, 0);
}

int main(void) {
  test_gemm_rows();
  test_dwconv_px();
  TEST_REPORT();
}
