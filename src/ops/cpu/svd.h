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

#endif
