/* Shape ops (issue 13): flip, roll, repeat, tile, repeat_interleave,
 * tril/triu, diag, diagonal and clamp, PyTorch 1.13's semantics, CPU and Meta
 * (one kernel each: data work is skipped on meta tensors).
 *
 * flip, roll, repeat, tile and repeat_interleave are one gather: every
 * output index along a dim reads one input index along that dim, so each
 * dim gets a table of source byte offsets and the copy walks the output
 * rows, in parallel (remap below). tril/triu copy, then zero a triangle;
 * diagonal is a view; clamp is maximum then minimum (the iterator's
 * promotion and out= casting rules). */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "iter/iter_internal.h"
#include "ops/ops.h"
#include "ops/reduce_internal.h"
#include "weft/parallel.h"

static bool on_meta(const weft_tensor* t) { return t->device == WEFT_DEVICE_META; }

/* ---- remap: dst[i0..in] = src[off0[i0] + ... + offn[in]] ---- */

typedef struct {
  char* dst;
  const char* src;
  int ndim; /* >= 1 */
  int64_t sizes[WEFT_MAX_DIMS];
  int64_t dst_stride[WEFT_MAX_DIMS]; /* bytes */
  int64_t* src_off[WEFT_MAX_DIMS];   /* bytes, sizes[d] entries each */
  size_t esize;
  bool dense_rows; /* the last dim reads and writes contiguous runs: one memcpy a row */
} remap;

static void copy_row(const remap* m, char* d, const char* s) {
  int last = m->ndim - 1;
  int64_t n = m->sizes[last], ds = m->dst_stride[last];
  const int64_t* off = m->src_off[last];
  if (m->dense_rows) {
    memcpy(d, s + off[0], (size_t)n * m->esize);
    return;
  }
  switch (m->esize) {
    case 1: for (int64_t j = 0; j < n; j++) d[j * ds] = s[off[j]]; break;
    case 2: for (int64_t j = 0; j < n; j++) memcpy(d + j * ds, s + off[j], 2); break;
    case 4: for (int64_t j = 0; j < n; j++) memcpy(d + j * ds, s + off[j], 4); break;
    default: for (int64_t j = 0; j < n; j++) memcpy(d + j * ds, s + off[j], 8); break;
  }
}

/* Rows [begin, end) of the output (a row: every index but the last). */
static weft_status remap_rows(void* ctx, int64_t begin, int64_t end) {
  const remap* m = ctx;
  for (int64_t r = begin; r < end; r++) {
    int64_t rest = r, doff = 0, soff = 0;
    for (int d = m->ndim - 2; d >= 0; d--) {
      int64_t i = rest % m->sizes[d];
      rest /= m->sizes[d];
      doff += i * m->dst_stride[d];
      soff += m->src_off[d][i];
    }
    copy_row(m, m->dst + doff, m->src + soff);
  }
  return WEFT_OK;
}

/* Index maps per dim: out index i of dim d reads input index map(d, i). */
typedef int64_t (*index_map)(const void* ctx, int d, int64_t i);

static void remap_free(remap* m) {
  for (int d = 0; d < m->ndim; d++) free(m->src_off[d]);
}

/* out = src gathered through map (out and src have the same rank). */
static weft_status remap_run(const char* op, weft_tensor* out, const weft_tensor* src, index_map map,
                             const void* ctx) {
  if (on_meta(out) || out->numel == 0) return WEFT_OK;
  /* the plan is known once the maps are: explain() builds them, then records */
  remap m = {.dst = weft_tensor_data_ptr(out), .src = weft_tensor_data_ptr(src), .ndim = out->ndim ? out->ndim : 1,
             .esize = weft_dtype_size(out->dtype)};
  for (int d = 0; d < m.ndim; d++) {
    m.sizes[d] = out->ndim ? out->sizes[d] : 1;
    m.dst_stride[d] = out->ndim ? out->strides[d] * (int64_t)m.esize : 0;
    m.src_off[d] = malloc(sizeof(int64_t) * (size_t)m.sizes[d]);
    if (!m.src_off[d]) {
      m.ndim = d;
      remap_free(&m);
      return weft__error(WEFT_OUT_OF_MEMORY, "%s: out of memory", op);
    }
    for (int64_t i = 0; i < m.sizes[d]; i++)
      m.src_off[d][i] = out->ndim ? map(ctx, d, i) * src->strides[d] * (int64_t)m.esize : 0;
  }
  int64_t inner = m.sizes[m.ndim - 1], rows = out->numel / inner;
  const int64_t* last = m.src_off[m.ndim - 1];
  m.dense_rows = m.dst_stride[m.ndim - 1] == (int64_t)m.esize;
  for (int64_t j = 1; m.dense_rows && j < inner; j++) m.dense_rows = last[j] == last[0] + j * (int64_t)m.esize;
  int64_t grain = inner >= 32768 ? 1 : 32768 / inner;
  weft_status s = weft_explaining()
                      ? weft__explain_kernel(op, "remap", m.dense_rows ? "row_copies" : "elements", out->dtype, rows, inner)
                      : weft_parallel_for(0, rows, grain, remap_rows, &m);
  remap_free(&m);
  return s;
}

