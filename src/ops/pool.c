/* 2-D pooling (issue 12): max_pool2d, avg_pool2d (+ out=),
 * adaptive_avg_pool2d (+ out=) and _adaptive_avg_pool2d, CPU and Meta.
 *
 * The checks are PyTorch 1.13's (max_pool2d_with_indices' and avg_pool2d's
 * meta functions, pooling_output_shape, pool2d_shape_check, the adaptive
 * template), in its order and words, with "an array" for "a tuple". The
 * output takes the input's suggest_memory_format (channels_last for an NHWC
 * 4-D input, else contiguous), and the input is made dense in that format
 * first, so the driver (src/ops/cpu/pool.c) sees NCHW or NHWC. bfloat16
 * runs through float32 (PyTorch's CPU kernels accumulate in float); int64
 * avg runs the reference loop; Half, Bool and the other integers are
 * refused as AT_DISPATCH does. explain() reports the path the driver takes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "core/internal.h"
#include "iter/iter_internal.h"
#include "kernels/kernels.h"
#include "ops/cpu/pool.h"
#include "ops/ops.h"
#include "ops/webgpu_ops.h"
#include "weft/parallel.h"

/* A PyTorch message, prefixed with the op's name unless it starts with it. */
static weft_status fail(weft_status s, const char* op, const char* fmt, ...) WEFT__PRINTF(3, 4);
static weft_status fail(weft_status s, const char* op, const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t n = strlen(op);
  if (strncmp(msg, op, n) == 0 && (msg[n] == ':' || msg[n] == '(')) return weft__error(s, "%s", msg);
  return weft__error(s, "%s: %s", op, msg);
}

static const char* sizes_str(const weft_tensor* t, char* buf, size_t cap) {
  return weft__sizes_str(t->sizes, t->ndim, buf, cap);
}

/* ---- arguments ---- */

/* The int[2] lists: one value stands for both dims; an empty stride is the kernel. */
static weft_status parse_lists(const char* op, bool max, const int64_t* k, int64_t kn, const int64_t* s, int64_t sn,
                               const int64_t* p, int64_t pn, const int64_t* d, int64_t dn, weft_pool2d* g) {
  const char* name = max ? "max_pool2d" : "avg_pool2d";
  if (kn != 1 && kn != 2)
    return fail(WEFT_INVALID_ARGUMENT, op, "%s: kernel_size must either be a single int, or an array of two ints", name);
  g->kh = k[0];
  g->kw = kn == 1 ? g->kh : k[1];
  if (sn > 2)
    return fail(WEFT_INVALID_ARGUMENT, op,
                "%s: stride must either be omitted, a single int, or an array of two ints", name);
  g->sh = sn == 0 ? g->kh : s[0];
  g->sw = sn == 0 ? g->kw : sn == 1 ? g->sh : s[1];
  if (pn != 1 && pn != 2)
    return fail(WEFT_INVALID_ARGUMENT, op, "%s: padding must %s a single int, or an array of two ints", name,
                max ? "be either be" : "either be");
  g->ph = p[0];
  g->pw = pn == 1 ? g->ph : p[1];
  g->dh = g->dw = 1;
  if (max) {
    if (dn != 1 && dn != 2)
      return fail(WEFT_INVALID_ARGUMENT, op, "max_pool2d: dilation must be either a single int, or an array of two ints");
    g->dh = d[0];
    g->dw = dn == 1 ? g->dh : d[1];
  }
  const int64_t v[8] = {g->kh, g->kw, g->sh, g->sw, g->ph, g->pw, g->dh, g->dw};
  for (int i = 0; i < 8; i++)
    if (v[i] > INT32_MAX || v[i] < INT32_MIN) return fail(WEFT_OVERFLOW, op, "integer out of range");
  return WEFT_OK;
}

/* floor(a / b) for b != 0 (div_rtn) */
static int64_t div_floor(int64_t a, int64_t b) {
  int64_t q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}

/* pooling_output_shape: checks, then the size; ceil_mode's last window must
 * start inside the input or its left padding. */
static weft_status out_len(const char* op, int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d, bool ceil,
                           int64_t* out) {
  if (s == 0) return fail(WEFT_INVALID_ARGUMENT, op, "stride should not be zero");
  if (pad < 0) return fail(WEFT_INVALID_ARGUMENT, op, "pad must be non-negative, but got pad: %lld", (long long)pad);
  if (pad > k / 2)
    return fail(WEFT_INVALID_ARGUMENT, op, "pad should be at most half of kernel size, but got pad=%lld and kernel_size=%lld",
                (long long)pad, (long long)k);
  int64_t o = div_floor(in + 2 * pad - d * (k - 1) - 1 + (ceil ? s - 1 : 0), s) + 1;
  if (ceil && (o - 1) * s >= in + pad) o--;
  *out = o;
  return WEFT_OK;
}

