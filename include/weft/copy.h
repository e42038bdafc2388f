/* Copies between layouts. */
#ifndef WEFT_COPY_H
#define WEFT_COPY_H

#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* self[...] = src[...], src broadcast to self's shape; dtypes converted with
 * PyTorch's cast semantics. */
weft_status weft_copy_(weft_tensor* self, const weft_tensor* src);
weft_tensor* weft_clone(const weft_tensor* self, weft_memory_format f);
/* Returns self (retained) when already contiguous in f, else clone(f).
 * PRESERVE is refused when a copy would be needed, as in PyTorch. */
weft_tensor* weft_contiguous(const weft_tensor* self, weft_memory_format f);
/* A copy with another dtype (self retained when dtype already matches and copy is false). */
weft_tensor* weft_to_dtype(const weft_tensor* self, weft_dtype dtype, bool copy);

#ifdef __cplusplus
}
#endif
#endif
