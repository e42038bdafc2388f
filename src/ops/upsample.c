/* Upsampling (issue 23), what F.interpolate reaches: upsample_nearest1d,
 * _upsample_nearest_exact1d, upsample_linear1d, upsample_nearest2d,
 * _upsample_nearest_exact2d, upsample_bilinear2d, upsample_bicubic2d and
 * their backward ops, CPU and Meta.
 *
 * Checks are PyTorch 1.13's (upsample_1d/2d_common_check, the meta
 * functions' "Non-empty 4D data tensor expected", the backward's
 * grad_output shape), in its words. Formats as PyTorch's: a 4-D input
 * whose suggested format is channels_last gives a channels_last output for
 * nearest, nearest-exact and bilinear (bicubic's output is contiguous), the
 * backward follows grad_output's suggested format. Dtypes as PyTorch's CPU
 * kernels: float32, float64 and bfloat16 (computed in float32), and uint8
 * for the nearest modes. The arithmetic is src/ops/cpu/resize.c's. */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "iter/iter_internal.h"
#include "ops/cpu/resize.h"
#include "ops/ops.h"
#include "ops/resize_internal.h"
#include "weft/explain.h"

#define fail weft__resize_fail
#define LL(v) ((long long)(v))

/* upsample_{1,2}d_common_check over an input size list (the input's sizes,
 * or the backward's input_size), then g */
static weft_status common_check(const char* op, weft_resize_mode mode, int dims, const int64_t* in, int64_t nin,
                                const int64_t* os, int64_t nos, bool ac, double sh, double sw, weft_resize2d* g) {
  if (nos != dims)
    return fail(WEFT_INVALID_ARGUMENT, op, "It is expected output_size equals to %d, but got size %lld", dims, LL(nos));
  if (nin != dims + 2)
    return fail(WEFT_INVALID_ARGUMENT, op, "It is expected input_size equals to %d, but got size %lld", dims + 2,
                LL(nin));
  memset(g, 0, sizeof *g);
  g->mode = mode;
  g->align_corners = ac;
  g->one_d = dims == 1;
  g->n = in[0], g->c = in[1];
  g->h = dims == 1 ? 1 : in[2], g->w = in[nin - 1];
  g->oh = dims == 1 ? 1 : os[0], g->ow = os[nos - 1];
  g->scale_h = dims == 1 ? NAN : sh;
  g->scale_w = sw;
  if (dims == 1 && !(g->w > 0 && g->ow > 0))
    return fail(WEFT_INVALID_ARGUMENT, op,
                "Input and output sizes should be greater than 0, but got input (W: %lld) and output (W: %lld)",
                LL(g->w), LL(g->ow));
  if (dims == 2 && !(g->h > 0 && g->w > 0 && g->oh > 0 && g->ow > 0))
    return fail(WEFT_INVALID_ARGUMENT, op,
                "Input and output sizes should be greater than 0, but got input (H: %lld, W: %lld) output (H: %lld, "
                "W: %lld)", LL(g->h), LL(g->w), LL(g->oh), LL(g->ow));
  return WEFT_OK;
}

static bool nearest(weft_resize_mode m) { return m == WEFT_RESIZE_NEAREST || m == WEFT_RESIZE_NEAREST_EXACT; }

static weft_status dtype_check(const char* op, weft_resize_mode m, bool cl, weft_dtype t, weft_device dev) {
  if (dev == WEFT_DEVICE_META || t == WEFT_FLOAT32 || t == WEFT_FLOAT64 ||
      (t == WEFT_BFLOAT16 && m != WEFT_RESIZE_NEAREST_EXACT) || (t == WEFT_UINT8 && nearest(m)))
    return WEFT_OK;
  const char* what = m == WEFT_RESIZE_LINEAR ? "compute_indices_weights_linear"
                     : m == WEFT_RESIZE_CUBIC ? "compute_indices_weights_cubic"
                     : cl ? "upsample_nearest2d_channels_last" : "compute_indices_weights_nearest";
  return fail(WEFT_TYPE_ERROR, op, "\"%s\" not implemented for '%s'", what, weft_dtype_name(t));
}

/* the format of the result: t's suggested one for a 4-D non-cubic resize */
static weft_memory_format result_format(const weft_tensor* t, weft_resize_mode m) {
  return t->ndim == 4 && m != WEFT_RESIZE_CUBIC && weft_tensor_suggest_memory_format(t) == WEFT_CHANNELS_LAST
             ? WEFT_CHANNELS_LAST
             : WEFT_CONTIGUOUS_FORMAT;
}

static const char* mode_name(weft_resize_mode m) {
  static const char* names[] = {"nearest", "nearest_exact", "linear", "cubic"};
  return names[m];
}

/* y = resize(x) or gx = resize_backward(gy) into dst (dense in g's format),
 * bfloat16 through float32 for the weighted modes */