/* pool2d_shape_check */
static weft_status shape_check(const char* op, const weft_tensor* x, const weft_pool2d* g, bool cl) {
  char buf[160];
  if (g->kw <= 0 || g->kh <= 0)
    return fail(WEFT_INVALID_ARGUMENT, op, "kernel size should be greater than zero, but got kH: %lld kW: %lld",
                (long long)g->kh, (long long)g->kw);
  if (g->sw <= 0 || g->sh <= 0)
    return fail(WEFT_INVALID_ARGUMENT, op, "stride should be greater than zero, but got dH: %lld dW: %lld",
                (long long)g->sh, (long long)g->sw);
  if (g->dh <= 0 || g->dw <= 0)
    return fail(WEFT_INVALID_ARGUMENT, op, "dilation should be greater than zero, but got dilationH: %lld dilationW: %lld",
                (long long)g->dh, (long long)g->dw);
  const int nd = x->ndim;
  bool valid = x->sizes[1] != 0 && x->sizes[2] != 0;
  if (cl && !(nd == 4 && valid && x->sizes[3] != 0))
    return fail(WEFT_INVALID_ARGUMENT, op,
                "Expected 4D (batch mode) tensor expected for input with channels_last layout with optional 0 dim "
                "batch size for input, but got: %s", sizes_str(x, buf, sizeof buf));
  if (!cl && !((nd == 3 && x->sizes[0] != 0 && valid) || (nd == 4 && valid && x->sizes[3] != 0)))
    return fail(WEFT_INVALID_ARGUMENT, op,
                "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:%s",
                sizes_str(x, buf, sizeof buf));
  if (g->kw / 2 < g->pw || g->kh / 2 < g->ph)
    return fail(WEFT_INVALID_ARGUMENT, op,
                "pad should be smaller than or equal to half of kernel size, but got padW = %lld, padH = %lld, "
                "kW = %lld, kH = %lld", (long long)g->pw, (long long)g->ph, (long long)g->kw, (long long)g->kh);
  if (g->ow < 1 || g->oh < 1)
    return fail(WEFT_INVALID_ARGUMENT, op,
                "Given input size: (%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lld). Output size is too small",
                (long long)g->c, (long long)g->h, (long long)g->w, (long long)g->c, (long long)g->oh,
                (long long)g->ow);
  return WEFT_OK;
}

/* Input dims (n = 1 unbatched) and the memory format (channels_last only for 4-D). */
static void take_dims(const weft_tensor* x, weft_pool2d* g) {
  int nd = x->ndim;
  g->n = nd == 4 ? x->sizes[0] : 1;
  g->c = x->sizes[nd - 3];
  g->h = x->sizes[nd - 2];
  g->w = x->sizes[nd - 1];
  g->channels_last = nd == 4 && weft_tensor_suggest_memory_format(x) == WEFT_CHANNELS_LAST;
}

static weft_status output_lens(const char* op, const weft_tensor* x, weft_pool2d* g, bool ceil) {
  if (out_len(op, g->h, g->kh, g->ph, g->sh, g->dh, ceil, &g->oh) != WEFT_OK) return weft_last_status();
  if (out_len(op, g->w, g->kw, g->pw, g->sw, g->dw, ceil, &g->ow) != WEFT_OK) return weft_last_status();
  return shape_check(op, x, g, g->channels_last);
}

/* ---- running ---- */

static bool dtype_ok(weft_pool_kind kind, weft_dtype t) {
  return t == WEFT_FLOAT32 || t == WEFT_FLOAT64 || t == WEFT_BFLOAT16 || (kind == WEFT_POOL_AVG && t == WEFT_INT64);
}

static const char* kind_name(weft_pool_kind k) {
  return k == WEFT_POOL_MAX ? "max_pool2d" : k == WEFT_POOL_AVG ? "avg_pool2d" : "adaptive_avg_pool2d";
}

