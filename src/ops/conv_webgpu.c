/* conv2d (and conv1d, which runs as a conv2d of height 1) and its
 * gradients on the WebGPU device: src/ops/conv.c makes the checks and the
 * geometry as on the cpu; here the convolution runs as the implicit GEMM of
 * src/webgpu/wgsl_conv.c over the tensors' own strides, so NCHW and
 * channels_last (input, weight, output) need no layout copy, and the bias
 * is added in the GEMM's store. The output takes the cpu's memory format
 * rule; the gradients the layout of the tensor they belong to. */
#include "ops/ops.h"
#include "ops/webgpu_ops.h"

static weft__webgpu_conv geometry(weft__webgpu_conv_kind kind, const weft_conv2d_geom* g) {
  return (weft__webgpu_conv){.kind = kind, .n = g->n, .c = g->c, .h = g->h, .w = g->w, .cout = g->cout, .kh = g->kh,
                             .kw = g->kw, .sh = g->sh, .sw = g->sw, .ph = g->ph, .pw = g->pw, .dh = g->dh,
                             .dw = g->dw, .groups = g->groups, .ho = g->ho, .wo = g->wo};
}

static weft_status float32_only(const char* op, const weft_tensor* x) {
  if (x->dtype == WEFT_FLOAT32) return WEFT_OK;
  return weft__error(WEFT_NOT_IMPLEMENTED, "%s: not implemented on the webgpu device for %s yet", op,
                     weft_dtype_name(x->dtype));
}

static weft_tensor* run(const char* op, const weft__webgpu_conv* d, weft_tensor* r) {
  if (!r || r->numel == 0) return r;
  weft__webgpu_program p;
  weft_status s = weft__webgpu_conv_program(op, d, &p);
  if (s == WEFT_OK) s = weft__webgpu_run(op, &p);
  if (s == WEFT_OK) return r;
  weft_tensor_release(r);
  return NULL;
}

weft_tensor* weft__webgpu_conv2d(const char* op, const weft_conv2d_geom* g, weft_memory_format f, const weft_tensor* x,
                                 const weft_tensor* w, const weft_tensor* b) {
  if (float32_only(op, x) != WEFT_OK) return NULL;
  const int64_t sizes[4] = {g->n, g->cout, g->ho, g->wo};
  weft_tensor* y = weft_empty(sizes, 4, WEFT_FLOAT32, WEFT_DEVICE_WEBGPU, f);
  if (!y) return NULL;
  weft__webgpu_conv d = geometry(WEFT_WEBGPU_CONV_FORWARD, g);
  d.x = weft__webgpu_t4_of(x), d.wt = weft__webgpu_t4_of(w), d.y = weft__webgpu_t4_of(y);
  if (b) d.has_bias = true, d.bias = weft__webgpu_t4_of(b);
  return run(op, &d, y);
}

weft_tensor* weft__webgpu_conv2d_grad(const char* op, int which, const weft_conv2d_geom* g, const weft_tensor* gy,
                                      const weft_tensor* x, const weft_tensor* w) {
  if (float32_only(op, x) != WEFT_OK) return NULL;
  static const weft__webgpu_conv_kind kinds[3] = {WEFT_WEBGPU_CONV_GRAD_INPUT, WEFT_WEBGPU_CONV_GRAD_WEIGHT,
                                                  WEFT_WEBGPU_CONV_GRAD_BIAS};
  weft__webgpu_conv d = geometry(kinds[which], g);
  weft_tensor* r = which == 0   ? weft_empty_like(x, WEFT_FLOAT32, WEFT_PRESERVE_FORMAT)
                   : which == 1 ? weft_empty_like(w, WEFT_FLOAT32, WEFT_PRESERVE_FORMAT)
                                : weft_empty(&g->cout, 1, WEFT_FLOAT32, WEFT_DEVICE_WEBGPU, WEFT_CONTIGUOUS_FORMAT);
  if (!r) return NULL;
  d.y = weft__webgpu_t4_of(gy);
  d.x = weft__webgpu_t4_of(which == 0 ? r : x);
  d.wt = weft__webgpu_t4_of(which == 1 ? r : w);
  if (which == 2) d.bias = weft__webgpu_t4_of(r);
  return run(op, &d, r);
}
