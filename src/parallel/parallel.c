/* parallel_for on a persistent pool of pthread workers (pthreadpool style).
 *
 * weft_parallel_for(begin, end, grain, fn, ctx) replaces the serial loop
 *     weft_status s = fn(ctx, begin, end);
 * by cutting [begin, end) into chunks of `chunk >= grain` elements and
 * calling fn once per chunk, on some thread.
 *
 * - The caller is worker 0. It publishes the job inside the pool struct (no
 *   allocation), bumps a generation word, runs its own slot, steals, then
 *   waits for the workers to check in. Each thread's slot {start, end,
 *   length} of chunk indices sits on its own cache line; the owner takes from
 *   the front, thieves from the back, and `length` arbitrates so the two
 *   never take the same chunk.
 * - One thread, a range no larger than the grain, a nested call (from inside
 *   a chunk) or a call while another thread owns the pool runs inline, with no
 *   atomics on the job.
 * - Waiting: spin for SPIN_US microseconds of the clock (not a count of
 *   iterations: wasm has no pause instruction, so 4000 loads there were a
 *   few microseconds, less than the JS between two ops of a decode step, and
 *   every op of the step paid a futex wake-up, tens of microseconds, on each
 *   worker), then sleep on a futex (Linux: futex(2);
 *   Emscripten: emscripten_futex_wait; elsewhere a mutex/condvar pair).
 *   A browser's main thread may not block (Atomics.wait throws there), so when
 *   emscripten_is_main_browser_thread() the caller only spins; the workers
 *   are Web Workers and may sleep. A spinning main thread stays responsive
 *   only in that the wait is short: jobs are bounded by the work itself.
 * - Errors: the first chunk that fails stores its status and copies its
 *   thread's message into the pool; later chunks are skipped and the caller
 *   re-raises it with weft__error so weft_last_error() has it.
 * - Workers are created lazily (first parallel call or set_num_threads),
 *   within the build's pool size: native, the hardware count capped at
 *   WEFT_MAX_POOL_THREADS; wasm with pthreads, the core count capped at
 *   WEFT_WASM_POOL_SIZE + 1 (the caller plus one worker per preallocated
 *   Web Worker: the glue makes min(WEFT_WASM_POOL_SIZE, cores - 1) of them,
 *   src/wasm/wasm.cmake, so pthread_create never waits on the event loop; when js/loader.js starts them
 *   after init(), weft_set_worker_limit keeps the pool to those loaded). Lowering the count never
 *   stops a worker (a join would block the browser's main thread): workers
 *   above the job's thread count check in without taking chunks. A wasm build without -pthread runs the same code with one thread. */
#include "weft/parallel.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/tls.h"
#include "parallel/worker_limit.h"

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define WEFT_HAVE_THREADS 0
#else
#define WEFT_HAVE_THREADS 1
#endif

#ifndef WEFT_MAX_POOL_THREADS
#define WEFT_MAX_POOL_THREADS 64
#endif
#ifndef WEFT_WASM_POOL_SIZE
#define WEFT_WASM_POOL_SIZE 4
#endif

#if WEFT_HAVE_THREADS
#include <pthread.h>
#if defined(__EMSCRIPTEN__)
#include <emscripten/emscripten.h>
#include <emscripten/threading.h>
#elif defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#include <unistd.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#endif

static WEFT_THREAD_LOCAL bool tls_in_region;

bool weft_in_parallel_region(void) { return tls_in_region; }

#if !WEFT_HAVE_THREADS

int weft_max_threads(void) { return 1; }
void weft_set_worker_limit(int n) { (void)n; }
int weft_get_num_threads(void) { return 1; }
weft_status weft_set_num_threads(int n) {
  if (n < 1) return weft__error(WEFT_INVALID_ARGUMENT, "set_num_threads: Expected positive number of threads");
  return WEFT_OK;
}

#else /* WEFT_HAVE_THREADS */

#define SPIN_US 1000   /* a worker's spin before it sleeps: covers the gaps between the ops of a decode step (1000
                          beat 150 at 2 threads on stories15M; OpenMP's default block time is 200 ms) */
