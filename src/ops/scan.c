/* cumsum and cumprod (PyTorch 1.13's cumsum / cumsum_ / cumsum.out and
 * cumprod's), as its ReduceOps.cpp and cpu_cum_base_kernel do them:
 *
 *   meta  dim wrapped (a 0-dim input takes 0 and -1), the result dtype (the
 *         dtype= option; else out='s; else int64 for integral and bool
 *         inputs, the input's otherwise; in place: self's, and dtype= must
 *         agree), the kernel's dtype check (no bool or float16 result), the
 *         result (new and contiguous, or out resized).
 *   impl  the input converted to the result dtype (self.to(dtype)), then
 *         each line along dim scanned independently, the lines split over
 *         the thread pool. The running value is a double for float32 and
 *         float64, a float for bfloat16, an int64 (wrapping) for integers:
 *         PyTorch's acc_type. float32 goes through the kernels of
 *         src/kernels/scan.c: vectorized across a contiguous kept dim when
 *         dim is an outer one, a sequential scan per line otherwise.
 * The Meta kernel is the same function: nothing runs. */
#include <string.h>

#include "core/scalar.h"
#include "iter/iter_internal.h"
#include "kernels/kernels.h"
#include "ops/reduce_internal.h"
#include "weft/iter.h"
#include "weft/parallel.h"

typedef struct {
  bool prod;
  const char* name;
  weft_dtype dtype; /* the result's */
  weft_tensor* result;
} scan_meta;

static weft_status scan_dtype(scan_meta* m, const weft_tensor* self, weft_dtype opt, const weft_tensor* out,
                              bool inplace) {
  bool have = (int)opt >= 0;
  if (inplace) {
    if (have && opt != self->dtype) {
      return weft__error(WEFT_TYPE_ERROR, "%s_: Bad in-place call: input tensor dtype %s and output tensor dtype %s "
                         "should match", m->name, weft_dtype_name(self->dtype), weft_dtype_name(opt));
    }
    m->dtype = self->dtype;
  } else {
    m->dtype = have ? opt : out ? out->dtype : weft_dtype_is_integral(self->dtype, true) ? WEFT_INT64 : self->dtype;
  }
  if (out && out->dtype != m->dtype) {
    return weft__error(WEFT_TYPE_ERROR, "%s: Expected out tensor to have dtype %s, but got %s instead", m->name,
                       weft_dtype_name(m->dtype), weft_dtype_name(out->dtype));
  }
  /* the kernel's dtype check: 0-dim and empty inputs never reach it */
  if (self->ndim > 0 && self->numel > 0 && (m->dtype == WEFT_BOOL || m->dtype == WEFT_FLOAT16)) {
    return weft__error(WEFT_TYPE_ERROR, "%s: \"%s_out_cpu\" not implemented for '%s'", m->name, m->name,
                       weft_dtype_name(m->dtype));
  }
  return WEFT_OK;
}

static weft_status scan_result(scan_meta* m, const weft_tensor* self, weft_tensor* out) {
  int64_t strides[WEFT_MAX_DIMS];
  weft__strides_for_format(self->sizes, self->ndim, WEFT_CONTIGUOUS_FORMAT, strides);
  if (!out) {
    m->result = weft__tensor_alloc(m->name, self->sizes, strides, self->ndim, m->dtype, self->device);
    return m->result ? WEFT_OK : weft_last_status();
  }
  bool same = out->ndim == self->ndim &&
              memcmp(out->sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim) == 0;
  if (!same) {
    weft_status s = weft__tensor_resize_(out, self->sizes, strides, self->ndim, m->name);
    if (s != WEFT_OK) return s;
  }
  m->result = weft_tensor_retain(out);
  return WEFT_OK;
}

/* ---- the lines ---- */

typedef struct {
  bool prod;
  weft_dtype t;
  const char* x;
  char* y;
  int64_t es;               /* element size */
  int64_t n;                /* the scanned dim's size */
  int64_t xs, ys;           /* its strides, bytes */
  int nd;                   /* the other dims, which index the lines (or blocks) */
  int64_t sizes[WEFT_MAX_DIMS], xst[WEFT_MAX_DIMS], yst[WEFT_MAX_DIMS];
  int64_t cols, cxs, cys;   /* rows mode: the contiguous kept dim (cols 0: lines mode) */
  int64_t chunks;           /* rows mode: column chunks per block */
  const weft_kernels* k;
} scan_ctx;

