/* Shape-changing views: as_strided, view, reshape, flatten, unflatten.
 * They follow PyTorch 1.13's as_strided_tensorimpl/setStrided, infer_size,
 * computeStride, reshape, flatten and unflatten, including error wording.
 * Messages PyTorch already starts with the op's name ("as_strided: ...",
 * "unflatten: ...", "flatten() ...") are kept verbatim; others get "<op>: ". */
#include "ops/ops.h"
#include "ops/view_internal.h"
#include "weft/copy.h"

bool weft__check_view_ndim(const char* op, const int64_t* sizes, int64_t ndim) {
  if (ndim < 0 || ndim > WEFT_MAX_DIMS) {
    weft__error(WEFT_INVALID_ARGUMENT, "%s: expected between 0 and %d dimensions, got %" PRId64, op,
                WEFT_MAX_DIMS, ndim);
    return false;
  }
  if (ndim > 0 && !sizes) {
    weft__error(WEFT_INVALID_ARGUMENT, "%s: sizes is NULL", op);
    return false;
  }
  return true;
}

/* ---- as_strided ---- */

/* PyTorch's computeStorageNbytes without the offset: 0 when any size is 0. */
static bool storage_nbytes(const int64_t* sizes, const int64_t* strides, int64_t ndim,
                           int64_t itemsize, int64_t* out) {
  int64_t n = 1;
  for (int64_t i = 0; i < ndim; i++) {
    if (sizes[i] == 0) {
      *out = 0;
      return true;
    }
  }
  for (int64_t i = 0; i < ndim; i++) {
    int64_t span;
    if (weft__mul_overflow(strides[i], sizes[i] - 1, &span) || weft__add_overflow(n, span, &n))
      return false;
  }
  return !weft__mul_overflow(n, itemsize, out);
}

static bool check_as_strided_args(const int64_t* sizes, const int64_t* strides, int64_t ndim) {
  for (int64_t i = 0; i < ndim; i++) {
    if (strides[i] < 0) {
      weft__error(WEFT_INVALID_ARGUMENT,
                  "as_strided: Negative strides are not supported at the moment, got strides: %s",
                  WEFT__LIST(strides, ndim));
      return false;
    }
  }
  for (int64_t i = 0; i < ndim; i++) {
    if (sizes[i] < 0) {
      weft__error(WEFT_INVALID_ARGUMENT,
                  "as_strided: Trying to create tensor with negative dimension %" PRId64 ": %s",
                  sizes[i], WEFT__LIST(sizes, ndim));
      return false;
    }
  }
  return true;
}

/* PyTorch's checkInBoundsForStorage: the layout must fit in the storage's bytes
 * (meta storages included, they keep a size). */
static bool check_in_bounds(const weft_tensor* self, const int64_t* sizes, const int64_t* strides,
                            int64_t ndim, int64_t offset) {
  int64_t itemsize = (int64_t)weft_dtype_size(self->dtype);
  int64_t need, offset_bytes, total;
  if (!storage_nbytes(sizes, strides, ndim, itemsize, &need)) {
    weft__error(WEFT_OVERFLOW, "as_strided: Storage size calculation overflowed with sizes=%s and strides=%s",
                WEFT__LIST(sizes, ndim), WEFT__LIST(strides, ndim));
    return false;
  }
  if (need == 0) return true; /* a tensor with a 0 dim fits any storage */
  if (weft__mul_overflow(offset, itemsize, &offset_bytes) ||
      weft__add_overflow(need, offset_bytes, &total)) {
    weft__error(WEFT_OVERFLOW, "as_strided: storage offset %" PRId64 " overflows the storage size calculation",
                offset);
    return false;
  }
  if (total > self->storage->nbytes) {
    weft__error(WEFT_INVALID_ARGUMENT,
                "as_strided: setStorage: sizes %s, strides %s, storage offset %" PRId64
                ", and itemsize %" PRId64 " requiring a storage size of %" PRId64
                " are out of bounds for storage of size %" PRId64,
                WEFT__LIST(sizes, ndim), WEFT__LIST(strides, ndim), offset, itemsize, total,
                self->storage->nbytes);
    return false;
  }
  return true;
}

