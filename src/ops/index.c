/* Indexing and gathering (issue 13): index_select, gather, scatter (src,
 * value, reduce 'add' / 'multiply'), scatter_add, take, masked_fill,
 * masked_select and nonzero, each with its out= or in-place forms.
 *
 * The checks are PyTorch 1.13's (gather_shape_check, scatter_shape_check,
 * index_select_out_cpu_, take's and masked_fill_'s), in its order and words,
 * dtypes named as JS names them. Every index is checked before anything is
 * written, so a bad one never writes part of an out= or in-place result, and
 * never reads outside self. Results are new contiguous tensors (as 1.13's
 * structured kernels and its masked_fill's contiguous clone make them); out=
 * tensors are resized to them and take their values. The loops are the
 * driver's (src/ops/cpu/index.c). */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "iter/iter_internal.h"
#include "ops/cpu/index.h"
#include "ops/index_internal.h"
#include "ops/ops.h"

static const char* sizes_str(const weft_tensor* t, char* buf, size_t cap) {
  return weft__sizes_str(t->sizes, t->ndim, buf, cap);
}

/* PyTorch's ensure_nonempty_dim / _size: a 0-dim tensor counts as [1]. */
static int nonempty_dim(const weft_tensor* t) { return t->ndim ? t->ndim : 1; }
static int64_t nonempty_size(const weft_tensor* t, int d) { return t->ndim ? t->sizes[d] : 1; }

static bool is_meta(const weft_tensor* t) { return t->device == WEFT_DEVICE_META; }

/* A new contiguous tensor of sizes, on like's device. */
static weft_tensor* new_result(const int64_t* sizes, int nd, weft_dtype t, const weft_tensor* like) {
  return weft_empty(sizes, nd, t, like->device, WEFT_CONTIGUOUS_FORMAT);
}

/* out= takes r's shape (contiguous strides when the shape differs) and
 * values; returns a new reference to out, or NULL. Releases r. */
static weft_tensor* into_out(const char* op, weft_tensor* r, weft_tensor* out) {
  weft_status s = r ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && (out->ndim != r->ndim || memcmp(out->sizes, r->sizes, sizeof(int64_t) * (size_t)r->ndim)))
    s = weft__tensor_resize_(out, r->sizes, r->strides, r->ndim, op);
  if (s == WEFT_OK && !is_meta(out)) s = weft_copy_(out, r);
  weft_tensor_release(r);
  return s == WEFT_OK ? weft_tensor_retain(out) : NULL;
}

bool weft__index_find_bad_in(const weft_tensor* idx, int64_t lo, int64_t hi, int64_t* bad) {
  if (is_meta(idx) || idx->numel == 0) return false;
  weft_index_walk w;
  weft__index_walk_init(&w, idx, -1);
  return weft__index_find_bad(&w, idx->dtype, lo, hi, bad);
}

/* ---- gather ---- */

/* gather_shape_check: same rank; no dim but `dim` larger than self's. */
static weft_status gather_shape_check(const weft_tensor* self, int dim, const weft_tensor* index) {
  char a[160], b[160];
  if (nonempty_dim(index) != nonempty_dim(self))
    return weft__error(WEFT_INVALID_ARGUMENT, "Index tensor must have the same number of dimensions as input tensor");
  for (int d = 0; d < nonempty_dim(self); d++)
    if (d != dim && nonempty_size(index, d) > nonempty_size(self, d))
      return weft__error(WEFT_INVALID_ARGUMENT,
                         "Size does not match at dimension %d expected index %s to be smaller than self %s apart "
                         "from dimension %d", d, sizes_str(index, a, sizeof a), sizes_str(self, b, sizeof b), dim);
  return WEFT_OK;
}

static weft_status check_bounds_dim(const weft_tensor* index, int dim, int64_t size) {
  int64_t bad;
  if (weft__index_find_bad_in(index, 0, size, &bad))
    return weft__error(WEFT_INDEX_ERROR, "index %lld is out of bounds for dimension %d with size %lld",
                       (long long)bad, dim, (long long)size);
  return WEFT_OK;
}

/* The move of an indexed dim: walk over `over` (dim innermost) with
 * operands 0 = dst, 1 = index, 2 = src (NULL for a value); dim_of is the
 * tensor the index points into. */
