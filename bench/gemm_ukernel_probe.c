/* Ceiling probe for the fused attention (issue 24), timed by the process's
 * CPU time, one thread:
 *  1. the f32 4x8 GEMM micro-kernel alone on L1-resident packed panels, at
 *     the depths of the fused kernel's two products (Q K^T: kc = e = 64;
 *     P V: kc = keys per tile);
 *  2. the whole problem of bench/attention_bench.mjs (8 heads, L = S = 1024,
 *     d = 64) walked the way src/ops/cpu/attention.c walks it, at several
 *     tile shapes (queries QT x keys KT): K and V packed once per head, Q
 *     once per tile, S = scale Q K^T then O += S V for each key tile, with
 *     the two GEMMs alone ("gemms") and with the online softmax between them
 *     ("+softmax", f32_attn_softmax and the accumulator's rescale).
 * The "gemms" time is what the fused forward cannot go below at this
 * micro-kernel's speed; divide the composite's time (attention_bench.mjs
 * --breakdown: sdpa_composite_1024x1024_d64, and its two matmuls
 * sdpa_part_qk_matmul + sdpa_part_pv_matmul) by it for the best fused /
 * composite ratio this machine allows, and the composite's matmuls by it
 * for the fraction the fused tiling's GEMMs take of the composite's.
 * Measured 2026-11-28 (two runs, machine loaded by 6 other builds): the
 * micro-kernel 30-40 GFLOP/s (kc 64-256); every walk's gemms 59.6-64.6 ms
 * (33-36 GFLOP/s), +softmax 70.3-79.9 ms (QT 16 x KT 512 best at
 * 70.3-70.8, the kernel's 64 x 256 at 71.8-73.3, 3% apart: within noise).
 * The composite, best of 10 at one thread in the same minutes, 92-102 ms,
 * the fused op 76-81 ms (1.21-1.26x): within 5-10% of the walk with its
 * softmax, so the fused driver costs little beyond the walk. The ceiling is
 * composite / gemms = 92 / 60-65 = 1.4-1.5x, and 1.3x with the softmax's
 * 8M exps (11 ms, vectorized, one pass after the max): the 2x target needs
 * a faster micro-kernel than the composite's, not a better tiling.
 *   . scripts/bootstrap.sh && emcc -O3 -msimd128 -Iinclude -Isrc bench/gemm_ukernel_probe.c \
 *     src/kernels/gemm.c src/kernels/attention.c src/kernels/reduce.c src/kernels/vunary_math.c \
 *     -sINITIAL_MEMORY=64MB -o /tmp/probe.js && node --no-experimental-fetch /tmp/probe.js */
#include <emscripten.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

void WEFT_UKERNEL(f32_gemm_4x8, splat)(size_t, size_t, size_t, const float*, const float*, float*, size_t,
                                       const struct weft_f32_gemm_params*);
void WEFT_UKERNEL(f32_attn_softmax, u8)(size_t, size_t, float*, size_t, float*, float*, float*);
#define GEMM WEFT_UKERNEL(f32_gemm_4x8, splat)

EM_JS(double, now, (void), { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; });

/* ---- 1: the micro-kernel on L1 ---- */

static void ukernel_rates(void) {
  static float A[4 * 256], B[8 * 256], C[64 * 8];
  for (int i = 0; i < 4 * 256; i++) A[i] = (i % 7) * 0.1f;
  for (int i = 0; i < 8 * 256; i++) B[i] = (i % 5) * 0.1f;
  int kcs[] = {64, 128, 256};
  for (int t = 0; t < 3; t++) {
    int kc = kcs[t];
    struct weft_f32_gemm_params p = {.alpha = t ? 1.0f : 0.125f, .accumulate = t};
    long calls = 4000000L * 64 / kc;
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
      double t0 = now();
      for (long c = 0; c < calls; c++) GEMM(4, 8, kc, A, B, C + (c & 15) * 32 % (64 * 8 - 32), 8, &p);
      double g = 64.0 * kc * calls / (now() - t0) / 1e9;
      if (g > best) best = g;
    }
    printf("f32_gemm_4x8 kc=%d: %.1f GFLOP/s (best of 5) C[0]=%g\n", kc, best, C[0]);
  }
}

/* ---- 2: the fused walk ---- */

enum { H = 8, L = 1024, S = 1024, D = 64 };

