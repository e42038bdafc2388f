/* The packed, cache-blocked GEMM driver (src/ops/cpu/gemm.c) over the GEMM
 * micro-kernels of src/kernels: packing, blocking and threading. */
#ifndef WEFT_OPS_CPU_GEMM_H
#define WEFT_OPS_CPU_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "weft/dtype.h"
#include "weft/error.h"

/* One operand: element (i, j) at p[i * rs + j * cs] (strides in elements,
 * any sign or 0: the packers read through them). */
typedef struct {
  const void* p;
  ptrdiff_t rs, cs;
} weft_gemm_operand;

/* C[m x n] = alpha * A[m x k] B[k x n] + (accumulate ? C : 0), for dtype
 * FLOAT32 or FLOAT64, with the micro-kernels of table kt. C needs one unit
 * stride (row-major, or column-major: then C^T = B^T A^T is computed); A and
 * B any strides. k == 0 zeroes C (unless accumulate). Parallel over output
 * tiles with weft_parallel_for; inline when called from inside a chunk. */
weft_status weft__gemm(const weft_kernels* kt, weft_dtype dtype, int64_t m, int64_t n, int64_t k, double alpha,
                       weft_gemm_operand a, weft_gemm_operand b, bool accumulate, void* c, ptrdiff_t c_rs,
                       ptrdiff_t c_cs);

/* `batch` independent products, operand i at its pointer + i * *_bs
 * elements: small products run in parallel over the batch, large ones one
 * after the other (each parallel inside). */
weft_status weft__gemm_batched(const weft_kernels* kt, weft_dtype dtype, int64_t batch, int64_t m, int64_t n,
                               int64_t k, double alpha, weft_gemm_operand a, ptrdiff_t a_bs, weft_gemm_operand b,
                               ptrdiff_t b_bs, bool accumulate, void* c, ptrdiff_t c_rs, ptrdiff_t c_cs,
                               ptrdiff_t c_bs);

/* B (k x n, any strides) packed once for weft__gemm_packed: every K block's
 * NR-column panels, in the order the loop nest reads them (a weight packed
 * once and kept, XNNPACK's packing per operator). */
size_t weft__gemm_packed_b_bytes(weft_dtype dtype, int64_t k, int64_t n);
weft_status weft__gemm_pack_b(weft_dtype dtype, int64_t k, int64_t n, weft_gemm_operand b, void* dst);
/* weft__gemm with B from weft__gemm_pack_b, C row-major (c_rs, 1); m, n,
 * k > 0, FLOAT32 or FLOAT64 (products the matrix-vector driver would take
 * run here too). */
weft_status weft__gemm_packed(const weft_kernels* kt, weft_dtype dtype, int64_t m, int64_t n, int64_t k,
                              double alpha, weft_gemm_operand a, const void* bpacked, bool accumulate, void* c,
                              ptrdiff_t c_rs);

/* The tile and block sizes of dtype's path (tests walk every remainder). */
void weft__gemm_tile(weft_dtype dtype, int* mr, int* nr, int* kc);

#endif
