/* _inverted_residual (issue 23): MobileNetV2's inverted residual block for
 * inference, its BatchNorms already folded into the convolutions' weights
 * and biases (wt.nn.utils.fuseConvBnWeights):
 *
 *   h = relu6(conv2d(x, expand_weight, expand_bias))             (1x1; h = x without it)
 *   d = relu6(conv2d(h, dw_weight, dw_bias, stride, k // 2, groups = hidden))
 *   y = conv2d(d, project_weight, project_bias) + (residual ? x : 0)  (1x1)
 *
 * A float32 channels_last input on the CPU runs the fused driver
 * (src/ops/cpu/inverted_residual.c): row bands, the expanded and depthwise
 * maps kept in per-thread buffers instead of round trips through memory.
 * Everything else (NCHW, float64, bfloat16, the meta device, and inputs
 * conv2d would refuse) runs the three _conv2d_fused convolutions, which give
 * conv2d's checks and messages (naming this op). The fused driver's result
 * equals that of the three convolutions bit for bit.
 *
 * No autograd formula: with grad mode on, an input that requires grad is
 * refused ("the derivative for '_inverted_residual' is not implemented");
 * weft/models' MobileNetV2 calls it in eval with nothing to differentiate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "core/internal.h"
#include "iter/iter_internal.h"
#include "ops/conv_fused.h"
#include "ops/cpu/inverted_residual.h"
#include "ops/ops.h"
#include "ops/packed_cache.h"
#include "weft/parallel.h"

#define OP "_inverted_residual"

typedef struct {
  const weft_tensor *x, *we, *be, *wd, *bd, *wp, *bp;
  int64_t stride;
  bool residual;
} ir_args;

/* ---- checks: the block's structure (conv2d's own checks come with the run) ---- */

static weft_status check_1x1(const char* name, const weft_tensor* w, int64_t out, int64_t in) {
  if (w->ndim != 4 || w->sizes[2] != 1 || w->sizes[3] != 1 || (out >= 0 && w->sizes[0] != out) || w->sizes[1] != in) {
    char want[64];
    snprintf(want, sizeof want, out >= 0 ? "[%lld, %lld, 1, 1]" : "[*, %lld, 1, 1]", (long long)(out >= 0 ? out : in),
             (long long)in);
    return weft__error(WEFT_INVALID_ARGUMENT, OP ": expected %s of size %s but got %s", name, want,
                       weft__list(w->sizes, w->ndim).s);
  }
  return WEFT_OK;
}

static weft_status check_block(const ir_args* a) {
  const weft_tensor *x = a->x, *wd = a->wd;
  if (x->ndim != 4)
    return weft__error(WEFT_INVALID_ARGUMENT, OP ": expected a 3-D or 4-D input but got one of size %s",
                       weft__list(x->sizes, x->ndim).s);
  if (wd->ndim != 4 || wd->sizes[1] != 1 || wd->sizes[2] % 2 == 0 || wd->sizes[3] % 2 == 0)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       OP ": expected dwWeight of size [hidden, 1, kH, kW] with odd kH and kW but got %s",
                       weft__list(wd->sizes, wd->ndim).s);
  int64_t cin = x->sizes[1], ch = wd->sizes[0];
  if (a->be && !a->we)
    return weft__error(WEFT_INVALID_ARGUMENT, OP ": expandBias was given without expandWeight");
  if (a->we && check_1x1("expandWeight", a->we, ch, cin) != WEFT_OK) return weft_last_status();
  if (!a->we && ch != cin)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       OP ": without expandWeight, dwWeight needs the input's %lld channels but has %lld",
                       (long long)cin, (long long)ch);
  if (check_1x1("projectWeight", a->wp, -1, ch) != WEFT_OK) return weft_last_status();
  if (a->stride < 1)
    return weft__error(WEFT_INVALID_ARGUMENT, OP ": expected a positive stride but got %lld", (long long)a->stride);
  if (a->residual && (a->stride != 1 || a->wp->sizes[0] != cin))
    return weft__error(WEFT_INVALID_ARGUMENT,
                       OP ": residual needs stride 1 and as many output channels as input channels "
                          "(stride %lld, %lld -> %lld channels)",
                       (long long)a->stride, (long long)cin, (long long)a->wp->sizes[0]);
  return WEFT_OK;
}

/* ---- the three convolutions ---- */

