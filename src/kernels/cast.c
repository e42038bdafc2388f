/* SIMD casts for the hot pairs: f32 <-> f16, f32 <-> bf16, f32 <-> i32.
 * Same bits as base/half.h (PyTorch's; tests/c/test_half.c checks every
 * float16 / bfloat16 pattern, tests/c/test_half_sweep.c a dense sweep of
 * float32 patterns on every backend and through copy_ on threads). Wasm has
 * no conversion instruction, so both float16 directions are bit arithmetic,
 * with float steps where the FPU's rounding is the one wanted and the
 * result does not depend on a NaN's bits (wasm leaves the bits of a NaN a
 * float op returns open). 8 elements a turn, the tail through a zero-padded buffer so nothing is
 * read or written past the range. */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

/* 4 floats |x| -> 4 float16 magnitudes in the i32 lanes; a NaN lane ends
 * far above 0x7E00 (the caller clamps). The FPU does the rounding: c = |x|
 * clamped at 65536 by pmin (which keeps a NaN) plus 2^13 times c's power of
 * two (at least 2^-14's: the subnormal unit) has float16's unit as its last
 * bit, so the add rounds to nearest even at float16's precision, and
 * subtracting it back is exact. Times 2^-112 moves the exponent into
 * float16's range (float16 subnormals become float32 subnormals, exactly),
 * and the float16 bits are then the float32's shifted down by 13: 65536
 * (and what rounds to it) gives 0x7C00. A NaN's bits after the float ops
 * are not fixed by wasm, but any NaN, either sign, shifts to 0x3FC00 or
 * more, which the caller's unsigned clamp turns into 0x7E00. */
static inline wv128 f16_magnitude_lanes(wv128 ax) {
  wv128 c = wv_f32x4_pmin(ax, wv_f32x4_splat(65536.0f));
  wv128 pow2 = wv_i32x4_max(wv_v128_and(c, wv_i32x4_splat(0x7F800000)), wv_i32x4_splat(0x38800000));
  wv128 bias = wv_i32x4_add(pow2, wv_i32x4_splat(13 << 23));
  wv128 r = wv_f32x4_sub(wv_f32x4_add(c, bias), bias);
  return wv_u32x4_shr(wv_f32x4_mul(r, wv_f32x4_splat(0x1.0p-112f)), 13);
}

/* 8 floats at x -> 8 float16 at y. The magnitudes narrow with unsigned
 * saturation and are clamped at 0x7E00 in 16-bit lanes (NaN -> 0x7E00,
 * PyTorch's); the signs come from the signed saturating narrow of the
 * floats' bits, whose bit 15 is the float's sign for every pattern. */
static inline void f32_f16_8(const char* x, char* y) {
  const wv128 abs_mask = wv_i32x4_splat(0x7FFFFFFF);
  wv128 lo = wv_v128_load(x), hi = wv_v128_load(x + 16);
  wv128 h = wv_u16x8_narrow_sat_i32x4(f16_magnitude_lanes(wv_v128_and(lo, abs_mask)),
                                      f16_magnitude_lanes(wv_v128_and(hi, abs_mask)));
  h = wv_u16x8_min(h, wv_i16x8_splat(0x7E00));
  wv128 sign = wv_v128_and(wv_i16x8_narrow_i32x4(lo, hi), wv_i16x8_splat((int16_t)0x8000));
  wv_v128_store(y, wv_v128_or(h, sign));
}

/* 8 float16 patterns -> 8 floats (two vectors, lanes in order). The float32
 * bits are built in 16-bit lanes: the high half is sign, exponent + 112 (+
 * 112 more for Inf / NaN, with NaN's quiet bit) and the top 7 mantissa
 * bits, the low half the last 3; interleaving the halves makes the floats.
 * That is exact for normals, Inf and NaN (payload kept, made quiet). A
 * subnormal m comes out as F = 2^-15 (1 + m/1024), and 2F - 2^-14 is then
 * exactly m 2^-24 and below F, while for a normal 2F - 2^-14 >= F: pmin
 * picks the right one on the unsigned value, and keeps F when F is NaN
 * (pmin is a compare and a select: no NaN bits from the FPU). The sign goes
 * on last. */
static inline void f16_to_f32_8(wv128 v, wv128* lo, wv128* hi) {
  wv128 ah = wv_v128_and(v, wv_i16x8_splat(0x7FFF));
  wv128 top = wv_i16x8_add(wv_u16x8_shr(ah, 3), wv_i16x8_splat(0x3800));
  top = wv_i16x8_add(top, wv_v128_and(wv_i16x8_gt(ah, wv_i16x8_splat(0x7BFF)), wv_i16x8_splat(0x3800)));
  top = wv_v128_or(top, wv_v128_and(wv_i16x8_gt(ah, wv_i16x8_splat(0x7C00)), wv_i16x8_splat(0x0040)));
  wv128 low = wv_i16x8_shl(v, 13), sign = wv_v128_xor(v, ah);
  wv128 f0 = wv_i16x8_interleave_lo(low, top), f1 = wv_i16x8_interleave_hi(low, top);
  const wv128 c = wv_f32x4_splat(0x1.0p-14f);
  f0 = wv_f32x4_pmin(f0, wv_f32x4_sub(wv_f32x4_add(f0, f0), c));
  f1 = wv_f32x4_pmin(f1, wv_f32x4_sub(wv_f32x4_add(f1, f1), c));
  *lo = wv_v128_or(f0, wv_i16x8_interleave_lo(wv_v128_zero(), sign));
  *hi = wv_v128_or(f1, wv_i16x8_interleave_hi(wv_v128_zero(), sign));
}

