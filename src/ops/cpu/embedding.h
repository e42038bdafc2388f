/* The embedding driver (src/ops/cpu/embedding.c): the forward's row gather
 * and the backward's deterministic row accumulation, threaded over rows, and
 * embedding_renorm_'s row scaling. Indices are int32 or int64 and already
 * checked to lie in [0, number of weight rows). */
#ifndef WEFT_OPS_CPU_EMBEDDING_H
#define WEFT_OPS_CPU_EMBEDDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "weft/dtype.h"
#include "weft/error.h"

/* out row i (row_bytes, rows packed) = the weight row idx[i] (rows w_stride
 * bytes apart, each contiguous): one memcpy per row. */
weft_status weft__embedding_gather(int64_t n, const void* idx, weft_dtype idx_dtype, const char* weight,
                                   int64_t w_stride, size_t row_bytes, char* out);

/* gw[k] (nw contiguous rows of d elements of dt) = the sum, in position
 * order, of g[i] * scale over the positions i with idx[i] == k, k !=
 * padding_idx; scale 1, or 1 / (k's count) when scale_by_freq. Each row is
 * summed by one task in position order, so the bits do not depend on the
 * thread count. */
weft_status weft__embedding_backward(const weft_kernels* kt, int64_t n, const void* idx, weft_dtype idx_dtype,
                                     int64_t nw, int64_t d, int64_t padding_idx, bool scale_by_freq, weft_dtype dt,
                                     const void* g, void* gw);

/* embedding_renorm_: each distinct row idx[i] of w (rows w_stride elements
 * apart, elements col_stride apart, d of them, dtype dt) whose norm_type-norm
 * exceeds max_norm is scaled by max_norm / (norm + 1e-7). */
weft_status weft__embedding_renorm(int64_t n, const void* idx, weft_dtype idx_dtype, char* w, int64_t w_stride,
                                   int64_t col_stride, int64_t d, weft_dtype dt, double max_norm, double norm_type);

/* idx[i] as int64 */
static inline int64_t weft__embedding_index(const void* idx, weft_dtype t, int64_t i) {
  return t == WEFT_INT32 ? ((const int32_t*)idx)[i] : ((const int64_t*)idx)[i];
}

#endif