static void setup_move(weft_index_move* m, const weft_tensor* over, int dim, weft_tensor* dst, const weft_tensor* index,
                       const weft_tensor* src, const weft_tensor* dim_of) {
  memset(m, 0, sizeof *m);
  int d = over->ndim ? dim : -1;
  weft__index_walk_init(&m->w, over, d);
  weft__index_walk_add(&m->w, 0, dst, d);
  weft__index_walk_add(&m->w, 1, index, d);
  if (src) weft__index_walk_add(&m->w, 2, src, d);
  m->dtype = dst->dtype;
  m->idx_dtype = index->dtype;
  bool has_dim = dim >= 0 && dim < dim_of->ndim;
  m->dim_stride = has_dim ? dim_of->strides[dim] * (int64_t)weft_dtype_size(dim_of->dtype) : 0;
  /* the row runs along the indexed dim: the index alone moves in dim_of */
  m->w.strides[dim_of == dst ? 0 : 2][m->w.nd - 1] = 0;
}

static weft_tensor* gather_impl(const char* op, const weft_tensor* self, int64_t dim, const weft_tensor* index,
                                weft_tensor* out) {
  int64_t d;
  if (!weft__wrap_dim(op, dim, self->ndim, &d)) return NULL;
  if (index->dtype != WEFT_INT64) return weft__error(WEFT_TYPE_ERROR, "gather(): Expected dtype int64 for index"), NULL;
  if (out && out->dtype != self->dtype)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                       weft_dtype_name(self->dtype), weft_dtype_name(out->dtype)),
           NULL;
  if (index->numel && gather_shape_check(self, (int)d, index) != WEFT_OK) return NULL;
  if (!is_meta(self) && check_bounds_dim(index, (int)d, nonempty_size(self, (int)d)) != WEFT_OK) return NULL;
  weft_tensor* r = new_result(index->sizes, index->ndim, self->dtype, self);
  if (r && r->numel && !is_meta(self)) {
    weft_index_move m;
    setup_move(&m, index, (int)d, r, index, NULL, self);
    weft__index_walk_add(&m.w, 2, self, index->ndim ? (int)d : -1);
    m.w.strides[2][m.w.nd - 1] = 0; /* the index alone moves along dim */
    if (weft__index_gather_run(&m) != WEFT_OK) {
      weft_tensor_release(r);
      return NULL;
    }
  }
  return out ? into_out(op, r, out) : r;
}

static weft_tensor* gather_kernel(const weft_tensor* self, int64_t dim, const weft_tensor* index, bool sparse_grad) {
  (void)sparse_grad; /* a gradient layout; weft has no sparse tensors */
  return gather_impl("gather", self, dim, index, NULL);
}

static weft_tensor* gather_out_kernel(const weft_tensor* self, int64_t dim, const weft_tensor* index,
                                      bool sparse_grad, weft_tensor* out) {
  (void)sparse_grad;
  return gather_impl("gather", self, dim, index, out);
}

/* ---- index_select ---- */

static weft_status index_select_check(const char* op, const weft_tensor* self, int64_t dim, const weft_tensor* index,
                                      const weft_tensor* out, int64_t* d) {
  if (!weft__wrap_dim(op, dim, self->ndim, d)) return weft_last_status();
  if (index->ndim > 1) return weft__error(WEFT_INDEX_ERROR, "index_select(): Index is supposed to be a vector");
  if (self->ndim == 0 && index->numel != 1)
    return weft__error(WEFT_INVALID_ARGUMENT, "index_select(): Index to scalar can have only 1 value, got %lld value(s)",
                       (long long)index->numel);
  if (index->dtype != WEFT_INT64 && index->dtype != WEFT_INT32)
    return weft__error(WEFT_TYPE_ERROR, "index_select(): Expected dtype int32 or int64 for index");
  if (out && out->dtype != self->dtype)
    return weft__error(WEFT_INVALID_ARGUMENT, "index_select(): self and result must have the same scalar type");
  int64_t bad;
  if (!is_meta(self) && weft__index_find_bad_in(index, 0, nonempty_size(self, (int)*d), &bad))
    return weft__error(WEFT_INDEX_ERROR, "index_select(): index %lld is out of bounds for dimension %lld with size %lld",
                       (long long)bad, (long long)*d, (long long)nonempty_size(self, (int)*d));
  return WEFT_OK;
}

