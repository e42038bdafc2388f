/* Reference element conversions with PyTorch's cast semantics: the oracle
 * the SIMD cast kernels are tested against. */
#ifndef WEFT_CORE_SCALAR_H
#define WEFT_CORE_SCALAR_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/half.h"
#include "weft/dtype.h"

/* Floating -> integral: truncation toward zero. C leaves out-of-range values
 * undefined (so does PyTorch); weft saturates like wasm's trunc_sat and
 * maps NaN to 0, so every build gives the same answer. */
static inline int64_t weft__f64_to_i64_sat(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

/* One value in transit: integers (and bool) travel as int64 so int64 values
 * above 2^53 survive; floats travel as double. A NaN loaded from a float32,
 * float16 or bfloat16 element also keeps its float32 bits in i (0 for every
 * other float): float -> double quiets a signalling NaN, and PyTorch's
 * bfloat16 -> float32 (a shift) and float32 -> float32 keep it. */
typedef struct {
  int is_float;
  int64_t i;
  double f;
} weft__value;

static inline weft__value weft__value_from_f32(float f) {
  uint32_t u = weft__f32_bits(f);
  weft__value v = {1, (u & 0x7fffffffu) > 0x7f800000u ? (int64_t)u : 0, f};
  return v;
}

static inline weft__value weft__load(const void* p, weft_dtype t) {
  weft__value v = {0, 0, 0.0};
  switch (t) {
    case WEFT_BOOL: v.i = *(const uint8_t*)p != 0; break;
    case WEFT_UINT8: v.i = *(const uint8_t*)p; break;
    case WEFT_INT8: v.i = *(const int8_t*)p; break;
    case WEFT_INT16: { int16_t x; memcpy(&x, p, 2); v.i = x; break; }
    case WEFT_INT32: { int32_t x; memcpy(&x, p, 4); v.i = x; break; }
    case WEFT_INT64: memcpy(&v.i, p, 8); break;
    case WEFT_FLOAT16: { uint16_t x; memcpy(&x, p, 2); v = weft__value_from_f32(weft__f16_to_f32(x)); break; }
    case WEFT_BFLOAT16: { uint16_t x; memcpy(&x, p, 2); v = weft__value_from_f32(weft__bf16_to_f32(x)); break; }
    case WEFT_FLOAT32: { float x; memcpy(&x, p, 4); v = weft__value_from_f32(x); break; }
    case WEFT_FLOAT64: memcpy(&v.f, p, 8); v.is_float = 1; break;
    default: break;
  }
  return v;
}

static inline double weft__value_f64(weft__value v) { return v.is_float ? v.f : (double)v.i; }

/* One element as a double: float32 and float64 without the tagged value (the
 * hot path of the reductions' and softmax's plain loops), the rest through it. */
static inline double weft__load_f64(const void* p, weft_dtype t) {
  if (t == WEFT_FLOAT32) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  if (t == WEFT_FLOAT64) {
    double d;
    memcpy(&d, p, 8);
    return d;
  }
  return weft__value_f64(weft__load(p, t));
}

static inline void weft__store(void* p, weft_dtype t, weft__value v) {
  int64_t i = v.is_float ? weft__f64_to_i64_sat(v.f) : v.i;
  switch (t) {
    case WEFT_BOOL: *(uint8_t*)p = v.is_float ? (v.f != 0.0) : (v.i != 0); break;
    case WEFT_UINT8: *(uint8_t*)p = (uint8_t)i; break; /* integral narrowing wraps, as C++ casts do */
    case WEFT_INT8: *(int8_t*)p = (int8_t)(uint8_t)i; break;
    case WEFT_INT16: { int16_t x = (int16_t)(uint16_t)i; memcpy(p, &x, 2); break; }
    case WEFT_INT32: { int32_t x = (int32_t)(uint32_t)i; memcpy(p, &x, 4); break; }
    case WEFT_INT64: memcpy(p, &i, 8); break;
    /* double -> float first, as c10::Half(double) does */
    case WEFT_FLOAT16: { uint16_t x = weft__f32_to_f16((float)weft__value_f64(v)); memcpy(p, &x, 2); break; }
    case WEFT_BFLOAT16: { uint16_t x = weft__f32_to_bf16((float)weft__value_f64(v)); memcpy(p, &x, 2); break; }
    case WEFT_FLOAT32: { /* a NaN from a float32-or-narrower element keeps its bits (see weft__value) */
      float x = v.is_float && v.i ? weft__f32_from_bits((uint32_t)v.i) : (float)weft__value_f64(v);
      memcpy(p, &x, 4);
      break;
    }
    case WEFT_FLOAT64: { double x = weft__value_f64(v); memcpy(p, &x, 8); break; }
    default: break;
  }
}

static inline weft__value weft__value_from_double(double d) {
  weft__value v = {1, 0, d};
  return v;
}

#endif
