/* Shared by the indexing op files (index.c, index_advanced.c). */
#ifndef WEFT_OPS_INDEX_INTERNAL_H
#define WEFT_OPS_INDEX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/tensor.h"

/* The first element of idx (int64 or int32) outside [lo, hi) in C order,
 * if any (a meta or empty idx has none). */
bool weft__index_find_bad_in(const weft_tensor* idx, int64_t lo, int64_t hi, int64_t* bad);

/* index.Tensor and index_put_ over a list of n optional index tensors
 * (src/ops/index_advanced.c). */
weft_tensor* weft__index_tensor(const weft_tensor* self, const weft_tensor* const* indices, int64_t n);
weft_status weft__index_put(weft_tensor* self, const weft_tensor* const* indices, int64_t n, const weft_tensor* values,
                            bool accumulate);

#endif
