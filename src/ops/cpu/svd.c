/* The SVD of one matrix (see svd.h): one-sided Jacobi (Hestenes) on R^T,
 * R the factor of a Householder QR with column pivoting.
 *
 * Why Jacobi rather than Golub-Kahan bidiagonalization + implicit QR (what
 * 1.13's LAPACK gesdd does): one-sided Jacobi orthogonalizes the columns of
 * the matrix itself by plane rotations, so every singular value, the small
 * ones of an ill-conditioned matrix included, is computed to high relative
 * accuracy (Demmel and Veselic, 1992), and the left vectors come out as the
 * normalized columns, orthogonal to working precision whatever their scale;
 * bidiagonalization only promises accuracy relative to the largest singular
 * value. Its cost is a few sweeps of O(n^3) each, which the QR step keeps
 * low: Jacobi runs on the n x n triangle instead of the m x n input, and,
 * the QR being pivoted, on R^T, whose columns are much closer to orthogonal
 * than R's (Drmac and Veselic's preconditioning: about half the sweeps). A wide input is decomposed as its transpose
 * (A^T = U S V^T gives A = V S U^T). Everything runs in double, float32
 * included, and the matrix is scaled by a power of two first so that no
 * dot product overflows or underflows. */
#include "ops/cpu/svd.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

enum { MAX_SWEEPS = 80 };

static double get(weft_dtype t, const void* a, int64_t i) {
  return t == WEFT_FLOAT64 ? ((const double*)a)[i] : (double)((const float*)a)[i];
}

static void set(weft_dtype t, void* a, int64_t i, double v) {
  if (t == WEFT_FLOAT64)
    ((double*)a)[i] = v;
  else
    ((float*)a)[i] = (float)v;
}

int weft__svd_classify(weft_dtype t, int64_t count, const void* a) {
  int r = 0;
  for (int64_t i = 0; i < count; i++) {
    double v = get(t, a, i);
    if (isnan(v)) return 2;
    if (isinf(v)) r = 1;
  }
  return r;
}

/* X (mm x nn, column-major, mm >= nn): the input or its transpose */
typedef struct {
  int64_t mm, nn;
  double *x, *tau, *g, *w, *sig;
  int64_t *order, *perm; /* perm: X's column j is the input's column perm[j] (the QR's pivoting) */
  int exponent; /* the input is X * 2^exponent */
} svd_work;

/* Four partial sums: a single running sum is one chain of dependent adds
 * (the compiler may not reorder it), four are independent chains it can
 * pipeline and vectorize, and summing in four parts loses no accuracy. */
static double dot(int64_t n, const double* a, const double* b) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; i++) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

/* p.p, q.q and p.q in one pass over the two columns, two partial sums each */
static void dot3(int64_t n, const double* p, const double* q, double* pp, double* qq, double* pq) {
  double a0 = 0, a1 = 0, b0 = 0, b1 = 0, g0 = 0, g1 = 0;
  int64_t i = 0;
  for (; i + 2 <= n; i += 2) {
    a0 += p[i] * p[i], b0 += q[i] * q[i], g0 += p[i] * q[i];
    a1 += p[i + 1] * p[i + 1], b1 += q[i + 1] * q[i + 1], g1 += p[i + 1] * q[i + 1];
  }
  if (i < n) a0 += p[i] * p[i], b0 += q[i] * q[i], g0 += p[i] * q[i];
  *pp = a0 + a1, *qq = b0 + b1, *pq = g0 + g1;
}

/* X from a (m x n row-major), scaled so that its largest magnitude is in [0.5, 1) */
static void load(svd_work* wk, weft_dtype t, int64_t m, int64_t n, const void* a) {
  bool tall = m >= n;
  double big = 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double v = get(t, a, i * n + j);
      /* tall: X = A, column j holds A's column j; wide: X = A^T, whose columns are A's rows */
      if (tall)
        wk->x[j * m + i] = v;
      else
        wk->x[i * n + j] = v;
      big = fmax(big, fabs(v));
    }
  wk->exponent = 0;
  if (big > 0) frexp(big, &wk->exponent);
  double f = ldexp(1.0, -wk->exponent);
  for (int64_t i = 0; i < wk->mm * wk->nn; i++) wk->x[i] *= f;
}

