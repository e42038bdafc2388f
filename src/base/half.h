/* float16 / bfloat16 <-> float32, the one set of converters weft uses, with
 * the bits PyTorch 1.13's c10::Half and c10::BFloat16 produce (recorded in
 * tests/fixtures/half/, checked by tests/c/test_half.c):
 * - float16 -> float32 is exact; a NaN keeps its sign and payload and comes
 *   out quiet (c10 widens with a float multiply, which quiets).
 * - float32 -> float16 rounds to nearest even, overflows to Inf from 65520
 *   on, rounds into subnormals; every NaN becomes 0x7E00 with its sign.
 * - bfloat16 -> float32 is a shift: exact, a signalling NaN stays one.
 * - float32 -> bfloat16 rounds to nearest even; every NaN becomes 0x7FC0,
 *   sign dropped (c10::BFloat16; PyTorch's AVX2 Vectorized<BFloat16> path
 *   writes 0xFFFF instead, see tests/fixtures/half/gen_half.py).
 * float64 sources go through float32 first, as c10::Half(float(x)) does.
 * Integer steps only where a NaN can pass: wasm leaves the NaN bits of
 * float arithmetic open, so no result here depends on the FPU.
 * The bottom layer: standard headers only. */
#ifndef WEFT_BASE_HALF_H
#define WEFT_BASE_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t weft__f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static inline float weft__f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static inline float weft__f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return weft__f32_from_bits(sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0));
  if (e == 0) {
    /* subnormal: m * 2^-24, exact in float32 (no NaN here, so the FPU is safe) */
    float v = (float)m * 0x1.0p-24f;
    return weft__f32_from_bits(sign | weft__f32_bits(v));
  }
  return weft__f32_from_bits(sign | ((e + 112u) << 23) | (m << 13));
}

static inline uint16_t weft__f32_to_f16(float f) {
  uint32_t x = weft__f32_bits(f);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: Inf */
  if (ax < 0x38800000u) {                                   /* below 2^-14: subnormal or zero */
    if (ax < 0x33000000u) return sign;                      /* below 2^-25: 0 (2^-25 itself ties to 0 below) */
    uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
    /* value = mant * 2^(e-150); in float16 subnormal units (2^-24) that is mant >> (126 - e) */
    int shift = 126 - (int)(ax >> 23);
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) q++;
    return (uint16_t)(sign | q);
  }
  /* round to nearest even at bit 13; a carry moves into the exponent */
  uint32_t r = ax + 0xfffu + ((ax >> 13) & 1u);
  return (uint16_t)(sign | ((r - 0x38000000u) >> 13));
}

static inline float weft__bf16_to_f32(uint16_t b) { return weft__f32_from_bits((uint32_t)b << 16); }

static inline uint16_t weft__f32_to_bf16(float f) {
  uint32_t x = weft__f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;
  /* round to nearest even at bit 16; FLT_MAX's neighbourhood carries into Inf */
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

#endif
