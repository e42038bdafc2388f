/* The fused inverted residual (MobileNetV2's block) over NHWC float32
 * (src/ops/cpu/inverted_residual.c), for _inverted_residual. */
#ifndef WEFT_OPS_CPU_INVERTED_RESIDUAL_H
#define WEFT_OPS_CPU_INVERTED_RESIDUAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "weft/error.h"

/* One block: input [n, h, w, cin] (NHWC, dense), hidden channels ch (cin
 * when there is no expansion), a kh x kw depthwise kernel padded by
 * (kh - 1) / 2, (kw - 1) / 2 at stride `stride`, output [n, ho, wo, cout]. */
typedef struct {
  int64_t n, h, w, cin, ch, cout, kh, kw, stride, ho, wo;
  bool expand, residual; /* residual: stride 1, cout == cin */
  ptrdiff_t dws[4];      /* the depthwise weight's element strides */
} weft_ir_geom;

/* Output rows per band: the projection's GEMM gets about 64 pixels. */
int64_t weft__ir_band_rows(const weft_ir_geom* g);
/* True when the block runs staged (whole-map buffers, threads splitting
 * channels) at the current thread count: a small map, fewer images than threads. */
bool weft__ir_staged(const weft_ir_geom* g);
/* Tasks for the current thread count (row ranges, or the staged path's shares). */
int64_t weft__ir_tasks(const weft_ir_geom* g);

/* y = project(relu6(dw(relu6(expand(x))))) (+ x): we, wp packed by
 * weft__conv2d_pack for WEFT_CONV_GEMM_1X1_NHWC (we NULL: no expansion),
 * wd [ch, 1, kh, kw] read through g->dws, biases NULL or ch / cout values. */
weft_status weft__inverted_residual_f32(const weft_kernels* kt, const weft_ir_geom* g, const float* x,
                                        const float* we, const float* be, const float* wd, const float* bd,
                                        const float* wp, const float* bp, float* y);

#endif
