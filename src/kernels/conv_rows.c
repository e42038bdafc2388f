/* A convolution's GEMM over a run of output rows in one call (the 1x1 and
 * implicit-GEMM drivers, src/ops/cpu/conv.c): f32_gemm_4x8's contract
 * (gemm.c) for any m, the rows taken 4 at a time. A 1x1 convolution with few
 * input channels (MobileNetV2's expansions: K = 16, 24, 32) spends as long
 * in a micro-kernel call's entry and store as in its K loop, so the driver
 * hands a whole tile of rows to one call: the clamp bounds and the bias are
 * loaded once, and the A rows advance by a stride.
 *
 * A: p->lda > 0, row i at a + i * lda (in place); else packed MR = 4 panels
 * one after another (panel r at a + r * 4 * kc). Full groups of 4 rows x 8
 * columns run here; a last group of fewer rows, fewer than 8 columns, or an
 * alpha other than 1, run f32_gemm_4x8 of the same backend. Each row's sum
 * runs over k in order, multiply then add, and is stored as f32_gemm_4x8
 * stores it (+ c or + bias, then the clamp), so the two agree bit for bit. */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

/* kc steps of 4 rows x 8 columns into s0 / s1 (row i: columns 0-3, 4-7),
 * row i's A value of step k at a[i * rs + k * ks], k in order. Called with
 * a packed panel's strides as constants (rs 1, ks 4), so its loads take
 * constant offsets from one pointer; rows in place (rs = lda, ks = 1) pay
 * an address add per row and k (wasm has no scaled index). Not unrolled
 * over k: clang then hoists the next steps' loads and V8, which keeps
 * wasm's order, spills the extra live vectors (measured 1.5x slower). */
static inline __attribute__((always_inline)) void kloop(wv128* s0, wv128* s1, const float* a, size_t rs, size_t ks,
                                                        size_t kc, const float* b) {
  for (; kc; kc--, a += ks, b += 8) {
    const wv128 b0 = wv_v128_load(b), b1 = wv_v128_load(b + 4);
    for (size_t i = 0; i < 4; i++) {
      const wv128 ai = wv_f32x4_splat(a[i * rs]);
      s0[i] = wv_f32x4_muladd(ai, b0, s0[i]);
      s1[i] = wv_f32x4_muladd(ai, b1, s1[i]);
    }
  }
}

void WEFT_UKERNEL(f32_gemm_4x8_rows, splat)(size_t m, size_t nc, size_t kc, const float* a, const float* b, float* c,
                                            size_t cs, const struct weft_f32_gemm_params* p) {
  const size_t lda = p->lda;
  const size_t group = lda ? 4 * lda : 4 * kc;       /* the next 4 rows */
  size_t i0 = 0;
  if (nc == 8 && p->alpha == 1.0f) {
    const int acc = p->accumulate, clamp = p->clamp;
    const float* bias = acc ? NULL : p->bias;
    const wv128 lo = wv_f32x4_splat(p->lo), hi = wv_f32x4_splat(p->hi);
    const wv128 bias0 = bias ? wv_v128_load(bias) : wv_v128_zero();
    const wv128 bias1 = bias ? wv_v128_load(bias + 4) : wv_v128_zero();
    for (; i0 + 4 <= m; i0 += 4, a += group, c += 4 * cs) {
      wv128 s0[4], s1[4];
      for (int i = 0; i < 4; i++) s0[i] = s1[i] = wv_v128_zero();
      if (lda)
        kloop(s0, s1, a, lda, 1, kc, b);
      else
        kloop(s0, s1, a, 1, 4, kc, b);
      for (int i = 0; i < 4; i++) {
        float* ci = c + (size_t)i * cs;
        wv128 v0 = s0[i], v1 = s1[i];
        if (acc) {
          v0 = wv_f32x4_add(wv_v128_load(ci), v0);
          v1 = wv_f32x4_add(wv_v128_load(ci + 4), v1);
        } else if (bias) {
          v0 = wv_f32x4_add(v0, bias0);
          v1 = wv_f32x4_add(v1, bias1);
        }
        if (clamp) v0 = wv_f32x4_clamp(v0, lo, hi), v1 = wv_f32x4_clamp(v1, lo, hi);
        wv_v128_store(ci, v0);
        wv_v128_store(ci + 4, v1);
      }
    }
  }
  for (; i0 < m; i0 += 4, a += group, c += 4 * cs)
    WEFT_UKERNEL(f32_gemm_4x8, splat)(m - i0 < 4 ? m - i0 : 4, nc, kc, a, b, c, cs, p);
}