#define SPIN_CHECK 64  /* loads between two looks at the clock */
#define CACHE_LINE 64

struct slot {
  _Alignas(CACHE_LINE) atomic_llong start;
  atomic_llong end;
  atomic_llong length;
};

struct worker {
  pthread_t thread;
  int id;
  unsigned seen; /* the generation at creation: jobs after it are this worker's */
};

static struct pool {
  /* futex words */
  _Alignas(CACHE_LINE) atomic_uint generation;
  atomic_int sleepers;
  _Alignas(CACHE_LINE) atomic_int pending;
  atomic_int caller_waiting;
  /* the job, written by the caller before the generation bump */
  _Alignas(CACHE_LINE) weft_range_fn fn;
  void* ctx;
  int64_t begin, end, chunk;
  int nthreads; /* threads taking part in this job; workers with a higher id sit it out */
  /* first error */
  atomic_int err_flag;
  weft_status err_status;
  char err_msg[1024];
  struct slot slots[WEFT_MAX_POOL_THREADS];
  /* pool state, changed only by the thread owning `busy` */
  atomic_int busy;
  atomic_int num_threads; /* configured; 0 = not yet initialised */
  int nworkers;
  struct worker workers[WEFT_MAX_POOL_THREADS];
} pool;

/* ---- futex-style waiting on a 32-bit word ---- */

#if defined(__EMSCRIPTEN__)
static void word_wait(void* w, unsigned v) { emscripten_futex_wait(w, v, 1e9); }
static void word_wake(void* w) { emscripten_futex_wake(w, INT32_MAX); }
#elif defined(__linux__)
static void word_wait(void* w, unsigned v) { syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0); }
static void word_wake(void* w) { syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0); }
#else
static pthread_mutex_t wait_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wait_cv = PTHREAD_COND_INITIALIZER;
static void word_wait(void* w, unsigned v) {
  pthread_mutex_lock(&wait_mu);
  if ((unsigned)atomic_load((atomic_uint*)w) == v) pthread_cond_wait(&wait_cv, &wait_mu);
  pthread_mutex_unlock(&wait_mu);
}
static void word_wake(void* w) {
  (void)w;
  pthread_mutex_lock(&wait_mu);
  pthread_cond_broadcast(&wait_cv);
  pthread_mutex_unlock(&wait_mu);
}
#endif

#include <time.h>

static double now_us(void) {
#if defined(__EMSCRIPTEN__)
  return emscripten_get_now() * 1e3;
#else
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
#endif
}

/* A spin's budget: true while it may go on (the clock read every SPIN_CHECK calls). */
struct spin {
  int n;
  double until;
};
static bool spin_on(struct spin* s) {
  if (s->n++ % SPIN_CHECK) return true;
  double t = now_us();
  if (s->n == 1) s->until = t + SPIN_US;
  return t < s->until;
}

static inline void cpu_relax(void) {
#if defined(__SSE2__)
  _mm_pause();
#endif
}

static bool caller_may_block(void) {
#if defined(__EMSCRIPTEN__)
  return !emscripten_is_main_browser_thread();
#else
  return true;
#endif
}

/* ---- the job ---- */

static bool try_decrement(atomic_llong* v) {
  long long cur = atomic_load_explicit(v, memory_order_relaxed);
  while (cur > 0) {
    if (atomic_compare_exchange_weak_explicit(v, &cur, cur - 1, memory_order_acquire, memory_order_relaxed))
      return true;
  }
  return false;
}

static void record_error(weft_status s) {
  int expected = 0;
  if (atomic_compare_exchange_strong(&pool.err_flag, &expected, 1)) {
    pool.err_status = s;
    snprintf(pool.err_msg, sizeof pool.err_msg, "%s", weft_last_error());
  }
}

