/* The reference copy, and clone/contiguous on top of it.
 *
 * weft_copy_reference walks both tensors one element at a time with an
 * index counter: slow, obviously right, and kept as the oracle that the
 * TensorIterator copy (weft_copy_) is tested against. */
#include <string.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "iter/copy_iter.h"
#include "ops/impls.h"

static void strided_convert(const weft_tensor* dst, const int64_t* src_strides, const char* src_base,
                            weft_dtype src_dtype) {
  char* dp = weft_tensor_data_ptr(dst);
  const char* sp = src_base;
  int64_t desize = (int64_t)weft_dtype_size(dst->dtype), sesize = (int64_t)weft_dtype_size(src_dtype);
  int64_t idx[WEFT_MAX_DIMS] = {0};
  bool same = dst->dtype == src_dtype;
  for (int64_t n = 0; n < dst->numel; n++) {
    if (same) memcpy(dp, sp, (size_t)desize);
    else weft__store(dp, dst->dtype, weft__load(sp, src_dtype));
    for (int64_t d = dst->ndim - 1; d >= 0; d--) {
      if (++idx[d] < dst->sizes[d]) {
        dp += dst->strides[d] * desize;
        sp += src_strides[d] * sesize;
        break;
      }
      dp -= dst->strides[d] * desize * (dst->sizes[d] - 1);
      sp -= src_strides[d] * sesize * (dst->sizes[d] - 1);
      idx[d] = 0;
    }
  }
}

static bool has_data(const weft_tensor* t) { return t->numel > 0 && t->storage->data; }

weft_status weft_copy_reference(weft_tensor* dst, const weft_tensor* src) {
  if (dst->dtype != src->dtype)
    return weft__error(WEFT_TYPE_ERROR, "copy_reference: dtypes differ: %s and %s",
                       weft_dtype_name(dst->dtype), weft_dtype_name(src->dtype));
  if (dst->ndim != src->ndim || memcmp(dst->sizes, src->sizes, (size_t)dst->ndim * sizeof(int64_t)) != 0)
    return weft__error(WEFT_SHAPE_ERROR, "copy_reference: shapes differ: %s and %s",
                       WEFT__LIST(dst->sizes, dst->ndim), WEFT__LIST(src->sizes, src->ndim));
  if (has_data(dst) && has_data(src)) strided_convert(dst, src->strides, weft_tensor_data_ptr(src), src->dtype);
  return WEFT_OK;
}

/* The fast path: TensorIterator + SIMD kernels (src/iter/copy_iter.c). */
weft_status weft__copy_(weft_tensor* self, const weft_tensor* src) {
  if (self->device != src->device && self->device != WEFT_DEVICE_META && src->device != WEFT_DEVICE_META)
    return weft__error(WEFT_INVALID_ARGUMENT, "copy_: cannot copy from a %s tensor into a %s tensor",
                       weft_device_name(src->device), weft_device_name(self->device));
  return weft__copy_iter(self, src);
}

weft_tensor* weft__clone(const weft_tensor* self, weft_memory_format f) {
  weft_tensor* out = weft_empty_like(self, self->dtype, f);
  if (!out) return NULL;
  if (weft_copy_(out, self) != WEFT_OK) {
    weft_tensor_release(out);
    return NULL;
  }
  return out;
}

weft_tensor* weft__contiguous(const weft_tensor* self, weft_memory_format f) {
  /* PRESERVE asks the default flag, so an already contiguous tensor passes */
  if (weft_tensor_is_contiguous(self, f)) return weft_tensor_retain((weft_tensor*)self);
  if (f == WEFT_PRESERVE_FORMAT)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "contiguous: preserve memory format is unsupported by the contiguous operator");
  return weft_clone(self, f);
}

weft_tensor* weft__to_dtype(const weft_tensor* self, weft_dtype dtype, bool copy) {
  if (!weft_dtype_is_valid((int)dtype))
    return weft__error_null(WEFT_TYPE_ERROR, "to: invalid dtype %d", (int)dtype);
  if (dtype == self->dtype && !copy) return weft_tensor_retain((weft_tensor*)self);
  weft_tensor* out = weft_empty_like(self, dtype, WEFT_PRESERVE_FORMAT);
  if (!out) return NULL;
  if (weft_copy_(out, self) != WEFT_OK) {
    weft_tensor_release(out);
    return NULL;
  }
  return out;
}
