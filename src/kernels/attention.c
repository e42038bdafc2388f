/* f32 attention kernels (the fused scaled_dot_product_attention of
 * src/ops/cpu/attention.c; the products of its query and key tiles are the
 * GEMM micro-kernels').
 *
 *   f32_attn_softmax  FlashAttention's online softmax over one tile of
 *                     scores: per row the running max m and sum l are
 *                     updated, the row becomes exp(s - m_new) (the P the
 *                     tile multiplies V by) and alpha = exp(m_old - m_new)
 *                     is what the row's accumulator must be scaled by. A row
 *                     whose max is still -inf (every score so far masked)
 *                     keeps P = 0 and alpha = 1, so a later tile that
 *                     unmasks it starts clean; a row masked to the end ends
 *                     with l = 0 and its output 0 / 0 = NaN, as PyTorch's
 *                     math path (softmax of all -inf).
 *   f32_attn_dot_rows one query against n keys (the decode path's single
 *                     row while its keys stay in cache), vectorized along
 *                     the embedding: y[j] = alpha * q . k[j].
 *   f32_attn_axpy_rows the single decode row's output: acc += sum_j p[j] v[j],
 *                     blocks of 32, 16, 8, 4 columns kept in registers while
 *                     the rows stream (the GEMV kernel's m = 1 strips are 32
 *                     columns or one vector, a single dependency chain).
 *   f32_attn_dscore   the backward's dS = P * (dP - D) over a row.
 * The lanes are combined in a fixed order, so the scalar backend (wasm's
 * semantics in four lanes) gives the same bits as the SIMD ones. */
#include <math.h>

#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

static inline float lanes_sum(wv128 v) {
  float l[4];
  wv_v128_store(l, v);
  return (l[0] + l[1]) + (l[2] + l[3]);
}

void WEFT_UKERNEL(f32_attn_softmax, u8)(size_t rows, size_t n, float* s, size_t ss, float* m, float* l,
                                         float* alpha) {
  for (size_t i = 0; i < rows; i++, s += ss) {
    float mx = WEFT_UKERNEL(f32_rmax, u8)(n, s);
    float mnew = mx > m[i] || mx != mx ? mx : m[i];
    if (mnew == -INFINITY) { /* nothing unmasked yet */
      for (size_t j = 0; j < n; j++) s[j] = 0;
      alpha[i] = 1;
      continue;
    }
    float sum = WEFT_UKERNEL(f32_rexpsum, u8)(n, s, mnew, s);
    alpha[i] = m[i] == -INFINITY ? 0.0f : expf(m[i] - mnew);
    l[i] = l[i] * alpha[i] + sum;
    m[i] = mnew;
  }
}

/* a + q * k over the last nb (< 16) bytes of a row. Out of line: clang 14's
 * wasm build of the scalar backend, with these partial loads inlined into the
 * four-key loop below, computed the first key's sum wrong when e % 4 != 0. */
static __attribute__((noinline)) wv128 tail_madd(wv128 a, const float* q, const float* k, size_t nb) {
  return wv_f32x4_add(a, wv_f32x4_mul(wv_v128_load_partial(q, nb), wv_v128_load_partial(k, nb)));
}

/* four keys at once: one accumulator each along e, then lanes summed */
void WEFT_UKERNEL(f32_attn_dot_rows, u4)(size_t n, size_t e, const float* q, const float* k, size_t ks, float alpha,
                                         float* y) {
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const float *k0 = k + j * ks, *k1 = k0 + ks, *k2 = k1 + ks, *k3 = k2 + ks;
    wv128 a0 = wv_v128_zero(), a1 = a0, a2 = a0, a3 = a0;
    size_t d = 0;
    for (; d + 4 <= e; d += 4) {
      wv128 vq = wv_v128_load(q + d);
      a0 = wv_f32x4_add(a0, wv_f32x4_mul(vq, wv_v128_load(k0 + d)));
      a1 = wv_f32x4_add(a1, wv_f32x4_mul(vq, wv_v128_load(k1 + d)));
      a2 = wv_f32x4_add(a2, wv_f32x4_mul(vq, wv_v128_load(k2 + d)));
      a3 = wv_f32x4_add(a3, wv_f32x4_mul(vq, wv_v128_load(k3 + d)));
    }
    if (d < e) {
      size_t nb = (e - d) * sizeof(float);
      a0 = tail_madd(a0, q + d, k0 + d, nb);
      a1 = tail_madd(a1, q + d, k1 + d, nb);
      a2 = tail_madd(a2, q + d, k2 + d, nb);
      a3 = tail_madd(a3, q + d, k3 + d, nb);
    }
    y[j] = alpha * lanes_sum(a0), y[j + 1] = alpha * lanes_sum(a1);
    y[j + 2] = alpha * lanes_sum(a2), y[j + 3] = alpha * lanes_sum(a3);
  }
  for (; j < n; j++) {
    const float* kj = k + j * ks;
    wv128 a = wv_v128_zero();
    size_t d = 0;
    for (; d + 4 <= e; d += 4) a = wv_f32x4_add(a, wv_f32x4_mul(wv_v128_load(q + d), wv_v128_load(kj + d)));
    if (d < e) {
      size_t nb = (e - d) * sizeof(float);
      a = wv_f32x4_add(a, wv_f32x4_mul(wv_v128_load_partial(q + d, nb), wv_v128_load_partial(kj + d, nb)));
    }
    y[j] = alpha * lanes_sum(a);
  }
}