static void run_chunk(long long c) {
  if (atomic_load_explicit(&pool.err_flag, memory_order_relaxed)) return;
  int64_t b = pool.begin + (int64_t)c * pool.chunk;
  int64_t e = pool.end - b > pool.chunk ? b + pool.chunk : pool.end;
  weft_status s = pool.fn(pool.ctx, b, e);
  if (s != WEFT_OK) record_error(s);
}

static void run_job(int id) {
  struct slot* me = &pool.slots[id];
  while (try_decrement(&me->length))
    run_chunk(atomic_fetch_add_explicit(&me->start, 1, memory_order_relaxed));
  for (int k = 1; k < pool.nthreads; k++) {
    struct slot* victim = &pool.slots[(id + pool.nthreads - k) % pool.nthreads];
    while (try_decrement(&victim->length))
      run_chunk(atomic_fetch_sub_explicit(&victim->end, 1, memory_order_relaxed) - 1);
  }
}

static void check_in(void) {
  if (atomic_fetch_sub(&pool.pending, 1) == 1 && atomic_load(&pool.caller_waiting))
    word_wake(&pool.pending);
}

static void* worker_main(void* arg) {
  struct worker* w = arg;
  unsigned seen = w->seen;
  tls_in_region = true; /* anything a worker runs is inside a chunk */
  for (;;) {
    unsigned g;
    struct spin sp = {0, 0};
    while ((g = atomic_load_explicit(&pool.generation, memory_order_acquire)) == seen) {
      if (spin_on(&sp)) {
        cpu_relax();
        continue;
      }
      atomic_fetch_add(&pool.sleepers, 1);
      if (atomic_load(&pool.generation) == seen) word_wait(&pool.generation, seen);
      atomic_fetch_sub(&pool.sleepers, 1);
    }
    seen = g;
    if (pool.fn && w->id < pool.nthreads) run_job(w->id);
    check_in();
  }
  return NULL; /* not reached: workers live as long as the process */
}

/* Publish the current job fields to the workers and wait until all of them
 * checked in; the caller runs slot 0 in between when fn is set. */
static void publish_and_run(void) {
  atomic_store(&pool.pending, pool.nworkers);
  atomic_fetch_add_explicit(&pool.generation, 1, memory_order_seq_cst);
  if (atomic_load(&pool.sleepers) > 0) word_wake(&pool.generation);
  if (pool.fn) {
    tls_in_region = true;
    run_job(0);
    tls_in_region = false;
  }
  bool may_block = caller_may_block();
  int p;
  struct spin sp = {0, 0};
  while ((p = atomic_load_explicit(&pool.pending, memory_order_acquire)) != 0) {
    if (!may_block || spin_on(&sp)) {
      cpu_relax();
      continue;
    }
    atomic_store(&pool.caller_waiting, 1);
    if (atomic_load(&pool.pending) == p) word_wait(&pool.pending, (unsigned)p);
    atomic_store(&pool.caller_waiting, 0);
  }
}

/* The environment variable WEFT_MAX_THREADS overrides the hardware count
 * (tests run 4 threads on 2 cores); still capped by the pool size. */
static int hardware_threads(void) {
  static atomic_int cached;
  int c = atomic_load_explicit(&cached, memory_order_relaxed);
  if (c) return c;
#if defined(__EMSCRIPTEN__)
  long n = emscripten_num_logical_cores();
#else
  long n = sysconf(_SC_NPROCESSORS_ONLN);
#endif
  const char* env = getenv("WEFT_MAX_THREADS");
  if (env && atol(env) > 0) n = atol(env);
#if defined(__EMSCRIPTEN__)
  if (n > WEFT_WASM_POOL_SIZE + 1) n = WEFT_WASM_POOL_SIZE + 1;
#endif
  if (n < 1) n = 1;
  if (n > WEFT_MAX_POOL_THREADS) n = WEFT_MAX_POOL_THREADS;
  atomic_store_explicit(&cached, (int)n, memory_order_relaxed);
  return (int)n;
}

int weft_max_threads(void) { return hardware_threads(); }

static int configured_threads(void) {
  int n = atomic_load(&pool.num_threads);
  return n ? n : hardware_threads();
}

