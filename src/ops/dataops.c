/* Data ops of issue 25: bincount, histc, one_hot, index_add(_), index_fill(_),
 * with PyTorch 1.13's checks in its order and words (dtypes as JS names them).
 * bincount and histc count serially in input order, so their sums have the
 * same bits at any thread count. index_add adds one slice per index with
 * add_ (parallel over the slice's elements, each written by one thread),
 * indices in order, so duplicates accumulate as 1.13's serial loop does and
 * the bits do not depend on the thread count. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "ops/index_internal.h"
#include "ops/ops.h"

typedef const weft_tensor* T;

/* a dense copy of t as dtype (a new reference) */
static weft_tensor* dense_as(T t, weft_dtype dtype) {
  weft_tensor* c = weft_to_dtype(t, dtype, false);
  if (!c) return NULL;
  weft_tensor* d = weft_contiguous(c, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor_release(c);
  return d;
}

static weft_tensor* empty1(int64_t n, weft_dtype dtype, weft_device dev) {
  weft_tensor* r = weft_empty(&n, 1, dtype, dev, WEFT_CONTIGUOUS_FORMAT);
  if (r && dev != WEFT_DEVICE_META && weft_fill_(r, 0.0) != WEFT_OK) weft_tensor_release(r), r = NULL;
  return r;
}

/* ---- bincount ---- */
static weft_status bincount_checks(T self, T weights, int64_t minlength) {
  if (!weft_dtype_is_integral(self->dtype, false))
    return weft__error(WEFT_TYPE_ERROR, "\"bincount_cpu\" not implemented for '%s'", weft_dtype_name(self->dtype));
  if (minlength < 0) return weft__error(WEFT_INVALID_ARGUMENT, "minlength should be >= 0");
  if (self->ndim != 1)
    return weft__error(WEFT_INVALID_ARGUMENT, "bincount only supports 1-d non-negative integral inputs.");
  if (weights && (weights->ndim != 1 || weights->sizes[0] != self->sizes[0]))
    return weft__error(WEFT_INVALID_ARGUMENT, "weights should be 1-d and have the same length as input");
  if (self->device == WEFT_DEVICE_META)
    return weft__error(WEFT_NOT_IMPLEMENTED,
                       "bincount: the output size depends on the input's values, which a meta tensor does not have");
  return WEFT_OK;
}

/* counts (or weight sums, in double or float as PyTorch sums them) into r */
static void bincount_fill(const int64_t* x, int64_t n, T w, weft_tensor* r) {
  if (!w) {
    int64_t* o = weft_tensor_data_ptr(r);
    for (int64_t i = 0; i < n; i++) o[x[i]]++;
  } else if (w->dtype == WEFT_FLOAT32) {
    const float* wv = weft_tensor_data_ptr(w);
    float* o = weft_tensor_data_ptr(r);
    for (int64_t i = 0; i < n; i++) o[x[i]] += wv[i];
  } else {
    const double* wv = weft_tensor_data_ptr(w);
    double* o = weft_tensor_data_ptr(r);
    for (int64_t i = 0; i < n; i++) o[x[i]] += wv[i];
  }
}

static weft_tensor* bincount_counts(const int64_t* x, int64_t n, T weights, int64_t minlength) {
  int64_t top = -1;
  for (int64_t i = 0; i < n; i++) {
    if (x[i] < 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "bincount only supports 1-d non-negative integral inputs.");
    if (x[i] > top) top = x[i];
  }
  int64_t len = top + 1 > minlength ? top + 1 : minlength;
  weft_dtype out = !weights ? WEFT_INT64 : weights->dtype == WEFT_FLOAT32 ? WEFT_FLOAT32 : WEFT_FLOAT64;
  weft_tensor* w = weights ? dense_as(weights, out) : NULL;
  weft_tensor* r = (!weights || w) ? empty1(len, out, WEFT_DEVICE_CPU) : NULL;
  if (r) bincount_fill(x, n, w, r);
  weft_tensor_release(w);
  return r;
}

static weft_tensor* bincount_kernel(T self, T weights, int64_t minlength) {
  if (bincount_checks(self, weights, minlength) != WEFT_OK) return NULL;
  weft_tensor* x = dense_as(self, WEFT_INT64);
  if (!x) return NULL;
  weft_tensor* r = bincount_counts(weft_tensor_data_ptr(x), x->numel, weights, minlength);
  weft_tensor_release(x);
  return r;
}

/* ---- histc ---- */
/* 1.13's histc_select_outer_bin_edges: min == max takes the data's range, an
 * empty range widens by one on each side */
static weft_status histc_edges(T x, double lo, double hi, double* e) {
  if (lo == hi && x->numel > 0 && x->device != WEFT_DEVICE_META) {
    weft_tensor* d = dense_as(x, WEFT_FLOAT64);
    if (!d) return weft_last_status();
    const double* v = weft_tensor_data_ptr(d);
    lo = hi = v[0];
    for (int64_t i = 1; i < d->numel; i++) lo = v[i] < lo ? v[i] : lo, hi = v[i] > hi ? v[i] : hi;
    weft_tensor_release(d);
  }
  if (lo == hi) lo -= 1, hi += 1;
  if (isinf(lo) || isinf(hi) || isnan(lo) || isnan(hi))
    return weft__error(WEFT_INVALID_ARGUMENT, "torch.histc: range of [%g, %g] is not finite", lo, hi);
  if (!(lo < hi)) return weft__error(WEFT_INVALID_ARGUMENT, "torch.histc: max must be larger than min");
  e[0] = lo, e[1] = hi;
  return WEFT_OK;
}

/* linspace(lo, hi, bins + 1) in the input's type (1.13's kernel: from both
 * ends), then each element's bin by interpolation and a local search among
 * the edges, as histogramdd's LINEAR_INTERPOLATION_WITH_LOCAL_SEARCH does.
 * 1.13's range test lets NaN through and counts it in the first bin (what
 * its NaN-to-int conversion gives on x86 and wasm): so does this */
#define WEFT__HISTC(NAME, S)                                                              \
  static void NAME(const S* x, int64_t n, int64_t bins, double lo_d, double hi_d, S* h, S* edge) { \
    S lo = (S)lo_d, hi = (S)hi_d, step = (hi - lo) / (S)bins;                            \
    int64_t ne = bins + 1, half = ne / 2;                                                 \
    for (int64_t i = 0; i < ne; i++) edge[i] = i < half ? lo + step * (S)i : hi - step * (S)(ne - i - 1); \
    S left = edge[0], right = edge[bins];                                                 \
    for (int64_t i = 0; i < n; i++) {                                                     \
      S v = x[i];                                                                         \
      if (v < left || v > right) continue;                                                \
      if (v != v) {                                                                       \
        h[0] += 1;                                                                        \
        continue;                                                                         \
      }                                                                                   \
      int64_t pos = (int64_t)((v - left) * (S)bins / (right - left));                     \
      int64_t a = pos - 1 > 0 ? pos - 1 : 0, b = pos + 2 < ne ? pos + 2 : ne;              \
      while (a < b && !(v < edge[a])) a++;                                                \
      pos = a - 1;                                                                        \
      if (pos == bins) pos--;                                                             \
      h[pos] += 1;                                                                        \
    }                                                                                     \
  }
WEFT__HISTC(histc_f32, float)
WEFT__HISTC(histc_f64, double)

static weft_status histc_count(T self, int64_t bins, const double* e, weft_tensor* h) {
  weft_tensor* x = weft_contiguous(self, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* edges = x ? empty1(bins + 1, self->dtype, WEFT_DEVICE_CPU) : NULL;
  if (!edges) return weft_tensor_release(x), weft_last_status();
  if (self->dtype == WEFT_FLOAT32)
    histc_f32(weft_tensor_data_ptr(x), x->numel, bins, e[0], e[1], weft_tensor_data_ptr(h), weft_tensor_data_ptr(edges));
  else
    histc_f64(weft_tensor_data_ptr(x), x->numel, bins, e[0], e[1], weft_tensor_data_ptr(h), weft_tensor_data_ptr(edges));
  weft_tensor_release(x);
  weft_tensor_release(edges);
  return WEFT_OK;
}

static weft_tensor* histc_kernel(T self, int64_t bins, weft_scalar min, weft_scalar max) {
  double e[2] = {0, 0};
  if (bins <= 0)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "torch.histogram(): bins must be > 0, but got %lld for dimension 0",
                            (long long)bins);
  if (histc_edges(self, weft_scalar_to_double(min), weft_scalar_to_double(max), e) != WEFT_OK) return NULL;
  if (self->dtype != WEFT_FLOAT32 && self->dtype != WEFT_FLOAT64)
    return weft__error_null(WEFT_TYPE_ERROR, "\"histogram_cpu\" not implemented for '%s'", weft_dtype_name(self->dtype));
  weft_tensor* h = empty1(bins, self->dtype, self->device);
  if (h && self->device != WEFT_DEVICE_META && histc_count(self, bins, e, h) != WEFT_OK)
    weft_tensor_release(h), h = NULL;
  return h;
}

/* ---- one_hot ---- */
static weft_tensor* one_hot_kernel(T self, int64_t num_classes) {
  if (self->dtype != WEFT_INT64) return weft__error_null(WEFT_INVALID_ARGUMENT, "one_hot is only applicable to index tensor.");
  int64_t sizes[WEFT_MAX_DIMS + 1];
  memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
  if (self->numel == 0) {
    if (num_classes <= 0)
      return weft__error_null(WEFT_INVALID_ARGUMENT, "Can not infer total number of classes from empty tensor.");
    sizes[self->ndim] = num_classes;
    return weft_empty(sizes, self->ndim + 1, WEFT_INT64, self->device, WEFT_CONTIGUOUS_FORMAT);
  }
  if (self->device == WEFT_DEVICE_META)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "Can not infer total number of classes from meta tensor.");
  weft_tensor* x = dense_as(self, WEFT_INT64);
  if (!x) return NULL;
  const int64_t* v = weft_tensor_data_ptr(x);
  int64_t lo = v[0], hi = v[0], n = x->numel;
  for (int64_t i = 1; i < n; i++) lo = v[i] < lo ? v[i] : lo, hi = v[i] > hi ? v[i] : hi;
  weft_tensor* r = NULL;
  if (lo < 0) weft__error(WEFT_INVALID_ARGUMENT, "Class values must be non-negative.");
  else if (num_classes != -1 && num_classes <= hi)
    weft__error(WEFT_INVALID_ARGUMENT, "Class values must be smaller than num_classes.");
  else {
    sizes[self->ndim] = num_classes == -1 ? hi + 1 : num_classes;
    r = weft_full(sizes, self->ndim + 1, 0.0, WEFT_INT64, WEFT_DEVICE_CPU);
    if (r)
      for (int64_t i = 0; i < n; i++) ((int64_t*)weft_tensor_data_ptr(r))[i * sizes[self->ndim] + v[i]] = 1;
  }
  weft_tensor_release(x);
  return r;
}

