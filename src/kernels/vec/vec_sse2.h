/* SSE2 backend. wv128 is __m128i; float ops cast for free. Where SSE2 differs
 * from wasm (min/max on NaN and signed zeros, cvttps overflow, no round
 * instruction) the op adds the fix-up that gives wasm's result. */
#ifndef WEFT_VEC_SSE2_H
#define WEFT_VEC_SSE2_H

#include <emmintrin.h>

#define WEFT_VEC_ISA sse2
typedef __m128i wv128;

#define WV__PS(x) _mm_castsi128_ps(x)
#define WV__SI(x) _mm_castps_si128(x)

static inline wv128 wv_v128_load(const void* p) { return _mm_loadu_si128((const __m128i*)p); }
static inline void wv_v128_store(void* p, wv128 v) { _mm_storeu_si128((__m128i*)p, v); }
static inline wv128 wv_v128_and(wv128 a, wv128 b) { return _mm_and_si128(a, b); }
static inline wv128 wv_v128_or(wv128 a, wv128 b) { return _mm_or_si128(a, b); }
static inline wv128 wv_v128_xor(wv128 a, wv128 b) { return _mm_xor_si128(a, b); }
static inline wv128 wv_v128_not(wv128 a) { return _mm_xor_si128(a, _mm_set1_epi32(-1)); }
/* a & ~b, wasm's operand order (SSE's andnot negates its first operand). */
static inline wv128 wv_v128_andnot(wv128 a, wv128 b) { return _mm_andnot_si128(b, a); }
static inline wv128 wv_v128_bitselect(wv128 a, wv128 b, wv128 m) {
  return _mm_or_si128(_mm_and_si128(a, m), _mm_andnot_si128(m, b));
}

static inline wv128 wv_f32x4_splat(float x) { return WV__SI(_mm_set1_ps(x)); }
static inline wv128 wv_i32x4_splat(int32_t x) { return _mm_set1_epi32(x); }
static inline wv128 wv_i16x8_splat(int16_t x) { return _mm_set1_epi16(x); }
static inline wv128 wv_i8x16_splat(int8_t x) { return _mm_set1_epi8(x); }
static inline wv128 wv_i64x2_splat(int64_t x) { return _mm_set1_epi64x(x); }

static inline wv128 wv_f32x4_add(wv128 a, wv128 b) { return WV__SI(_mm_add_ps(WV__PS(a), WV__PS(b))); }
static inline wv128 wv_f32x4_sub(wv128 a, wv128 b) { return WV__SI(_mm_sub_ps(WV__PS(a), WV__PS(b))); }
static inline wv128 wv_f32x4_mul(wv128 a, wv128 b) { return WV__SI(_mm_mul_ps(WV__PS(a), WV__PS(b))); }
static inline wv128 wv_f32x4_div(wv128 a, wv128 b) { return WV__SI(_mm_div_ps(WV__PS(a), WV__PS(b))); }
static inline wv128 wv_f32x4_sqrt(wv128 a) { return WV__SI(_mm_sqrt_ps(WV__PS(a))); }
static inline wv128 wv_f32x4_abs(wv128 a) { return _mm_and_si128(a, _mm_set1_epi32(0x7fffffff)); }
static inline wv128 wv_f32x4_neg(wv128 a) { return _mm_xor_si128(a, _mm_set1_epi32((int32_t)0x80000000u)); }
static inline wv128 wv_f32x4_eq(wv128 a, wv128 b) { return WV__SI(_mm_cmpeq_ps(WV__PS(a), WV__PS(b))); }
static inline wv128 wv_f32x4_ne(wv128 a, wv128 b) { return WV__SI(_mm_cmpneq_ps(WV__PS(a), WV__PS(b))); }
static inline wv128 wv_f32x4_lt(wv128 a, wv128 b) { return WV__SI(_mm_cmplt_ps(WV__PS(a), WV__PS(b))); }
static inline wv128 wv_f32x4_le(wv128 a, wv128 b) { return WV__SI(_mm_cmple_ps(WV__PS(a), WV__PS(b))); }
static inline wv128 wv_f32x4_gt(wv128 a, wv128 b) { return WV__SI(_mm_cmpgt_ps(WV__PS(a), WV__PS(b))); }
static inline wv128 wv_f32x4_ge(wv128 a, wv128 b) { return WV__SI(_mm_cmpge_ps(WV__PS(a), WV__PS(b))); }

/* minps returns its second operand on NaN or equal inputs. Both operand
 * orders OR-ed give -0 for min(+0,-0); the unordered mask turns NaN lanes
 * into a NaN (all ones), as wasm's min/max propagate NaN. */
