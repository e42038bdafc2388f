/* The symmetric eigensolver (see eigh.h).
 *
 * Why this algorithm: Householder tridiagonalization followed by
 * implicit-shift QL is backward stable (eigenvalues within a small multiple
 * of eps * ||A|| of the exact ones, eigenvectors orthonormal to eps), needs
 * no pivoting and converges cubically, where cyclic Jacobi needs ~6-10 sweeps
 * of 4n^3 flops. The QL stops on LAPACK's relative test
 * |e|^2 <= eps^2 |d_m| |d_m+1| rather than |e| <= eps ||T||, which spares the
 * small eigenvalues of graded matrices (largest entries first) most of the
 * absolute error.
 *
 * Why float64 for both dtypes: a float32 input is solved in float64 and
 * rounded once, so its eigenvalues and eigenvectors are the correctly
 * rounded ones of the float32 matrix (ssyevd's are within ~n eps32), and one
 * code path serves both.
 *
 * What is blocked on the GEMM: forming Q from the reflectors (4/3 n^3, in
 * compact-WY blocks of 32), which took a third of the time at n = 300. The
 * reduction stays unblocked (half of it is symmetric matrix-vector products,
 * memory bound whatever the blocking) and so do the QL rotations (two
 * contiguous rows per rotation, which the compiler vectorizes).
 *
 * Storage: the matrix is kept full (both triangles), so every inner loop runs
 * along a row; reflector k is stored in row k, the eigenvectors are the rows
 * of vt, and a QL rotation mixes two adjacent rows of it. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "ops/cpu/eigh.h"
#include "ops/cpu/gemm.h"

/* reflectors per GEMM block when forming Q, and the order it starts at */
enum { EIGH_NB = 32, EIGH_BLOCK_MIN = 64 };

static double dot(const double* x, const double* y, int64_t m) {
  double s = 0;
  for (int64_t i = 0; i < m; i++) s += x[i] * y[i];
  return s;
}

/* ||x||_2 without overflow or underflow (x finite) */
static double norm2(const double* x, int64_t m) {
  double big = 0, s = 0;
  for (int64_t i = 0; i < m; i++) big = fmax(big, fabs(x[i]));
  if (big == 0) return 0;
  for (int64_t i = 0; i < m; i++) {
    double t = x[i] / big;
    s += t * t;
  }
  return big * sqrt(s);
}

/* the lower triangle copied to the upper; false when an element is not
 * finite. *big is the largest magnitude. */
static bool symmetrize(int64_t n, double* a, double* big) {
  double mx = 0;
  bool finite = true;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j <= i; j++) {
      double v = a[i * n + j];
      finite = finite && isfinite(v);
      mx = fmax(mx, fabs(v));
      a[j * n + i] = v;
    }
  *big = mx;
  return finite;
}

static void scale(double* x, int64_t m, double f) {
  for (int64_t i = 0; i < m; i++) x[i] *= f;
}

/* The reflector H = I - tau v v^T (v[0] = 1) with H x = (beta, 0, ...):
 * x[1..] becomes v[1..]; returns tau (0: H = I), *beta the new x[0]. */
static double reflector(double* x, int64_t m, double* beta) {
  double alpha = x[0], xn = norm2(x + 1, m - 1);
  *beta = alpha;
  if (xn == 0) return 0;
  double b = -copysign(hypot(alpha, xn), alpha);
  scale(x + 1, m - 1, 1 / (alpha - b));
  *beta = b;
  return (b - alpha) / b;
}

/* A22 = H A22 H for the m x m trailing block b (leading dimension n):
 * p = tau A22 v, w = p - (tau/2)(p.v) v, A22 -= v w^T + w v^T; p scratch */
static void two_sided(int64_t n, double* b, int64_t m, const double* v, double tau, double* p) {
  for (int64_t i = 0; i < m; i++) p[i] = tau * dot(b + i * n, v, m);
  double k = 0.5 * tau * dot(p, v, m);
  for (int64_t i = 0; i < m; i++) p[i] -= k * v[i];
  for (int64_t i = 0; i < m; i++) {
    double* row = b + i * n;
    double vi = v[i], wi = p[i];
    for (int64_t j = 0; j < m; j++) row[j] -= vi * p[j] + wi * v[j];
  }
}

/* A = Q T Q^T: d the diagonal of T, e its off-diagonal (e[i] couples i and
 * i + 1); reflector k (on indices k+1..n-1) in row k of a, tau[k] its
 * factor; p scratch (n) */
static void tridiagonalize(int64_t n, double* a, double* d, double* e, double* tau, double* p) {
  for (int64_t k = 0; k + 2 < n; k++) {
    double* v = a + k * n + k + 1; /* row k right of the diagonal = column k below it */
    int64_t m = n - k - 1;
    double beta;
    tau[k] = reflector(v, m, &beta);
    v[0] = 1;
    d[k] = a[k * n + k];
    e[k] = beta;
    if (tau[k] != 0) two_sided(n, a + (k + 1) * n + k + 1, m, v, tau[k], p);
  }
  if (n >= 2) {
    d[n - 2] = a[(n - 2) * n + n - 2];
    e[n - 2] = a[(n - 1) * n + n - 2];
  }
  d[n - 1] = a[(n - 1) * n + n - 1];
}