/* rows x d of src (row stride d) as panels of w rows: dst[panel][k][r] */
static void panels_of_rows(const float* src, int rows, int w, float* dst) {
  for (int p = 0; p < rows; p += w, dst += w * D)
    for (int k = 0; k < D; k++)
      for (int r = 0; r < w; r++) dst[k * w + r] = src[(p + r) * D + k];
}

/* V [S, D] as panels of 8 columns over all S rows: dst[panel][j][c] */
static void panels_of_cols(const float* v, float* dst) {
  for (int c0 = 0; c0 < D; c0 += 8)
    for (int j = 0; j < S; j++) memcpy(dst + c0 * S + j * 8, v + j * D + c0, 32);
}

struct walk {
  const float *q, *k, *v;
  float *kp, *vp, *qp, *s, *o;
};

/* one head, tiles of qt queries x kt keys; softmax: the online softmax too */
static void head(struct walk* w, int h, int qt, int kt, int softmax) {
  const float* q = w->q + h * L * D;
  panels_of_rows(w->k + h * S * D, S, 8, w->kp);
  panels_of_cols(w->v + h * S * D, w->vp);
  struct weft_f32_gemm_params qk = {.alpha = 0.125f}, pv = {.alpha = 1.0f, .accumulate = 1};
  float m[256], l[256], alpha[256];
  for (int i0 = 0; i0 < L; i0 += qt) {
    panels_of_rows(q + i0 * D, qt, 4, w->qp);
    memset(w->o, 0, sizeof(float) * qt * D);
    for (int i = 0; i < qt; i++) m[i] = -INFINITY, l[i] = 0;
    for (int j0 = 0; j0 < S; j0 += kt) {
      for (int j = 0; j < kt; j += 8)
        for (int i = 0; i < qt; i += 4) GEMM(4, 8, D, w->qp + i * D, w->kp + (j0 + j) * D, w->s + i * kt + j, kt, &qk);
      if (softmax) {
        WEFT_UKERNEL(f32_attn_softmax, u8)(qt, kt, w->s, kt, m, l, alpha);
        for (int i = 0; i < qt; i++)
          if (alpha[i] != 1.0f)
            for (int c = 0; c < D; c++) w->o[i * D + c] *= alpha[i];
      }
      pv.lda = kt;
      for (int c = 0; c < D; c += 8)
        for (int i = 0; i < qt; i += 4) GEMM(4, 8, kt, w->s + i * kt, w->vp + c * S + j0 * 8, w->o + i * D + c, D, &pv);
    }
  }
}

/* one timed walk of the 8 heads, ms */
static double walk_ms(struct walk* w, int qt, int kt, int softmax) {
  double t0 = now();
  for (int h = 0; h < H; h++) head(w, h, qt, kt, softmax);
  return (now() - t0) * 1e3;
}

static float* randoms(size_t n) {
  float* x = malloc(sizeof(float) * n);
  for (size_t i = 0; i < n; i++) x[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  return x;
}

static void fused_walks(void) {
  struct walk w = {randoms(H * L * D), randoms(H * S * D), randoms(H * S * D)};
  w.kp = malloc(sizeof(float) * S * D), w.vp = malloc(sizeof(float) * S * D);
  w.qp = malloc(sizeof(float) * 256 * D), w.s = malloc(sizeof(float) * 256 * 512), w.o = malloc(sizeof(float) * 256 * D);
  enum { NSHAPES = 8, ROUNDS = 5 };
  const int shapes[NSHAPES][2] = {{64, 256}, {64, 128}, {64, 64}, {32, 256}, {128, 128}, {128, 64}, {16, 512}, {256, 64}};
  double g[NSHAPES], f[NSHAPES];
  /* rounds over every shape, the best of each kept: a loaded machine's noise
   * falls on all shapes alike */
  for (int r = 0; r < ROUNDS; r++)
    for (int t = 0; t < NSHAPES; t++) {
      double a = walk_ms(&w, shapes[t][0], shapes[t][1], 0), b = walk_ms(&w, shapes[t][0], shapes[t][1], 1);
      if (!r || a < g[t]) g[t] = a;
      if (!r || b < f[t]) f[t] = b;
    }
  double flop = 4.0 * H * L * S * D;
  for (int t = 0; t < NSHAPES; t++)
    printf("fused walk QT=%3d KT=%3d: gemms %.1f ms (%.1f GFLOP/s), +softmax %.1f ms (%.1f GFLOP/s)\n", shapes[t][0],
           shapes[t][1], g[t], flop / g[t] / 1e6, f[t], flop / f[t] / 1e6);
}

int main(void) {
  ukernel_rates();
  fused_walks();
  return 0;
}
