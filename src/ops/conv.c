/* conv2d (issue 12) and conv1d (issue 23): conv<n>d and conv<n>d.padding
 * ('same' / 'valid'), CPU and Meta kernels, over the drivers of
 * src/ops/cpu/conv.c. conv1d runs as a 2-D convolution of height 1 (1.13's
 * view4d), its checks made on the 3-D tensors so its messages are its own.
 *
 * The checks and messages follow PyTorch 1.13 in its order: conv<n>d's
 * batchify (unbatched or batched input), _convolution_mode for a padding
 * string, _convolution (groups, stride/padding/dilation expanded to the
 * weight's dimensions), check_shape_forward, then the input/weight/bias
 * types. The output's memory format is suggest_memory_format's rule: a
 * channels_last input or weight gives a channels_last output, computed over
 * NHWC with no layout conversion; anything else runs over contiguous NCHW.
 * float32 and float64 run the kernels; bfloat16 through float32 and the
 * integer dtypes through float64 (exact while sums stay below 2^53); Half
 * and Bool are refused, as 1.13's slow_conv2d_cpu is. explain() reports the
 * algorithm picked (src/ops/cpu/conv.h). */
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "core/internal.h"
#include "iter/iter_internal.h"
#include "kernels/kernels.h"
#include "ops/conv_internal.h"
#include "ops/conv_fused.h"
#include "ops/cpu/conv.h"
#include "ops/ops.h"
#include "ops/packed_cache.h"
#include "ops/webgpu_ops.h"
#include "weft/parallel.h"


/* The resolved convolution parameters: per spatial dim, top/left and
 * bottom/right padding (they differ only for padding='same'). */
typedef struct {
  int64_t stride[2], pad_lo[2], pad_hi[2], dilation[2], groups;
} conv_params;

/* core's formatter, in this file's argument order */
#define sizes_str(buf, cap, s, n) weft__sizes_str(s, n, buf, cap)

weft_status weft__conv_expand_param(const char* op, const char* what, const int64_t* v, int64_t n, int dim,
                                    int64_t fill, int64_t out[2]) {
  if (n != 1 && n != dim) {
    char buf[128];
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: expected %s to be a single integer value or a list of %d values to match the "
                       "convolution dimensions, but got %s=%s",
                       op, what, dim, what, sizes_str(buf, sizeof buf, v, (int)n));
  }
  for (int i = 0; i < 2; i++) out[i] = i < 2 - dim ? fill : v[n == 1 ? 0 : i - (2 - dim)];
  return WEFT_OK;
}

/* 1.13 words a dtype mismatch by the path the call takes: conv1d's
 * (mkldnn's check) names input and weight types, conv2d's the scalar types */
static weft_status dtype_checks(const conv_kind* k, const weft_tensor* x, const weft_tensor* w, const weft_tensor* b) {
  if (x->dtype != w->dtype)
    return k->dim == 1 ? weft__error(WEFT_INVALID_ARGUMENT, "%s: Input type (%s) and weight type (%s) should be the same",
                                     k->op, weft_dtype_name(x->dtype), weft_dtype_name(w->dtype))
                       : weft__error(WEFT_INVALID_ARGUMENT, "%s: expected scalar type %s but found %s", k->op,
                                     weft_dtype_name(x->dtype), weft_dtype_name(w->dtype));
  if (b && b->dtype != x->dtype)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: Input type (%s) and bias type (%s) should be the same", k->op,
                       weft_dtype_name(x->dtype), weft_dtype_name(b->dtype));
  if (x->dtype == WEFT_FLOAT16 || x->dtype == WEFT_BOOL)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: \"slow_conv2d_cpu\" not implemented for '%s'", k->op,
                       weft_dtype_name(x->dtype));
  return WEFT_OK;
}

weft_status weft__conv_check_groups(const char* op, const weft_tensor* w, int64_t groups) {
  char bw[160];
  sizes_str(bw, sizeof bw, w->sizes, w->ndim);
  if (w->sizes[0] < groups)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: Given groups=%lld, expected weight to be at least %lld at dimension 0, but got weight "
                       "of size %s instead",
                       op, (long long)groups, (long long)groups, bw);
  if (w->sizes[0] % groups != 0) /* 1.13 prints the sizes in two brackets here */
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got "
                       "weight of size [%s] instead",
                       op, (long long)groups, (long long)groups, bw);
  return WEFT_OK;
}

int64_t weft__conv_spatial(const weft_tensor* t, int dim, int i) {
  return i < 2 - dim ? 1 : t->sizes[2 + i - (2 - dim)];
}

/* "(a x b)" or, for one dim, "(b)" */
static const char* dims_str(char* buf, size_t cap, const int64_t v[2], int dim) {
  if (dim == 1) snprintf(buf, cap, "(%lld)", (long long)v[1]);
  else snprintf(buf, cap, "(%lld x %lld)", (long long)v[0], (long long)v[1]);
  return buf;
}

/* check_shape_forward (x and w with dim + 2 dims); fills g's sizes (a 1-D
 * convolution as a 2-D one of height 1) */
