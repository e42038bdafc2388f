/* f32 unary kernels: the arithmetic and rounding ones (round is
 * half-to-even, torch.round). The transcendental ones are in vunary_math.c. */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

#define OP_vneg(v) wv_f32x4_neg(v)
#define OP_vabs(v) wv_f32x4_abs(v)
#define OP_vsqrt(v) wv_f32x4_sqrt(v)
/* relu: x < 0 ? 0 : x, as PyTorch's clamp_min (NaN and -0 kept); pmax, not f32x4.max, which gives +0 for -0 */
#define OP_vrelu(v) wv_f32x4_pmax(v, wv_v128_zero())
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

/* ---- activations with parameters (PyTorch's scalar formulas, same order of
 * operations, so the plain-C rows give the same bits) ---- */
/* hardtanh / relu6: clamp(x, a, b) as std::min(std::max(x, a), b), which
 * keeps NaN and -0 where x passes, as PyTorch's clamp does (wv_f32x4_clamp) */
#define OPP_vhardtanh(v) wv_f32x4_clamp(v, A, B)
/* leaky_relu: x > 0 ? x : x * a */
#define OPP_vleaky_relu(v) wv_v128_bitselect(v, wv_f32x4_mul(v, A), wv_f32x4_gt(v, Z))
/* hardsigmoid: min(max(x + 3, 0), 6) / 6; hardswish: x times that */
#define ACT_HS(v) wv_f32x4_clamp(wv_f32x4_add(v, THREE), Z, SIX)
#define OPP_vhardsigmoid(v) wv_f32x4_div(ACT_HS(v), SIX)
#define OPP_vhardswish(v) wv_f32x4_div(wv_f32x4_mul(v, ACT_HS(v)), SIX)

#define VUNARY_P(op)                                                                                \
  void WEFT_UKERNEL(f32_##op, u8)(size_t n, const float* x, float* y,                               \
                                  const struct weft_f32_unary_params* p) {                          \
    const wv128 A = wv_f32x4_splat(p ? p->a : 0.0f), B = wv_f32x4_splat(p ? p->b : 0.0f);           \
    const wv128 Z = wv_v128_zero(), THREE = wv_f32x4_splat(3.0f), SIX = wv_f32x4_splat(6.0f);       \
    (void)A, (void)B, (void)Z, (void)THREE, (void)SIX;                                              \
    for (; n >= 8; n -= 8, x += 8, y += 8) {                                                        \
      wv128 v0 = wv_v128_load(x), v1 = wv_v128_load(x + 4);                                         \
      wv_v128_store(y, OPP_##op(v0));                                                               \
      wv_v128_store(y + 4, OPP_##op(v1));                                                           \
    }                                                                                               \
    if (n >= 4) {                                                                                   \
      wv128 v = wv_v128_load(x);                                                                    \
      wv_v128_store(y, OPP_##op(v));                                                                \
      n -= 4, x += 4, y += 4;                                                                       \
    }                                                                                               \
    if (n) {                                                                                        \
      wv128 v = wv_v128_load_partial(x, n * 4);                                                     \
      wv_v128_store_partial(y, OPP_##op(v), n * 4);                                                 \
    }                                                                                               \
  }
VUNARY_P(vhardtanh)
VUNARY_P(vleaky_relu)
VUNARY_P(vhardsigmoid)
VUNARY_P(vhardswish)
