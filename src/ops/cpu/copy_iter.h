/* The copy driver: copy_ on the TensorIterator and the kernels. Not
 * installed; copy_'s kernel (src/ops/copy.c) calls it. */
#ifndef WEFT_OPS_CPU_COPY_ITER_H
#define WEFT_OPS_CPU_COPY_ITER_H

#include "weft/iter.h"

/* dst[...] = src[...]: src broadcast to dst's shape, dtypes converted with
 * PyTorch's cast semantics (core/scalar.h), overlap errors as PyTorch's. */
weft_status weft__copy_iter(weft_tensor* dst, const weft_tensor* src);
/* The iterator copy_ builds (for explain and tests); destroy it after. */
weft_status weft__copy_iter_build(weft_tensor* dst, const weft_tensor* src, weft_iter* it);

/* The plan copy_ would run, as weft_iter_explain_json renders it (chunks
 * counted the way copy_ will cut them). malloc'd; NULL + error on failure. */
char* weft__copy_explain_json(weft_tensor* dst, const weft_tensor* src);

#endif
