/* conv_transpose2d and conv_transpose1d (issue 23): CPU and Meta kernels,
 * and the 2-D gradients for convolution_backward with transposed=true
 * (conv_transpose1d runs, and differentiates, as the 2-D one of height 1).
 *
 * A transposed convolution is the input-gradient of the convolution it
 * transposes, so it runs on the conv2d backward drivers with the roles
 * swapped: "the conv2d" here has conv_transpose2d's output as its input
 * (c = C_out, h x w = H_out x W_out), its input as its output (cout = C_in,
 * ho x wo = H x W) and the same weight, whose PyTorch layout
 * [C_in, C_out / groups, kh, kw] is conv2d's [cout, c / groups, kh, kw].
 *   forward      y  = col2im(W^T x)                   (weft__conv2d_backward_input)
 *   grad input   gx = conv2d(gy, W)                   (weft__conv2d)
 *   grad weight  gW = conv2d's weight gradient with gy as its input and x
 *                     as its output gradient          (weft__conv2d_backward_weight)
 *   grad bias    gb = sum of gy over N, H, W
 *
 * Checks and messages follow PyTorch 1.13 in its order: batchify (3-D or
 * 4-D input), _convolution's parameter expansion, check_shape_forward's
 * transposed branch, the input/weight/bias types, then
 * slow_conv_transpose2d_shape_check (kernel, dilation, output_padding
 * below stride or dilation, a non-empty weight, output size).
 * Output: contiguous whatever the input's format, as 1.13's
 * slow_conv_transpose2d returns it, computed over NCHW (converting a
 * channels_last input costs less than converting the larger output).
 * float32 and float64 run the kernels, bfloat16 through float32. 1.13
 * refuses Half and Bool by its kernel's name; its integer dtypes fail with
 * a non-transposed channel message, which weft replaces by the same
 * kernel-name refusal. */
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "core/internal.h"
#include "iter/iter_internal.h"
#include "kernels/kernels.h"
#include "ops/conv_internal.h"
#include "ops/cpu/conv.h"
#include "ops/ops.h"
#include "weft/parallel.h"

static const conv_kind KIND2 = {"conv_transpose2d", 2};

typedef struct {
  int64_t stride[2], pad[2], out_pad[2], dilation[2], groups;
} tparams;

struct targs {
  const conv_kind* k;
  const weft_tensor *w, *b;
  const int64_t *stride, *padding, *output_padding, *dilation;
  int64_t ns, np, nop, nd, groups;
};

/* _convolution: weight dims, groups, then the int lists expanded */
static weft_status resolve(const struct targs* a, tparams* p) {
  const char* op = a->k->op;
  if (a->w->ndim < 3) return weft__error(WEFT_INVALID_ARGUMENT, "%s: weight should have at least three dimensions", op);
  if (a->groups <= 0) return weft__error(WEFT_INVALID_ARGUMENT, "%s: non-positive groups is not supported", op);
  int dim = a->w->ndim - 2;
  p->groups = a->groups;
  if (weft__conv_expand_param(op, "stride", a->stride, a->ns, dim, 1, p->stride) != WEFT_OK ||
      weft__conv_expand_param(op, "padding", a->padding, a->np, dim, 0, p->pad) != WEFT_OK ||
      weft__conv_expand_param(op, "dilation", a->dilation, a->nd, dim, 1, p->dilation) != WEFT_OK ||
      weft__conv_expand_param(op, "output_padding", a->output_padding, a->nop, dim, 0, p->out_pad) != WEFT_OK)
    return weft_last_status();
  return WEFT_OK;
}