static weft_status explain_pool(const char* op, const weft_pool2d* g, weft_dtype t, bool indices) {
  weft__strbuf b = {0};
  weft_dtype ct = t == WEFT_BFLOAT16 ? WEFT_FLOAT32 : t;
  weft__strbuf_put(&b, "{\"op\":\"%s\",\"kind\":\"pool2d\",\"path\":\"%s\",\"memoryFormat\":\"%s\",", op,
                   weft__pool2d_path(g, ct, indices), g->channels_last ? "channels_last" : "contiguous_format");
  weft__strbuf_put(&b, "\"dtype\":\"%s\",\"computeDtype\":\"%s\",\"input\":[%lld,%lld,%lld,%lld],", weft_dtype_name(t),
                   weft_dtype_name(ct), (long long)g->n, (long long)g->c, (long long)g->h, (long long)g->w);
  weft__strbuf_put(&b, "\"output\":[%lld,%lld],\"kernel\":[%lld,%lld],\"stride\":[%lld,%lld],", (long long)g->oh,
                   (long long)g->ow, (long long)g->kh, (long long)g->kw, (long long)g->sh, (long long)g->sw);
  weft__strbuf_put(&b, "\"padding\":[%lld,%lld],\"dilation\":[%lld,%lld],\"indices\":%s,\"threads\":%d}",
                   (long long)g->ph, (long long)g->pw, (long long)g->dh, (long long)g->dw, indices ? "true" : "false",
                   weft_get_num_threads());
  return weft__explain_record_json(weft__strbuf_finish(&b, op));
}

/* y (and idx) from self, all of y's shape and format, per g. */
static weft_status compute(const char* op, const weft_pool2d* g, const weft_tensor* self, weft_tensor* y,
                           weft_tensor* idx) {
  if (self->device == WEFT_DEVICE_WEBGPU) return weft__webgpu_pool2d(op, g, self, y, idx); /* pool_webgpu.c */
  if (weft_explaining()) return explain_pool(op, g, self->dtype, idx != NULL);
  if (y->numel == 0) return WEFT_OK;
  weft_memory_format f = g->channels_last ? WEFT_CHANNELS_LAST : WEFT_CONTIGUOUS_FORMAT;
  bool bf16 = self->dtype == WEFT_BFLOAT16;
  weft_tensor* x = bf16 ? weft_to_dtype(self, WEFT_FLOAT32, false) : weft_tensor_retain((weft_tensor*)self);
  weft_tensor* xc = x ? weft_contiguous(x, f) : NULL;
  weft_tensor* yc = bf16 ? weft_empty(y->sizes, y->ndim, WEFT_FLOAT32, y->device, f) : weft_tensor_retain(y);
  weft_status s = xc && yc ? WEFT_OK : weft_last_status();
  const char* path;
  if (s == WEFT_OK)
    s = weft__pool2d_run(weft__kernels(), g, yc->dtype, weft_tensor_data_ptr(xc), weft_tensor_data_ptr(yc),
                         idx ? weft_tensor_data_ptr(idx) : NULL, &path);
  if (s == WEFT_OK && bf16) s = weft_copy_(y, yc);
  weft_tensor_release(x);
  weft_tensor_release(xc);
  weft_tensor_release(yc);
  return s;
}

/* max's indices: int64, or int32 on the webgpu device (WGSL has no 64-bit integers) */
static weft_dtype index_dtype(const weft_tensor* self) {
  return self->device == WEFT_DEVICE_WEBGPU ? WEFT_INT32 : WEFT_INT64;
}

/* The result of g's shape in its format (new), or NULL. */
static weft_tensor* new_result(const weft_tensor* self, const weft_pool2d* g, weft_dtype t) {
  int64_t sizes[4] = {g->n, g->c, g->oh, g->ow};
  bool batched = self->ndim == 4;
  return weft_empty(batched ? sizes : sizes + 1, batched ? 4 : 3, t, self->device,
                    g->channels_last ? WEFT_CHANNELS_LAST : WEFT_CONTIGUOUS_FORMAT);
}

/* The pooling of self into a new tensor, or into out (checked by out_check,
 * resized to the result's shape and format when it differs); a new
 * reference. idx: max's indices, or NULL. */
typedef weft_status out_check_fn(const char* op, const weft_tensor* self, const weft_tensor* out);

/* out= takes r's shape (restrided to r's format when it differs, or always:
 * restride) and r's values. */
static weft_status into_out(const char* op, const weft_tensor* r, weft_tensor* out, bool restride, bool run) {
  weft_status s = WEFT_OK;
  if (restride || out->ndim != r->ndim || memcmp(out->sizes, r->sizes, sizeof(int64_t) * (size_t)r->ndim) != 0)
    s = weft__tensor_resize_(out, r->sizes, r->strides, r->ndim, op);
  if (s == WEFT_OK && run && !weft_explaining()) s = weft_copy_(out, r);
  return s;
}

