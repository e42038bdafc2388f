/* The blocked, threaded 2-D transpose driver (src/ops/cpu/transpose.c) over
 * the transpose kernels of src/kernels: the driver tier between kernels and
 * operators (it cuts blocks and hands them to weft_parallel_for). */
#ifndef WEFT_OPS_CPU_TRANSPOSE_H
#define WEFT_OPS_CPU_TRANSPOSE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "weft/error.h"

/* Blocked 2-D transpose of elem_size-byte elements, parallel over blocks
 * with weft_parallel_for: out[j][i] = in[i][j], i < height, j < width. */
weft_status weft__transpose_2d(const weft_kernels* k, size_t elem_size, const void* in, void* out,
                               size_t in_stride, size_t out_stride, size_t width, size_t height);
/* The same for `batch` matrices, image b at in + b * in_batch_stride and
 * out + b * out_batch_stride (bytes): one parallel_for over the blocks of
 * all images. */
weft_status weft__transpose_2d_batched(const weft_kernels* k, size_t elem_size, const void* in, void* out,
                                       size_t in_stride, size_t out_stride, size_t width, size_t height,
                                       size_t batch, ptrdiff_t in_batch_stride, ptrdiff_t out_batch_stride);
/* The parallel tasks weft__transpose_2d_batched runs: the block count (the
 * parallel_for range) and its grain in blocks (for explain()). */
int64_t weft__transpose_2d_blocks(size_t elem_size, size_t width, size_t height, size_t batch, int64_t* grain);

#endif