/* swaps columns j and p of X (M rows) and their entries of perm */
static void swap_columns(svd_work* wk, int64_t j, int64_t p) {
  double *a = wk->x + j * wk->mm, *b = wk->x + p * wk->mm;
  for (int64_t i = 0; i < wk->mm; i++) {
    double v = a[i];
    a[i] = b[i], b[i] = v;
  }
  int64_t k = wk->perm[j];
  wk->perm[j] = wk->perm[p], wk->perm[p] = k;
}

/* column pivoting (dgeqp3's choice): the column of largest norm below row j
 * goes to j; the norms are recomputed, not downdated, so cancellation never
 * misleads the choice */
static void pivot(svd_work* wk, int64_t j) {
  int64_t M = wk->mm, best = j;
  double big = -1;
  for (int64_t c = j; c < wk->nn; c++) {
    double nc = dot(M - j, wk->x + c * M + j, wk->x + c * M + j);
    if (nc > big) big = nc, best = c;
  }
  if (best != j) swap_columns(wk, j, best);
}

/* Householder QR with column pivoting in place (LAPACK's geqp3 without
 * blocking): X P = Q R, R above the diagonal, each reflector
 * H_j = I - tau_j v v^T (v_j = 1) below it */
static void householder_qr(svd_work* wk) {
  int64_t M = wk->mm, N = wk->nn;
  for (int64_t j = 0; j < N; j++) wk->perm[j] = j;
  for (int64_t j = 0; j < N; j++) {
    pivot(wk, j);
    double* col = wk->x + j * M;
    double tail = dot(M - j - 1, col + j + 1, col + j + 1);
    wk->tau[j] = 0;
    if (tail == 0) continue;
    double alpha = col[j], beta = -copysign(sqrt(alpha * alpha + tail), alpha);
    wk->tau[j] = (beta - alpha) / beta;
    for (int64_t i = j + 1; i < M; i++) col[i] /= alpha - beta;
    col[j] = beta;
    for (int64_t c = j + 1; c < N; c++) {
      double* y = wk->x + c * M;
      double s = (y[j] + dot(M - j - 1, col + j + 1, y + j + 1)) * wk->tau[j];
      y[j] -= s;
      for (int64_t i = j + 1; i < M; i++) y[i] -= s * col[i];
    }
  }
}

/* y (M rows, ncols columns, column-major) becomes Q y, Q = H_0 ... H_{N-1} */
static void apply_q(const svd_work* wk, double* y, int64_t ncols) {
  int64_t M = wk->mm;
  for (int64_t j = wk->nn - 1; j >= 0; j--) {
    const double* v = wk->x + j * M;
    if (wk->tau[j] == 0) continue;
    for (int64_t c = 0; c < ncols; c++) {
      double* yc = y + c * M;
      double s = (yc[j] + dot(M - j - 1, v + j + 1, yc + j + 1)) * wk->tau[j];
      yc[j] -= s;
      for (int64_t i = j + 1; i < M; i++) yc[i] -= s * v[i];
    }
  }
}

static void rotate(int64_t n, double* p, double* q, double c, double s) {
  for (int64_t i = 0; i < n; i++) {
    double x = p[i], y = q[i];
    p[i] = c * x - s * y;
    q[i] = s * x + c * y;
  }
}

/* Rotates columns p and q of G (and W) to make them orthogonal; false when
 * they already are, to the tolerance */
static bool jacobi_pair(svd_work* wk, int64_t p, int64_t q, double tol) {
  int64_t N = wk->nn;
  double *gp = wk->g + p * N, *gq = wk->g + q * N;
  double a, b, g;
  dot3(N, gp, gq, &a, &b, &g);
  if (a == 0 || b == 0 || fabs(g) <= tol * sqrt(a) * sqrt(b)) return false;
  /* the rotation [c s; -s c] that zeroes gp . gq: t = tan, the smaller root */
  double zeta = (b - a) / (2 * g);
  double t = copysign(1.0, zeta) / (fabs(zeta) + hypot(1.0, zeta));
  double c = 1 / sqrt(1 + t * t), s = c * t;
  rotate(N, gp, gq, c, s);
  if (wk->w) rotate(N, wk->w + p * N, wk->w + q * N, c, s);
  return true;
}