static weft_tensor* finish(const char* op, const weft_pool2d* g, const weft_tensor* self, weft_tensor* out,
                           out_check_fn* check, weft_tensor** idx) {
  if (out && check && check(op, self, out) != WEFT_OK) return NULL;
  const weft_tensor* ts[2] = {self, out};
  if (weft__webgpu_same_device(op, ts, 2) != WEFT_OK) return NULL;
  weft_tensor* r = new_result(self, g, self->dtype);
  weft_tensor* ix = r && idx ? new_result(self, g, index_dtype(self)) : NULL;
  weft_status s = r && (ix || !idx) ? WEFT_OK : weft_last_status();
  bool run = self->device != WEFT_DEVICE_META;
  if (s == WEFT_OK && run && !dtype_ok(g->kind, self->dtype))
    s = fail(WEFT_TYPE_ERROR, op, "\"%s\" not implemented for '%s'", kind_name(g->kind),
             weft_dtype_name(self->dtype));
  if (s == WEFT_OK && run) s = compute(op, g, self, r, ix);
  if (s == WEFT_OK && out) {
    s = into_out(op, r, out, r->ndim == 4 && g->kind == WEFT_POOL_ADAPTIVE_AVG, run);
    weft_tensor_release(r);
    r = s == WEFT_OK ? weft_tensor_retain(out) : NULL;
  }
  if (s != WEFT_OK) {
    weft_tensor_release(r);
    weft_tensor_release(ix);
    return NULL;
  }
  if (idx) *idx = ix;
  return r;
}

/* ---- max_pool2d ---- */

static weft_status max_meta(const char* op, const weft_tensor* self, const int64_t* k, int64_t kn, const int64_t* s,
                            int64_t sn, const int64_t* p, int64_t pn, const int64_t* d, int64_t dn, bool ceil,
                            weft_pool2d* g) {
  memset(g, 0, sizeof *g);
  g->kind = WEFT_POOL_MAX;
  if (parse_lists(op, true, k, kn, s, sn, p, pn, d, dn, g) != WEFT_OK) return weft_last_status();
  if (self->ndim != 3 && self->ndim != 4)
    return fail(WEFT_INVALID_ARGUMENT, op, "non-empty 3D or 4D (batch mode) tensor expected for input");
  take_dims(self, g);
  return output_lens(op, self, g, ceil);
}

static weft_tensor* max_pool2d_kernel(const weft_tensor* self, const int64_t* k, int64_t kn, const int64_t* s,
                                      int64_t sn, const int64_t* p, int64_t pn, const int64_t* d, int64_t dn,
                                      bool ceil_mode) {
  weft_pool2d g;
  if (max_meta("max_pool2d", self, k, kn, s, sn, p, pn, d, dn, ceil_mode, &g) != WEFT_OK) return NULL;
  return finish("max_pool2d", &g, self, NULL, NULL, NULL);
}

static weft_status same_dtype_out(const char* op, const weft_tensor* self, const weft_tensor* out);

/* max_pool2d_with_indices(.out): values and int64 indices; out= tensors are
 * checked (dtype: self's, and int64) before anything runs. */
static weft_tensor2 with_indices(const weft_tensor* self, const int64_t* k, int64_t kn, const int64_t* s, int64_t sn,
                                 const int64_t* p, int64_t pn, const int64_t* d, int64_t dn, bool ceil_mode,
                                 weft_tensor* out, weft_tensor* indices) {
  const char* op = "max_pool2d_with_indices";
  weft_tensor2 r = {{NULL, NULL}};
  weft_pool2d g;
  if (max_meta(op, self, k, kn, s, sn, p, pn, d, dn, ceil_mode, &g) != WEFT_OK) return r;
  if (out && same_dtype_out(op, self, out) != WEFT_OK) return r;
  const weft_tensor* ts[3] = {self, out, indices};
  if (weft__webgpu_same_device(op, ts, 3) != WEFT_OK) return r;
  if (indices && indices->dtype != index_dtype(self)) {
    fail(WEFT_INVALID_ARGUMENT, op, "Expected out tensor to have dtype %s, but got %s instead",
         weft_dtype_name(index_dtype(self)), weft_dtype_name(indices->dtype));
    return r;
  }
  r.t[0] = finish(op, &g, self, out, NULL, &r.t[1]);
  if (r.t[0] && indices) {
    weft_status st = into_out(op, r.t[1], indices, false, self->device != WEFT_DEVICE_META);
    weft_tensor_release(r.t[1]);
    r.t[1] = st == WEFT_OK ? weft_tensor_retain(indices) : NULL;
    if (!r.t[1]) {
      weft_tensor_release(r.t[0]);
      r.t[0] = NULL;
    }
  }
  return r;
}