int weft_get_num_threads(void) { return configured_threads(); }

static void acquire_pool(void) {
  int expected = 0;
  while (!atomic_compare_exchange_weak(&pool.busy, &expected, 1)) {
    expected = 0;
    cpu_relax();
  }
}
static bool try_acquire_pool(void) {
  int expected = 0;
  return atomic_compare_exchange_strong(&pool.busy, &expected, 1);
}
static void release_pool(void) { atomic_store(&pool.busy, 0); }

/* With the pool owned: grow the workers to n - 1. Workers are never stopped:
 * a lower thread count only leaves the surplus out of each job, because
 * joining a thread would block, and a browser's main thread may not block.
 * A failed pthread_create leaves fewer workers, never an error. */
static atomic_int worker_limit = -1;

void weft_set_worker_limit(int n) { atomic_store(&worker_limit, n); }

static void grow_workers(int n) {
  int limit = atomic_load(&worker_limit);
  if (limit >= 0 && n - 1 > limit) n = limit + 1;
  while (pool.nworkers < n - 1) {
    struct worker* w = &pool.workers[pool.nworkers];
    w->id = pool.nworkers + 1;
    w->seen = atomic_load(&pool.generation);
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) break;
    pool.nworkers++;
  }
}

weft_status weft_set_num_threads(int n) {
  if (n < 1) return weft__error(WEFT_INVALID_ARGUMENT, "set_num_threads: Expected positive number of threads");
  int max = hardware_threads();
  atomic_store(&pool.num_threads, n > max ? max : n);
  if (tls_in_region) return WEFT_OK; /* applied at the next top-level call */
  acquire_pool();
  grow_workers(configured_threads());
  release_pool();
  return WEFT_OK;
}

/* With the pool owned; false when no worker could be created (run inline). */
static bool run_parallel(int64_t begin, int64_t end, int64_t grain, weft_range_fn fn, void* ctx,
                         weft_status* status) {
  int want = configured_threads();
  grow_workers(want);
  int t = pool.nworkers + 1 < want ? pool.nworkers + 1 : want;
  if (t == 1) return false;
  int64_t len = end - begin;
  /* a few chunks per thread so stealing can even out uneven chunks */
  int64_t chunk = len / (4 * t) + (len % (4 * t) != 0);
  if (chunk < grain) chunk = grain;
  int64_t nchunks = (len + chunk - 1) / chunk;
  pool.fn = fn;
  pool.ctx = ctx;
  pool.begin = begin;
  pool.end = end;
  pool.chunk = chunk;
  pool.nthreads = t;
  atomic_store(&pool.err_flag, 0);
  for (int i = 0; i < t; i++) {
    int64_t lo = nchunks * i / t, hi = nchunks * (i + 1) / t;
    atomic_store_explicit(&pool.slots[i].start, lo, memory_order_relaxed);
    atomic_store_explicit(&pool.slots[i].end, hi, memory_order_relaxed);
    atomic_store_explicit(&pool.slots[i].length, hi - lo, memory_order_relaxed);
  }
  publish_and_run();
  *status = atomic_load(&pool.err_flag) ? weft__error(pool.err_status, "%s", pool.err_msg) : WEFT_OK;
  return true;
}

#endif /* WEFT_HAVE_THREADS */

weft_status weft_parallel_for(int64_t begin, int64_t end, int64_t grain, weft_range_fn fn, void* ctx) {
  if (begin >= end) return WEFT_OK;
  if (grain < 1) grain = 1;
#if WEFT_HAVE_THREADS
  if (end - begin > grain && !tls_in_region && configured_threads() > 1 && try_acquire_pool()) {
    weft_status s;
    bool ran = run_parallel(begin, end, grain, fn, ctx, &s);
    release_pool();
    if (ran) return s;
  }
#endif
  /* inline: the serial loop itself, marked as a region so nested calls stay inline */
  bool outer = tls_in_region;
  tls_in_region = true;
  weft_status s = fn(ctx, begin, end);
  tls_in_region = outer;
  return s;
}
