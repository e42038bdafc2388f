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

/* The ..._zip forms: y[i*c + j] = a[i*c + j] op b[j][i], i < n pixels, j <
 * c (2..4) channels. a and y interleave the channels (an HWC image seen as
 * CHW); b is c unit-stride planes (a CHW tensor beside it), interleaved on
 * the fly 4 pixels at a time, so the op needs no buffer and no second pass.
 * Each lane is computed as the plain form computes it (same bits). The last
 * n % 4 pixels go through a zeroed stack vector. y may alias a exactly. */
#define VBINARY_ZIP(op)                                                                              \
  static inline void op##_zip_c(size_t c, size_t n, const float* a, const float* const* b, float* y, \
                                wv128 valpha) {                                                      \
    (void)valpha;                                                                                    \
    const float *b0 = b[0], *b1 = b[1], *b2 = b[c > 2 ? 2 : 1], *b3 = b[c > 3 ? 3 : 1];              \
    size_t i = 0;                                                                                    \
    for (; i + 4 <= n; i += 4, a += 4 * c, y += 4 * c) {                                             \
      wv128 v[4];                                                                                    \
      wv_i32x4_zip(c, wv_v128_load(b0 + i), wv_v128_load(b1 + i), wv_v128_load(b2 + i),              \
                   wv_v128_load(b3 + i), v);                                                         \
      for (size_t k = 0; k < c; k++) wv_v128_store(y + 4 * k, OP_##op(wv_v128_load(a + 4 * k), v[k])); \
    }                                                                                                \
    _Alignas(16) float t[16] = {0};                                                                  \
    size_t m = (n - i) * c;                                                                          \
    for (size_t q = 0; q < n - i; q++)                                                               \
      for (size_t j = 0; j < c; j++) t[q * c + j] = b[j][i + q];                                     \
    for (size_t k = 0; k < m; k += 4) {                                                              \
      size_t e = (m - k < 4 ? m - k : 4) * 4;                                                        \
      wv_v128_store_partial(y + k, OP_##op(wv_v128_load_partial(a + k, e), wv_v128_load(t + k)), e); \
    }                                                                                                \
  }                                                                                                  \
  void WEFT_UKERNEL(f32_##op##_zip, u4)(size_t n, size_t c, const float* a, const float* const* b,   \
                                        float* y, const struct weft_f32_binary_params* p) {         \
    const wv128 valpha = wv_f32x4_splat(p ? p->alpha : 1.0f);                                        \
    /* a constant c per call: each loop compiles with its own shuffles */                           \
    if (c == 2) op##_zip_c(2, n, a, b, y, valpha);                                                   \
    else if (c == 3) op##_zip_c(3, n, a, b, y, valpha);                                              \
    else op##_zip_c(4, n, a, b, y, valpha);                                                          \
  }

/* The ..._unzip forms, the other way round: y[j][i] = a[j][i] op b[i*c + j].
 * a and y are c planes (a CHW tensor and the CHW result), b interleaves the
 * channels (an HWC image seen as CHW) and is de-interleaved on the fly. y[j]
 * may alias a[j] exactly. */
#define VBINARY_UNZIP(op)                                                                            \
  static inline void op##_unzip_c(size_t c, size_t n, const float* const* a, const float* b,         \
                                  float* const* y, wv128 valpha) {                                   \
    (void)valpha;                                                                                    \
    /* the plane pointers in locals: a store through y cannot change them */                        \
    const float* ap[4];                                                                              \
    float* yp[4];                                                                                    \
    for (size_t j = 0; j < c; j++) ap[j] = a[j], yp[j] = y[j];                                       \
    size_t i = 0;                                                                                    \
    for (; i + 4 + (c == 3) <= n; i += 4, b += 4 * c) {                                              \
      wv128 v[4];                                                                                    \
      wv_i32x4_unzip(c, b, v);                                                                       \
      for (size_t j = 0; j < c; j++) wv_v128_store(yp[j] + i, OP_##op(wv_v128_load(ap[j] + i), v[j])); \
    }                                                                                                \
    for (; i < n; i += 4, b += 4 * c) {                                                              \
      size_t r = n - i < 4 ? n - i : 4;                                                              \
      for (size_t j = 0; j < c; j++) {                                                               \
        _Alignas(16) float t[4] = {0};                                                               \
        for (size_t q = 0; q < r; q++) t[q] = b[q * c + j];                                          \
        wv_v128_store_partial(yp[j] + i, OP_##op(wv_v128_load_partial(ap[j] + i, r * 4), wv_v128_load(t)), r * 4); \
      }                                                                                              \
    }                                                                                                \
  }                                                                                                  \
  void WEFT_UKERNEL(f32_##op##_unzip, u4)(size_t n, size_t c, const float* const* a, const float* b, \
                                          float* const* y, const struct weft_f32_binary_params* p) { \
    const wv128 valpha = wv_f32x4_splat(p ? p->alpha : 1.0f);                                        \
    if (c == 2) op##_unzip_c(2, n, a, b, y, valpha);                                                 \
    else if (c == 3) op##_unzip_c(3, n, a, b, y, valpha);                                            \
    else op##_unzip_c(4, n, a, b, y, valpha);                                                        \
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
VBINARY_ZIP(vadd)
VBINARY_ZIP(vsub)
VBINARY_ZIP(vmul)
VBINARY_ZIP(vdiv)
VBINARY_ZIP(vmax)
VBINARY_ZIP(vmin)
VBINARY_UNZIP(vadd)
VBINARY_UNZIP(vsub)
VBINARY_UNZIP(vmul)
VBINARY_UNZIP(vdiv)
VBINARY_UNZIP(vmax)
VBINARY_UNZIP(vmin)