/* X = X H_k for k = k1 down to k0, one reflector at a time: X v, then a
 * rank-1 update of rows and columns k+1.. (the other rows of X are still
 * the identity's there) */
static void apply_unblocked(int64_t n, const double* a, const double* tau, double* vt, int64_t k1, int64_t k0) {
  for (int64_t k = k1; k >= k0; k--) {
    if (tau[k] == 0) continue;
    const double* v = a + k * n + k + 1;
    int64_t m = n - k - 1;
    for (int64_t i = k + 1; i < n; i++) {
      double* row = vt + i * n + k + 1;
      double s = tau[k] * dot(row, v, m);
      for (int64_t j = 0; j < m; j++) row[j] -= s * v[j];
    }
  }
}

/* The same for reflectors k0..k0+b-1 at once, on the GEMM: their product
 * H_k0 ... H_k0+b-1 is I - Y T Y^T (LAPACK's compact WY: T upper
 * triangular), so X H_k0+b-1 ... H_k0 = X - (X Y) T^T Y^T on the trailing
 * m = n-k0-1 rows and columns. yt (b x m, reflector j in row j) and w
 * (m x b) are scratch. */
static weft_status apply_blocked(int64_t n, const double* a, const double* tau, double* vt, int64_t k0, int64_t b,
                                 double* yt, double* w) {
  int64_t m = n - k0 - 1;
  double t[EIGH_NB * EIGH_NB] = {0};
  for (int64_t j = 0; j < b; j++) {
    memset(yt + j * m, 0, sizeof(double) * (size_t)j);
    memcpy(yt + j * m + j, a + (k0 + j) * n + k0 + 1 + j, sizeof(double) * (size_t)(m - j));
    /* T[0:j, j] = -tau_j T[0:j, 0:j] (Y[:, 0:j]^T v_j) */
    double z[EIGH_NB];
    for (int64_t l = 0; l < j; l++) z[l] = dot(yt + l * m + j, yt + j * m + j, m - j);
    for (int64_t l = 0; l < j; l++) {
      double s = 0;
      for (int64_t q = l; q < j; q++) s += t[l * EIGH_NB + q] * z[q];
      t[l * EIGH_NB + j] = -tau[k0 + j] * s;
    }
    t[j * EIGH_NB + j] = tau[k0 + j];
  }
  double* x = vt + (k0 + 1) * n + k0 + 1;
  const weft_kernels* kt = weft__kernels();
  weft_gemm_operand xs = {x, (ptrdiff_t)n, 1}, y = {yt, 1, (ptrdiff_t)m};
  weft_status s = weft__gemm(kt, WEFT_FLOAT64, m, b, m, 1.0, xs, y, false, w, (ptrdiff_t)b, 1);
  if (s != WEFT_OK) return s;
  for (int64_t i = 0; i < m; i++) { /* W = W T^T, in place (row i: T's rows l >= j) */
    double* r = w + i * b;
    for (int64_t j = 0; j < b; j++) {
      double acc = 0;
      for (int64_t l = j; l < b; l++) acc += r[l] * t[j * EIGH_NB + l];
      r[j] = acc;
    }
  }
  weft_gemm_operand ws = {w, (ptrdiff_t)b, 1}, ys = {yt, (ptrdiff_t)m, 1};
  return weft__gemm(kt, WEFT_FLOAT64, m, m, b, -1.0, ws, ys, true, x, (ptrdiff_t)n, 1);
}

/* vt = Q^T = H_{n-3} ... H_0, built as ((I H_{n-3}) H_{n-4}) ... H_0; from
 * EIGH_BLOCK_MIN on in blocks of EIGH_NB reflectors on the GEMM (2/3 of the
 * flops of the whole solve at n = 300 were the reduction and this) */
static weft_status form_qt(int64_t n, const double* a, const double* tau, double* vt) {
  memset(vt, 0, sizeof(double) * (size_t)(n * n));
  for (int64_t i = 0; i < n; i++) vt[i * n + i] = 1;
  if (n < EIGH_BLOCK_MIN) {
    apply_unblocked(n, a, tau, vt, n - 3, 0);
    return WEFT_OK;
  }
  double* yt = malloc(sizeof(double) * (size_t)(2 * EIGH_NB * n));
  if (!yt) return weft__error(WEFT_OUT_OF_MEMORY, "linalg.eigh: out of memory");
  weft_status s = WEFT_OK;
  for (int64_t k1 = n - 3; k1 >= 0 && s == WEFT_OK; k1 -= EIGH_NB) {
    int64_t k0 = k1 - EIGH_NB + 1 < 0 ? 0 : k1 - EIGH_NB + 1;
    s = apply_blocked(n, a, tau, vt, k0, k1 - k0 + 1, yt, yt + EIGH_NB * n);
  }
  free(yt);
  return s;
}

