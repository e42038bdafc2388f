/* Ceiling probe for the fused attention (issue 24): the f32 4x8 GEMM
 * micro-kernel alone on L1-resident packed panels, at the depths of the fused
 * kernel's two products (Q K^T: kc = e = 64; P V: kc = KT = 256), timed by
 * the process's CPU time. The fused forward cannot beat its two products at
 * these rates (+ the softmax), which bounds fused / composite.
 *   . scripts/bootstrap.sh && emcc -O3 -msimd128 -Iinclude -Isrc bench/gemm_ukernel_probe.c \
 *     src/kernels/gemm.c -o /tmp/probe.js && node --no-experimental-fetch /tmp/probe.js */
#include <stdio.h>
#include <emscripten.h>
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"
void WEFT_UKERNEL(f32_gemm_4x8, splat)(size_t, size_t, size_t, const float*, const float*, float*, size_t,
                                       const struct weft_f32_gemm_params*);
EM_JS(double, now, (void), { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; });
static float A[4 * 256], B[8 * 256], C[64 * 8];
int main(void) {
  for (int i = 0; i < 4 * 256; i++) A[i] = (i % 7) * 0.1f;
  for (int i = 0; i < 8 * 256; i++) B[i] = (i % 5) * 0.1f;
  int kcs[] = {64, 256};
  for (int t = 0; t < 2; t++) {
    int kc = kcs[t];
    struct weft_f32_gemm_params p = {.alpha = t ? 1.0f : 0.125f, .accumulate = t};
    long calls = 4000000L * 64 / kc;
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
      double t0 = now();
      for (long c = 0; c < calls; c++) WEFT_UKERNEL(f32_gemm_4x8, splat)(4, 8, kc, A, B, C + (c & 15) * 32 % (64 * 8 - 32), 8, &p);
      double g = 64.0 * kc * calls / (now() - t0) / 1e9;
      if (g > best) best = g;
    }
    printf("f32_gemm_4x8 kc=%d: %.1f GFLOP/s (best of 5, process cpu time) C[0]=%g\n", kc, best, C[0]);
  }
  return 0;
}
