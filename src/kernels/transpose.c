/* Transposes typed by element size: out[j*out_stride + i] = in[i*in_stride + j]
 * for i < height (input rows), j < width (input columns), byte strides.
 * Each size has a register tile of one vector per row (XNNPACK
 * transposec style): x16 8x8 (three interleave rounds: 16, 32, 64 bits),
 * x8 16x16 (one byte round, then two x16 8x8 transposes), x32 4x4 (two),
 * x64 2x2 (one). All walk column strips outer and rows inner (see x32). x32/x64 edges: rows past the end re-read
 * the last valid row (their lanes are never stored), columns past the end
 * come from partial loads, and partial stores write only the valid lanes.
 * x8/x16 edges go through a zeroed 256-byte tile on the stack, which costs
 * little next to the 16/8 rows a full tile moves. Matrices narrower or
 * shorter than one tile (the C = 3 or 4 of an image's pixels) take a
 * typed loop instead (thin_*), which beats padding every tile there. */
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

/* Thin matrices: the long dimension outer, the short one (1-4 unrolled by
 * constant propagation) inner, so one side is one sequential stream and the
 * other a few: an RGB(A) image is deinterleaved in one pass over it. */
#define THIN_TRANSPOSE(T)                                                                                   \
  static inline void thin_rows_##T(const char* in, char* out, size_t is, size_t os, size_t w, size_t h) {   \
    for (size_t i = 0; i < h; i++)                                                                          \
      for (size_t j = 0; j < w; j++) memcpy(out + j * os + i * sizeof(T), in + i * is + j * sizeof(T), sizeof(T)); \
  }                                                                                                         \
  static inline void thin_cols_##T(const char* in, char* out, size_t is, size_t os, size_t w, size_t h) {   \
    for (size_t j = 0; j < w; j++)                                                                          \
      for (size_t i = 0; i < h; i++) memcpy(out + j * os + i * sizeof(T), in + i * is + j * sizeof(T), sizeof(T)); \
  }                                                                                                         \
  static void thin_##T(const char* in, char* out, size_t is, size_t os, size_t w, size_t h) {              \
    if (w <= h) {                                                                                           \
      switch (w) {                                                                                          \
        case 1: thin_rows_##T(in, out, is, os, 1, h); return;                                               \
        case 2: thin_rows_##T(in, out, is, os, 2, h); return;                                               \
        case 3: thin_rows_##T(in, out, is, os, 3, h); return;                                               \
        case 4: thin_rows_##T(in, out, is, os, 4, h); return;                                               \
        default: thin_rows_##T(in, out, is, os, w, h); return;                                              \
      }                                                                                                     \
    }                                                                                                       \
    switch (h) {                                                                                            \
      case 1: thin_cols_##T(in, out, is, os, w, 1); return;                                                 \
      case 2: thin_cols_##T(in, out, is, os, w, 2); return;                                                 \
      case 3: thin_cols_##T(in, out, is, os, w, 3); return;                                                 \
      case 4: thin_cols_##T(in, out, is, os, w, 4); return;                                                 \
      default: thin_cols_##T(in, out, is, os, w, h); return;                                                \
    }                                                                                                       \
  }
THIN_TRANSPOSE(uint8_t)
THIN_TRANSPOSE(uint16_t)
THIN_TRANSPOSE(uint32_t)
THIN_TRANSPOSE(uint64_t)

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
  if (width < 4 || height < 4) {
    thin_uint32_t(in, out, in_stride, out_stride, width, height);
    return;
  }
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
  if (width < 2 || height < 2) {
    thin_uint64_t(in, out, in_stride, out_stride, width, height);
    return;
  }
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

/* An 8x8 matrix of 16-bit elements in registers, row k in r[k], to
 * col[m] = column m. Round 1 pairs rows (t[2k] columns 0-3, t[2k+1]
 * columns 4-7 of rows 2k, 2k+1); round 2 pairs row pairs (u[m]: columns
 * 2m, 2m+1 of rows 0-3, u[4+m] of rows 4-7); round 3 joins the halves. */
static inline void transpose_8x8_x16(const wv128 r[8], wv128 col[8]) {
  wv128 t[8], u[8];
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
    col[2 * m] = wv_i64x2_interleave_lo(u[m], u[4 + m]);
    col[2 * m + 1] = wv_i64x2_interleave_hi(u[m], u[4 + m]);
  }
}