static weft_tensor* new_like(const weft_tensor* self, const int64_t* sizes, int64_t ndim, weft_memory_format f) {
  return weft_empty(sizes, ndim, self->dtype, self->device, f);
}

/* A result tensor, then a status: the tensor, or NULL (released) on error. */
static weft_tensor* done(weft_tensor* r, weft_status s) {
  if (s == WEFT_OK) return r;
  weft_tensor_release(r);
  return NULL;
}

/* dims list -> bitmask, wrapped, repeated dims refused (dim_list_to_bitset) */
static bool dims_mask(const char* op, const int64_t* dims, int64_t n, int64_t ndim, uint32_t* mask) {
  *mask = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t d;
    if (!weft__wrap_dim(op, dims[i], ndim, &d)) return false;
    if (*mask & (1u << d)) {
      weft__error(WEFT_INVALID_ARGUMENT, "%s: dim %lld appears multiple times in the list of dims", op,
                  (long long)d);
      return false;
    }
    *mask |= 1u << d;
  }
  return true;
}

/* ---- flip ---- */

typedef struct {
  const int64_t* sizes;
  uint32_t mask;
} flip_ctx;

static int64_t flip_map(const void* ctx, int d, int64_t i) {
  const flip_ctx* c = ctx;
  return (c->mask >> d) & 1u ? c->sizes[d] - 1 - i : i;
}

static weft_tensor* flip_kernel(const weft_tensor* self, const int64_t* dims, int64_t n) {
  flip_ctx c = {self->sizes, 0};
  if (!dims_mask("flip", dims, n, self->ndim, &c.mask)) return NULL;
  weft_tensor* out = weft_empty_like(self, self->dtype, WEFT_PRESERVE_FORMAT);
  if (!out) return NULL;
  return done(out, remap_run("flip", out, self, flip_map, &c));
}

/* ---- roll ---- */

typedef struct {
  const int64_t* sizes;
  int64_t shift[WEFT_MAX_DIMS]; /* in [0, size) */
} roll_ctx;

static int64_t roll_map(const void* ctx, int d, int64_t i) {
  const roll_ctx* c = ctx;
  int64_t j = i - c->shift[d];
  return j < 0 ? j + c->sizes[d] : j;
}

static weft_tensor* roll_dims(const weft_tensor* self, const int64_t* shifts, const int64_t* dims, int64_t n) {
  roll_ctx c = {self->sizes, {0}};
  for (int64_t i = 0; i < n; i++) {
    int64_t d;
    if (!weft__wrap_dim("roll", dims[i], self->ndim, &d)) return NULL;
    int64_t size = self->sizes[d];
    if (size > 0) c.shift[d] = ((c.shift[d] + shifts[i]) % size + size) % size;
  }
  if (self->numel == 0) return weft_clone(self, WEFT_PRESERVE_FORMAT);
  weft_memory_format f = weft_tensor_suggest_memory_format(self);
  weft_tensor* out = new_like(self, self->sizes, self->ndim, f);
  if (!out) return NULL;
  return done(out, remap_run("roll", out, self, roll_map, &c));
}

static weft_tensor* roll_kernel(const weft_tensor* self, const int64_t* shifts, int64_t ns, const int64_t* dims,
                                int64_t nd) {
  if (ns == 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "roll: `shifts` required");
  if (nd == 0 && ns == 1) { /* flattened */
    int64_t numel = self->numel, zero = 0;
    weft_tensor* flat = weft_reshape(self, &numel, 1);
    weft_tensor* r = flat ? roll_dims(flat, shifts, &zero, 1) : NULL;
    weft_tensor* v = r ? weft_view(r, self->sizes, self->ndim) : NULL;
    weft_tensor_release(flat);
    weft_tensor_release(r);
    return v;
  }
  if (ns != nd)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "roll: shifts and dimensions must align. shifts: %lld, dims:%lld",
                            (long long)ns, (long long)nd);
  return roll_dims(self, shifts, dims, nd);
}

/* ---- repeat, tile ---- */

typedef struct {
  int64_t in_sizes[WEFT_MAX_DIMS];
} repeat_ctx;

