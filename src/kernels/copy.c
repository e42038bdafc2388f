/* Element-size-typed copies: contiguous (memcpy class), strided, fill. */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

/* Contiguous copies are byte copies; memcpy is the fastest one on every
 * target (wasm: memory.copy with -mbulk-memory). x == y is legal (a no-op). */
#define COPY(bits)                                                              \
  void WEFT_UKERNEL(x##bits##_copy, u64)(size_t n, const void* x, void* y) {   \
    if (x != y) memcpy(y, x, n * (bits / 8));                                   \
  }
COPY(8)
COPY(16)
COPY(32)
COPY(64)

/* Fixed-size memcpy compiles to one load and one store, without the
 * aliasing and alignment trouble of a cast pointer. */
#define COPY_STRIDED(bits)                                                               \
  void WEFT_UKERNEL(x##bits##_copy_strided, u1)(size_t n, const void* x, ptrdiff_t xs,   \
                                                void* y, ptrdiff_t ys) {                 \
    const char* src = x;                                                                 \
    char* dst = y;                                                                       \
    for (size_t i = 0; i < n; i++, src += xs, dst += ys) memcpy(dst, src, bits / 8);     \
  }
COPY_STRIDED(8)
COPY_STRIDED(16)
COPY_STRIDED(64)

/* 4 bytes a gather of 2, 3 or 4 elements stride reads into a unit-stride
 * row (one channel of an interleaved image, a CHW view of HWC): whole
 * vectors loaded and shuffled instead of one element at a time. The loads
 * also read the other channels in between, never past the row's last
 * element (hence i + 5 <= n). ThreadSanitizer would see those unused reads
 * race with a thread writing another channel, so its builds take the
 * element loop. Returns how many elements it copied. */
#if defined(__SANITIZE_THREAD__)
#define WEFT_GATHER_VECTORS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WEFT_GATHER_VECTORS 0
#endif
#endif
#ifndef WEFT_GATHER_VECTORS
#define WEFT_GATHER_VECTORS 1
#endif

static size_t gather32(size_t n, const char* x, ptrdiff_t xs, char* y) {
  size_t i = 0;
  if (!WEFT_GATHER_VECTORS) return 0;
  if (xs == 8) {
    for (; i + 5 <= n; i += 4, x += 32, y += 16) wv_v128_store(y, wv_i32x4_even(wv_v128_load(x), wv_v128_load(x + 16)));
  } else if (xs == 12) {
    for (; i + 5 <= n; i += 4, x += 48, y += 16)
      wv_v128_store(y, wv_i32x4_every3(wv_v128_load(x), wv_v128_load(x + 16), wv_v128_load(x + 32)));
  } else if (xs == 16) {
    for (; i + 5 <= n; i += 4, x += 64, y += 16) {
      wv128 lo = wv_i32x4_even(wv_v128_load(x), wv_v128_load(x + 16));
      wv128 hi = wv_i32x4_even(wv_v128_load(x + 32), wv_v128_load(x + 48));
      wv_v128_store(y, wv_i32x4_even(lo, hi));
    }
  }
  return i;
}

void WEFT_UKERNEL(x32_copy_strided, u1)(size_t n, const void* x, ptrdiff_t xs, void* y, ptrdiff_t ys) {
  const char* src = x;
  char* dst = y;
  size_t i = ys == 4 ? gather32(n, src, xs, dst) : 0;
  src += (ptrdiff_t)i * xs;
  dst += (ptrdiff_t)i * ys;
  for (; i < n; i++, src += xs, dst += ys) memcpy(dst, src, 4);
}

/* Four elements of each of c rows (2..4) stored interleaved at out. */
static inline void store_interleaved(size_t c, wv128 va, wv128 vb, wv128 vd, wv128 ve, char* out) {
  wv128 v[4];
  wv_i32x4_zip(c, va, vb, vd, ve, v);
  for (size_t k = 0; k < c; k++) wv_v128_store(out + 16 * k, v[k]);
}

/* 2, 3 or 4 rows of 4-byte elements stored interleaved (the C channels of
 * an HWC image computed channel by channel): 4 elements of each row a turn,
 * shuffled into C whole vectors; one element at a time for the rest. */