static weft_status shape_checks(const conv_kind* kd, const weft_tensor* x, const weft_tensor* w, const weft_tensor* b,
                                const conv_params* p, weft_conv2d_geom* g) {
  char bw[160], bx[160], bb[160];
  const char* op = kd->op;
  for (int i = 0; i < 2; i++) {
    if (p->pad_lo[i] < 0 || p->pad_hi[i] < 0)
      return weft__error(WEFT_INVALID_ARGUMENT, "%s: negative padding is not supported", op);
  }
  for (int i = 0; i < 2; i++)
    if (p->stride[i] <= 0) return weft__error(WEFT_INVALID_ARGUMENT, "%s: non-positive stride is not supported", op);
  for (int i = 0; i < 2; i++)
    if (p->dilation[i] <= 0)
      return weft__error(WEFT_INVALID_ARGUMENT, "%s: non-positive dilation is not supported", op);
  const int64_t* ws = w->sizes;
  sizes_str(bw, sizeof bw, ws, w->ndim);
  if (weft__conv_check_groups(op, w, p->groups) != WEFT_OK) return weft_last_status();
  if (x->sizes[1] != ws[1] * p->groups)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: Given groups=%lld, weight of size %s, expected input%s to have %lld channels, but got "
                       "%lld channels instead",
                       op, (long long)p->groups, bw, sizes_str(bx, sizeof bx, x->sizes, x->ndim),
                       (long long)(ws[1] * p->groups), (long long)x->sizes[1]);
  if (b && (b->ndim != 1 || b->sizes[0] != ws[0]))
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: Given weight of size %s, expected bias to be 1-dimensional with %lld elements, but got "
                       "bias of size %s instead",
                       op, bw, (long long)ws[0], sizes_str(bb, sizeof bb, b->sizes, b->ndim));
  int64_t in[2], k[2], kn[2];
  for (int i = 0; i < 2; i++) {
    kn[i] = weft__conv_spatial(w, kd->dim, i);
    in[i] = weft__conv_spatial(x, kd->dim, i) + p->pad_lo[i] + p->pad_hi[i];
    k[i] = p->dilation[i] * (kn[i] - 1) + 1;
  }
  if (in[0] < k[0] || in[1] < k[1])
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: Calculated padded input size per channel: %s. Kernel size: %s. "
                       "Kernel size can't be greater than actual input size",
                       op, dims_str(bx, sizeof bx, in, kd->dim), dims_str(bb, sizeof bb, k, kd->dim));
  *g = (weft_conv2d_geom){x->sizes[0], x->sizes[1], weft__conv_spatial(x, kd->dim, 0), weft__conv_spatial(x, kd->dim, 1),
                          ws[0], kn[0], kn[1], p->stride[0], p->stride[1], p->pad_lo[0], p->pad_lo[1],
                          p->dilation[0], p->dilation[1], p->groups, (in[0] - k[0]) / p->stride[0] + 1,
                          (in[1] - k[1]) / p->stride[1] + 1, {0, 0, 0, 0}};
  return WEFT_OK;
}

/* ---- running ---- */

weft_dtype weft__conv_compute_dtype(weft_dtype t) {
  if (t == WEFT_FLOAT32 || t == WEFT_FLOAT64) return t;
  return t == WEFT_BFLOAT16 ? WEFT_FLOAT32 : WEFT_FLOAT64;
}
#define compute_dtype weft__conv_compute_dtype

/* explain()'s plan: the algorithm and the GEMM it amounts to */
/* (conv1d's as the height-1 conv2d it runs) */
static weft_status record_plan(const char* op, weft_conv2d_algo a, const weft_conv2d_geom* g, weft_memory_format f,
                               weft_dtype t, const weft__conv2d_fusion* fuse) {
  weft__strbuf s = {0};
  int64_t cg = g->c / g->groups;
  weft__strbuf_put(&s, "{\"op\":\"%s\",\"algorithm\":\"%s\",\"memory_format\":\"%s\",\"dtype\":\"%s\","
                       "\"compute_dtype\":\"%s\",",
                   op, weft__conv2d_algo_name(a), weft_memory_format_name(f), weft_dtype_name(t),
                   weft_dtype_name(compute_dtype(t)));
  weft__strbuf_put(&s, "\"input\":[%lld,%lld,%lld,%lld],\"weight\":[%lld,%lld,%lld,%lld],\"output\":[%lld,%lld,%lld,%lld],",
                   (long long)g->n, (long long)g->c, (long long)g->h, (long long)g->w, (long long)g->cout,
                   (long long)cg, (long long)g->kh, (long long)g->kw, (long long)g->n, (long long)g->cout,
                   (long long)g->ho, (long long)g->wo);
  weft__strbuf_put(&s, "\"stride\":[%lld,%lld],\"padding\":[%lld,%lld],\"dilation\":[%lld,%lld],\"groups\":%lld,",
                   (long long)g->sh, (long long)g->sw, (long long)g->ph, (long long)g->pw, (long long)g->dh,
                   (long long)g->dw, (long long)g->groups);
  bool dw = a == WEFT_CONV_DEPTHWISE_NHWC || a == WEFT_CONV_DEPTHWISE_NCHW || a == WEFT_CONV_WINOGRAD_NHWC;
  if (!dw)
    weft__strbuf_put(&s, "\"gemm\":{\"m\":%lld,\"n\":%lld,\"k\":%lld,\"count\":%lld},",
                     (long long)(a == WEFT_CONV_IMPLICIT_GEMM_NHWC || a == WEFT_CONV_GEMM_1X1_NHWC
                                     ? g->n * g->ho * g->wo : g->cout / g->groups),
                     (long long)(a == WEFT_CONV_IMPLICIT_GEMM_NHWC || a == WEFT_CONV_GEMM_1X1_NHWC
                                     ? g->cout / g->groups : g->ho * g->wo),
                     (long long)(cg * g->kh * g->kw),
                     (long long)(a == WEFT_CONV_IMPLICIT_GEMM_NHWC || a == WEFT_CONV_GEMM_1X1_NHWC
                                     ? g->groups : g->groups * g->n));
  if (fuse) weft__conv2d_fusion_json(&s, fuse, a, g, compute_dtype(t));
  weft__strbuf_put(&s, "\"threads\":%d}", weft_get_num_threads());
  return weft__explain_record_json(weft__strbuf_finish(&s, "explain"));
}