static int64_t repeat_map(const void* ctx, int d, int64_t i) {
  const repeat_ctx* c = ctx;
  return i % c->in_sizes[d];
}

static weft_tensor* repeat_impl(const char* op, const weft_tensor* self, const int64_t* reps, int64_t n) {
  if (n < self->ndim)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "%s: Number of dimensions of repeat dims can not be smaller than number of dimensions "
                            "of tensor",
                            op);
  if (n > WEFT_MAX_DIMS)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "%s: at most %d dims are supported, got %lld", op,
                            WEFT_MAX_DIMS, (long long)n);
  /* self with leading size-1 dims, so both have n dims */
  int64_t lead = n - self->ndim, sizes[WEFT_MAX_DIMS], strides[WEFT_MAX_DIMS], out_sizes[WEFT_MAX_DIMS];
  repeat_ctx c;
  for (int64_t d = 0; d < n; d++) {
    sizes[d] = d < lead ? 1 : self->sizes[d - lead];
    strides[d] = d < lead ? 0 : self->strides[d - lead];
    c.in_sizes[d] = sizes[d];
    if (weft__mul_overflow(sizes[d], reps[d], &out_sizes[d])) /* negative, in range: empty's error names it */
      return weft__error_null(WEFT_OVERFLOW, "%s: size %lld repeated %lld times overflows int64", op,
                              (long long)sizes[d], (long long)reps[d]);
  }
  weft_tensor* out = weft_empty(out_sizes, n, self->dtype, self->device, WEFT_CONTIGUOUS_FORMAT);
  if (!out) return NULL;
  if (out->numel == 0) return out;
  weft_tensor* src = weft__tensor_new(self->storage, sizes, strides, n, self->storage_offset, self->dtype);
  if (!src) return done(out, weft_last_status());
  weft_status s = remap_run(op, out, src, repeat_map, &c);
  weft_tensor_release(src);
  return done(out, s);
}

static weft_tensor* repeat_kernel(const weft_tensor* self, const int64_t* reps, int64_t n) {
  return repeat_impl("repeat", self, reps, n);
}

static weft_tensor* tile_kernel(const weft_tensor* self, const int64_t* dims, int64_t n) {
  if (n >= self->ndim) return repeat_impl("tile", self, dims, n);
  int64_t reps[WEFT_MAX_DIMS], lead = self->ndim - n;
  for (int64_t d = 0; d < self->ndim; d++) reps[d] = d < lead ? 1 : dims[d - lead];
  return repeat_impl("tile", self, reps, self->ndim);
}

/* ---- repeat_interleave ---- */

/* The int64 repeats of a 1-D int32/int64 tensor, checked (caller frees). */
/* The sum of n repeats into *total; false (an error set) when it overflows int64. */
static bool sum_repeats(const int64_t* v, int64_t n, int64_t* total) {
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++)
    if (weft__add_overflow(sum, v[i], &sum)) {
      weft__error(WEFT_OVERFLOW, "repeat_interleave: the repeats sum to more than int64 holds");
      return false;
    }
  *total = sum;
  return true;
}

static int64_t* read_repeats(const weft_tensor* r, int64_t* total) {
  if (r->dtype != WEFT_INT32 && r->dtype != WEFT_INT64)
    return weft__error_null(WEFT_TYPE_ERROR, "repeat_interleave: \"repeat_interleave_cpu\" not implemented for '%s'",
                            weft_dtype_name(r->dtype));
  if (r->ndim != 1)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "repeat_interleave: repeat_interleave only accept 1D vector as repeat");
  int64_t n = r->sizes[0];
  int64_t* v = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  if (!v) return weft__error_null(WEFT_OUT_OF_MEMORY, "repeat_interleave: out of memory");
  const char* p = weft_tensor_data_ptr(r);
  bool negative = false;
  for (int64_t i = 0; i < n; i++) {
    const char* e = p + i * r->strides[0] * (int64_t)weft_dtype_size(r->dtype);
    v[i] = weft__load(e, r->dtype).i;
    negative |= v[i] < 0;
  }
  if (negative) {
    free(v);
    return weft__error_null(WEFT_INVALID_ARGUMENT, "repeat_interleave: repeats can not be negative");
  }
  if (!sum_repeats(v, n, total)) {
    free(v);
    return NULL;
  }
  return v;
}

static weft_status check_output_size(int64_t given, int64_t total) {
  if (given != INT64_MIN && given != total)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "repeat_interleave: allocated size does not match required size (output_size %lld, "
                       "required %lld)", (long long)given, (long long)total);
  return WEFT_OK;
}

