/* Depthwise convolution kernels (groups == channels): each output is a sum
 * over the kernel's taps of one input channel times one weight, so there is
 * no reduction over channels to hand to the GEMM. The driver
 * (src/ops/cpu/conv.c) resolves padding into the tap pointers; these
 * kernels see only pointers and counts (XNNPACK's f32-dwconv "indirection"
 * idea, src/f32-dwconv/).
 *
 * nhwc (float64): one output pixel, over its c channels:
 *   y[j] = bias[j] + sum_t w[t * c + j] * x[t][j]      (bias NULL: 0)
 *   x[t] is the tap's input pixel (c contiguous channels) or a zero row.
 * nhwc_px (float32): n such pixels in one call, vectorized over the
 *   channels, the conv epilogue in the store.
 * row (NCHW): n outputs along one output row of one channel plane,
 * vectorized over the width when xs == 1:
 *   y[i] = bias + sum_t w[t] * x[t][i * xs]
 *
 * wgrad (NCHW, the weight's gradient of one input channel): over one
 * plane of ho x wo output gradients gy,
 *   acc[t] += sum over i, j of gy[i * wo + j] * x[t][i * xr + j * xs]
 *   x[t] is tap t's first input value in a (padded) input plane.
 *
 * Taps accumulate in tap order on every backend (no FMA), so scalar and SIMD
 * results are bitwise equal (wgrad: the same lanes and the same final sum of
 * them on every backend). f64 kernels are plain C (no f64 lanes in the
 * vector layer). */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

/* px: pixels two at a time, each tap's weights loaded once for both; the
 * epilogue (residual, clamp) applied to the sums in registers before the
 * store. Channels past the last multiple of 8 as partial vectors. */
static inline wv128 dw_finish(wv128 a, const float* r, size_t nb, wv128 lo, wv128 hi) {
  if (r) a = wv_f32x4_add(a, nb == 16 ? wv_v128_load(r) : wv_v128_load_partial(r, nb));
  return wv_f32x4_clamp(a, lo, hi);
}

/* one pixel's channels [j, c) (fewer than 8 left, or a pixel without a
 * partner: an odd output width's last one, each row of a 7x7 map), whole
 * vectors while 4 channels remain (a partial one goes through the stack) */
static void dw_px_one(size_t j, size_t c, size_t taps, const float* const* x, const float* w, const float* bias,
                      const float* r, float* y, wv128 lo, wv128 hi) {
  for (; j + 4 <= c; j += 4) {
    wv128 a = bias ? wv_v128_load(bias + j) : wv_v128_zero();
    const float* wt = w + j;
    for (size_t t = 0; t < taps; t++, wt += c) a = wv_f32x4_muladd(wv_v128_load(x[t] + j), wv_v128_load(wt), a);
    wv_v128_store(y + j, dw_finish(a, r ? r + j : NULL, 16, lo, hi));
  }
  for (; j < c; j += 4) {
    size_t nb = (c - j < 4 ? c - j : 4) * sizeof(float);
    wv128 a = bias ? wv_v128_load_partial(bias + j, nb) : wv_v128_zero();
    const float* wt = w + j;
    for (size_t t = 0; t < taps; t++, wt += c)
      a = wv_f32x4_muladd(wv_v128_load_partial(x[t] + j, nb), wv_v128_load_partial(wt, nb), a);
    wv_v128_store_partial(y + j, dw_finish(a, r ? r + j : NULL, nb, lo, hi), nb);
  }
}

