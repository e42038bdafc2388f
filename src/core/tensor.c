/* Tensor metadata and the cached layout flags, computed as TensorImpl's
 * refresh_contiguous() does. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/scalar.h"

/* ---- flags: the one place they are computed ---- */

static bool compute_contiguous(const weft_tensor* t) {
  if (t->numel == 0) return true;
  int64_t expected = 1;
  for (int64_t d = t->ndim - 1; d >= 0; d--) {
    if (t->sizes[d] == 1) continue;
    if (t->strides[d] != expected) return false;
    expected = weft__mul_saturate(expected, t->sizes[d]); /* huge empty shapes overflow */
  }
  return true;
}

/* Dense in the given dim order (innermost first), size-1 dims ignored. */
static bool contiguous_in_order(const weft_tensor* t, const int* order, int n) {
  int64_t expected = 1;
  for (int i = 0; i < n; i++) {
    int64_t d = order[i];
    if (t->sizes[d] == 1) continue;
    if (t->strides[d] != expected) return false;
    expected = weft__mul_saturate(expected, t->sizes[d]); /* huge empty shapes overflow */
  }
  return true;
}

static const int cl2d_order[4] = {1, 3, 2, 0};
static const int cl3d_order[5] = {1, 4, 3, 2, 0};

/* Strides *look like* channels_last (is_channels_last_strides_2d/_3d): used
 * by suggest_memory_format, so ambiguous size-1 cases fall back to NCHW. */
static bool strides_like_channels_last(const weft_tensor* t, const int* order, int n) {
  int64_t min = 0;
  if (t->strides[1] == 0) return false; /* trivial C dimension: default to NCHW */
  for (int i = 0; i < n; i++) {
    int64_t d = order[i];
    if (t->sizes[d] == 0) return false;
    if (t->strides[d] < min) return false;
    /* N111 with identical strides, or N11W sliced on W: ambiguous, say NCHW */
    if (d == 0 && min == t->strides[1]) return false;
    min = t->strides[d];
    /* saturate: an as_strided view may have strides whose products overflow */
    if (t->sizes[d] > 1 && weft__mul_overflow(min, t->sizes[d], &min)) min = INT64_MAX;
  }
  return true;
}

static bool compute_non_overlapping_and_dense(const weft_tensor* t) {
  if (t->ndim == 1) return t->sizes[0] < 2 || t->strides[0] == 1;
  int perm[WEFT_MAX_DIMS];
  for (int i = 0; i < t->ndim; i++) perm[i] = i;
  /* sort by stride, size-0/1 dims last (stable insertion sort, same order as PyTorch's comparator) */
  for (int i = 1; i < t->ndim; i++) {
    int cur = perm[i], j = i;
    while (j > 0) {
      int prev = perm[j - 1];
      bool cur_before_prev;
      if (t->sizes[cur] < 2) cur_before_prev = false;
      else if (t->sizes[prev] < 2) cur_before_prev = true;
      else cur_before_prev = t->strides[cur] < t->strides[prev];
      if (!cur_before_prev) break;
      perm[j] = prev;
      j--;
    }
    perm[j] = cur;
  }
  int64_t required = 1;
  for (int i = 0; i < t->ndim; i++) {
    int64_t size = t->sizes[perm[i]];
    if (size < 2) return true;
    if (t->strides[perm[i]] != required) return false;
    required *= size;
  }
  return true;
}

void weft__tensor_refresh(weft_tensor* t) {
  /* a zero size wins even when the sizes before it would overflow */
  int64_t numel = 1;
  for (int i = 0; i < t->ndim; i++) {
    if (t->sizes[i] == 0) {
      numel = 0;
      break;
    }
  }
  for (int i = 0; numel && i < t->ndim; i++) numel *= t->sizes[i]; /* callers checked overflow */
  t->numel = numel;
  t->is_contiguous = compute_contiguous(t);
  t->is_channels_last_contiguous = false;
  t->is_channels_last_3d_contiguous = false;
  t->is_channels_last = false;
  t->is_channels_last_3d = false;
  if (t->ndim == 4) {
    t->is_channels_last_contiguous = contiguous_in_order(t, cl2d_order, 4);
    t->is_channels_last = strides_like_channels_last(t, cl2d_order, 4);
  } else if (t->ndim == 5) {
    t->is_channels_last_3d_contiguous = contiguous_in_order(t, cl3d_order, 5);
    t->is_channels_last_3d = strides_like_channels_last(t, cl3d_order, 5);
  }
  t->is_non_overlapping_and_dense = t->is_contiguous || t->is_channels_last_contiguous ||
                                    t->is_channels_last_3d_contiguous ||
                                    compute_non_overlapping_and_dense(t);
}