static weft_tensor* composite(const ir_args* a) {
  const int64_t one[2] = {1, 1}, zero[2] = {0, 0}, st[2] = {a->stride, a->stride};
  const int64_t pad[2] = {(a->wd->sizes[2] - 1) / 2, (a->wd->sizes[3] - 1) / 2};
  const weft__conv2d_fusion relu6 = {WEFT_CONV_ACT_RELU6, NULL}, last = {WEFT_CONV_ACT_NONE, a->residual ? a->x : NULL};
  weft_tensor* h = a->we ? weft__conv2d_fusable(a->x, a->we, a->be, one, 2, zero, 2, one, 2, 1, &relu6)
                         : weft_tensor_retain((weft_tensor*)a->x);
  weft_tensor* d = h ? weft__conv2d_fusable(h, a->wd, a->bd, st, 2, pad, 2, one, 2, a->wd->sizes[0], &relu6) : NULL;
  weft_tensor* y = d ? weft__conv2d_fusable(d, a->wp, a->bp, one, 2, zero, 2, one, 2, 1, &last) : NULL;
  weft_tensor_release(h);
  weft_tensor_release(d);
  if (!y) {
    weft__error_rename("conv2d", OP);
    weft__error_rename("_conv2d_fused", OP);
  }
  return y;
}

/* ---- the fused driver ---- */

static bool f32_cpu(const weft_tensor* t) { return !t || (t->dtype == WEFT_FLOAT32 && t->device == WEFT_DEVICE_CPU); }
static bool bias_fits(const weft_tensor* b, int64_t n) { return !b || (b->ndim == 1 && b->sizes[0] == n); }

/* the driver's case: float32 on the CPU, channels_last, biases conv2d would take */
static bool fused_fits(const ir_args* a) {
  const weft_tensor* t[] = {a->x, a->we, a->be, a->wd, a->bd, a->wp, a->bp};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!f32_cpu(t[i])) return false;
  return weft_tensor_suggest_memory_format(a->x) == WEFT_CHANNELS_LAST && bias_fits(a->be, a->wd->sizes[0]) &&
         bias_fits(a->bd, a->wd->sizes[0]) && bias_fits(a->bp, a->wp->sizes[0]) && a->x->sizes[1] > 0;
}

static weft_ir_geom geom_of(const ir_args* a) {
  const weft_tensor *x = a->x, *wd = a->wd;
  weft_ir_geom g = {.n = x->sizes[0], .h = x->sizes[2], .w = x->sizes[3], .cin = x->sizes[1], .ch = wd->sizes[0],
                    .cout = a->wp->sizes[0], .kh = wd->sizes[2], .kw = wd->sizes[3], .stride = a->stride,
                    .expand = a->we != NULL, .residual = a->residual};
  g.ho = (g.h + 2 * ((g.kh - 1) / 2) - g.kh) / g.stride + 1;
  g.wo = (g.w + 2 * ((g.kw - 1) / 2) - g.kw) / g.stride + 1;
  for (int i = 0; i < 4; i++) g.dws[i] = wd->strides[i];
  return g;
}

static weft_status record_plan(const weft_ir_geom* g) {
  const bool staged = weft__ir_staged(g);
  const char* algorithm = staged ? "fused_staged_nhwc" : "fused_row_bands_nhwc";
  weft__strbuf s = {0};
  weft__strbuf_put(&s, "{\"op\":\"" OP "\",\"algorithm\":\"%s\",\"memory_format\":\"channels_last\","
                       "\"dtype\":\"float32\",\"input\":[%lld,%lld,%lld,%lld],\"hidden\":%lld,"
                       "\"output\":[%lld,%lld,%lld,%lld],\"kernel\":[%lld,%lld],\"stride\":%lld,",
                   algorithm, (long long)g->n, (long long)g->cin, (long long)g->h, (long long)g->w, (long long)g->ch,
                   (long long)g->n, (long long)g->cout, (long long)g->ho, (long long)g->wo, (long long)g->kh,
                   (long long)g->kw, (long long)g->stride);
  weft__strbuf_put(&s, "\"expansion\":%s,\"residual\":%s,\"band_rows\":%lld,\"tasks\":%lld,"
                       "\"buffers\":\"%s\",\"threads\":%d}",
                   g->expand ? "true" : "false", g->residual ? "true" : "false", (long long)weft__ir_band_rows(g),
                   (long long)weft__ir_tasks(g),
                   staged ? "whole expanded and depthwise maps; threads split the 1x1s' channels"
                          : "expanded rows ring + depthwise band, per thread",
                   weft_get_num_threads());
  return weft__explain_record_json(weft__strbuf_finish(&s, "explain"));
}

/* A 1x1 weight's panels for the GEMM (the same cache entry _conv2d_fused's 1x1 uses) */
typedef struct {
  const float* p;
  weft__packed* held;
  void* own;
} panels;

struct pack_ctx {
  weft_conv2d_geom g;
  const void* w;
};

static weft_status pack_1x1(void* p, void* dst) {
  const struct pack_ctx* c = p;
  return weft__conv2d_pack(WEFT_FLOAT32, WEFT_CONV_GEMM_1X1_NHWC, &c->g, c->w, dst);
}