static weft_tensor* as_strided_impl(const weft_tensor* self, const int64_t* sizes, const int64_t* strides,
                             int64_t ndim, int64_t storage_offset) {
  if (!weft__check_view_ndim("as_strided", sizes, ndim)) return NULL;
  if (ndim > 0 && !strides) return weft__error_null(WEFT_INVALID_ARGUMENT, "as_strided: strides is NULL");
  if (!check_as_strided_args(sizes, strides, ndim)) return NULL;
  /* PyTorch checks the bounds before the offset's sign. */
  if (!check_in_bounds(self, sizes, strides, ndim, storage_offset)) return NULL;
  if (storage_offset < 0)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "as_strided: Tensor: invalid storage offset %" PRId64,
                            storage_offset);
  /* after PyTorch's checks: stride-0 sizes fit any storage, so the bounds do not catch [2**62, 8] */
  if (weft_check_shape("as_strided", sizes, ndim) != WEFT_OK) return NULL;
  return weft__view_of(self, sizes, strides, ndim, storage_offset);
}

/* ---- infer_size / computeStride ---- */

typedef enum {
  INFER_OK,
  INFER_TWO_UNKNOWN,  /* two -1 */
  INFER_NEGATIVE,     /* a size < -1 */
  INFER_AMBIGUOUS,    /* -1 with a 0 elsewhere and numel 0 */
  INFER_MISMATCH
} infer_result;

/* PyTorch's infer_size: out gets shape with its -1 resolved. *bad is the
 * offending size for INFER_NEGATIVE. */
static infer_result infer_size(const int64_t* shape, int64_t n, int64_t numel, int64_t* out,
                               int64_t* bad) {
  int64_t newsize = 1, infer_dim = -1;
  bool has_zero = false, overflow = false;
  for (int64_t d = 0; d < n; d++) {
    out[d] = shape[d];
    if (shape[d] == -1) {
      if (infer_dim >= 0) return INFER_TWO_UNKNOWN;
      infer_dim = d;
    } else if (shape[d] >= 0) {
      has_zero |= shape[d] == 0;
      overflow |= weft__mul_overflow(newsize, shape[d], &newsize);
    } else {
      *bad = shape[d];
      return INFER_NEGATIVE;
    }
  }
  /* The exact product is 0 whenever a size is 0, even if a partial product overflowed. */
  if (has_zero) {
    newsize = 0;
    overflow = false;
  }
  if (overflow) return INFER_MISMATCH;
  if (numel == newsize || (infer_dim >= 0 && newsize > 0 && numel % newsize == 0)) {
    if (infer_dim >= 0) {
      if (newsize == 0) return INFER_AMBIGUOUS;
      out[infer_dim] = numel / newsize;
    }
    return INFER_OK;
  }
  return INFER_MISMATCH;
}

static bool infer_size_or_error(const char* op, const int64_t* shape, int64_t n, int64_t numel,
                                int64_t* out) {
  int64_t bad = 0;
  switch (infer_size(shape, n, numel, out, &bad)) {
    case INFER_OK:
      return true;
    case INFER_TWO_UNKNOWN:
      weft__error(WEFT_SHAPE_ERROR, "%s: only one dimension can be inferred", op);
      return false;
    case INFER_NEGATIVE:
      weft__error(WEFT_SHAPE_ERROR, "%s: invalid shape dimension %" PRId64, op, bad);
      return false;
    case INFER_AMBIGUOUS:
      weft__error(WEFT_SHAPE_ERROR,
                  "%s: cannot reshape tensor of 0 elements into shape %s because the unspecified "
                  "dimension size -1 can be any value and is ambiguous",
                  op, WEFT__LIST(shape, n));
      return false;
    case INFER_MISMATCH:
      break;
  }
  weft__error(WEFT_SHAPE_ERROR, "%s: shape '%s' is invalid for input of size %" PRId64, op,
              WEFT__LIST(shape, n), numel);
  return false;
}

static bool same_shape(const int64_t* a, int64_t na, const int64_t* b, int64_t nb) {
  if (na != nb) return false;
  for (int64_t i = 0; i < na; i++)
    if (a[i] != b[i]) return false;
  return true;
}

/* Strides of a freshly allocated tensor, with 0 sizes counted as 1, which is
 * what PyTorch gives a 0-element view whose shape changed. */
static void resize_strides(const int64_t* shape, int64_t n, int64_t* stride) {
  int64_t s = 1;
  for (int64_t d = n - 1; d >= 0; d--) {
    stride[d] = s;
    /* Only reached for 0 elements, where sizes may multiply past int64: wrap as PyTorch does. */
    s = (int64_t)((uint64_t)s * (uint64_t)(shape[d] > 1 ? shape[d] : 1));
  }
}

/* PyTorch's computeStride: the view's strides when each run of old dims that
 * are mutually contiguous ("chunk") maps onto whole runs of new dims; false
 * when some new dim would span two chunks. */
