/* softmax and log_softmax along one dim (PyTorch 1.13's SoftMax.cpp): the
 * input converted to dtype= when given, made contiguous, then each row along
 * dim (a [outer, dim, inner] view) is shifted by its max before exp, so large
 * values never overflow: softmax = exp(x - max) / sum, log_softmax =
 * x - max - log(sum). float32 and bfloat16 compute in float, float64 in
 * double; float16 and integers are refused as PyTorch's CPU kernels refuse
 * them. Rows of the last dim are contiguous; otherwise blocks of up to 64
 * inner columns are reduced together (float32: the columns in vector lanes,
 * f32_softmax_cols). Threads split the rows / blocks. */
#include <math.h>
#include <string.h>

#include "base/half.h"
#include "core/internal.h"
#include "core/scalar.h"
#include "iter/iter_internal.h"
#include "kernels/kernels.h"
#include "ops/ops.h"
#include "ops/reduce_webgpu.h"
#include "weft/parallel.h"

#define COLS 64

typedef struct {
  bool log;
  weft_dtype t;
  const char* in;
  char* out;
  int64_t len, inner, nblk; /* along dim; after it; column blocks per outer index */
} sm_job;


static inline void st(char* p, weft_dtype t, double v) {
  if (t == WEFT_FLOAT64) {
    memcpy(p, &v, 8);
  } else if (t == WEFT_FLOAT32) {
    float f = (float)v;
    memcpy(p, &f, 4);
  } else {
    uint16_t b = weft__f32_to_bf16((float)v);
    memcpy(p, &b, 2);
  }
}

/* exp / log in the compute type: float for float32 and bfloat16 */
static inline double ex(weft_dtype t, double v) { return t == WEFT_FLOAT64 ? exp(v) : (double)expf((float)v); }
static inline double lg(weft_dtype t, double v) { return t == WEFT_FLOAT64 ? log(v) : (double)logf((float)v); }
static inline double rnd(weft_dtype t, double v) { return t == WEFT_FLOAT64 ? v : (double)(float)v; }

/* float32 rows of the last dim through the SIMD kernels: the max, then
 * exp(x - max) stored and summed in one pass (f32_rexpsum), then * (1 / sum);
 * log_softmax sums without storing, then (x - max) - log(sum) */
static void rows_f32(const sm_job* j, int64_t begin, int64_t end) {
  const weft_kernels* k = weft__kernels();
  size_t n = (size_t)j->len;
  for (int64_t r = begin; r < end; r++) {
    const float* x = (const float*)j->in + r * j->len;
    float* y = (float*)j->out + r * j->len;
    float mx = k->f32_rmax(n, x);
    if (j->log) {
      float ls = logf(k->f32_rexpsum(n, x, mx, NULL));
      k->f32_vsubc(n, x, &mx, y, NULL);
      k->f32_vsubc(n, y, &ls, y, NULL);
    } else {
      float inv = 1.0f / k->f32_rexpsum(n, x, mx, y);
      k->f32_vmulc(n, y, &inv, y, NULL);
    }
  }
}

/* float32 with dims after dim: blocks of up to 64 columns of one outer
 * index, the columns in vector lanes */
static void cols_f32(const sm_job* j, int64_t begin, int64_t end) {
  const weft_kernels* k = weft__kernels();
  for (int64_t task = begin; task < end; task++) {
    int64_t o = task / j->nblk, c0 = task % j->nblk * COLS;
    int64_t w = j->inner - c0 < COLS ? j->inner - c0 : COLS;
    int64_t base = o * j->len * j->inner + c0;
    k->f32_softmax_cols((size_t)j->len, (size_t)w, (const float*)j->in + base, (size_t)j->inner,
                        (float*)j->out + base, (size_t)j->inner, j->log);
  }
}

