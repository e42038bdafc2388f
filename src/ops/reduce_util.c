/* Shared meta helpers of the reductions (reduce_util.h). */
#include "ops/reduce_util.h"

#include "ops/ops.h"

weft_status weft__reduce_dim_mask(const char* name, const weft_tensor* self, const int64_t* dims, int64_t n,
                                  uint32_t* mask) {
  int nd = self->ndim;
  *mask = 0;
  if (n == 0) { /* every dim */
    *mask = nd ? (uint32_t)((1ull << nd) - 1) : 0;
    return WEFT_OK;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t d;
    if (!weft__wrap_dim(name, dims[i], nd, &d)) return weft_last_status();
    if (*mask & (1u << d)) {
      return weft__error(WEFT_INVALID_ARGUMENT, "%s: dim %lld appears multiple times in the list of dims", name,
                         (long long)d);
    }
    *mask |= 1u << d;
  }
  if (nd == 0) *mask = 0;
  return WEFT_OK;
}

int weft__reduce_shape(const weft_tensor* self, uint32_t mask, bool keepdim, int64_t* sizes, int64_t* count) {
  int n = 0;
  *count = 1;
  for (int d = 0; d < self->ndim; d++) {
    if (mask >> d & 1) {
      *count *= self->sizes[d];
      if (keepdim) sizes[n++] = 1;
    } else {
      sizes[n++] = self->sizes[d];
    }
  }
  return n;
}

weft_tensor* weft__reduce_result(const char* name, const weft_tensor* self, uint32_t mask, bool keepdim,
                                 weft_dtype dtype, weft_tensor* out) {
  int64_t sizes[WEFT_MAX_DIMS] = {0}, strides[WEFT_MAX_DIMS] = {0}, count;
  int n = weft__reduce_shape(self, mask, keepdim, sizes, &count);
  weft__strides_for_format(sizes, n, WEFT_CONTIGUOUS_FORMAT, strides);
  if (!out) return weft__tensor_alloc(name, sizes, strides, n, dtype, self->device);
  bool same = out->ndim == n;
  for (int d = 0; same && d < n; d++) same = out->sizes[d] == sizes[d];
  if (!same && weft__tensor_resize_(out, sizes, strides, n, name) != WEFT_OK) return NULL;
  return weft_tensor_retain(out);
}

weft_tensor* weft__reduce_view(const weft_tensor* self, uint32_t mask, bool keepdim, const weft_tensor* res) {
  int64_t strides[WEFT_MAX_DIMS];
  int k = 0;
  for (int d = 0; d < self->ndim; d++) {
    if (mask >> d & 1) {
      strides[d] = 0;
      if (keepdim) k++;
    } else {
      strides[d] = res->strides[k++];
    }
  }
  return weft__tensor_new(res->storage, self->sizes, strides, self->ndim, res->storage_offset, res->dtype);
}
