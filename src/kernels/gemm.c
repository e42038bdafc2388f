/* GEMM micro-kernels: one MR x NR register tile of C from packed panels
 * (XNNPACK src/f32-gemm/wasmsimd-splat.c.in; BLIS's micro-kernel).
 *
 *   a  the packed A panel: kc steps of MR values (rows i of column k at
 *      a[k * MR + i]; rows past mr are zeros the driver wrote)
 *   b  the packed B panel: kc steps of NR values (b[k * NR + j])
 *   c  row i, column j at c[i * cs + j]; only mr rows and nc columns are
 *      written: C = alpha * A B, or C += alpha * A B when p->accumulate
 *
 * f32 6x8, splat form: per k two B vectors are loaded and each A value is
 * broadcast and multiplied into its row's two accumulators (12 of them, 15
 * live registers of SSE2's and wasm's 16). No FMA: multiply, then add, on
 * every backend. f64 4x4 is plain C on doubles (the vector layer has no f64
 * lanes); the compiler keeps the tile in registers. */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

static inline void f32_store_row(float* c, wv128 v0, wv128 v1, size_t nc, int acc) {
  if (nc == 8) {
    if (acc) {
      v0 = wv_f32x4_add(wv_v128_load(c), v0);
      v1 = wv_f32x4_add(wv_v128_load(c + 4), v1);
    }
    wv_v128_store(c, v0);
    wv_v128_store(c + 4, v1);
    return;
  }
  if (nc >= 4) {
    if (acc) v0 = wv_f32x4_add(wv_v128_load(c), v0);
    wv_v128_store(c, v0);
    c += 4, nc -= 4, v0 = v1;
  }
  if (nc) {
    if (acc) v0 = wv_f32x4_add(wv_v128_load_partial(c, nc * 4), v0);
    wv_v128_store_partial(c, v0, nc * 4);
  }
}

void WEFT_UKERNEL(f32_gemm_6x8, splat)(size_t mr, size_t nc, size_t kc, const float* a, const float* b, float* c,
                                       size_t cs, const struct weft_f32_gemm_params* p) {
  wv128 c00 = wv_v128_zero(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  wv128 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (; kc; kc--, a += 6, b += 8) {
    const wv128 b0 = wv_v128_load(b), b1 = wv_v128_load(b + 4);
    wv128 va = wv_f32x4_splat(a[0]);
    c00 = wv_f32x4_muladd(va, b0, c00), c01 = wv_f32x4_muladd(va, b1, c01);
    va = wv_f32x4_splat(a[1]);
    c10 = wv_f32x4_muladd(va, b0, c10), c11 = wv_f32x4_muladd(va, b1, c11);
    va = wv_f32x4_splat(a[2]);
    c20 = wv_f32x4_muladd(va, b0, c20), c21 = wv_f32x4_muladd(va, b1, c21);
    va = wv_f32x4_splat(a[3]);
    c30 = wv_f32x4_muladd(va, b0, c30), c31 = wv_f32x4_muladd(va, b1, c31);
    va = wv_f32x4_splat(a[4]);
    c40 = wv_f32x4_muladd(va, b0, c40), c41 = wv_f32x4_muladd(va, b1, c41);
    va = wv_f32x4_splat(a[5]);
    c50 = wv_f32x4_muladd(va, b0, c50), c51 = wv_f32x4_muladd(va, b1, c51);
  }
  if (p->alpha != 1.0f) {
    const wv128 va = wv_f32x4_splat(p->alpha);
    c00 = wv_f32x4_mul(c00, va), c01 = wv_f32x4_mul(c01, va), c10 = wv_f32x4_mul(c10, va);
    c11 = wv_f32x4_mul(c11, va), c20 = wv_f32x4_mul(c20, va), c21 = wv_f32x4_mul(c21, va);
    c30 = wv_f32x4_mul(c30, va), c31 = wv_f32x4_mul(c31, va), c40 = wv_f32x4_mul(c40, va);
    c41 = wv_f32x4_mul(c41, va), c50 = wv_f32x4_mul(c50, va), c51 = wv_f32x4_mul(c51, va);
  }
  const int acc = p->accumulate;
  f32_store_row(c, c00, c01, nc, acc);
  if (mr > 1) f32_store_row(c + cs, c10, c11, nc, acc);
  if (mr > 2) f32_store_row(c + 2 * cs, c20, c21, nc, acc);
  if (mr > 3) f32_store_row(c + 3 * cs, c30, c31, nc, acc);
  if (mr > 4) f32_store_row(c + 4 * cs, c40, c41, nc, acc);
  if (mr > 5) f32_store_row(c + 5 * cs, c50, c51, nc, acc);
}

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
    for (size_t j = 0; j < nc; j++) ci[j] = (p->accumulate ? ci[j] : 0.0) + alpha * t[i][j];
  }
}