/* Releases every tensor of the list (NULLs allowed). */
static void release_all(weft_tensor** t, size_t n) {
  for (size_t i = 0; i < n; i++) weft_tensor_release(t[i]);
}

/* x, w 4-D, checked; returns the 4-D result. fuse: _conv2d_fused's epilogue (NULL for conv2d). */
static weft_tensor* run(const char* op, const weft_tensor* x, const weft_tensor* w, const weft_tensor* b,
                        weft_conv2d_geom g, const weft__conv2d_fusion* fuse) {
  bool cl = weft_tensor_suggest_memory_format(x) == WEFT_CHANNELS_LAST ||
            weft_tensor_suggest_memory_format(w) == WEFT_CHANNELS_LAST;
  weft_memory_format f = cl ? WEFT_CHANNELS_LAST : WEFT_CONTIGUOUS_FORMAT;
  weft_conv2d_algo a = fuse ? weft__conv2d_fused_pick(&g, cl, compute_dtype(x->dtype)) : weft__conv2d_pick(&g, cl);
  weft_dtype t = x->dtype, ct = compute_dtype(t);
  /* 1.13's "Empty" backend for an empty weight (no input channels) returns
   * a contiguous result with no channels */
  if (g.c == 0) {
    const int64_t none[4] = {g.n, 0, g.ho, g.wo};
    return weft_empty(none, 4, t, x->device, WEFT_CONTIGUOUS_FORMAT);
  }
  const int64_t sizes[4] = {g.n, g.cout, g.ho, g.wo};
  if (fuse && weft__conv2d_fusion_check(fuse, sizes, x) != WEFT_OK) return NULL;
  if (x->device == WEFT_DEVICE_META) return weft_empty(sizes, 4, t, WEFT_DEVICE_META, f);
  if (x->device == WEFT_DEVICE_WEBGPU) return weft__webgpu_conv2d(op, &g, f, x, w, b); /* conv_webgpu.c */
  if (weft_explaining() && record_plan(op, a, &g, f, t, fuse) != WEFT_OK) return NULL;
  weft_tensor* xt = weft_to_dtype(x, ct, false);
  weft_tensor* wc = weft_to_dtype(w, ct, false);
  weft_tensor* bt = b ? weft_to_dtype(b, ct, false) : NULL;
  weft_tensor* xc = xt ? weft_contiguous(xt, f) : NULL;
  weft_tensor* bc = bt ? weft_contiguous(bt, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_tensor* y = weft_empty(sizes, 4, ct, x->device, f);
  weft_tensor* tmp[] = {xt, wc, bt, xc, bc, y};
  weft_status s = xc && wc && y && (!b || bc) ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && !weft_explaining()) {
    for (int i = 0; i < 4; i++) g.ws[i] = wc->strides[i];
    /* the tiled GEMMs take their packed weight from the cache on w's storage (ops/packed_cache.c) */
    static const weft__conv2d_fusion plain = {WEFT_CONV_ACT_NONE, NULL};
    bool cached = (a == WEFT_CONV_IMPLICIT_GEMM_NHWC || a == WEFT_CONV_IM2COL_GEMM_NCHW) && weft__packed_cacheable();
    s = fuse || cached ? weft__conv2d_fusion_run(fuse ? fuse : &plain, a, &g, f, ct, w, wc, xc, bc, y)
                       : weft__conv2d(weft__kernels(), ct, a, &g, weft_tensor_data_ptr(xc), weft_tensor_data_ptr(wc),
                                      bc ? weft_tensor_data_ptr(bc) : NULL, weft_tensor_data_ptr(y));
  }
  weft_tensor* r = s == WEFT_OK ? (ct == t ? weft_tensor_retain(y) : weft_to_dtype(y, t, false)) : NULL;
  release_all(tmp, sizeof tmp / sizeof tmp[0]);
  return r;
}

