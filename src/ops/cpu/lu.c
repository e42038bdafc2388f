/* LU with partial pivoting and Cholesky on one row-major matrix (see lu.h).
 * Right-looking and blocked: a panel of NB columns is factored with the
 * scalar loops, the block row to its right is solved with the panel's
 * triangle, and the trailing matrix takes one GEMM update (-L21 U12, or
 * -L21 L21^T), which is where the O(n^3) work goes. Below BLOCK_MIN the
 * panel is the whole matrix: the unblocked algorithm. The loops are
 * written once per element type with a macro. */
#include <math.h>
#include <stdbool.h>

#include "kernels/kernels.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/lu.h"

enum { NB = 32, BLOCK_MIN = 96 };

static int64_t panel_width(int64_t n) { return n < BLOCK_MIN ? n : NB; }

/* C[m x w] -= A[m x kk] B[kk x w], all row-major with leading dimension ld */
static weft_status trailing_update(weft_dtype t, int64_t m, int64_t w, int64_t kk, const void* a, const void* b,
                                   void* c, int64_t ld) {
  if (m <= 0 || w <= 0 || kk <= 0) return WEFT_OK;
  weft_gemm_operand ga = {a, (ptrdiff_t)ld, 1}, gb = {b, (ptrdiff_t)ld, 1};
  return weft__gemm(weft__kernels(), t, m, w, kk, -1.0, ga, gb, true, c, (ptrdiff_t)ld, 1);
}

/* the same with B = A^T (b points at the rows of A whose transpose is B) */
static weft_status trailing_update_t(weft_dtype t, int64_t m, int64_t kk, const void* a, void* c, int64_t ld) {
  if (m <= 0 || kk <= 0) return WEFT_OK;
  weft_gemm_operand ga = {a, (ptrdiff_t)ld, 1}, gb = {a, 1, (ptrdiff_t)ld};
  return weft__gemm(weft__kernels(), t, m, m, kk, -1.0, ga, gb, true, c, (ptrdiff_t)ld, 1);
}