/* The input index of each output index along the repeated dim. */
static int64_t* interleave_index(const int64_t* reps, int64_t n, int64_t total) {
  int64_t* idx = malloc(sizeof(int64_t) * (size_t)(total > 0 ? total : 1));
  if (!idx) return weft__error_null(WEFT_OUT_OF_MEMORY, "repeat_interleave: out of memory");
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < reps[i]; j++) idx[k++] = i;
  return idx;
}

static weft_tensor* repeat_interleave_tensor_kernel(const weft_tensor* repeats, int64_t output_size) {
  if (on_meta(repeats))
    return weft__error_null(WEFT_INVALID_ARGUMENT, "repeat_interleave: the output size of a meta tensor's "
                                                   "repeats is not known");
  int64_t total = 0;
  int64_t* reps = read_repeats(repeats, &total);
  if (!reps) return NULL;
  weft_tensor* out = NULL;
  int64_t* idx = check_output_size(output_size, total) == WEFT_OK ? interleave_index(reps, repeats->sizes[0], total)
                                                                   : NULL;
  if (idx) out = weft_empty(&total, 1, repeats->dtype, repeats->device, WEFT_CONTIGUOUS_FORMAT);
  for (int64_t i = 0; out && i < total; i++) weft__store((char*)weft_tensor_data_ptr(out) + i * (int64_t)weft_dtype_size(out->dtype), out->dtype, (weft__value){0, idx[i], 0.0});
  free(idx);
  free(reps);
  return out;
}

typedef struct {
  int dim;
  const int64_t* idx;
} interleave_ctx;

static int64_t interleave_map(const void* ctx, int d, int64_t i) {
  const interleave_ctx* c = ctx;
  return d == c->dim ? c->idx[i] : i;
}

/* self (flattened when dim is None) repeated along dim by reps (n of them,
 * or one for all). */
static weft_tensor* interleave(const weft_tensor* self, const int64_t* reps1, int64_t n, int64_t dim,
                               int64_t output_size) {
  weft_tensor* in = dim == INT64_MIN ? weft_flatten(self, 0, -1) : weft_tensor_retain((weft_tensor*)self);
  if (!in) return NULL;
  int64_t d = 0;
  if (in->ndim == 0) { /* index_select's check */
    weft__error(WEFT_INDEX_ERROR, "repeat_interleave: Dimension specified as %lld but tensor has no dimensions",
                (long long)dim);
    return done(in, WEFT_INDEX_ERROR);
  }
  if (dim != INT64_MIN && !weft__wrap_dim("repeat_interleave", dim, in->ndim, &d)) return done(in, WEFT_INVALID_ARGUMENT);
  int64_t len = in->sizes[d];
  if (n != 1 && n != len) {
    weft__error(WEFT_INVALID_ARGUMENT, "repeat_interleave: repeats must have the same size as input along dim");
    return done(in, WEFT_INVALID_ARGUMENT);
  }
  int64_t* reps = malloc(sizeof(int64_t) * (size_t)(len > 0 ? len : 1));
  int64_t total = 0;
  for (int64_t i = 0; reps && i < len; i++) reps[i] = reps1[n == 1 ? 0 : i];
  int64_t* idx = reps && sum_repeats(reps, len, &total) && check_output_size(output_size, total) == WEFT_OK
                     ? interleave_index(reps, len, total)
                     : NULL;
  if (!reps) weft__error(WEFT_OUT_OF_MEMORY, "repeat_interleave: out of memory");
  weft_tensor* out = NULL;
  if (idx) {
    int64_t sizes[WEFT_MAX_DIMS];
    memcpy(sizes, in->sizes, sizeof(int64_t) * (size_t)in->ndim);
    sizes[d] = total;
    out = new_like(in, sizes, in->ndim, WEFT_CONTIGUOUS_FORMAT);
    if (out) {
      interleave_ctx c = {(int)d, idx};
      out = done(out, remap_run("repeat_interleave", out, in, interleave_map, &c));
    }
  }
  free(idx);
  free(reps);
  weft_tensor_release(in);
  return out;
}

static weft_tensor* repeat_interleave_self_tensor_kernel(const weft_tensor* self, const weft_tensor* repeats,
                                                         int64_t dim, int64_t output_size) {
  if (repeats->ndim > 1)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "repeat_interleave: repeats must be 0-dim or 1-dim tensor");
  if (on_meta(repeats))
    return weft__error_null(WEFT_INVALID_ARGUMENT, "repeat_interleave: the output size of a meta tensor's "
                                                   "repeats is not known");
  weft_tensor* r1 = repeats->ndim == 0 ? weft_reshape(repeats, (int64_t[]){1}, 1)
                                       : weft_tensor_retain((weft_tensor*)repeats);
  if (!r1) return NULL;
  int64_t total = 0;
  int64_t* reps = read_repeats(r1, &total);
  weft_tensor* out = reps ? interleave(self, reps, r1->sizes[0], dim, output_size) : NULL;
  free(reps);
  weft_tensor_release(r1);
  return out;
}

