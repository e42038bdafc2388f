/* The shape side of a reduction's meta step, shared by the reduction op
 * files (reduce.c, norm.c): PyTorch's make_dim_mask, resize_reduction and
 * review_reduce_result. */
#ifndef WEFT_OPS_REDUCE_UTIL_H
#define WEFT_OPS_REDUCE_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/internal.h"

/* The dims to reduce as a bit mask of self's dims: n == 0 means every dim;
 * dims wrapped, out of range and repeated ones refused (errors name `name`). */
weft_status weft__reduce_dim_mask(const char* name, const weft_tensor* self, const int64_t* dims, int64_t n,
                                  uint32_t* mask);

/* The reduced shape of self (size 1 on the reduced dims with keepdim, else
 * dropped) into sizes; returns its rank; *count = input elements per output. */
int weft__reduce_shape(const weft_tensor* self, uint32_t mask, bool keepdim, int64_t* sizes, int64_t* count);

/* The result: out resized to the reduced shape (its strides kept when the
 * shape already fits) and retained, or a new contiguous tensor of dtype.
 * NULL with the error set. */
weft_tensor* weft__reduce_result(const char* name, const weft_tensor* self, uint32_t mask, bool keepdim,
                                 weft_dtype dtype, weft_tensor* out);

/* res seen with self's shape, stride 0 on the reduced dims (the iterator's
 * output operand). */
weft_tensor* weft__reduce_view(const weft_tensor* self, uint32_t mask, bool keepdim, const weft_tensor* res);

#endif
