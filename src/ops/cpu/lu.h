/* Dense factorizations of one square row-major matrix (src/ops/cpu/lu.c):
 * LU with partial pivoting and Cholesky, right-looking and blocked on the
 * packed GEMM (src/ops/cpu/gemm.c) above a size where the trailing update
 * pays for packing; below it the panel code alone is the unblocked
 * algorithm. FLOAT32 or FLOAT64; the ops (src/ops/linalg_decomp.c) do the
 * checks, batching and layout. */
#ifndef WEFT_OPS_CPU_LU_H
#define WEFT_OPS_CPU_LU_H

#include <stdint.h>

#include "weft/dtype.h"
#include "weft/error.h"

/* a (n x n, row-major) becomes L (unit, strictly below the diagonal) and U
 * in place; rows i and piv[i] were swapped at step i (0-based, LAPACK's
 * order). *info is 0, or 1 + the index of the first exactly-zero pivot
 * (as getrf's; the factorization still completes). */
weft_status weft__lu_factor(weft_dtype t, int64_t n, void* a, int64_t* piv, int64_t* info);

/* b (n x k, row-major) becomes A^-1 b, from weft__lu_factor's a and piv. */
void weft__lu_solve(weft_dtype t, int64_t n, int64_t k, const void* lu, const int64_t* piv, void* b);

/* b (n x k, row-major) becomes A^-T b (A = the factored matrix): 1.13
 * factors A^T for a contiguous A and solves with its adjoint. */
void weft__lu_solve_t(weft_dtype t, int64_t n, int64_t k, const void* lu, const int64_t* piv, void* b);

/* The lower Cholesky factor of a (n x n, row-major, lower triangle read) in
 * place, the strict upper triangle zeroed. *info is 0, or the order of the
 * first leading minor that is not positive-definite (potrf's). */
weft_status weft__cholesky(weft_dtype t, int64_t n, void* a, int64_t* info);

#endif