static weft_tensor2 max_pool2d_with_indices_kernel(const weft_tensor* self, const int64_t* k, int64_t kn,
                                                   const int64_t* s, int64_t sn, const int64_t* p, int64_t pn,
                                                   const int64_t* d, int64_t dn, bool ceil_mode) {
  return with_indices(self, k, kn, s, sn, p, pn, d, dn, ceil_mode, NULL, NULL);
}

static weft_tensor2 max_pool2d_with_indices_out_kernel(const weft_tensor* self, const int64_t* k, int64_t kn,
                                                       const int64_t* s, int64_t sn, const int64_t* p, int64_t pn,
                                                       const int64_t* d, int64_t dn, bool ceil_mode, weft_tensor* out,
                                                       weft_tensor* indices) {
  return with_indices(self, k, kn, s, sn, p, pn, d, dn, ceil_mode, out, indices);
}

/* ---- avg_pool2d ---- */

static weft_status avg_meta(const char* op, const weft_tensor* self, const int64_t* k, int64_t kn, const int64_t* s,
                            int64_t sn, const int64_t* p, int64_t pn, bool ceil, bool count_include_pad,
                            int64_t divisor_override, weft_pool2d* g) {
  memset(g, 0, sizeof *g);
  g->kind = WEFT_POOL_AVG;
  g->count_include_pad = count_include_pad;
  if (parse_lists(op, false, k, kn, s, sn, p, pn, NULL, 0, g) != WEFT_OK) return weft_last_status();
  bool has_div = divisor_override != INT64_MIN;
  if (has_div && divisor_override == 0) return fail(WEFT_INVALID_ARGUMENT, op, "divisor must be not zero");
  g->divisor_override = has_div ? divisor_override : 0;
  if (self->ndim == 0) return fail(WEFT_INDEX_ERROR, op, "Dimension specified as -3 but tensor has no dimensions");
  int64_t dim;
  if (!weft__wrap_dim(op, -3, self->ndim, &dim)) return weft_last_status();
  take_dims(self, g);
  g->channels_last = self->ndim == 4 && weft_tensor_suggest_memory_format(self) == WEFT_CHANNELS_LAST;
  return output_lens(op, self, g, ceil);
}

static weft_status same_dtype_out(const char* op, const weft_tensor* self, const weft_tensor* out) {
  if (out->dtype != self->dtype)
    return fail(WEFT_INVALID_ARGUMENT, op, "Expected out tensor to have dtype %s, but got %s instead",
                weft_dtype_name(self->dtype), weft_dtype_name(out->dtype));
  return WEFT_OK;
}

static weft_tensor* avg_impl(const weft_tensor* self, const int64_t* k, int64_t kn, const int64_t* s, int64_t sn,
                             const int64_t* p, int64_t pn, bool ceil_mode, bool count_include_pad,
                             int64_t divisor_override, weft_tensor* out) {
  weft_pool2d g;
  if (avg_meta("avg_pool2d", self, k, kn, s, sn, p, pn, ceil_mode, count_include_pad, divisor_override, &g) != WEFT_OK)
    return NULL;
  return finish("avg_pool2d", &g, self, out, same_dtype_out, NULL);
}

static weft_tensor* avg_pool2d_kernel(const weft_tensor* self, const int64_t* k, int64_t kn, const int64_t* s,
                                      int64_t sn, const int64_t* p, int64_t pn, bool ceil_mode, bool count_include_pad,
                                      int64_t divisor_override) {
  return avg_impl(self, k, kn, s, sn, p, pn, ceil_mode, count_include_pad, divisor_override, NULL);
}

static weft_tensor* avg_pool2d_out_kernel(const weft_tensor* self, const int64_t* k, int64_t kn, const int64_t* s,
                                          int64_t sn, const int64_t* p, int64_t pn, bool ceil_mode,
                                          bool count_include_pad, int64_t divisor_override, weft_tensor* out) {
  return avg_impl(self, k, kn, s, sn, p, pn, ceil_mode, count_include_pad, divisor_override, out);
}

/* ---- adaptive_avg_pool2d ---- */

