/* Dim-rearranging views: permute, transpose, t, movedim, expand, squeeze,
 * unsqueeze, narrow, slice, select. They follow PyTorch
 * 1.13's TensorShape.cpp and inferExpandGeometry / inferSqueezeGeometry /
 * inferUnsqueezeGeometry, including error wording. Messages PyTorch already
 * starts with the op's name ("select(): ...") are kept verbatim; others get
 * "<op>: ". */
#include "ops/ops.h"
#include "ops/view_internal.h"

/* ---- permute / transpose / t / movedim ---- */

static weft_tensor* permute_impl(const weft_tensor* self, const int64_t* dims, int64_t ndim) {
  /* PyTorch 1.13 prefixes "permute(sparse_coo)" for dense tensors too; weft names the op. */
  if (ndim != self->ndim)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "permute: number of dimensions in the tensor input does not match "
                            "the length of the desired ordering of dimensions i.e. input.dim() = %d is not "
                            "equal to len(dims) = %" PRId64,
                            (int)self->ndim, ndim);
  if (ndim > 0 && !dims) return weft__error_null(WEFT_INVALID_ARGUMENT, "permute: dims is NULL");
  int64_t sizes[WEFT_MAX_DIMS], strides[WEFT_MAX_DIMS];
  bool seen[WEFT_MAX_DIMS] = {false};
  /* Wrap and dedupe in one pass, so the first bad entry decides the error. */
  for (int64_t i = 0; i < ndim; i++) {
    int64_t d;
    if (!weft__wrap_dim("permute", dims[i], ndim, &d)) return NULL;
    if (seen[d]) return weft__error_null(WEFT_INVALID_ARGUMENT, "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sizes[i] = self->sizes[d];
    strides[i] = self->strides[d];
  }
  return weft__view_of(self, sizes, strides, ndim, self->storage_offset);
}

static weft_tensor* transpose_impl(const weft_tensor* self, int64_t dim0, int64_t dim1) {
  int64_t a, b;
  if (!weft__wrap_dim("transpose", dim0, self->ndim, &a) ||
      !weft__wrap_dim("transpose", dim1, self->ndim, &b))
    return NULL;
  if (a == b) return weft__alias(self); /* also covers 0-dim */
  int64_t sizes[WEFT_MAX_DIMS], strides[WEFT_MAX_DIMS];
  for (int64_t i = 0; i < self->ndim; i++) {
    int64_t src = i == a ? b : i == b ? a : i;
    sizes[i] = self->sizes[src];
    strides[i] = self->strides[src];
  }
  return weft__view_of(self, sizes, strides, self->ndim, self->storage_offset);
}

static weft_tensor* t_impl(const weft_tensor* self) {
  if (self->ndim > 2)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "t() expects a tensor with <= 2 dimensions, but self is %dD", (int)self->ndim);
  return weft_transpose(self, 0, self->ndim < 2 ? 0 : 1);
}

/* Wrap every entry of v into out; false + error at the first bad one. */
static bool wrap_all(const char* op, const int64_t* v, int64_t n, int64_t ndim, int64_t* out) {
  for (int64_t i = 0; i < n; i++)
    if (!weft__wrap_dim(op, v[i], ndim, &out[i])) return false;
  return true;
}

static bool all_unique(const int64_t* wrapped, int64_t n) {
  bool seen[WEFT_MAX_DIMS] = {false};
  for (int64_t i = 0; i < n; i++) {
    if (seen[wrapped[i]]) return false;
    seen[wrapped[i]] = true;
  }
  return true;
}

