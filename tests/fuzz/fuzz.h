/* Shared helpers of the libFuzzer targets (tests/fuzz/fuzz_*.c): a reader
 * that turns the fuzzer's bytes into choices, the checks every target makes
 * after each input (a clean error status, allocator statistics back to the
 * baseline), and random tensors over storages the fuzzer fills.
 *
 * A finding is reported by abort() with a message on stderr: libFuzzer saves
 * the input as a crash file and the run fails. */
#ifndef WEFT_FUZZ_H
#define WEFT_FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "weft/weft.h"

#define FUZZ_FAIL(...)                  \
  do {                                  \
    fprintf(stderr, "fuzz: " __VA_ARGS__); \
    fputc('\n', stderr);                \
    abort();                            \
  } while (0)

/* The input as a stream of choices; an exhausted stream reads zeros. */
typedef struct {
  const uint8_t* p;
  size_t n;
} fz;

static inline uint8_t fz_u8(fz* f) {
  if (!f->n) return 0;
  f->n--;
  return *f->p++;
}
static inline uint32_t fz_u32(fz* f) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v = v << 8 | fz_u8(f);
  return v;
}
/* lo..hi inclusive (hi - lo < 2^32). */
static inline int64_t fz_range(fz* f, int64_t lo, int64_t hi) {
  uint64_t span = (uint64_t)(hi - lo) + 1;
  uint64_t r = span <= 256 ? fz_u8(f) : fz_u32(f);
  return lo + (int64_t)(r % span);
}
static inline bool fz_bool(fz* f) { return fz_u8(f) & 1; }

/* A small signed argument: mostly in range, sometimes far out of it. */
static inline int64_t fz_arg(fz* f, int64_t lo, int64_t hi) {
  switch (fz_u8(f) % 16) {
    case 0: return INT64_MIN;
    case 1: return INT64_MAX;
    case 2: return (int64_t)fz_u32(f) - INT32_MAX;
    default: return fz_range(f, lo, hi);
  }
}

static weft_memory_stats fz_baseline;

static inline void fz_begin(void) {
  weft_clear_error();
  fz_baseline = weft_memory();
}

/* Every tensor and byte the input made is gone. */
static inline void fz_end(void) {
  weft_memory_stats m = weft_memory();
  if (m.tensors != fz_baseline.tensors || m.storages != fz_baseline.storages ||
      m.bytes_in_use != fz_baseline.bytes_in_use || m.meta_bytes != fz_baseline.meta_bytes)
    FUZZ_FAIL("leak: tensors %lld -> %lld, storages %lld -> %lld, bytes %lld -> %lld, meta %lld -> %lld",
              (long long)fz_baseline.tensors, (long long)m.tensors, (long long)fz_baseline.storages,
              (long long)m.storages, (long long)fz_baseline.bytes_in_use, (long long)m.bytes_in_use,
              (long long)fz_baseline.meta_bytes, (long long)m.meta_bytes);
  weft_clear_error();
}

/* After a failed call: a real status with a message, never an internal
 * error (fz_clean_error_contract: iterator configs whose flags break the
 * build's documented contract are internal errors by design). */
static inline void fz_check_error(const char* what, bool allow_internal) {
  weft_status s = weft_last_status();
  const char* m = weft_last_error();
  if (s == WEFT_OK || s >= WEFT_STATUS_COUNT || !m || !*m) FUZZ_FAIL("%s failed without an error", what);
  if (s == WEFT_INTERNAL && !allow_internal) FUZZ_FAIL("%s: internal error: %s", what, m);
  weft_clear_error();
}
static inline void fz_clean_error(const char* what) { fz_check_error(what, false); }

static inline weft_dtype fz_dtype(fz* f) { return (weft_dtype)fz_range(f, 0, WEFT_DTYPE_COUNT - 1); }

