/* Ceiling probe for the 2-thread GEMM (issue 26): the f32 4x8 micro-kernel
 * alone on L1-resident packed panels (kc = 256, accumulating), on 1 and on
 * 2 pthreads at once, each thread on its own panels. Nothing a GEMM driver
 * does (packing, blocking, the pool's fork/join, cache misses) is in it, so
 * no wasm SIMD GEMM built on this micro-kernel shape (weft's, and XNNPACK's
 * 4x8 x86 "splat" one in tfjs-wasm) can run faster here. Per k step the
 * kernel issues 8 f32x4.mul and 8 f32x4.add (wasm SIMD has no fused
 * multiply-add): on a core with two multiply and two add pipes that is 4
 * cycles per 64 flops, whatever the tile shape.
 * Prints, per thread count: the best wall-clock GFLOP/s of 7 runs and the
 * GFLOP per second of process CPU time (all threads): on a loaded machine
 * the second is what one core does when it runs, so twice the 1-thread CPU
 * rate is what two cores can do.
 *   . scripts/bootstrap.sh && emcc -O3 -msimd128 -pthread -sPTHREAD_POOL_SIZE=2 -sEXIT_RUNTIME=1 -Iinclude -Isrc \
 *     bench/gemm_ceiling_probe.c src/kernels/gemm.c -o /tmp/ceiling.js && node --no-experimental-fetch /tmp/ceiling.js */
#include <emscripten.h>
#include <pthread.h>
#include <stdio.h>

#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

void WEFT_UKERNEL(f32_gemm_4x8, splat)(size_t, size_t, size_t, const float*, const float*, float*, size_t,
                                       const struct weft_f32_gemm_params*);
EM_JS(double, cpu_s, (void), { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; });
EM_JS(double, wall_s, (void), { return performance.now() / 1e3; });

#define KC 256
#define CALLS 400000L

typedef struct {
  float a[4 * KC], b[8 * KC], c[4 * 8];
} panels;
static panels P[2];

static void* run(void* arg) {
  panels* p = arg;
  struct weft_f32_gemm_params prm = {.alpha = 1.0f, .accumulate = 1};
  for (long i = 0; i < CALLS; i++) WEFT_UKERNEL(f32_gemm_4x8, splat)(4, 8, KC, p->a, p->b, p->c, 8, &prm);
  return NULL;
}

int main(void) {
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < 8 * KC; i++) {
      if (i < 4 * KC) P[t].a[i] = (float)(i % 7) * 1e-3f;
      P[t].b[i] = (float)(i % 5) * 1e-3f;
    }
  const double flops = 2.0 * 4 * 8 * KC * CALLS;
  for (int threads = 1; threads <= 2; threads++) {
    double best_wall = 0, best_cpu = 0;
    for (int rep = 0; rep < 7; rep++) {
      pthread_t th[2];
      double w0 = wall_s(), c0 = cpu_s();
      for (int t = 0; t < threads; t++) pthread_create(&th[t], NULL, run, &P[t]);
      for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
      double w = wall_s() - w0, c = cpu_s() - c0;
      double gw = threads * flops / w / 1e9, gc = threads * flops / c / 1e9;
      if (gw > best_wall) best_wall = gw;
      if (gc > best_cpu) best_cpu = gc;
    }
    printf("f32 4x8 micro-kernel, kc %d, %d thread%s: %.1f GFLOP/s wall (best of 7), %.1f GFLOP per cpu-second\n", KC,
           threads, threads > 1 ? "s" : "", best_wall, best_cpu);
  }
  printf("(c %g %g)\n", P[0].c[0], P[1].c[0]);
  return 0;
}