static bool compute_stride(const weft_tensor* t, const int64_t* shape, int64_t n, int64_t* stride) {
  const int64_t* os = t->sizes;
  const int64_t* ot = t->strides;
  int64_t on = t->ndim;
  if (on == 0) {
    for (int64_t d = 0; d < n; d++) stride[d] = 1;
    return true;
  }
  if (t->numel == 0) {
    if (same_shape(os, on, shape, n)) {
      for (int64_t d = 0; d < n; d++) stride[d] = ot[d];
    } else {
      resize_strides(shape, n, stride);
    }
    return true;
  }
  int64_t view_d = n - 1;
  int64_t chunk_base_stride = ot[on - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = on - 1; tensor_d >= 0; tensor_d--) {
    tensor_numel *= os[tensor_d]; /* a partial product of numel: no overflow */
    int64_t chunk_span;
    bool chunk_end = tensor_d == 0;
    if (!chunk_end && os[tensor_d - 1] != 1) {
      /* An unrepresentable product cannot equal a stride: the chunk ends. */
      chunk_end = weft__mul_overflow(tensor_numel, chunk_base_stride, &chunk_span) ||
                  ot[tensor_d - 1] != chunk_span;
    }
    if (!chunk_end) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
      if (weft__mul_overflow(view_numel, chunk_base_stride, &stride[view_d])) return false;
      view_numel *= shape[view_d];
      view_d--;
    }
    if (view_numel != tensor_numel) return false;
    if (tensor_d > 0) {
      chunk_base_stride = ot[tensor_d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  return view_d == -1;
}

/* ---- view / reshape ---- */

static weft_tensor* view_inferred(const weft_tensor* self, const int64_t* shape, int64_t n) {
  int64_t stride[WEFT_MAX_DIMS];
  if (!compute_stride(self, shape, n, stride))
    return weft__error_null(WEFT_SHAPE_ERROR,
                            "view: view size is not compatible with input tensor's size and stride (at "
                            "least one dimension spans across two contiguous subspaces). Use "
                            ".reshape(...) instead.");
  return weft__view_of(self, shape, stride, n, self->storage_offset);
}

static weft_tensor* view_impl(const weft_tensor* self, const int64_t* sizes, int64_t ndim) {
  int64_t shape[WEFT_MAX_DIMS];
  if (!weft__check_view_ndim("view", sizes, ndim)) return NULL;
  if (!infer_size_or_error("view", sizes, ndim, self->numel, shape)) return NULL;
  return view_inferred(self, shape, ndim);
}

static weft_tensor* reshape_impl(const weft_tensor* self, const int64_t* sizes, int64_t ndim) {
  int64_t shape[WEFT_MAX_DIMS], stride[WEFT_MAX_DIMS];
  if (!weft__check_view_ndim("reshape", sizes, ndim)) return NULL;
  if (!infer_size_or_error("reshape", sizes, ndim, self->numel, shape)) return NULL;
  if (compute_stride(self, shape, ndim, stride))
    return weft__view_of(self, shape, stride, ndim, self->storage_offset);
  /* No view can express it: PyTorch's _unsafe_view(clone(contiguous)). */
  weft_tensor* copy = weft_clone(self, WEFT_CONTIGUOUS_FORMAT);
  if (!copy) return NULL;
  weft_tensor* out = view_inferred(copy, shape, ndim);
  weft_tensor_release(copy);
  return out;
}

/* ---- flatten / unflatten ---- */

static weft_tensor* flatten_impl(const weft_tensor* self, int64_t start_dim, int64_t end_dim) {
  int64_t s, e;
  if (!weft__wrap_dim("flatten", start_dim, self->ndim, &s) ||
      !weft__wrap_dim("flatten", end_dim, self->ndim, &e))
    return NULL;
  if (s > e)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "flatten() has invalid args: start_dim cannot come after end_dim");
  if (self->ndim == 0) {
    const int64_t one = 1;
    return weft_reshape(self, &one, 1);
  }
  if (s == e) return weft__alias(self);
  /* Sizes given explicitly, not through -1, which would be ambiguous with 0 sizes. */
  int64_t shape[WEFT_MAX_DIMS];
  int64_t n = 0, slice_numel = 1;
  for (int64_t d = 0; d < s; d++) shape[n++] = self->sizes[d];
  for (int64_t d = s; d <= e; d++)
    if (weft__mul_overflow(slice_numel, self->sizes[d], &slice_numel)) /* only an empty tensor gets here */
      return weft__error_null(WEFT_OVERFLOW, "flatten(): the flattened size of %s overflows int64",
                              WEFT__LIST(self->sizes + s, e - s + 1));
  shape[n++] = slice_numel;
  for (int64_t d = e + 1; d < self->ndim; d++) shape[n++] = self->sizes[d];
  return weft_reshape(self, shape, n);
}

static weft_tensor* unflatten_error(infer_result r, int64_t dim, int64_t dim_size,
                                    const int64_t* sizes, int64_t nsizes, int64_t bad) {
  switch (r) {
    case INFER_TWO_UNKNOWN: /* PyTorch wraps the std::runtime_error it catches */
      return weft__error_null(WEFT_SHAPE_ERROR,
                              "unflatten got an unexpected error:\nonly one dimension can be inferred");
    case INFER_NEGATIVE:
      return weft__error_null(WEFT_SHAPE_ERROR, "unflatten: invalid shape dimension %" PRId64, bad);
    case INFER_AMBIGUOUS:
      return weft__error_null(WEFT_SHAPE_ERROR,
                              "unflatten: cannot reshape tensor of 0 elements into shape %s because the "
                              "unspecified dimension size -1 can be any value and is ambiguous",
                              WEFT__LIST(sizes, nsizes));
    default:
      return weft__error_null(WEFT_SHAPE_ERROR,
                              "unflatten: Provided sizes %s don't multiply up to the size of dim %" PRId64
                              " (%" PRId64 ") in the input tensor",
                              WEFT__LIST(sizes, nsizes), dim, dim_size);
  }
}

static weft_tensor* unflatten_impl(const weft_tensor* self, int64_t dim, const int64_t* sizes, int64_t nsizes) {
  int64_t d;
  if (!weft__wrap_dim("unflatten", dim, self->ndim, &d)) return NULL;
  if (nsizes == 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "unflatten: sizes must be non-empty");
  if (self->ndim == 0)
    return weft__error_null(WEFT_INDEX_ERROR,
                            "unflatten: Dimension specified as %" PRId64 " but tensor has no dimensions", dim);
  if (nsizes < 0 || self->ndim - 1 + nsizes > WEFT_MAX_DIMS)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "unflatten: expected between 0 and %d dimensions in the result, got %" PRId64,
                            WEFT_MAX_DIMS, self->ndim - 1 + nsizes);
  if (!sizes) return weft__error_null(WEFT_INVALID_ARGUMENT, "unflatten: sizes is NULL");
  int64_t inferred[WEFT_MAX_DIMS], bad = 0;
  infer_result r = infer_size(sizes, nsizes, self->sizes[d], inferred, &bad);
  if (r != INFER_OK) return unflatten_error(r, d, self->sizes[d], sizes, nsizes, bad);
  int64_t shape[WEFT_MAX_DIMS];
  int64_t n = 0;
  for (int64_t i = 0; i < d; i++) shape[n++] = self->sizes[i];
  for (int64_t i = 0; i < nsizes; i++) shape[n++] = inferred[i];
  for (int64_t i = d + 1; i < self->ndim; i++) shape[n++] = self->sizes[i];
  /* Splitting one dim is always expressible as a view. */
  return view_inferred(self, shape, n);
}

