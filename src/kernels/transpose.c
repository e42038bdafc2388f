/* Transposes typed by element size: out[j*out_stride + i] = in[i*in_stride + j]
 * for i < height (input rows), j < width (input columns), byte strides.
 * Each size has a register tile of one vector per row (XNNPACK
 * transposec style): x8 16x16 (four interleave rounds: 8, 16, 32, 64 bits),
 * x16 8x8 (three), x32 4x4 (two), x64 2x2 (one). All walk column strips
 * outer and rows inner (see x32). x32/x64 edges: rows past the end re-read
 * the last valid row (their lanes are never stored), columns past the end
 * come from partial loads, and partial stores write only the valid lanes.
 * x8/x16 edges go through a zeroed 256-byte tile on the stack, which costs
 * little next to the 16/8 rows a full tile moves; matrices narrower or
 * shorter than one tile (C = 3 images) keep a plain loop, which beats
 * padding every tile there. */
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

/* 16 rows of 16 bytes -> 16 columns: round r interleaves 8 << r bits,
 * merging row pairs, then quads, then octets, then halves, so after four
 * rounds each result holds one input column. Indices as in the x16 tile
 * below, with one more round. */
static inline void tile_16x16_x8(const char* p, size_t in_stride, char* o, size_t out_stride) {
  wv128 r[16], a[16], b[16], c[16];
  for (int k = 0; k < 16; k++) r[k] = wv_v128_load(p + (size_t)k * in_stride);
  for (int k = 0; k < 8; k++) {
    a[2 * k] = wv_i8x16_interleave_lo(r[2 * k], r[2 * k + 1]);
    a[2 * k + 1] = wv_i8x16_interleave_hi(r[2 * k], r[2 * k + 1]);
  }
  for (int q = 0; q < 4; q++) {
    b[4 * q] = wv_i16x8_interleave_lo(a[4 * q], a[4 * q + 2]);
    b[4 * q + 1] = wv_i16x8_interleave_hi(a[4 * q], a[4 * q + 2]);
    b[4 * q + 2] = wv_i16x8_interleave_lo(a[4 * q + 1], a[4 * q + 3]);
    b[4 * q + 3] = wv_i16x8_interleave_hi(a[4 * q + 1], a[4 * q + 3]);
  }
  for (int h = 0; h < 2; h++)
    for (int g = 0; g < 4; g++) {
      c[8 * h + 2 * g] = wv_i32x4_interleave_lo(b[8 * h + g], b[8 * h + 4 + g]);
      c[8 * h + 2 * g + 1] = wv_i32x4_interleave_hi(b[8 * h + g], b[8 * h + 4 + g]);
    }
  for (int m = 0; m < 8; m++) {
    wv_v128_store(o + (size_t)(2 * m) * out_stride, wv_i64x2_interleave_lo(c[m], c[8 + m]));
    wv_v128_store(o + (size_t)(2 * m + 1) * out_stride, wv_i64x2_interleave_hi(c[m], c[8 + m]));
  }
}

/* 8 rows of 8 halves -> 8 columns. Round 1 pairs rows (t[2k] columns 0-3,
 * t[2k+1] columns 4-7 of rows 2k, 2k+1); round 2 pairs row pairs (u[m]:
 * columns 2m, 2m+1 of rows 0-3, u[4+m] of rows 4-7); round 3 joins the
 * halves. */
static inline void tile_8x8_x16(const char* p, size_t in_stride, char* o, size_t out_stride) {
  wv128 r[8], t[8], u[8];
  for (int k = 0; k < 8; k++) r[k] = wv_v128_load(p + (size_t)k * in_stride);
  for (int k = 0; k < 4; k++) {
    t[2 * k] = wv_i16x8_interleave_lo(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = wv_i16x8_interleave_hi(r[2 * k], r[2 * k + 1]);
  }
  for (int h = 0; h < 2; h++) {
    u[4 * h] = wv_i32x4_interleave_lo(t[4 * h], t[4 * h + 2]);
    u[4 * h + 1] = wv_i32x4_interleave_hi(t[4 * h], t[4 * h + 2]);
    u[4 * h + 2] = wv_i32x4_interleave_lo(t[4 * h + 1], t[4 * h + 3]);
    u[4 * h + 3] = wv_i32x4_interleave_hi(t[4 * h + 1], t[4 * h + 3]);
  }
  for (int m = 0; m < 4; m++) {
    wv_v128_store(o + (size_t)(2 * m) * out_stride, wv_i64x2_interleave_lo(u[m], u[4 + m]));
    wv_v128_store(o + (size_t)(2 * m + 1) * out_stride, wv_i64x2_interleave_hi(u[m], u[4 + m]));
  }
}

typedef void tile_fn(const char* p, size_t in_stride, char* o, size_t out_stride);

/* A partial tile (rows x cols elements of es bytes, n = 16 / es) through a
 * zeroed stack tile, so nothing outside the matrix is read or written. */
static void tile_edge(tile_fn* tile, size_t es, const char* p, size_t in_stride, char* o, size_t out_stride,
                      size_t cols, size_t rows) {
  char in[256] = {0}, out[256];
  for (size_t i = 0; i < rows; i++) memcpy(in + i * 16, p + i * in_stride, cols * es);
  tile(in, 16, out, 16);
  for (size_t j = 0; j < cols; j++) memcpy(o + j * out_stride, out + j * 16, rows * es);
}

static void plain_transpose(size_t es, const char* in, char* out, size_t in_stride, size_t out_stride,
                            size_t width, size_t height) {
  for (size_t j = 0; j < width; j++)
    for (size_t i = 0; i < height; i++) memcpy(out + j * out_stride + i * es, in + i * in_stride + j * es, es);
}

/* Column strips of n columns outer, rows inner, as the x32 kernel. */
static void tiled_transpose(tile_fn* tile, size_t es, const char* src, char* dst, size_t in_stride,
                            size_t out_stride, size_t width, size_t height) {
  const size_t n = 16 / es;
  if (width < n || height < n) {
    plain_transpose(es, src, dst, in_stride, out_stride, width, height);
    return;
  }
  for (size_t j = 0; j < width; j += n) {
    size_t cols = width - j < n ? width - j : n;
    const char* p = src + j * es;
    char* o = dst + j * out_stride;
    size_t i = 0;
    if (cols == n)
      for (; i + n <= height; i += n, p += n * in_stride, o += 16) tile(p, in_stride, o, out_stride);
    for (; i < height; i += n, p += n * in_stride, o += 16)
      tile_edge(tile, es, p, in_stride, o, out_stride, cols, height - i < n ? height - i : n);
  }
}

void WEFT_UKERNEL(x8_transposec, 16x16)(const void* in, void* out, size_t in_stride, size_t out_stride,
                                        size_t width, size_t height) {
  tiled_transpose(tile_16x16_x8, 1, in, out, in_stride, out_stride, width, height);
}

void WEFT_UKERNEL(x16_transposec, 8x8)(const void* in, void* out, size_t in_stride, size_t out_stride,
                                       size_t width, size_t height) {
  tiled_transpose(tile_8x8_x16, 2, in, out, in_stride, out_stride, width, height);
}