static weft_tensor* index_select_impl(const weft_tensor* self, int64_t dim, const weft_tensor* index,
                                      weft_tensor* out) {
  const char* op = "index_select";
  int64_t d;
  if (index_select_check(op, self, dim, index, out, &d) != WEFT_OK) return NULL;
  int64_t sizes[WEFT_MAX_DIMS];
  memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
  if (self->ndim) sizes[d] = index->numel;
  weft_tensor* r = new_result(sizes, self->ndim, self->dtype, self);
  if (r && r->numel && !is_meta(self)) {
    /* the index seen with r's shape: its one stride on dim, 0 elsewhere */
    weft_index_move m;
    setup_move(&m, r, (int)d, r, r, self, self);
    memset(m.w.strides[1], 0, sizeof m.w.strides[1]);
    m.w.strides[1][m.w.nd - 1] = index->ndim ? index->strides[0] * (int64_t)weft_dtype_size(index->dtype) : 0;
    m.w.data[1] = weft_tensor_data_ptr(index);
    m.idx_dtype = index->dtype;
    if (weft__index_gather_run(&m) != WEFT_OK) {
      weft_tensor_release(r);
      return NULL;
    }
  }
  return out ? into_out(op, r, out) : r;
}

static weft_tensor* index_select_kernel(const weft_tensor* self, int64_t dim, const weft_tensor* index) {
  return index_select_impl(self, dim, index, NULL);
}

static weft_tensor* index_select_out_kernel(const weft_tensor* self, int64_t dim, const weft_tensor* index,
                                            weft_tensor* out) {
  return index_select_impl(self, dim, index, out);
}

/* ---- take ---- */

/* index with the negative entries wrapped by n (a new int64 tensor, or a
 * new reference to index when none is negative). */
static weft_tensor* wrap_negative(const weft_tensor* index, int64_t n) {
  int64_t bad;
  if (!weft__index_find_bad_in(index, 0, INT64_MAX, &bad)) return weft_tensor_retain((weft_tensor*)index);
  weft_tensor* w = weft_clone(index, WEFT_CONTIGUOUS_FORMAT);
  if (!w) return NULL;
  int64_t* p = weft_tensor_data_ptr(w);
  for (int64_t i = 0; i < w->numel; i++)
    if (p[i] < 0) p[i] += n;
  return w;
}

static weft_tensor* take_impl(const weft_tensor* self, const weft_tensor* index, weft_tensor* out) {
  const char* op = "take";
  if (index->dtype != WEFT_INT64)
    return weft__error(WEFT_TYPE_ERROR, "take(): Expected a long tensor for index, but got %s",
                       weft_dtype_name(index->dtype)),
           NULL;
  if (out && out->dtype != self->dtype)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "take(): self and out expected to have the same dtype, but got self.dtype = %s and "
                       "out.dtype = %s", weft_dtype_name(self->dtype), weft_dtype_name(out->dtype)),
           NULL;
  if (self->numel == 0 && index->numel != 0)
    return weft__error(WEFT_INDEX_ERROR, "take(): tried to take from an empty tensor"), NULL;
  int64_t bad, n = self->numel;
  if (!is_meta(self) && weft__index_find_bad_in(index, -n, n, &bad))
    return weft__error(WEFT_INDEX_ERROR, "out of range: tried to access index %lld on a tensor of %lld elements.",
                       (long long)bad, (long long)n),
           NULL;
  weft_tensor* r = new_result(index->sizes, index->ndim, self->dtype, self);
  if (r && r->numel && !is_meta(self)) {
    const int64_t flat[1] = {n};
    weft_tensor* src = weft_reshape(self, flat, 1);
    weft_tensor* ix = src ? wrap_negative(index, n) : NULL;
    weft_status s = ix ? WEFT_OK : weft_last_status();
    if (s == WEFT_OK) {
      /* every position reads self's flat storage at its index */
      weft_index_move m;
      setup_move(&m, r, -1, r, ix, NULL, src);
      m.w.data[2] = weft_tensor_data_ptr(src);
      m.dim_stride = src->strides[0] * (int64_t)weft_dtype_size(src->dtype);
      s = weft__index_gather_run(&m);
    }
    weft_tensor_release(src);
    weft_tensor_release(ix);
    if (s != WEFT_OK) weft_tensor_release(r), r = NULL;
  }
  return out ? into_out(op, r, out) : r;
}