/* The input must have the weight's dimensions; sep: what 1.13 puts
 * between "weight" and its sizes */
weft_status weft__conv_check_weight_dim(const conv_kind* k, const weft_tensor* x, const weft_tensor* w, const char* sep) {
  if (w->ndim == x->ndim) return WEFT_OK;
  char bw[160], bx[160];
  return weft__error(WEFT_INVALID_ARGUMENT,
                     "%s: Expected %d-dimensional input for %d-dimensional weight%s%s, but got %d-dimensional "
                     "input of size %s instead",
                     k->op, w->ndim, w->ndim, sep, sizes_str(bw, sizeof bw, w->sizes, w->ndim), x->ndim,
                     sizes_str(bx, sizeof bx, x->sizes, x->ndim));
}

/* t with a height of 1 inserted (a 1-D convolution's tensors as 2-D ones) */
static weft_tensor* as_2d(const conv_kind* k, const weft_tensor* t) {
  return k->dim == 2 ? weft_tensor_retain((weft_tensor*)t) : weft_unsqueeze(t, 2);
}

/* _convolution's checks with the parameters resolved, then the run (fuse:
 * _conv2d_fused's epilogue, NULL otherwise) */
static weft_tensor* convolution(const conv_kind* k, const weft_tensor* x, const weft_tensor* w, const weft_tensor* b,
                                conv_params* p, const weft__conv2d_fusion* fuse) {
  weft_conv2d_geom g;
  const weft_tensor* ts[3] = {x, w, b};
  if (weft__webgpu_same_device(k->op, ts, 3) != WEFT_OK) return NULL;
  if (weft__conv_check_weight_dim(k, x, w, " ") != WEFT_OK) return NULL;
  if (shape_checks(k, x, w, b, p, &g) != WEFT_OK || dtype_checks(k, x, w, b) != WEFT_OK) return NULL;
  if (k->dim == 2) return run(k->op, x, w, b, g, fuse);
  /* 1.13 makes a 1-D input contiguous first, so a permuted [N, L, C] view
   * never reads as channels_last */
  weft_tensor* xc = weft_contiguous(x, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* x4 = xc ? as_2d(k, xc) : NULL;
  weft_tensor_release(xc);
  weft_tensor* w4 = x4 ? as_2d(k, w) : NULL;
  weft_tensor* y4 = w4 ? run(k->op, x4, w4, b, g, fuse) : NULL;
  weft_tensor* y = y4 ? weft_squeeze_dim(y4, 2) : NULL;
  weft_tensor_release(x4);
  weft_tensor_release(w4);
  weft_tensor_release(y4);
  return y;
}

/* weight dims and groups, the checks before the parameters expand */
static weft_status weight_groups(const conv_kind* k, const weft_tensor* w, int64_t groups) {
  if (w->ndim < 3) return weft__error(WEFT_INVALID_ARGUMENT, "%s: weight should have at least three dimensions", k->op);
  if (groups <= 0) return weft__error(WEFT_INVALID_ARGUMENT, "%s: non-positive groups is not supported", k->op);
  return WEFT_OK;
}

weft_tensor* weft__conv_batchify(const conv_kind* k, const weft_tensor* input, weft__conv_body body, const void* ctx) {
  if (input->ndim != k->dim + 1 && input->ndim != k->dim + 2) {
    char buf[160];
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "%s: Expected %dD (unbatched) or %dD (batched) input to %s, but got input of size: %s",
                            k->op, k->dim + 1, k->dim + 2, k->op, sizes_str(buf, sizeof buf, input->sizes, input->ndim));
  }
  if (input->ndim == k->dim + 2) return body(input, ctx);
  weft_tensor* xb = weft_unsqueeze(input, 0);
  weft_tensor* r = xb ? body(xb, ctx) : NULL;
  weft_tensor* ru = r ? weft_squeeze_dim(r, 0) : NULL;
  weft_tensor_release(xb);
  weft_tensor_release(r);
  return ru;
}

struct list_args {
  conv_kind k;
  const weft_tensor *w, *b;
  const int64_t *stride, *padding, *dilation;
  int64_t ns, np, nd, groups;
  const weft__conv2d_fusion* fuse; /* _conv2d_fused's epilogue, NULL for the other convolutions */
};

