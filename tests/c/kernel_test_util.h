/* Shared helpers for the kernel tests: deterministic data, bit compares,
 * the list of backends to run (best ISA + scalar). */
#ifndef WEFT_KERNEL_TEST_UTIL_H
#define WEFT_KERNEL_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

static uint64_t kt__rng = 0x9E3779B97F4A7C15ull;
static inline uint32_t kt_rand(void) {
  kt__rng ^= kt__rng << 13;
  kt__rng ^= kt__rng >> 7;
  kt__rng ^= kt__rng << 17;
  return (uint32_t)(kt__rng >> 11);
}
/* uniform float in [lo, hi) */
static inline float kt_randf(float lo, float hi) { return lo + (hi - lo) * (float)(kt_rand() & 0xffffff) / 16777216.0f; }
static inline void kt_fill_bytes(void* p, size_t n) {
  for (size_t i = 0; i < n; i++) ((unsigned char*)p)[i] = (unsigned char)kt_rand();
}
static inline uint32_t kt_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float kt_f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
/* Same value, NaNs of any payload equal. */
/* wasm's f32x4.max/min: NaN wins, +0 above -0 (the kernels' reference) */
static inline float kt_ref_max(float a, float b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static inline float kt_ref_min(float a, float b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
static inline int kt_same_f32(float a, float b) {
  if (a != a && b != b) return 1;
  return kt_f32_bits(a) == kt_f32_bits(b);
}

/* Sizes every kernel is tried at: 1..tile-1 style small ones and larger. */
static const size_t kt_sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 15, 16, 17, 23, 24, 31, 32, 33,
                                  47, 48, 63, 64, 65, 100, 127, 128, 129, 255, 256, 1000, 1023};
#define KT_NSIZES (sizeof kt_sizes / sizeof kt_sizes[0])

static inline const weft_kernels* kt_backend(int i) {
  return i == 0 ? weft__kernels() : weft__kernels_scalar();
}
#define KT_NBACKENDS 2

#endif