static weft_tensor* take_kernel(const weft_tensor* self, const weft_tensor* index) {
  return take_impl(self, index, NULL);
}

static weft_tensor* take_out_kernel(const weft_tensor* self, const weft_tensor* index, weft_tensor* out) {
  return take_impl(self, index, out);
}

/* ---- scatter ---- */

/* scatter_shape_check: same rank; index no larger than src anywhere, nor
 * than self outside dim. */
static weft_status scatter_shape_check(const weft_tensor* self, int dim, const weft_tensor* index,
                                       const weft_tensor* src) {
  char a[160], b[160], c[160];
  if (nonempty_dim(index) != nonempty_dim(self) || (src && nonempty_dim(src) != nonempty_dim(self)))
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "Index tensor must have the same number of dimensions as self tensor");
  bool bad = false;
  for (int d = 0; d < nonempty_dim(self) && !bad; d++) {
    int64_t n = nonempty_size(index, d);
    bad = (d != dim && n > nonempty_size(self, d)) || (src && n > nonempty_size(src, d));
  }
  if (!bad) return WEFT_OK;
  if (src)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "Expected index %s to be smaller than self %s apart from dimension %d and to be smaller size "
                       "than src %s", sizes_str(index, a, sizeof a), sizes_str(self, b, sizeof b), dim,
                       sizes_str(src, c, sizeof c));
  return weft__error(WEFT_INVALID_ARGUMENT,
                     "Expected index %s to be smaller than self %s apart from dimension %d",
                     sizes_str(index, a, sizeof a), sizes_str(self, b, sizeof b), dim);
}

static weft_status parse_reduce(const char* reduce, weft_scatter_mode* mode) {
  if (!reduce) {
    *mode = WEFT_SCATTER_ASSIGN;
    return WEFT_OK;
  }
  if (strcmp(reduce, "add") == 0) *mode = WEFT_SCATTER_ADD;
  else if (strcmp(reduce, "multiply") == 0) *mode = WEFT_SCATTER_MUL;
  else return weft__error(WEFT_INVALID_ARGUMENT, "reduce argument must be either add or multiply.");
  return WEFT_OK;
}

/* A Scalar as one element of dtype t. */
static void scalar_bytes(weft_scalar v, weft_dtype t, unsigned char* out) {
  weft__value x = {0, 0, 0.0};
  if (v.tag == WEFT_SCALAR_DOUBLE) x = weft__value_from_double(v.v.d);
  else x.i = v.tag == WEFT_SCALAR_BOOL ? v.v.b : v.v.i;
  weft__store(out, t, x);
}

/* self (mutated) scattered along dim at index from src, or from value when
 * src is NULL; op names the errors ("scatter" / "scatter_add"). */
static weft_status scatter_into(const char* op, weft_tensor* self, int64_t dim, const weft_tensor* index,
                                const weft_tensor* src, const weft_scalar* value, const char* reduce) {
  int64_t d;
  weft_scatter_mode mode = WEFT_SCATTER_ASSIGN;
  if (!weft__wrap_dim(op, dim, self->ndim, &d)) return weft_last_status();
  if (index->dtype != WEFT_INT64) return weft__error(WEFT_TYPE_ERROR, "scatter(): Expected dtype int64 for index");
  if (src && src->dtype != self->dtype)
    return weft__error(WEFT_TYPE_ERROR, "scatter(): Expected self.dtype to be equal to src.dtype");
  if (parse_reduce(reduce, &mode) != WEFT_OK) return weft_last_status();
  if (index->numel == 0) return WEFT_OK;
  if (scatter_shape_check(self, (int)d, index, src) != WEFT_OK) return weft_last_status();
  if (is_meta(self)) return WEFT_OK;
  if (check_bounds_dim(index, (int)d, nonempty_size(self, (int)d)) != WEFT_OK) return weft_last_status();
  weft_index_move m;
  setup_move(&m, index, (int)d, self, index, src, self);
  m.mode = mode;
  if (value) scalar_bytes(*value, self->dtype, m.value);
  return weft__index_scatter_run(&m);
}

static weft_tensor* scatter_copy(const char* op, const weft_tensor* self, int64_t dim, const weft_tensor* index,
                                 const weft_tensor* src, const weft_scalar* value, const char* reduce) {
  weft_tensor* r = weft_clone(self, WEFT_CONTIGUOUS_FORMAT);
  if (r && scatter_into(op, r, dim, index, src, value, reduce) != WEFT_OK) {
    weft_tensor_release(r);
    return NULL;
  }
  return r;
}

