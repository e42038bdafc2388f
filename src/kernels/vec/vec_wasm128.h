/* wasm SIMD backend: each op is the wasm_simd128.h intrinsic of the same name. */
#ifndef WEFT_VEC_WASM128_H
#define WEFT_VEC_WASM128_H

#include <wasm_simd128.h>

#define WEFT_VEC_ISA wasm128
typedef v128_t wv128;

static inline wv128 wv_v128_load(const void* p) { return wasm_v128_load(p); }
static inline void wv_v128_store(void* p, wv128 v) { wasm_v128_store(p, v); }
static inline wv128 wv_v128_and(wv128 a, wv128 b) { return wasm_v128_and(a, b); }
static inline wv128 wv_v128_or(wv128 a, wv128 b) { return wasm_v128_or(a, b); }
static inline wv128 wv_v128_xor(wv128 a, wv128 b) { return wasm_v128_xor(a, b); }
static inline wv128 wv_v128_not(wv128 a) { return wasm_v128_not(a); }
static inline wv128 wv_v128_andnot(wv128 a, wv128 b) { return wasm_v128_andnot(a, b); }
static inline wv128 wv_v128_bitselect(wv128 a, wv128 b, wv128 m) { return wasm_v128_bitselect(a, b, m); }

static inline wv128 wv_f32x4_splat(float x) { return wasm_f32x4_splat(x); }
static inline wv128 wv_i32x4_splat(int32_t x) { return wasm_i32x4_splat(x); }
static inline wv128 wv_i16x8_splat(int16_t x) { return wasm_i16x8_splat(x); }
static inline wv128 wv_i8x16_splat(int8_t x) { return wasm_i8x16_splat(x); }
static inline wv128 wv_i64x2_splat(int64_t x) { return wasm_i64x2_splat(x); }

static inline wv128 wv_f32x4_add(wv128 a, wv128 b) { return wasm_f32x4_add(a, b); }
static inline wv128 wv_f32x4_sub(wv128 a, wv128 b) { return wasm_f32x4_sub(a, b); }
static inline wv128 wv_f32x4_mul(wv128 a, wv128 b) { return wasm_f32x4_mul(a, b); }
static inline wv128 wv_f32x4_div(wv128 a, wv128 b) { return wasm_f32x4_div(a, b); }
static inline wv128 wv_f32x4_min(wv128 a, wv128 b) { return wasm_f32x4_min(a, b); }
static inline wv128 wv_f32x4_max(wv128 a, wv128 b) { return wasm_f32x4_max(a, b); }
static inline wv128 wv_f32x4_pmin(wv128 a, wv128 b) { return wasm_f32x4_pmin(a, b); }
static inline wv128 wv_f32x4_pmax(wv128 a, wv128 b) { return wasm_f32x4_pmax(a, b); }
static inline wv128 wv_f32x4_sqrt(wv128 a) { return wasm_f32x4_sqrt(a); }
static inline wv128 wv_f32x4_abs(wv128 a) { return wasm_f32x4_abs(a); }
static inline wv128 wv_f32x4_neg(wv128 a) { return wasm_f32x4_neg(a); }
static inline wv128 wv_f32x4_eq(wv128 a, wv128 b) { return wasm_f32x4_eq(a, b); }
static inline wv128 wv_f32x4_ne(wv128 a, wv128 b) { return wasm_f32x4_ne(a, b); }
static inline wv128 wv_f32x4_lt(wv128 a, wv128 b) { return wasm_f32x4_lt(a, b); }
static inline wv128 wv_f32x4_le(wv128 a, wv128 b) { return wasm_f32x4_le(a, b); }
static inline wv128 wv_f32x4_gt(wv128 a, wv128 b) { return wasm_f32x4_gt(a, b); }
static inline wv128 wv_f32x4_ge(wv128 a, wv128 b) { return wasm_f32x4_ge(a, b); }
static inline wv128 wv_f32x4_floor(wv128 a) { return wasm_f32x4_floor(a); }
static inline wv128 wv_f32x4_ceil(wv128 a) { return wasm_f32x4_ceil(a); }
static inline wv128 wv_f32x4_trunc(wv128 a) { return wasm_f32x4_trunc(a); }
static inline wv128 wv_f32x4_nearest(wv128 a) { return wasm_f32x4_nearest(a); }
static inline wv128 wv_f32x4_convert_i32x4(wv128 a) { return wasm_f32x4_convert_i32x4(a); }
static inline wv128 wv_i32x4_trunc_sat_f32x4(wv128 a) { return wasm_i32x4_trunc_sat_f32x4(a); }

