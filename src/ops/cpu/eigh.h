/* The symmetric eigensolver behind torch.linalg.eigh / eigvalsh
 * (src/ops/cpu/eigh.c): Householder tridiagonalization, then implicit-shift
 * QL with the eigenvectors accumulated, in float64 for both dtypes. The op
 * (src/ops/linalg_eigh.c) does the checks, batching, dtypes and layout. */
#ifndef WEFT_OPS_CPU_EIGH_H
#define WEFT_OPS_CPU_EIGH_H

#include <stdint.h>

#include "weft/error.h"

/* The eigenvalues of the symmetric matrix a (n x n, row-major, only its lower
 * triangle read; overwritten) into w, ascending as LAPACK's syevd, and,
 * when vt is not NULL, orthonormal eigenvectors as the ROWS of vt (n x n,
 * row-major: row j belongs to w[j]). *info is 0, or (as syevd's) the number
 * of off-diagonal elements of the tridiagonal form that did not converge;
 * a non-finite input does not converge. Errors: out of memory only. */
weft_status weft__eigh(int64_t n, double* a, double* w, double* vt, int64_t* info);

#endif
