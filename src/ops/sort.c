/* Sorting and selecting along one dim (PyTorch 1.13's sort / sort.stable /
 * sort.values[_stable], argsort, msort, topk / topk.values, kthvalue /
 * kthvalue.values):
 *
 *   meta  dim wrapped (a 0-dim input is one line of one element), k checked,
 *         the dtype checks of PyTorch's CPU kernels (topk and kthvalue refuse
 *         bool and float16), the results made: sort's keep self's strides
 *         when dense (else dense in self's dim order, as 1.13's meta does),
 *         topk's and kthvalue's are contiguous; out= tensors are checked
 *         (dtype) and resized only when their shape differs.
 *   impl  each line along dim on its own, the lines split over the thread
 *         pool: the line gathered, its keys made (src/kernels/sort.h: NaN
 *         largest, -0.0 equal to 0.0, the order flipped for descending /
 *         largest), then a radix sort of the whole line, or when only k of
 *         n elements are wanted a k-heap (a few dozen) or a sampled radix
 *         select (kernels/sort.h), then values and indices written.
 * Ties keep their input order in every op (a stable sort is a valid result
 * of stable=False too; topk and kthvalue return the first of equal elements,
 * where PyTorch's quickselect returns any). topk's sorted=False still sorts.
 * The Meta kernel is the same function: nothing runs. */
#include <stdlib.h>
#include <string.h>

#include "iter/iter_internal.h"
#include "kernels/sort.h"
#include "ops/reduce_internal.h"
#include "ops/reduce_util.h"
#include "weft/iter.h"
#include "weft/parallel.h"

typedef enum { SORT, TOPK, KTH } sort_mode;

typedef struct {
  sort_mode mode;
  const char* name;
  int64_t dim; /* wrapped; 0 for a 0-dim input */
  int64_t k;   /* elements selected per line: the line's length for sort */
  bool flip;   /* descending / largest */
  bool keepdim;
  weft_tensor* values; /* NULL for argsort */
  weft_tensor* indices;
} sort_job;

/* ---- meta ---- */

static int64_t line_length(const weft_tensor* self, int64_t dim) { return self->ndim ? self->sizes[dim] : 1; }

static weft_status check_k(const sort_job* j, const weft_tensor* self) {
  int64_t n = line_length(self, j->dim);
  if (j->mode == TOPK) {
    if (j->k < 0 || j->k > n) return weft__error(WEFT_INVALID_ARGUMENT, "%s: selected index k out of range", j->name);
  } else if (j->mode == KTH) {
    if (n == 0) {
      return weft__error(WEFT_INDEX_ERROR, "kthvalue(): Expected reduction dim %lld to have non-zero size.",
                         (long long)j->dim);
    }
    if (j->k < 1 || j->k > n) {
      return weft__error(WEFT_INVALID_ARGUMENT, "kthvalue(): selected number k out of range for dimension %lld",
                         (long long)j->dim);
    }
  }
  if (j->mode != SORT && (self->dtype == WEFT_BOOL || self->dtype == WEFT_FLOAT16)) {
    return weft__error(WEFT_TYPE_ERROR, "%s: \"%s_cpu\" not implemented for '%s'", j->name,
                       j->mode == TOPK ? "topk" : "kthvalue", weft_dtype_name(self->dtype));
  }
  return WEFT_OK;
}

/* out's dtype, PyTorch's wording per op (kthvalue is not a structured kernel) */
static weft_status check_out_dtype(const sort_job* j, const weft_tensor* out, weft_dtype want, bool is_values) {
  if (!out || out->dtype == want) return WEFT_OK;
  if (j->mode == KTH) {
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: %s", j->name, is_values ? "output values must be of same type as input"
                                                                : "output indices must be of scalar type int64");
  }
  return weft__error(WEFT_TYPE_ERROR, "%s: Expected out tensor to have dtype %s, but got %s instead", j->name,
                     weft_dtype_name(want), weft_dtype_name(out->dtype));
}

