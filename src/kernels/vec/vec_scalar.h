/* Portable backend: four lanes in a struct, each op a loop with wasm's
 * semantics. It is the reference the SIMD backends are tested against. */
#ifndef WEFT_VEC_SCALAR_H
#define WEFT_VEC_SCALAR_H

#include <math.h>

#define WEFT_VEC_ISA scalar
typedef struct {
  union {
    float f32[4];
    int32_t i32[4];
    uint32_t u32[4];
    int16_t i16[8];
    uint16_t u16[8];
    int8_t i8[16];
    uint8_t u8[16];
    int64_t i64[2];
    double f64[2];
  };
} wv128;

#define WV__MAP(T, N, expr)          \
  wv128 r;                           \
  for (int i = 0; i < N; i++) (expr); \
  return r
#define WV__F1(name, e) \
  static inline wv128 name(wv128 a) { WV__MAP(float, 4, r.f32[i] = (e)); }
#define WV__F2(name, e) \
  static inline wv128 name(wv128 a, wv128 b) { WV__MAP(float, 4, r.f32[i] = (e)); }
#define WV__FCMP(name, op) \
  static inline wv128 name(wv128 a, wv128 b) { WV__MAP(float, 4, r.i32[i] = -(a.f32[i] op b.f32[i])); }

static inline wv128 wv_v128_load(const void* p) { wv128 r; memcpy(&r, p, 16); return r; }
static inline void wv_v128_store(void* p, wv128 v) { memcpy(p, &v, 16); }
static inline wv128 wv_v128_and(wv128 a, wv128 b) { WV__MAP(int, 4, r.u32[i] = a.u32[i] & b.u32[i]); }
static inline wv128 wv_v128_or(wv128 a, wv128 b) { WV__MAP(int, 4, r.u32[i] = a.u32[i] | b.u32[i]); }
static inline wv128 wv_v128_xor(wv128 a, wv128 b) { WV__MAP(int, 4, r.u32[i] = a.u32[i] ^ b.u32[i]); }
static inline wv128 wv_v128_not(wv128 a) { WV__MAP(int, 4, r.u32[i] = ~a.u32[i]); }
static inline wv128 wv_v128_andnot(wv128 a, wv128 b) { WV__MAP(int, 4, r.u32[i] = a.u32[i] & ~b.u32[i]); }
static inline wv128 wv_v128_bitselect(wv128 a, wv128 b, wv128 m) {
  WV__MAP(int, 4, r.u32[i] = (a.u32[i] & m.u32[i]) | (b.u32[i] & ~m.u32[i]));
}

static inline wv128 wv_f32x4_splat(float x) { WV__MAP(float, 4, r.f32[i] = x); }
static inline wv128 wv_i32x4_splat(int32_t x) { WV__MAP(int, 4, r.i32[i] = x); }
static inline wv128 wv_i16x8_splat(int16_t x) { WV__MAP(int, 8, r.i16[i] = x); }
static inline wv128 wv_i8x16_splat(int8_t x) { WV__MAP(int, 16, r.i8[i] = x); }
static inline wv128 wv_i64x2_splat(int64_t x) { WV__MAP(int, 2, r.i64[i] = x); }