/* the int lists resolved (the weight's dims), with their checks */
static weft_status list_params(const struct list_args* a, conv_params* p) {
  const char* op = a->k.op;
  if (weight_groups(&a->k, a->w, a->groups) != WEFT_OK) return weft_last_status();
  int dim = a->w->ndim - 2;
  *p = (conv_params){.groups = a->groups};
  if (weft__conv_expand_param(op, "stride", a->stride, a->ns, dim, 1, p->stride) != WEFT_OK ||
      weft__conv_expand_param(op, "padding", a->padding, a->np, dim, 0, p->pad_lo) != WEFT_OK ||
      weft__conv_expand_param(op, "dilation", a->dilation, a->nd, dim, 1, p->dilation) != WEFT_OK)
    return weft_last_status();
  const int64_t output_padding[2] = {0, 0}; /* conv<n>d passes n zeros to at::convolution */
  int64_t unused[2];
  if (weft__conv_expand_param(op, "output_padding", output_padding, a->k.dim, dim, 0, unused) != WEFT_OK)
    return weft_last_status();
  memcpy(p->pad_hi, p->pad_lo, sizeof p->pad_hi);
  return WEFT_OK;
}

static weft_tensor* list_body(const weft_tensor* x, const void* ctx) {
  const struct list_args* a = ctx;
  conv_params p;
  if (list_params(a, &p) != WEFT_OK) return NULL;
  return convolution(&a->k, x, a->w, a->b, &p, a->fuse);
}

weft_tensor* weft__conv2d_fusable(const weft_tensor* input, const weft_tensor* weight, const weft_tensor* bias,
                                  const int64_t* stride, int64_t ns, const int64_t* padding, int64_t np,
                                  const int64_t* dilation, int64_t nd, int64_t groups,
                                  const weft__conv2d_fusion* fuse) {
  struct list_args a = {{"conv2d", 2}, weight, bias, stride, padding, dilation, ns, np, nd, groups, fuse};
  return weft__conv_batchify(&a.k, input, list_body, &a);
}

static weft_tensor* conv_list(const char* op, int dim, const weft_tensor* input, const weft_tensor* weight,
                              const weft_tensor* bias, const int64_t* stride, int64_t ns, const int64_t* padding,
                              int64_t np, const int64_t* dilation, int64_t nd, int64_t groups) {
  struct list_args a = {{op, dim}, weight, bias, stride, padding, dilation, ns, np, nd, groups, NULL};
  return weft__conv_batchify(&a.k, input, list_body, &a);
}

static weft_tensor* conv2d_kernel(const weft_tensor* input, const weft_tensor* weight, const weft_tensor* bias,
                                  const int64_t* stride, int64_t ns, const int64_t* padding, int64_t np,
                                  const int64_t* dilation, int64_t nd, int64_t groups) {
  return conv_list("conv2d", 2, input, weight, bias, stride, ns, padding, np, dilation, nd, groups);
}

static weft_tensor* conv1d_kernel(const weft_tensor* input, const weft_tensor* weight, const weft_tensor* bias,
                                  const int64_t* stride, int64_t ns, const int64_t* padding, int64_t np,
                                  const int64_t* dilation, int64_t nd, int64_t groups) {
  return conv_list("conv1d", 1, input, weight, bias, stride, ns, padding, np, dilation, nd, groups);
}

struct str_args {
  conv_kind k;
  const weft_tensor *w, *b;
  const int64_t *stride, *dilation;
  int64_t ns, nd, groups;
  const char* padding;
};

/* _convolution_mode: 'valid' is padding 0; 'same' pads d * (k - 1) in
 * total per dim, the odd one at the bottom/right (1.13 pads a copy of the
 * input there; reads past the input are zeros here, so no copy) */
static weft_status str_params(const weft_tensor* x, const struct str_args* a, conv_params* p) {
  const weft_tensor* w = a->w;
  const char* op = a->k.op;
  bool same = strcmp(a->padding, "same") == 0;
  if (!same && strcmp(a->padding, "valid") != 0)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: Invalid padding string: '%s'", op, a->padding);
  *p = (conv_params){.groups = a->groups};
  if (same) {
    if (w->ndim < 3) return weft__error(WEFT_INVALID_ARGUMENT, "%s: weight should have at least three dimensions", op);
    int dim = w->ndim - 2;
    if (weft__conv_check_weight_dim(&a->k, x, w, "") != WEFT_OK) return weft_last_status(); /* _convolution_same: no space */
    if (a->ns != 1 && a->ns != dim)
      return weft__error(WEFT_INVALID_ARGUMENT, "%s: stride cannot broadcast to %d dimensions", op, dim);
    if (a->nd != 1 && a->nd != dim)
      return weft__error(WEFT_INVALID_ARGUMENT, "%s: dilation cannot broadcast to %d dimensions", op, dim);
    for (int64_t i = 0; i < a->ns; i++)
      if (a->stride[i] != 1)
        return weft__error(WEFT_INVALID_ARGUMENT, "%s: padding='same' is not supported for strided convolutions", op);
  }
  if (weight_groups(&a->k, w, a->groups) != WEFT_OK) return weft_last_status();
  int dim = w->ndim - 2;
  const int64_t zero = 0;
  if (weft__conv_expand_param(op, "stride", a->stride, a->ns, dim, 1, p->stride) != WEFT_OK ||
      weft__conv_expand_param(op, "padding", &zero, 1, dim, 0, p->pad_lo) != WEFT_OK ||
      weft__conv_expand_param(op, "dilation", a->dilation, a->nd, dim, 1, p->dilation) != WEFT_OK)
    return weft_last_status();
  for (int i = 0; i < 2; i++) {
    int64_t total = same ? p->dilation[i] * (weft__conv_spatial(w, dim, i) - 1) : 0;
    p->pad_lo[i] = total / 2, p->pad_hi[i] = total - total / 2;
  }
  return WEFT_OK;
}