static weft_tensor* movedim_impl(const weft_tensor* self, const int64_t* src, const int64_t* dst, int64_t n) {
  int64_t ndim = self->ndim;
  int64_t wsrc[WEFT_MAX_DIMS], wdst[WEFT_MAX_DIMS];
  if (n < 0 || (n > 0 && (!src || !dst)))
    return weft__error_null(WEFT_INVALID_ARGUMENT, "movedim: invalid dims argument");
  /* PyTorch wraps all of src, then all of dst, then checks for repeats. */
  for (int64_t i = 0; i < n; i++) {
    int64_t w;
    if (!weft__wrap_dim("movedim", src[i], ndim, &w)) return NULL;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t w;
    if (!weft__wrap_dim("movedim", dst[i], ndim, &w)) return NULL;
  }
  int64_t cap = ndim > 0 ? ndim : 1;
  /* All wrapped fine, so more entries than dims must repeat one. */
  if (n > cap || !wrap_all("movedim", src, n, ndim, wsrc) || !all_unique(wsrc, n))
    return weft__error_null(WEFT_INVALID_ARGUMENT, "movedim: repeated dim in `source` (%s)",
                            WEFT__LIST(src, n));
  if (!wrap_all("movedim", dst, n, ndim, wdst) || !all_unique(wdst, n))
    return weft__error_null(WEFT_INVALID_ARGUMENT, "movedim: repeated dim in `destination` (%s)",
                            WEFT__LIST(dst, n));
  if (ndim == 0) return weft__alias(self);
  int64_t order[WEFT_MAX_DIMS];
  bool src_used[WEFT_MAX_DIMS] = {false}, dst_used[WEFT_MAX_DIMS] = {false};
  for (int64_t i = 0; i < n; i++) {
    order[wdst[i]] = wsrc[i];
    src_used[wsrc[i]] = true;
    dst_used[wdst[i]] = true;
  }
  /* The dims not moved keep their relative order in the free positions. */
  int64_t next_src = 0;
  for (int64_t d = 0; d < ndim; d++) {
    if (dst_used[d]) continue;
    while (src_used[next_src]) next_src++;
    order[d] = next_src++;
  }
  return weft_permute(self, order, ndim);
}

/* ---- expand ---- */

static weft_tensor* expand_count_error(const weft_tensor* self, const int64_t* sizes, int64_t ndim) {
  /* PyTorch prints its legacy type string (torch.FloatTensor{[2, 3]});
   * weft names the dtype as everywhere else */
  return weft__error_null(WEFT_SHAPE_ERROR,
                          "expand(%s%s tensor of shape %s, size=%s): the number of sizes provided (%" PRId64
                          ") must be greater or equal to the number of dimensions in the tensor (%d)",
                          self->device == WEFT_DEVICE_META ? "meta " : "", weft_dtype_name(self->dtype),
                          WEFT__LIST(self->sizes, self->ndim), WEFT__LIST(sizes, ndim), ndim, (int)self->ndim);
}

/* PyTorch's inferExpandGeometry. A new leading dim of size 1 gets the stride
 * that would make it contiguous with the next dim; broadcast dims get 0. */
static bool expand_geometry(const weft_tensor* self, const int64_t* sizes, int64_t ndim, int64_t* out_sizes,
                            int64_t* out_strides) {
  for (int64_t i = ndim - 1; i >= 0; i--) {
    int64_t dim = self->ndim - ndim + i;
    int64_t size = 1, stride = 0, target = sizes[i];
    if (dim >= 0) {
      size = self->sizes[dim];
      stride = self->strides[dim];
    } else if (i + 1 < ndim &&
               weft__mul_overflow(out_sizes[i + 1], out_strides[i + 1], &stride)) {
      stride = 0; /* only reachable for a size-1 dim, where the stride is never used */
    }
    if (target == -1) {
      if (dim < 0) {
        weft__error(WEFT_SHAPE_ERROR,
                    "expand: The expanded size of the tensor (-1) isn't allowed in a leading, "
                    "non-existing dimension %" PRId64, i);
        return false;
      }
      target = size;
    }
    if (size != target) {
      if (size != 1) {
        weft__error(WEFT_SHAPE_ERROR,
                    "expand: The expanded size of the tensor (%" PRId64 ") must match the existing size (%"
                    PRId64 ") at non-singleton dimension %" PRId64 ".  Target sizes: %s.  Tensor sizes: %s",
                    target, size, i, WEFT__LIST(sizes, ndim), WEFT__LIST(self->sizes, self->ndim));
        return false;
      }
      size = target;
      stride = 0;
    }
    out_sizes[i] = size;
    out_strides[i] = stride;
  }
  return true;
}

static weft_tensor* expand_impl(const weft_tensor* self, const int64_t* sizes, int64_t ndim) {
  if (!weft__check_view_ndim("expand", sizes, ndim)) return NULL;
  if (ndim < self->ndim) return expand_count_error(self, sizes, ndim);
  int64_t out_sizes[WEFT_MAX_DIMS], out_strides[WEFT_MAX_DIMS];
  if (!expand_geometry(self, sizes, ndim, out_sizes, out_strides)) return NULL;
  int64_t numel = 1;
  bool has_zero = false, overflow = false;
  for (int64_t i = 0; i < ndim; i++) {
    if (out_sizes[i] < 0)
      return weft__error_null(WEFT_SHAPE_ERROR,
                              "expand: Trying to create tensor with negative dimension %" PRId64 ": %s",
                              out_sizes[i], WEFT__LIST(sizes, ndim));
    has_zero |= out_sizes[i] == 0;
    overflow |= weft__mul_overflow(numel, out_sizes[i], &numel);
  }
  if (overflow && !has_zero)
    return weft__error_null(WEFT_OVERFLOW, "expand: numel: integer multiplication overflow");
  return weft__view_of(self, out_sizes, out_strides, ndim, self->storage_offset);
}