/* byte offsets of line (block) l */
static void line_at(const scan_ctx* c, int64_t l, int64_t* xo, int64_t* yo) {
  *xo = *yo = 0;
  for (int d = c->nd - 1; d >= 0; d--) {
    int64_t i = l % c->sizes[d];
    l /= c->sizes[d];
    *xo += i * c->xst[d];
    *yo += i * c->yst[d];
  }
}

/* one line in the result dtype, through its accumulation type */
static void scan_line(const scan_ctx* c, const char* x, char* y) {
  weft_dtype t = c->t;
  if (t == WEFT_FLOAT32) {
    weft_f32_scan_fn* f = c->prod ? c->k->f32_cumprod : c->k->f32_cumsum;
    f((size_t)c->n, (const float*)x, (size_t)c->xs, (float*)y, (size_t)c->ys);
  } else if (t == WEFT_FLOAT64) {
    double acc = c->prod ? 1 : 0;
    for (int64_t i = 0; i < c->n; i++) {
      double v;
      memcpy(&v, x + i * c->xs, 8);
      acc = c->prod ? acc * v : acc + v;
      memcpy(y + i * c->ys, &acc, 8);
    }
  } else if (weft_dtype_is_floating(t)) { /* bfloat16: a float accumulator */
    float acc = c->prod ? 1 : 0;
    for (int64_t i = 0; i < c->n; i++) {
      float v = (float)weft__value_f64(weft__load(x + i * c->xs, t));
      acc = c->prod ? acc * v : acc + v;
      weft__store(y + i * c->ys, t, weft__value_from_f32(acc));
    }
  } else {
    uint64_t acc = c->prod ? 1 : 0; /* int64 arithmetic wraps, as C++'s does in practice */
    for (int64_t i = 0; i < c->n; i++) {
      uint64_t v = (uint64_t)weft__load(x + i * c->xs, t).i;
      acc = c->prod ? acc * v : acc + v;
      weft__value r = {0, (int64_t)acc, 0.0};
      weft__store(y + i * c->ys, t, r);
    }
  }
}

#define COL_CHUNK 256

static weft_status scan_range(void* p, int64_t begin, int64_t end) {
  const scan_ctx* c = p;
  for (int64_t l = begin; l < end; l++) {
    int64_t xo, yo;
    if (!c->cols) {
      line_at(c, l, &xo, &yo);
      scan_line(c, c->x + xo, c->y + yo);
      continue;
    }
    int64_t j0 = (l % c->chunks) * COL_CHUNK;
    int64_t m = c->cols - j0 < COL_CHUNK ? c->cols - j0 : COL_CHUNK;
    line_at(c, l / c->chunks, &xo, &yo);
    weft_f32_vscan_rows_fn* f = c->prod ? c->k->f32_vcumprod_rows : c->k->f32_vcumsum_rows;
    f((size_t)c->n, (size_t)m, (const float*)(c->x + xo + j0 * 4), (size_t)c->xs,
      (float*)(c->y + yo + j0 * 4), (size_t)c->ys);
  }
  return WEFT_OK;
}

/* float32 with dim not innermost in x and a kept dim contiguous in both:
 * that dim becomes the kernel's columns (rows mode) */
static void pick_columns(scan_ctx* c) {
  if (c->t != WEFT_FLOAT32 || c->xs == 4) return;
  for (int d = 0; d < c->nd; d++) {
    if (c->xst[d] != 4 || c->yst[d] != 4 || c->sizes[d] < 4) continue;
    c->cols = c->sizes[d];
    c->chunks = (c->cols + COL_CHUNK - 1) / COL_CHUNK;
    for (int e = d; e + 1 < c->nd; e++) {
      c->sizes[e] = c->sizes[e + 1];
      c->xst[e] = c->xst[e + 1];
      c->yst[e] = c->yst[e + 1];
    }
    c->nd--;
    return;
  }
}

