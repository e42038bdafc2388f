/* Least squares through the SVD (see svd.h): 1.13's 'gelsd' and 'gelss'.
 *
 * LAPACK's two drivers differ in how they reach the SVD (gelsd by divide
 * and conquer on a bidiagonal, gelss by QR iteration), not in what they
 * solve: both return the minimum-norm solution of the problem with the
 * singular values at or below the cut dropped. Here the SVD is weft's one
 * (one-sided Jacobi, src/ops/cpu/svd.c), run in double for both dtypes on
 * A^T: the column-major A is A^T row-major, and A^T = V S U^T hands U and V
 * over in the layouts the products below read. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "ops/cpu/svd.h"

typedef struct {
  int64_t m, n, k;
  double *a, *s, *v, *u, *col, *c, *x;
} lsq_work;

static void to_double(weft_dtype t, int64_t count, const void* src, double* dst) {
  for (int64_t i = 0; i < count; i++)
    dst[i] = t == WEFT_FLOAT64 ? ((const double*)src)[i] : (double)((const float*)src)[i];
}

static void from_double(weft_dtype t, int64_t count, const double* src, void* dst) {
  for (int64_t i = 0; i < count; i++) {
    if (t == WEFT_FLOAT64)
      ((double*)dst)[i] = src[i];
    else
      ((float*)dst)[i] = (float)src[i];
  }
}

static void release(lsq_work* w) { free(w->a), free(w->s), free(w->v), free(w->u), free(w->col); }

static weft_status alloc_work(lsq_work* w, int64_t m, int64_t n) {
  int64_t k = m < n ? m : n, mx = m > n ? m : n;
  *w = (lsq_work){m, n, k, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  if ((double)m * (double)n * sizeof(double) >= (double)SIZE_MAX)
    return weft__error(WEFT_OUT_OF_MEMORY, "torch.linalg.lstsq: out of memory (a %lld x %lld matrix)", (long long)m,
                       (long long)n);
  w->a = malloc(sizeof(double) * (size_t)(m * n));
  w->s = malloc(sizeof(double) * (size_t)k);
  w->v = malloc(sizeof(double) * (size_t)(n * k));
  w->u = malloc(sizeof(double) * (size_t)(m * k));
  w->col = malloc(sizeof(double) * (size_t)(2 * mx + k)); /* a column of B, then c, then X's column */
  if (w->a && w->s && w->v && w->u && w->col) {
    w->c = w->col + mx, w->x = w->c + k;
    return WEFT_OK;
  }
  release(w);
  return weft__error(WEFT_OUT_OF_MEMORY, "torch.linalg.lstsq: out of memory (a %lld x %lld matrix)", (long long)m,
                     (long long)n);
}

/* x (n) = V diag(1/s) U^T b over the first r singular values; b has m entries */
static void solve_column(const lsq_work* w, int64_t r, const double* b, double* c, double* x) {
  for (int64_t j = 0; j < r; j++) {
    double d = 0; /* U's column j is strided by k (svd.h: vh row by row) */
    for (int64_t i = 0; i < w->m; i++) d += w->u[i * w->k + j] * b[i];
    c[j] = d / w->s[j];
  }
  for (int64_t i = 0; i < w->n; i++) x[i] = 0;
  for (int64_t j = 0; j < r; j++)
    for (int64_t i = 0; i < w->n; i++) x[i] += w->v[j * w->n + i] * c[j];
}

/* ||b - A x|| for A m x n column-major */
static double residual_norm(const lsq_work* w, const double* b, const double* x) {
  double sum = 0;
  for (int64_t i = 0; i < w->m; i++) {
    double r = b[i];
    for (int64_t j = 0; j < w->n; j++) r -= w->a[i + j * w->m] * x[j];
    sum += r * r;
  }
  return sqrt(sum);
}

static int64_t kept(const lsq_work* w, double rcut, double floor) {
  double thr = fmax(rcut * w->s[0], floor);
  int64_t r = 0;
  while (r < w->k && w->s[r] > thr) r++;
  return r;
}

weft_status weft__lstsq_svd(weft_dtype t, int64_t m, int64_t n, int64_t nrhs, const void* a, void* b, int64_t ldb,
                            double rcut, double floor, void* s, int64_t* rank) {
  lsq_work w;
  if (alloc_work(&w, m, n) != WEFT_OK) return weft_last_status();
  to_double(t, m * n, a, w.a);
  /* w.a column-major is A^T (n x m) row-major: its U is A's V, its V A's U */
  weft_status st = weft__svd(WEFT_FLOAT64, n, m, w.a, w.s, w.v, w.u, false);
  if (st == WEFT_OK) {
    from_double(t, w.k, w.s, s);
    *rank = kept(&w, rcut, floor);
    size_t es = weft_dtype_size(t);
    for (int64_t j = 0; j < nrhs; j++) {
      char* bj = (char*)b + (size_t)(j * ldb) * es;
      to_double(t, m, bj, w.col);
      solve_column(&w, *rank, w.col, w.c, w.x);
      double res = m > n ? residual_norm(&w, w.col, w.x) : 0;
      from_double(t, n, w.x, bj);
      for (int64_t i = n; i < m; i++) w.x[i - n] = i == n ? res : 0;
      if (m > n) from_double(t, m - n, w.x, bj + (size_t)n * es);
    }
  }
  release(&w);
  return st;
}