void WEFT_UKERNEL(f32_dwconv_nhwc_px, u8)(size_t n, size_t c, size_t taps, const float* const* x, const float* w,
                                          const float* bias, const float* r, float* y,
                                          const struct weft_f32_clamp_params* p) {
  const wv128 lo = wv_f32x4_splat(p->lo), hi = wv_f32x4_splat(p->hi);
  size_t q = 0;
  for (; q + 2 <= n; q += 2, x += 2 * taps, y += 2 * c, r = r ? r + 2 * c : NULL) {
    const float* const* x1 = x + taps;
    size_t j = 0;
    for (; j + 8 <= c; j += 8) {
      wv128 a0 = bias ? wv_v128_load(bias + j) : wv_v128_zero();
      wv128 a1 = bias ? wv_v128_load(bias + j + 4) : wv_v128_zero();
      wv128 b0 = a0, b1 = a1;
      const float* wt = w + j;
      for (size_t t = 0; t < taps; t++, wt += c) {
        const wv128 w0 = wv_v128_load(wt), w1 = wv_v128_load(wt + 4);
        a0 = wv_f32x4_muladd(wv_v128_load(x[t] + j), w0, a0);
        a1 = wv_f32x4_muladd(wv_v128_load(x[t] + j + 4), w1, a1);
        b0 = wv_f32x4_muladd(wv_v128_load(x1[t] + j), w0, b0);
        b1 = wv_f32x4_muladd(wv_v128_load(x1[t] + j + 4), w1, b1);
      }
      const float* r1 = r ? r + c + j : NULL;
      wv_v128_store(y + j, dw_finish(a0, r ? r + j : NULL, 16, lo, hi));
      wv_v128_store(y + j + 4, dw_finish(a1, r ? r + j + 4 : NULL, 16, lo, hi));
      wv_v128_store(y + c + j, dw_finish(b0, r1, 16, lo, hi));
      wv_v128_store(y + c + j + 4, dw_finish(b1, r1 ? r1 + 4 : NULL, 16, lo, hi));
    }
    dw_px_one(j, c, taps, x, w, bias, r, y, lo, hi);
    dw_px_one(j, c, taps, x1, w, bias, r ? r + c : NULL, y + c, lo, hi);
  }
  if (q < n) dw_px_one(0, c, taps, x, w, bias, r, y, lo, hi);
}

void WEFT_UKERNEL(f32_dwconv_row, u8)(size_t n, size_t taps, const float* const* x, size_t xs, const float* w,
                                      float bias, float* y) {
  size_t i = 0;
  if (xs == 1) {
    const wv128 vb = wv_f32x4_splat(bias);
    for (; i + 8 <= n; i += 8) {
      wv128 a0 = vb, a1 = vb;
      for (size_t t = 0; t < taps; t++) {
        const wv128 vw = wv_f32x4_splat(w[t]);
        a0 = wv_f32x4_muladd(wv_v128_load(x[t] + i), vw, a0);
        a1 = wv_f32x4_muladd(wv_v128_load(x[t] + i + 4), vw, a1);
      }
      wv_v128_store(y + i, a0);
      wv_v128_store(y + i + 4, a1);
    }
    for (; i + 4 <= n; i += 4) {
      wv128 a = vb;
      for (size_t t = 0; t < taps; t++) a = wv_f32x4_muladd(wv_v128_load(x[t] + i), wv_f32x4_splat(w[t]), a);
      wv_v128_store(y + i, a);
    }
  }
  for (; i < n; i++) {
    float a = bias;
    for (size_t t = 0; t < taps; t++) a = x[t][i * xs] * w[t] + a;
    y[i] = a;
  }
}

void WEFT_UKERNEL(f64_dwconv_nhwc, u1)(size_t c, size_t taps, const double* const* x, const double* w,
                                       const double* bias, double* y) {
  for (size_t j = 0; j < c; j++) {
    double a = bias ? bias[j] : 0.0;
    for (size_t t = 0; t < taps; t++) a = x[t][j] * w[t * c + j] + a;
    y[j] = a;
  }
}

void WEFT_UKERNEL(f64_dwconv_row, u1)(size_t n, size_t taps, const double* const* x, size_t xs, const double* w,
                                      double bias, double* y) {
  for (size_t i = 0; i < n; i++) {
    double a = bias;
    for (size_t t = 0; t < taps; t++) a = x[t][i * xs] * w[t] + a;
    y[i] = a;
  }
}

