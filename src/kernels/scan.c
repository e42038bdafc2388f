/* f32 scan kernels (cumsum, cumprod), accumulating in double as PyTorch's
 * CPU kernel does (acc_type<float> is double there), each output rounded
 * from the running double:
 *
 *   f32_cumsum / f32_cumprod            one row along the scanned dim
 *                                       (strides in bytes): a sequential
 *                                       scan, nothing to vectorize.
 *   f32_vcumsum_rows / f32_vcumprod_rows  the scan along an outer dim,
 *                                       vectorized across the contiguous
 *                                       kept dim: panels of 8 columns held
 *                                       in four f64x2 accumulators while
 *                                       the rows stream by.
 * Every backend rounds the same way (double add/mul, then one rounding to
 * float), so they agree bit for bit with the scalar reference. */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

#define SCAN_ROW(name, OP, INIT)                                                                  \
  void WEFT_UKERNEL(name, u1)(size_t n, const float* x, size_t xs, float* y, size_t ys) {         \
    double acc = INIT;                                                                            \
    const char* xp = (const char*)x;                                                              \
    char* yp = (char*)y;                                                                          \
    for (size_t i = 0; i < n; i++, xp += xs, yp += ys) {                                          \
      acc = acc OP (double)*(const float*)xp;                                                     \
      *(float*)yp = (float)acc;                                                                   \
    }                                                                                             \
  }
SCAN_ROW(f32_cumsum, +, 0.0)
SCAN_ROW(f32_cumprod, *, 1.0)

/* a, b: the running doubles of 4 columns; x: their next 4 floats; stores the rounded sums */
#define SCAN_STEP(VOP, a, b, xv, yp)                                          \
  do {                                                                        \
    a = VOP(a, wv_f64x2_promote_low_f32x4(xv));                               \
    b = VOP(b, wv_f64x2_promote_low_f32x4(wv_i64x2_interleave_hi(xv, xv)));   \
    wv_v128_store(yp, wv_i64x2_interleave_lo(wv_f32x4_demote_f64x2_zero(a),    \
                                             wv_f32x4_demote_f64x2_zero(b))); \
  } while (0)

#define SCAN_ROWS(name, VOP, SOP, INIT)                                                            \
  void WEFT_UKERNEL(name, u8)(size_t rows, size_t cols, const float* x, size_t xs, float* y,       \
                              size_t ys) {                                                         \
    const char* xb = (const char*)x;                                                               \
    char* yb = (char*)y;                                                                           \
    size_t j = 0;                                                                                  \
    for (; j + 8 <= cols; j += 8) {                                                                \
      wv128 a0 = wv_f64x2_splat(INIT), a1 = a0, a2 = a0, a3 = a0;                                  \
      for (size_t i = 0; i < rows; i++) {                                                          \
        const float* xr = (const float*)(xb + i * xs) + j;                                         \
        float* yr = (float*)(yb + i * ys) + j;                                                     \
        wv128 v0 = wv_v128_load(xr), v1 = wv_v128_load(xr + 4);                                    \
        SCAN_STEP(VOP, a0, a1, v0, yr);                                                            \
        SCAN_STEP(VOP, a2, a3, v1, yr + 4);                                                        \
      }                                                                                            \
    }                                                                                              \
    for (; j + 4 <= cols; j += 4) {                                                                \
      wv128 a0 = wv_f64x2_splat(INIT), a1 = a0;                                                    \
      for (size_t i = 0; i < rows; i++) {                                                          \
        SCAN_STEP(VOP, a0, a1, wv_v128_load((const float*)(xb + i * xs) + j), (float*)(yb + i * ys) + j); \
      }                                                                                            \
    }                                                                                              \
    for (; j < cols; j++) {                                                                        \
      double acc = INIT;                                                                           \
      for (size_t i = 0; i < rows; i++) {                                                          \
        acc = acc SOP (double)((const float*)(xb + i * xs))[j];                                    \
        ((float*)(yb + i * ys))[j] = (float)acc;                                                   \
      }                                                                                            \
    }                                                                                              \
  }
SCAN_ROWS(f32_vcumsum_rows, wv_f64x2_add, +, 0.0)
SCAN_ROWS(f32_vcumprod_rows, wv_f64x2_mul, *, 1.0)
