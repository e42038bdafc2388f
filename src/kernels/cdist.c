/* cdist's row distances (src/ops/cdist.c), float32:
 *
 *   f32_cdist_rows  out[q] = ||a - b_q||_p for the r2 rows b_q = b + q * c
 *                   (c columns each), p 1, 2 or inf (kind 1, 2, 3)
 *
 * Four lanes over the columns, each accumulating its sum (or max) of |d|
 * or d^2, folded in a fixed order ((l0 + l1) + (l2 + l3)) before the tail
 * runs one element at a time: every backend (vec_scalar.h has wasm's
 * semantics) gives the same bits. The max keeps NaN (f32x4.max's
 * propagation, as 1.13's vec::maximum). */
#include <math.h>

#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

static inline float max_nan(float a, float b) { return a != a || b != b ? NAN : a > b ? a : b; }

static inline wv128 lane_step(wv128 acc, wv128 d, int kind) {
  if (kind == 2) return wv_f32x4_add(acc, wv_f32x4_mul(d, d));
  if (kind == 1) return wv_f32x4_add(acc, wv_f32x4_abs(d));
  return wv_f32x4_max(acc, wv_f32x4_abs(d));
}

static float row_distance(size_t c, const float* a, const float* b, int kind) {
  wv128 acc = wv_v128_zero();
  size_t k = 0;
  for (; k + 4 <= c; k += 4) acc = lane_step(acc, wv_f32x4_sub(wv_v128_load(a + k), wv_v128_load(b + k)), kind);
  float l[4];
  wv_v128_store(l, acc);
  float s = kind == 3 ? max_nan(max_nan(l[0], l[1]), max_nan(l[2], l[3])) : (l[0] + l[1]) + (l[2] + l[3]);
  for (; k < c; k++) {
    float d = a[k] - b[k];
    s = kind == 2 ? s + d * d : kind == 1 ? s + fabsf(d) : max_nan(s, fabsf(d));
  }
  return kind == 2 ? sqrtf(s) : s;
}

void WEFT_UKERNEL(f32_cdist_rows, u4)(size_t c, size_t r2, const float* a, const float* b, float* out, int kind) {
  for (size_t q = 0; q < r2; q++) out[q] = row_distance(c, a, b + q * c, kind);
}