/* ---- kernels ---- */

static weft_tensor* as_strided_kernel(const weft_tensor* self, const int64_t* size, int64_t n,
                                      const int64_t* stride, int64_t nstride, int64_t offset) {
  if (n != nstride)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "as_strided: mismatch in length of strides and shape (%lld vs %lld)",
                            (long long)nstride, (long long)n);
  return as_strided_impl(self, size, stride, n, offset == INT64_MIN ? weft_tensor_storage_offset(self) : offset);
}

/* The public C function whose signature differs from its op's. */
weft_tensor* weft_as_strided(const weft_tensor* self, const int64_t* sizes, const int64_t* strides, int64_t ndim,
                             int64_t storage_offset) {
  if (storage_offset == INT64_MIN) /* not None: an invalid offset, which the kernel reports */
    storage_offset = -1;
  return weft_op_as_strided(self, sizes, ndim, strides, ndim, storage_offset);
}

weft_status weft__view_register(void) {
  /* metadata only: one kernel serves every backend */
  WEFT_KERNEL(op_as_strided, COMPOSITE_EXPLICIT_AUTOGRAD, as_strided_kernel);
  WEFT_KERNEL(view, COMPOSITE_EXPLICIT_AUTOGRAD, view_impl);
  WEFT_KERNEL(reshape, COMPOSITE_IMPLICIT_AUTOGRAD, reshape_impl);
  WEFT_KERNEL(flatten, COMPOSITE_IMPLICIT_AUTOGRAD, flatten_impl);
  WEFT_KERNEL(unflatten, COMPOSITE_IMPLICIT_AUTOGRAD, unflatten_impl);
  return WEFT_OK;
}
