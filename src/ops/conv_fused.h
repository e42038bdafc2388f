/* _conv2d_fused between its two files: src/ops/conv_fused.c (the op, the
 * epilogue's checks and the packed-weight cache) and src/ops/conv.c
 * (conv2d's checks and run, which take the epilogue along). */
#ifndef WEFT_OPS_CONV_FUSED_H
#define WEFT_OPS_CONV_FUSED_H

#include "base/strbuf.h"
#include "ops/cpu/conv_fused.h"
#include "weft/tensor.h"

typedef struct weft__conv2d_fusion {
  weft_conv_act act;
  const weft_tensor* residual; /* 4-D here, or NULL */
} weft__conv2d_fusion;

/* conv2d(input, weight, bias, ...) run with the epilogue fuse (conv.c):
 * conv2d's checks, then weft__conv2d_fusion_check and _run. */
weft_tensor* weft__conv2d_fusable(const weft_tensor* input, const weft_tensor* weight, const weft_tensor* bias,
                                  const int64_t* stride, int64_t ns, const int64_t* padding, int64_t np,
                                  const int64_t* dilation, int64_t nd, int64_t groups,
                                  const weft__conv2d_fusion* fuse);

/* The residual against the output's sizes and the input's dtype and device. */
weft_status weft__conv2d_fusion_check(const weft__conv2d_fusion* f, const int64_t sizes[4], const weft_tensor* x);
/* explain()'s "epilogue":{...}, entry of the conv2d plan */
void weft__conv2d_fusion_json(weft__strbuf* s, const weft__conv2d_fusion* f, weft_conv2d_algo a,
                              const weft_conv2d_geom* g, weft_dtype ct);
/* y = act(conv(xc, wc) + bc + residual) over format fmt in dtype ct; w the
 * caller's weight (the packed one is cached on its storage), wc it in ct. */
weft_status weft__conv2d_fusion_run(const weft__conv2d_fusion* f, weft_conv2d_algo a, const weft_conv2d_geom* g,
                                    weft_memory_format fmt, weft_dtype ct, const weft_tensor* w,
                                    const weft_tensor* wc, const weft_tensor* xc, const weft_tensor* bc,
                                    weft_tensor* y);

#endif
