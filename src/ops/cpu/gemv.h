/* The matrix-vector driver (src/ops/cpu/gemv.c): products of a few rows
 * against a weight read once, for the GEMM driver to hand them to. */
#ifndef WEFT_OPS_CPU_GEMV_H
#define WEFT_OPS_CPU_GEMV_H

#include <stdbool.h>

#include "ops/cpu/gemm.h"

/* At most this many rows of A (or columns of B) make a matrix-vector product. */
#define WEFT_GEMV_MAX_ROWS 4

/* C[m x n] = alpha * A B + (accumulate ? C : bias ? bias[j] : 0) through the
 * GEMV kernels of table kt, when the product suits them: float32, m <= 4
 * with C's columns unit-strided (or, without bias, n <= 4 with C's rows
 * unit-strided: C^T = B^T A^T), k >= 1, and B (the weight) with one unit
 * stride. Returns false, touching nothing, when it does not; else true with
 * the status in *s. Threaded over C's columns for a large weight. */
bool weft__gemv(const weft_kernels* kt, weft_dtype dtype, int64_t m, int64_t n, int64_t k, double alpha,
                weft_gemm_operand a, weft_gemm_operand b, bool accumulate, const float* bias, void* c,
                ptrdiff_t c_rs, ptrdiff_t c_cs, weft_status* s);

#endif
