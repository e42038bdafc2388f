/* GEMM micro-kernels: one MR x NR register tile of C from packed panels
 * (XNNPACK src/f32-gemm/wasmsimd-splat.c.in; BLIS's micro-kernel).
 *
 *   a  the packed A panel: kc steps of MR values (rows i of column k at
 *      a[k * MR + i]; rows past mr are zeros the driver wrote), or with
 *      p->lda (f32) mr rows of A in place, a[i * lda + k]
 *   b  the packed B panel: kc steps of NR values (b[k * NR + j])
 *   c  row i, column j at c[i * cs + j]; only mr rows and nc columns are
 *      written: C = alpha * A B, or C += alpha * A B when p->accumulate,
 *      clamped to [p->lo, p->hi] as it is stored when p->clamp (a
 *      convolution's fused relu / relu6, on its last K block; PyTorch's
 *      clamp, keeping NaN and -0: wv_f32x4_clamp); not
 *      accumulating, p->bias (nc values, or NULL) is added per column
 *
 * f32 4x8, splat form: per k two B vectors are loaded and each A value is
 * broadcast (v128.load32_splat) and multiplied into its row's two
 * accumulators. 4 rows, not 6: V8 keeps one of x64's 16 xmm registers as
 * scratch, and 6x8's 12 accumulators + 2 B + splat + product spill (6x8
 * ran at ~24 GFLOP/s in V8 here, 4x8 at ~36; XNNPACK's x86 wasmsimd config
 * picks 4x8 too). No FMA: multiply, then add, on every backend. f64 4x4 is plain C on doubles (the vector layer has no f64
 * lanes); the compiler keeps the tile in registers. */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

/* Row c's nc values: v0, v1 (+ c's own when acc), clamped to [lo, hi] when clamp. */
static inline void f32_store_row(float* c, wv128 v0, wv128 v1, size_t nc, const struct weft_f32_gemm_params* p) {
  const int acc = p->accumulate;
  const float* bias = acc ? NULL : p->bias;
  if (nc == 8) {
    if (acc) {
      v0 = wv_f32x4_add(wv_v128_load(c), v0);
      v1 = wv_f32x4_add(wv_v128_load(c + 4), v1);
    } else if (bias) {
      v0 = wv_f32x4_add(v0, wv_v128_load(bias));
      v1 = wv_f32x4_add(v1, wv_v128_load(bias + 4));
    }
    if (p->clamp) {
      const wv128 lo = wv_f32x4_splat(p->lo), hi = wv_f32x4_splat(p->hi);
      v0 = wv_f32x4_clamp(v0, lo, hi);
      v1 = wv_f32x4_clamp(v1, lo, hi);
    }
    wv_v128_store(c, v0);
    wv_v128_store(c + 4, v1);
    return;
  }
  const wv128 lo = wv_f32x4_splat(p->lo), hi = wv_f32x4_splat(p->hi);
  if (nc >= 4) {
    if (acc) v0 = wv_f32x4_add(wv_v128_load(c), v0);
    if (bias) v0 = wv_f32x4_add(v0, wv_v128_load(bias)), bias += 4;
    if (p->clamp) v0 = wv_f32x4_clamp(v0, lo, hi);
    wv_v128_store(c, v0);
    c += 4, nc -= 4, v0 = v1;
  }
  if (nc) {
    if (acc) v0 = wv_f32x4_add(wv_v128_load_partial(c, nc * 4), v0);
    if (bias) v0 = wv_f32x4_add(v0, wv_v128_load_partial(bias, nc * 4));
    if (p->clamp) v0 = wv_f32x4_clamp(v0, lo, hi);
    wv_v128_store_partial(c, v0, nc * 4);
  }
}

#define MR 4
void WEFT_UKERNEL(f32_gemm_4x8, splat)(size_t mr, size_t nc, size_t kc, const float* a, const float* b, float* c,
                                       size_t cs, const struct weft_f32_gemm_params* p) {
  wv128 c0[MR], c1[MR]; /* row i: columns 0-3 and 4-7 */
  for (int i = 0; i < MR; i++) c0[i] = c1[i] = wv_v128_zero();
  if (p->lda) {
    /* A in place: rows past mr read the last one (computed, never stored) */
    const float* ar[MR];
    for (size_t i = 0; i < MR; i++) ar[i] = a + (i < mr ? i : mr - 1) * p->lda;
    for (size_t k = 0; k < kc; k++, b += 8) {
      const wv128 b0 = wv_v128_load(b), b1 = wv_v128_load(b + 4);
      for (int i = 0; i < MR; i++) {
        const wv128 va = wv_f32x4_splat(ar[i][k]);
        c0[i] = wv_f32x4_muladd(va, b0, c0[i]);
        c1[i] = wv_f32x4_muladd(va, b1, c1[i]);
      }
    }
  } else {
    for (; kc; kc--, a += MR, b += 8) {
      const wv128 b0 = wv_v128_load(b), b1 = wv_v128_load(b + 4);
      for (int i = 0; i < MR; i++) {
        const wv128 va = wv_f32x4_splat(a[i]);
        c0[i] = wv_f32x4_muladd(va, b0, c0[i]);
        c1[i] = wv_f32x4_muladd(va, b1, c1[i]);
      }
    }
  }
  if (p->alpha != 1.0f) {
    const wv128 va = wv_f32x4_splat(p->alpha);
    for (int i = 0; i < MR; i++) c0[i] = wv_f32x4_mul(c0[i], va), c1[i] = wv_f32x4_mul(c1[i], va);
  }
  for (size_t i = 0; i < mr; i++) f32_store_row(c + i * cs, c0[i], c1[i], nc, p);
}
#undef MR

void WEFT_UKERNEL(f64_gemm_4x4, u1)(size_t mr, size_t nc, size_t kc, const double* a, const double* b, double* c,
                                    size_t cs, const struct weft_f64_gemm_params* p) {
  double t[4][4] = {{0}};
  for (; kc; kc--, a += 4, b += 4) {
    for (int i = 0; i < 4; i++) {
      const double ai = a[i];
      for (int j = 0; j < 4; j++) t[i][j] += ai * b[j];
    }
  }
  const double alpha = p->alpha;
  for (size_t i = 0; i < mr; i++) {
    double* ci = c + i * cs;
    for (size_t j = 0; j < nc; j++) {
      double v = (p->accumulate ? ci[j] : p->bias ? p->bias[j] : 0.0) + alpha * t[i][j];
      ci[j] = !p->clamp ? v : v < p->lo ? p->lo : v > p->hi ? p->hi : v; /* NaN compares false: kept */
    }
  }
}
