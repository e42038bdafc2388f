/* Transposes typed by element size: out[j*out_stride + i] = in[i*in_stride + j]
 * for i < height (input rows), j < width (input columns), byte strides.
 * x32: 4x4 register tiles, two shuffle rounds (32-bit then 64-bit
 * interleaves), XNNPACK x32-transposec-4x4 style. x64: 2x2 tiles, one
 * round. Both walk column strips outer and rows inner (see x32). Edges:
 * rows past the end re-read the last valid row (their lanes are never
 * stored), columns past the end come from partial loads, and partial stores
 * write only the valid lanes. x8/x16 are plain loops (their
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

/* One 4x4 tile: rows r0..r3 (16 bytes each) to four 16-byte output pieces. */
static inline void tile_4x4(const char* p, size_t in_stride, char* o, size_t out_stride) {
  wv128 v0 = wv_v128_load(p), v1 = wv_v128_load(p + in_stride);
  wv128 v2 = wv_v128_load(p + 2 * in_stride), v3 = wv_v128_load(p + 3 * in_stride);
  wv128 t0 = wv_i32x4_interleave_lo(v0, v1), t1 = wv_i32x4_interleave_hi(v0, v1);
  wv128 t2 = wv_i32x4_interleave_lo(v2, v3), t3 = wv_i32x4_interleave_hi(v2, v3);
  wv_v128_store(o, wv_i64x2_interleave_lo(t0, t2));
  wv_v128_store(o + out_stride, wv_i64x2_interleave_hi(t0, t2));
  wv_v128_store(o + 2 * out_stride, wv_i64x2_interleave_lo(t1, t3));
  wv_v128_store(o + 3 * out_stride, wv_i64x2_interleave_hi(t1, t3));
}

/* A tile with fewer than 4 rows or columns (see the file comment). */
static void tile_4x4_edge(const char* p, size_t in_stride, char* o, size_t out_stride, size_t cols,
                          size_t rows) {
  const char* r0 = p;
  const char* r1 = rows > 1 ? r0 + in_stride : r0;
  const char* r2 = rows > 2 ? r1 + in_stride : r1;
  const char* r3 = rows > 3 ? r2 + in_stride : r2;
  wv128 v0 = load_cols(r0, cols, 4), v1 = load_cols(r1, cols, 4);
  wv128 v2 = load_cols(r2, cols, 4), v3 = load_cols(r3, cols, 4);
  wv128 t0 = wv_i32x4_interleave_lo(v0, v1), t1 = wv_i32x4_interleave_hi(v0, v1);
  wv128 t2 = wv_i32x4_interleave_lo(v2, v3), t3 = wv_i32x4_interleave_hi(v2, v3);
  wv128 c[4] = {wv_i64x2_interleave_lo(t0, t2), wv_i64x2_interleave_hi(t0, t2),
                wv_i64x2_interleave_lo(t1, t3), wv_i64x2_interleave_hi(t1, t3)};
  for (size_t k = 0; k < cols; k++) store_cols(o + k * out_stride, c[k], rows, 4);
}

/* Column strips outer, rows inner: each strip of 4 input columns becomes 4
 * output rows written front to back in 16-byte stores, so an output line is
 * finished while it is in L1; the input lines of a strip (4 strips share
 * one 64-byte line per row) stay in L1 across the strips when the caller
 * keeps height x 64 bytes small (the blocked driver does). */
void WEFT_UKERNEL(x32_transposec, 4x4)(const void* in, void* out, size_t in_stride, size_t out_stride,
                                       size_t width, size_t height) {
  const char* src = in;
  char* dst = out;
  size_t h4 = height & ~(size_t)3;
  size_t j = 0;
  for (; j + 4 <= width; j += 4) {
    const char* p = src + j * 4;
    char* o = dst + j * out_stride;
    size_t i = 0;
    for (; i < h4; i += 4, p += 4 * in_stride, o += 16) tile_4x4(p, in_stride, o, out_stride);
    if (i < height) tile_4x4_edge(p, in_stride, o, out_stride, 4, height - i);
  }
  if (j < width) {
    const char* p = src + j * 4;
    char* o = dst + j * out_stride;
    for (size_t i = 0; i < height; i += 4, p += 4 * in_stride, o += 16)
      tile_4x4_edge(p, in_stride, o, out_stride, width - j, height - i < 4 ? height - i : 4);
  }
}

/* Column pairs outer, rows inner, as the x32 kernel. */
void WEFT_UKERNEL(x64_transposec, 2x2)(const void* in, void* out, size_t in_stride, size_t out_stride,
                                       size_t width, size_t height) {
  const char* src = in;
  char* dst = out;
  for (size_t j = 0; j < width; j += 2) {
    size_t cols = width - j < 2 ? width - j : 2;
    const char* p = src + j * 8;
    char* o = dst + j * out_stride;
    for (size_t i = 0; i < height; i += 2, p += 2 * in_stride, o += 16) {
      size_t rows = height - i < 2 ? height - i : 2;
      if (rows == 2 && cols == 2) {
        wv128 v0 = wv_v128_load(p), v1 = wv_v128_load(p + in_stride);
        wv_v128_store(o, wv_i64x2_interleave_lo(v0, v1));
        wv_v128_store(o + out_stride, wv_i64x2_interleave_hi(v0, v1));
        continue;
      }
      const char* r1 = rows > 1 ? p + in_stride : p;
      wv128 v0 = load_cols(p, cols, 8), v1 = load_cols(r1, cols, 8);
      wv128 c[2] = {wv_i64x2_interleave_lo(v0, v1), wv_i64x2_interleave_hi(v0, v1)};
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
