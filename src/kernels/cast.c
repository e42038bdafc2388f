/* SIMD casts for the hot pairs: f32 <-> f16, f32 <-> bf16, f32 <-> i32.
 * Same bits as base/half.h (PyTorch's; tests/c/test_half.c checks every
 * float16 / bfloat16 pattern): float16 by the FP16 library's float steps,
 * with NaN lanes made by bits and selected, since the NaN a float op returns
 * is not fixed in wasm. 8 elements a turn, the tail through a zero-padded
 * buffer so nothing is read or written past the range. */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

/* 4 floats -> 4 float16 bit patterns in the low half of each i32 lane */
static inline wv128 f32_to_f16_lanes(wv128 x) {
  wv128 base = wv_f32x4_mul(wv_f32x4_mul(wv_f32x4_abs(x), wv_f32x4_splat(0x1.0p+112f)), wv_f32x4_splat(0x1.0p-110f));
  wv128 shl1_w = wv_i32x4_add(x, x);
  wv128 sign = wv_v128_and(x, wv_i32x4_splat(INT32_MIN));
  wv128 bias = wv_u32x4_max(wv_v128_and(shl1_w, wv_i32x4_splat((int32_t)0xFF000000u)), wv_i32x4_splat(0x71000000));
  base = wv_f32x4_add(wv_i32x4_add(wv_u32x4_shr(bias, 1), wv_i32x4_splat(0x07800000)), base);
  wv128 exp_bits = wv_v128_and(wv_u32x4_shr(base, 13), wv_i32x4_splat(0x7C00));
  wv128 nonsign = wv_i32x4_add(exp_bits, wv_v128_and(base, wv_i32x4_splat(0x0FFF)));
  wv128 nan = wv_f32x4_ne(x, x);
  return wv_v128_or(wv_u32x4_shr(sign, 16), wv_v128_bitselect(wv_i32x4_splat(0x7E00), nonsign, nan));
}

/* 4 float16 patterns (zero-extended in i32 lanes) -> 4 floats */
static inline wv128 f16_lanes_to_f32(wv128 h) {
  wv128 w = wv_i32x4_shl(h, 16);
  wv128 sign = wv_v128_and(w, wv_i32x4_splat(INT32_MIN));
  wv128 two_w = wv_i32x4_add(w, w);
  wv128 normalized = wv_f32x4_mul(wv_i32x4_add(wv_u32x4_shr(two_w, 4), wv_i32x4_splat(0x70000000)),
                                  wv_f32x4_splat(0x1.0p-112f));
  wv128 denormalized = wv_f32x4_sub(wv_v128_or(wv_u32x4_shr(two_w, 17), wv_i32x4_splat(126 << 23)),
                                    wv_f32x4_splat(0.5f));
  wv128 is_denormal = wv_i32x4_eq(wv_u32x4_shr(two_w, 27), wv_v128_zero());
  wv128 finite = wv_v128_bitselect(denormalized, normalized, is_denormal);
  /* NaN by bits, quiet with its payload: wasm leaves the NaN a multiply returns open */
  wv128 nan = wv_v128_or(wv_u32x4_shr(two_w, 4), wv_i32x4_splat(0x7FC00000));
  wv128 is_nan = wv_u32x4_gt(two_w, wv_i32x4_splat((int32_t)0xF8000000u));
  return wv_v128_or(sign, wv_v128_bitselect(nan, finite, is_nan));
}

static inline wv128 f32_to_bf16_lanes(wv128 x) {
  wv128 lsb = wv_v128_and(wv_u32x4_shr(x, 16), wv_i32x4_splat(1));
  wv128 r = wv_u32x4_shr(wv_i32x4_add(x, wv_i32x4_add(lsb, wv_i32x4_splat(0x7FFF))), 16);
  return wv_v128_bitselect(wv_i32x4_splat(0x7FC0), r, wv_f32x4_ne(x, x));
}

/* 8 floats at x -> 8 halves at y */
#define NARROWING_CAST(name, lanes)                                           \
  static inline void name##_8(const char* x, char* y) {                       \
    wv128 lo = lanes(wv_v128_load(x)), hi = lanes(wv_v128_load(x + 16));      \
    wv_v128_store(y, wv_u16x8_narrow_bits_i32x4(lo, hi));                     \
  }                                                                           \
  void WEFT_UKERNEL(name##_cvt, u8)(size_t n, const void* xv, void* yv) {     \
    const char* x = xv;                                                       \
    char* y = yv;                                                             \
    for (; n >= 8; n -= 8, x += 32, y += 16) name##_8(x, y);                  \
    if (n) {                                                                  \
      char in[32] = {0}, out[16];                                             \
      memcpy(in, x, n * 4);                                                   \
      name##_8(in, out);                                                      \
      memcpy(y, out, n * 2);                                                  \
    }                                                                         \
  }
NARROWING_CAST(f32_f16, f32_to_f16_lanes)
NARROWING_CAST(f32_bf16, f32_to_bf16_lanes)

static inline wv128 bf16_lanes_to_f32(wv128 h) { return wv_i32x4_shl(h, 16); }

/* 8 halves at x -> 8 floats at y */
#define WIDENING_CAST(name, lanes)                                            \
  static inline void name##_8(const char* x, char* y) {                       \
    wv128 h = wv_v128_load(x);                                                \
    wv_v128_store(y, lanes(wv_u32x4_extend_low_u16x8(h)));                    \
    wv_v128_store(y + 16, lanes(wv_u32x4_extend_high_u16x8(h)));              \
  }                                                                           \
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
WIDENING_CAST(f16_f32, f16_lanes_to_f32)
WIDENING_CAST(bf16_f32, bf16_lanes_to_f32)

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
