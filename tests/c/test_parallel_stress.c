/* parallel_for under churn, for the ThreadSanitizer build (scripts/test.sh:
 * build/native-tsan) as much as for the others: random thread counts 1-8
 * changed between jobs, random ranges and grains, nested calls, errors raised
 * in some chunks, and elementwise ops and copies (the iterator's and the
 * transpose driver's parallel loops) at each thread count. Every job's
 * result is checked, so a lost or doubled chunk fails here and a data race
 * makes TSan fail the run. */
#include <stdatomic.h>
#include <stdlib.h>

#include "core/internal.h"
#include "test.h"
#include "weft/parallel.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rnd(uint64_t n) { /* splitmix64: reproducible, no libc state */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return (z ^ (z >> 31)) % n;
}

struct job {
  int64_t* out; /* out[i] = i * 3 + 1, each index written by exactly one chunk */
  int64_t fail_at; /* a chunk holding this index fails (-1: none) */
  atomic_int nested_calls;
  bool nest;
};

static weft_status inner_fn(void* p, int64_t b, int64_t e) {
  atomic_int* count = p;
  atomic_fetch_add(count, (int)(e - b));
  return WEFT_OK;
}

static weft_status job_fn(void* p, int64_t b, int64_t e) {
  struct job* j = p;
  for (int64_t i = b; i < e; i++) j->out[i] = i * 3 + 1;
  if (j->nest) { /* runs inline: a nested call never forks again */
    atomic_int count = 0;
    weft_status s = weft_parallel_for(0, 100, 1, inner_fn, &count);
    if (s != WEFT_OK || atomic_load(&count) != 100) return weft__error(WEFT_INTERNAL, "nested call lost work");
    atomic_fetch_add(&j->nested_calls, 1);
  }
  if (j->fail_at >= b && j->fail_at < e) return weft__error(WEFT_INVALID_ARGUMENT, "chunk %lld failed", (long long)b);
  return WEFT_OK;
}

static void test_random_jobs(void) {
  int max = weft_max_threads();
  for (int round = 0; round < 300; round++) {
    int threads = 1 + (int)rnd(8);
    CHECK(weft_set_num_threads(threads) == WEFT_OK);
    CHECK(weft_get_num_threads() == (threads < max ? threads : max));
    int64_t n = (int64_t)rnd(20000);
    int64_t grain = 1 + (int64_t)rnd(3000);
    struct job j = {calloc((size_t)n + 1, sizeof(int64_t)), -1, 0, rnd(4) == 0};
    bool fail = n > 0 && rnd(5) == 0;
    if (fail) j.fail_at = (int64_t)rnd((uint64_t)n);
    weft_status s = weft_parallel_for(0, n, grain, job_fn, &j);
    if (fail) {
      CHECK(s == WEFT_INVALID_ARGUMENT);
      CHECK_ERROR_HAS("failed");
    } else {
      CHECK(s == WEFT_OK);
      bool all = true;
      for (int64_t i = 0; i < n; i++) all &= j.out[i] == i * 3 + 1;
      CHECK(all);
    }
    free(j.out);
  }
}

/* The ops' parallel loops (iterator for_each, the blocked transpose) at
 * changing thread counts: results equal the 1-thread ones. */
static void test_ops_across_thread_counts(void) {
  const int64_t size[] = {64, 333, 17};
  weft_manual_seed(7);
  weft_tensor* a = weft_rand(size, 3, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* b = weft_rand(size, 3, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(weft_set_num_threads(1) == WEFT_OK);
  weft_tensor* sum1 = weft_add(a, b, weft_scalar_int(1));
  weft_tensor* bt = weft_transpose(b, 0, 2);
  weft_tensor* tr1 = weft_contiguous(bt, WEFT_CONTIGUOUS_FORMAT);
  for (int round = 0; round < 24; round++) {
    CHECK(weft_set_num_threads(1 + (int)rnd(8)) == WEFT_OK);
    weft_tensor* s = weft_add(a, b, weft_scalar_int(1));
    weft_tensor* t = weft_contiguous(bt, WEFT_CONTIGUOUS_FORMAT);
    weft_tensor* d1 = weft_sub(s, sum1, weft_scalar_int(1));
    weft_tensor* d2 = weft_sub(t, tr1, weft_scalar_int(1));
    bool zero = true;
    for (int64_t i = 0; i < weft_tensor_numel(d1); i += 97) zero &= weft_tensor_get_double(d1, i) == 0;
    for (int64_t i = 0; i < weft_tensor_numel(d2); i += 89) zero &= weft_tensor_get_double(d2, i) == 0;
    CHECK(zero);
    weft_tensor_release(s);
    weft_tensor_release(t);
    weft_tensor_release(d1);
    weft_tensor_release(d2);
  }
  weft_tensor_release(sum1);
  weft_tensor_release(tr1);
  weft_tensor_release(bt);
  weft_tensor_release(a);
  weft_tensor_release(b);
}

int main(void) {
  test_random_jobs();
  test_ops_across_thread_counts();
  CHECK(weft_set_num_threads(weft_max_threads()) == WEFT_OK);
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
