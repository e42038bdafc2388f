/* parallel_for: coverage of every index exactly once, chunk >= grain, error
 * propagation, nesting, thread counts 1-4 and back, many tiny jobs. */
#include <stdatomic.h>
#include <stdlib.h>

#include "core/internal.h"
#include "test.h"
#include "weft/parallel.h"

struct sum_ctx {
  atomic_llong sum;
  atomic_int calls;
  atomic_int short_chunks;
  int64_t grain, end;
  atomic_uchar* seen;
};

static weft_status sum_fn(void* p, int64_t b, int64_t e) {
  struct sum_ctx* c = p;
  long long s = 0;
  for (int64_t i = b; i < e; i++) {
    s += i;
    if (c->seen) atomic_fetch_add(&c->seen[i], 1);
  }
  atomic_fetch_add(&c->sum, s);
  atomic_fetch_add(&c->calls, 1);
  if (e - b < c->grain && e != c->end) atomic_fetch_add(&c->short_chunks, 1);
  if (!weft_in_parallel_region()) return weft__error(WEFT_INTERNAL, "not in region");
  return WEFT_OK;
}

static void test_sums(void) {
  const int64_t ranges[][3] = {{0, 1, 1}, {0, 10, 100}, {0, 1000, 1}, {5, 100000, 7}, {-50, 50, 3},
                               {0, 1 << 20, 32768}, {3, 3, 1}, {0, 12345, 0}};
  for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
    int64_t b = ranges[r][0], e = ranges[r][1], g = ranges[r][2];
    struct sum_ctx c = {.grain = g, .end = e};
    int64_t n = e > b ? e - b : 0;
    atomic_uchar* seen = calloc((size_t)n + 1, 1);
    c.seen = b == 0 ? seen : NULL;
    CHECK(weft_parallel_for(b, e, g, sum_fn, &c) == WEFT_OK);
    long long want = 0;
    for (int64_t i = b; i < e; i++) want += i;
    CHECK(atomic_load(&c.sum) == want);
    CHECK(atomic_load(&c.short_chunks) == 0);
    if (b == 0) {
      int once = 1;
      for (int64_t i = 0; i < n; i++) once &= seen[i] == 1;
      CHECK(once);
    }
    if (n == 0) CHECK(atomic_load(&c.calls) == 0);
    free(seen);
  }
}

/* Which threads took chunks: a lowered count must leave the surplus workers out. */
#include <pthread.h>
#define MAX_SEEN_THREADS 64
static pthread_t seen_threads[MAX_SEEN_THREADS];
static atomic_int nseen_threads;
static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;

static weft_status record_thread(void* p, int64_t b, int64_t e) {
  (void)p;
  volatile double x = 0;
  for (int64_t i = b; i < e; i++) x += (double)i * 0.5; /* enough work for every thread to join in */
  pthread_mutex_lock(&seen_mu);
  int n = atomic_load(&nseen_threads), known = 0;
  for (int i = 0; i < n; i++) known |= pthread_equal(seen_threads[i], pthread_self());
  if (!known && n < MAX_SEEN_THREADS) seen_threads[atomic_fetch_add(&nseen_threads, 1)] = pthread_self();
  pthread_mutex_unlock(&seen_mu);
  return WEFT_OK;
}

static void test_thread_count_respected(void) {
  atomic_store(&nseen_threads, 0);
  CHECK(weft_parallel_for(0, 1 << 22, 1024, record_thread, NULL) == WEFT_OK);
  CHECK(atomic_load(&nseen_threads) >= 1);
  CHECK(atomic_load(&nseen_threads) <= weft_get_num_threads());
}

static weft_status fail_fn(void* p, int64_t b, int64_t e) {
  (void)p;
  if (b <= 777 && 777 < e) return weft__error(WEFT_ZERO_DIVISION, "chunk: boom at %d", 777);
  return WEFT_OK;
}

static void test_errors(void) {
  weft_clear_error();
  CHECK(weft_parallel_for(0, 100000, 10, fail_fn, NULL) == WEFT_ZERO_DIVISION);
  CHECK_ERROR_HAS("chunk: boom at 777");
  CHECK(weft_last_status() == WEFT_ZERO_DIVISION);
  weft_clear_error();
  /* inline path too */
  CHECK(weft_parallel_for(0, 1000, 100000, fail_fn, NULL) == WEFT_ZERO_DIVISION);
  CHECK_ERROR_HAS("boom");
  /* success after a failure */
  struct sum_ctx c = {.grain = 1, .end = 1000};
  CHECK(weft_parallel_for(0, 1000, 1, sum_fn, &c) == WEFT_OK);
  CHECK(atomic_load(&c.sum) == 999 * 1000 / 2);
}

static weft_status outer_fn(void* p, int64_t b, int64_t e) {
  struct sum_ctx* c = p;
  for (int64_t i = b; i < e; i++) {
    struct sum_ctx inner = {.grain = 1, .end = 100};
    weft_status s = weft_parallel_for(0, 100, 1, sum_fn, &inner);
    if (s != WEFT_OK) return s;
    atomic_fetch_add(&c->sum, atomic_load(&inner.sum));
  }
  return WEFT_OK;
}

static void test_nesting(void) {
  struct sum_ctx c = {.grain = 1};
  CHECK(weft_parallel_for(0, 64, 1, outer_fn, &c) == WEFT_OK);
  CHECK(atomic_load(&c.sum) == 64LL * 4950);
}

static weft_status tiny_fn(void* p, int64_t b, int64_t e) {
  atomic_fetch_add((atomic_llong*)p, e - b);
  return WEFT_OK;
}

static void test_many_tiny(void) {
  atomic_llong total = 0;
  int ok = 1;
  for (int j = 0; j < 3000; j++) {
    ok &= weft_parallel_for(0, 8, 1, tiny_fn, &total) == WEFT_OK;
  }
  CHECK(ok);
  CHECK(atomic_load(&total) == 3000 * 8);
}

int main(void) {
  setenv("WEFT_MAX_THREADS", "4", 1); /* 4 threads even on a 2-core machine */
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  CHECK(weft_max_threads() == 1); /* the no-threads build: same path, one thread */
#else
  CHECK(weft_max_threads() == 4);
#endif
  CHECK(weft_get_num_threads() == weft_max_threads());
  CHECK(!weft_in_parallel_region());
  CHECK(weft_set_num_threads(0) == WEFT_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("positive");
  const int counts[] = {1, 2, 3, 4, 2, 1, 4};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    CHECK(weft_set_num_threads(counts[i]) == WEFT_OK);
    /* the machine may have fewer cores than asked: the count is clamped */
    int want = counts[i] < weft_max_threads() ? counts[i] : weft_max_threads();
    CHECK(weft_get_num_threads() == want);
    test_sums();
    test_errors();
    test_nesting();
    test_many_tiny();
    test_thread_count_respected();
    CHECK(!weft_in_parallel_region());
  }
  TEST_REPORT();
}
