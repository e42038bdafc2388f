/* Checked int64 arithmetic for sizes, strides and byte counts: false means
 * the exact result does not fit (the caller reports an OverflowError). */
#ifndef WEFT_BASE_OVERFLOW_H
#define WEFT_BASE_OVERFLOW_H

#include <stdbool.h>
#include <stdint.h>

static inline bool weft__mul_overflow(int64_t a, int64_t b, int64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}
static inline bool weft__add_overflow(int64_t a, int64_t b, int64_t* out) {
  return __builtin_add_overflow(a, b, out);
}
/* a * b, or INT64_MAX when it does not fit: for the sizes and strides of
 * empty shapes ([2**62, 8, 0]), whose products mean nothing. */
static inline int64_t weft__mul_saturate(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

#endif