static weft_status compute(const char* op, const weft_resize2d* g, const weft_tensor* src, weft_tensor* dst,
                           bool backward) {
  if (weft_explaining())
    return weft__explain_kernel(op, "resize", mode_name(g->mode), src->dtype, g->n * g->oh, g->ow * g->c);
  weft_memory_format f = g->channels_last ? WEFT_CHANNELS_LAST : WEFT_CONTIGUOUS_FORMAT;
  bool via_f32 = src->dtype == WEFT_BFLOAT16 && (backward || !nearest(g->mode));
  weft_dtype ct = via_f32 ? WEFT_FLOAT32 : src->dtype;
  weft_tensor* s1 = via_f32 ? weft_to_dtype(src, ct, false) : weft_tensor_retain((weft_tensor*)src);
  weft_tensor* sc = s1 ? weft_contiguous(s1, f) : NULL;
  weft_tensor* dc = via_f32 ? weft_empty(dst->sizes, dst->ndim, ct, dst->device, f) : weft_tensor_retain(dst);
  weft_status s = sc && dc ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && backward) s = weft__resize2d_backward(g, ct, weft_tensor_data_ptr(sc), weft_tensor_data_ptr(dc));
  else if (s == WEFT_OK)
    s = weft__resize2d_run(weft__kernels(), g, ct, weft_tensor_data_ptr(sc), weft_tensor_data_ptr(dc));
  if (s == WEFT_OK && via_f32) s = weft_copy_(dst, dc);
  weft_tensor_release(s1);
  weft_tensor_release(sc);
  weft_tensor_release(dc);
  return s;
}

static weft_tensor* forward(const char* op, weft_resize_mode mode, int dims, const weft_tensor* x, const int64_t* os,
                            int64_t nos, bool ac, double sh, double sw) {
  weft_resize2d g;
  if (common_check(op, mode, dims, x->sizes, x->ndim, os, nos, ac, sh, sw, &g) != WEFT_OK) return NULL;
  if (x->numel == 0 && g.c * g.h * g.w == 0) {
    char buf[160];
    return fail(WEFT_INVALID_ARGUMENT, op, "Non-empty %dD data tensor expected but got a tensor with sizes %s", dims + 2,
                weft__sizes_str(x->sizes, x->ndim, buf, sizeof buf)), NULL;
  }
  weft_memory_format f = result_format(x, mode);
  g.channels_last = f == WEFT_CHANNELS_LAST;
  if (dtype_check(op, mode, g.channels_last, x->dtype, x->device) != WEFT_OK) return NULL;
  int64_t sizes[4] = {g.n, g.c, g.oh, g.ow};
  if (dims == 1) sizes[2] = g.ow;
  weft_tensor* y = weft_empty(sizes, dims + 2, x->dtype, x->device, f);
  if (!y || x->device == WEFT_DEVICE_META || y->numel == 0) return y;
  if (compute(op, &g, x, y, false) != WEFT_OK) {
    weft_tensor_release(y);
    return NULL;
  }
  return y;
}

static weft_tensor* backward(const char* op, weft_resize_mode mode, int dims, const weft_tensor* gy, const int64_t* os,
                             int64_t nos, const int64_t* is, int64_t nis, bool ac, double sh, double sw) {
  weft_resize2d g;
  if (common_check(op, mode, dims, is, nis, os, nos, ac, sh, sw, &g) != WEFT_OK) return NULL;
  if (gy->ndim != dims + 2)
    return fail(WEFT_INVALID_ARGUMENT, op, "Expected grad_output to be a tensor of dimension %d but got: dimension %d",
                dims + 2, gy->ndim), NULL;
  const int64_t want[4] = {g.n, g.c, dims == 1 ? g.ow : g.oh, g.ow};
  for (int i = 0; i < dims + 2; i++)
    if (gy->sizes[i] != want[i])
      return fail(WEFT_INVALID_ARGUMENT, op,
                  "Expected grad_output to have the same shape as output; output.size(%d) = %lld but got "
                  "grad_output.size(%d) = %lld", i, LL(want[i]), i, LL(gy->sizes[i])), NULL;
  weft_dtype t = gy->dtype;
  if (gy->device != WEFT_DEVICE_META && t != WEFT_FLOAT32 && t != WEFT_FLOAT64 && t != WEFT_BFLOAT16)
    return fail(WEFT_TYPE_ERROR, op, "\"%s\" not implemented for '%s'", op, weft_dtype_name(t)), NULL;
  weft_memory_format f = result_format(gy, mode);
  g.channels_last = f == WEFT_CHANNELS_LAST;
  weft_tensor* gx = weft_empty(is, nis, t, gy->device, f);
  if (!gx || gy->device == WEFT_DEVICE_META || gx->numel == 0) return gx;
  if (compute(op, &g, gy, gx, true) != WEFT_OK) {
    weft_tensor_release(gx);
    return NULL;
  }
  return gx;
}

/* ---- the ops ---- */