/* ---- shared by index_add and index_fill ---- */
/* slice i of t along dim (t itself when 0-dim) */
static weft_tensor* slice_of(T t, int64_t dim, int64_t i) {
  return t->ndim ? weft_select(t, dim, i) : weft_tensor_retain((weft_tensor*)t);
}

/* runs each(self's slice at index[i], i) in index order; a non-dense self
 * is written through a dense copy, copied back after */
typedef weft_status (*slice_fn)(weft_tensor* dst, int64_t i, void* ctx);
static weft_status each_slice(weft_tensor* self, int64_t dim, const int64_t* idx, int64_t n, slice_fn fn, void* ctx) {
  bool dense = weft_tensor_is_contiguous(self, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* w = dense ? weft_tensor_retain(self) : weft_clone(self, WEFT_CONTIGUOUS_FORMAT);
  weft_status s = w ? WEFT_OK : weft_last_status();
  for (int64_t i = 0; i < n && s == WEFT_OK; i++) {
    weft_tensor* dst = slice_of(w, dim, idx[i]);
    s = dst ? fn(dst, i, ctx) : weft_last_status();
    weft_tensor_release(dst);
  }
  if (s == WEFT_OK && !dense) s = weft_copy_(self, w);
  weft_tensor_release(w);
  return s;
}

/* ---- index_add ---- */
static weft_status index_add_checks(T self, int64_t dim, T index, T src, int64_t* d) {
  if (!weft__wrap_dim("index_add_", dim, self->ndim, d)) return weft_last_status();
  int64_t n = index->numel;
  if (index->ndim > 1) {
    char b[160];
    return weft__error(WEFT_INDEX_ERROR,
                       "index_add_(): Index is supposed to be a vector, but got dim: %d with type: %s and size: %s",
                       index->ndim, weft_dtype_name(index->dtype), weft__sizes_str(index->sizes, index->ndim, b, sizeof b));
  }
  if (index->dtype != WEFT_INT64 && index->dtype != WEFT_INT32)
    return weft__error(WEFT_TYPE_ERROR, "index_add_(): Expected dtype int32/int64 for index but got: %s",
                       weft_dtype_name(index->dtype));
  if (self->dtype != src->dtype)
    return weft__error(WEFT_TYPE_ERROR, "index_add_(): self (%s) and source (%s) must have the same scalar type",
                       weft_dtype_name(self->dtype), weft_dtype_name(src->dtype));
  if (!(*d == 0 || *d < src->ndim))
    return weft__error(WEFT_INDEX_ERROR, "index_add_(): Indexing dim %lld is out of bounds of the source tensor with dim %d",
                       (long long)*d, src->ndim);
  int64_t along = src->ndim == 0 ? 1 : src->sizes[*d];
  if (n != along)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "index_add_(): Number of indices (%lld) should be equal to source.size(dim): (%lld), for dim: %lld",
                       (long long)n, (long long)along, (long long)*d);
  if (self->ndim <= 1 && src->ndim > 1)
    return weft__error(WEFT_INVALID_ARGUMENT, "source.dim() (%d) must one or zero for given self.dim() (%d)", src->ndim,
                       self->ndim);
  return WEFT_OK;
}