/* check_shape_forward, transposed (x and w with the convolution's dims) */
static weft_status shape_forward(const conv_kind* k, const weft_tensor* x, const weft_tensor* w, const weft_tensor* b,
                                 const tparams* p) {
  char bw[160], bx[160], bb[160];
  const char* op = k->op;
  if (weft__conv_check_weight_dim(k, x, w, " ") != WEFT_OK) return weft_last_status();
  for (int i = 0; i < 2; i++) {
    if (p->pad[i] < 0) return weft__error(WEFT_INVALID_ARGUMENT, "%s: negative padding is not supported", op);
  }
  for (int i = 0; i < 2; i++) {
    if (p->out_pad[i] < 0) return weft__error(WEFT_INVALID_ARGUMENT, "%s: negative output_padding is not supported", op);
  }
  for (int i = 0; i < 2; i++) {
    if (p->stride[i] <= 0) return weft__error(WEFT_INVALID_ARGUMENT, "%s: non-positive stride is not supported", op);
  }
  if (weft__conv_check_groups(op, w, p->groups) != WEFT_OK) return weft_last_status();
  weft__sizes_str(w->sizes, w->ndim, bw, sizeof bw);
  if (x->sizes[1] != w->sizes[0])
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: Given transposed=1, weight of size %s, expected input%s to have %lld channels, but got "
                       "%lld channels instead",
                       op, bw, weft__sizes_str(x->sizes, x->ndim, bx, sizeof bx), (long long)w->sizes[0],
                       (long long)x->sizes[1]);
  if (b && (b->ndim != 1 || b->sizes[0] != w->sizes[1] * p->groups))
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: Given transposed=1, weight of size %s, expected bias to be 1-dimensional with %lld "
                       "elements, but got bias of size %s instead",
                       op, bw, (long long)(w->sizes[1] * p->groups),
                       weft__sizes_str(b->sizes, b->ndim, bb, sizeof bb));
  return WEFT_OK;
}

static weft_status dtype_checks(const char* op, const weft_tensor* x, const weft_tensor* w, const weft_tensor* b) {
  const weft_tensor* other = x->dtype != w->dtype ? w : b && b->dtype != x->dtype ? b : NULL;
  if (other)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: expected scalar type %s but found %s", op,
                       weft_dtype_name(x->dtype), weft_dtype_name(other->dtype));
  if (!weft_dtype_is_floating(x->dtype) || x->dtype == WEFT_FLOAT16)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: \"slow_conv_transpose2d_out_cpu\" not implemented for '%s'", op,
                       weft_dtype_name(x->dtype));
  return WEFT_OK;
}

/* slow_conv_transpose2d_shape_check (x, w 4-D: a 1-D convolution's views
 * of height 1, as 1.13 checks them); fills g (the conv2d this transposes) */
static weft_status slow_shape_check(const char* name, const weft_tensor* x, const weft_tensor* w, const tparams* p,
                                    weft_conv2d_geom* g) {
  const int64_t *s = p->stride, *d = p->dilation, *op = p->out_pad, kh = w->sizes[2], kw = w->sizes[3];
  if (kh <= 0 || kw <= 0)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: kernel size should be greater than zero, but got kernel_height: %lld kernel_width: %lld",
                       name, (long long)kh, (long long)kw);
  if (d[0] <= 0 || d[1] <= 0)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: dilation should be greater than zero, but got dilation_height: %lld, dilation_width: %lld",
                       name, (long long)d[0], (long long)d[1]);
  if (!((op[1] < s[1] || op[1] < d[1]) && (op[0] < s[0] || op[0] < d[0])))
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: output padding must be smaller than either stride or dilation, but got "
                          "output_padding_height: %lld output_padding_width: %lld stride_height: %lld stride_width: "
                          "%lld dilation_height: %lld dilation_width: %lld",
                       name, (long long)op[0], (long long)op[1], (long long)s[0], (long long)s[1], (long long)d[0],
                       (long long)d[1]);
  if (weft_tensor_numel(w) == 0) {
    char bw[160];
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: non-empty 2D or 4D weight tensor expected, but got: %s", name,
                       weft__sizes_str(w->sizes, 4, bw, sizeof bw));
  }
  int64_t out[2];
  for (int i = 0; i < 2; i++)
    out[i] = (x->sizes[2 + i] - 1) * s[i] - 2 * p->pad[i] + d[i] * (w->sizes[2 + i] - 1) + 1 + op[i];
  if (out[0] < 1 || out[1] < 1)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: Given input size per channel: (%lld x %lld). Calculated output size per channel: "
                       "(%lld x %lld). Output size is too small",
                       name, (long long)x->sizes[2], (long long)x->sizes[3], (long long)out[0], (long long)out[1]);
  *g = (weft_conv2d_geom){x->sizes[0], w->sizes[1] * p->groups, out[0], out[1], w->sizes[0], kh, kw, s[0], s[1],
                          p->pad[0], p->pad[1], d[0], d[1], p->groups, x->sizes[2], x->sizes[3],
                          {0, 0, 0, 0}};
  return WEFT_OK;
}