static weft_tensor* repeat_interleave_self_int_kernel(const weft_tensor* self, int64_t repeats, int64_t dim,
                                                      int64_t output_size) {
  if (repeats < 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "repeat_interleave: repeats can not be negative");
  return interleave(self, &repeats, 1, dim, output_size);
}

/* ---- tril, triu ---- */

typedef struct {
  char* base;
  int64_t rows, cols;  /* of each matrix */
  int64_t lead[WEFT_MAX_DIMS], lead_stride[WEFT_MAX_DIMS]; /* batch dims (bytes) */
  int nlead;
  int64_t rs, cs; /* row / column strides, bytes */
  size_t esize;
  int64_t k;
  bool lower;
} tri_ctx;

/* Zeroes, in each matrix row, the columns outside the kept triangle. */
static weft_status tri_rows(void* ctx, int64_t begin, int64_t end) {
  const tri_ctx* c = ctx;
  for (int64_t r = begin; r < end; r++) {
    int64_t i = r % c->rows, rest = r / c->rows, off = i * c->rs;
    for (int d = c->nlead - 1; d >= 0; d--) {
      off += (rest % c->lead[d]) * c->lead_stride[d];
      rest /= c->lead[d];
    }
    int64_t lo = c->lower ? i + c->k + 1 : 0, hi = c->lower ? c->cols : i + c->k;
    if (lo < 0) lo = 0;
    if (hi > c->cols) hi = c->cols;
    char* row = c->base + off;
    if (hi > lo && c->cs == (int64_t)c->esize) {
      memset(row + lo * c->cs, 0, (size_t)(hi - lo) * c->esize);
    } else {
      for (int64_t j = lo; j < hi; j++) memset(row + j * c->cs, 0, c->esize);
    }
  }
  return WEFT_OK;
}

static weft_status zero_triangle(weft_tensor* t, int64_t k, bool lower) {
  if (on_meta(t) || t->numel == 0) return WEFT_OK;
  size_t es = weft_dtype_size(t->dtype);
  /* beyond ±(rows + cols) every diagonal offset zeroes the same: clamp so i + k cannot overflow */
  int64_t span = t->sizes[t->ndim - 2] + t->sizes[t->ndim - 1];
  k = k > span ? span : k < -span ? -span : k;
  tri_ctx c = {.base = weft_tensor_data_ptr(t), .rows = t->sizes[t->ndim - 2], .cols = t->sizes[t->ndim - 1],
               .nlead = t->ndim - 2, .rs = t->strides[t->ndim - 2] * (int64_t)es,
               .cs = t->strides[t->ndim - 1] * (int64_t)es, .esize = es, .k = k, .lower = lower};
  for (int d = 0; d < c.nlead; d++) {
    c.lead[d] = t->sizes[d];
    c.lead_stride[d] = t->strides[d] * (int64_t)es;
  }
  int64_t grain = c.cols >= 32768 ? 1 : 32768 / c.cols;
  return weft_parallel_for(0, t->numel / c.cols, grain, tri_rows, &c);
}

/* PyTorch reads the matrix dims as -2 and -1: a 1-D input fails there */
static bool tri_check(const char* op, const weft_tensor* self) {
  int64_t d;
  return weft__wrap_dim(op, -2, self->ndim, &d);
}

weft_status weft__into_out(const char* op, const weft_tensor* r, weft_tensor* out) {
  weft_status s = WEFT_OK;
  if (out->ndim != r->ndim || memcmp(out->sizes, r->sizes, sizeof(int64_t) * (size_t)r->ndim) != 0)
    s = weft__tensor_resize_(out, r->sizes, r->strides, r->ndim, op);
  if (s == WEFT_OK && !on_meta(r)) s = weft_copy_(out, r);
  return s;
}

/* out= of a structured op: self's dtype exactly. */
static weft_status out_like(const char* op, const weft_tensor* r, weft_tensor* out) {
  if (out->dtype != r->dtype)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                       weft_dtype_name(r->dtype), weft_dtype_name(out->dtype));
  return weft__into_out(op, r, out);
}

static weft_tensor* tri(const char* op, const weft_tensor* self, int64_t k, bool lower, weft_tensor* out) {
  if (!tri_check(op, self)) return NULL;
  weft_tensor* r = weft_clone(self, WEFT_CONTIGUOUS_FORMAT);
  if (!r) return NULL;
  weft_status s = zero_triangle(r, k, lower);
  if (s == WEFT_OK && out) {
    s = out_like(op, r, out);
    weft_tensor_release(r);
    return s == WEFT_OK ? weft_tensor_retain(out) : NULL;
  }
  return done(r, s);
}

