/* Resizing kernels (interpolate): the weighted sums every mode but nearest
 * is made of. The driver (src/ops/cpu/resize.c) turns the output size and
 * scales into taps (an input index and a weight per output index and axis)
 * and hands these kernels pointers and weights only.
 *
 *   f32_resize_blend   y[j] = x[0][j] * w[0] + x[1][j] * w[1] + ... (k rows,
 *                      left to right): vectorized along j. NCHW: the vertical
 *                      pass over rows the horizontal pass made; NHWC: the
 *                      taps' pixels, j over channels.
 *   f32_resize_pixels  NHWC: n output pixels of c channels, pixel j the sum of
 *                      its k taps x[j*k + m] (pixels) times w[j*k + m]: one
 *                      call per output row; across channels (4 a vector), or
 *                      one channel at a time when c < 4 (an image's RGB).
 *   f32_resize_gather  the horizontal pass of one input row:
 *                      y[j] = x[idx[j*k]] * w[j*k] + ... + x[idx[j*k+k-1]] * w[j*k+k-1].
 *                      Gathers, which wasm SIMD has no instruction for: the
 *                      four lanes are loaded one by one and summed as vectors.
 *
 * Sums run in tap order with no FMA on every backend, so the scalar and
 * SIMD builds give the same bits (and PyTorch's order: the first tap a
 * product, then one add per tap). */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

void WEFT_UKERNEL(f32_resize_blend, u8)(size_t n, size_t k, const float* const* x, const float* w, float* y) {
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    wv128 w0 = wv_f32x4_splat(w[0]);
    wv128 a0 = wv_f32x4_mul(wv_v128_load(x[0] + j), w0), a1 = wv_f32x4_mul(wv_v128_load(x[0] + j + 4), w0);
    for (size_t m = 1; m < k; m++) {
      wv128 wm = wv_f32x4_splat(w[m]);
      a0 = wv_f32x4_add(a0, wv_f32x4_mul(wv_v128_load(x[m] + j), wm));
      a1 = wv_f32x4_add(a1, wv_f32x4_mul(wv_v128_load(x[m] + j + 4), wm));
    }
    wv_v128_store(y + j, a0);
    wv_v128_store(y + j + 4, a1);
  }
  for (; j < n; j += 4) { /* 1 to 7 left: partial vectors */
    size_t nb = (n - j < 4 ? n - j : 4) * sizeof(float);
    wv128 a = wv_f32x4_mul(wv_v128_load_partial(x[0] + j, nb), wv_f32x4_splat(w[0]));
    for (size_t m = 1; m < k; m++)
      a = wv_f32x4_add(a, wv_f32x4_mul(wv_v128_load_partial(x[m] + j, nb), wv_f32x4_splat(w[m])));
    wv_v128_store_partial(y + j, a, nb);
  }
}

static inline wv128 gather4(const float* x, const int64_t* idx, size_t k) {
  float v[4] = {x[idx[0]], x[idx[k]], x[idx[2 * k]], x[idx[3 * k]]};
  return wv_v128_load(v);
}

static inline wv128 weights4(const float* w, size_t k) {
  float v[4] = {w[0], w[k], w[2 * k], w[3 * k]};
  return wv_v128_load(v);
}

void WEFT_UKERNEL(f32_resize_gather, u4)(size_t n, size_t k, const float* x, const int64_t* idx, const float* w,
                                         float* y) {
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const int64_t* ij = idx + j * k;
    const float* wj = w + j * k;
    wv128 a = wv_f32x4_mul(gather4(x, ij, k), weights4(wj, k));
    for (size_t m = 1; m < k; m++) a = wv_f32x4_add(a, wv_f32x4_mul(gather4(x, ij + m, k), weights4(wj + m, k)));
    wv_v128_store(y + j, a);
  }
  for (; j < n; j++) {
    const int64_t* ij = idx + j * k;
    const float* wj = w + j * k;
    float a = x[ij[0]] * wj[0];
    for (size_t m = 1; m < k; m++) a += x[ij[m]] * wj[m];
    y[j] = a;
  }
}

void WEFT_UKERNEL(f32_resize_pixels, u4)(size_t n, size_t c, size_t k, const float* const* x, const float* w,
                                         float* y) {
  for (size_t j = 0; j < n; j++, x += k, w += k, y += c) {
    size_t i = 0;
    if (c >= 4) {
      for (; i + 4 <= c; i += 4) {
        wv128 a = wv_f32x4_mul(wv_v128_load(x[0] + i), wv_f32x4_splat(w[0]));
        for (size_t m = 1; m < k; m++) a = wv_f32x4_add(a, wv_f32x4_mul(wv_v128_load(x[m] + i), wv_f32x4_splat(w[m])));
        wv_v128_store(y + i, a);
      }
      if (i < c) { /* the last 4 channels again, overlapping: every lane's sum is the same */
        i = c - 4;
        wv128 a = wv_f32x4_mul(wv_v128_load(x[0] + i), wv_f32x4_splat(w[0]));
        for (size_t m = 1; m < k; m++) a = wv_f32x4_add(a, wv_f32x4_mul(wv_v128_load(x[m] + i), wv_f32x4_splat(w[m])));
        wv_v128_store(y + i, a);
      }
      continue;
    }
    for (; i < c; i++) {
      float a = x[0][i] * w[0];
      for (size_t m = 1; m < k; m++) a += x[m][i] * w[m];
      y[i] = a;
    }
  }
}
