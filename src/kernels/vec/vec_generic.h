/* Ops derived from the backend primitives, written once for every backend. */
#ifndef WEFT_VEC_GENERIC_H
#define WEFT_VEC_GENERIC_H

/* Tails: move the first nbytes (< 16) through a stack buffer, so a kernel
 * never reads or writes past the end of its range. */
static inline wv128 wv_v128_load_partial(const void* p, size_t nbytes) {
  unsigned char buf[16] = {0};
  memcpy(buf, p, nbytes);
  return wv_v128_load(buf);
}
static inline void wv_v128_store_partial(void* p, wv128 v, size_t nbytes) {
  unsigned char buf[16];
  wv_v128_store(buf, v);
  memcpy(p, buf, nbytes);
}

static inline wv128 wv_v128_zero(void) { return wv_i32x4_splat(0); }

/* Unsigned 32-bit compares through the sign-flip trick (SSE2 has only
 * signed); a backend with native ones defines WV_HAVE_U32X4_CMP. */
#ifndef WV_HAVE_U32X4_CMP
static inline wv128 wv_u32x4_gt(wv128 a, wv128 b) {
  wv128 s = wv_i32x4_splat(INT32_MIN);
  return wv_i32x4_gt(wv_v128_xor(a, s), wv_v128_xor(b, s));
}
static inline wv128 wv_u32x4_lt(wv128 a, wv128 b) { return wv_u32x4_gt(b, a); }
static inline wv128 wv_u32x4_max(wv128 a, wv128 b) { return wv_v128_bitselect(a, b, wv_u32x4_gt(a, b)); }
#endif

/* Keep the low 16 bits of each i32 lane (a truncating narrow): sign-extend
 * the low half so the saturating narrow is exact. */
static inline wv128 wv_i16x8_narrow_low16_i32x4(wv128 a, wv128 b) {
  return wv_i16x8_narrow_i32x4(wv_i32x4_shr(wv_i32x4_shl(a, 16), 16), wv_i32x4_shr(wv_i32x4_shl(b, 16), 16));
}

/* i32 lanes known to hold 0..0xFFFF (float16/bfloat16 bit patterns) to
 * 16-bit lanes: wasm's unsigned saturating narrow is exact on them (one
 * instruction); elsewhere the truncating narrow above. */
#ifndef WV_HAVE_U16X8_NARROW
static inline wv128 wv_u16x8_narrow_bits_i32x4(wv128 a, wv128 b) { return wv_i16x8_narrow_low16_i32x4(a, b); }
#endif

/* f32 lane masks (all ones / zero) of 16 lanes to 16 bytes of 0/1. */
static inline wv128 wv_u8x16_bool_from_masks(wv128 m0, wv128 m1, wv128 m2, wv128 m3) {
  wv128 lo = wv_i16x8_narrow_i32x4(m0, m1), hi = wv_i16x8_narrow_i32x4(m2, m3);
  return wv_v128_and(wv_i8x16_narrow_i16x8(lo, hi), wv_i8x16_splat(1));
}

static inline wv128 wv_f32x4_copysign(wv128 mag, wv128 sgn) {
  return wv_v128_bitselect(sgn, mag, wv_i32x4_splat(INT32_MIN));
}

/* a * b + c in two roundings: no backend has an FMA, so every one rounds alike. */
static inline wv128 wv_f32x4_muladd(wv128 a, wv128 b, wv128 c) { return wv_f32x4_add(wv_f32x4_mul(a, b), c); }

/* Round to the nearest integer (ties to even) for |a| < 2^22, as a float and
 * as an i32: adding 1.5 * 2^23 leaves the integer in the low mantissa bits. */
static inline wv128 wv_f32x4_round_magic(wv128 a, wv128* as_i32) {
  wv128 magic = wv_f32x4_splat(12582912.0f), t = wv_f32x4_add(a, magic);
  *as_i32 = wv_i32x4_sub(t, magic);
  return wv_f32x4_sub(t, magic);
}

/* 2^n as a float for -126 <= n <= 127 */
static inline wv128 wv_f32x4_exp2_i32x4(wv128 n) { return wv_i32x4_shl(wv_i32x4_add(n, wv_i32x4_splat(127)), 23); }

#endif