static weft_tensor* tril_kernel(const weft_tensor* self, int64_t k) { return tri("tril", self, k, true, NULL); }
static weft_tensor* triu_kernel(const weft_tensor* self, int64_t k) { return tri("triu", self, k, false, NULL); }
static weft_tensor* tril_out_kernel(const weft_tensor* self, int64_t k, weft_tensor* out) {
  return tri("tril", self, k, true, out);
}
static weft_tensor* triu_out_kernel(const weft_tensor* self, int64_t k, weft_tensor* out) {
  return tri("triu", self, k, false, out);
}
static weft_status tril__kernel(weft_tensor* self, int64_t k) {
  return tri_check("tril_", self) ? zero_triangle(self, k, true) : weft_last_status();
}
static weft_status triu__kernel(weft_tensor* self, int64_t k) {
  return tri_check("triu_", self) ? zero_triangle(self, k, false) : weft_last_status();
}

/* ---- diagonal, diag ---- */

/* may be negative: the diagonal starts past the matrix */
static int64_t diag_len(int64_t n1, int64_t n2, int64_t offset) {
  return offset >= 0 ? (n1 < n2 - offset ? n1 : n2 - offset) : (n1 + offset < n2 ? n1 + offset : n2);
}

static weft_tensor* diagonal_view(const char* op, const weft_tensor* self, int64_t offset, int64_t dim1,
                                  int64_t dim2) {
  int64_t d1, d2;
  if (!weft__wrap_dim(op, dim1, self->ndim, &d1) || !weft__wrap_dim(op, dim2, self->ndim, &d2)) return NULL;
  if (d1 == d2)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "%s: diagonal dimensions cannot be identical %lld, %lld", op,
                            (long long)dim1, (long long)dim2);
  int64_t len = diag_len(self->sizes[d1], self->sizes[d2], offset), start = self->storage_offset;
  if (len <= 0) len = 0;
  else start += offset >= 0 ? offset * self->strides[d2] : -offset * self->strides[d1];
  int64_t sizes[WEFT_MAX_DIMS], strides[WEFT_MAX_DIMS], n = 0;
  for (int64_t d = 0; d < self->ndim; d++) {
    if (d == d1 || d == d2) continue;
    sizes[n] = self->sizes[d];
    strides[n++] = self->strides[d];
  }
  sizes[n] = len;
  strides[n++] = self->strides[d1] + self->strides[d2];
  return weft__tensor_new(self->storage, sizes, strides, n, start, self->dtype);
}

static weft_tensor* diagonal_kernel(const weft_tensor* self, int64_t offset, int64_t dim1, int64_t dim2) {
  return diagonal_view("diagonal", self, offset, dim1, dim2);
}

static weft_tensor* diag_impl(const weft_tensor* self, int64_t k) {
  if (self->ndim == 2) {
    if (diag_len(self->sizes[0], self->sizes[1], k) < 0) /* 1.13 sizes its result with the negative length */
      return weft__error_null(WEFT_INVALID_ARGUMENT, "diag: numel: integer multiplication overflow");
    weft_tensor* v = diagonal_view("diag", self, k, 0, 1);
    weft_tensor* r = v ? weft_clone(v, WEFT_CONTIGUOUS_FORMAT) : NULL;
    weft_tensor_release(v);
    return r;
  }
  if (self->ndim != 1) return weft__error_null(WEFT_INVALID_ARGUMENT, "diag: matrix or a vector expected");
  int64_t n = self->sizes[0] + (k < 0 ? -k : k), sizes[2] = {n, n};
  weft_tensor* r = weft_empty(sizes, 2, self->dtype, self->device, WEFT_CONTIGUOUS_FORMAT);
  if (!r || on_meta(r)) return r;
  weft_status s = weft_fill_(r, 0);
  weft_tensor* v = s == WEFT_OK ? diagonal_view("diag", r, k, 0, 1) : NULL;
  if (v) s = weft_copy_(v, self);
  else s = weft_last_status();
  weft_tensor_release(v);
  return done(r, s);
}

static weft_tensor* diag_kernel(const weft_tensor* self, int64_t k) { return diag_impl(self, k); }

static weft_tensor* diag_out_kernel(const weft_tensor* self, int64_t k, weft_tensor* out) {
  if (out->dtype != self->dtype)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "diag: expected scalar type %s but found %s",
                            weft_dtype_name(self->dtype), weft_dtype_name(out->dtype));
  weft_tensor* r = diag_impl(self, k);
  if (!r) return NULL;
  weft_status s = out_like("diag", r, out);
  weft_tensor_release(r);
  return s == WEFT_OK ? weft_tensor_retain(out) : NULL;
}

