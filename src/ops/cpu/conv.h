/* The conv2d drivers (src/ops/cpu/conv.c): packing, blocking and threading
 * over the GEMM micro-kernels and the depthwise kernels of src/kernels. */
#ifndef WEFT_OPS_CPU_CONV_H
#define WEFT_OPS_CPU_CONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "weft/dtype.h"
#include "weft/error.h"

/* One convolution. Sizes are logical (NCHW order); padding is the top and
 * left padding (the bottom/right one is implied by ho, wo: reads past the
 * input are zeros). x is dense in the algorithm's memory format (NCHW
 * contiguous, or NHWC for the _nhwc drivers); y is dense in the same
 * format; w is read through its element strides ws (out, in/groups, kh,
 * kw); bias has cout values or is NULL. */
typedef struct {
  int64_t n, c, h, w;   /* input */
  int64_t cout, kh, kw; /* weight [cout, c / groups, kh, kw] */
  int64_t sh, sw, ph, pw, dh, dw, groups;
  int64_t ho, wo;
  ptrdiff_t ws[4];
} weft_conv2d_geom;

typedef enum {
  WEFT_CONV_IMPLICIT_GEMM_NHWC, /* any convolution, channels_last */
  WEFT_CONV_IM2COL_GEMM_NCHW,   /* any convolution, contiguous */
  WEFT_CONV_GEMM_1X1_NHWC,      /* 1x1, stride 1, no padding: one GEMM */
  WEFT_CONV_GEMM_1X1_NCHW,      /* the same, one GEMM per image */
  WEFT_CONV_DEPTHWISE_NHWC,     /* groups == c == cout */
  WEFT_CONV_DEPTHWISE_NCHW,     /* groups == c, cout a multiple of c */
  WEFT_CONV_WINOGRAD_NHWC,      /* _conv2d_fused only: 3x3 stride 1, float32 (conv_winograd.c) */
} weft_conv2d_algo;

/* The algorithm for g in this memory format (channels_last or not). */
weft_conv2d_algo weft__conv2d_pick(const weft_conv2d_geom* g, bool channels_last);
/* Its name in explain() ("implicit_gemm_nhwc", ...). */
const char* weft__conv2d_algo_name(weft_conv2d_algo a);

/* y = conv(x, w) + bias with algorithm a, for dtype FLOAT32 or FLOAT64 and
 * the kernels of table kt; parallel over output tiles. */
weft_status weft__conv2d(const weft_kernels* kt, weft_dtype dtype, weft_conv2d_algo a, const weft_conv2d_geom* g,
                         const void* x, const void* w, const void* bias, void* y);

/* The input rows (columns) an NCHW output plane of `out` rows (columns)
 * reads, padding included. */
int64_t weft__conv2d_span(int64_t out, int64_t stride, int64_t k, int64_t dil);
/* Plane xp (h x w) copied into pad (hp x wp) with its padding as zeros:
 * pad[(iy + ph) * wp + ix + pw] = xp[iy * w + ix]. */
void weft__conv2d_pad_plane(const weft_conv2d_geom* g, size_t es, const char* xp, char* pad, int64_t hp, int64_t wp);

/* The gradients of one convolution (src/ops/cpu/conv_backward.c), dtype
 * FLOAT32 or FLOAT64; g's weight strides are not read. gy is dense in the
 * layout's format (NCHW, or NHWC when nhwc), as x and gx are. The weight w
 * and its gradient gw are dense [cout, c / groups, kh, kw]: contiguous for
 * NCHW, channels_last ([cout, kh, kw, c / groups] in memory) for NHWC.
 * Parallel inside (patches, GEMM; the weight's gradient of one input
 * channel per group in NCHW by the dwconv_wgrad kernel); the same result
 * for any thread count. */
weft_status weft__conv2d_backward_input(const weft_kernels* kt, weft_dtype dtype, bool nhwc,
                                        const weft_conv2d_geom* g, const void* gy, const void* w, void* gx);
weft_status weft__conv2d_backward_weight(const weft_kernels* kt, weft_dtype dtype, bool nhwc,
                                         const weft_conv2d_geom* g, const void* gy, const void* x, void* gw);

/* Output channels per task (a multiple of nr) over mtiles tiles of rows:
 * all of coutg unless too few tiles for the threads; one thread never splits
 * them (each split redoes the rows' packing or transform). */
int64_t weft__conv_cols_per_tile(int64_t coutg, int64_t mtiles, int nr);

#endif