typedef struct {
  T src;
  int64_t dim;
  weft_scalar alpha;
} add_ctx;

static weft_status add_slice(weft_tensor* dst, int64_t i, void* p) {
  add_ctx* c = p;
  weft_tensor* from = slice_of(c->src, c->dim, i);
  weft_status s = from ? weft_add_(dst, from, c->alpha) : weft_last_status();
  weft_tensor_release(from);
  return s;
}

/* alpha as 1.13's kernel takes it: converted to self's type */
static weft_scalar alpha_for(weft_dtype t, weft_scalar a) {
  if (t == WEFT_BOOL) return weft_scalar_bool(weft_scalar_to_double(a) != 0);
  if (weft_dtype_is_integral(t, false) && a.tag == WEFT_SCALAR_DOUBLE) return weft_scalar_int((int64_t)a.v.d);
  return a;
}

static weft_status index_add_into(weft_tensor* self, int64_t dim, T index, T src, weft_scalar alpha) {
  int64_t d, bad;
  if (index_add_checks(self, dim, index, src, &d) != WEFT_OK) return weft_last_status();
  if (self->device == WEFT_DEVICE_META || index->numel == 0) return WEFT_OK;
  weft_tensor* ic = dense_as(index, WEFT_INT64);
  if (!ic) return weft_last_status();
  int64_t size = self->ndim ? self->sizes[d] : 1;
  weft_status s = WEFT_OK;
  if (weft__index_find_bad_in(ic, 0, size, &bad)) s = weft__error(WEFT_INDEX_ERROR, "index out of range in self");
  add_ctx c = {src, src->ndim ? d : 0, alpha_for(self->dtype, alpha)};
  if (s == WEFT_OK) s = each_slice(self, d, weft_tensor_data_ptr(ic), ic->numel, add_slice, &c);
  weft_tensor_release(ic);
  return s;
}

