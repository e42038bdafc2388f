/* f32 comparisons to bool bytes (0/1): 16 lanes a turn narrowed to one
 * 16-byte store; the tail goes through zero-padded buffers. NaN compares
 * false except for ne, as IEEE says. */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

static inline wv128 cmp16(wv128 (*op)(wv128, wv128), const float* a, const float* b, size_t bstep) {
  return wv_u8x16_bool_from_masks(op(wv_v128_load(a), wv_v128_load(b)),
                                  op(wv_v128_load(a + 4), wv_v128_load(b + 4 * bstep)),
                                  op(wv_v128_load(a + 8), wv_v128_load(b + 8 * bstep)),
                                  op(wv_v128_load(a + 12), wv_v128_load(b + 12 * bstep)));
}

/* bstep 1: b is an array; 0: b[0] splat (loads of b read b[0..3], so the
 * scalar form copies b[0] into a 4-lane buffer first) */
static inline void vcmp(wv128 (*op)(wv128, wv128), size_t n, const float* a, const float* b, uint8_t* y,
                        size_t bstep) {
  float bs[4] = {b[0], b[0], b[0], b[0]};
  const float* bp = bstep ? b : bs;
  for (; n >= 16; n -= 16, a += 16, bp += 16 * bstep, y += 16) wv_v128_store(y, cmp16(op, a, bp, bstep));
  if (n) {
    float ta[16] = {0}, tb[16] = {0};
    memcpy(ta, a, n * 4);
    if (bstep)
      memcpy(tb, bp, n * 4);
    else
      memcpy(tb, bs, 16);
    wv_v128_store_partial(y, cmp16(op, ta, tb, bstep), n);
  }
}

#define VCMP(name)                                                                                  \
  void WEFT_UKERNEL(f32_v##name, u16)(size_t n, const float* a, const float* b, uint8_t* y) {        \
    vcmp(wv_f32x4_##name, n, a, b, y, 1);                                                           \
  }                                                                                                 \
  void WEFT_UKERNEL(f32_v##name##c, u16)(size_t n, const float* a, const float* b, uint8_t* y) {     \
    vcmp(wv_f32x4_##name, n, a, b, y, 0);                                                           \
  }
VCMP(eq)
VCMP(ne)
VCMP(lt)
VCMP(le)
VCMP(gt)
VCMP(ge)
