/* The implementations behind the dispatcher's entry points: the functions
 * of include/weft/{tensor,view,copy}.h, renamed weft__<op>. src/ops/register.c
 * registers them as kernels; the public names are now the dispatching entry
 * points generated from src/ops/ops.def, so calls between ops (clone ->
 * empty_like -> empty, copy_) go through the dispatcher. */
#ifndef WEFT_OPS_IMPLS_H
#define WEFT_OPS_IMPLS_H

#include "weft/weft.h"

weft_tensor* weft__empty(const int64_t* sizes, int64_t ndim, weft_dtype dtype, weft_device device, weft_memory_format f);
weft_tensor* weft__empty_strided(const int64_t* sizes, const int64_t* strides, int64_t ndim, weft_dtype dtype, weft_device device);
weft_tensor* weft__empty_like(const weft_tensor* self, weft_dtype dtype, weft_memory_format f);
weft_status weft__fill_(weft_tensor* self, double value);
weft_tensor* weft__full(const int64_t* sizes, int64_t ndim, double value, weft_dtype dtype, weft_device device);
weft_tensor* weft__arange(double start, double end, double step, weft_dtype dtype, weft_device device);
weft_tensor* weft__rand(const int64_t* sizes, int64_t ndim, weft_dtype dtype, weft_device device);
weft_tensor* weft__randn(const int64_t* sizes, int64_t ndim, weft_dtype dtype, weft_device device);
weft_tensor* weft__as_strided(const weft_tensor* self, const int64_t* sizes, const int64_t* strides, int64_t ndim, int64_t storage_offset);
weft_tensor* weft__view(const weft_tensor* self, const int64_t* sizes, int64_t ndim);
weft_tensor* weft__reshape(const weft_tensor* self, const int64_t* sizes, int64_t ndim);
weft_tensor* weft__permute(const weft_tensor* self, const int64_t* dims, int64_t ndim);
weft_tensor* weft__transpose(const weft_tensor* self, int64_t dim0, int64_t dim1);
weft_tensor* weft__t(const weft_tensor* self);
weft_tensor* weft__expand(const weft_tensor* self, const int64_t* sizes, int64_t ndim);
weft_tensor* weft__squeeze(const weft_tensor* self);
weft_tensor* weft__squeeze_dim(const weft_tensor* self, int64_t dim);
weft_tensor* weft__unsqueeze(const weft_tensor* self, int64_t dim);
weft_tensor* weft__narrow(const weft_tensor* self, int64_t dim, int64_t start, int64_t length);
weft_tensor* weft__slice(const weft_tensor* self, int64_t dim, int64_t start, int64_t end, int64_t step);
weft_tensor* weft__select(const weft_tensor* self, int64_t dim, int64_t index);
weft_tensor* weft__flatten(const weft_tensor* self, int64_t start_dim, int64_t end_dim);
weft_tensor* weft__unflatten(const weft_tensor* self, int64_t dim, const int64_t* sizes, int64_t nsizes);
weft_tensor* weft__movedim(const weft_tensor* self, const int64_t* src, const int64_t* dst, int64_t n);
weft_status weft__copy_(weft_tensor* self, const weft_tensor* src);
weft_tensor* weft__clone(const weft_tensor* self, weft_memory_format f);
weft_tensor* weft__contiguous(const weft_tensor* self, weft_memory_format f);
weft_tensor* weft__to_dtype(const weft_tensor* self, weft_dtype dtype, bool copy);

#endif