static inline void tile_8x8_x16(const char* p, size_t in_stride, char* o, size_t out_stride) {
  wv128 r[8], col[8];
  for (int k = 0; k < 8; k++) r[k] = wv_v128_load(p + (size_t)k * in_stride);
  transpose_8x8_x16(r, col);
  for (int m = 0; m < 8; m++) wv_v128_store(o + (size_t)m * out_stride, col[m]);
}

/* 16 rows of 16 bytes: interleaving the bytes of rows 2k and 2k+1 gives
 * 16-bit units (row 2k, row 2k+1) for columns 0-7 (lo) and 8-15 (hi); each
 * half is an 8x8 matrix of those units, whose column j is input column j
 * from row 0 to 15, in order. */
static inline void tile_16x16_x8(const char* p, size_t in_stride, char* o, size_t out_stride) {
  wv128 lo[8], hi[8], col[8];
  for (int k = 0; k < 8; k++) {
    wv128 a = wv_v128_load(p + (size_t)(2 * k) * in_stride), b = wv_v128_load(p + (size_t)(2 * k + 1) * in_stride);
    lo[k] = wv_i8x16_interleave_lo(a, b);
    hi[k] = wv_i8x16_interleave_hi(a, b);
  }
  transpose_8x8_x16(lo, col);
  for (int m = 0; m < 8; m++) wv_v128_store(o + (size_t)m * out_stride, col[m]);
  transpose_8x8_x16(hi, col);
  for (int m = 0; m < 8; m++) wv_v128_store(o + (size_t)(8 + m) * out_stride, col[m]);
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

/* Column strips of n columns outer, rows inner, as the x32 kernel. */
static void tiled_transpose(tile_fn* tile, size_t es, const char* src, char* dst, size_t in_stride,
                            size_t out_stride, size_t width, size_t height) {
  const size_t n = 16 / es;
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

/* Packed 3- or 4-byte pixels (an RGB(A) uint8 image) to and from planes,
 * 16 pixels a turn. Four channels: the 16x4 byte matrix unzips in four
 * rounds of byte interleaves (each round pairs vector k with k + 2), and
 * zips back in two. Three channels: each plane gathers its bytes from the
 * three source vectors by swizzles (index >= 16 gives 0) and ORs them. */
static const uint8_t rgb_to_plane[3][3][16] = {
    {{0, 3, 6, 9, 12, 15, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128}, {128, 128, 128, 128, 128, 128, 2, 5, 8, 11, 14, 128, 128, 128, 128, 128}, {128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 1, 4, 7, 10, 13}},
    {{1, 4, 7, 10, 13, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128}, {128, 128, 128, 128, 128, 0, 3, 6, 9, 12, 15, 128, 128, 128, 128, 128}, {128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 2, 5, 8, 11, 14}},
    {{2, 5, 8, 11, 14, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128}, {128, 128, 128, 128, 128, 1, 4, 7, 10, 13, 128, 128, 128, 128, 128, 128}, {128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 0, 3, 6, 9, 12, 15}},
};
static const uint8_t plane_to_rgb[3][3][16] = {
    {{0, 128, 128, 1, 128, 128, 2, 128, 128, 3, 128, 128, 4, 128, 128, 5}, {128, 0, 128, 128, 1, 128, 128, 2, 128, 128, 3, 128, 128, 4, 128, 128}, {128, 128, 0, 128, 128, 1, 128, 128, 2, 128, 128, 3, 128, 128, 4, 128}},
    {{128, 128, 6, 128, 128, 7, 128, 128, 8, 128, 128, 9, 128, 128, 10, 128}, {5, 128, 128, 6, 128, 128, 7, 128, 128, 8, 128, 128, 9, 128, 128, 10}, {128, 5, 128, 128, 6, 128, 128, 7, 128, 128, 8, 128, 128, 9, 128, 128}},
    {{128, 11, 128, 128, 12, 128, 128, 13, 128, 128, 14, 128, 128, 15, 128, 128}, {128, 128, 11, 128, 128, 12, 128, 128, 13, 128, 128, 14, 128, 128, 15, 128}, {10, 128, 128, 11, 128, 128, 12, 128, 128, 13, 128, 128, 14, 128, 128, 15}},
};

static size_t pixels_to_planes_x8(const uint8_t* in, uint8_t* out, size_t os, size_t channels, size_t npix) {
  size_t i = 0;
  if (channels == 4) {
    for (; i + 16 <= npix; i += 16, in += 64) {
      wv128 v[4], a[4];
      for (int k = 0; k < 4; k++) v[k] = wv_v128_load(in + 16 * k);
      for (int round = 0; round < 4; round++) {
        a[0] = wv_i8x16_interleave_lo(v[0], v[2]), a[1] = wv_i8x16_interleave_hi(v[0], v[2]);
        a[2] = wv_i8x16_interleave_lo(v[1], v[3]), a[3] = wv_i8x16_interleave_hi(v[1], v[3]);
        for (int k = 0; k < 4; k++) v[k] = a[k];
      }
      for (int c = 0; c < 4; c++) wv_v128_store(out + c * os + i, v[c]);
    }
  } else {
    for (; i + 16 <= npix; i += 16, in += 48) {
      wv128 v0 = wv_v128_load(in), v1 = wv_v128_load(in + 16), v2 = wv_v128_load(in + 32);
      for (int c = 0; c < 3; c++) {
        wv128 p = wv_v128_or(wv_i8x16_swizzle(v0, wv_v128_load(rgb_to_plane[c][0])),
                             wv_i8x16_swizzle(v1, wv_v128_load(rgb_to_plane[c][1])));
        wv_v128_store(out + c * os + i, wv_v128_or(p, wv_i8x16_swizzle(v2, wv_v128_load(rgb_to_plane[c][2]))));
      }
    }
  }
  return i;
}

static size_t planes_to_pixels_x8(const uint8_t* in, size_t is, uint8_t* out, size_t channels, size_t npix) {
  size_t j = 0;
  if (channels == 4) {
    for (; j + 16 <= npix; j += 16, out += 64) {
      wv128 r = wv_v128_load(in + j), g = wv_v128_load(in + is + j);
      wv128 b = wv_v128_load(in + 2 * is + j), a = wv_v128_load(in + 3 * is + j);
      wv128 rg0 = wv_i8x16_interleave_lo(r, g), rg1 = wv_i8x16_interleave_hi(r, g);
      wv128 ba0 = wv_i8x16_interleave_lo(b, a), ba1 = wv_i8x16_interleave_hi(b, a);
      wv_v128_store(out, wv_i16x8_interleave_lo(rg0, ba0));
      wv_v128_store(out + 16, wv_i16x8_interleave_hi(rg0, ba0));
      wv_v128_store(out + 32, wv_i16x8_interleave_lo(rg1, ba1));
      wv_v128_store(out + 48, wv_i16x8_interleave_hi(rg1, ba1));
    }
  } else {
    for (; j + 16 <= npix; j += 16, out += 48) {
      wv128 p[3] = {wv_v128_load(in + j), wv_v128_load(in + is + j), wv_v128_load(in + 2 * is + j)};
      for (int o = 0; o < 3; o++) {
        wv128 q = wv_v128_or(wv_i8x16_swizzle(p[0], wv_v128_load(plane_to_rgb[o][0])),
                             wv_i8x16_swizzle(p[1], wv_v128_load(plane_to_rgb[o][1])));
        wv_v128_store(out + 16 * o, wv_v128_or(q, wv_i8x16_swizzle(p[2], wv_v128_load(plane_to_rgb[o][2]))));
      }
    }
  }
  return j;
}

void WEFT_UKERNEL(x8_transposec, 16x16)(const void* in, void* out, size_t in_stride, size_t out_stride,
                                        size_t width, size_t height) {
  const uint8_t* src = in;
  uint8_t* dst = out;
  if ((width == 3 || width == 4) && in_stride == width) { /* pixels -> planes */
    size_t done = pixels_to_planes_x8(src, dst, out_stride, width, height);
    thin_uint8_t((const char*)src + done * in_stride, (char*)dst + done, in_stride, out_stride, width, height - done);
  } else if ((height == 3 || height == 4) && out_stride == height) { /* planes -> pixels */
    size_t done = planes_to_pixels_x8(src, in_stride, dst, height, width);
    thin_uint8_t((const char*)src + done, (char*)dst + done * out_stride, in_stride, out_stride, width - done, height);
  } else if (width < 16 || height < 16) {
    thin_uint8_t(in, out, in_stride, out_stride, width, height);
  } else {
    tiled_transpose(tile_16x16_x8, 1, in, out, in_stride, out_stride, width, height);
  }
}

void WEFT_UKERNEL(x16_transposec, 8x8)(const void* in, void* out, size_t in_stride, size_t out_stride,
                                       size_t width, size_t height) {
  if (width < 8 || height < 8)
    thin_uint16_t(in, out, in_stride, out_stride, width, height);
  else
    tiled_transpose(tile_8x8_x16, 2, in, out, in_stride, out_stride, width, height);
}