void WEFT_UKERNEL(x32_interleave, u4)(size_t n, size_t c, const void* const* x, void* y) {
  const char* a = x[0];
  const char* b = x[1];
  const char* d = c > 2 ? x[2] : NULL;
  const char* e = c > 3 ? x[3] : NULL;
  char* out = y;
  size_t i = 0;
  wv128 zero = wv_i32x4_splat(0);
  for (; i + 4 <= n; i += 4, out += 16 * c)
    store_interleaved(c, wv_v128_load(a + 4 * i), wv_v128_load(b + 4 * i), d ? wv_v128_load(d + 4 * i) : zero,
                      e ? wv_v128_load(e + 4 * i) : zero, out);
  for (; i < n; i++)
    for (size_t j = 0; j < c; j++, out += 4) memcpy(out, (const char*)x[j] + 4 * i, 4);
}

/* The first cout channels of each pixel (a narrowed HWC image's CHW view):
 * per 4 pixels the cin vectors they span, shuffled straight into the cout
 * vectors of the kept channels (2 of 3: two shuffles per 8 elements; 2 of
 * 4: one per 4; 3 of 4: three per 12). The loads read the dropped channels
 * too, never past the kept channels of the pixel after the four (hence
 * i + 5 <= n). Returns how many pixels it copied. */
static size_t pick_vectors(size_t n, size_t cin, size_t cout, const char* x, char* y) {
  size_t i = 0;
  if (!WEFT_GATHER_VECTORS) return 0;
  if (cin == 3 && cout == 2) {
    for (; i + 5 <= n; i += 4, x += 48, y += 32) {
      wv128 p1 = wv_v128_load(x + 16);
      wv_v128_store(y, wv_i32x4_pick2of3_lo(wv_v128_load(x), p1));
      wv_v128_store(y + 16, wv_i32x4_pick2of3_hi(p1, wv_v128_load(x + 32)));
    }
  } else if (cin == 4 && cout == 2) {
    for (; i + 5 <= n; i += 4, x += 64, y += 32) {
      wv_v128_store(y, wv_i64x2_interleave_lo(wv_v128_load(x), wv_v128_load(x + 16)));
      wv_v128_store(y + 16, wv_i64x2_interleave_lo(wv_v128_load(x + 32), wv_v128_load(x + 48)));
    }
  } else if (cin == 4 && cout == 3) {
    for (; i + 5 <= n; i += 4, x += 64, y += 48) {
      wv128 p1 = wv_v128_load(x + 16), p2 = wv_v128_load(x + 32);
      wv_v128_store(y, wv_i32x4_pick3of4_0(wv_v128_load(x), p1));
      wv_v128_store(y + 16, wv_i32x4_pick3of4_1(p1, p2));
      wv_v128_store(y + 32, wv_i32x4_pick3of4_2(p2, wv_v128_load(x + 48)));
    }
  }
  return i;
}

void WEFT_UKERNEL(x32_pick, u4)(size_t n, size_t cin, size_t cout, const void* x, void* y) {
  size_t i = pick_vectors(n, cin, cout, x, y);
  const char* src = (const char*)x + 4 * cin * i;
  char* out = (char*)y + 4 * cout * i;
  /* fixed-size copies compile to moves, not a call per pixel */
  for (; i < n; i++, src += 4 * cin, out += 4 * cout) {
    if (cout == 2) memcpy(out, src, 8);
    else if (cout == 3) memcpy(out, src, 12);
    else memcpy(out, src, 4 * cout);
  }
}

/* One 16-byte pattern of the element repeated, stored 64 bytes a turn. */
static inline void fill_pattern(size_t nbytes, wv128 v, char* y) {
  for (; nbytes >= 64; nbytes -= 64, y += 64) {
    wv_v128_store(y, v);
    wv_v128_store(y + 16, v);
    wv_v128_store(y + 32, v);
    wv_v128_store(y + 48, v);
  }
  for (; nbytes >= 16; nbytes -= 16, y += 16) wv_v128_store(y, v);
  if (nbytes) wv_v128_store_partial(y, v, nbytes);
}

#define FILL(bits, T, splat)                                                      \
  void WEFT_UKERNEL(x##bits##_fill, u64)(size_t n, const void* value, void* y) {  \
    T v;                                                                          \
    memcpy(&v, value, sizeof v);                                                  \
    fill_pattern(n * sizeof v, splat(v), y);                                      \
  }
FILL(8, int8_t, wv_i8x16_splat)
FILL(16, int16_t, wv_i16x8_splat)
FILL(32, int32_t, wv_i32x4_splat)
FILL(64, int64_t, wv_i64x2_splat)