/* G = R^T, rotated on the right until its columns are orthogonal:
 * R^T W = G. Drmac and Veselic's preconditioning: after a pivoted QR the
 * columns of R^T are much closer to orthogonal than R's (R's rows are
 * graded), so the sweeps are fewer. */
static void jacobi(svd_work* wk) {
  int64_t M = wk->mm, N = wk->nn;
  for (int64_t j = 0; j < N; j++)
    for (int64_t i = 0; i < N; i++) wk->g[j * N + i] = i >= j ? wk->x[i * M + j] : 0;
  if (wk->w) {
    memset(wk->w, 0, sizeof(double) * (size_t)(N * N));
    for (int64_t i = 0; i < N; i++) wk->w[i * N + i] = 1;
  }
  /* LAPACK's gesvj tolerance: rounding in the dot products keeps anything tighter from converging */
  double tol = DBL_EPSILON * sqrt((double)N);
  for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    bool rotated = false;
    for (int64_t p = 0; p + 1 < N; p++)
      for (int64_t q = p + 1; q < N; q++) rotated |= jacobi_pair(wk, p, q, tol);
    if (!rotated) break;
  }
  for (int64_t j = 0; j < N; j++) wk->sig[j] = sqrt(dot(N, wk->g + j * N, wk->g + j * N));
}

/* order: the columns by singular value, descending (ties keep their order) */
static void sort_values(svd_work* wk) {
  for (int64_t j = 0; j < wk->nn; j++) {
    int64_t k = j;
    for (; k > 0 && wk->sig[wk->order[k - 1]] < wk->sig[j]; k--) wk->order[k] = wk->order[k - 1];
    wk->order[k] = j;
  }
}

/* v (length n) loses its components along the first k columns of b (twice: Gram-Schmidt's loss of orthogonality) */
static double orthogonalize(int64_t n, int64_t k, const double* b, double* v) {
  for (int pass = 0; pass < 2; pass++)
    for (int64_t c = 0; c < k; c++) {
      double s = dot(n, b + c * n, v);
      for (int64_t i = 0; i < n; i++) v[i] -= s * b[c * n + i];
    }
  return dot(n, v, v);
}

/* column k of b (n rows): a unit vector orthogonal to columns 0..k-1. Some
 * e_p keeps at least 1/n of its squared norm, so the search ends. */
static void complete_column(int64_t n, int64_t k, double* b) {
  double* v = b + k * n;
  for (int64_t p = 0; p < n; p++) {
    memset(v, 0, sizeof(double) * (size_t)n);
    v[p] = 1;
    double nn = orthogonalize(n, k, b, v);
    if (nn > 0.5 / (double)n) {
      double f = 1 / sqrt(nn);
      for (int64_t i = 0; i < n; i++) v[i] *= f;
      return;
    }
  }
}

/* R^T = U_X S W^T (U_X: G's columns normalized), so X P = Q R =
 * (Q W) S U_X^T: X's left vectors are Q W, its right ones P U_X. */

/* Y (mm x ycols, column-major) = Q [W 0; 0 I], W's columns in singular
 * value order; the identity block gives the complete basis */
static void left_vectors(svd_work* wk, double* y, int64_t ycols) {
  int64_t M = wk->mm, N = wk->nn;
  memset(y, 0, sizeof(double) * (size_t)(M * ycols));
  for (int64_t j = 0; j < N; j++) memcpy(y + j * M, wk->w + wk->order[j] * N, sizeof(double) * (size_t)N);
  for (int64_t j = N; j < ycols; j++) y[j * M + j] = 1;
  apply_q(wk, y, ycols);
}

/* W's buffer (done with) = P U_X, U_X's columns in singular value order and
 * normalized, completed where a singular value is zero */