static weft_status panels_of(const weft_tensor* w, panels* out) {
  *out = (panels){NULL, NULL, NULL};
  if (!w) return WEFT_OK;
  struct pack_ctx pc = {{.n = 1, .c = w->sizes[1], .h = 1, .w = 1, .cout = w->sizes[0], .kh = 1, .kw = 1, .sh = 1,
                         .sw = 1, .dh = 1, .dw = 1, .groups = 1, .ho = 1, .wo = 1},
                        weft_tensor_data_ptr(w)};
  for (int i = 0; i < 4; i++) pc.g.ws[i] = w->strides[i];
  size_t bytes = weft__conv2d_packed_bytes(WEFT_FLOAT32, WEFT_CONV_GEMM_1X1_NHWC, &pc.g);
  if (weft__packed_cacheable()) {
    out->p = weft__packed_get(w, (weft__packed_key){WEFT_PACKED_CONV_NHWC, 1, WEFT_FLOAT32}, bytes, pack_1x1, &pc,
                              &out->held);
    return out->p ? WEFT_OK : weft_last_status();
  }
  out->own = malloc(bytes);
  if (!out->own) return weft__error(WEFT_OUT_OF_MEMORY, OP ": out of memory (%zu bytes for a packed weight)", bytes);
  out->p = out->own;
  return pack_1x1(&pc, out->own);
}

static void panels_release(panels* p) {
  weft__packed_release(p->held);
  free(p->own);
}

static const float* f32(const weft_tensor* t) { return t ? weft_tensor_data_ptr(t) : NULL; }

static weft_tensor* fused(const ir_args* a) {
  const weft_ir_geom g = geom_of(a);
  const int64_t sizes[4] = {g.n, g.cout, g.ho, g.wo};
  if (weft_explaining()) {
    if (record_plan(&g) != WEFT_OK) return NULL;
    return weft_empty(sizes, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST);
  }
  weft_tensor* xc = weft_contiguous(a->x, WEFT_CHANNELS_LAST);
  weft_tensor* b[3] = {NULL, NULL, NULL};
  const weft_tensor* bias[3] = {a->be, a->bd, a->bp};
  weft_status s = xc ? WEFT_OK : weft_last_status();
  for (int i = 0; i < 3 && s == WEFT_OK; i++)
    if (bias[i] && !(b[i] = weft_contiguous(bias[i], WEFT_CONTIGUOUS_FORMAT))) s = weft_last_status();
  weft_tensor* y = s == WEFT_OK ? weft_empty(sizes, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST) : NULL;
  if (s == WEFT_OK && !y) s = weft_last_status();
  panels pe = {0}, pp = {0};
  if (s == WEFT_OK) s = panels_of(a->we, &pe);
  if (s == WEFT_OK) s = panels_of(a->wp, &pp);
  if (s == WEFT_OK)
    s = weft__inverted_residual_f32(weft__kernels(), &g, f32(xc), pe.p, f32(b[0]), f32(a->wd), f32(b[1]), pp.p,
                                    f32(b[2]), weft_tensor_data_ptr(y));
  panels_release(&pe);
  panels_release(&pp);
  weft_tensor_release(xc);
  for (int i = 0; i < 3; i++) weft_tensor_release(b[i]);
  if (s == WEFT_OK) return y;
  weft_tensor_release(y);
  return NULL;
}

/* ---- the op ---- */

static weft_tensor* block(const ir_args* a) {
  if (check_block(a) != WEFT_OK) return NULL;
  if (fused_fits(a)) return fused(a);
  return composite(a);
}

static weft_tensor* inverted_residual_kernel(const weft_tensor* input, const weft_tensor* expand_weight,
                                             const weft_tensor* expand_bias, const weft_tensor* dw_weight,
                                             const weft_tensor* dw_bias, const weft_tensor* project_weight,
                                             const weft_tensor* project_bias, int64_t stride, bool residual) {
  ir_args a = {input, expand_weight, expand_bias, dw_weight, dw_bias, project_weight, project_bias, stride, residual};
  if (input->ndim != 3) return block(&a);
  /* an unbatched input runs as a batch of one */
  weft_tensor* x4 = weft_unsqueeze(input, 0);
  a.x = x4;
  weft_tensor* y4 = x4 ? block(&a) : NULL;
  weft_tensor* y = y4 ? weft_squeeze_dim(y4, 0) : NULL;
  weft_tensor_release(x4);
  weft_tensor_release(y4);
  return y;
}

weft_status weft__inverted_residual_register(void) {
  WEFT_KERNEL(op__inverted_residual, CPU, inverted_residual_kernel);
  WEFT_KERNEL(op__inverted_residual, META, inverted_residual_kernel);
  return WEFT_OK;
}