static weft_tensor* scatter_src_kernel(const weft_tensor* self, int64_t dim, const weft_tensor* index,
                                       const weft_tensor* src) {
  return scatter_copy("scatter", self, dim, index, src, NULL, NULL);
}
static weft_status scatter__src_kernel(weft_tensor* self, int64_t dim, const weft_tensor* index,
                                       const weft_tensor* src) {
  return scatter_into("scatter_", self, dim, index, src, NULL, NULL);
}
static weft_tensor* scatter_value_kernel(const weft_tensor* self, int64_t dim, const weft_tensor* index,
                                         weft_scalar value) {
  return scatter_copy("scatter", self, dim, index, NULL, &value, NULL);
}
static weft_status scatter__value_kernel(weft_tensor* self, int64_t dim, const weft_tensor* index, weft_scalar value) {
  return scatter_into("scatter_", self, dim, index, NULL, &value, NULL);
}
static weft_tensor* scatter_reduce_src_kernel(const weft_tensor* self, int64_t dim, const weft_tensor* index,
                                              const weft_tensor* src, const char* reduce) {
  return scatter_copy("scatter", self, dim, index, src, NULL, reduce);
}
static weft_status scatter__reduce_src_kernel(weft_tensor* self, int64_t dim, const weft_tensor* index,
                                              const weft_tensor* src, const char* reduce) {
  return scatter_into("scatter_", self, dim, index, src, NULL, reduce);
}
static weft_tensor* scatter_value_reduce_kernel(const weft_tensor* self, int64_t dim, const weft_tensor* index,
                                                weft_scalar value, const char* reduce) {
  return scatter_copy("scatter", self, dim, index, NULL, &value, reduce);
}
static weft_status scatter__value_reduce_kernel(weft_tensor* self, int64_t dim, const weft_tensor* index,
                                                weft_scalar value, const char* reduce) {
  return scatter_into("scatter_", self, dim, index, NULL, &value, reduce);
}
static weft_tensor* scatter_add_kernel(const weft_tensor* self, int64_t dim, const weft_tensor* index,
                                       const weft_tensor* src) {
  return scatter_copy("scatter_add", self, dim, index, src, NULL, "add");
}
static weft_status scatter_add__kernel(weft_tensor* self, int64_t dim, const weft_tensor* index,
                                       const weft_tensor* src) {
  return scatter_into("scatter_add_", self, dim, index, src, NULL, "add");
}

/* ---- masked_fill ---- */

static weft_status mask_dtype_check(const char* what, const weft_tensor* mask) {
  if (mask->dtype == WEFT_BOOL || mask->dtype == WEFT_UINT8) return WEFT_OK;
  return weft__error(WEFT_TYPE_ERROR, "%s only supports boolean masks, but got mask with dtype %s", what,
                     weft_dtype_name(mask->dtype));
}

/* PyTorch's infer_size: the broadcast shape of a and b into sizes. */
static weft_status broadcast_shape(const weft_tensor* a, const weft_tensor* b, int64_t* sizes, int* nd) {
  int n = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int i = 0; i < n; i++) {
    int ia = a->ndim - n + i, ib = b->ndim - n + i;
    int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? b->sizes[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      return weft__error(WEFT_SHAPE_ERROR,
                         "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                         "dimension %d", (long long)sa, (long long)sb, i);
    sizes[i] = sa == 1 ? sb : sa;
  }
  *nd = n;
  return WEFT_OK;
}

/* self[mask] = value (bytes of self's dtype), mask broadcast to self. */
static weft_status masked_fill_into(weft_tensor* self, const weft_tensor* mask, const unsigned char* value) {
  if (mask_dtype_check("masked_fill_", mask) != WEFT_OK) return weft_last_status();
  int64_t sizes[WEFT_MAX_DIMS];
  int nd;
  if (broadcast_shape(self, mask, sizes, &nd) != WEFT_OK) return weft_last_status();
  if (nd != self->ndim || memcmp(sizes, self->sizes, sizeof(int64_t) * (size_t)nd) != 0) {
    char a[160], b[160];
    weft_tensor tmp = *mask;
    tmp.ndim = nd;
    memcpy(tmp.sizes, sizes, sizeof(int64_t) * (size_t)nd);
    return weft__error(WEFT_SHAPE_ERROR, "output with shape %s doesn't match the broadcast shape %s",
                       sizes_str(self, a, sizeof a), sizes_str(&tmp, b, sizeof b));
  }
  if (is_meta(self) || self->numel == 0) return WEFT_OK;
  weft_tensor* m = weft_expand(mask, self->sizes, self->ndim);
  if (!m) return weft_last_status();
  weft_index_walk w;
  weft__index_walk_init(&w, self, -1);
  weft__index_walk_add(&w, 1, m, -1);
  weft_status s = weft__index_masked_fill_run(&w, self->dtype, value);
  weft_tensor_release(m);
  return s;
}

static weft_status value_tensor_bytes(const weft_tensor* value, weft_dtype t, unsigned char* out) {
  if (value->ndim != 0)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).",
                       value->ndim);
  if (!is_meta(value)) weft__store(out, t, weft__load(weft_tensor_data_ptr(value), value->dtype));
  return WEFT_OK;
}