/* ---- clamp: maximum(self, min), then minimum(., max) ---- */

static int category(weft_dtype t) { return t == WEFT_BOOL ? 0 : weft_dtype_is_floating(t) ? 2 : 1; }

/* A Scalar bound as a 0-dim tensor of the dtype PyTorch's wrapped number
 * gives it beside self: self's, unless the number is of a higher category
 * (then int64 or the default float dtype). */
static weft_tensor* scalar_bound(const weft_tensor* self, const weft_scalar* s) {
  if (!s) return NULL;
  int sc = s->tag == WEFT_SCALAR_BOOL ? 0 : s->tag == WEFT_SCALAR_INT ? 1 : 2;
  weft_dtype t = self->dtype;
  if (sc > category(t)) t = sc == 1 ? WEFT_INT64 : weft_get_default_dtype();
  return weft_full(NULL, 0, weft_scalar_to_double(*s), t, self->device);
}

/* out: NULL (a new tensor), self (in place) or the out= tensor; the
 * iterator's promotion and out= casting rules (clamp.Tensor's). */
static weft_tensor* clamp_impl(const char* op, const weft_tensor* self, const weft_tensor* lo, const weft_tensor* hi,
                               weft_tensor* out) {
  if (!lo && !hi)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "%s: At least one of 'min' or 'max' must not be null",
                            op);
  weft_tensor* a = NULL;
  if (lo) a = out && !hi ? weft_maximum_out(self, lo, out) : weft_maximum(self, lo);
  if (lo && !a) return NULL;
  const weft_tensor* x = a ? a : self;
  weft_tensor* r = a;
  if (hi) {
    r = out ? weft_minimum_out(x, hi, out) : weft_minimum(x, hi);
    weft_tensor_release(a);
  }
  return r;
}

/* clamp with Scalar bounds (clamp, clamp_min, clamp_max): the result type is
 * self's, or the bounds' when they promote an integral self; out= and
 * in-place need exactly that dtype (1.13's unary build). */
static weft_tensor* clamp_scalars(const char* op, const weft_tensor* self, const weft_scalar* lo,
                                  const weft_scalar* hi, weft_tensor* out) {
  if (!lo && !hi)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "%s: At least one of 'min' or 'max' must not be null",
                            op);
  if (self->dtype == WEFT_FLOAT16) /* 1.13's scalar kernels have no Half */
    return weft__error_null(WEFT_TYPE_ERROR, "%s: \"%s\" not implemented for 'float16'", op,
                            lo && hi ? "clamp_scalar_cpu" : lo ? "clamp_min_cpu" : "clamp_max_scalar_cpu");
  weft_tensor* tl = scalar_bound(self, lo);
  weft_tensor* th = scalar_bound(self, hi);
  weft_tensor* r = NULL;
  weft_dtype rt = self->dtype;
  if (tl && tl->dtype != rt) rt = tl->dtype;
  if (th && category(th->dtype) > category(rt)) rt = th->dtype;
  if ((lo && !tl) || (hi && !th)) {
    r = NULL;
  } else if (out == self && rt != self->dtype) {
    weft__error(WEFT_TYPE_ERROR, "%s: result type %s can't be cast to the desired output type %s", op,
                weft_dtype_name(rt), weft_dtype_name(self->dtype));
  } else if (out && out != self && out->dtype != rt) {
    weft__error(WEFT_TYPE_ERROR, "%s: Found dtype %s but expected %s", op, weft_dtype_name(out->dtype),
                weft_dtype_name(rt));
  } else {
    r = clamp_impl(op, self, tl, th, out);
  }
  weft_tensor_release(tl);
  weft_tensor_release(th);
  return r;
}

static weft_status status_of(weft_tensor* r) {
  if (!r) return weft_last_status();
  weft_tensor_release(r);
  return WEFT_OK;
}