/* ---- squeeze / unsqueeze ---- */

static weft_tensor* squeeze_impl(const weft_tensor* self) {
  int64_t sizes[WEFT_MAX_DIMS], strides[WEFT_MAX_DIMS];
  int64_t n = 0;
  for (int64_t d = 0; d < self->ndim; d++) {
    if (self->sizes[d] == 1) continue;
    sizes[n] = self->sizes[d];
    strides[n++] = self->strides[d];
  }
  return weft__view_of(self, sizes, strides, n, self->storage_offset);
}

/* self's view with dimension d left out, starting at offset */
static weft_tensor* view_without_dim(const weft_tensor* self, int64_t d, int64_t offset) {
  int64_t sizes[WEFT_MAX_DIMS], strides[WEFT_MAX_DIMS];
  int64_t n = 0;
  for (int64_t i = 0; i < self->ndim; i++) {
    if (i == d) continue;
    sizes[n] = self->sizes[i];
    strides[n++] = self->strides[i];
  }
  return weft__view_of(self, sizes, strides, n, offset);
}

static weft_tensor* squeeze_dim_impl(const weft_tensor* self, int64_t dim) {
  int64_t d;
  if (!weft__wrap_dim("squeeze", dim, self->ndim, &d)) return NULL;
  if (self->ndim == 0 || self->sizes[d] != 1) return weft__alias(self);
  return view_without_dim(self, d, self->storage_offset);
}

static weft_tensor* unsqueeze_impl(const weft_tensor* self, int64_t dim) {
  int64_t d;
  if (!weft__wrap_dim("unsqueeze", dim, self->ndim + 1, &d)) return NULL;
  if (self->ndim >= WEFT_MAX_DIMS)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "unsqueeze: expected between 0 and %d dimensions, got %d",
                            WEFT_MAX_DIMS, (int)self->ndim + 1);
  /* inferUnsqueezeGeometry: the new dim's stride spans the dim it precedes. */
  int64_t new_stride = 1;
  if (d < self->ndim &&
      weft__mul_overflow(self->sizes[d], self->strides[d], &new_stride))
    return weft__error_null(WEFT_OVERFLOW, "unsqueeze: stride overflow");
  int64_t sizes[WEFT_MAX_DIMS], strides[WEFT_MAX_DIMS];
  for (int64_t i = 0, j = 0; i <= self->ndim; i++) {
    if (i == d) {
      sizes[i] = 1;
      strides[i] = new_stride;
    } else {
      sizes[i] = self->sizes[j];
      strides[i] = self->strides[j++];
    }
  }
  return weft__view_of(self, sizes, strides, self->ndim + 1, self->storage_offset);
}

/* ---- narrow / slice / select ---- */

static weft_tensor* slice_impl(const weft_tensor* self, int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (self->ndim == 0)
    return weft__error_null(WEFT_INDEX_ERROR, "slice() cannot be applied to a 0-dim tensor.");
  int64_t d;
  if (!weft__wrap_dim("slice", dim, self->ndim, &d)) return NULL;
  if (step <= 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "slice step must be positive");
  int64_t size = self->sizes[d];
  if (start < 0) start += size;
  if (end < 0) end += size;
  if (start < 0) start = 0;
  else if (start >= size) start = size;
  if (end < start) end = start;
  else if (end >= size) end = size;
  int64_t len = end - start;
  int64_t sizes[WEFT_MAX_DIMS], strides[WEFT_MAX_DIMS];
  for (int64_t i = 0; i < self->ndim; i++) {
    sizes[i] = self->sizes[i];
    strides[i] = self->strides[i];
  }
  sizes[d] = len == 0 ? 0 : 1 + (len - 1) / step; /* round up without overflowing */
  if (weft__mul_overflow(self->strides[d], step, &strides[d]))
    return weft__error_null(WEFT_OVERFLOW, "slice: stride %" PRId64 " times step %" PRId64 " overflows",
                            self->strides[d], step);
  /* within the storage unless the tensor is empty, where a huge stride may overflow */
  int64_t offset;
  if (weft__mul_overflow(start, self->strides[d], &offset) || weft__add_overflow(offset, self->storage_offset, &offset))
    return weft__error_null(WEFT_OVERFLOW, "slice: storage offset %" PRId64 " + %" PRId64 " * stride %" PRId64 " overflows",
                            self->storage_offset, start, self->strides[d]);
  return weft__view_of(self, sizes, strides, self->ndim, offset);
}

