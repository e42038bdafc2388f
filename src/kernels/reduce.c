/* f32 reduction kernels.
 *
 *   f32_rsum      a contiguous row's sum, cascaded (pairwise halves down to
 *                 blocks of 256, each summed in 4 vector accumulators), so
 *                 the error grows with log(n), not n (PyTorch's cascade_sum).
 *   f32_rmax/min  a contiguous row's max/min; NaN wins (torch.amax), +0 > -0.
 *   f32_vsum_rows y[j] += sum over rows of x[row][j]: the outer reduction,
 *                 vectorized across the kept dim: panels of 64 columns,
 *                 rows streamed in memory order, summed in blocks of 128
 *                 into a running total (two-level cascade).
 *   f32_rsumsq, f32_rasum, f32_vsumsq_rows, f32_vasum_rows: the same sums
 *                 of x*x and |x| (norm p=2 and p=1), one template each.
 * The lanes are combined in a fixed order, so every backend (vec_scalar.h
 * has wasm's semantics) gives the same bits. */
#include <math.h>

#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

#define RSUM_BLOCK 256

static float lanes_sum(wv128 v) {
  float l[4];
  wv_v128_store(l, v);
  return (l[0] + l[1]) + (l[2] + l[3]);
}

/* the element transforms of the sum templates: x, x*x, |x| (0 stays 0, so
 * the zero-filled lanes of a partial load add nothing) */
static inline wv128 xf_id(wv128 v) { return v; }
static inline wv128 xf_sq(wv128 v) { return wv_f32x4_mul(v, v); }
static inline wv128 xf_abs(wv128 v) { return wv_f32x4_abs(v); }