static weft_status masked_fill__scalar_kernel(weft_tensor* self, const weft_tensor* mask, weft_scalar value) {
  unsigned char v[8];
  scalar_bytes(value, self->dtype, v);
  return masked_fill_into(self, mask, v);
}

static weft_status masked_fill__tensor_kernel(weft_tensor* self, const weft_tensor* mask, const weft_tensor* value) {
  unsigned char v[8];
  if (value_tensor_bytes(value, self->dtype, v) != WEFT_OK) return weft_last_status();
  return masked_fill_into(self, mask, v);
}

/* masked_fill: self broadcast with mask, cloned contiguous (as 1.13 does), then filled. */
static weft_tensor* masked_fill_copy(const weft_tensor* self, const weft_tensor* mask, const unsigned char* v) {
  int64_t sizes[WEFT_MAX_DIMS];
  int nd;
  if (mask_dtype_check("masked_fill_", mask) != WEFT_OK) return NULL;
  if (broadcast_shape(self, mask, sizes, &nd) != WEFT_OK) return NULL;
  weft_tensor* e = weft_expand(self, sizes, nd);
  weft_tensor* r = e ? weft_clone(e, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_tensor_release(e);
  if (r && masked_fill_into(r, mask, v) != WEFT_OK) weft_tensor_release(r), r = NULL;
  return r;
}

static weft_tensor* masked_fill_scalar_kernel(const weft_tensor* self, const weft_tensor* mask, weft_scalar value) {
  unsigned char v[8];
  scalar_bytes(value, self->dtype, v);
  return masked_fill_copy(self, mask, v);
}

static weft_tensor* masked_fill_tensor_kernel(const weft_tensor* self, const weft_tensor* mask,
                                              const weft_tensor* value) {
  unsigned char v[8];
  if (value_tensor_bytes(value, self->dtype, v) != WEFT_OK) return NULL;
  return masked_fill_copy(self, mask, v);
}

/* ---- masked_select, nonzero ---- */

static weft_tensor* masked_select_impl(const weft_tensor* self, const weft_tensor* mask, weft_tensor* out) {
  const char* op = "masked_select";
  if (mask->dtype != WEFT_BOOL && mask->dtype != WEFT_UINT8)
    return weft__error(WEFT_TYPE_ERROR, "masked_select: expected BoolTensor or ByteTensor for mask"), NULL;
  if (out && out->dtype != self->dtype)
    return weft__error(WEFT_INVALID_ARGUMENT, "masked_select(): self and result must have the same scalar type"), NULL;
  int64_t sizes[WEFT_MAX_DIMS];
  int nd;
  if (broadcast_shape(mask, self, sizes, &nd) != WEFT_OK) return NULL;
  weft_tensor* m = weft_expand(mask, sizes, nd);
  weft_tensor* x = m ? weft_expand(self, sizes, nd) : NULL;
  weft_tensor* r = NULL;
  if (x) {
    weft_index_walk w;
    weft__index_walk_init(&w, m, -1);
    weft__index_walk_add(&w, 1, x, -1);
    int64_t n = x->numel ? weft__index_count_nonzero(&w, WEFT_BOOL) : 0;
    r = new_result(&n, 1, self->dtype, self);
    if (r && n) weft__index_masked_select(&w, weft_dtype_size(self->dtype), weft_tensor_data_ptr(r));
  }
  weft_tensor_release(m);
  weft_tensor_release(x);
  return out ? into_out(op, r, out) : r;
}

static weft_tensor* masked_select_kernel(const weft_tensor* self, const weft_tensor* mask) {
  return masked_select_impl(self, mask, NULL);
}

static weft_tensor* masked_select_out_kernel(const weft_tensor* self, const weft_tensor* mask, weft_tensor* out) {
  return masked_select_impl(self, mask, out);
}

/* The result is [n, ndim] with strides [1, n], a transposed [ndim, n], as
 * 1.13's CPU nonzero lays it out. */
static weft_tensor* nonzero_impl(const weft_tensor* self, weft_tensor* out) {
  if (out && out->dtype != WEFT_INT64)
    return weft__error(WEFT_INVALID_ARGUMENT, "nonzero: Expected out tensor to have scalar type int64 but got %s",
                       weft_dtype_name(out->dtype)),
           NULL;
  weft_index_walk w;
  weft__index_walk_init(&w, self, -1);
  int64_t n = self->numel ? weft__index_count_nonzero(&w, self->dtype) : 0;
  const int64_t sizes[2] = {self->ndim, n};
  weft_tensor* t = new_result(sizes, 2, WEFT_INT64, self);
  /* none found: 1.13's strides are [1, 0] */
  const int64_t none_sizes[2] = {0, self->ndim}, none_strides[2] = {1, 0};
  weft_tensor* r = !t ? NULL : n ? weft_transpose(t, 0, 1) : weft_as_strided(t, none_sizes, none_strides, 2, 0);
  weft_tensor_release(t);
  if (r && n && self->ndim) weft__index_nonzero(&w, self->dtype, weft_tensor_data_ptr(r), 1, n);
  return out ? into_out("nonzero", r, out) : r;
}

static weft_tensor* nonzero_kernel(const weft_tensor* self) { return nonzero_impl(self, NULL); }
static weft_tensor* nonzero_out_kernel(const weft_tensor* self, weft_tensor* out) { return nonzero_impl(self, out); }

/* Meta for the ops whose result shape the arguments fix; masked_select and
 * nonzero depend on the values, so a meta tensor has no kernel for them. */
#define WEFT__CPU_META(op, fn) \
  WEFT_KERNEL(op, CPU, fn);    \
  WEFT_KERNEL(op, META, fn)

weft_status weft__index_register(void) {
  WEFT__CPU_META(index_select, index_select_kernel);
  WEFT__CPU_META(index_select_out, index_select_out_kernel);
  WEFT__CPU_META(gather, gather_kernel);
  WEFT__CPU_META(gather_out, gather_out_kernel);
  WEFT__CPU_META(scatter_src, scatter_src_kernel);
  WEFT__CPU_META(scatter__src, scatter__src_kernel);
  WEFT__CPU_META(scatter_value, scatter_value_kernel);
  WEFT__CPU_META(scatter__value, scatter__value_kernel);
  WEFT__CPU_META(scatter_reduce_src, scatter_reduce_src_kernel);
  WEFT__CPU_META(scatter__reduce_src, scatter__reduce_src_kernel);
  WEFT__CPU_META(scatter_value_reduce, scatter_value_reduce_kernel);
  WEFT__CPU_META(scatter__value_reduce, scatter__value_reduce_kernel);
  WEFT__CPU_META(scatter_add, scatter_add_kernel);
  WEFT__CPU_META(scatter_add_, scatter_add__kernel);
  WEFT__CPU_META(take, take_kernel);
  WEFT__CPU_META(take_out, take_out_kernel);
  WEFT__CPU_META(masked_fill_scalar, masked_fill_scalar_kernel);
  WEFT__CPU_META(masked_fill_tensor, masked_fill_tensor_kernel);
  WEFT__CPU_META(masked_fill__scalar, masked_fill__scalar_kernel);
  WEFT__CPU_META(masked_fill__tensor, masked_fill__tensor_kernel);
  WEFT_KERNEL(masked_select, CPU, masked_select_kernel);
  WEFT_KERNEL(masked_select_out, CPU, masked_select_out_kernel);
  WEFT_KERNEL(nonzero, CPU, nonzero_kernel);
  WEFT_KERNEL(nonzero_out, CPU, nonzero_out_kernel);
  return WEFT_OK;
}
