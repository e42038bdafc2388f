/* Transposes typed by element size: out[j*out_stride + i] = in[i*in_stride + j]
 * for i < height (input rows), j < width (input columns), byte strides.
 * x32: 4x4 register tiles, two shuffle rounds (32-bit then 64-bit
 * interleaves), XNNPACK x32-transposec-4x4 style. x64: 2x2 tiles, one
 * round. Edges: rows past the end re-read the last valid row (their lanes
 * are never stored), columns past the end come from partial loads, and
 * partial stores write only the valid lanes. x8/x16 are plain loops (their
 * volume in practice is small; the blocked driver keeps them cache-local). */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

static inline wv128 load_cols(const char* p, size_t cols, size_t es) {
  return cols * es >= 16 ? wv_v128_load(p) : wv_v128_load_partial(p, cols * es);
}
static inline void store_cols(char* p, wv128 v, size_t cols, size_t es) {
  if (cols * es >= 16)
    wv_v128_store(p, v);
  else
    wv_v128_store_partial(p, v, cols * es);
}

void WEFT_UKERNEL(x32_transposec, 4x4)(const void* in, void* out, size_t in_stride, size_t out_stride,
                                       size_t width, size_t height) {
  const char* src = in;
  char* dst = out;
  for (size_t i = 0; i < height; i += 4) {
    size_t rows = height - i < 4 ? height - i : 4;
    const char* r0 = src + i * in_stride;
    const char* r1 = rows > 1 ? r0 + in_stride : r0;
    const char* r2 = rows > 2 ? r1 + in_stride : r1;
    const char* r3 = rows > 3 ? r2 + in_stride : r2;
    size_t j = 0;
    if (rows == 4) {
      /* full tiles: plain loads and stores */
      for (; j + 4 <= width; j += 4) {
        wv128 v0 = wv_v128_load(r0 + j * 4), v1 = wv_v128_load(r1 + j * 4);
        wv128 v2 = wv_v128_load(r2 + j * 4), v3 = wv_v128_load(r3 + j * 4);
        wv128 t0 = wv_i32x4_interleave_lo(v0, v1), t1 = wv_i32x4_interleave_hi(v0, v1);
        wv128 t2 = wv_i32x4_interleave_lo(v2, v3), t3 = wv_i32x4_interleave_hi(v2, v3);
        char* o = dst + j * out_stride + i * 4;
        wv_v128_store(o, wv_i64x2_interleave_lo(t0, t2));
        wv_v128_store(o + out_stride, wv_i64x2_interleave_hi(t0, t2));
        wv_v128_store(o + 2 * out_stride, wv_i64x2_interleave_lo(t1, t3));
        wv_v128_store(o + 3 * out_stride, wv_i64x2_interleave_hi(t1, t3));
      }
    }
    for (; j < width; j += 4) {
      size_t cols = width - j < 4 ? width - j : 4;
      wv128 v0 = load_cols(r0 + j * 4, cols, 4), v1 = load_cols(r1 + j * 4, cols, 4);
      wv128 v2 = load_cols(r2 + j * 4, cols, 4), v3 = load_cols(r3 + j * 4, cols, 4);
      wv128 t0 = wv_i32x4_interleave_lo(v0, v1), t1 = wv_i32x4_interleave_hi(v0, v1);
      wv128 t2 = wv_i32x4_interleave_lo(v2, v3), t3 = wv_i32x4_interleave_hi(v2, v3);
      wv128 c[4] = {wv_i64x2_interleave_lo(t0, t2), wv_i64x2_interleave_hi(t0, t2),
                    wv_i64x2_interleave_lo(t1, t3), wv_i64x2_interleave_hi(t1, t3)};
      char* o = dst + j * out_stride + i * 4;
      for (size_t k = 0; k < cols; k++) store_cols(o + k * out_stride, c[k], rows, 4);
    }
  }
}

void WEFT_UKERNEL(x64_transposec, 2x2)(const void* in, void* out, size_t in_stride, size_t out_stride,
                                       size_t width, size_t height) {
  const char* src = in;
  char* dst = out;
  for (size_t i = 0; i < height; i += 2) {
    size_t rows = height - i < 2 ? height - i : 2;
    const char* r0 = src + i * in_stride;
    const char* r1 = rows > 1 ? r0 + in_stride : r0;
    for (size_t j = 0; j < width; j += 2) {
      size_t cols = width - j < 2 ? width - j : 2;
      wv128 v0 = load_cols(r0 + j * 8, cols, 8), v1 = load_cols(r1 + j * 8, cols, 8);
      wv128 c[2] = {wv_i64x2_interleave_lo(v0, v1), wv_i64x2_interleave_hi(v0, v1)};
      char* o = dst + j * out_stride + i * 8;
      for (size_t k = 0; k < cols; k++) store_cols(o + k * out_stride, c[k], rows, 8);
    }
  }
}

#define PLAIN_TRANSPOSE(bits, T)                                                                   \
  void WEFT_UKERNEL(x##bits##_transposec, 1x1)(const void* in, void* out, size_t in_stride,        \
                                               size_t out_stride, size_t width, size_t height) {   \
    for (size_t j = 0; j < width; j++) {                                                           \
      T* o = (T*)((char*)out + j * out_stride);                                                    \
      const char* s = (const char*)in + j * sizeof(T);                                             \
      for (size_t i = 0; i < height; i++) memcpy(o + i, s + i * in_stride, sizeof(T));             \
    }                                                                                              \
  }
PLAIN_TRANSPOSE(8, uint8_t)
PLAIN_TRANSPOSE(16, uint16_t)