static weft_status check_output_size(const char* op, const int64_t* os, int64_t n) {
  if (n != 2) return fail(WEFT_INVALID_ARGUMENT, op, "adaptive_avg_pool2d: output_size must be 2");
  if (os[0] < 0 || os[1] < 0)
    return fail(WEFT_INVALID_ARGUMENT, op,
                "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received "
                "{%lld, %lld}", (long long)os[0], (long long)os[1]);
  return WEFT_OK;
}

static weft_status adaptive_out_check(const char* op, const weft_tensor* self, const weft_tensor* out) {
  if (out->dtype != self->dtype)
    return fail(WEFT_INVALID_ARGUMENT, op, "expected dtype %s for `output` but got dtype %s",
                weft_dtype_name(self->dtype), weft_dtype_name(out->dtype));
  return WEFT_OK;
}

static weft_tensor* adaptive_impl(const char* op, const weft_tensor* self, const int64_t* os, int64_t n,
                                  weft_tensor* out) {
  if (check_output_size(op, os, n) != WEFT_OK) return NULL;
  char buf[160];
  int nd = self->ndim;
  if (nd != 3 && nd != 4)
    return fail(WEFT_INVALID_ARGUMENT, op, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got %s",
                sizes_str(self, buf, sizeof buf)),
           NULL;
  for (int i = -2; i < 0; i++)
    if (self->sizes[nd + i] <= 0)
      return fail(WEFT_INVALID_ARGUMENT, op,
                  "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input "
                  "has sizes %s with dimension %d being empty", sizes_str(self, buf, sizeof buf), nd + i),
             NULL;
  weft_pool2d g;
  memset(&g, 0, sizeof g);
  g.kind = WEFT_POOL_ADAPTIVE_AVG;
  take_dims(self, &g);
  g.oh = os[0];
  g.ow = os[1];
  return finish(op, &g, self, out, adaptive_out_check, NULL);
}

static weft_tensor* adaptive_avg_pool2d_out_kernel(const weft_tensor* self, const int64_t* os, int64_t n,
                                                   weft_tensor* out) {
  return adaptive_impl("adaptive_avg_pool2d", self, os, n, out);
}

static weft_tensor* adaptive_private_kernel(const weft_tensor* self, const int64_t* os, int64_t n) {
  return adaptive_impl("_adaptive_avg_pool2d", self, os, n, NULL);
}

/* PyTorch's composite: a 1 x 1 output is the mean over H and W; for an
 * NHWC input PyTorch restrides that mean to channels_last (as_strided_ to
 * strides (C, 1, C, C)). Here the mean is taken over the NHWC view and
 * permuted back, which gives the same strides through differentiable views
 * (an as_strided would have no derivative). */
static weft_tensor* adaptive_avg_pool2d_kernel(const weft_tensor* self, const int64_t* os, int64_t n) {
  if (check_output_size("adaptive_avg_pool2d", os, n) != WEFT_OK) return NULL;
  if (os[0] != 1 || os[1] != 1) return weft_op__adaptive_avg_pool2d(self, os, n);
  const int64_t dims[2] = {-1, -2}, nhwc_dims[2] = {1, 2}, to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
  if (weft_tensor_suggest_memory_format(self) != WEFT_CHANNELS_LAST)
    return weft_mean_dim(self, dims, 2, true, (weft_dtype)-1);
  weft_tensor* v = weft_permute(self, to_nhwc, 4);
  weft_tensor* m = v ? weft_mean_dim(v, nhwc_dims, 2, true, (weft_dtype)-1) : NULL;
  weft_tensor* r = m ? weft_permute(m, to_nchw, 4) : NULL;
  weft_tensor_release(v);
  weft_tensor_release(m);
  return r;
}

/* ---- backward (the formulas' ops): grad_output has the output's shape ---- */

/* check_dim_size on grad_output's last three dims */
static weft_status grad_shape_check(const char* op, const weft_tensor* t, const weft_pool2d* g, int nd) {
  const int64_t want[3] = {g->c, g->oh, g->ow};
  for (int i = 0; i < 3; i++) {
    int d = nd - 3 + i;
    if (t->ndim != nd || t->sizes[d] != want[i])
      return fail(WEFT_INVALID_ARGUMENT, op,
                  "Expected a tensor of dimension %d and tensor.size[%d] == %lld but got: dimension %d and "
                  "tensor.size[%d] = %lld", nd, d, (long long)want[i], t->ndim, d,
                  (long long)(d < t->ndim ? t->sizes[d] : 0));
  }
  return WEFT_OK;
}