#define RSUM(name, xf)                                                           \
  static float name##_block(size_t n, const float* x) {                          \
    wv128 a0 = wv_v128_zero(), a1 = a0, a2 = a0, a3 = a0;                        \
    for (; n >= 16; n -= 16, x += 16) {                                          \
      a0 = wv_f32x4_add(a0, xf(wv_v128_load(x)));                                \
      a1 = wv_f32x4_add(a1, xf(wv_v128_load(x + 4)));                            \
      a2 = wv_f32x4_add(a2, xf(wv_v128_load(x + 8)));                            \
      a3 = wv_f32x4_add(a3, xf(wv_v128_load(x + 12)));                           \
    }                                                                            \
    for (; n >= 4; n -= 4, x += 4) a0 = wv_f32x4_add(a0, xf(wv_v128_load(x)));   \
    if (n) a1 = wv_f32x4_add(a1, xf(wv_v128_load_partial(x, n * 4)));            \
    return lanes_sum(wv_f32x4_add(wv_f32x4_add(a0, a1), wv_f32x4_add(a2, a3)));  \
  }                                                                              \
  static float name##_cascade(size_t n, const float* x) {                        \
    if (n <= RSUM_BLOCK) return name##_block(n, x);                              \
    size_t half = (n / 2 + 15) & ~(size_t)15;                                    \
    return name##_cascade(half, x) + name##_cascade(n - half, x + half);         \
  }                                                                              \
  float WEFT_UKERNEL(f32_##name, u16)(size_t n, const float* x) { return name##_cascade(n, x); }
RSUM(rsum, xf_id)
RSUM(rsumsq, xf_sq)
RSUM(rasum, xf_abs)

/* wasm's f32 max/min on one pair: NaN wins, +0 > -0 */
static float max1(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static float min1(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

/* The exact pass: wasm's max/min, whose NaN and signed-zero rules cost
 * several instructions per vector on x86 engines. */
#define RMINMAX_EXACT(name, vop, sop)                                           \
  static float name##_exact(size_t n, const float* x) {                         \
    float r = x[0];                                                             \
    if (n >= 8) {                                                               \
      wv128 a0 = wv_v128_load(x), a1 = wv_v128_load(x + 4);                     \
      size_t i = 8;                                                             \
      for (; i + 8 <= n; i += 8) {                                              \
        a0 = vop(a0, wv_v128_load(x + i));                                      \
        a1 = vop(a1, wv_v128_load(x + i + 4));                                  \
      }                                                                         \
      float l[4];                                                               \
      wv_v128_store(l, vop(a0, a1));                                            \
      r = sop(sop(l[0], l[1]), sop(l[2], l[3]));                                \
      x += i, n -= i;                                                           \
    }                                                                           \
    for (size_t i = 0; i < n; i++) r = sop(r, x[i]);                            \
    return r;                                                                   \
  }
RMINMAX_EXACT(rmax, wv_f32x4_max, max1)
RMINMAX_EXACT(rmin, wv_f32x4_min, min1)

static inline wv128 isnan4(wv128 v) { return wv_f32x4_ne(v, v); }

/* The fast pass: pmax/pmin (one instruction each) in 4 accumulators, with
 * the NaNs seen kept in a mask; a row with a NaN, or whose result is a zero
 * (its sign matters), takes the exact pass, so the result is the same. */
#define RMINMAX(name, pop, sop)                                                              \
  float WEFT_UKERNEL(f32_##name, u8)(size_t n, const float* x) {                             \
    if (n >= 16) {                                                                           \
      wv128 a0 = wv_v128_load(x), a1 = wv_v128_load(x + 4);                                  \
      wv128 a2 = wv_v128_load(x + 8), a3 = wv_v128_load(x + 12);                             \
      wv128 nan = wv_v128_or(wv_v128_or(isnan4(a0), isnan4(a1)), wv_v128_or(isnan4(a2), isnan4(a3))); \
      size_t i = 16;                                                                         \
      for (; i + 16 <= n; i += 16) {                                                         \
        wv128 v0 = wv_v128_load(x + i), v1 = wv_v128_load(x + i + 4);                        \
        wv128 v2 = wv_v128_load(x + i + 8), v3 = wv_v128_load(x + i + 12);                   \
        a0 = pop(a0, v0), a1 = pop(a1, v1), a2 = pop(a2, v2), a3 = pop(a3, v3);              \
        nan = wv_v128_or(nan, wv_v128_or(wv_v128_or(isnan4(v0), isnan4(v1)),                 \
                                         wv_v128_or(isnan4(v2), isnan4(v3))));               \
      }                                                                                      \
      if (!wv_v128_any_true(nan)) {                                                          \
        float l[4];                                                                          \
        wv_v128_store(l, pop(pop(a0, a1), pop(a2, a3)));                                     \
        float r = sop(sop(l[0], l[1]), sop(l[2], l[3]));                                     \
        for (; i < n; i++) r = sop(r, x[i]);                                                 \
        if (r != 0 && r == r) return r;                                                      \
      }                                                                                      \
    }                                                                                        \
    return name##_exact(n, x);                                                               \
  }
RMINMAX(rmax, wv_f32x4_pmax, max1)
RMINMAX(rmin, wv_f32x4_pmin, min1)

#define ROW(i) ((const float*)((const char*)x + (i) * row_stride) + j)
#define PANEL 16 /* vectors: 64 columns a pass, rows streamed in order */

#define VSUM_ROWS(name, xf)                                                                            \
  void WEFT_UKERNEL(f32_##name, u8)(size_t rows, size_t cols, const float* x, size_t row_stride, float* y) {   \
    for (size_t j = 0; j < cols; j += PANEL * 4) {                                                     \
      size_t w = cols - j < PANEL * 4 ? cols - j : PANEL * 4;                                          \
      size_t nv = w / 4, tail = (w % 4) * 4; /* whole vectors, bytes of the partial one */             \
      wv128 acc[PANEL + 1], tot[PANEL + 1];                                                            \
      for (size_t v = 0; v <= nv; v++) tot[v] = wv_v128_zero();                                        \
      for (size_t r0 = 0; r0 < rows; r0 += 128) {                                                      \
        size_t r1 = rows - r0 < 128 ? rows : r0 + 128;                                                 \
        for (size_t v = 0; v <= nv; v++) acc[v] = wv_v128_zero();                                      \
        for (size_t r = r0; r < r1; r++) {                                                             \
          const float* p = ROW(r);                                                                     \
          for (size_t v = 0; v < nv; v++) acc[v] = wv_f32x4_add(acc[v], xf(wv_v128_load(p + 4 * v)));  \
          if (tail) acc[nv] = wv_f32x4_add(acc[nv], xf(wv_v128_load_partial(p + 4 * nv, tail)));       \
        }                                                                                              \
        for (size_t v = 0; v <= nv; v++) tot[v] = wv_f32x4_add(tot[v], acc[v]);                        \
      }                                                                                                \
      for (size_t v = 0; v < nv; v++)                                                                  \
        wv_v128_store(y + j + 4 * v, wv_f32x4_add(wv_v128_load(y + j + 4 * v), tot[v]));               \
      if (tail) {                                                                                      \
        float* q = y + j + 4 * nv;                                                                     \
        wv_v128_store_partial(q, wv_f32x4_add(wv_v128_load_partial(q, tail), tot[nv]), tail);          \
      }                                                                                                \
    }                                                                                                  \
  }
VSUM_ROWS(vsum_rows, xf_id)
VSUM_ROWS(vsumsq_rows, xf_sq)
VSUM_ROWS(vasum_rows, xf_abs)