/* ---- construction and lifetime ---- */

weft_tensor* weft__tensor_new(weft_storage* s, const int64_t* sizes, const int64_t* strides,
                              int64_t ndim, int64_t offset, weft_dtype dtype) {
  /* metadata through the allocator too, so an injected failure reaches it */
  const weft_allocator* a = weft_get_allocator();
  weft_tensor* t = a->alloc(a->ctx, sizeof *t);
  if (!t) return weft__error_null(WEFT_OUT_OF_MEMORY, "out of memory: tried to allocate %zu bytes", sizeof *t);
  t->allocator = a;
  atomic_init(&t->refcount, 1);
  t->ndim = (int32_t)ndim;
  t->dtype = dtype;
  t->device = s->device;
  t->storage = weft_storage_retain(s);
  t->storage_offset = offset;
  t->requires_grad = false;
  t->autograd_meta = NULL;
  if (ndim > 0) {
    memcpy(t->sizes, sizes, (size_t)ndim * sizeof(int64_t));
    memcpy(t->strides, strides, (size_t)ndim * sizeof(int64_t));
  }
  weft__tensor_refresh(t);
  weft__stats_tensor(1);
  return t;
}

weft_tensor* weft_tensor_retain(weft_tensor* t) {
  if (t) atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed);
  return t;
}

void weft_tensor_release(weft_tensor* t) {
  if (!t) return;
  if (atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) != 1) return;
  if (t->autograd_meta) atomic_load(&weft__autograd_meta_free)(t->autograd_meta);
  weft_storage_release(t->storage);
  weft__stats_tensor(-1);
  t->allocator->free(t->allocator->ctx, t, sizeof *t);
}

void weft_tensor2_release(weft_tensor2 r) {
  weft_tensor_release(r.t[0]);
  weft_tensor_release(r.t[1]);
}

void weft_tensor3_release(weft_tensor3 r) {
  for (int i = 0; i < 3; i++) weft_tensor_release(r.t[i]);
}

void weft_tensor4_release(weft_tensor4 r) {
  for (int i = 0; i < 4; i++) weft_tensor_release(r.t[i]);
}

void (*_Atomic weft__autograd_meta_free)(void* meta);

uint32_t weft_tensor_version(const weft_tensor* t) { return atomic_load(&t->storage->version); }
void weft_tensor_bump_version(weft_tensor* t) { atomic_fetch_add(&t->storage->version, 1); }
void weft_tensor_list_release(weft_tensor_list r) {
  if (!r.t) return;
  for (int64_t i = 0; i < r.n; i++) weft_tensor_release(r.t[i]);
  free(r.t);
}

weft_tensor_list weft_tensor_list_new(int64_t n) {
  /* at least one slot, so an empty list is told apart from an error by t */
  weft_tensor_list r = {calloc(n > 0 ? (size_t)n : 1, sizeof(weft_tensor*)), n};
  if (!r.t) {
    r.n = 0;
    weft__error(WEFT_OUT_OF_MEMORY, "tensor list: out of memory");
  }
  return r;
}

int32_t weft_tensor_refcount(const weft_tensor* t) { return atomic_load(&((weft_tensor*)t)->refcount); }

/* ---- accessors ---- */

int64_t weft_tensor_dim(const weft_tensor* t) { return t->ndim; }
const int64_t* weft_tensor_sizes(const weft_tensor* t) { return t->sizes; }
const int64_t* weft_tensor_strides(const weft_tensor* t) { return t->strides; }
int64_t weft_tensor_storage_offset(const weft_tensor* t) { return t->storage_offset; }
int64_t weft_tensor_numel(const weft_tensor* t) { return t->numel; }
weft_dtype weft_tensor_dtype(const weft_tensor* t) { return t->dtype; }
weft_device weft_tensor_device(const weft_tensor* t) { return t->device; }
size_t weft_tensor_element_size(const weft_tensor* t) { return weft_dtype_size(t->dtype); }
weft_storage* weft_tensor_storage(const weft_tensor* t) { return t->storage; }

