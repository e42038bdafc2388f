/* _conv2d_fused (issue 23): conv2d for inference, with what follows a
 * convolution in a CNN applied in the convolution's output tile instead of
 * in passes of their own:
 *
 *   y = activation(conv2d(input, weight, bias, ...) + residual)
 *
 * activation 'none', 'relu' or 'relu6' (MobileNetV2's); residual (ResNet's
 * identity, MobileNetV2's inverted-residual skip) has the output's shape.
 * conv2d's checks and messages (src/ops/conv.c) come first, then the
 * residual's. Every algorithm of src/ops/cpu/conv.c takes the epilogue
 * (ops/cpu/conv_fused.h).
 *
 * The packed weight is kept on the weight's storage (ops/packed_cache.c),
 * as conv2d's is.
 * There is no autograd formula: with grad mode on, an input that requires
 * grad is refused ("the derivative for '_conv2d_fused' is not implemented").
 */
#include <string.h>

#include "core/internal.h"
#include "ops/conv_fused.h"
#include "ops/ops.h"
#include "ops/packed_cache.h"

static const char* const act_names[] = {"none", "relu", "relu6"};

/* ---- the packed weight (ops/packed_cache.c) ---- */

static int packing_of(weft_conv2d_algo a) {
  if (a == WEFT_CONV_WINOGRAD_NHWC) return WEFT_PACKED_CONV_WINOGRAD;
  return a == WEFT_CONV_IMPLICIT_GEMM_NHWC || a == WEFT_CONV_GEMM_1X1_NHWC ? WEFT_PACKED_CONV_NHWC
                                                                           : WEFT_PACKED_CONV_NCHW;
}

struct pack_ctx {
  weft_dtype ct;
  weft_conv2d_algo a;
  const weft_conv2d_geom* g;
  const void* w;
};

static weft_status pack_weight(void* p, void* dst) {
  const struct pack_ctx* c = p;
  return weft__conv2d_pack(c->ct, c->a, c->g, c->w, dst);
}

/* ---- the epilogue, for conv.c's run ---- */

weft_status weft__conv2d_fusion_check(const weft__conv2d_fusion* f, const int64_t sizes[4], const weft_tensor* x) {
  const weft_tensor* r = f->residual;
  if (!r) return WEFT_OK;
  if (r->ndim != 4 || memcmp(r->sizes, sizes, sizeof(int64_t) * 4) != 0)
    return weft__error(WEFT_INVALID_ARGUMENT, "_conv2d_fused: expected residual of size %s (the output's) but got %s",
                       weft__list(sizes, 4).s, weft__list(r->sizes, r->ndim).s);
  if (r->dtype != x->dtype)
    return weft__error(WEFT_INVALID_ARGUMENT, "_conv2d_fused: expected residual of dtype %s (the input's) but got %s",
                       weft_dtype_name(x->dtype), weft_dtype_name(r->dtype));
  if (r->device != x->device)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "_conv2d_fused: expected residual on the input's device (%s) but got %s",
                       weft_device_name(x->device), weft_device_name(r->device));
  return WEFT_OK;
}

void weft__conv2d_fusion_json(weft__strbuf* s, const weft__conv2d_fusion* f, weft_conv2d_algo a,
                              const weft_conv2d_geom* g, weft_dtype ct) {
  size_t bytes = weft__conv2d_packed_bytes(ct, a, g);
  bool wino = a == WEFT_CONV_WINOGRAD_NHWC;
  const char* start = wino ? "output transform" : "tile start";
  weft__strbuf_put(s, "\"epilogue\":{\"bias\":\"%s\",\"residual\":%s%s%s,\"activation\":\"%s\",\"where\":\"%s\"},",
                   start, f->residual ? "\"" : "", f->residual ? start : "null", f->residual ? "\"" : "",
                   act_names[f->act],
                   wino ? "output transform store" : bytes ? "micro-kernel store"
                   : a == WEFT_CONV_DEPTHWISE_NHWC && ct == WEFT_FLOAT32 ? "depthwise kernel store"
                                                                          : "row pass after the depthwise kernel");
  if (wino) /* 16 products [tiles x C] [C x Cout], one per position of the 4x4 transformed tile */
    weft__strbuf_put(s, "\"gemm\":{\"m\":%lld,\"n\":%lld,\"k\":%lld,\"count\":16},",
                     (long long)(g->n * ((g->ho + 1) / 2) * ((g->wo + 1) / 2)), (long long)g->cout, (long long)g->c);
  weft__strbuf_put(s, "\"packed_weight\":%s,", bytes ? "\"cached on the weight's storage\"" : "null");
}