static inline wv128 wv_f32x4_min(wv128 a, wv128 b) {
  __m128 x = WV__PS(a), y = WV__PS(b);
  __m128 m = _mm_or_ps(_mm_min_ps(x, y), _mm_min_ps(y, x));
  return WV__SI(_mm_or_ps(m, _mm_cmpunord_ps(x, y)));
}
static inline wv128 wv_f32x4_max(wv128 a, wv128 b) {
  __m128 x = WV__PS(a), y = WV__PS(b);
  __m128 m = _mm_and_ps(_mm_max_ps(x, y), _mm_max_ps(y, x));
  return WV__SI(_mm_or_ps(m, _mm_cmpunord_ps(x, y)));
}

/* wasm's pmin/pmax: b < a ? b : a and a < b ? b : a, which are minps/maxps
 * with the operands swapped (a NaN in a passes through). */
static inline wv128 wv_f32x4_pmin(wv128 a, wv128 b) { return WV__SI(_mm_min_ps(WV__PS(b), WV__PS(a))); }
static inline wv128 wv_f32x4_pmax(wv128 a, wv128 b) { return WV__SI(_mm_max_ps(WV__PS(b), WV__PS(a))); }

static inline wv128 wv_f32x4_convert_i32x4(wv128 a) { return WV__SI(_mm_cvtepi32_ps(a)); }
/* cvttps gives 0x80000000 for NaN and overflow; fix both to wasm's trunc_sat. */
static inline wv128 wv_i32x4_trunc_sat_f32x4(wv128 a) {
  __m128 x = WV__PS(a);
  __m128i t = _mm_cvttps_epi32(x);
  t = _mm_xor_si128(t, WV__SI(_mm_cmpge_ps(x, _mm_set1_ps(2147483648.0f))));
  return _mm_and_si128(t, WV__SI(_mm_cmpord_ps(x, x)));
}

/* No round instruction before SSE4.1: below 2^23 the integer part fits the
 * cvtt range; above it every float is already integral (and NaN fails the
 * compare, so it passes through). */
static inline wv128 wv__sse2_small(wv128 a) {
  return WV__SI(_mm_cmplt_ps(WV__PS(wv_f32x4_abs(a)), _mm_set1_ps(8388608.0f)));
}
static inline wv128 wv__sse2_sign(wv128 a) { return _mm_and_si128(a, _mm_set1_epi32((int32_t)0x80000000u)); }
static inline wv128 wv_f32x4_trunc(wv128 a) {
  wv128 t = _mm_or_si128(WV__SI(_mm_cvtepi32_ps(_mm_cvttps_epi32(WV__PS(a)))), wv__sse2_sign(a));
  return wv_v128_bitselect(t, a, wv__sse2_small(a));
}
static inline wv128 wv_f32x4_nearest(wv128 a) {
  __m128 magic = _mm_set1_ps(8388608.0f);
  __m128 r = _mm_sub_ps(_mm_add_ps(WV__PS(wv_f32x4_abs(a)), magic), magic);
  return wv_v128_bitselect(_mm_or_si128(WV__SI(r), wv__sse2_sign(a)), a, wv__sse2_small(a));
}
static inline wv128 wv_f32x4_floor(wv128 a) {
  wv128 t = wv_f32x4_trunc(a);
  wv128 less = WV__SI(_mm_sub_ps(WV__PS(t), _mm_set1_ps(1.0f)));
  return wv_v128_bitselect(less, t, WV__SI(_mm_cmpgt_ps(WV__PS(t), WV__PS(a))));
}
static inline wv128 wv_f32x4_ceil(wv128 a) {
  wv128 t = wv_f32x4_trunc(a);
  wv128 more = WV__SI(_mm_add_ps(WV__PS(t), _mm_set1_ps(1.0f)));
  return wv_v128_bitselect(more, t, WV__SI(_mm_cmplt_ps(WV__PS(t), WV__PS(a))));
}