void* weft_tensor_data_ptr(const weft_tensor* t) {
  if (!t->storage->data) return NULL;
  return (char*)t->storage->data + t->storage_offset * (int64_t)weft_dtype_size(t->dtype);
}

bool weft_tensor_is_contiguous(const weft_tensor* t, weft_memory_format f) {
  switch (f) {
    case WEFT_CONTIGUOUS_FORMAT: return t->is_contiguous;
    case WEFT_CHANNELS_LAST: return t->is_channels_last_contiguous;
    case WEFT_CHANNELS_LAST_3D: return t->is_channels_last_3d_contiguous;
    default: return t->is_contiguous; /* PRESERVE falls back to the default, as in TensorImpl */
  }
}

bool weft_tensor_is_non_overlapping_and_dense(const weft_tensor* t) {
  return t->is_non_overlapping_and_dense;
}

weft_memory_format weft_tensor_suggest_memory_format(const weft_tensor* t) {
  if (t->is_channels_last) return WEFT_CHANNELS_LAST;
  if (t->is_channels_last_3d) return WEFT_CHANNELS_LAST_3D;
  return WEFT_CONTIGUOUS_FORMAT;
}

/* ---- layout arithmetic ---- */

const char* weft__sizes_str(const int64_t* sizes, int64_t ndim, char* buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int64_t d = 0; d < ndim && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? ", " : "", (long long)sizes[d]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
  return buf;
}

bool weft__wrap_dim(const char* op, int64_t dim, int64_t ndim, int64_t* out) {
  int64_t n = ndim > 0 ? ndim : 1; /* a scalar accepts 0 and -1, as maybe_wrap_dim */
  if (dim < -n || dim > n - 1) {
    weft__error(WEFT_INDEX_ERROR,
                "%s%sDimension out of range (expected to be in range of [%" PRId64 ", %" PRId64
                "], but got %" PRId64 ")",
                op ? op : "", op ? ": " : "", -n, n - 1, dim);
    return false;
  }
  *out = dim < 0 ? dim + n : dim;
  return true;
}


weft_status weft_check_shape(const char* op, const int64_t* sizes, int64_t ndim) {
  if (ndim < 0 || ndim > WEFT_MAX_DIMS)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: number of dimensions %lld must be in [0, %d]", op,
                       (long long)ndim, WEFT_MAX_DIMS);
  for (int64_t i = 0; i < ndim; i++) {
    if (sizes[i] < 0)
      return weft__error(WEFT_INVALID_ARGUMENT,
                         "%s: Trying to create tensor with negative dimension %lld: %s", op,
                         (long long)sizes[i], WEFT__LIST(sizes, ndim));
  }
  int64_t numel = 1;
  for (int64_t i = 0; i < ndim; i++) {
    if (sizes[i] == 0) return WEFT_OK;
  }
  for (int64_t i = 0; i < ndim; i++) {
    if (weft__mul_overflow(numel, sizes[i], &numel))
      return weft__error(WEFT_OVERFLOW, "%s: the number of elements of a tensor of size %s overflows int64",
                         op, WEFT__LIST(sizes, ndim));
  }
  return WEFT_OK;
}

