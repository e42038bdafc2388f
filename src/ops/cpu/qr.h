/* Householder QR of one column-major matrix (LAPACK's layout, so the ops can
 * hand out Q and R with the strides PyTorch 1.13's LAPACK-made results
 * have), and the least-squares drivers built on it (src/ops/cpu/qr.c).
 * The factorization is dgeqrf's: reflectors H = I - tau v v^T with v[0] = 1
 * and dlarfg's signs (R's diagonal is -sign(a_jj) * norm), so Q and R are
 * LAPACK's and PyTorch's values, not just some QR. Panels of NB columns are
 * factored column by column; the trailing matrix takes the compact WY form
 * I - V T V^T of the panel as two GEMMs (src/ops/cpu/gemm.c). FLOAT32 or
 * FLOAT64; the ops (src/ops/linalg_qr.c) do the checks, batching, layout. */
#ifndef WEFT_OPS_CPU_QR_H
#define WEFT_OPS_CPU_QR_H

#include <stdint.h>

#include "weft/dtype.h"
#include "weft/error.h"

/* a (m x n, element (i, j) at a[i + j * lda]) becomes R on and above the
 * diagonal and the reflectors' v below it; tau gets min(m, n) entries. */
weft_status weft__qr_factor(weft_dtype t, int64_t m, int64_t n, void* a, int64_t lda, void* tau);

/* q (m x qc, leading dim ldq, qc <= m) = the first qc columns of
 * H_0 H_1 ... H_{k-1}, from weft__qr_factor's a and tau (k <= qc). */
weft_status weft__qr_form_q(weft_dtype t, int64_t m, int64_t qc, int64_t k, const void* a, int64_t lda,
                            const void* tau, void* q, int64_t ldq);

/* c (m x nc, leading dim ldc) becomes Q^T c (transpose) or Q c, Q the
 * product of the k reflectors of a and tau. */
weft_status weft__qr_apply(weft_dtype t, bool transpose, int64_t m, int64_t nc, int64_t k, const void* a, int64_t lda,
                           const void* tau, void* c, int64_t ldc);

/* Least squares min ||A X - B|| for a full-rank A (m x n, lda m), dgels's:
 * QR of A (m >= n) or of A^T (the minimum-norm solution, m < n). b is
 * max(m, n) x nrhs (leading dim ldb): X is its first n rows; when m > n,
 * rows n..m hold the residual's Q^T part (dgels's). *info is 0, or 1 + the
 * index of an exactly zero diagonal entry of R (not full rank). A zero A
 * gives X = 0, as dgels does. a is overwritten. */
weft_status weft__lstsq_gels(weft_dtype t, int64_t m, int64_t n, int64_t nrhs, void* a, void* b, int64_t ldb,
                             int64_t* info);

/* The same by QR with column pivoting (dgelsy's): the rank is the largest r
 * whose leading r x r block of R has an estimated condition number below
 * 1 / rcond (dlaic1's incremental estimate); X is the minimum-norm solution
 * of the rank-r problem. *rank gets r. a is overwritten. */
weft_status weft__lstsq_gelsy(weft_dtype t, int64_t m, int64_t n, int64_t nrhs, void* a, void* b, int64_t ldb,
                              double rcond, int64_t* rank);

#endif