/* a new result, or out (retained) resized when its shape differs */
static weft_tensor* make_result(const sort_job* j, const weft_tensor* self, const int64_t* sizes,
                                const int64_t* strides, int n, weft_dtype dtype, weft_tensor* out) {
  if (!out) return weft__tensor_alloc(j->name, sizes, strides, n, dtype, self->device);
  bool same = out->ndim == n && memcmp(out->sizes, sizes, sizeof(int64_t) * (size_t)n) == 0;
  if (!same && weft__tensor_resize_(out, sizes, strides, n, j->name) != WEFT_OK) return NULL;
  return weft_tensor_retain(out);
}

static weft_status make_results(sort_job* j, const weft_tensor* self, bool want_values, weft_tensor* vout,
                                weft_tensor* iout) {
  weft_status s = check_out_dtype(j, vout, self->dtype, true);
  if (s == WEFT_OK) s = check_out_dtype(j, iout, WEFT_INT64, false);
  if (s != WEFT_OK) return s;
  int64_t sizes[WEFT_MAX_DIMS], strides[WEFT_MAX_DIMS];
  int n = (int)self->ndim;
  memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)n);
  if (j->mode == SORT) {
    if (self->is_non_overlapping_and_dense) memcpy(strides, self->strides, sizeof(int64_t) * (size_t)n);
    else weft__infer_dense_strides(self, strides);
  } else {
    if (n && j->mode == TOPK) sizes[j->dim] = j->k;
    if (n && j->mode == KTH) {
      sizes[j->dim] = 1;
      if (!j->keepdim) {
        memmove(sizes + j->dim, sizes + j->dim + 1, sizeof(int64_t) * (size_t)(n - j->dim - 1));
        n--;
      }
    }
    weft__strides_for_format(sizes, n, WEFT_CONTIGUOUS_FORMAT, strides);
  }
  if (want_values) {
    j->values = make_result(j, self, sizes, strides, n, self->dtype, vout);
    if (!j->values) return weft_last_status();
  }
  j->indices = make_result(j, self, sizes, strides, n, WEFT_INT64, iout);
  return j->indices ? WEFT_OK : weft_last_status();
}

/* ---- impl: the lines ---- */

typedef struct {
  const sort_job* job;
  weft_dtype t;
  int64_t es;
  const char* x;
  char *v, *ix;        /* v NULL: no values */
  bool alias;          /* the values out= shares self's storage */
  int64_t n;           /* line length */
  int64_t xs, vs, is;  /* strides along dim, bytes */
  int nd;              /* the other dims, which index the lines */
  int64_t sizes[WEFT_MAX_DIMS], xst[WEFT_MAX_DIMS], vst[WEFT_MAX_DIMS], ist[WEFT_MAX_DIMS];
} sort_ctx;

/* How a line's k smallest are found: a k-heap over one pass for a few
 * dozen, a sampled radix select up to half the line, else a sort of the
 * whole line (measured in wasm on [512, 1000] float32 rows). */
typedef enum { BY_SORT, BY_HEAP, BY_SELECT } line_way;
static line_way way_of(int64_t k, int64_t n) {
  if (k >= n) return BY_SORT;
  if (k <= 24) return BY_HEAP;
  return k * 2 <= n ? BY_SELECT : BY_SORT;
}

static void line_offsets(const sort_ctx* c, int64_t l, int64_t* xo, int64_t* vo, int64_t* io) {
  *xo = *vo = *io = 0;
  for (int d = c->nd - 1; d >= 0; d--) {
    int64_t i = l % c->sizes[d];
    l /= c->sizes[d];
    *xo += i * c->xst[d];
    *vo += i * c->vst[d];
    *io += i * c->ist[d];
  }
}

static inline void copy_elem(char* dst, const char* src, int64_t es) {
  switch (es) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    default: memcpy(dst, src, 8); break;
  }
}

/* the largest of n pairs by (key, idx), moved to p[n - 1] */
static void last_to_end(weft_sort_pair* p, size_t n) {
  size_t m = 0;
  for (size_t i = 1; i < n; i++)
    if (p[i].key > p[m].key || (p[i].key == p[m].key && p[i].idx > p[m].idx)) m = i;
  weft_sort_pair t = p[m];
  p[m] = p[n - 1];
  p[n - 1] = t;
}

