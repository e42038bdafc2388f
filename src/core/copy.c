/* The reference copy (core: no dispatch, no iterator).
 *
 * weft_copy_reference walks both tensors one element at a time with an
 * index counter: slow, obviously right, and kept as the oracle that the
 * TensorIterator copy (weft_copy_) is tested against. */
#include <string.h>

#include "core/internal.h"
#include "core/scalar.h"

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
      /* (size - 1) first: a size-1 dim may have any stride (INT64_MAX * 2 overflowed) */
      dp -= dst->strides[d] * (dst->sizes[d] - 1) * desize;
      sp -= src_strides[d] * (dst->sizes[d] - 1) * sesize;
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