static void right_vectors(svd_work* wk) {
  int64_t N = wk->nn;
  double* ux = wk->g + N * N; /* scratch after G */
  for (int64_t j = 0; j < N; j++) {
    double sg = wk->sig[wk->order[j]];
    const double* src = wk->g + wk->order[j] * N;
    if (sg >= DBL_MIN) {
      for (int64_t i = 0; i < N; i++) ux[j * N + i] = src[i] / sg;
    } else {
      complete_column(N, j, ux);
    }
  }
  for (int64_t j = 0; j < N; j++)
    for (int64_t i = 0; i < N; i++) wk->w[j * N + wk->perm[i]] = ux[j * N + i];
}

/* dst[i * rs + j * cs] = column j of src (rows x cols, column-major) */
static void store(weft_dtype t, void* dst, int64_t rs, int64_t cs, const double* src, int64_t rows, int64_t cols) {
  for (int64_t j = 0; j < cols; j++) {
    const double* col = src + j * rows;
    for (int64_t i = 0; i < rows; i++) set(t, dst, i * rs + j * cs, col[i]);
  }
}

static weft_status alloc_work(svd_work* wk, int64_t m, int64_t n, bool vectors, bool full, double** y, int64_t* ycols) {
  int64_t M = m >= n ? m : n, N = m >= n ? n : m;
  *ycols = vectors ? (full ? M : N) : 0;
  /* the largest buffer is M x M doubles (full) or M x N; on wasm32 size_t is 32 bits */
  if ((double)M * (double)(full ? M : N) * sizeof(double) >= (double)SIZE_MAX)
    return weft__error(WEFT_OUT_OF_MEMORY, "linalg.svd: out of memory (a %lld x %lld matrix)", (long long)m,
                       (long long)n);
  wk->mm = M, wk->nn = N;
  wk->x = malloc(sizeof(double) * (size_t)(M * N));
  wk->tau = malloc(sizeof(double) * (size_t)N);
  wk->g = malloc(sizeof(double) * (size_t)(2 * N * N)); /* G, then U_R */
  wk->sig = malloc(sizeof(double) * (size_t)N);
  wk->order = malloc(sizeof(int64_t) * (size_t)N);
  wk->perm = malloc(sizeof(int64_t) * (size_t)N);
  wk->w = vectors ? malloc(sizeof(double) * (size_t)(N * N)) : NULL;
  *y = vectors ? malloc(sizeof(double) * (size_t)(M * *ycols)) : NULL;
  if (wk->x && wk->tau && wk->g && wk->sig && wk->order && wk->perm && (!vectors || (wk->w && *y))) return WEFT_OK;
  return weft__error(WEFT_OUT_OF_MEMORY, "linalg.svd: out of memory (a %lld x %lld matrix)", (long long)m,
                     (long long)n);
}

weft_status weft__svd(weft_dtype t, int64_t m, int64_t n, const void* a, void* s, void* u, void* vh, bool full) {
  svd_work wk = {0};
  double* y = NULL;
  int64_t ycols;
  bool vectors = u && vh, tall = m >= n;
  weft_status st = alloc_work(&wk, m, n, vectors, full, &y, &ycols);
  if (st == WEFT_OK) {
    load(&wk, t, m, n, a);
    householder_qr(&wk);
    jacobi(&wk);
    sort_values(&wk);
    for (int64_t j = 0; j < wk.nn; j++) set(t, s, j, ldexp(wk.sig[wk.order[j]], wk.exponent));
  }
  if (st == WEFT_OK && vectors) {
    left_vectors(&wk, y, ycols);
    right_vectors(&wk);
    /* tall: U = Y, V = P U_X (in W's buffer); wide: U = P U_X, V = Y (V stored row by row) */
    if (tall) {
      store(t, u, 1, m, y, m, ycols);
      store(t, vh, n, 1, wk.w, n, n);
    } else {
      store(t, u, 1, m, wk.w, m, m);
      store(t, vh, ycols, 1, y, n, ycols);
    }
  }
  free(wk.x), free(wk.tau), free(wk.g), free(wk.sig), free(wk.order), free(wk.perm), free(wk.w), free(y);
  return st;
}