bool weft__strides_for_format(const int64_t* sizes, int64_t ndim, weft_memory_format f,
                              int64_t* strides) {
  bool overflow = false;
  if (f == WEFT_CHANNELS_LAST && ndim == 4) {
    /* as get_channels_last_strides_2d: no max(size, 1) here, unlike NCHW */
    strides[1] = 1;
    strides[3] = sizes[1];
    overflow |= weft__mul_overflow(strides[3], sizes[3], &strides[2]);
    overflow |= weft__mul_overflow(strides[2], sizes[2], &strides[0]);
    return !overflow;
  }
  if (f == WEFT_CHANNELS_LAST_3D && ndim == 5) {
    strides[1] = 1;
    strides[4] = sizes[1];
    overflow |= weft__mul_overflow(strides[4], sizes[4], &strides[3]);
    overflow |= weft__mul_overflow(strides[3], sizes[3], &strides[2]);
    overflow |= weft__mul_overflow(strides[2], sizes[2], &strides[0]);
    return !overflow;
  }
  int64_t s = 1;
  for (int64_t d = ndim - 1; d >= 0; d--) {
    strides[d] = s;
    overflow |= weft__mul_overflow(s, sizes[d] > 1 ? sizes[d] : 1, &s);
  }
  return !overflow;
}

int64_t weft__required_bytes(const int64_t* sizes, const int64_t* strides, int64_t ndim,
                             int64_t offset, size_t elem_size, const char* op) {
  int64_t span = 1;
  for (int64_t i = 0; i < ndim; i++) {
    if (sizes[i] == 0) return 0;
  }
  for (int64_t i = 0; i < ndim; i++) {
    int64_t step;
    if (weft__mul_overflow(strides[i], sizes[i] - 1, &step) || weft__add_overflow(span, step, &span))
      goto overflow;
  }
  int64_t elems, bytes;
  if (weft__add_overflow(span, offset, &elems) || weft__mul_overflow(elems, (int64_t)elem_size, &bytes))
    goto overflow;
  return bytes;
overflow:
  weft__error(WEFT_OVERFLOW, "%s: storage size required by sizes %s, strides %s overflows int64", op,
              WEFT__LIST(sizes, ndim), WEFT__LIST(strides, ndim));
  return -1;
}

/* ---- allocation (no dispatch) ---- */

weft_status weft__check_dtype_device(const char* op, weft_dtype dtype, weft_device device) {
  if (!weft_dtype_is_valid((int)dtype))
    return weft__error(WEFT_TYPE_ERROR, "%s: invalid dtype %d", op, (int)dtype);
  if ((unsigned)device >= WEFT_DEVICE_COUNT)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: invalid device %d", op, (int)device);
  /* WGSL has 32-bit numbers only (f16 behind an extension): no 64-bit
   * types, and the narrow integers would need byte-wise atomics */
  if (device == WEFT_DEVICE_WEBGPU && dtype != WEFT_FLOAT32 && dtype != WEFT_INT32 && dtype != WEFT_BOOL)
    return weft__error(WEFT_TYPE_ERROR,
                       "%s: a webgpu tensor holds float32, int32 or bool; %s is not available in WGSL "
                       "(convert it on the cpu first, e.g. x.to('%s'))",
                       op, weft_dtype_name(dtype), weft_dtype_is_floating(dtype) ? "float32" : "int32");
  return WEFT_OK;
}

weft_tensor* weft__tensor_alloc(const char* op, const int64_t* sizes, const int64_t* strides, int64_t ndim,
                               weft_dtype dtype, weft_device device) {
  if (weft_check_shape(op, sizes, ndim) || weft__check_dtype_device(op, dtype, device)) return NULL;
  for (int64_t i = 0; i < ndim; i++) {
    if (strides[i] < 0)
      return weft__error_null(WEFT_INVALID_ARGUMENT, "%s: Negative strides are not supported, got strides: %s",
                              op, WEFT__LIST(strides, ndim));
  }
  int64_t bytes = weft__required_bytes(sizes, strides, ndim, 0, weft_dtype_size(dtype), op);
  if (bytes < 0) return NULL;
  weft_storage* s = weft_storage_new(bytes, device);
  if (!s) return NULL;
  weft_tensor* t = weft__tensor_new(s, sizes, strides, ndim, 0, dtype);
  weft_storage_release(s);
  return t;
}