/* gx (self's shape, dtype and format) from gy (and indices); bfloat16 through float32 */
static weft_tensor* run_backward(const char* op, const weft_pool2d* g, const weft_tensor* gy, const weft_tensor* self,
                                 const weft_tensor* indices) {
  const weft_tensor* ts[3] = {gy, self, indices};
  if (weft__webgpu_same_device(op, ts, 3) != WEFT_OK) return NULL;
  weft_dtype t = self->dtype;
  if (t != WEFT_FLOAT32 && t != WEFT_FLOAT64 && t != WEFT_BFLOAT16)
    return fail(WEFT_TYPE_ERROR, op, "\"%s\" not implemented for '%s'", op, weft_dtype_name(t)), NULL;
  if (gy->dtype != t)
    return fail(WEFT_INVALID_ARGUMENT, op, "expected grad_output of dtype %s but got %s", weft_dtype_name(t),
                weft_dtype_name(gy->dtype)), NULL;
  if (grad_shape_check(op, gy, g, self->ndim) != WEFT_OK) return NULL;
  weft_dtype it = index_dtype(self);
  if (indices && (indices->dtype != it || grad_shape_check(op, indices, g, self->ndim) != WEFT_OK))
    return indices->dtype != it ? (fail(WEFT_INVALID_ARGUMENT, op, "expected indices of dtype %s but got %s",
                                        weft_dtype_name(it), weft_dtype_name(indices->dtype)), NULL)
                                : NULL;
  weft_memory_format f = g->channels_last ? WEFT_CHANNELS_LAST : WEFT_CONTIGUOUS_FORMAT;
  weft_tensor* gx = weft_empty(self->sizes, self->ndim, t, self->device, f);
  if (gx && self->device == WEFT_DEVICE_WEBGPU) { /* pool_webgpu.c: through gy's strides, no dense copy */
    if (weft__webgpu_pool2d_backward(op, g, gy, indices, gx) == WEFT_OK) return gx;
    weft_tensor_release(gx);
    return NULL;
  }
  if (!gx || self->device == WEFT_DEVICE_META || weft_explaining()) return gx;
  weft_dtype ct = t == WEFT_BFLOAT16 ? WEFT_FLOAT32 : t;
  weft_tensor* gyt = weft_to_dtype(gy, ct, false);
  weft_tensor* gyc = gyt ? weft_contiguous(gyt, f) : NULL;
  weft_tensor* ic = indices ? weft_contiguous(indices, f) : NULL;
  weft_tensor* gxc = ct == t ? weft_tensor_retain(gx) : weft_empty(self->sizes, self->ndim, ct, self->device, f);
  weft_status s = gyc && gxc && (ic || !indices) ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK)
    s = weft__pool2d_backward(g, ct, weft_tensor_data_ptr(gyc), ic ? weft_tensor_data_ptr(ic) : NULL,
                              weft_tensor_data_ptr(gxc));
  if (s == WEFT_OK && ct != t) s = weft_copy_(gx, gxc);
  weft_tensor* tmp[] = {gyt, gyc, ic, gxc};
  for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) weft_tensor_release(tmp[i]);
  if (s != WEFT_OK) {
    weft_tensor_release(gx);
    return NULL;
  }
  return gx;
}

static weft_tensor* max_pool2d_with_indices_backward_kernel(const weft_tensor* gy, const weft_tensor* self,
                                                            const int64_t* k, int64_t kn, const int64_t* s,
                                                            int64_t sn, const int64_t* p, int64_t pn,
                                                            const int64_t* d, int64_t dn, bool ceil_mode,
                                                            const weft_tensor* indices) {
  const char* op = "max_pool2d_with_indices_backward";
  weft_pool2d g;
  if (max_meta(op, self, k, kn, s, sn, p, pn, d, dn, ceil_mode, &g) != WEFT_OK) return NULL;
  return run_backward(op, &g, gy, self, indices);
}

static weft_tensor* avg_pool2d_backward_kernel(const weft_tensor* gy, const weft_tensor* self, const int64_t* k,
                                               int64_t kn, const int64_t* s, int64_t sn, const int64_t* p, int64_t pn,
                                               bool ceil_mode, bool count_include_pad, int64_t divisor_override) {
  const char* op = "avg_pool2d_backward";
  weft_pool2d g;
  if (avg_meta(op, self, k, kn, s, sn, p, pn, ceil_mode, count_include_pad, divisor_override, &g) != WEFT_OK)
    return NULL;
  return run_backward(op, &g, gy, self, NULL);
}