static inline wv128 wv_i32x4_add(wv128 a, wv128 b) { return _mm_add_epi32(a, b); }
static inline wv128 wv_i32x4_sub(wv128 a, wv128 b) { return _mm_sub_epi32(a, b); }
static inline wv128 wv_i32x4_eq(wv128 a, wv128 b) { return _mm_cmpeq_epi32(a, b); }
static inline wv128 wv_i32x4_gt(wv128 a, wv128 b) { return _mm_cmpgt_epi32(a, b); }
static inline wv128 wv_i32x4_lt(wv128 a, wv128 b) { return _mm_cmplt_epi32(a, b); }
static inline wv128 wv_i32x4_shl(wv128 a, int n) { return _mm_sll_epi32(a, _mm_cvtsi32_si128(n)); }
static inline wv128 wv_i32x4_shr(wv128 a, int n) { return _mm_sra_epi32(a, _mm_cvtsi32_si128(n)); }
static inline wv128 wv_u32x4_shr(wv128 a, int n) { return _mm_srl_epi32(a, _mm_cvtsi32_si128(n)); }
static inline int wv_v128_any_true(wv128 a) {
  return _mm_movemask_epi8(_mm_cmpeq_epi8(a, _mm_setzero_si128())) != 0xffff;
}
static inline wv128 wv_i16x8_eq(wv128 a, wv128 b) { return _mm_cmpeq_epi16(a, b); }
/* SSE2 has no 32-bit min / max (SSE4.1's pminsd): a compare and a select */
static inline wv128 wv_i32x4_min(wv128 a, wv128 b) { return wv_v128_bitselect(b, a, _mm_cmpgt_epi32(a, b)); }
static inline wv128 wv_i32x4_max(wv128 a, wv128 b) { return wv_v128_bitselect(a, b, _mm_cmpgt_epi32(a, b)); }
static inline wv128 wv_i16x8_add(wv128 a, wv128 b) { return _mm_add_epi16(a, b); }
static inline wv128 wv_i16x8_gt(wv128 a, wv128 b) { return _mm_cmpgt_epi16(a, b); }
/* SSE2 has no pminuw: a minus what a exceeds b by (saturating) */
static inline wv128 wv_u16x8_min(wv128 a, wv128 b) { return _mm_sub_epi16(a, _mm_subs_epu16(a, b)); }
static inline wv128 wv_i16x8_shl(wv128 a, int n) { return _mm_sll_epi16(a, _mm_cvtsi32_si128(n)); }
static inline wv128 wv_u16x8_shr(wv128 a, int n) { return _mm_srl_epi16(a, _mm_cvtsi32_si128(n)); }
static inline wv128 wv_i8x16_eq(wv128 a, wv128 b) { return _mm_cmpeq_epi8(a, b); }

static inline wv128 wv_i16x8_narrow_i32x4(wv128 a, wv128 b) { return _mm_packs_epi32(a, b); }
static inline wv128 wv_i8x16_narrow_i16x8(wv128 a, wv128 b) { return _mm_packs_epi16(a, b); }
static inline wv128 wv_u32x4_extend_low_u16x8(wv128 a) { return _mm_unpacklo_epi16(a, _mm_setzero_si128()); }
static inline wv128 wv_u32x4_extend_high_u16x8(wv128 a) { return _mm_unpackhi_epi16(a, _mm_setzero_si128()); }

static inline wv128 wv_i32x4_interleave_lo(wv128 a, wv128 b) { return _mm_unpacklo_epi32(a, b); }
static inline wv128 wv_i32x4_even(wv128 a, wv128 b) { return WV__SI(_mm_shuffle_ps(WV__PS(a), WV__PS(b), 0x88)); }
static inline wv128 wv_i32x4_odd(wv128 a, wv128 b) { return WV__SI(_mm_shuffle_ps(WV__PS(a), WV__PS(b), 0xDD)); }
/* Lanes 0, 3, 6, 9 of the 12 lanes a:b:c (a stride-3 deinterleave): [b2, c1] first, then a0, a3 before them. */
static inline wv128 wv_i32x4_every3(wv128 a, wv128 b, wv128 c) {
  __m128 bc = _mm_shuffle_ps(WV__PS(b), WV__PS(c), 0x12);
  return WV__SI(_mm_shuffle_ps(WV__PS(a), bc, 0x8C));
}
/* The 12 lanes a0 b0 c0 a1 | b1 c1 a2 b2 | c2 a3 b3 c3 (a stride-3 interleave), one vector each. */
static inline wv128 wv_i32x4_zip3_0(wv128 a, wv128 b, wv128 c) {
  __m128 ab = WV__PS(_mm_unpacklo_epi32(a, b)); /* a0 b0 a1 b1 */
  __m128 ca = _mm_shuffle_ps(WV__PS(c), ab, 0xA0); /* c0 c0 a1 a1 */
  return WV__SI(_mm_shuffle_ps(ab, ca, 0x84));
}
static inline wv128 wv_i32x4_zip3_1(wv128 a, wv128 b, wv128 c) {
  __m128 bc = _mm_shuffle_ps(WV__PS(b), WV__PS(c), 0x55); /* b1 b1 c1 c1 */
  __m128 ab = _mm_shuffle_ps(WV__PS(a), WV__PS(b), 0xAA); /* a2 a2 b2 b2 */
  return WV__SI(_mm_shuffle_ps(bc, ab, 0x88));
}
static inline wv128 wv_i32x4_zip3_2(wv128 a, wv128 b, wv128 c) {
  __m128 ca = _mm_shuffle_ps(WV__PS(c), WV__PS(a), 0xFA); /* c2 c2 a3 a3 */
  __m128 bc = _mm_shuffle_ps(WV__PS(b), WV__PS(c), 0xFF); /* b3 b3 c3 c3 */
  return WV__SI(_mm_shuffle_ps(ca, bc, 0x88));
}
static inline wv128 wv_i32x4_interleave_hi(wv128 a, wv128 b) { return _mm_unpackhi_epi32(a, b); }
/* Narrowed pixels (x32_pick): two of each 3-lane pixel, lanes 0 1 3 4 and
 * 2 3 5 6 of a:b; three of each 4-lane pixel, lanes 0 1 2 4, 1 2 4 5 and
 * 2 4 5 6 of a:b. One shufps where two lanes come from each side, else two. */