static inline wv128 f32_to_bf16_lanes(wv128 x) {
  wv128 lsb = wv_v128_and(wv_u32x4_shr(x, 16), wv_i32x4_splat(1));
  wv128 r = wv_u32x4_shr(wv_i32x4_add(x, wv_i32x4_add(lsb, wv_i32x4_splat(0x7FFF))), 16);
  return wv_v128_bitselect(wv_i32x4_splat(0x7FC0), r, wv_f32x4_ne(x, x));
}

static inline void f32_bf16_8(const char* x, char* y) {
  wv128 lo = f32_to_bf16_lanes(wv_v128_load(x)), hi = f32_to_bf16_lanes(wv_v128_load(x + 16));
  wv_v128_store(y, wv_u16x8_narrow_bits_i32x4(lo, hi));
}

/* n floats at x -> n halves at y, 8 a turn (name##_8), two turns a loop
 * (one loop test and bounds check for 16 elements in wasm) */
#define NARROWING_CAST(name)                                                  \
  void WEFT_UKERNEL(name##_cvt, u8)(size_t n, const void* xv, void* yv) {     \
    const char* x = xv;                                                       \
    char* y = yv;                                                             \
    for (; n >= 16; n -= 16, x += 64, y += 32) {                              \
      name##_8(x, y);                                                         \
      name##_8(x + 32, y + 16);                                               \
    }                                                                         \
    if (n >= 8) {                                                             \
      name##_8(x, y);                                                         \
      n -= 8, x += 32, y += 16;                                               \
    }                                                                         \
    if (n) {                                                                  \
      char in[32] = {0}, out[16];                                             \
      memcpy(in, x, n * 4);                                                   \
      name##_8(in, out);                                                      \
      memcpy(y, out, n * 2);                                                  \
    }                                                                         \
  }
NARROWING_CAST(f32_f16)
NARROWING_CAST(f32_bf16)

static inline void f16_f32_8(const char* x, char* y) {
  wv128 lo, hi;
  f16_to_f32_8(wv_v128_load(x), &lo, &hi);
  wv_v128_store(y, lo);
  wv_v128_store(y + 16, hi);
}

static inline void bf16_f32_8(const char* x, char* y) {
  wv128 h = wv_v128_load(x);
  wv_v128_store(y, wv_i32x4_shl(wv_u32x4_extend_low_u16x8(h), 16));
  wv_v128_store(y + 16, wv_i32x4_shl(wv_u32x4_extend_high_u16x8(h), 16));
}

/* 8 halves at x -> 8 floats at y */
#define WIDENING_CAST(name)                                                   \
  void WEFT_UKERNEL(name##_cvt, u8)(size_t n, const void* xv, void* yv) {     \
    const char* x = xv;                                                       \
    char* y = yv;                                                             \
    for (; n >= 8; n -= 8, x += 16, y += 32) name##_8(x, y);                  \
    if (n) {                                                                  \
      char in[16] = {0}, out[32];                                             \
      memcpy(in, x, n * 2);                                                   \
      name##_8(in, out);                                                      \
      memcpy(y, out, n * 4);                                                  \
    }                                                                         \
  }
WIDENING_CAST(f16_f32)
WIDENING_CAST(bf16_f32)

/* same-size lane maps: 8 elements a turn, one vector loop, partial tail */
#define SAME_SIZE_CAST(name, op)                                              \
  void WEFT_UKERNEL(name##_cvt, u8)(size_t n, const void* xv, void* yv) {     \
    const char* x = xv;                                                       \
    char* y = yv;                                                             \
    for (; n >= 8; n -= 8, x += 32, y += 32) {                                \
      wv128 a = op(wv_v128_load(x)), b = op(wv_v128_load(x + 16));            \
      wv_v128_store(y, a);                                                    \
      wv_v128_store(y + 16, b);                                               \
    }                                                                         \
    for (; n >= 4; n -= 4, x += 16, y += 16) wv_v128_store(y, op(wv_v128_load(x))); \
    if (n) wv_v128_store_partial(y, op(wv_v128_load_partial(x, n * 4)), n * 4); \
  }
SAME_SIZE_CAST(f32_i32, wv_i32x4_trunc_sat_f32x4)
SAME_SIZE_CAST(i32_f32, wv_f32x4_convert_i32x4)