/* The checks before the slow path's, in 1.13's order */
static weft_status checks(const struct targs* a, const weft_tensor* x, const weft_tensor* b, tparams* p) {
  if (resolve(a, p) != WEFT_OK || shape_forward(a->k, x, a->w, b, p) != WEFT_OK ||
      dtype_checks(a->k->op, x, a->w, b) != WEFT_OK)
    return weft_last_status();
  return WEFT_OK;
}

/* explain()'s plan: per image and group, the GEMM W^T [Coutg*kh*kw, Cin_g] x [Cin_g, H*W], then col2im */
static weft_status record_plan(const char* op, const weft_conv2d_geom* g, const tparams* p, weft_dtype t) {
  weft__strbuf s = {0};
  int64_t cin_g = g->cout / g->groups, cout_g = g->c / g->groups;
  weft__strbuf_put(&s, "{\"op\":\"%s\",\"algorithm\":\"gemm_col2im_nchw\",\"memory_format\":\"%s\","
                       "\"dtype\":\"%s\",\"compute_dtype\":\"%s\",",
                   op, weft_memory_format_name(WEFT_CONTIGUOUS_FORMAT), weft_dtype_name(t),
                   weft_dtype_name(weft__conv_compute_dtype(t)));
  weft__strbuf_put(&s, "\"input\":[%lld,%lld,%lld,%lld],\"weight\":[%lld,%lld,%lld,%lld],\"output\":[%lld,%lld,%lld,%lld],",
                   (long long)g->n, (long long)g->cout, (long long)g->ho, (long long)g->wo, (long long)g->cout,
                   (long long)cout_g, (long long)g->kh, (long long)g->kw, (long long)g->n, (long long)g->c,
                   (long long)g->h, (long long)g->w);
  weft__strbuf_put(&s, "\"stride\":[%lld,%lld],\"padding\":[%lld,%lld],\"output_padding\":[%lld,%lld],"
                       "\"dilation\":[%lld,%lld],\"groups\":%lld,",
                   (long long)g->sh, (long long)g->sw, (long long)g->ph, (long long)g->pw, (long long)p->out_pad[0],
                   (long long)p->out_pad[1], (long long)g->dh, (long long)g->dw, (long long)g->groups);
  weft__strbuf_put(&s, "\"gemm\":{\"m\":%lld,\"n\":%lld,\"k\":%lld,\"count\":%lld},\"threads\":%d}",
                   (long long)(cout_g * g->kh * g->kw), (long long)(g->ho * g->wo), (long long)cin_g,
                   (long long)(g->groups * g->n), weft_get_num_threads());
  return weft__explain_record_json(weft__strbuf_finish(&s, "explain"));
}

/* y += bias over channels (y contiguous NCHW) */
static weft_status add_bias(weft_tensor* y, const weft_tensor* b) {
  const int64_t shape[3] = {b->sizes[0], 1, 1};
  weft_tensor* b3 = weft_reshape(b, shape, 3);
  weft_status s = b3 ? weft_add_(y, b3, weft_scalar_int(1)) : weft_last_status();
  weft_tensor_release(b3);
  return s;
}

