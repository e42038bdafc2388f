/* What two threads can get over one from a cold read of 64 MB on this
 * machine (issue 11's "2 threads >= 1.6x 1 thread on the full sum"), and
 * how close weft comes to it. Three readers of the same 16,777,216 float32:
 *   pthreads      the best case written by hand: the caller sums the first
 *                 half while a pthread, already spinning, sums the second
 *                 (no pool, no chunks, no futex wake-up)
 *   parallel_for  weft_parallel_for over 8 chunks with the same inner loop
 *                 (the pool's cost: waking, slots, stealing)
 *   weft_sum      the sum op itself (dispatcher, iterator plan, partials)
 * Before every timed run a 128 MB copy evicts the input from the caches, as
 * npm run bench's interleaved workloads do (its memcpy_16M runs between two
 * sum_16M runs). Rounds interleave the cases so machine noise hits all alike;
 * each figure is the median of ROUNDS, in GB/s of bytes read, and the ratio
 * of 2 threads to 1. Run: ./build/rel/bench_read_probe */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "kernels/vec/vec.h"
#include "weft/weft.h"

#define N (16 * 1024 * 1024)
#define CHUNKS 8
#define ROUNDS 21

enum { PTHREADS, PARALLEL_FOR, WEFT_SUM, NCASES };
static const char* const names[NCASES] = {"pthreads", "parallel_for", "weft_sum"};

static const float* x;
static float partial[CHUNKS];
static atomic_int go, done;
static volatile float sink;

/* the sum of x[b, e): four vector accumulators, like weft's float32 kernel */
static float sum_range(int64_t b, int64_t e) {
  wv128 a0 = wv_f32x4_splat(0), a1 = a0, a2 = a0, a3 = a0;
  for (int64_t i = b; i < e; i += 16) {
    a0 = wv_f32x4_add(a0, wv_v128_load(x + i));
    a1 = wv_f32x4_add(a1, wv_v128_load(x + i + 4));
    a2 = wv_f32x4_add(a2, wv_v128_load(x + i + 8));
    a3 = wv_f32x4_add(a3, wv_v128_load(x + i + 12));
  }
  float t[4];
  wv_v128_store(t, wv_f32x4_add(wv_f32x4_add(a0, a1), wv_f32x4_add(a2, a3)));
  return t[0] + t[1] + t[2] + t[3];
}

static void* second_half(void* arg) {
  (void)arg;
  while (!atomic_load(&go)) continue; /* spinning before the clock starts */
  partial[1] = sum_range(N / 2, N);
  atomic_store(&done, 1);
  return NULL;
}

static weft_status chunks(void* ctx, int64_t b, int64_t e) {
  (void)ctx;
  for (int64_t c = b; c < e; c++) partial[c] = sum_range(N / CHUNKS * c, N / CHUNKS * (c + 1));
  return WEFT_OK;
}

/* one timed run of `which` on `threads` threads, in ms (< 0: an error) */
static double run(int which, int threads, weft_tensor* in, weft_tensor* out) {
  pthread_t helper;
  if (which == PTHREADS && threads == 2) {
    atomic_store(&go, 0);
    atomic_store(&done, 0);
    if (pthread_create(&helper, NULL, second_half, NULL) != 0) return -1;
  }
  double t0 = now_ms();
  if (which == PTHREADS && threads == 2) {
    atomic_store(&go, 1);
    partial[0] = sum_range(0, N / 2);
    while (!atomic_load(&done)) continue;
  } else if (which == PTHREADS) {
    partial[0] = sum_range(0, N);
  } else if (which == PARALLEL_FOR) {
    if (weft_parallel_for(0, CHUNKS, 1, chunks, NULL) != WEFT_OK) return -1;
  } else if (!weft_sum_out(in, NULL, 0, false, (weft_dtype)-1, out)) {
    return -1;
  }
  double ms = now_ms() - t0;
  if (which == PTHREADS && threads == 2) pthread_join(helper, NULL);
  sink = partial[0];
  return ms;
}

int main(void) {
  int64_t n = N;
  weft_tensor* in = weft_full(&n, 1, 1.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* out = weft_empty(NULL, 0, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  char* evict_a = malloc((size_t)N * 8);
  char* evict_b = malloc((size_t)N * 8);
  if (!in || !out || !evict_a || !evict_b) {
    fprintf(stderr, "bench_read_probe: setup failed: %s\n", weft_last_error());
    return 1;
  }
  x = weft_tensor_data_ptr(in);
  memset(evict_b, 1, (size_t)N * 8);
  static double ms[NCASES][2][ROUNDS];
  for (int r = -2; r < ROUNDS; r++) { /* two warm-up rounds */
    for (int c = 0; c < NCASES; c++) {
      for (int t = 1; t <= 2; t++) {
        if (weft_set_num_threads(t) != WEFT_OK) return 1;
        memcpy(evict_a, evict_b, (size_t)N * 8);
        double v = run(c, t, in, out);
        if (v < 0) {
          fprintf(stderr, "bench_read_probe: %s failed: %s\n", names[c], weft_last_error());
          return 1;
        }
        if (r >= 0) ms[c][t - 1][r] = v;
      }
    }
  }
  printf("cold read of %d MB float32, median of %d rounds, GB/s of bytes read\n", N * 4 >> 20, ROUNDS);
  printf("%-14s %10s %10s %12s\n", "reader", "1 thread", "2 threads", "2t / 1t");
  for (int c = 0; c < NCASES; c++) {
    double gbs[2];
    for (int t = 0; t < 2; t++) {
      qsort(ms[c][t], ROUNDS, sizeof(double), cmp_d);
      gbs[t] = N * 4.0 / (ms[c][t][ROUNDS / 2] * 1e6);
    }
    printf("%-14s %10.2f %10.2f %11.2fx\n", names[c], gbs[0], gbs[1], gbs[1] / gbs[0]);
  }
  weft_tensor_release(in);
  weft_tensor_release(out);
  free(evict_a);
  free(evict_b);
  return 0;
}