static inline wv128 wv_i32x4_pick2of3_lo(wv128 a, wv128 b) {
  __m128 t = _mm_shuffle_ps(WV__PS(a), WV__PS(b), 0x0F); /* a3 a3 b0 b0 */
  return WV__SI(_mm_shuffle_ps(WV__PS(a), t, 0x84));
}
static inline wv128 wv_i32x4_pick2of3_hi(wv128 a, wv128 b) { return WV__SI(_mm_shuffle_ps(WV__PS(a), WV__PS(b), 0x9E)); }
static inline wv128 wv_i32x4_pick3of4_0(wv128 a, wv128 b) {
  __m128 t = _mm_shuffle_ps(WV__PS(a), WV__PS(b), 0x0A); /* a2 a2 b0 b0 */
  return WV__SI(_mm_shuffle_ps(WV__PS(a), t, 0x84));
}
static inline wv128 wv_i32x4_pick3of4_1(wv128 a, wv128 b) { return WV__SI(_mm_shuffle_ps(WV__PS(a), WV__PS(b), 0x49)); }
static inline wv128 wv_i32x4_pick3of4_2(wv128 a, wv128 b) {
  __m128 t = _mm_shuffle_ps(WV__PS(a), WV__PS(b), 0x0A); /* a2 a2 b0 b0 */
  return WV__SI(_mm_shuffle_ps(t, WV__PS(b), 0x98));
}
static inline wv128 wv_i64x2_interleave_lo(wv128 a, wv128 b) { return _mm_unpacklo_epi64(a, b); }
static inline wv128 wv_i64x2_interleave_hi(wv128 a, wv128 b) { return _mm_unpackhi_epi64(a, b); }
/* f64x2 (the scans' double accumulators) */
static inline wv128 wv_f64x2_add(wv128 a, wv128 b) { return _mm_castpd_si128(_mm_add_pd(_mm_castsi128_pd(a), _mm_castsi128_pd(b))); }
static inline wv128 wv_f64x2_mul(wv128 a, wv128 b) { return _mm_castpd_si128(_mm_mul_pd(_mm_castsi128_pd(a), _mm_castsi128_pd(b))); }
static inline wv128 wv_f64x2_splat(double x) { return _mm_castpd_si128(_mm_set1_pd(x)); }
static inline wv128 wv_f64x2_promote_low_f32x4(wv128 a) { return _mm_castpd_si128(_mm_cvtps_pd(_mm_castsi128_ps(a))); }
static inline wv128 wv_f32x4_demote_f64x2_zero(wv128 a) { return _mm_castps_si128(_mm_cvtpd_ps(_mm_castsi128_pd(a))); }
static inline wv128 wv_i16x8_interleave_lo(wv128 a, wv128 b) { return _mm_unpacklo_epi16(a, b); }
static inline wv128 wv_i16x8_interleave_hi(wv128 a, wv128 b) { return _mm_unpackhi_epi16(a, b); }
static inline wv128 wv_i8x16_interleave_lo(wv128 a, wv128 b) { return _mm_unpacklo_epi8(a, b); }
/* wasm's swizzle; SSE2 has no byte shuffle (pshufb is SSSE3), so bytes */
static inline wv128 wv_i8x16_swizzle(wv128 a, wv128 idx) {
  uint8_t x[16], s[16], r[16];
  _mm_storeu_si128((__m128i*)x, a);
  _mm_storeu_si128((__m128i*)s, idx);
  for (int i = 0; i < 16; i++) r[i] = s[i] < 16 ? x[s[i]] : 0;
  return _mm_loadu_si128((const __m128i*)r);
}
static inline wv128 wv_i8x16_interleave_hi(wv128 a, wv128 b) { return _mm_unpackhi_epi8(a, b); }

#endif