static inline wv128 wv_i32x4_add(wv128 a, wv128 b) { return wasm_i32x4_add(a, b); }
static inline wv128 wv_i32x4_sub(wv128 a, wv128 b) { return wasm_i32x4_sub(a, b); }
static inline wv128 wv_i32x4_eq(wv128 a, wv128 b) { return wasm_i32x4_eq(a, b); }
static inline wv128 wv_i32x4_gt(wv128 a, wv128 b) { return wasm_i32x4_gt(a, b); }
static inline wv128 wv_i32x4_lt(wv128 a, wv128 b) { return wasm_i32x4_lt(a, b); }
static inline wv128 wv_i32x4_shl(wv128 a, int n) { return wasm_i32x4_shl(a, n); }
static inline wv128 wv_i32x4_shr(wv128 a, int n) { return wasm_i32x4_shr(a, n); }
static inline wv128 wv_u32x4_shr(wv128 a, int n) { return wasm_u32x4_shr(a, n); }
static inline int wv_v128_any_true(wv128 a) { return wasm_v128_any_true(a); }
static inline wv128 wv_i16x8_eq(wv128 a, wv128 b) { return wasm_i16x8_eq(a, b); }
/* signed lane min / max (the half-float casts' clamps) and the 16-bit lane ops they finish in */
static inline wv128 wv_i32x4_min(wv128 a, wv128 b) { return wasm_i32x4_min(a, b); }
static inline wv128 wv_i32x4_max(wv128 a, wv128 b) { return wasm_i32x4_max(a, b); }
static inline wv128 wv_i16x8_add(wv128 a, wv128 b) { return wasm_i16x8_add(a, b); }
static inline wv128 wv_i16x8_gt(wv128 a, wv128 b) { return wasm_i16x8_gt(a, b); }
static inline wv128 wv_u16x8_min(wv128 a, wv128 b) { return wasm_u16x8_min(a, b); }
static inline wv128 wv_i16x8_shl(wv128 a, int n) { return wasm_i16x8_shl(a, n); }
static inline wv128 wv_u16x8_shr(wv128 a, int n) { return wasm_u16x8_shr(a, n); }
static inline wv128 wv_i8x16_eq(wv128 a, wv128 b) { return wasm_i8x16_eq(a, b); }

static inline wv128 wv_i16x8_narrow_i32x4(wv128 a, wv128 b) { return wasm_i16x8_narrow_i32x4(a, b); }
static inline wv128 wv_i8x16_narrow_i16x8(wv128 a, wv128 b) { return wasm_i8x16_narrow_i16x8(a, b); }
static inline wv128 wv_u32x4_extend_low_u16x8(wv128 a) { return wasm_u32x4_extend_low_u16x8(a); }
static inline wv128 wv_u32x4_extend_high_u16x8(wv128 a) { return wasm_u32x4_extend_high_u16x8(a); }

/* Native unsigned compares and the unsigned narrow (see vec_generic.h). */
#define WV_HAVE_U32X4_CMP 1
static inline wv128 wv_u32x4_gt(wv128 a, wv128 b) { return wasm_u32x4_gt(a, b); }
static inline wv128 wv_u32x4_lt(wv128 a, wv128 b) { return wasm_u32x4_lt(a, b); }
static inline wv128 wv_u32x4_max(wv128 a, wv128 b) { return wasm_u32x4_max(a, b); }
#define WV_HAVE_U16X8_NARROW 1
static inline wv128 wv_u16x8_narrow_bits_i32x4(wv128 a, wv128 b) { return wasm_u16x8_narrow_i32x4(a, b); }
static inline wv128 wv_u16x8_narrow_sat_i32x4(wv128 a, wv128 b) { return wasm_u16x8_narrow_i32x4(a, b); }