/* rows x, y = c x - s y, s x + c y (a rotation of columns i, i+1 of V) */
static void rotate(double* x, double* y, int64_t n, double c, double s) {
  for (int64_t k = 0; k < n; k++) {
    double xk = x[k], yk = y[k];
    x[k] = c * xk - s * yk;
    y[k] = s * xk + c * yk;
  }
}

/* e[m] is negligible next to its neighbours on the diagonal (dsteqr's test) */
static bool negligible(const double* d, const double* e, int64_t m) {
  const double eps = DBL_EPSILON / 2;
  return e[m] * e[m] <= eps * eps * fabs(d[m]) * fabs(d[m + 1]) + DBL_MIN;
}

/* one implicit QL sweep over the unreduced block l..m, its shift from the
 * 2 x 2 at the top (Wilkinson's): chases the bulge up with plane rotations,
 * applied to the rows of vt too */
static void ql_sweep(int64_t n, double* d, double* e, int64_t l, int64_t m, double* vt) {
  double g = (d[l + 1] - d[l]) / (2 * e[l]);
  double r = hypot(g, 1.0);
  g = d[m] - d[l] + e[l] / (g + copysign(r, g));
  double s = 1, c = 1, p = 0;
  for (int64_t i = m - 1; i >= l; i--) {
    double f = s * e[i], b = c * e[i];
    r = hypot(f, g);
    e[i + 1] = r;
    if (r == 0) { /* the block splits at i: deflate, the caller sweeps again */
      d[i + 1] -= p;
      e[m] = 0;
      return;
    }
    s = f / r;
    c = g / r;
    g = d[i + 1] - p;
    r = (d[i] - g) * s + 2 * c * b;
    p = s * r;
    d[i + 1] = g + p;
    g = c * r - b;
    if (vt) rotate(vt + i * n, vt + (i + 1) * n, n, c, s);
  }
  d[l] -= p;
  e[l] = g;
  e[m] = 0;
}

/* the tridiagonal (d, e) diagonalized; false when 30 n sweeps were not
 * enough (*info: the off-diagonals left) */
static bool ql(int64_t n, double* d, double* e, double* vt, int64_t* info) {
  int64_t budget = 30 * n;
  for (int64_t l = 0; l < n; l++) {
    for (;;) {
      int64_t m = l;
      while (m + 1 < n && !negligible(d, e, m)) m++;
      if (m == l) break;
      if (budget-- == 0) {
        *info = 0;
        for (int64_t i = 0; i + 1 < n; i++) *info += e[i] != 0;
        return false;
      }
      ql_sweep(n, d, e, l, m, vt);
    }
  }
  return true;
}

/* ascending, the rows of vt along (selection sort, as dsteqr's) */
static void sort_ascending(int64_t n, double* w, double* vt) {
  for (int64_t i = 0; i + 1 < n; i++) {
    int64_t k = i;
    for (int64_t j = i + 1; j < n; j++)
      if (w[j] < w[k]) k = j;
    if (k == i) continue;
    double t = w[i];
    w[i] = w[k];
    w[k] = t;
    if (!vt) continue;
    for (int64_t j = 0; j < n; j++) {
      t = vt[i * n + j];
      vt[i * n + j] = vt[k * n + j];
      vt[k * n + j] = t;
    }
  }
}

static void identity(int64_t n, double* vt) {
  memset(vt, 0, sizeof(double) * (size_t)(n * n));
  for (int64_t i = 0; i < n; i++) vt[i * n + i] = 1;
}

/* the matrix scaled by a power of two (exact) to a largest magnitude in
 * [0.5, 1): no overflow in the products of the reduction and QL */
static int to_unit_range(int64_t n, double* a, double big) {
  int ex;
  frexp(big, &ex);
  scale(a, n * n, ldexp(1.0, -ex));
  return ex;
}

weft_status weft__eigh(int64_t n, double* a, double* w, double* vt, int64_t* info) {
  *info = 0;
  if (n == 0) return WEFT_OK;
  double big;
  bool finite = symmetrize(n, a, &big);
  if (n == 1 || big == 0 || !finite) {
    /* 1 x 1 (any value) and 0 are diagonal already; LAPACK's QL does not
     * converge on NaN or inf: all n - 1 off-diagonals are left */
    for (int64_t i = 0; i < n; i++) w[i] = finite || n == 1 ? a[i * n + i] : NAN;
    if (vt) identity(n, vt);
    if (!finite && n > 1) *info = n - 1;
    return WEFT_OK;
  }
  double* work = malloc(sizeof(double) * (size_t)(3 * n));
  if (!work) return weft__error(WEFT_OUT_OF_MEMORY, "linalg.eigh: out of memory");
  double *e = work, *tau = work + n, *p = work + 2 * n;
  int ex = to_unit_range(n, a, big);
  tridiagonalize(n, a, w, e, tau, p);
  e[n - 1] = 0;
  weft_status s = vt ? form_qt(n, a, tau, vt) : WEFT_OK;
  if (s == WEFT_OK && ql(n, w, e, vt, info)) {
    sort_ascending(n, w, vt);
    scale(w, n, ldexp(1.0, ex));
  }
  free(work);
  return s;
}