static weft_status sm_range(void* p, int64_t begin, int64_t end) {
  const sm_job* j = p;
  if (j->t == WEFT_FLOAT32 && j->len > 0) {
    if (j->inner == 1) rows_f32(j, begin, end);
    else cols_f32(j, begin, end);
    return WEFT_OK;
  }
  int64_t es = (int64_t)weft_dtype_size(j->t);
  double mx[COLS], sum[COLS];
  for (int64_t task = begin; task < end; task++) {
    int64_t o = task / j->nblk, c0 = task % j->nblk * COLS;
    int64_t w = j->inner - c0 < COLS ? j->inner - c0 : COLS;
    int64_t base = (o * j->len * j->inner + c0) * es, step = j->inner * es;
    const char* in = j->in + base;
    char* out = j->out + base;
    for (int64_t c = 0; c < w; c++) {
      mx[c] = weft__load_f64(in + c * es, j->t);
      sum[c] = 0;
    }
    for (int64_t k = 1; k < j->len; k++)
      for (int64_t c = 0; c < w; c++) {
        double v = weft__load_f64(in + k * step + c * es, j->t);
        if (v != v || v > mx[c]) mx[c] = v == v && mx[c] != mx[c] ? mx[c] : v;
      }
    for (int64_t k = 0; k < j->len; k++)
      for (int64_t c = 0; c < w; c++) sum[c] = rnd(j->t, sum[c] + ex(j->t, rnd(j->t, weft__load_f64(in + k * step + c * es, j->t) - mx[c])));
    for (int64_t c = 0; c < w; c++) sum[c] = j->log ? lg(j->t, sum[c]) : sum[c];
    for (int64_t k = 0; k < j->len; k++)
      for (int64_t c = 0; c < w; c++) {
        double x = rnd(j->t, weft__load_f64(in + k * step + c * es, j->t) - mx[c]);
        st(out + k * step + c * es, j->t, j->log ? x - sum[c] : rnd(j->t, ex(j->t, x)) / sum[c]);
      }
  }
  return WEFT_OK;
}

static weft_tensor* run(bool log, const weft_tensor* self, int64_t dim, weft_dtype dtype) {
  const char* name = log ? "log_softmax" : "softmax";
  int64_t d;
  if (!weft__wrap_dim(name, dim, self->ndim, &d)) return NULL;
  weft_dtype t = (int)dtype >= 0 ? dtype : self->dtype;
  weft_tensor* conv = weft_to_dtype(self, t, false);
  if (!conv) return NULL;
  weft_tensor* in = weft_contiguous(conv, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor_release(conv);
  if (!in) return NULL;
  int64_t strides[WEFT_MAX_DIMS] = {0};
  weft__strides_for_format(in->sizes, in->ndim, WEFT_CONTIGUOUS_FORMAT, strides);
  weft_tensor* out = weft__tensor_alloc(name, in->sizes, strides, in->ndim, t, in->device);
  if (!out || in->numel == 0 || in->device == WEFT_DEVICE_META) {
    weft_tensor_release(in);
    return out;
  }
  bool lastdim = in->ndim == 0 || d == in->ndim - 1;
  if (t != WEFT_FLOAT32 && t != WEFT_FLOAT64 && t != WEFT_BFLOAT16) {
    weft__error(WEFT_TYPE_ERROR, "%s: \"%s\" not implemented for '%s'", name,
                lastdim ? (log ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl")
                        : "softmax_kernel_impl",
                weft_dtype_name(t));
    weft_tensor_release(in);
    weft_tensor_release(out);
    return NULL;
  }
  if (in->device == WEFT_DEVICE_WEBGPU) {
    weft_status ws = weft__softmax_webgpu(log, in, out, d);
    weft_tensor_release(in);
    if (ws == WEFT_OK) return out;
    weft_tensor_release(out);
    return NULL;
  }
  sm_job j = {log, t, weft_tensor_data_ptr(in), weft_tensor_data_ptr(out), in->ndim ? in->sizes[d] : 1, 1, 1};
  int64_t outer = 1;
  for (int k = 0; k < in->ndim; k++) {
    if (k < d) outer *= in->sizes[k];
    if (k > d) j.inner *= in->sizes[k];
  }
  j.nblk = (j.inner + COLS - 1) / COLS;
  int64_t per = j.len * (j.inner < COLS ? j.inner : COLS);
  int64_t grain = WEFT_GRAIN_SIZE / (per ? per : 1);
  weft_status s = weft_parallel_for(0, outer * j.nblk, grain < 1 ? 1 : grain, sm_range, &j);
  weft_tensor_release(in);
  if (s != WEFT_OK) {
    weft_tensor_release(out);
    return NULL;
  }
  return out;
}

static weft_tensor* k_softmax(const weft_tensor* self, int64_t dim, weft_dtype dtype) {
  return run(false, self, dim, dtype);
}
static weft_tensor* k_log_softmax(const weft_tensor* self, int64_t dim, weft_dtype dtype) {
  return run(true, self, dim, dtype);
}

weft_status weft__softmax_register(void) {
  WEFT_KERNEL(softmax, CPU, k_softmax);
  WEFT_KERNEL(softmax, META, k_softmax);
  WEFT_KERNEL(log_softmax, CPU, k_log_softmax);
  WEFT_KERNEL(log_softmax, META, k_log_softmax);
  WEFT_KERNEL(softmax, WEBGPU, k_softmax);
  WEFT_KERNEL(log_softmax, WEBGPU, k_log_softmax);
  return WEFT_OK;
}