/* Interleaves: the shuffles of a register transpose. */
static inline wv128 wv_i32x4_interleave_lo(wv128 a, wv128 b) { return wasm_i32x4_shuffle(a, b, 0, 4, 1, 5); }
static inline wv128 wv_i32x4_interleave_hi(wv128 a, wv128 b) { return wasm_i32x4_shuffle(a, b, 2, 6, 3, 7); }
static inline wv128 wv_i64x2_interleave_lo(wv128 a, wv128 b) { return wasm_i64x2_shuffle(a, b, 0, 2); }
static inline wv128 wv_i64x2_interleave_hi(wv128 a, wv128 b) { return wasm_i64x2_shuffle(a, b, 1, 3); }
/* f64x2 (the scans' double accumulators) */
static inline wv128 wv_f64x2_add(wv128 a, wv128 b) { return wasm_f64x2_add(a, b); }
static inline wv128 wv_f64x2_mul(wv128 a, wv128 b) { return wasm_f64x2_mul(a, b); }
static inline wv128 wv_f64x2_splat(double x) { return wasm_f64x2_splat(x); }
static inline wv128 wv_f64x2_promote_low_f32x4(wv128 a) { return wasm_f64x2_promote_low_f32x4(a); }
static inline wv128 wv_f32x4_demote_f64x2_zero(wv128 a) { return wasm_f32x4_demote_f64x2_zero(a); }
static inline wv128 wv_i16x8_interleave_lo(wv128 a, wv128 b) {
  return wasm_i16x8_shuffle(a, b, 0, 8, 1, 9, 2, 10, 3, 11);
}
static inline wv128 wv_i16x8_interleave_hi(wv128 a, wv128 b) {
  return wasm_i16x8_shuffle(a, b, 4, 12, 5, 13, 6, 14, 7, 15);
}
/* The even / odd 32-bit lanes of the 8 lanes a:b (a stride-2 deinterleave). */
static inline wv128 wv_i32x4_even(wv128 a, wv128 b) { return wasm_i32x4_shuffle(a, b, 0, 2, 4, 6); }
static inline wv128 wv_i32x4_odd(wv128 a, wv128 b) { return wasm_i32x4_shuffle(a, b, 1, 3, 5, 7); }
/* Lanes 0, 3, 6, 9 of the 12 lanes a:b:c (a stride-3 deinterleave). */
static inline wv128 wv_i32x4_every3(wv128 a, wv128 b, wv128 c) {
  return wasm_i32x4_shuffle(wasm_i32x4_shuffle(a, b, 0, 3, 6, 6), c, 0, 1, 2, 5);
}
/* The 12 lanes a0 b0 c0 a1 | b1 c1 a2 b2 | c2 a3 b3 c3 (a stride-3 interleave), one vector each. */
static inline wv128 wv_i32x4_zip3_0(wv128 a, wv128 b, wv128 c) {
  return wasm_i32x4_shuffle(wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), c, 0, 1, 4, 2);
}
static inline wv128 wv_i32x4_zip3_1(wv128 a, wv128 b, wv128 c) {
  return wasm_i32x4_shuffle(wasm_i32x4_shuffle(a, b, 2, 5, 6, 6), c, 1, 5, 0, 2);
}
static inline wv128 wv_i32x4_zip3_2(wv128 a, wv128 b, wv128 c) {
  return wasm_i32x4_shuffle(wasm_i32x4_shuffle(a, b, 3, 7, 3, 7), c, 6, 0, 1, 7);
}
/* Narrowed pixels (x32_pick): two of each 3-lane pixel, lanes 0 1 3 4 and
 * 2 3 5 6 of a:b; three of each 4-lane pixel, lanes 0 1 2 4, 1 2 4 5 and
 * 2 4 5 6 of a:b. */
static inline wv128 wv_i32x4_pick2of3_lo(wv128 a, wv128 b) { return wasm_i32x4_shuffle(a, b, 0, 1, 3, 4); }
static inline wv128 wv_i32x4_pick2of3_hi(wv128 a, wv128 b) { return wasm_i32x4_shuffle(a, b, 2, 3, 5, 6); }
static inline wv128 wv_i32x4_pick3of4_0(wv128 a, wv128 b) { return wasm_i32x4_shuffle(a, b, 0, 1, 2, 4); }
static inline wv128 wv_i32x4_pick3of4_1(wv128 a, wv128 b) { return wasm_i32x4_shuffle(a, b, 1, 2, 4, 5); }
static inline wv128 wv_i32x4_pick3of4_2(wv128 a, wv128 b) { return wasm_i32x4_shuffle(a, b, 2, 4, 5, 6); }
/* r[i] = idx[i] < 16 ? a[idx[i]] : 0 */
static inline wv128 wv_i8x16_swizzle(wv128 a, wv128 idx) { return wasm_i8x16_swizzle(a, idx); }
static inline wv128 wv_i8x16_interleave_lo(wv128 a, wv128 b) {
  return wasm_i8x16_shuffle(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
}
static inline wv128 wv_i8x16_interleave_hi(wv128 a, wv128 b) {
  return wasm_i8x16_shuffle(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
}

#endif
