/* What src/ops/reduce.c lends the other reduction files. */
#ifndef WEFT_OPS_REDUCE_INTERNAL_H
#define WEFT_OPS_REDUCE_INTERNAL_H

#include "ops/ops.h"

/* max.dim / min.dim: argmax's (argmin's) one-pass reduction along dim with
 * its values kept: {values (self's dtype), indices (int64)}, ties to the
 * first index, NaN wins (its first index). The out tensors, when given, are
 * checked (dtype), resized and returned (new references). */
weft_tensor2 weft__reduce_minmax_dim(bool is_max, const weft_tensor* self, int64_t dim, bool keepdim,
                                     weft_tensor* values_out, weft_tensor* indices_out);

#endif
