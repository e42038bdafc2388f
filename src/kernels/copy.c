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
COPY_STRIDED(32)
COPY_STRIDED(64)

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