static weft_status scan_run(bool prod, const weft_tensor* x, weft_tensor* y, int64_t dim) {
  scan_ctx c = {.prod = prod, .t = y->dtype, .x = weft_tensor_data_ptr(x), .y = weft_tensor_data_ptr(y),
                .k = weft__kernels()};
  c.es = (int64_t)weft_dtype_size(c.t);
  c.n = y->sizes[dim];
  c.xs = x->strides[dim] * c.es;
  c.ys = y->strides[dim] * c.es;
  int64_t lines = 1;
  for (int d = 0; d < y->ndim; d++) {
    if (d == dim) continue;
    c.sizes[c.nd] = y->sizes[d];
    c.xst[c.nd] = x->strides[d] * c.es;
    c.yst[c.nd] = y->strides[d] * c.es;
    lines *= y->sizes[d];
    c.nd++;
  }
  pick_columns(&c);
  int64_t tasks = c.cols ? lines / c.cols * c.chunks : lines;
  int64_t per = c.cols ? c.n * COL_CHUNK : c.n;
  int64_t grain = per >= WEFT_GRAIN_SIZE ? 1 : WEFT_GRAIN_SIZE / (per > 0 ? per : 1);
  return weft_parallel_for(0, tasks, grain, scan_range, &c);
}

static weft_tensor* scan(bool prod, const weft_tensor* self, int64_t dim, weft_dtype opt, weft_tensor* out,
                         bool inplace) {
  scan_meta m = {prod, prod ? "cumprod" : "cumsum", WEFT_FLOAT32, NULL};
  int64_t d;
  if (!weft__wrap_dim(m.name, dim, self->ndim, &d)) return NULL;
  if (scan_dtype(&m, self, opt, out, inplace) != WEFT_OK) return NULL;
  if (scan_result(&m, self, out) != WEFT_OK) return NULL;
  if (self->device == WEFT_DEVICE_META || self->numel == 0) return m.result;
  weft_tensor* x = weft_to_dtype(self, m.dtype, false);
  weft_status s = x ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && self->ndim == 0) s = weft_copy_(m.result, x);
  else if (s == WEFT_OK) s = scan_run(prod, x, m.result, d);
  weft_tensor_release(x);
  if (s != WEFT_OK) {
    weft_tensor_release(m.result);
    return NULL;
  }
  return m.result;
}

/* ---- kernels (CPU and Meta) ---- */

static weft_tensor* k_cumsum(const weft_tensor* self, int64_t dim, weft_dtype dtype) {
  return scan(false, self, dim, dtype, NULL, false);
}
static weft_tensor* k_cumsum_out(const weft_tensor* self, int64_t dim, weft_dtype dtype, weft_tensor* out) {
  return scan(false, self, dim, dtype, out, false);
}
static weft_tensor* k_cumprod(const weft_tensor* self, int64_t dim, weft_dtype dtype) {
  return scan(true, self, dim, dtype, NULL, false);
}
static weft_tensor* k_cumprod_out(const weft_tensor* self, int64_t dim, weft_dtype dtype, weft_tensor* out) {
  return scan(true, self, dim, dtype, out, false);
}
static weft_status inplace(bool prod, weft_tensor* self, int64_t dim, weft_dtype dtype) {
  weft_tensor* r = scan(prod, self, dim, dtype, self, true);
  weft_tensor_release(r);
  return r ? WEFT_OK : weft_last_status();
}
static weft_status k_cumsum_(weft_tensor* self, int64_t dim, weft_dtype dtype) {
  return inplace(false, self, dim, dtype);
}
static weft_status k_cumprod_(weft_tensor* self, int64_t dim, weft_dtype dtype) {
  return inplace(true, self, dim, dtype);
}

#define BOTH(op, fn)          \
  WEFT_KERNEL(op, CPU, fn);   \
  WEFT_KERNEL(op, META, fn)

weft_status weft__scan_register(void) {
  BOTH(cumsum, k_cumsum);
  BOTH(cumsum_, k_cumsum_);
  BOTH(cumsum_out, k_cumsum_out);
  BOTH(cumprod, k_cumprod);
  BOTH(cumprod_, k_cumprod_);
  BOTH(cumprod_out, k_cumprod_out);
  return WEFT_OK;
}