static weft_status index_add__kernel(weft_tensor* self, int64_t dim, T index, T src, weft_scalar alpha) {
  return index_add_into(self, dim, index, src, alpha);
}

static weft_tensor* index_add_kernel(T self, int64_t dim, T index, T src, weft_scalar alpha) {
  weft_tensor* r = weft_clone(self, WEFT_CONTIGUOUS_FORMAT);
  if (r && index_add_into(r, dim, index, src, alpha) != WEFT_OK) weft_tensor_release(r), r = NULL;
  return r;
}

/* ---- index_fill ---- */
static weft_status fill_slice(weft_tensor* dst, int64_t i, void* p) {
  (void)i;
  return weft_fill_(dst, *(const double*)p);
}

/* indices wrapped into [0, size) (1.13's index_fill takes negative ones) */
static weft_status wrap_indices(int64_t* v, int64_t n, int64_t dim, int64_t size) {
  for (int64_t i = 0; i < n; i++) {
    if (v[i] < -size || v[i] >= size)
      return weft__error(WEFT_INDEX_ERROR, "index %lld is out of bounds for dimension %lld with size %lld",
                         (long long)v[i], (long long)dim, (long long)size);
    if (v[i] < 0) v[i] += size;
  }
  return WEFT_OK;
}

static weft_status index_fill_into(weft_tensor* self, int64_t dim, T index, double value) {
  int64_t d;
  if (index->dtype != WEFT_INT64)
    return weft__error(WEFT_INDEX_ERROR, "index_fill_(): Expected dtype int64 for index.");
  if (!weft__wrap_dim("index_fill_", dim, self->ndim ? self->ndim : 1, &d)) return weft_last_status();
  if (index->ndim > 1) return weft__error(WEFT_INVALID_ARGUMENT, "Index has to be a vector/scalar");
  if (self->device == WEFT_DEVICE_META || index->numel == 0) return WEFT_OK;
  weft_tensor* ic = weft_clone(index, WEFT_CONTIGUOUS_FORMAT);
  if (!ic) return weft_last_status();
  int64_t size = self->ndim ? self->sizes[d] : 1;
  weft_status s = wrap_indices(weft_tensor_data_ptr(ic), ic->numel, d, size);
  if (s == WEFT_OK) s = each_slice(self, d, weft_tensor_data_ptr(ic), ic->numel, fill_slice, &value);
  weft_tensor_release(ic);
  return s;
}

