/* index_copy, index_copy_ and index_copy.out (issue 24): PyTorch 1.13's
 * checks (index_copy's meta function and its kernel's bounds check), in its
 * order and words, dtypes and shapes as JS writes them. Each index moves one
 * slice with copy_ (a KV cache writes one position per step, so one copy of
 * a dense slice; the copy driver turns it into row memcpys), in index order,
 * so a repeated index keeps the last slice as 1.13's serial loop does. */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "ops/index_internal.h"
#include "ops/ops.h"

typedef const weft_tensor* T;

/* t's sizes without dim (a 0-dim tensor keeps its empty list); their count */
static int64_t sliced(T t, int64_t dim, int64_t* s) {
  int64_t n = 0;
  for (int64_t d = 0; d < t->ndim; d++)
    if (d != dim) s[n++] = t->sizes[d];
  return n;
}

static const char* slice_str(T t, int64_t dim, char* buf, size_t cap) {
  int64_t s[WEFT_MAX_DIMS];
  return weft__sizes_str(s, sliced(t, dim, s), buf, cap);
}

static bool same_slices(T self, T src, int64_t dim) {
  int64_t a[WEFT_MAX_DIMS], b[WEFT_MAX_DIMS], na = sliced(self, dim, a), nb = sliced(src, dim, b);
  return na == nb && !memcmp(a, b, sizeof(int64_t) * (size_t)na);
}

static weft_status meta_checks(T self, int64_t dim, T index, T src, int64_t* d) {
  const char* op = "index_copy_()";
  if (!weft__wrap_dim("index_copy_", dim, self->ndim, d)) return weft_last_status();
  if (index->ndim >= 2)
    return weft__error(WEFT_INDEX_ERROR, "%s: Index should have dimension 1 or 0 (got %d)", op, index->ndim);
  int64_t n = index->numel;
  if (src->ndim == 0 && n != 1)
    return weft__error(WEFT_INDEX_ERROR, "%s: When source is scalar, index should have one element (got %lld)", op,
                       (long long)n);
  if (src->ndim != 0 && self->ndim != 0 && src->ndim != self->ndim)
    return weft__error(WEFT_INDEX_ERROR,
                       "%s: When source and destination are not scalars, their dimensionality must match. Source "
                       "dimensionality (%d), destination dimensionality (%d)",
                       op, src->ndim, self->ndim);
  if (index->dtype != WEFT_INT64)
    return weft__error(WEFT_TYPE_ERROR, "%s: Expected a long tensor for index, but got %s", op,
                       weft_dtype_name(index->dtype));
  if (self->dtype != src->dtype)
    return weft__error(WEFT_TYPE_ERROR,
                       "%s: self and source expected to have the same dtype, but got (self) %s and (source) %s", op,
                       weft_dtype_name(self->dtype), weft_dtype_name(src->dtype));
  if (self->device != src->device || src->device != index->device)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: self, source and index must be on the same device", op);
  if (!same_slices(self, src, *d)) {
    char a[160], b[160];
    return weft__error(WEFT_SHAPE_ERROR,
                       "%s: Source/destination tensor must have same slice shapes. Destination slice shape: %s at "
                       "dimension %lld and source slice shape: %s at dimension 0.",
                       op, slice_str(self, *d, a, sizeof a), (long long)*d, slice_str(src, *d, b, sizeof b));
  }
  if (src->ndim != 0 && n != src->sizes[*d])
    return weft__error(WEFT_INDEX_ERROR, "%s: Number of indices (%lld) should be equal to source.size(dim) (%lld)", op,
                       (long long)n, (long long)src->sizes[*d]);
  return WEFT_OK;
}

/* slice i of t along dim (t itself when 0-dim) */
static weft_tensor* slice_of(T t, int64_t dim, int64_t i) {
  return t->ndim ? weft_select(t, dim, i) : weft_tensor_retain((weft_tensor*)t);
}

static weft_status copy_slices(weft_tensor* self, int64_t dim, T index, T src) {
  weft_tensor* ic = weft_contiguous(index, WEFT_CONTIGUOUS_FORMAT);
  if (!ic) return weft_last_status();
  const int64_t* idx = weft_tensor_data_ptr(ic);
  weft_status s = WEFT_OK;
  for (int64_t i = 0; i < index->numel && s == WEFT_OK; i++) {
    weft_tensor *dst = slice_of(self, dim, idx[i]), *from = slice_of(src, dim, i);
    s = dst && from ? weft_copy_(dst, from) : weft_last_status();
    weft_tensor_release(dst);
    weft_tensor_release(from);
  }
  weft_tensor_release(ic);
  return s;
}

static weft_status index_copy_into(weft_tensor* self, int64_t dim, T index, T src) {
  int64_t d, bad;
  if (meta_checks(self, dim, index, src, &d) != WEFT_OK) return weft_last_status();
  if (self->device == WEFT_DEVICE_META) return WEFT_OK;
  int64_t size = self->ndim ? self->sizes[d] : 1;
  if (weft__index_find_bad_in(index, 0, size, &bad))
    return weft__error(WEFT_INDEX_ERROR, "index_copy_(): index %lld is out of bounds for dimension %lld with size %lld",
                       (long long)bad, (long long)d, (long long)size);
  return copy_slices(self, d, index, src);
}

static weft_status index_copy__kernel(weft_tensor* self, int64_t dim, T index, T src) {
  return index_copy_into(self, dim, index, src);
}

static weft_tensor* index_copy_kernel(T self, int64_t dim, T index, T src) {
  weft_tensor* r = weft_clone(self, WEFT_CONTIGUOUS_FORMAT);
  if (r && index_copy_into(r, dim, index, src) != WEFT_OK) weft_tensor_release(r), r = NULL;
  return r;
}

static weft_tensor* index_copy_out_kernel(T self, int64_t dim, T index, T src, weft_tensor* out) {
  if (out->dtype != self->dtype)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "index_copy: Expected out tensor to have dtype %s, but got %s instead",
                            weft_dtype_name(self->dtype), weft_dtype_name(out->dtype));
  weft_tensor* r = index_copy_kernel(self, dim, index, src);
  weft_status s = r ? weft__into_out("index_copy", r, out) : weft_last_status();
  weft_tensor_release(r);
  return s == WEFT_OK ? weft_tensor_retain(out) : NULL;
}

weft_status weft__index_copy_register(void) {
  WEFT_KERNEL(index_copy, CPU, index_copy_kernel);
  WEFT_KERNEL(index_copy, META, index_copy_kernel);
  WEFT_KERNEL(index_copy_, CPU, index_copy__kernel);
  WEFT_KERNEL(index_copy_, META, index_copy__kernel);
  WEFT_KERNEL(index_copy_out, CPU, index_copy_out_kernel);
  WEFT_KERNEL(index_copy_out, META, index_copy_out_kernel);
  return WEFT_OK;
}