static weft_tensor* str_body(const weft_tensor* x, const void* ctx) {
  const struct str_args* a = ctx;
  conv_params p;
  if (str_params(x, a, &p) != WEFT_OK) return NULL;
  return convolution(&a->k, x, a->w, a->b, &p, NULL);
}

static weft_tensor* conv_str(const char* op, int dim, const weft_tensor* input, const weft_tensor* weight,
                             const weft_tensor* bias, const int64_t* stride, int64_t ns, const char* padding,
                             const int64_t* dilation, int64_t nd, int64_t groups) {
  struct str_args a = {{op, dim}, weight, bias, stride, dilation, ns, nd, groups, padding};
  return weft__conv_batchify(&a.k, input, str_body, &a);
}

static weft_tensor* conv2d_padding_kernel(const weft_tensor* input, const weft_tensor* weight, const weft_tensor* bias,
                                          const int64_t* stride, int64_t ns, const char* padding,
                                          const int64_t* dilation, int64_t nd, int64_t groups) {
  return conv_str("conv2d", 2, input, weight, bias, stride, ns, padding, dilation, nd, groups);
}

static weft_tensor* conv1d_padding_kernel(const weft_tensor* input, const weft_tensor* weight, const weft_tensor* bias,
                                          const int64_t* stride, int64_t ns, const char* padding,
                                          const int64_t* dilation, int64_t nd, int64_t groups) {
  return conv_str("conv1d", 1, input, weight, bias, stride, ns, padding, dilation, nd, groups);
}

/* ---- backward (autograd's ConvolutionBackward0) ---- */

/* grad_output must have the forward output's shape */
static weft_status check_grad_output(const weft_tensor* gy, const weft_conv2d_geom* g) {
  const int64_t want[4] = {g->n, g->cout, g->ho, g->wo};
  if (gy->ndim == 4 && memcmp(gy->sizes, want, sizeof want) == 0) return WEFT_OK;
  char bg[160], bw[160];
  return weft__error(WEFT_INVALID_ARGUMENT, "conv2d: expected grad_output of size %s but got %s",
                     sizes_str(bw, sizeof bw, want, 4), sizes_str(bg, sizeof bg, gy->sizes, gy->ndim));
}

struct back_args {
  const weft_tensor* gy;
  struct list_args a;
  int which;
};

/* r in like's dtype and strides (empty_like's PRESERVE: what PyTorch's
 * AccumulateGrad makes of a gradient, the parameter's own layout); r itself
 * when it already is. */
weft_tensor* weft__conv_in_layout_of(const weft_tensor* like, weft_tensor* r) {
  if (r->dtype == like->dtype && memcmp(r->strides, like->strides, sizeof(int64_t) * (size_t)like->ndim) == 0)
    return weft_tensor_retain(r);
  weft_tensor* out = weft_empty_like(like, like->dtype, WEFT_PRESERVE_FORMAT);
  if (out && weft_copy_(out, r) != WEFT_OK) {
    weft_tensor_release(out);
    return NULL;
  }
  return out;
}

/* One gradient, computed over f and handed back in like's layout. */
static weft_tensor* grad_of(const weft_tensor* like, weft_dtype ct, weft_memory_format f, bool input,
                            const weft_conv2d_geom* g, const weft_tensor* gyc, const weft_tensor* other) {
  weft_tensor* oc = weft_contiguous(other, f);
  weft_tensor* r = oc ? weft_empty(like->sizes, 4, ct, like->device, f) : NULL;
  weft_status s = r ? WEFT_OK : weft_last_status();
  bool nhwc = f == WEFT_CHANNELS_LAST;
  if (s == WEFT_OK && input)
    s = weft__conv2d_backward_input(weft__kernels(), ct, nhwc, g, weft_tensor_data_ptr(gyc), weft_tensor_data_ptr(oc),
                                    weft_tensor_data_ptr(r));
  else if (s == WEFT_OK)
    s = weft__conv2d_backward_weight(weft__kernels(), ct, nhwc, g, weft_tensor_data_ptr(gyc),
                                     weft_tensor_data_ptr(oc), weft_tensor_data_ptr(r));
  weft_tensor* out = s == WEFT_OK ? weft__conv_in_layout_of(like, r) : NULL;
  weft_tensor_release(oc);
  weft_tensor_release(r);
  return out;
}

