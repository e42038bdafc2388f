/* The issue-5 benchmarks, native: every workload of bench/workloads.h at 1
 * and 2 threads. Reps go round-robin over the workloads (one run of each per
 * round), so machine noise spreads over all of them alike; each prints its
 * median ms, GB/s (bytes read + written / time) and the ratio to its
 * ceiling measured in the same run with the same thread count (of the
 * medians, and "paired": the median over rounds of the in-round ratio).
 *   bench_weft [--json] [--reps N] [--threads 1,2]
 * bench/run.mjs runs this and the wasm builds side by side. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include <time.h>

#include "kernels/kernels.h"
#include "weft/parallel.h"
#include "weft/weft.h"
#include "workloads.h"

#define MAX_REPS 200


static int run_threads(int threads, int reps, int json) {
  static double t[WEFT_BENCH_COUNT][MAX_REPS], paired[WEFT_BENCH_COUNT][MAX_REPS];
  double med[WEFT_BENCH_COUNT], pmed[WEFT_BENCH_COUNT];
  weft_set_num_threads(threads);
  for (int w = 0; w < WEFT_BENCH_COUNT; w++)
    for (int r = 0; r < 3; r++)
      if (weft_bench_run(w) != WEFT_OK) {
        fprintf(stderr, "bench: %s: %s\n", weft_bench_name(w), weft_last_error());
        return 1;
      }
  for (int r = 0; r < reps; r++) {
    for (int w = 0; w < WEFT_BENCH_COUNT; w++) {
      double t0 = now_ms();
      weft_bench_run(w);
      t[w][r] = now_ms() - t0;
    }
  }
  int bad = weft_bench_verify();
  if (bad) {
    fprintf(stderr, "bench: %s computed a wrong result\n", weft_bench_name(bad - 1));
    return 1;
  }
  /* the ratio within each round (the ceiling ran moments before), median
   * over rounds: steadier than the ratio of medians on a busy machine */
  for (int w = 0; w < WEFT_BENCH_COUNT; w++) {
    int c = weft_bench_ceiling(w);
    for (int r = 0; r < reps; r++)
      paired[w][r] = (weft_bench_bytes(w) / t[w][r]) / (weft_bench_bytes(c) / t[c][r]);
  }
  for (int w = 0; w < WEFT_BENCH_COUNT; w++) {
    qsort(t[w], (size_t)reps, sizeof t[w][0], cmp_d);
    qsort(paired[w], (size_t)reps, sizeof paired[w][0], cmp_d);
    med[w] = t[w][reps / 2];
    pmed[w] = paired[w][reps / 2];
  }
  for (int w = 0; w < WEFT_BENCH_COUNT; w++) {
    int c = weft_bench_ceiling(w);
    double gbs = weft_bench_bytes(w) / (med[w] * 1e6), cgbs = weft_bench_bytes(c) / (med[c] * 1e6);
    if (json)
      printf("{\"name\":\"%s\",\"build\":\"native\",\"isa\":\"%s\",\"threads\":%d,\"ms\":%.3f,\"GB/s\":%.2f,"
             "\"ratio\":%.3f,\"ratio_paired\":%.3f,\"ceiling\":\"%s\",\"reps\":%d}\n",
             weft_bench_name(w), weft__kernels()->isa, weft_get_num_threads(), med[w], gbs, gbs / cgbs, pmed[w],
             weft_bench_name(c), reps);
    else
      printf("%-20s native/%s threads=%d %9.3f ms %7.2f GB/s  %5.2fx (paired %5.2fx) %s\n", weft_bench_name(w),
             weft__kernels()->isa, weft_get_num_threads(), med[w], gbs, gbs / cgbs, pmed[w], weft_bench_name(c));
  }
  fflush(stdout);
  return 0;
}

int main(int argc, char** argv) {
  int json = 0, reps = 15;
  const char* threads = "1,2";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) json = 1;
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = argv[++i];
    else {
      fprintf(stderr, "usage: bench_weft [--json] [--reps N] [--threads 1,2]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  if (reps > MAX_REPS) reps = MAX_REPS;
  if (weft_bench_setup() != WEFT_OK) {
    fprintf(stderr, "bench: %s\n", weft_last_error());
    return 1;
  }
  int rc = 0;
  for (const char* p = threads; *p && !rc;) {
    rc = run_threads(atoi(p), reps, json);
    p = strchr(p, ',');
    if (!p) break;
    p++;
  }
  weft_bench_teardown();
  return rc;
}
