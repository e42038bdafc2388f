/* A tiny test harness: CHECK records a failure and goes on; each test file's
 * main() ends with TEST_REPORT(), which prints "N passed, N failed". */
#ifndef WEFT_TEST_H
#define WEFT_TEST_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "weft/weft.h"

static int test__passed, test__failed;

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

#define TEST_REPORT()                                                     \
  do {                                                                    \
    printf("%d passed, %d failed\n", test__passed, test__failed);         \
    return test__failed ? 1 : 0;                                          \
  } while (0)

#endif
