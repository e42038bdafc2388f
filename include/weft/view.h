/* Views: new tensor handles sharing self's storage, never copying (except
 * reshape, which copies only when no view can express the result).
 * Negative dims wrap. Errors follow PyTorch's wording. */
#ifndef WEFT_VIEW_H
#define WEFT_VIEW_H

#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bounds-checked against the storage; negative strides are refused. */
weft_tensor* weft_as_strided(const weft_tensor* self, const int64_t* sizes, const int64_t* strides,
                             int64_t ndim, int64_t storage_offset);
/* One size may be -1 (inferred). */
weft_tensor* weft_view(const weft_tensor* self, const int64_t* sizes, int64_t ndim);
weft_tensor* weft_reshape(const weft_tensor* self, const int64_t* sizes, int64_t ndim);
weft_tensor* weft_permute(const weft_tensor* self, const int64_t* dims, int64_t ndim);
weft_tensor* weft_transpose(const weft_tensor* self, int64_t dim0, int64_t dim1);
weft_tensor* weft_t(const weft_tensor* self); /* <= 2-D only */
/* -1 keeps a size; new leading dims allowed. */
weft_tensor* weft_expand(const weft_tensor* self, const int64_t* sizes, int64_t ndim);
weft_tensor* weft_squeeze(const weft_tensor* self);                /* all size-1 dims */
weft_tensor* weft_squeeze_dim(const weft_tensor* self, int64_t dim);
weft_tensor* weft_unsqueeze(const weft_tensor* self, int64_t dim);
weft_tensor* weft_narrow(const weft_tensor* self, int64_t dim, int64_t start, int64_t length);
/* PyTorch's slice: start/end clamped; step > 0. Use INT64_MAX for "to the end". */
weft_tensor* weft_slice(const weft_tensor* self, int64_t dim, int64_t start, int64_t end, int64_t step);
weft_tensor* weft_select(const weft_tensor* self, int64_t dim, int64_t index);
weft_tensor* weft_flatten(const weft_tensor* self, int64_t start_dim, int64_t end_dim);
weft_tensor* weft_unflatten(const weft_tensor* self, int64_t dim, const int64_t* sizes, int64_t nsizes);
weft_tensor* weft_movedim(const weft_tensor* self, const int64_t* src, const int64_t* dst, int64_t n);

#ifdef __cplusplus
}
#endif
#endif
