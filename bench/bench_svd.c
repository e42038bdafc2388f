/* torch.linalg.svd's driver (src/ops/cpu/svd.c) and lstsq's 'gelsd' on it,
 * one thread, by process CPU time (the machine is shared: wall clock is
 * noisy), the best of 5 calls per shape. Built with the tests (native):
 *   cmake -S . -B build/rel -DCMAKE_BUILD_TYPE=Release && cmake --build build/rel -j2 --target bench_svd
 *   ./build/rel/bench_svd
 * The peer, LAPACK's gesdd through PyTorch 1.13, timed the same way:
 * torch.set_num_threads(1), torch.linalg.svd(a, full_matrices=False) on
 * torch.randn(n, n, dtype=torch.float64), time.process_time(), best of 5. */
#include <stdio.h>
#include <time.h>

#include "ops/ops.h"
#include "weft/weft.h"

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* the best of 5 CPU times of one call, in ms */
static double best_ms(weft_tensor* a, int what) {
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    double t0 = cpu_seconds();
    if (what == 0) {
      weft_tensor3 o = weft_linalg_svd(a, false);
      weft_tensor3_release(o);
    } else {
      weft_tensor4 o = weft_linalg_lstsq(a, a, -1, "gelsd");
      weft_tensor4_release(o);
    }
    double t = cpu_seconds() - t0;
    best = t < best ? t : best;
  }
  return best * 1e3;
}

int main(void) {
  weft_set_num_threads(1);
  weft_manual_seed(1);
  const int64_t sizes[][2] = {{32, 32}, {64, 64}, {128, 128}, {256, 256}, {512, 128}, {128, 512}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    weft_tensor* a = weft_randn(sizes[i], 2, WEFT_FLOAT64, WEFT_DEVICE_CPU);
    printf("svd   %4lld x %-4lld float64  %8.2f ms\n", (long long)sizes[i][0], (long long)sizes[i][1], best_ms(a, 0));
    if (sizes[i][0] == sizes[i][1])
      printf("lstsq %4lld x %-4lld gelsd    %8.2f ms\n", (long long)sizes[i][0], (long long)sizes[i][1], best_ms(a, 1));
    weft_tensor_release(a);
  }
  return 0;
}