/* Element value as a double (the memory dtype's bits). */
static inline double fz_load(weft_dtype d, const void* p) {
  switch (d) {
    case WEFT_BOOL: return *(const bool*)p;
    case WEFT_UINT8: return *(const uint8_t*)p;
    case WEFT_INT8: return *(const int8_t*)p;
    case WEFT_INT16: return *(const int16_t*)p;
    case WEFT_INT32: return *(const int32_t*)p;
    case WEFT_INT64: return (double)*(const int64_t*)p;
    case WEFT_FLOAT16: return weft__f16_to_f32(*(const uint16_t*)p);
    case WEFT_BFLOAT16: return weft__bf16_to_f32(*(const uint16_t*)p);
    case WEFT_FLOAT32: return *(const float*)p;
    default: return *(const double*)p;
  }
}

/* Stores a small integer-valued double (integers wrap, bool is != 0). */
static inline void fz_store(weft_dtype d, void* p, double v) {
  int64_t i = v > -9e18 && v < 9e18 ? (int64_t)v : 0; /* (indeterminate runs may grow values) */
  switch (d) {
    case WEFT_BOOL: *(bool*)p = v != 0; break;
    case WEFT_UINT8: *(uint8_t*)p = (uint8_t)i; break;
    case WEFT_INT8: *(int8_t*)p = (int8_t)(uint8_t)i; break;
    case WEFT_INT16: *(int16_t*)p = (int16_t)(uint16_t)i; break;
    case WEFT_INT32: *(int32_t*)p = (int32_t)(uint32_t)i; break;
    case WEFT_INT64: *(int64_t*)p = i; break;
    case WEFT_FLOAT16: *(uint16_t*)p = weft__f32_to_f16((float)v); break;
    case WEFT_BFLOAT16: *(uint16_t*)p = weft__f32_to_bf16((float)v); break;
    case WEFT_FLOAT32: *(float*)p = (float)v; break;
    default: *(double*)p = v; break;
  }
}

/* A contiguous 1-D tensor of n elements holding small integers 0..3 (so sums
 * are exact in every dtype), or raw input bytes when `raw` (bool: 0/1). */
static inline weft_tensor* fz_base(fz* f, weft_dtype d, int64_t n, bool raw) {
  weft_tensor* t = weft_empty((const int64_t[]){n}, 1, d, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  if (!t) FUZZ_FAIL("empty(%lld): %s", (long long)n, weft_last_error());
  char* p = weft_tensor_data_ptr(t);
  size_t es = weft_dtype_size(d);
  for (int64_t i = 0; i < n; i++) {
    if (raw && d != WEFT_BOOL) {
      for (size_t b = 0; b < es; b++) p[i * es + b] = (char)fz_u8(f);
    } else {
      fz_store(d, p + i * es, (double)(fz_u8(f) % (d == WEFT_BOOL ? 2 : 4)));
    }
  }
  return t;
}

/* A random in-bounds layout (sizes 0..4 per dim, strides 0..6, maybe
 * overlapping) over a fresh storage of that dtype; 0..4 dims. */
static inline weft_tensor* fz_strided(fz* f, weft_dtype d, int max_dims) {
  int64_t nd = fz_range(f, 0, max_dims), sz[WEFT_MAX_DIMS], st[WEFT_MAX_DIMS];
  int64_t off = fz_range(f, 0, 3), span = off + 1;
  bool empty = false;
  for (int64_t i = 0; i < nd; i++) {
    sz[i] = fz_range(f, 0, 4);
    st[i] = fz_range(f, 0, 6);
    if (!sz[i]) empty = true;
    span += (sz[i] ? sz[i] - 1 : 0) * st[i];
  }
  weft_tensor* base = fz_base(f, d, empty ? off + 1 : span, false);
  weft_tensor* t = weft_as_strided(base, sz, st, nd, off);
  if (!t) FUZZ_FAIL("as_strided of an in-bounds layout failed: %s", weft_last_error());
  weft_tensor_release(base);
  return t;
}

#endif