/* wgrad_taps<NT>: NT taps at once (NT a constant, so the accumulators stay
 * in registers), sharing each output-gradient load; per tap, column blocks
 * outer and rows inner (a block's loop carries no width checks): 8 columns
 * in two vector sums, then 4 in one, the columns left (every column at
 * xs > 1) in a scalar sum; all added to acc[t] in a fixed order, the same
 * for any NT. */
#define DEF_WGRAD_TAPS(NT)                                                                                     \
static void wgrad_taps##NT(size_t ho, size_t wo, const float* const* x, size_t xr, size_t xs, const float* gy, \
                          float* acc) {                                                                        \
  wv128 a[NT][2];                                                                                              \
  float s[NT];                                                                                                 \
  for (size_t k = 0; k < NT; k++) a[k][0] = a[k][1] = wv_v128_zero(), s[k] = 0.0f;                             \
  size_t j = 0;                                                                                                \
  if (xs == 1) {                                                                                               \
    for (; j + 8 <= wo; j += 8) {                                                                              \
      const float* gi = gy + j;                                                                                \
      for (size_t i = 0, xo = j; i < ho; i++, gi += wo, xo += xr) {                                            \
        const wv128 g0 = wv_v128_load(gi), g1 = wv_v128_load(gi + 4);                                          \
        for (size_t k = 0; k < NT; k++) {                                                                      \
          a[k][0] = wv_f32x4_muladd(g0, wv_v128_load(x[k] + xo), a[k][0]);                                     \
          a[k][1] = wv_f32x4_muladd(g1, wv_v128_load(x[k] + xo + 4), a[k][1]);                                 \
        }                                                                                                      \
      }                                                                                                        \
    }                                                                                                          \
    for (; j + 4 <= wo; j += 4) {                                                                              \
      const float* gi = gy + j;                                                                                \
      for (size_t i = 0, xo = j; i < ho; i++, gi += wo, xo += xr) {                                            \
        const wv128 g0 = wv_v128_load(gi);                                                                     \
        for (size_t k = 0; k < NT; k++) a[k][0] = wv_f32x4_muladd(g0, wv_v128_load(x[k] + xo), a[k][0]);       \
      }                                                                                                        \
    }                                                                                                          \
  }                                                                                                            \
  for (; j < wo; j++)                                                                                          \
    for (size_t i = 0; i < ho; i++)                                                                            \
      for (size_t k = 0; k < NT; k++) s[k] = gy[i * wo + j] * x[k][i * xr + j * xs] + s[k];                    \
  for (size_t k = 0; k < NT; k++) {                                                                            \
    float l[4];                                                                                                \
    wv_v128_store(l, wv_f32x4_add(a[k][0], a[k][1]));                                                          \
    acc[k] += ((l[0] + l[1]) + (l[2] + l[3])) + s[k];                                                          \
  }                                                                                                            \
}
DEF_WGRAD_TAPS(1)
DEF_WGRAD_TAPS(3)

void WEFT_UKERNEL(f32_dwconv_wgrad, u8)(size_t ho, size_t wo, size_t taps, const float* const* x, size_t xr,
                                        size_t xs, const float* gy, float* acc) {
  size_t t = 0;
  for (; t + 3 <= taps; t += 3) wgrad_taps3(ho, wo, x + t, xr, xs, gy, acc + t);
  for (; t < taps; t++) wgrad_taps1(ho, wo, x + t, xr, xs, gy, acc + t);
}

void WEFT_UKERNEL(f64_dwconv_wgrad, u1)(size_t ho, size_t wo, size_t taps, const double* const* x, size_t xr,
                                        size_t xs, const double* gy, double* acc) {
  for (size_t t = 0; t < taps; t++) {
    double s = 0.0;
    for (size_t i = 0; i < ho; i++)
      for (size_t j = 0; j < wo; j++) s = gy[i * wo + j] * x[t][i * xr + j * xs] + s;
    acc[t] += s;
  }
}
