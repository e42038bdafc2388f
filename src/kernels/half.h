/* Scalar float16 / bfloat16 conversions, round-to-nearest-even with NaN,
 * Inf and subnormals exact. float16 follows the FP16 library's bit
 * algorithms (what c10::Half uses); bfloat16 follows c10::BFloat16
 * (round_to_nearest_even, every NaN becomes 0x7FC0). The SIMD casts in
 * cast.c do the same steps lane-wise. */
#ifndef WEFT_KERNELS_HALF_H
#define WEFT_KERNELS_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t weft__f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float weft__f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float weft__f16_to_f32(uint16_t h) {
  uint32_t w = (uint32_t)h << 16, sign = w & 0x80000000u, two_w = w + w;
  /* normal: move the exponent into place and rebias by a multiply */
  float normalized = weft__f32_from_bits((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  /* subnormal: the mantissa as the fraction of a float in [0.5, 1) minus 0.5 */
  float denormalized = weft__f32_from_bits((two_w >> 17) | (126u << 23)) - 0.5f;
  uint32_t r = two_w < (1u << 27) ? weft__f32_bits(denormalized) : weft__f32_bits(normalized);
  return weft__f32_from_bits(sign | r);
}

static inline uint16_t weft__f32_to_f16(float f) {
  /* the two multiplies round to the f16 precision at the right exponent
   * and overflow to Inf exactly when the f16 would */
  float base = (__builtin_fabsf(f) * 0x1.0p+112f) * 0x1.0p-110f;
  uint32_t w = weft__f32_bits(f), shl1_w = w + w, sign = w & 0x80000000u;
  uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = weft__f32_from_bits((bias >> 1) + 0x07800000u) + base;
  uint32_t bits = weft__f32_bits(base);
  uint32_t nonsign = ((bits >> 13) & 0x00007C00u) + (bits & 0x00000FFFu);
  return (uint16_t)((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

static inline float weft__bf16_to_f32(uint16_t h) { return weft__f32_from_bits((uint32_t)h << 16); }

static inline uint16_t weft__f32_to_bf16(float f) {
  if (f != f) return 0x7FC0;
  uint32_t u = weft__f32_bits(f);
  return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

#endif