WV__F2(wv_f32x4_add, a.f32[i] + b.f32[i])
WV__F2(wv_f32x4_sub, a.f32[i] - b.f32[i])
WV__F2(wv_f32x4_mul, a.f32[i] * b.f32[i])
WV__F2(wv_f32x4_div, a.f32[i] / b.f32[i])
static inline float wv__minf(float a, float b) {
  if (a != a || b != b) return NAN;
  if (a == b) return signbit(a) ? a : b; /* -0 < +0 */
  return a < b ? a : b;
}
static inline float wv__maxf(float a, float b) {
  if (a != a || b != b) return NAN;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
WV__F2(wv_f32x4_min, wv__minf(a.f32[i], b.f32[i]))
WV__F2(wv_f32x4_max, wv__maxf(a.f32[i], b.f32[i]))
/* wasm's pmin / pmax are a compare and a select: the chosen lane's bits as
 * they are (a NaN's payload too), so the select copies integer lanes (a
 * float select compiled by clang 14 for wasm may hand back another NaN). */
static inline wv128 wv_f32x4_pmin(wv128 a, wv128 b) { WV__MAP(int, 4, r.u32[i] = b.f32[i] < a.f32[i] ? b.u32[i] : a.u32[i]); }
static inline wv128 wv_f32x4_pmax(wv128 a, wv128 b) { WV__MAP(int, 4, r.u32[i] = a.f32[i] < b.f32[i] ? b.u32[i] : a.u32[i]); }
WV__F1(wv_f32x4_sqrt, sqrtf(a.f32[i]))
static inline wv128 wv_f32x4_abs(wv128 a) { WV__MAP(int, 4, r.u32[i] = a.u32[i] & 0x7fffffffu); }
static inline wv128 wv_f32x4_neg(wv128 a) { WV__MAP(int, 4, r.u32[i] = a.u32[i] ^ 0x80000000u); }
WV__FCMP(wv_f32x4_eq, ==)
WV__FCMP(wv_f32x4_ne, !=)
WV__FCMP(wv_f32x4_lt, <)
WV__FCMP(wv_f32x4_le, <=)
WV__FCMP(wv_f32x4_gt, >)
WV__FCMP(wv_f32x4_ge, >=)
WV__F1(wv_f32x4_floor, floorf(a.f32[i]))
WV__F1(wv_f32x4_ceil, ceilf(a.f32[i]))
WV__F1(wv_f32x4_trunc, truncf(a.f32[i]))
WV__F1(wv_f32x4_nearest, nearbyintf(a.f32[i]))
WV__F1(wv_f32x4_convert_i32x4, (float)a.i32[i])
static inline int32_t wv__trunc_sat(float x) {
  if (x != x) return 0;
  if (x >= 2147483648.0f) return INT32_MAX;
  if (x <= -2147483648.0f) return INT32_MIN;
  return (int32_t)x;
}
static inline wv128 wv_i32x4_trunc_sat_f32x4(wv128 a) { WV__MAP(int, 4, r.i32[i] = wv__trunc_sat(a.f32[i])); }

static inline wv128 wv_i32x4_add(wv128 a, wv128 b) { WV__MAP(int, 4, r.u32[i] = a.u32[i] + b.u32[i]); }
static inline wv128 wv_i32x4_sub(wv128 a, wv128 b) { WV__MAP(int, 4, r.u32[i] = a.u32[i] - b.u32[i]); }
static inline wv128 wv_i32x4_eq(wv128 a, wv128 b) { WV__MAP(int, 4, r.i32[i] = -(a.i32[i] == b.i32[i])); }
static inline wv128 wv_i32x4_gt(wv128 a, wv128 b) { WV__MAP(int, 4, r.i32[i] = -(a.i32[i] > b.i32[i])); }
static inline wv128 wv_i32x4_lt(wv128 a, wv128 b) { WV__MAP(int, 4, r.i32[i] = -(a.i32[i] < b.i32[i])); }
static inline wv128 wv_i32x4_shl(wv128 a, int n) { WV__MAP(int, 4, r.u32[i] = a.u32[i] << n); }
/* arithmetic shift written without relying on >> of negatives */
static inline wv128 wv_i32x4_shr(wv128 a, int n) {
  WV__MAP(int, 4, r.i32[i] = a.i32[i] < 0 ? (int32_t)~(~a.u32[i] >> n) : (int32_t)(a.u32[i] >> n));
}
static inline wv128 wv_u32x4_shr(wv128 a, int n) { WV__MAP(int, 4, r.u32[i] = a.u32[i] >> n); }
static inline int wv_v128_any_true(wv128 a) { return (a.u32[0] | a.u32[1] | a.u32[2] | a.u32[3]) != 0; }
static inline wv128 wv_i16x8_eq(wv128 a, wv128 b) { WV__MAP(int, 8, r.i16[i] = (int16_t)-(a.i16[i] == b.i16[i])); }
static inline wv128 wv_i32x4_min(wv128 a, wv128 b) { WV__MAP(int, 4, r.i32[i] = a.i32[i] < b.i32[i] ? a.i32[i] : b.i32[i]); }
static inline wv128 wv_i32x4_max(wv128 a, wv128 b) { WV__MAP(int, 4, r.i32[i] = a.i32[i] > b.i32[i] ? a.i32[i] : b.i32[i]); }
static inline wv128 wv_i16x8_add(wv128 a, wv128 b) { WV__MAP(int, 8, r.u16[i] = (uint16_t)(a.u16[i] + b.u16[i])); }
static inline wv128 wv_i16x8_gt(wv128 a, wv128 b) { WV__MAP(int, 8, r.i16[i] = (int16_t)-(a.i16[i] > b.i16[i])); }
static inline wv128 wv_u16x8_min(wv128 a, wv128 b) { WV__MAP(int, 8, r.u16[i] = a.u16[i] < b.u16[i] ? a.u16[i] : b.u16[i]); }
static inline wv128 wv_i16x8_shl(wv128 a, int n) { WV__MAP(int, 8, r.u16[i] = (uint16_t)(a.u16[i] << n)); }
static inline wv128 wv_u16x8_shr(wv128 a, int n) { WV__MAP(int, 8, r.u16[i] = (uint16_t)(a.u16[i] >> n)); }
static inline wv128 wv_i8x16_eq(wv128 a, wv128 b) { WV__MAP(int, 16, r.i8[i] = (int8_t)-(a.i8[i] == b.i8[i])); }

static inline int16_t wv__sat16(int32_t x) { return (int16_t)(x > 32767 ? 32767 : x < -32768 ? -32768 : x); }
static inline int8_t wv__sat8(int16_t x) { return (int8_t)(x > 127 ? 127 : x < -128 ? -128 : x); }
static inline wv128 wv_i16x8_narrow_i32x4(wv128 a, wv128 b) {
  WV__MAP(int, 4, (r.i16[i] = wv__sat16(a.i32[i]), r.i16[i + 4] = wv__sat16(b.i32[i])));
}
static inline wv128 wv_i8x16_narrow_i16x8(wv128 a, wv128 b) {
  WV__MAP(int, 8, (r.i8[i] = wv__sat8(a.i16[i]), r.i8[i + 8] = wv__sat8(b.i16[i])));
}
static inline wv128 wv_u32x4_extend_low_u16x8(wv128 a) { WV__MAP(int, 4, r.u32[i] = a.u16[i]); }
static inline wv128 wv_u32x4_extend_high_u16x8(wv128 a) { WV__MAP(int, 4, r.u32[i] = a.u16[i + 4]); }

static inline wv128 wv_i32x4_interleave_lo(wv128 a, wv128 b) {
  WV__MAP(int, 2, (r.u32[2 * i] = a.u32[i], r.u32[2 * i + 1] = b.u32[i]));
}
static inline wv128 wv_i32x4_interleave_hi(wv128 a, wv128 b) {
  WV__MAP(int, 2, (r.u32[2 * i] = a.u32[i + 2], r.u32[2 * i + 1] = b.u32[i + 2]));
}
static inline wv128 wv_i32x4_even(wv128 a, wv128 b) {
  WV__MAP(int, 2, (r.u32[i] = a.u32[2 * i], r.u32[i + 2] = b.u32[2 * i]));
}
static inline wv128 wv_i32x4_odd(wv128 a, wv128 b) {
  WV__MAP(int, 2, (r.u32[i] = a.u32[2 * i + 1], r.u32[i + 2] = b.u32[2 * i + 1]));
}
/* Lanes 0, 3, 6, 9 of the 12 lanes a:b:c (a stride-3 deinterleave). */
static inline wv128 wv_i32x4_every3(wv128 a, wv128 b, wv128 c) {
  wv128 r;
  r.u32[0] = a.u32[0];
  r.u32[1] = a.u32[3];
  r.u32[2] = b.u32[2];
  r.u32[3] = c.u32[1];
  return r;
}
/* The 12 lanes a0 b0 c0 a1 | b1 c1 a2 b2 | c2 a3 b3 c3 (a stride-3 interleave), one vector each. */
static inline wv128 wv__zip3(wv128 a, wv128 b, wv128 c, int part) {
  const wv128* v[3] = {&a, &b, &c};
  wv128 r;
  for (int i = 0; i < 4; i++) {
    int k = 4 * part + i; /* lane k of the interleave: element k / 3 of vector k % 3 */
    r.u32[i] = v[k % 3]->u32[k / 3];
  }
  return r;
}
static inline wv128 wv_i32x4_zip3_0(wv128 a, wv128 b, wv128 c) { return wv__zip3(a, b, c, 0); }
static inline wv128 wv_i32x4_zip3_1(wv128 a, wv128 b, wv128 c) { return wv__zip3(a, b, c, 1); }
static inline wv128 wv_i32x4_zip3_2(wv128 a, wv128 b, wv128 c) { return wv__zip3(a, b, c, 2); }
/* Lanes i0..i3 of the 8 lanes a:b. */
static inline wv128 wv__lanes(wv128 a, wv128 b, int i0, int i1, int i2, int i3) {
  const int idx[4] = {i0, i1, i2, i3};
  wv128 r;
  for (int i = 0; i < 4; i++) r.u32[i] = idx[i] < 4 ? a.u32[idx[i]] : b.u32[idx[i] - 4];
  return r;
}
/* Narrowed pixels (x32_pick): two of each 3-lane pixel, lanes 0 1 3 4 and
 * 2 3 5 6 of a:b; three of each 4-lane pixel, lanes 0 1 2 4, 1 2 4 5 and
 * 2 4 5 6 of a:b. */
static inline wv128 wv_i32x4_pick2of3_lo(wv128 a, wv128 b) { return wv__lanes(a, b, 0, 1, 3, 4); }
static inline wv128 wv_i32x4_pick2of3_hi(wv128 a, wv128 b) { return wv__lanes(a, b, 2, 3, 5, 6); }
static inline wv128 wv_i32x4_pick3of4_0(wv128 a, wv128 b) { return wv__lanes(a, b, 0, 1, 2, 4); }
static inline wv128 wv_i32x4_pick3of4_1(wv128 a, wv128 b) { return wv__lanes(a, b, 1, 2, 4, 5); }
static inline wv128 wv_i32x4_pick3of4_2(wv128 a, wv128 b) { return wv__lanes(a, b, 2, 4, 5, 6); }
static inline wv128 wv_i64x2_interleave_lo(wv128 a, wv128 b) { wv128 r; r.i64[0] = a.i64[0]; r.i64[1] = b.i64[0]; return r; }
/* f64x2 (the scans' double accumulators) */
static inline wv128 wv_f64x2_add(wv128 a, wv128 b) { WV__MAP(double, 2, r.f64[i] = a.f64[i] + b.f64[i]); }
static inline wv128 wv_f64x2_mul(wv128 a, wv128 b) { WV__MAP(double, 2, r.f64[i] = a.f64[i] * b.f64[i]); }
static inline wv128 wv_f64x2_splat(double x) { WV__MAP(double, 2, r.f64[i] = x); }
static inline wv128 wv_f64x2_promote_low_f32x4(wv128 a) { WV__MAP(double, 2, r.f64[i] = (double)a.f32[i]); }
static inline wv128 wv_f32x4_demote_f64x2_zero(wv128 a) {
  WV__MAP(float, 4, r.f32[i] = i < 2 ? (float)a.f64[i] : 0.0f);
}
static inline wv128 wv_i64x2_interleave_hi(wv128 a, wv128 b) { wv128 r; r.i64[0] = a.i64[1]; r.i64[1] = b.i64[1]; return r; }
static inline wv128 wv_i16x8_interleave_lo(wv128 a, wv128 b) {
  WV__MAP(int, 4, (r.u16[2 * i] = a.u16[i], r.u16[2 * i + 1] = b.u16[i]));
}
static inline wv128 wv_i16x8_interleave_hi(wv128 a, wv128 b) {
  WV__MAP(int, 4, (r.u16[2 * i] = a.u16[i + 4], r.u16[2 * i + 1] = b.u16[i + 4]));
}
static inline wv128 wv_i8x16_swizzle(wv128 a, wv128 idx) {
  WV__MAP(int, 16, r.u8[i] = idx.u8[i] < 16 ? a.u8[idx.u8[i]] : 0);
}
static inline wv128 wv_i8x16_interleave_lo(wv128 a, wv128 b) {
  WV__MAP(int, 8, (r.u8[2 * i] = a.u8[i], r.u8[2 * i + 1] = b.u8[i]));
}
static inline wv128 wv_i8x16_interleave_hi(wv128 a, wv128 b) {
  WV__MAP(int, 8, (r.u8[2 * i] = a.u8[i + 8], r.u8[2 * i + 1] = b.u8[i + 8]));
}

#endif
