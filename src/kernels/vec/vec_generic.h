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

/* clamp(v, lo, hi) as PyTorch's clamp / hardtanh / relu6 (std::min(std::max(v, lo), hi)):
 * v < lo ? lo : v > hi ? hi : v, so a NaN v stays NaN and -0 stays -0 where v passes
 * (f32x4.max would give +0 for max(-0, 0)); pmax/pmin are one instruction each in V8 */
static inline wv128 wv_f32x4_clamp(wv128 v, wv128 lo, wv128 hi) { return wv_f32x4_pmin(wv_f32x4_pmax(v, lo), hi); }

/* The c (2..4) channels of 4 pixels at p (c vectors of interleaved 32-bit
 * elements) as one vector per channel: pixels to channel planes. c == 3
 * reads 2 elements past the 4 pixels (the caller keeps a pixel after). */
static inline void wv_i32x4_unzip(size_t c, const float* p, wv128* out) {
  if (c == 2) {
    wv128 v0 = wv_v128_load(p), v1 = wv_v128_load(p + 4);
    out[0] = wv_i32x4_even(v0, v1);
    out[1] = wv_i32x4_odd(v0, v1);
  } else if (c == 3) {
    for (size_t j = 0; j < 3; j++)
      out[j] = wv_i32x4_every3(wv_v128_load(p + j), wv_v128_load(p + j + 4), wv_v128_load(p + j + 8));
  } else {
    wv128 e0 = wv_i32x4_even(wv_v128_load(p), wv_v128_load(p + 4));
    wv128 e1 = wv_i32x4_even(wv_v128_load(p + 8), wv_v128_load(p + 12));
    wv128 o0 = wv_i32x4_odd(wv_v128_load(p), wv_v128_load(p + 4));
    wv128 o1 = wv_i32x4_odd(wv_v128_load(p + 8), wv_v128_load(p + 12));
    out[0] = wv_i32x4_even(e0, e1);
    out[1] = wv_i32x4_even(o0, o1);
    out[2] = wv_i32x4_odd(e0, e1);
    out[3] = wv_i32x4_odd(o0, o1);
  }
}

/* Four 32-bit elements of each of c (2..4) rows a, b, d, e as the c vectors
 * of their interleave (a0 b0 .. a1 b1 ..): channel planes to pixels. Rows
 * past c are ignored. */
static inline void wv_i32x4_zip(size_t c, wv128 a, wv128 b, wv128 d, wv128 e, wv128* out) {
  if (c == 2) {
    out[0] = wv_i32x4_interleave_lo(a, b);
    out[1] = wv_i32x4_interleave_hi(a, b);
  } else if (c == 3) {
    out[0] = wv_i32x4_zip3_0(a, b, d);
    out[1] = wv_i32x4_zip3_1(a, b, d);
    out[2] = wv_i32x4_zip3_2(a, b, d);
  } else {
    wv128 lo0 = wv_i32x4_interleave_lo(a, b), lo1 = wv_i32x4_interleave_lo(d, e);
    wv128 hi0 = wv_i32x4_interleave_hi(a, b), hi1 = wv_i32x4_interleave_hi(d, e);
    out[0] = wv_i64x2_interleave_lo(lo0, lo1);
    out[1] = wv_i64x2_interleave_hi(lo0, lo1);
    out[2] = wv_i64x2_interleave_lo(hi0, hi1);
    out[3] = wv_i64x2_interleave_hi(hi0, hi1);
  }
}

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
/* wasm's u16x8.narrow_i32x4: each i32 lane clamped to 0..0xFFFF */
static inline wv128 wv_u16x8_narrow_sat_i32x4(wv128 a, wv128 b) {
  const wv128 zero = wv_v128_zero(), top = wv_i32x4_splat(0xFFFF);
  a = wv_i32x4_min(wv_i32x4_max(a, zero), top);
  b = wv_i32x4_min(wv_i32x4_max(b, zero), top);
  return wv_i16x8_narrow_low16_i32x4(a, b);
}
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