/* one line: keys, selection, writes. Gathered first when the values out=
 * shares self's storage (its writes could clobber the line). p and tmp hold
 * n pairs each, sel k (BY_SELECT). */
static void sort_line(const sort_ctx* c, const char* x, char* v, char* ix, char* line, weft_sort_pair* p,
                      weft_sort_pair* tmp, weft_sort_pair* sel) {
  const sort_job* j = c->job;
  int64_t n = c->n, es = c->es, xs = c->xs;
  if (c->alias) {
    for (int64_t e = 0; e < n; e++) copy_elem(line + e * es, x + e * xs, es);
    x = line;
    xs = es;
  }
  weft_sort_pair* best = p;
  line_way way = way_of(j->k, n);
  if (way == BY_HEAP) {
    weft__sort_select_keys(c->t, (size_t)n, x, (ptrdiff_t)xs, j->flip, (size_t)j->k, tmp);
    best = tmp;
  } else if (way == BY_SELECT) {
    /* kthvalue wants the k-th alone: the largest of the k, unsorted */
    bool kth = j->mode == KTH;
    weft__sort_select_sampled(c->t, (size_t)n, x, (ptrdiff_t)xs, j->flip, (size_t)j->k, !kth, sel, p, tmp);
    if (kth) last_to_end(sel, (size_t)j->k);
    best = sel;
  } else {
    weft__sort_keys(c->t, (size_t)n, x, (ptrdiff_t)xs, j->flip, p);
    weft__sort_pairs((size_t)n, p, tmp);
  }
  int64_t first = j->mode == KTH ? j->k - 1 : 0, count = j->mode == KTH ? 1 : j->k;
  for (int64_t o = 0; o < count; o++) {
    int64_t src = (int64_t)best[first + o].idx;
    if (v) copy_elem(v + o * c->vs, x + src * xs, es);
    memcpy(ix + o * c->is, &src, 8);
  }
}

static weft_status sort_range(void* ctx, int64_t begin, int64_t end) {
  const sort_ctx* c = ctx;
  size_t n = (size_t)c->n;
  /* the pairs start 16-aligned after the line's elements: the gap is part of the block */
  size_t head = (n * (size_t)c->es + 15) & ~(size_t)15;
  size_t sel = way_of(c->job->k, c->n) == BY_SELECT ? (size_t)c->job->k : 0;
  char* line = malloc(head + (2 * n + sel) * sizeof(weft_sort_pair));
  if (!line) return weft__error(WEFT_OUT_OF_MEMORY, "%s: out of memory for a line of %lld", c->job->name, (long long)n);
  weft_sort_pair* p = (weft_sort_pair*)(void*)(line + head);
  for (int64_t l = begin; l < end; l++) {
    int64_t xo, vo, io;
    line_offsets(c, l, &xo, &vo, &io);
    sort_line(c, c->x + xo, c->v ? c->v + vo : NULL, c->ix + io, line, p, p + n, p + 2 * n);
  }
  free(line);
  return WEFT_OK;
}

/* out strides seen along self's dims: kthvalue without keepdim has none on dim */
static void out_strides(const sort_job* j, const weft_tensor* self, const weft_tensor* out, int64_t* st) {
  for (int d = 0, o = 0; d < self->ndim; d++) {
    bool dropped = j->mode == KTH && !j->keepdim && d == j->dim;
    st[d] = dropped ? 0 : out->strides[o++];
  }
}

