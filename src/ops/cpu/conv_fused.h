/* The conv2d drivers with an epilogue and a weight packed ahead of time
 * (src/ops/cpu/conv.c): inference's fused convolution, _conv2d_fused. */
#ifndef WEFT_OPS_CPU_CONV_FUSED_H
#define WEFT_OPS_CPU_CONV_FUSED_H

#include "ops/cpu/conv.h"

/* The activation a fused convolution applies last. */
typedef enum {
  WEFT_CONV_ACT_NONE,
  WEFT_CONV_ACT_RELU,  /* max(v, 0) */
  WEFT_CONV_ACT_RELU6, /* min(max(v, 0), 6) (hardtanh(0, 6)) */
} weft_conv_act;

/* y = act(conv(x, w) + bias + residual): residual (or NULL) is dense in y's
 * memory format. The GEMM algorithms start their output tile at bias +
 * residual, accumulate onto it and clamp in the micro-kernel's store of the
 * last K block; the depthwise ones add and clamp each output row just
 * written (the f32/f64_conv_epilogue kernels). */
typedef struct {
  weft_conv_act act;
  const void* residual;
} weft_conv2d_epilogue;

/* The algorithm _conv2d_fused runs: weft__conv2d_pick's, or Winograd
 * F(2x2, 3x3) for a channels_last float32 3x3 stride-1 undilated one-group
 * convolution of 16 channels or more (src/ops/cpu/conv_winograd.c). */
weft_conv2d_algo weft__conv2d_fused_pick(const weft_conv2d_geom* g, bool channels_last, weft_dtype compute);
bool weft__conv2d_winograd_fits(const weft_conv2d_geom* g, weft_dtype dtype, bool channels_last);
/* Its weights transformed and packed (bytes, and the packing of w read through g->ws). */
size_t weft__conv2d_winograd_bytes(const weft_conv2d_geom* g);
void weft__conv2d_winograd_pack(const weft_conv2d_geom* g, const float* w, float* dst);
/* y (NHWC) = act(conv(x, w) + bias + residual) from the packed weights. */
weft_status weft__conv2d_winograd(const weft_kernels* kt, const weft_conv2d_geom* g, const float* x,
                                  const float* upack, const float* bias, const weft_conv2d_epilogue* e, float* y);

/* Bytes of algorithm a's packed weight for g, dtype FLOAT32 or FLOAT64 (0:
 * a reads the weight as it is). */
size_t weft__conv2d_packed_bytes(weft_dtype dtype, weft_conv2d_algo a, const weft_conv2d_geom* g);
/* w (read through g->ws) packed for a into dst (packed_bytes of them). */
weft_status weft__conv2d_pack(weft_dtype dtype, weft_conv2d_algo a, const weft_conv2d_geom* g, const void* w,
                              void* dst);
/* weft__conv2d with the epilogue e (NULL: none) and, when wpacked is not
 * NULL, the weight weft__conv2d_pack made for a and g instead of packing w.
 * The 1x1 algorithms run on the tile drivers here (so they take both). */
weft_status weft__conv2d_fused(const weft_kernels* kt, weft_dtype dtype, weft_conv2d_algo a,
                               const weft_conv2d_geom* g, const void* x, const void* w, const void* wpacked,
                               const void* bias, const weft_conv2d_epilogue* e, void* y);

/* y[m x cout] (row i at y + i * ys) = act(A W^T + bias + res) for the
 * rows of A (row i at a + i * lda, c values) and a 1x1 one-group weight
 * packed by weft__conv2d_pack for WEFT_CONV_GEMM_1X1_NHWC; res (row i at
 * res + i * rs) and bias may be NULL. float32, on the calling thread. */
void weft__conv2d_1x1_rows_f32(const weft_kernels* kt, int64_t c, int64_t cout, int64_t m, const float* a,
                               size_t lda, const float* wpacked, const float* bias, const float* res, size_t rs,
                               weft_conv_act act, float* y, size_t ys);
/* True when an implicit GEMM over NHWC reads its A in place, an output
 * row per tile (stems: few input channels; conv.c) */
bool weft__conv2d_rows_in_place(const weft_conv2d_geom* g, weft_dtype dtype);
/* the same over output channels [j0, j1) of the cout, j0 a multiple of the
 * GEMM's NR (weft__gemm_tile) */
void weft__conv2d_1x1_cols_f32(const weft_kernels* kt, int64_t c, int64_t cout, int64_t j0, int64_t j1, int64_t m,
                               const float* a, size_t lda, const float* wpacked, const float* bias, const float* res,
                               size_t rs, weft_conv_act act, float* y, size_t ys);

#endif