static weft_tensor* back_body(const weft_tensor* x, const void* ctx) {
  const struct back_args* b = ctx;
  const weft_tensor *w = b->a.w, *gy = b->gy;
  conv_params p;
  weft_conv2d_geom g;
  const conv_kind* k = &b->a.k;
  if (list_params(&b->a, &p) != WEFT_OK || weft__conv_check_weight_dim(k, x, w, " ") != WEFT_OK ||
      shape_checks(k, x, w, NULL, &p, &g) != WEFT_OK || dtype_checks(k, x, w, NULL) != WEFT_OK)
    return NULL;
  weft_tensor* gy4 = gy->ndim == 3 && x->ndim == 4 && g.n == 1 ? weft_unsqueeze(gy, 0) : weft_tensor_retain((weft_tensor*)gy);
  if (!gy4 || check_grad_output(gy4, &g) != WEFT_OK) {
    weft_tensor_release(gy4);
    return NULL;
  }
  weft_tensor* r = NULL;
  if (x->device == WEFT_DEVICE_WEBGPU) { /* all three as implicit GEMMs (conv_webgpu.c) */
    r = weft__webgpu_conv2d_grad(k->op, b->which, &g, gy4, x, w);
  } else if (b->which == 2) {
    const int64_t dims[3] = {0, 2, 3};
    r = weft_sum_dim(gy4, dims, 3, false, (weft_dtype)-1);
  } else if (x->device == WEFT_DEVICE_META) {
    const weft_tensor* like = b->which == 0 ? x : w;
    r = weft_empty_like(like, like->dtype, WEFT_PRESERVE_FORMAT);
  } else {
    bool cl = weft_tensor_suggest_memory_format(x) == WEFT_CHANNELS_LAST ||
              weft_tensor_suggest_memory_format(w) == WEFT_CHANNELS_LAST;
    weft_memory_format f = cl ? WEFT_CHANNELS_LAST : WEFT_CONTIGUOUS_FORMAT;
    weft_dtype ct = compute_dtype(x->dtype);
    weft_tensor* gyt = weft_to_dtype(gy4, ct, false);
    weft_tensor* gyc = gyt ? weft_contiguous(gyt, f) : NULL;
    weft_tensor* other = gyc ? weft_to_dtype(b->which == 0 ? w : x, ct, false) : NULL;
    if (other) r = grad_of(b->which == 0 ? x : w, ct, f, b->which == 0, &g, gyc, other);
    weft_tensor* tmp[] = {gyt, gyc, other};
    release_all(tmp, 3);
  }
  weft_tensor_release(gy4);
  return r;
}

/* The input's and bias's gradients of a 3-D input run as a batch of one
 * (batchify); the weight's is not squeezed back. */
static weft_tensor* backward(const weft_tensor* input, struct back_args* b) {
  if (b->which == 0 || (input->ndim != 3 && input->ndim != 4)) return weft__conv_batchify(&b->a.k, input, back_body, b);
  weft_tensor* x4 = input->ndim == 3 ? weft_unsqueeze(input, 0) : weft_tensor_retain((weft_tensor*)input);
  weft_tensor* r = x4 ? back_body(x4, b) : NULL;
  weft_tensor_release(x4);
  return r;
}

weft_tensor* weft__conv2d_backward(const weft_tensor* grad_output, const weft_tensor* input, const weft_tensor* weight,
                                   const int64_t* stride, int64_t ns, const int64_t* padding, int64_t np,
                                   const int64_t* dilation, int64_t nd, int64_t groups, int which) {
  struct back_args b = {grad_output, {{"conv2d", 2}, weight, NULL, stride, padding, dilation, ns, np, nd, groups, NULL}, which};
  return backward(input, &b);
}

/* ---- convolution_backward: the op ConvolutionBackward0 calls ---- */

/* The drivers' "conv2d: ..." / "conv_transpose2d: ..." errors, named after the op called. */
static void renamed_error(void) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s", weft_last_error());
  const char* tail = strncmp(msg, "conv2d: ", 8) == 0 ? msg + 8 : msg;
  if (strncmp(msg, "conv_transpose2d: ", 18) == 0) tail = msg + 18;
  weft__error(weft_last_status(), "convolution_backward: %s", tail);
}

/* slow_conv2d's check of grad_output against the forward output, PyTorch's
 * check_dim_size per dim (channels, height, width) */
static weft_status check_grad_dims(const weft_tensor* gy, const weft_tensor* x, const weft_tensor* w,
                                   const conv_params* p) {
  weft_conv2d_geom g;
  const conv_kind k = {"conv2d", 2};
  if (shape_checks(&k, x, w, NULL, p, &g) != WEFT_OK) return weft_last_status();
  const int64_t want[4] = {g.n, g.cout, g.ho, g.wo};
  for (int d = 1; d < 4; d++)
    if (gy->ndim != 4 || gy->sizes[d] != want[d])
      return weft__error(WEFT_INVALID_ARGUMENT,
                         "conv2d: Expected a tensor of dimension 4 and tensor.size[%d] == %lld but got: dimension %d "
                         "and tensor.size[%d] = %lld",
                         d, (long long)want[d], gy->ndim, d, (long long)(d < gy->ndim ? gy->sizes[d] : 0));
  return WEFT_OK;
}