static weft_status sort_run(const sort_job* j, const weft_tensor* self) {
  sort_ctx c = {.job = j, .t = self->dtype, .x = weft_tensor_data_ptr(self),
                .v = j->values ? weft_tensor_data_ptr(j->values) : NULL, .ix = weft_tensor_data_ptr(j->indices)};
  c.es = (int64_t)weft_dtype_size(c.t);
  c.alias = j->values && j->values->storage == self->storage;
  int64_t vst[WEFT_MAX_DIMS] = {0}, ist[WEFT_MAX_DIMS] = {0};
  if (j->values) out_strides(j, self, j->values, vst);
  out_strides(j, self, j->indices, ist);
  c.n = line_length(self, j->dim);
  int64_t lines = 1;
  for (int d = 0; d < self->ndim; d++) {
    if (d == j->dim) {
      c.xs = self->strides[d] * c.es;
      c.vs = vst[d] * c.es;
      c.is = ist[d] * 8;
      continue;
    }
    c.sizes[c.nd] = self->sizes[d];
    c.xst[c.nd] = self->strides[d] * c.es;
    c.vst[c.nd] = vst[d] * c.es;
    c.ist[c.nd] = ist[d] * 8;
    lines *= self->sizes[d];
    c.nd++;
  }
  int64_t grain = c.n >= WEFT_GRAIN_SIZE ? 1 : WEFT_GRAIN_SIZE / (c.n > 0 ? c.n : 1);
  if (weft_explaining())
    return weft__explain_kernel(j->name, "sort", way_of(j->k, c.n) == BY_HEAP     ? "heap_select"
                                                 : way_of(j->k, c.n) == BY_SELECT ? "radix_select"
                                                 : c.n < 32                       ? "insertion"
                                                                                  : "radix",
                                c.t, lines, c.n);
  return weft_parallel_for(0, lines, grain, sort_range, &c);
}

static weft_tensor2 finish(sort_job* j, weft_status s) {
  weft_tensor2 r = {{NULL, NULL}};
  if (s != WEFT_OK) {
    weft_tensor_release(j->values);
    weft_tensor_release(j->indices);
    return r;
  }
  r.t[0] = j->values;
  r.t[1] = j->indices;
  return r;
}

static weft_tensor2 run(sort_job j, const weft_tensor* self, int64_t dim, bool want_values, weft_tensor* vout,
                        weft_tensor* iout) {
  weft_status s = weft__wrap_dim(j.name, dim, self->ndim, &j.dim) ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && self->ndim == 0) j.dim = 0;
  if (s == WEFT_OK) s = check_k(&j, self);
  if (s == WEFT_OK) s = make_results(&j, self, want_values, vout, iout);
  if (s != WEFT_OK) return finish(&j, s);
  if (j.mode == SORT) j.k = line_length(self, j.dim);
  if (self->ndim == 0) j.k = 1; /* topk(0) of a 0-dim tensor still gives its element, as PyTorch's */
  bool empty = self->numel == 0 || j.indices->numel == 0;
  if (self->device == WEFT_DEVICE_META || empty) return finish(&j, WEFT_OK);
  return finish(&j, sort_run(&j, self));
}

/* ---- unique (_unique2) ----
 * The flattened input (logical order) radix-sorted by key with its indices;
 * runs of equal keys are the groups, each NaN its own group (PyTorch 1.13's
 * CPU unique hashes NaNs into garbage; weft gives what a sort-based unique
 * does: every NaN distinct, after +inf). The value kept is the group's first
 * occurrence (0.0 or -0.0 as the input has it). sorted=False returns the
 * sorted order too, a valid order of an unsorted unique. */

static bool nan_key(weft_dtype t, uint64_t key) {
  return weft_dtype_is_floating(t) && key == (t == WEFT_FLOAT64 ? UINT64_MAX : 0xFFFFFFFFu);
}

/* counts of each group into counts (if given), inverse per element (if
 * given), the group's first element's index into firsts; returns the groups */
static int64_t unique_groups(weft_dtype t, const weft_sort_pair* p, int64_t n, int64_t* firsts, int64_t* inverse,
                             int64_t* counts) {
  int64_t g = -1;
  for (int64_t e = 0; e < n; e++) {
    bool fresh = e == 0 || p[e].key != p[e - 1].key || nan_key(t, p[e].key);
    if (fresh) {
      firsts[++g] = (int64_t)p[e].idx;
      if (counts) counts[g] = 0;
    }
    if (counts) counts[g]++;
    if (inverse) inverse[p[e].idx] = g;
  }
  return g + 1;
}

static weft_tensor* vector_of(const char* name, int64_t n, weft_dtype t, weft_device dev) {
  int64_t one = 1;
  return weft__tensor_alloc(name, &n, &one, 1, t, dev);
}

/* out[0] the unique values, out[1] the inverse (self's shape, or [0]),
 * out[2] the counts (or [0]); new references, all NULL on error */
