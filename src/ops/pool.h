/* Pooling's entry point below the op table (src/ops/pool.c): max pooling
 * that also returns the indices (flat h * W + w into each input plane, int64,
 * in the output's layout), for max_pool2d_with_indices and the tests. */
#ifndef WEFT_OPS_POOL_H
#define WEFT_OPS_POOL_H

#include "weft/tensor.h"

/* The values (a new reference) and *indices (a new reference), or NULL. */
weft_tensor* weft__max_pool2d_with_indices(const weft_tensor* self, const int64_t* kernel_size, int64_t kn,
                                           const int64_t* stride, int64_t sn, const int64_t* padding, int64_t pn,
                                           const int64_t* dilation, int64_t dn, bool ceil_mode, weft_tensor** indices);

#endif