weft_status weft__conv2d_fusion_run(const weft__conv2d_fusion* f, weft_conv2d_algo a, const weft_conv2d_geom* g,
                                    weft_memory_format fmt, weft_dtype ct, const weft_tensor* w,
                                    const weft_tensor* wc, const weft_tensor* xc, const weft_tensor* bc,
                                    weft_tensor* y) {
  weft_tensor* rt = f->residual ? weft_to_dtype(f->residual, ct, false) : NULL;
  weft_tensor* rc = rt ? weft_contiguous(rt, fmt) : NULL;
  weft_status s = !f->residual || rc ? WEFT_OK : weft_last_status();
  size_t bytes = weft__packed_cacheable() ? weft__conv2d_packed_bytes(ct, a, g) : 0;
  if (s == WEFT_OK) {
    weft__packed* held = NULL;
    struct pack_ctx pc = {ct, a, g, weft_tensor_data_ptr(wc)};
    /* NULL (no memory to keep the panels): the driver packs them per call */
    const void* packed = bytes ? weft__packed_get(w, (weft__packed_key){packing_of(a), g->groups, ct}, bytes,
                                                  pack_weight, &pc, &held)
                               : NULL;
    weft_conv2d_epilogue epi = {f->act, rc ? weft_tensor_data_ptr(rc) : NULL};
    if (s == WEFT_OK)
      s = weft__conv2d_fused(weft__kernels(), ct, a, g, weft_tensor_data_ptr(xc), weft_tensor_data_ptr(wc), packed,
                             bc ? weft_tensor_data_ptr(bc) : NULL, &epi, weft_tensor_data_ptr(y));
    weft__packed_release(held);
  }
  weft_tensor_release(rt);
  weft_tensor_release(rc);
  return s;
}

/* ---- the op ---- */

static weft_status parse_activation(const char* name, weft_conv_act* act) {
  for (int i = 0; i < (int)(sizeof act_names / sizeof act_names[0]); i++)
    if (strcmp(name, act_names[i]) == 0) {
      *act = (weft_conv_act)i;
      return WEFT_OK;
    }
  return weft__error(WEFT_INVALID_ARGUMENT,
                     "_conv2d_fused: unknown activation '%s' (expected 'none', 'relu' or 'relu6')", name);
}

static weft_tensor* conv2d_fused_kernel(const weft_tensor* input, const weft_tensor* weight, const weft_tensor* bias,
                                        const int64_t* stride, int64_t ns, const int64_t* padding, int64_t np,
                                        const int64_t* dilation, int64_t nd, int64_t groups, const char* activation,
                                        const weft_tensor* residual) {
  weft__conv2d_fusion f = {WEFT_CONV_ACT_NONE, NULL};
  if (parse_activation(activation, &f.act) != WEFT_OK) return NULL;
  /* an unbatched (3-D) input runs as a batch of one: its residual too */
  weft_tensor* r4 = residual && input->ndim == 3 && residual->ndim == 3 ? weft_unsqueeze(residual, 0)
                    : residual ? weft_tensor_retain((weft_tensor*)residual) : NULL;
  if (residual && !r4) return NULL;
  f.residual = r4;
  weft_tensor* y = weft__conv2d_fusable(input, weight, bias, stride, ns, padding, np, dilation, nd, groups, &f);
  weft_tensor_release(r4);
  if (!y) weft__error_rename("conv2d", "_conv2d_fused");
  return y;
}

weft_status weft__conv_fused_register(void) {
  WEFT_KERNEL(op__conv2d_fused, CPU, conv2d_fused_kernel);
  WEFT_KERNEL(op__conv2d_fused, META, conv2d_fused_kernel);
  return WEFT_OK;
}