static weft_status value_of(T value, double* v) {
  if (value->ndim != 0)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "index_fill_ only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).",
                       value->ndim);
  if (value->device == WEFT_DEVICE_META) return *v = 0, WEFT_OK;
  weft_tensor* d = dense_as(value, WEFT_FLOAT64);
  if (!d) return weft_last_status();
  *v = *(const double*)weft_tensor_data_ptr(d);
  weft_tensor_release(d);
  return WEFT_OK;
}

static weft_status index_fill__scalar_kernel(weft_tensor* self, int64_t dim, T index, weft_scalar value) {
  return index_fill_into(self, dim, index, weft_scalar_to_double(value));
}

static weft_status index_fill__tensor_kernel(weft_tensor* self, int64_t dim, T index, T value) {
  double v = 0;
  return value_of(value, &v) != WEFT_OK ? weft_last_status() : index_fill_into(self, dim, index, v);
}

static weft_tensor* index_fill_scalar_kernel(T self, int64_t dim, T index, weft_scalar value) {
  weft_tensor* r = weft_clone(self, WEFT_PRESERVE_FORMAT);
  if (r && index_fill__scalar_kernel(r, dim, index, value) != WEFT_OK) weft_tensor_release(r), r = NULL;
  return r;
}

static weft_tensor* index_fill_tensor_kernel(T self, int64_t dim, T index, T value) {
  weft_tensor* r = weft_clone(self, WEFT_PRESERVE_FORMAT);
  if (r && index_fill__tensor_kernel(r, dim, index, value) != WEFT_OK) weft_tensor_release(r), r = NULL;
  return r;
}

#define WEFT__CPU_META(op, fn) WEFT_KERNEL(op, CPU, fn); WEFT_KERNEL(op, META, fn)
weft_status weft__dataops_register(void) {
  WEFT__CPU_META(bincount, bincount_kernel);
  WEFT__CPU_META(histc, histc_kernel);
  WEFT__CPU_META(one_hot, one_hot_kernel);
  WEFT__CPU_META(index_add, index_add_kernel);
  WEFT__CPU_META(index_add_, index_add__kernel);
  WEFT__CPU_META(index_fill_scalar, index_fill_scalar_kernel);
  WEFT__CPU_META(index_fill_tensor, index_fill_tensor_kernel);
  WEFT__CPU_META(index_fill__scalar, index_fill__scalar_kernel);
  WEFT__CPU_META(index_fill__tensor, index_fill__tensor_kernel);
  return WEFT_OK;
}