static weft_tensor* k_clamp(const weft_tensor* s, const weft_scalar* lo, const weft_scalar* hi) {
  return clamp_scalars("clamp", s, lo, hi, NULL);
}
static weft_tensor* k_clamp_tensor(const weft_tensor* s, const weft_tensor* lo, const weft_tensor* hi) {
  return clamp_impl("clamp", s, lo, hi, NULL);
}
static weft_status k_clamp_(weft_tensor* s, const weft_scalar* lo, const weft_scalar* hi) {
  return status_of(clamp_scalars("clamp_", s, lo, hi, s));
}
static weft_status k_clamp_tensor_(weft_tensor* s, const weft_tensor* lo, const weft_tensor* hi) {
  return status_of(clamp_impl("clamp_", s, lo, hi, s));
}
static weft_tensor* k_clamp_out(const weft_tensor* s, const weft_scalar* lo, const weft_scalar* hi, weft_tensor* o) {
  return clamp_scalars("clamp", s, lo, hi, o);
}
static weft_tensor* k_clamp_tensor_out(const weft_tensor* s, const weft_tensor* lo, const weft_tensor* hi,
                                       weft_tensor* o) {
  return clamp_impl("clamp", s, lo, hi, o);
}
static weft_tensor* k_clamp_min(const weft_tensor* s, weft_scalar v) { return clamp_scalars("clamp_min", s, &v, NULL, NULL); }
static weft_tensor* k_clamp_min_tensor(const weft_tensor* s, const weft_tensor* v) {
  return clamp_impl("clamp_min", s, v, NULL, NULL);
}
static weft_status k_clamp_min_(weft_tensor* s, weft_scalar v) {
  return status_of(clamp_scalars("clamp_min_", s, &v, NULL, s));
}
static weft_tensor* k_clamp_min_out(const weft_tensor* s, weft_scalar v, weft_tensor* o) {
  return clamp_scalars("clamp_min", s, &v, NULL, o);
}
static weft_tensor* k_clamp_max(const weft_tensor* s, weft_scalar v) { return clamp_scalars("clamp_max", s, NULL, &v, NULL); }
static weft_tensor* k_clamp_max_tensor(const weft_tensor* s, const weft_tensor* v) {
  return clamp_impl("clamp_max", s, NULL, v, NULL);
}
static weft_status k_clamp_max_(weft_tensor* s, weft_scalar v) {
  return status_of(clamp_scalars("clamp_max_", s, NULL, &v, s));
}
static weft_tensor* k_clamp_max_out(const weft_tensor* s, weft_scalar v, weft_tensor* o) {
  return clamp_scalars("clamp_max", s, NULL, &v, o);
}

#define BOTH(op, fn)        \
  WEFT_KERNEL(op, CPU, fn); \
  WEFT_KERNEL(op, META, fn)

weft_status weft__shape_register(void) {
  BOTH(flip, flip_kernel);
  BOTH(roll, roll_kernel);
  BOTH(repeat, repeat_kernel);
  BOTH(tile, tile_kernel);
  BOTH(repeat_interleave_tensor, repeat_interleave_tensor_kernel);
  BOTH(repeat_interleave_self_tensor, repeat_interleave_self_tensor_kernel);
  BOTH(repeat_interleave_self_int, repeat_interleave_self_int_kernel);
  BOTH(tril, tril_kernel);
  BOTH(tril_, tril__kernel);
  BOTH(tril_out, tril_out_kernel);
  BOTH(triu, triu_kernel);
  BOTH(triu_, triu__kernel);
  BOTH(triu_out, triu_out_kernel);
  BOTH(diag, diag_kernel);
  BOTH(diag_out, diag_out_kernel);
  WEFT_KERNEL(diagonal, COMPOSITE_EXPLICIT_AUTOGRAD, diagonal_kernel);
  BOTH(clamp, k_clamp);
  BOTH(clamp_tensor, k_clamp_tensor);
  BOTH(clamp_, k_clamp_);
  BOTH(clamp_tensor_, k_clamp_tensor_);
  BOTH(clamp_out, k_clamp_out);
  BOTH(clamp_tensor_out, k_clamp_tensor_out);
  BOTH(clamp_min, k_clamp_min);
  BOTH(clamp_min_tensor, k_clamp_min_tensor);
  BOTH(clamp_min_, k_clamp_min_);
  BOTH(clamp_min_out, k_clamp_min_out);
  BOTH(clamp_max, k_clamp_max);
  BOTH(clamp_max_tensor, k_clamp_max_tensor);
  BOTH(clamp_max_, k_clamp_max_);
  BOTH(clamp_max_out, k_clamp_max_out);
  /* clamp is maximum / minimum: on the webgpu device those ops' kernels */
  WEFT_KERNEL(clamp, WEBGPU, k_clamp);
  WEFT_KERNEL(clamp_tensor, WEBGPU, k_clamp_tensor);
  WEFT_KERNEL(clamp_, WEBGPU, k_clamp_);
  WEFT_KERNEL(clamp_tensor_, WEBGPU, k_clamp_tensor_);
  WEFT_KERNEL(clamp_min, WEBGPU, k_clamp_min);
  WEFT_KERNEL(clamp_min_, WEBGPU, k_clamp_min_);
  WEFT_KERNEL(clamp_max, WEBGPU, k_clamp_max);
  WEFT_KERNEL(clamp_max_, WEBGPU, k_clamp_max_);
  return WEFT_OK;
}
