/* 2-D pooling and its gradients on the WebGPU device: src/ops/pool.c makes
 * the checks, output sizes and formats as on the cpu; the kernels
 * (src/webgpu/wgsl_pool.c) read and write through the tensors' strides, so
 * the input is not made dense first. max's indices are int32 here: WGSL has
 * no 64-bit integers (docs/webgpu.md). */
#include "ops/ops.h"
#include "ops/webgpu_ops.h"

static weft__webgpu_pool describe(const weft_pool2d* g, bool backward) {
  weft__webgpu_pool_kind k = g->kind == WEFT_POOL_MAX   ? WEFT_WEBGPU_POOL_MAX
                             : g->kind == WEFT_POOL_AVG ? WEFT_WEBGPU_POOL_AVG
                                                        : WEFT_WEBGPU_POOL_ADAPTIVE;
  return (weft__webgpu_pool){.kind = k, .backward = backward, .n = g->n, .c = g->c, .h = g->h, .w = g->w,
                             .oh = g->oh, .ow = g->ow, .kh = g->kh, .kw = g->kw, .sh = g->sh, .sw = g->sw,
                             .ph = g->ph, .pw = g->pw, .dh = g->dh, .dw = g->dw,
                             .count_include_pad = g->count_include_pad, .divisor_override = g->divisor_override};
}

static weft_status dispatch(const char* op, const weft_tensor* x, const weft__webgpu_pool* d) {
  if (x->dtype != WEFT_FLOAT32)
    return weft__error(WEFT_NOT_IMPLEMENTED, "%s: not implemented on the webgpu device for %s yet", op,
                       weft_dtype_name(x->dtype));
  weft__webgpu_program p;
  weft_status s = weft__webgpu_pool_program(op, d, &p);
  return s == WEFT_OK ? weft__webgpu_run(op, &p) : s;
}

weft_status weft__webgpu_pool2d(const char* op, const weft_pool2d* g, const weft_tensor* x, weft_tensor* y,
                                weft_tensor* idx) {
  if (y->numel == 0) return WEFT_OK;
  weft__webgpu_pool d = describe(g, false);
  d.x = weft__webgpu_t4_of(x), d.y = weft__webgpu_t4_of(y);
  if (idx) d.indices = true, d.idx = weft__webgpu_t4_of(idx);
  return dispatch(op, x, &d);
}

weft_status weft__webgpu_pool2d_backward(const char* op, const weft_pool2d* g, const weft_tensor* gy,
                                         const weft_tensor* idx, weft_tensor* gx) {
  if (gx->numel == 0) return WEFT_OK;
  weft__webgpu_pool d = describe(g, true);
  d.x = weft__webgpu_t4_of(gx), d.y = weft__webgpu_t4_of(gy);
  if (idx) d.idx = weft__webgpu_t4_of(idx);
  return dispatch(op, gx, &d);
}
