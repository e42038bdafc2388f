/* f32 unary kernels: the arithmetic and rounding ones (round is
 * half-to-even, torch.round). The transcendental ones are in vunary_math.c. */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

#define OP_vneg(v) wv_f32x4_neg(v)
#define OP_vabs(v) wv_f32x4_abs(v)
#define OP_vsqrt(v) wv_f32x4_sqrt(v)
#define OP_vrelu(v) wv_f32x4_max(v, wv_v128_zero())
#define OP_vfloor(v) wv_f32x4_floor(v)
#define OP_vceil(v) wv_f32x4_ceil(v)
#define OP_vtrunc(v) wv_f32x4_trunc(v)
#define OP_vround(v) wv_f32x4_nearest(v)
#define OP_vrecip(v) wv_f32x4_div(wv_f32x4_splat(1.0f), v)
#define OP_vrsqrt(v) wv_f32x4_div(wv_f32x4_splat(1.0f), wv_f32x4_sqrt(v))

#define VUNARY(op)                                                                                  \
  void WEFT_UKERNEL(f32_##op, u8)(size_t n, const float* x, float* y,                               \
                                  const struct weft_f32_unary_params* p) {                          \
    for (; n >= 8; n -= 8, x += 8, y += 8) {                                                        \
      wv128 r0 = OP_##op(wv_v128_load(x)), r1 = OP_##op(wv_v128_load(x + 4));                       \
      wv_v128_store(y, r0);                                                                         \
      wv_v128_store(y + 4, r1);                                                                     \
    }                                                                                               \
    if (n >= 4) {                                                                                   \
      wv_v128_store(y, OP_##op(wv_v128_load(x)));                                                   \
      n -= 4, x += 4, y += 4;                                                                       \
    }                                                                                               \
    if (n) wv_v128_store_partial(y, OP_##op(wv_v128_load_partial(x, n * 4)), n * 4);                \
  }
VUNARY(vneg)
VUNARY(vabs)
VUNARY(vsqrt)
VUNARY(vrelu)
VUNARY(vfloor)
VUNARY(vceil)
VUNARY(vtrunc)
VUNARY(vround)
VUNARY(vrecip)
VUNARY(vrsqrt)