#define AXPY_COLS 32 /* 8 accumulators */

/* acc[0, 4 nv) += sum_j p[j] v[j] over whole vectors; inlined with a
 * constant nv, so the accumulators are registers (a runtime count kept them
 * in a stack array, loaded and stored on every row) */
static inline __attribute__((always_inline)) void axpy_vectors(size_t nv, size_t n, const float* p, const float* v,
                                                               size_t vs, float* acc) {
  wv128 a[AXPY_COLS / 4];
  for (size_t t = 0; t < nv; t++) a[t] = wv_v128_load(acc + 4 * t);
  for (size_t j = 0; j < n; j++, v += vs) {
    wv128 pj = wv_f32x4_splat(p[j]);
    for (size_t t = 0; t < nv; t++) a[t] = wv_f32x4_add(a[t], wv_f32x4_mul(pj, wv_v128_load(v + 4 * t)));
  }
  for (size_t t = 0; t < nv; t++) wv_v128_store(acc + 4 * t, a[t]);
}

/* the last w < 4 columns */
static void axpy_partial(size_t w, size_t n, const float* p, const float* v, size_t vs, float* acc) {
  size_t nb = w * sizeof(float);
  wv128 a = wv_v128_load_partial(acc, nb);
  for (size_t j = 0; j < n; j++, v += vs)
    a = wv_f32x4_add(a, wv_f32x4_mul(wv_f32x4_splat(p[j]), wv_v128_load_partial(v, nb)));
  wv_v128_store_partial(acc, a, nb);
}

/* blocks of 32 columns, then 16, 8, 4 and the rest: each column's sum in the
 * same order whatever its block */
void WEFT_UKERNEL(f32_attn_axpy_rows, c32)(size_t n, size_t e, const float* p, const float* v, size_t vs,
                                           float* acc) {
  size_t d = 0;
  for (; d + AXPY_COLS <= e; d += AXPY_COLS) axpy_vectors(AXPY_COLS / 4, n, p, v + d, vs, acc + d);
  if (d + 16 <= e) axpy_vectors(4, n, p, v + d, vs, acc + d), d += 16;
  if (d + 8 <= e) axpy_vectors(2, n, p, v + d, vs, acc + d), d += 8;
  if (d + 4 <= e) axpy_vectors(1, n, p, v + d, vs, acc + d), d += 4;
  if (d < e) axpy_partial(e - d, n, p, v + d, vs, acc + d);
}

void WEFT_UKERNEL(f32_attn_dscore, u8)(size_t n, const float* p, const float* dp, float d, float* y) {
  wv128 vd = wv_f32x4_splat(d);
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    wv128 y0 = wv_f32x4_mul(wv_v128_load(p + j), wv_f32x4_sub(wv_v128_load(dp + j), vd));
    wv128 y1 = wv_f32x4_mul(wv_v128_load(p + j + 4), wv_f32x4_sub(wv_v128_load(dp + j + 4), vd));
    wv_v128_store(y + j, y0);
    wv_v128_store(y + j + 4, y1);
  }
  for (; j + 4 <= n; j += 4)
    wv_v128_store(y + j, wv_f32x4_mul(wv_v128_load(p + j), wv_f32x4_sub(wv_v128_load(dp + j), vd)));
  if (j < n) {
    size_t nb = (n - j) * sizeof(float);
    wv128 r = wv_f32x4_mul(wv_v128_load_partial(p + j, nb), wv_f32x4_sub(wv_v128_load_partial(dp + j, nb), vd));
    wv_v128_store_partial(y + j, r, nb);
  }
}