static weft_tensor* narrow_impl(const weft_tensor* self, int64_t dim, int64_t start, int64_t length) {
  if (self->ndim == 0)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "narrow() cannot be applied to a 0-dim tensor.");
  int64_t d;
  if (!weft__wrap_dim("narrow", dim, self->ndim, &d)) return NULL;
  int64_t cur = self->sizes[d];
  /* start == size is a valid (empty) start but not a valid dim to wrap. */
  if (start != cur && !weft__wrap_dim("narrow", start, cur, &start)) return NULL;
  if (length < 0 || start > cur - length)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "narrow: start (%" PRId64 ") + length (%" PRId64 ") exceeds dimension size (%" PRId64
                            ").",
                            start, length, cur);
  return weft_slice(self, d, start, start + length, 1);
}

static weft_tensor* select_impl(const weft_tensor* self, int64_t dim, int64_t index) {
  if (self->ndim == 0)
    return weft__error_null(WEFT_INDEX_ERROR, "select() cannot be applied to a 0-dim tensor.");
  int64_t d;
  if (!weft__wrap_dim("select", dim, self->ndim, &d)) return NULL;
  int64_t size = self->sizes[d];
  if (index < -size || index >= size)
    return weft__error_null(WEFT_INDEX_ERROR,
                            "select(): index %" PRId64 " out of range for tensor of size %s at dimension %" PRId64,
                            index, WEFT__LIST(self->sizes, self->ndim), d);
  if (index < 0) index += size;
  int64_t offset; /* (an empty tensor's huge stride may overflow) */
  if (weft__mul_overflow(index, self->strides[d], &offset) || weft__add_overflow(offset, self->storage_offset, &offset))
    return weft__error_null(WEFT_OVERFLOW, "select: storage offset %" PRId64 " + %" PRId64 " * stride %" PRId64 " overflows",
                            self->storage_offset, index, self->strides[d]);
  return view_without_dim(self, d, offset);
}

/* ---- kernels ---- */

static weft_tensor* slice_kernel(const weft_tensor* self, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return slice_impl(self, dim, start == INT64_MIN ? 0 : start, end == INT64_MIN ? INT64_MAX : end, step);
}

static weft_tensor* movedim_kernel(const weft_tensor* self, const int64_t* src, int64_t nsrc, const int64_t* dst,
                                   int64_t ndst) {
  if (nsrc != ndst)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "movedim: Invalid source or destination dims: source (%s dims) should contain the "
                            "same number of dims as destination (%s dims)",
                            WEFT__LIST(src, nsrc), WEFT__LIST(dst, ndst));
  return movedim_impl(self, src, dst, nsrc);
}

/* The public C function whose signature differs from its op's. */
weft_tensor* weft_movedim(const weft_tensor* self, const int64_t* src, const int64_t* dst, int64_t n) {
  return weft_op_movedim(self, src, n, dst, n);
}

weft_status weft__view_dims_register(void) {
  WEFT_KERNEL(permute, COMPOSITE_EXPLICIT_AUTOGRAD, permute_impl);
  WEFT_KERNEL(transpose, COMPOSITE_EXPLICIT_AUTOGRAD, transpose_impl);
  WEFT_KERNEL(t, COMPOSITE_EXPLICIT_AUTOGRAD, t_impl);
  WEFT_KERNEL(expand, COMPOSITE_EXPLICIT_AUTOGRAD, expand_impl);
  WEFT_KERNEL(squeeze, COMPOSITE_EXPLICIT_AUTOGRAD, squeeze_impl);
  WEFT_KERNEL(squeeze_dim, COMPOSITE_EXPLICIT_AUTOGRAD, squeeze_dim_impl);
  WEFT_KERNEL(unsqueeze, COMPOSITE_EXPLICIT_AUTOGRAD, unsqueeze_impl);
  WEFT_KERNEL(narrow, COMPOSITE_IMPLICIT_AUTOGRAD, narrow_impl);
  WEFT_KERNEL(slice, COMPOSITE_EXPLICIT_AUTOGRAD, slice_kernel);
  WEFT_KERNEL(select, COMPOSITE_EXPLICIT_AUTOGRAD, select_impl);
  WEFT_KERNEL(op_movedim, COMPOSITE_IMPLICIT_AUTOGRAD, movedim_kernel);
  return WEFT_OK;
}