/* The checks before any gradient: a 3-entry mask, 4-D input and weight,
 * then conv2d's parameter, shape and type checks (conv_transpose2d's are
 * weft__conv_transpose2d_backward's own). */
static weft_status backward_checks(const weft_tensor* gy, const weft_tensor* x, const struct list_args* a,
                                   bool transposed, int64_t nm) {
  const weft_tensor* ts[3] = {gy, x, a->w};
  if (weft__webgpu_same_device("conv2d", ts, 3) != WEFT_OK) return weft_last_status();
  if (nm != 3)
    return weft__error(WEFT_INVALID_ARGUMENT, "conv2d: expected outputMask to be a list of 3 booleans, but got %lld",
                       (long long)nm);
  if (a->w->ndim != 4) return weft__error(WEFT_NOT_IMPLEMENTED, "conv2d: only 2-D convolutions (a 4-D weight) are supported");
  if (x->ndim != 4) {
    char bw[160], bx[160];
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "conv2d: Expected 4-dimensional input for 4-dimensional weight %s, but got %d-dimensional "
                       "input of size %s instead",
                       sizes_str(bw, sizeof bw, a->w->sizes, 4), x->ndim, sizes_str(bx, sizeof bx, x->sizes, x->ndim));
  }
  if (transposed) return WEFT_OK; /* conv_transpose2d's own checks, in weft__conv_transpose2d_backward */
  conv_params p;
  if (list_params(a, &p) != WEFT_OK) return weft_last_status();
  if (check_grad_dims(gy, x, a->w, &p) != WEFT_OK || dtype_checks(&a->k, x, a->w, NULL) != WEFT_OK)
    return weft_last_status();
  if (gy->dtype != x->dtype)
    return weft__error(WEFT_INVALID_ARGUMENT, "conv2d: expected grad_output of dtype %s but got %s",
                       weft_dtype_name(x->dtype), weft_dtype_name(gy->dtype));
  return WEFT_OK;
}

static weft_tensor3 convolution_backward_kernel(const weft_tensor* gy, const weft_tensor* x, const weft_tensor* w,
                                                const int64_t* bias_sizes, int64_t nb, const int64_t* stride,
                                                int64_t ns, const int64_t* padding, int64_t np,
                                                const int64_t* dilation, int64_t nd, bool transposed,
                                                const int64_t* output_padding, int64_t nop, int64_t groups,
                                                const bool* mask, int64_t nm) {
  (void)bias_sizes, (void)nb; /* checked by PyTorch only for other backends */
  weft_tensor3 r = {{NULL, NULL, NULL}, WEFT_OK};
  struct list_args a = {{"conv2d", 2}, w, NULL, stride, padding, dilation, ns, np, nd, groups, NULL};
  if (backward_checks(gy, x, &a, transposed, nm) != WEFT_OK) {
    renamed_error();
    r.status = weft_last_status();
    return r;
  }
  for (int i = 0; i < 3 && r.status == WEFT_OK; i++) {
    if (!mask[i]) continue;
    r.t[i] = transposed ? weft__conv_transpose2d_backward(gy, x, w, stride, ns, padding, np, output_padding, nop,
                                                          dilation, nd, groups, i)
                        : weft__conv2d_backward(gy, x, w, stride, ns, padding, np, dilation, nd, groups, i);
    if (!r.t[i]) {
      renamed_error();
      r.status = weft_last_status();
    }
  }
  if (r.status != WEFT_OK) {
    weft_tensor3_release(r);
    r = (weft_tensor3){{NULL, NULL, NULL}, weft_last_status()};
  }
  return r;
}

weft_status weft__conv_register(void) {
  WEFT_KERNEL(convolution_backward, CPU, convolution_backward_kernel);
  WEFT_KERNEL(convolution_backward, META, convolution_backward_kernel);
  WEFT_KERNEL(conv2d, CPU, conv2d_kernel);
  WEFT_KERNEL(conv2d, META, conv2d_kernel);
  WEFT_KERNEL(conv2d_padding, CPU, conv2d_padding_kernel);
  WEFT_KERNEL(conv2d_padding, META, conv2d_padding_kernel);
  WEFT_KERNEL(conv1d, CPU, conv1d_kernel);
  WEFT_KERNEL(conv1d, META, conv1d_kernel);
  WEFT_KERNEL(conv1d_padding, CPU, conv1d_padding_kernel);
  WEFT_KERNEL(conv1d_padding, META, conv1d_padding_kernel);
  WEFT_KERNEL(convolution_backward, WEBGPU, convolution_backward_kernel);
  WEFT_KERNEL(conv2d, WEBGPU, conv2d_kernel);
  WEFT_KERNEL(conv2d_padding, WEBGPU, conv2d_padding_kernel);
  WEFT_KERNEL(conv1d, WEBGPU, conv1d_kernel);
  WEFT_KERNEL(conv1d_padding, WEBGPU, conv1d_padding_kernel);
  return weft__conv_transpose_register();
}