static weft_status unique_run(const weft_tensor* self, bool return_inverse, bool return_counts, weft_tensor* out[3]) {
  static const char* name = "unique";
  out[0] = out[1] = out[2] = NULL;
  if (self->dtype == WEFT_FLOAT16) {
    return weft__error(WEFT_TYPE_ERROR, "%s: \"unique\" not implemented for 'float16'", name);
  }
  int64_t n = self->numel, es = (int64_t)weft_dtype_size(self->dtype);
  weft_tensor* x = weft_contiguous(self, WEFT_CONTIGUOUS_FORMAT);
  weft_sort_pair* p = x ? malloc(sizeof *p * (size_t)(2 * n + 1)) : NULL;
  int64_t* work = p ? malloc(sizeof(int64_t) * (size_t)(2 * n + 1)) : NULL;
  weft_status s = work ? WEFT_OK : x ? weft__error(WEFT_OUT_OF_MEMORY, "%s: out of memory", name) : weft_last_status();
  int64_t st[WEFT_MAX_DIMS];
  weft__strides_for_format(self->sizes, self->ndim, WEFT_CONTIGUOUS_FORMAT, st);
  int64_t zero = 0;
  return_inverse = return_inverse || return_counts; /* as PyTorch 1.13's CPU _unique2 */
  if (s == WEFT_OK) {
    out[1] = return_inverse ? weft__tensor_alloc(name, self->sizes, st, self->ndim, WEFT_INT64, self->device)
                            : weft__tensor_alloc(name, &zero, &zero, 1, WEFT_INT64, self->device);
    s = out[1] ? WEFT_OK : weft_last_status();
  }
  int64_t groups = 0, *firsts = work, *counts = work + n;
  /* explain(): the plan (one radix sort of every element), then the groups as
   * usual, since the results' sizes depend on them */
  if (s == WEFT_OK && weft_explaining()) s = weft__explain_kernel(name, "sort", "radix", self->dtype, 1, n);
  if (s == WEFT_OK) {
    const char* data = weft_tensor_data_ptr(x);
    weft__sort_keys(self->dtype, (size_t)n, data, (ptrdiff_t)es, false, p);
    weft__sort_pairs((size_t)n, p, p + n);
    groups = unique_groups(self->dtype, p, n, firsts, return_inverse ? weft_tensor_data_ptr(out[1]) : NULL, counts);
    out[0] = vector_of(name, groups, self->dtype, self->device);
    out[2] = vector_of(name, return_counts ? groups : 0, WEFT_INT64, self->device);
    s = out[0] && out[2] ? WEFT_OK : weft_last_status();
    if (s == WEFT_OK) {
      char* v = weft_tensor_data_ptr(out[0]);
      for (int64_t g = 0; g < groups; g++) copy_elem(v + g * es, data + firsts[g] * es, es);
      if (return_counts && groups) memcpy(weft_tensor_data_ptr(out[2]), counts, sizeof(int64_t) * (size_t)groups);
    }
  }
  free(work);
  free(p);
  weft_tensor_release(x);
  if (s != WEFT_OK) {
    for (int i = 0; i < 3; i++) weft_tensor_release(out[i]);
    out[0] = out[1] = out[2] = NULL;
  }
  return s;
}

/* ---- kernels (CPU and Meta) ---- */