weft_tensor* weft_tensor_from_storage(weft_storage* s, const int64_t* sizes, const int64_t* strides,
                                      int64_t ndim, int64_t offset, weft_dtype dtype) {
  const char* op = "from_storage";
  if (weft_check_shape(op, sizes, ndim) || weft__check_dtype_device(op, dtype, s->device)) return NULL;
  if (offset < 0)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "%s: Tensor: invalid storage offset %lld", op,
                            (long long)offset);
  for (int64_t i = 0; i < ndim; i++) {
    if (strides[i] < 0)
      return weft__error_null(WEFT_INVALID_ARGUMENT, "%s: Negative strides are not supported, got strides: %s",
                              op, WEFT__LIST(strides, ndim));
  }
  int64_t need = weft__required_bytes(sizes, strides, ndim, offset, weft_dtype_size(dtype), op);
  if (need < 0) return NULL;
  if (need > s->nbytes)
    return weft__error_null(WEFT_INDEX_ERROR,
                            "%s: setStorage: sizes %s, strides %s, storage offset %lld, and itemsize %zu "
                            "requiring a storage size of %lld are out of bounds for storage of size %lld",
                            op, WEFT__LIST(sizes, ndim), WEFT__LIST(strides, ndim), (long long)offset,
                            weft_dtype_size(dtype), (long long)need, (long long)s->nbytes);
  return weft__tensor_new(s, sizes, strides, ndim, offset, dtype);
}

/* out= resizing (resize_): new sizes and strides, the storage replaced when it
 * is too small for them. Shared by the iterator and the op front ends. */
weft_status weft__tensor_resize_(weft_tensor* t, const int64_t* sizes, const int64_t* strides,
                                 int64_t ndim, const char* op) {
  int64_t need = weft__required_bytes(sizes, strides, ndim, t->storage_offset,
                                      weft_dtype_size(t->dtype), op);
  if (need < 0) return weft_last_status();
  if (need > weft_storage_nbytes(t->storage)) {
    weft_storage* s = weft_storage_new(need, t->device);
    if (!s) return weft_last_status();
    weft_storage_release(t->storage);
    t->storage = s;
  }
  t->ndim = (int32_t)ndim;
  memcpy(t->sizes, sizes, sizeof(int64_t) * (size_t)ndim);
  memcpy(t->strides, strides, sizeof(int64_t) * (size_t)ndim);
  weft__tensor_refresh(t);
  return WEFT_OK;
}

double weft_tensor_get_double(const weft_tensor* t, int64_t linear_index) {
  const char* base = weft_tensor_data_ptr(t);
  if (!base || linear_index < 0 || linear_index >= t->numel) return NAN;
  int64_t off = 0;
  for (int64_t d = t->ndim - 1; d >= 0; d--) {
    off += (linear_index % t->sizes[d]) * t->strides[d];
    linear_index /= t->sizes[d];
  }
  return weft__value_f64(weft__load(base + off * (int64_t)weft_dtype_size(t->dtype), t->dtype));
}

/* ---- memory overlap ---- */

bool weft__has_internal_overlap(const weft_tensor* t) {
  if (t->is_non_overlapping_and_dense) return false;
  for (int i = 0; i < t->ndim; i++)
    if (t->strides[i] == 0 && t->sizes[i] > 1) return true;
  return false; /* PyTorch: "too hard" to tell, so allowed */
}

weft__overlap weft__mem_overlap(const weft_tensor* a, const weft_tensor* b) {
  if (a == b) return WEFT__OVERLAP_FULL;
  if (a->numel == 0 || b->numel == 0) return WEFT__OVERLAP_NO;
  if (!a->is_non_overlapping_and_dense || !b->is_non_overlapping_and_dense) return WEFT__OVERLAP_TOO_HARD;
  if (a->storage != b->storage) return WEFT__OVERLAP_NO;
  int64_t es_a = (int64_t)weft_dtype_size(a->dtype), es_b = (int64_t)weft_dtype_size(b->dtype);
  int64_t a_begin = a->storage_offset * es_a, a_end = a_begin + a->numel * es_a;
  int64_t b_begin = b->storage_offset * es_b, b_end = b_begin + b->numel * es_b;
  if (a_begin == b_begin && a_end == b_end)
    return a->ndim == b->ndim && memcmp(a->strides, b->strides, sizeof(int64_t) * (size_t)a->ndim) == 0
               ? WEFT__OVERLAP_FULL
               : WEFT__OVERLAP_PARTIAL;
  return a_begin < b_end && b_begin < a_end ? WEFT__OVERLAP_PARTIAL : WEFT__OVERLAP_NO;
}