/* x, w 4-D, checked: the contiguous result */
static weft_tensor* run(const char* op, const weft_tensor* x, const weft_tensor* w, const weft_tensor* b,
                        const tparams* p, const weft_conv2d_geom* g) {
  weft_dtype t = x->dtype, ct = weft__conv_compute_dtype(t);
  const int64_t sizes[4] = {g->n, g->c, g->h, g->w};
  if (x->device == WEFT_DEVICE_META) return weft_empty(sizes, 4, t, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  if (weft_explaining())
    return record_plan(op, g, p, t) == WEFT_OK ? weft_empty(sizes, 4, t, x->device, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_tensor* xt = weft_to_dtype(x, ct, false);
  weft_tensor* wt = xt ? weft_to_dtype(w, ct, false) : NULL;
  weft_tensor* xc = wt ? weft_contiguous(xt, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_tensor* wc = xc ? weft_contiguous(wt, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_tensor* y = wc ? weft_empty(sizes, 4, ct, x->device, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_status s = y ? weft__conv2d_backward_input(weft__kernels(), ct, false, g, weft_tensor_data_ptr(xc),
                                                  weft_tensor_data_ptr(wc), weft_tensor_data_ptr(y))
                    : weft_last_status();
  weft_tensor* bt = s == WEFT_OK && b ? weft_to_dtype(b, ct, false) : NULL;
  if (s == WEFT_OK && b) s = bt ? add_bias(y, bt) : weft_last_status();
  weft_tensor* r = s == WEFT_OK ? (ct == t ? weft_tensor_retain(y) : weft_to_dtype(y, t, false)) : NULL;
  weft_tensor* tmp[] = {xt, wt, xc, wc, y, bt};
  for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) weft_tensor_release(tmp[i]);
  return r;
}

/* A 1-D convolution runs on views of height 1, its input contiguous first
 * (1.13's view4d); the slow path's checks see those views, as in 1.13. */
static weft_tensor* body(const weft_tensor* x, const void* ctx) {
  const struct targs* a = ctx;
  const char* op = a->k->op;
  tparams p;
  weft_conv2d_geom g;
  if (checks(a, x, a->b, &p) != WEFT_OK) return NULL;
  if (a->k->dim == 2) return slow_shape_check(op, x, a->w, &p, &g) == WEFT_OK ? run(op, x, a->w, a->b, &p, &g) : NULL;
  weft_tensor* xc = weft_contiguous(x, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* x4 = xc ? weft_unsqueeze(xc, 2) : NULL;
  weft_tensor* w4 = x4 ? weft_unsqueeze(a->w, 2) : NULL;
  weft_tensor* y4 = w4 && slow_shape_check(op, x4, w4, &p, &g) == WEFT_OK ? run(op, x4, w4, a->b, &p, &g) : NULL;
  weft_tensor* y = y4 ? weft_squeeze_dim(y4, 2) : NULL;
  weft_tensor* tmp[] = {xc, x4, w4, y4};
  for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) weft_tensor_release(tmp[i]);
  return y;
}

static weft_tensor* conv_transpose(const conv_kind* k, const weft_tensor* input, const weft_tensor* weight,
                                   const weft_tensor* bias, const int64_t* stride, int64_t ns, const int64_t* padding,
                                   int64_t np, const int64_t* output_padding, int64_t nop, int64_t groups,
                                   const int64_t* dilation, int64_t nd) {
  struct targs a = {k, weight, bias, stride, padding, output_padding, dilation, ns, np, nop, nd, groups};
  return weft__conv_batchify(k, input, body, &a);
}

static weft_tensor* conv_transpose2d_kernel(const weft_tensor* input, const weft_tensor* weight,
                                            const weft_tensor* bias, const int64_t* stride, int64_t ns,
                                            const int64_t* padding, int64_t np, const int64_t* output_padding,
                                            int64_t nop, int64_t groups, const int64_t* dilation, int64_t nd) {
  return conv_transpose(&KIND2, input, weight, bias, stride, ns, padding, np, output_padding, nop, groups, dilation,
                        nd);
}

static weft_tensor* conv_transpose1d_kernel(const weft_tensor* input, const weft_tensor* weight,
                                            const weft_tensor* bias, const int64_t* stride, int64_t ns,
                                            const int64_t* padding, int64_t np, const int64_t* output_padding,
                                            int64_t nop, int64_t groups, const int64_t* dilation, int64_t nd) {
  static const conv_kind k1 = {"conv_transpose1d", 1};
  return conv_transpose(&k1, input, weight, bias, stride, ns, padding, np, output_padding, nop, groups, dilation, nd);
}

/* ---- the gradients (convolution_backward, transposed) ---- */

/* grad_output must have the forward output's shape */
static weft_status check_grad_output(const weft_tensor* gy, const weft_tensor* x, const weft_conv2d_geom* g) {
  const int64_t want[4] = {g->n, g->c, g->h, g->w};
  if (gy->ndim == 4 && memcmp(gy->sizes, want, sizeof want) == 0) {
    if (gy->dtype == x->dtype) return WEFT_OK;
    return weft__error(WEFT_INVALID_ARGUMENT, "conv_transpose2d: expected grad_output of dtype %s but got %s",
                       weft_dtype_name(x->dtype), weft_dtype_name(gy->dtype));
  }
  char bg[160], bw[160];
  return weft__error(WEFT_INVALID_ARGUMENT, "conv_transpose2d: expected grad_output of size %s but got %s",
                     weft__sizes_str(want, 4, bw, sizeof bw), weft__sizes_str(gy->sizes, gy->ndim, bg, sizeof bg));
}

/* The input's (conv2d of gy) or the weight's gradient over NCHW, in like's layout. */
static weft_tensor* grad_of(const weft_tensor* like, weft_dtype ct, bool input, weft_conv2d_geom* g,
                            const weft_tensor* gyc, const weft_tensor* other) {
  weft_tensor* oc = weft_contiguous(other, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* r = oc ? weft_empty(like->sizes, 4, ct, like->device, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_status s = r ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && input) {
    for (int i = 0; i < 4; i++) g->ws[i] = oc->strides[i];
    s = weft__conv2d(weft__kernels(), ct, weft__conv2d_pick(g, false), g, weft_tensor_data_ptr(gyc),
                     weft_tensor_data_ptr(oc), NULL, weft_tensor_data_ptr(r));
  } else if (s == WEFT_OK) {
    s = weft__conv2d_backward_weight(weft__kernels(), ct, false, g, weft_tensor_data_ptr(oc), weft_tensor_data_ptr(gyc),
                                     weft_tensor_data_ptr(r));
  }
  weft_tensor* out = s == WEFT_OK ? weft__conv_in_layout_of(like, r) : NULL;
  weft_tensor_release(oc);
  weft_tensor_release(r);
  return out;
}

static weft_tensor* gradient(const weft_tensor* gy, const weft_tensor* x, const weft_tensor* w, weft_conv2d_geom* g,
                             int which) {
  if (which == 2) {
    const int64_t dims[3] = {0, 2, 3};
    return weft_sum_dim(gy, dims, 3, false, (weft_dtype)-1);
  }
  const weft_tensor* like = which == 0 ? x : w;
  if (x->device == WEFT_DEVICE_META) return weft_empty_like(like, like->dtype, WEFT_PRESERVE_FORMAT);
  weft_dtype ct = weft__conv_compute_dtype(x->dtype);
  weft_tensor* gyt = weft_to_dtype(gy, ct, false);
  weft_tensor* gyc = gyt ? weft_contiguous(gyt, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_tensor* other = gyc ? weft_to_dtype(which == 0 ? w : x, ct, false) : NULL;
  weft_tensor* r = other ? grad_of(like, ct, which == 0, g, gyc, other) : NULL;
  weft_tensor_release(gyt);
  weft_tensor_release(gyc);
  weft_tensor_release(other);
  return r;
}

weft_tensor* weft__conv_transpose2d_backward(const weft_tensor* grad_output, const weft_tensor* input,
                                             const weft_tensor* weight, const int64_t* stride, int64_t ns,
                                             const int64_t* padding, int64_t np, const int64_t* output_padding,
                                             int64_t nop, const int64_t* dilation, int64_t nd, int64_t groups,
                                             int which) {
  struct targs a = {&KIND2, weight, NULL, stride, padding, output_padding, dilation, ns, np, nop, nd, groups};
  tparams p;
  weft_conv2d_geom g;
  if (checks(&a, input, NULL, &p) != WEFT_OK || slow_shape_check(KIND2.op, input, weight, &p, &g) != WEFT_OK ||
      check_grad_output(grad_output, input, &g) != WEFT_OK)
    return NULL;
  return gradient(grad_output, input, weight, &g, which);
}

weft_status weft__conv_transpose_register(void) {
  WEFT_KERNEL(conv_transpose2d, CPU, conv_transpose2d_kernel);
  WEFT_KERNEL(conv_transpose2d, META, conv_transpose2d_kernel);
  WEFT_KERNEL(conv_transpose1d, CPU, conv_transpose1d_kernel);
  WEFT_KERNEL(conv_transpose1d, META, conv_transpose1d_kernel);
  return WEFT_OK;
}