/* the output size is grad_output's */
static weft_tensor* adaptive_backward_kernel(const weft_tensor* gy, const weft_tensor* self) {
  const char* op = "_adaptive_avg_pool2d_backward";
  char buf[160];
  if ((self->ndim != 3 && self->ndim != 4) || gy->ndim != self->ndim)
    return fail(WEFT_INVALID_ARGUMENT, op, "adaptive_avg_pool2d_backward(): Expected 3D or 4D grad_output and "
                "input of the same dimension, but got grad_output of size %s", sizes_str(gy, buf, sizeof buf)),
           NULL;
  weft_pool2d g;
  memset(&g, 0, sizeof g);
  g.kind = WEFT_POOL_ADAPTIVE_AVG;
  take_dims(self, &g);
  g.oh = gy->sizes[gy->ndim - 2];
  g.ow = gy->sizes[gy->ndim - 1];
  return run_backward(op, &g, gy, self, NULL);
}

weft_status weft__pool_register(void) {
  WEFT_KERNEL(max_pool2d_with_indices_backward, CPU, max_pool2d_with_indices_backward_kernel);
  WEFT_KERNEL(max_pool2d_with_indices_backward, META, max_pool2d_with_indices_backward_kernel);
  WEFT_KERNEL(avg_pool2d_backward, CPU, avg_pool2d_backward_kernel);
  WEFT_KERNEL(avg_pool2d_backward, META, avg_pool2d_backward_kernel);
  WEFT_KERNEL(op__adaptive_avg_pool2d_backward, CPU, adaptive_backward_kernel);
  WEFT_KERNEL(op__adaptive_avg_pool2d_backward, META, adaptive_backward_kernel);
  WEFT_KERNEL(max_pool2d, CPU, max_pool2d_kernel);
  WEFT_KERNEL(max_pool2d, META, max_pool2d_kernel);
  WEFT_KERNEL(max_pool2d_with_indices, CPU, max_pool2d_with_indices_kernel);
  WEFT_KERNEL(max_pool2d_with_indices, META, max_pool2d_with_indices_kernel);
  WEFT_KERNEL(max_pool2d_with_indices_out, CPU, max_pool2d_with_indices_out_kernel);
  WEFT_KERNEL(max_pool2d_with_indices_out, META, max_pool2d_with_indices_out_kernel);
  WEFT_KERNEL(avg_pool2d, CPU, avg_pool2d_kernel);
  WEFT_KERNEL(avg_pool2d, META, avg_pool2d_kernel);
  WEFT_KERNEL(avg_pool2d_out, CPU, avg_pool2d_out_kernel);
  WEFT_KERNEL(avg_pool2d_out, META, avg_pool2d_out_kernel);
  WEFT_KERNEL(adaptive_avg_pool2d_out, CPU, adaptive_avg_pool2d_out_kernel);
  WEFT_KERNEL(adaptive_avg_pool2d_out, META, adaptive_avg_pool2d_out_kernel);
  WEFT_KERNEL(op__adaptive_avg_pool2d, CPU, adaptive_private_kernel);
  WEFT_KERNEL(op__adaptive_avg_pool2d, META, adaptive_private_kernel);
  WEFT_KERNEL(adaptive_avg_pool2d, COMPOSITE_IMPLICIT_AUTOGRAD, adaptive_avg_pool2d_kernel);
  WEFT_KERNEL(max_pool2d_with_indices_backward, WEBGPU, max_pool2d_with_indices_backward_kernel);
  WEFT_KERNEL(avg_pool2d_backward, WEBGPU, avg_pool2d_backward_kernel);
  WEFT_KERNEL(op__adaptive_avg_pool2d_backward, WEBGPU, adaptive_backward_kernel);
  WEFT_KERNEL(max_pool2d, WEBGPU, max_pool2d_kernel);
  WEFT_KERNEL(max_pool2d_with_indices, WEBGPU, max_pool2d_with_indices_kernel);
  WEFT_KERNEL(max_pool2d_with_indices_out, WEBGPU, max_pool2d_with_indices_out_kernel);
  WEFT_KERNEL(avg_pool2d, WEBGPU, avg_pool2d_kernel);
  WEFT_KERNEL(avg_pool2d_out, WEBGPU, avg_pool2d_out_kernel);
  WEFT_KERNEL(adaptive_avg_pool2d_out, WEBGPU, adaptive_avg_pool2d_out_kernel);
  WEFT_KERNEL(op__adaptive_avg_pool2d, WEBGPU, adaptive_private_kernel);
  return WEFT_OK;
}