#define WEFT__LU_DEFINE(T, SUF, ABS)                                                                         \
  /* columns j0..j0+w of rows j0..n, pivots searched over the whole column */                                \
  static void lu_panel_##SUF(int64_t n, T* a, int64_t j0, int64_t w, int64_t* piv, int64_t* info) {          \
    for (int64_t c = j0; c < j0 + w; c++) {                                                                 \
      int64_t p = c;                                                                                         \
      for (int64_t r = c + 1; r < n; r++)                                                                    \
        if (ABS(a[r * n + c]) > ABS(a[p * n + c])) p = r;                                                    \
      piv[c] = p;                                                                                            \
      if (p != c)                                                                                            \
        for (int64_t k = 0; k < n; k++) {                                                                    \
          T tmp = a[c * n + k];                                                                              \
          a[c * n + k] = a[p * n + k];                                                                       \
          a[p * n + k] = tmp;                                                                                \
        }                                                                                                    \
      T d = a[c * n + c];                                                                                    \
      if (d == 0) {                                                                                          \
        if (!*info) *info = c + 1;                                                                           \
        continue;                                                                                            \
      }                                                                                                      \
      for (int64_t r = c + 1; r < n; r++) {                                                                  \
        T l = a[r * n + c] /= d;                                                                             \
        for (int64_t k = c + 1; k < j0 + w; k++) a[r * n + k] -= l * a[c * n + k];                           \
      }                                                                                                      \
    }                                                                                                        \
  }                                                                                                          \
  /* U12 = L11^-1 A12: rows j0..j0+w, columns j0+w..n */                                                     \
  static void lu_row_block_##SUF(int64_t n, T* a, int64_t j0, int64_t w) {                                  \
    for (int64_t i = j0 + 1; i < j0 + w; i++)                                                                \
      for (int64_t k = j0; k < i; k++) {                                                                     \
        T l = a[i * n + k];                                                                                  \
        for (int64_t col = j0 + w; col < n; col++) a[i * n + col] -= l * a[k * n + col];                     \
      }                                                                                                      \
  }                                                                                                          \
  static weft_status lu_##SUF(int64_t n, T* a, int64_t* piv, int64_t* info) {                               \
    *info = 0;                                                                                               \
    int64_t nb = panel_width(n);                                                                             \
    for (int64_t j0 = 0; j0 < n; j0 += nb) {                                                                 \
      int64_t w = n - j0 < nb ? n - j0 : nb, e = j0 + w;                                                     \
      lu_panel_##SUF(n, a, j0, w, piv, info);                                                                \
      if (e == n) break;                                                                                     \
      lu_row_block_##SUF(n, a, j0, w);                                                                       \
      weft_status s = trailing_update(sizeof(T) == 8 ? WEFT_FLOAT64 : WEFT_FLOAT32, n - e, n - e, w,         \
                                      a + e * n + j0, a + j0 * n + e, a + e * n + e, n);                     \
      if (s != WEFT_OK) return s;                                                                            \
    }                                                                                                        \
    return WEFT_OK;                                                                                          \
  }                                                                                                          \
  /* P^T: L y = b, U x = y; a zero of y is not divided (dtrsm's 'N' solve skips it), so a zero pivot         \
   * gives LAPACK's infinities, and zeros where LAPACK has them, not 0 / 0 */                                \
  static void lu_solve_##SUF(int64_t n, int64_t k, const T* lu, const int64_t* piv, T* b) {                  \
    for (int64_t i = 0; i < n; i++)                                                                          \
      if (piv[i] != i)                                                                                       \
        for (int64_t c = 0; c < k; c++) {                                                                    \
          T tmp = b[i * k + c];                                                                              \
          b[i * k + c] = b[piv[i] * k + c];                                                                  \
          b[piv[i] * k + c] = tmp;                                                                           \
        }                                                                                                    \
    for (int64_t i = 1; i < n; i++)                                                                          \
      for (int64_t j = 0; j < i; j++) {                                                                      \
        T l = lu[i * n + j];                                                                                 \
        for (int64_t c = 0; c < k; c++) b[i * k + c] -= l * b[j * k + c];                                    \
      }                                                                                                      \
    for (int64_t i = n - 1; i >= 0; i--) {                                                                   \
      for (int64_t j = i + 1; j < n; j++) {                                                                  \
        T u = lu[i * n + j];                                                                                 \
        for (int64_t c = 0; c < k; c++) b[i * k + c] -= u * b[j * k + c];                                    \
      }                                                                                                      \
      T d = lu[i * n + i];                                                                                   \
      for (int64_t c = 0; c < k; c++)                                                                        \
        if (b[i * k + c] != 0) b[i * k + c] /= d;                                                            \
    }                                                                                                        \
  }                                                                                                          \
  /* U^T y = b, L^T z = y, then the swaps backwards: x = P z */                                               \
  static void lu_solve_t_##SUF(int64_t n, int64_t k, const T* lu, const int64_t* piv, T* b) {                \
    for (int64_t j = 0; j < n; j++) {                                                                        \
      T d = lu[j * n + j];                                                                                   \
      for (int64_t c = 0; c < k; c++) b[j * k + c] /= d;                                                     \
      for (int64_t i = j + 1; i < n; i++) {                                                                  \
        T u = lu[j * n + i];                                                                                 \
        for (int64_t c = 0; c < k; c++) b[i * k + c] -= u * b[j * k + c];                                    \
      }                                                                                                      \
    }                                                                                                        \
    for (int64_t j = n - 1; j > 0; j--)                                                                      \
      for (int64_t i = 0; i < j; i++) {                                                                      \
        T l = lu[j * n + i];                                                                                 \
        for (int64_t c = 0; c < k; c++) b[i * k + c] -= l * b[j * k + c];                                    \
      }                                                                                                      \
    for (int64_t i = n - 1; i >= 0; i--)                                                                     \
      if (piv[i] != i)                                                                                       \
        for (int64_t c = 0; c < k; c++) {                                                                    \
          T tmp = b[i * k + c];                                                                              \
          b[i * k + c] = b[piv[i] * k + c];                                                                  \
          b[piv[i] * k + c] = tmp;                                                                           \
        }                                                                                                    \
  }                                                                                                          \
  /* the diagonal block j0..j0+w (its trailing updates done): unblocked Cholesky */                         \
  static bool chol_diag_##SUF(int64_t n, T* a, int64_t j0, int64_t w, int64_t* info) {                       \
    for (int64_t j = j0; j < j0 + w; j++) {                                                                  \
      T d = a[j * n + j];                                                                                    \
      for (int64_t k = j0; k < j; k++) d -= a[j * n + k] * a[j * n + k];                                     \
      if (!(d > 0)) {                                                                                        \
        *info = j + 1;                                                                                       \
        return false;                                                                                        \
      }                                                                                                      \
      d = (T)sqrt((double)d);                                                                                \
      a[j * n + j] = d;                                                                                      \
      for (int64_t i = j + 1; i < j0 + w; i++) {                                                             \
        T s = a[i * n + j];                                                                                  \
        for (int64_t k = j0; k < j; k++) s -= a[i * n + k] * a[j * n + k];                                   \
        a[i * n + j] = s / d;                                                                                \
      }                                                                                                      \
    }                                                                                                        \
    return true;                                                                                             \
  }                                                                                                          \
  /* L21 = A21 L11^-T: rows j0+w..n of columns j0..j0+w */                                                   \
  static void chol_col_block_##SUF(int64_t n, T* a, int64_t j0, int64_t w) {                                \
    for (int64_t i = j0 + w; i < n; i++)                                                                     \
      for (int64_t j = j0; j < j0 + w; j++) {                                                                \
        T s = a[i * n + j];                                                                                  \
        for (int64_t k = j0; k < j; k++) s -= a[i * n + k] * a[j * n + k];                                   \
        a[i * n + j] = s / a[j * n + j];                                                                     \
      }                                                                                                      \
  }                                                                                                          \
  static weft_status chol_##SUF(int64_t n, T* a, int64_t* info) {                                           \
    *info = 0;                                                                                               \
    int64_t nb = panel_width(n);                                                                             \
    for (int64_t j0 = 0; j0 < n; j0 += nb) {                                                                 \
      int64_t w = n - j0 < nb ? n - j0 : nb, e = j0 + w;                                                     \
      if (!chol_diag_##SUF(n, a, j0, w, info)) return WEFT_OK;                                               \
      if (e == n) break;                                                                                     \
      chol_col_block_##SUF(n, a, j0, w);                                                                     \
      weft_status s = trailing_update_t(sizeof(T) == 8 ? WEFT_FLOAT64 : WEFT_FLOAT32, n - e, w,              \
                                        a + e * n + j0, a + e * n + e, n);                                   \
      if (s != WEFT_OK) return s;                                                                            \
    }                                                                                                        \
    for (int64_t i = 0; i < n; i++)                                                                          \
      for (int64_t j = i + 1; j < n; j++) a[i * n + j] = 0;                                                  \
    return WEFT_OK;                                                                                          \
  }

WEFT__LU_DEFINE(float, f32, fabsf)
WEFT__LU_DEFINE(double, f64, fabs)

weft_status weft__lu_factor(weft_dtype t, int64_t n, void* a, int64_t* piv, int64_t* info) {
  return t == WEFT_FLOAT64 ? lu_f64(n, a, piv, info) : lu_f32(n, a, piv, info);
}

void weft__lu_solve(weft_dtype t, int64_t n, int64_t k, const void* lu, const int64_t* piv, void* b) {
  if (t == WEFT_FLOAT64)
    lu_solve_f64(n, k, lu, piv, b);
  else
    lu_solve_f32(n, k, lu, piv, b);
}

void weft__lu_solve_t(weft_dtype t, int64_t n, int64_t k, const void* lu, const int64_t* piv, void* b) {
  if (t == WEFT_FLOAT64)
    lu_solve_t_f64(n, k, lu, piv, b);
  else
    lu_solve_t_f32(n, k, lu, piv, b);
}

weft_status weft__cholesky(weft_dtype t, int64_t n, void* a, int64_t* info) {
  return t == WEFT_FLOAT64 ? chol_f64(n, a, info) : chol_f32(n, a, info);
}
