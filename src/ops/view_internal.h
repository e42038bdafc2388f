/* Helpers shared by the view files (view.c, view_dims.c). Not installed. */
#ifndef WEFT_OPS_VIEW_INTERNAL_H
#define WEFT_OPS_VIEW_INTERNAL_H

#include <inttypes.h>
#include <stdio.h>

#include "core/internal.h"

/* A new handle on self's storage with the given layout. */
static inline weft_tensor* weft__view_of(const weft_tensor* self, const int64_t* sizes,
                                         const int64_t* strides, int64_t ndim, int64_t offset) {
  return weft__tensor_new(self->storage, sizes, strides, ndim, offset, self->dtype);
}

/* Same layout, new handle: PyTorch's alias(). */
static inline weft_tensor* weft__alias(const weft_tensor* self) {
  return weft__view_of(self, self->sizes, self->strides, self->ndim, self->storage_offset);
}

/* False + error when a sizes argument has too many dims (or a negative count). */
bool weft__check_view_ndim(const char* op, const int64_t* sizes, int64_t ndim);

#endif
