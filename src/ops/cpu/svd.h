/* The singular value decomposition of one row-major matrix (src/ops/cpu/svd.c):
 * A = U diag(S) Vh, S descending. FLOAT32 or FLOAT64 in and out, computed
 * in double. The op (src/ops/linalg_svd.c) does the checks, batching,
 * layouts and the non-finite inputs (weft__svd_classify). */
#ifndef WEFT_OPS_CPU_SVD_H
#define WEFT_OPS_CPU_SVD_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/dtype.h"
#include "weft/error.h"

/* 0: every value of the count values of a is finite; 1: an inf, no NaN; 2: a NaN */
int weft__svd_classify(weft_dtype t, int64_t count, const void* a);

/* a is m x n row-major (finite), k = min(m, n) >= 1. s gets the k singular
 * values, descending. When u and vh are given: u gets U column by column
 * (u[j * m + i] = U[i][j], the column-major layout of 1.13's results) with m
 * columns when full, else k; vh gets Vh column-major too, that is V row by
 * row (vh[i * r + j] = V[i][j], r = n when full, else k). With full the
 * columns past k complete orthonormal bases. */
weft_status weft__svd(weft_dtype t, int64_t m, int64_t n, const void* a, void* s, void* u, void* vh, bool full);

/* Least squares through the SVD (src/ops/cpu/lstsq_svd.c; 1.13's drivers
 * 'gelsd' and 'gelss'): X = V diag(1/s_i) U^T B over the singular values
 * s_i > max(rcut * s_max, floor), the others dropped (the minimum-norm
 * solution of the truncated problem). a is m x n column-major (lda m),
 * finite, read only; b is max(m, n) x nrhs (leading dim ldb): X goes to its
 * first n rows, and when m > n rows n..m get numbers whose squares sum to
 * ||B - A X||^2 per column (row n the norm, the others zero: LAPACK leaves
 * the residual's components there, with the same sum). s gets the min(m, n)
 * singular values, descending, *rank the count kept. Computed in double. */
weft_status weft__lstsq_svd(weft_dtype t, int64_t m, int64_t n, int64_t nrhs, const void* a, void* b, int64_t ldb,
                            double rcut, double floor, void* s, int64_t* rank);

#endif
