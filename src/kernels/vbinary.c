/* f32 elementwise binary kernels: y = a op b, and the ...c forms where b is
 * one scalar (b[0], a stride-0 operand). add/sub take alpha as PyTorch's
 * add(a, b, alpha=) does: a + alpha * b (not fused). Loop: two vectors a
 * turn, then one, then a partial-load / partial-store tail; y may alias a
 * or b exactly. max/min propagate NaN (torch.maximum / minimum). */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

#define OP_vadd(va, vb) wv_f32x4_add(va, wv_f32x4_mul(valpha, vb))
#define OP_vsub(va, vb) wv_f32x4_sub(va, wv_f32x4_mul(valpha, vb))
#define OP_vmul(va, vb) wv_f32x4_mul(va, vb)
#define OP_vdiv(va, vb) wv_f32x4_div(va, vb)
#define OP_vmax(va, vb) wv_f32x4_max(va, vb)
#define OP_vmin(va, vb) wv_f32x4_min(va, vb)
/* reversed scalar forms: the scalar is the left operand */
#define OP_vradd(va, vb) wv_f32x4_add(vb, wv_f32x4_mul(valpha, va))
#define OP_vrsub(va, vb) wv_f32x4_sub(vb, wv_f32x4_mul(valpha, va))
#define OP_vrdiv(va, vb) wv_f32x4_div(vb, va)

#define VBINARY(op)                                                                                  \
  void WEFT_UKERNEL(f32_##op, u8)(size_t n, const float* a, const float* b, float* y,                \
                                  const struct weft_f32_binary_params* p) {                          \
    const wv128 valpha = wv_f32x4_splat(p ? p->alpha : 1.0f);                                        \
    (void)valpha;                                                                                    \
    for (; n >= 8; n -= 8, a += 8, b += 8, y += 8) {                                                 \
      wv128 r0 = OP_##op(wv_v128_load(a), wv_v128_load(b));                                          \
      wv128 r1 = OP_##op(wv_v128_load(a + 4), wv_v128_load(b + 4));                                  \
      wv_v128_store(y, r0);                                                                          \
      wv_v128_store(y + 4, r1);                                                                      \
    }                                                                                                \
    if (n >= 4) {                                                                                    \
      wv_v128_store(y, OP_##op(wv_v128_load(a), wv_v128_load(b)));                                   \
      n -= 4, a += 4, b += 4, y += 4;                                                                \
    }                                                                                                \
    if (n) wv_v128_store_partial(y, OP_##op(wv_v128_load_partial(a, n * 4), wv_v128_load_partial(b, n * 4)), n * 4); \
  }

#define VBINARYC(name, op)                                                                           \
  void WEFT_UKERNEL(f32_##name, u8)(size_t n, const float* a, const float* b, float* y,              \
                                    const struct weft_f32_binary_params* p) {                        \
    const wv128 valpha = wv_f32x4_splat(p ? p->alpha : 1.0f);                                        \
    const wv128 vb = wv_f32x4_splat(b[0]);                                                           \
    (void)valpha;                                                                                    \
    for (; n >= 8; n -= 8, a += 8, y += 8) {                                                         \
      wv128 r0 = OP_##op(wv_v128_load(a), vb);                                                       \
      wv128 r1 = OP_##op(wv_v128_load(a + 4), vb);                                                   \
      wv_v128_store(y, r0);                                                                          \
      wv_v128_store(y + 4, r1);                                                                      \
    }                                                                                                \
    if (n >= 4) {                                                                                    \
      wv_v128_store(y, OP_##op(wv_v128_load(a), vb));                                                \
      n -= 4, a += 4, y += 4;                                                                        \
    }                                                                                                \
    if (n) wv_v128_store_partial(y, OP_##op(wv_v128_load_partial(a, n * 4), vb), n * 4);             \
  }

VBINARY(vadd)
VBINARY(vsub)
VBINARY(vmul)
VBINARY(vdiv)
VBINARY(vmax)
VBINARY(vmin)
VBINARYC(vaddc, vadd)
VBINARYC(vsubc, vsub)
VBINARYC(vmulc, vmul)
VBINARYC(vdivc, vdiv)
VBINARYC(vmaxc, vmax)
VBINARYC(vminc, vmin)
VBINARYC(vraddc, vradd)
VBINARYC(vrsubc, vrsub)
VBINARYC(vrdivc, vrdiv)
