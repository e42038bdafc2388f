/* A tiny test harness: CHECK records a failure and goes on; each test file's
 * main() ends with TEST_REPORT(), which prints "N passed, N failed". */
#ifndef WEFT_TEST_H
#define WEFT_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "weft/alloc.h"
#include "weft/weft.h"

static int test__passed, test__failed;

/* Under ThreadSanitizer a sweep over thread counts starts at 2
 * (TEST_FIRST_THREADS): one thread cannot race, so the 1-thread pass finds
 * nothing there, and every other build (ASan, scalar, wasm) runs it. */
#if defined(__SANITIZE_THREAD__)
#define TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif
#ifndef TEST_TSAN
#define TEST_TSAN 0
#endif
#define TEST_FIRST_THREADS (TEST_TSAN ? 2 : 1)

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (cond) {                                                              \
      test__passed++;                                                        \
    } else {                                                                 \
      test__failed++;                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                        \
  } while (0)

#define CHECK_EQ_I64(a, b)                                                      \
  do {                                                                          \
    int64_t test__a = (int64_t)(a), test__b = (int64_t)(b);                     \
    if (test__a == test__b) {                                                   \
      test__passed++;                                                           \
    } else {                                                                    \
      test__failed++;                                                           \
      fprintf(stderr, "%s:%d: %s == %s failed: %" PRId64 " != %" PRId64 "\n",  \
              __FILE__, __LINE__, #a, #b, test__a, test__b);                    \
    }                                                                           \
  } while (0)

#define CHECK_SIZES(t, ...)                                                       \
  do {                                                                            \
    const int64_t test__e[] = {__VA_ARGS__};                                      \
    int64_t test__n = (int64_t)(sizeof test__e / sizeof test__e[0]);              \
    CHECK_EQ_I64(weft_tensor_dim(t), test__n);                                    \
    for (int64_t test__i = 0; test__i < test__n && test__i < weft_tensor_dim(t); test__i++) \
      CHECK_EQ_I64(weft_tensor_sizes(t)[test__i], test__e[test__i]);              \
  } while (0)

#define CHECK_STRIDES(t, ...)                                                     \
  do {                                                                            \
    const int64_t test__e[] = {__VA_ARGS__};                                      \
    int64_t test__n = (int64_t)(sizeof test__e / sizeof test__e[0]);              \
    CHECK_EQ_I64(weft_tensor_dim(t), test__n);                                    \
    for (int64_t test__i = 0; test__i < test__n && test__i < weft_tensor_dim(t); test__i++) \
      CHECK_EQ_I64(weft_tensor_strides(t)[test__i], test__e[test__i]);            \
  } while (0)

/* The last error contains `needle`. */
#define CHECK_ERROR_HAS(needle)                                                   \
  do {                                                                            \
    const char* test__m = weft_last_error();                                      \
    if (strstr(test__m, (needle))) {                                              \
      test__passed++;                                                             \
    } else {                                                                      \
      test__failed++;                                                             \
      fprintf(stderr, "%s:%d: error \"%s\" lacks \"%s\"\n", __FILE__, __LINE__,   \
              test__m, (needle));                                                 \
    }                                                                             \
  } while (0)

/* Every tensor and storage a test made is gone (needs weft/alloc.h). */
#define CHECK_NO_LEAKS()                            \
  do {                                              \
    weft_memory_stats test__m = weft_memory();      \
    CHECK_EQ_I64(test__m.tensors, 0);               \
    CHECK_EQ_I64(test__m.storages, 0);              \
    CHECK_EQ_I64(test__m.bytes_in_use, 0);          \
    CHECK_EQ_I64(test__m.meta_bytes, 0);            \
  } while (0)

/* Allocation failures: runs run(ctx) with its 1st, 2nd, ... allocation
 * failing until a run makes no failing allocation. Each failed run must
 * report WEFT_OUT_OF_MEMORY and leave as many tensors and storages as there
 * were before; the op must allocate at all. run returns true when the op
 * succeeded and releases what it made. */
static inline void check_fails_cleanly(bool (*run)(void* ctx), void* ctx, long limit) {
  static weft_fail_nth_allocator injecting; /* outlives every storage made through it */
  weft_fail_nth_allocator_init(&injecting);
  weft_memory_stats base = weft_memory();
  long n = 1;
  for (;; n++) {
    injecting.countdown = n;
    weft_clear_error();
    weft_set_allocator(&injecting.allocator);
    bool ok = run(ctx);
    weft_set_allocator(NULL);
    bool hit = injecting.countdown == 0;
    injecting.countdown = 0;
    if (ok) {
      CHECK(!hit);
      break;
    }
    CHECK(hit && weft_last_status() == WEFT_OUT_OF_MEMORY);
    weft_memory_stats m = weft_memory();
    CHECK_EQ_I64(m.tensors, base.tensors);
    CHECK_EQ_I64(m.storages, base.storages);
    if (n > limit) {
      CHECK(false);
      break;
    }
  }
  CHECK(n > 1);
}

#define TEST_REPORT()                                                     \
  do {                                                                    \
    printf("%d passed, %d failed\n", test__passed, test__failed);         \
    return test__failed ? 1 : 0;                                          \
  } while (0)

#endif