static weft_tensor* nearest1d_kernel(const weft_tensor* x, const int64_t* os, int64_t nos, double s) {
  return forward("upsample_nearest1d", WEFT_RESIZE_NEAREST, 1, x, os, nos, false, NAN, s);
}
static weft_tensor* nearest_exact1d_kernel(const weft_tensor* x, const int64_t* os, int64_t nos, double s) {
  return forward("_upsample_nearest_exact1d", WEFT_RESIZE_NEAREST_EXACT, 1, x, os, nos, false, NAN, s);
}
static weft_tensor* linear1d_kernel(const weft_tensor* x, const int64_t* os, int64_t nos, bool ac, double s) {
  return forward("upsample_linear1d", WEFT_RESIZE_LINEAR, 1, x, os, nos, ac, NAN, s);
}
static weft_tensor* nearest2d_kernel(const weft_tensor* x, const int64_t* os, int64_t nos, double sh, double sw) {
  return forward("upsample_nearest2d", WEFT_RESIZE_NEAREST, 2, x, os, nos, false, sh, sw);
}
static weft_tensor* nearest_exact2d_kernel(const weft_tensor* x, const int64_t* os, int64_t nos, double sh, double sw) {
  return forward("_upsample_nearest_exact2d", WEFT_RESIZE_NEAREST_EXACT, 2, x, os, nos, false, sh, sw);
}
static weft_tensor* bilinear2d_kernel(const weft_tensor* x, const int64_t* os, int64_t nos, bool ac, double sh,
                                      double sw) {
  return forward("upsample_bilinear2d", WEFT_RESIZE_LINEAR, 2, x, os, nos, ac, sh, sw);
}
static weft_tensor* bicubic2d_kernel(const weft_tensor* x, const int64_t* os, int64_t nos, bool ac, double sh,
                                     double sw) {
  return forward("upsample_bicubic2d", WEFT_RESIZE_CUBIC, 2, x, os, nos, ac, sh, sw);
}

static weft_tensor* nearest1d_bw(const weft_tensor* gy, const int64_t* os, int64_t nos, const int64_t* is, int64_t nis,
                                 double s) {
  return backward("upsample_nearest1d_backward", WEFT_RESIZE_NEAREST, 1, gy, os, nos, is, nis, false, NAN, s);
}
static weft_tensor* nearest_exact1d_bw(const weft_tensor* gy, const int64_t* os, int64_t nos, const int64_t* is,
                                       int64_t nis, double s) {
  return backward("_upsample_nearest_exact1d_backward", WEFT_RESIZE_NEAREST_EXACT, 1, gy, os, nos, is, nis, false, NAN,
                  s);
}
static weft_tensor* linear1d_bw(const weft_tensor* gy, const int64_t* os, int64_t nos, const int64_t* is, int64_t nis,
                                bool ac, double s) {
  return backward("upsample_linear1d_backward", WEFT_RESIZE_LINEAR, 1, gy, os, nos, is, nis, ac, NAN, s);
}
static weft_tensor* nearest2d_bw(const weft_tensor* gy, const int64_t* os, int64_t nos, const int64_t* is, int64_t nis,
                                 double sh, double sw) {
  return backward("upsample_nearest2d_backward", WEFT_RESIZE_NEAREST, 2, gy, os, nos, is, nis, false, sh, sw);
}
static weft_tensor* nearest_exact2d_bw(const weft_tensor* gy, const int64_t* os, int64_t nos, const int64_t* is,
                                       int64_t nis, double sh, double sw) {
  return backward("_upsample_nearest_exact2d_backward", WEFT_RESIZE_NEAREST_EXACT, 2, gy, os, nos, is, nis, false, sh,
                  sw);
}
static weft_tensor* bilinear2d_bw(const weft_tensor* gy, const int64_t* os, int64_t nos, const int64_t* is, int64_t nis,
                                  bool ac, double sh, double sw) {
  return backward("upsample_bilinear2d_backward", WEFT_RESIZE_LINEAR, 2, gy, os, nos, is, nis, ac, sh, sw);
}
static weft_tensor* bicubic2d_bw(const weft_tensor* gy, const int64_t* os, int64_t nos, const int64_t* is, int64_t nis,
                                 bool ac, double sh, double sw) {
  return backward("upsample_bicubic2d_backward", WEFT_RESIZE_CUBIC, 2, gy, os, nos, is, nis, ac, sh, sw);
}

#define REG(op, fn)                \
  WEFT_KERNEL(op, CPU, fn);        \
  WEFT_KERNEL(op, META, fn);

weft_status weft__upsample_register(void) {
  REG(upsample_nearest1d, nearest1d_kernel)
  REG(op__upsample_nearest_exact1d, nearest_exact1d_kernel)
  REG(upsample_linear1d, linear1d_kernel)
  REG(upsample_nearest2d, nearest2d_kernel)
  REG(op__upsample_nearest_exact2d, nearest_exact2d_kernel)
  REG(upsample_bilinear2d, bilinear2d_kernel)
  REG(upsample_bicubic2d, bicubic2d_kernel)
  REG(upsample_nearest1d_backward, nearest1d_bw)
  REG(op__upsample_nearest_exact1d_backward, nearest_exact1d_bw)
  REG(upsample_linear1d_backward, linear1d_bw)
  REG(upsample_nearest2d_backward, nearest2d_bw)
  REG(op__upsample_nearest_exact2d_backward, nearest_exact2d_bw)
  REG(upsample_bilinear2d_backward, bilinear2d_bw)
  REG(upsample_bicubic2d_backward, bicubic2d_bw)
  return WEFT_OK;
}