static sort_job sort_of(const char* name, bool descending) {
  return (sort_job){.mode = SORT, .name = name, .flip = descending};
}
static weft_tensor2 k_sort(const weft_tensor* self, int64_t dim, bool descending) {
  return run(sort_of("sort", descending), self, dim, true, NULL, NULL);
}
static weft_tensor2 k_sort_stable(const weft_tensor* self, bool stable, int64_t dim, bool descending) {
  (void)stable;
  return k_sort(self, dim, descending);
}
static weft_tensor2 k_sort_values(const weft_tensor* self, int64_t dim, bool descending, weft_tensor* values,
                                  weft_tensor* indices) {
  return run(sort_of("sort", descending), self, dim, true, values, indices);
}
static weft_tensor2 k_sort_values_stable(const weft_tensor* self, bool stable, int64_t dim, bool descending,
                                         weft_tensor* values, weft_tensor* indices) {
  (void)stable;
  return k_sort_values(self, dim, descending, values, indices);
}
static weft_tensor* k_argsort(const weft_tensor* self, int64_t dim, bool descending) {
  return run(sort_of("argsort", descending), self, dim, false, NULL, NULL).t[1];
}
static weft_tensor* k_argsort_stable(const weft_tensor* self, bool stable, int64_t dim, bool descending) {
  (void)stable;
  return k_argsort(self, dim, descending);
}
static weft_tensor* k_msort_out(const weft_tensor* self, weft_tensor* out) {
  weft_tensor2 r = run(sort_of("msort", false), self, 0, true, out, NULL);
  weft_tensor_release(r.t[1]);
  return r.t[0];
}
static weft_tensor* k_msort(const weft_tensor* self) { return k_msort_out(self, NULL); }

static sort_job topk_of(int64_t k, bool largest) {
  return (sort_job){.mode = TOPK, .name = "topk", .k = k, .flip = largest};
}
static weft_tensor2 k_topk(const weft_tensor* self, int64_t k, int64_t dim, bool largest, bool sorted) {
  (void)sorted;
  return run(topk_of(k, largest), self, dim, true, NULL, NULL);
}
static weft_tensor2 k_topk_values(const weft_tensor* self, int64_t k, int64_t dim, bool largest, bool sorted,
                                  weft_tensor* values, weft_tensor* indices) {
  (void)sorted;
  return run(topk_of(k, largest), self, dim, true, values, indices);
}

static sort_job kth_of(int64_t k, bool keepdim) {
  return (sort_job){.mode = KTH, .name = "kthvalue", .k = k, .keepdim = keepdim};
}
static weft_tensor2 k_kthvalue(const weft_tensor* self, int64_t k, int64_t dim, bool keepdim) {
  return run(kth_of(k, keepdim), self, dim, true, NULL, NULL);
}
static weft_tensor2 k_kthvalue_values(const weft_tensor* self, int64_t k, int64_t dim, bool keepdim,
                                      weft_tensor* values, weft_tensor* indices) {
  return run(kth_of(k, keepdim), self, dim, true, values, indices);
}

static weft_tensor2 k__unique(const weft_tensor* self, bool sorted, bool return_inverse) {
  (void)sorted;
  weft_tensor* out[3];
  weft_tensor2 r = {{NULL, NULL}};
  if (unique_run(self, return_inverse, false, out) != WEFT_OK) return r;
  weft_tensor_release(out[2]);
  r.t[0] = out[0];
  r.t[1] = out[1];
  return r;
}

static weft_tensor_list k__unique2(const weft_tensor* self, bool sorted, bool return_inverse, bool return_counts) {
  (void)sorted;
  weft_tensor* out[3];
  weft_tensor_list r = {NULL, 0};
  if (unique_run(self, return_inverse, return_counts, out) != WEFT_OK) return r;
  r = weft_tensor_list_new(3);
  for (int i = 0; i < 3; i++) {
    if (r.t) r.t[i] = out[i];
    else weft_tensor_release(out[i]);
  }
  return r;
}

#define BOTH(op, fn)          \
  WEFT_KERNEL(op, CPU, fn);   \
  WEFT_KERNEL(op, META, fn)

weft_status weft__sort_register(void) {
  BOTH(sort, k_sort);
  BOTH(sort_stable, k_sort_stable);
  BOTH(sort_values, k_sort_values);
  BOTH(sort_values_stable, k_sort_values_stable);
  BOTH(argsort, k_argsort);
  BOTH(argsort_stable, k_argsort_stable);
  BOTH(msort, k_msort);
  BOTH(msort_out, k_msort_out);
  BOTH(topk, k_topk);
  BOTH(topk_values, k_topk_values);
  BOTH(kthvalue, k_kthvalue);
  BOTH(kthvalue_values, k_kthvalue_values);
  /* no Meta kernels: the result's size depends on the data */
  WEFT_KERNEL(_unique, CPU, k__unique);
  WEFT_KERNEL(_unique2, CPU, k__unique2);
  return WEFT_OK;
}
