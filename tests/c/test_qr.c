/* Issue 25's Householder QR (src/ops/cpu/qr.c): the blocked driver at sizes
 * on both sides of the blocking threshold and on panel remainders, tall,
 * square and wide, against Q R = A and Q^T Q = I in float32 and float64,
 * at 1 and 2 threads; dgeqrf's sign convention on a worked example; the
 * least-squares drivers (gels, gelsy) against the normal equations and the
 * minimum-norm property, with gelsy's rank on rank-deficient inputs; the
 * op's shapes, layouts, modes and errors; its gradient against central
 * differences; lstsq's shapes, residuals, rank and gradients; a clean
 * OutOfMemory at every failing allocation; no leaks.
 * PyTorch's values are replayed by tests/js/qr-fixtures.test.mjs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "ops/cpu/qr.h"
#include "ops/cpu/svd.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/alloc.h"
#include "weft/autograd.h"
#include "weft/parallel.h"

static double frand(void) { return (double)rand() / RAND_MAX * 2 - 1; }

static double at(const void* p, weft_dtype t, int64_t i) {
  return t == WEFT_FLOAT64 ? ((const double*)p)[i] : ((const float*)p)[i];
}
static void put(void* p, weft_dtype t, int64_t i, double v) {
  if (t == WEFT_FLOAT64)
    ((double*)p)[i] = v;
  else
    ((float*)p)[i] = (float)v;
}
static void* typed(weft_dtype t, const double* a, int64_t k) {
  void* p = malloc((t == WEFT_FLOAT64 ? 8 : 4) * (size_t)(k + 1));
  for (int64_t i = 0; i < k; i++) put(p, t, i, a[i]);
  return p;
}

/* max(|Q R - A|, |Q^T Q - I|) relative to max |A|, Q m x m (complete) */
static double qr_error(weft_dtype t, int64_t m, int64_t n) {
  int64_t k = m < n ? m : n;
  double* a = malloc(sizeof(double) * (size_t)(m * n));
  double big = 0;
  for (int64_t i = 0; i < m * n; i++) a[i] = frand(), big = fmax(big, fabs(a[i]));
  void *f = typed(t, a, m * n), *tau = calloc((size_t)k + 1, 8), *q = calloc((size_t)(m * m), 8);
  CHECK(weft__qr_factor(t, m, n, f, m, tau) == WEFT_OK);
  CHECK(weft__qr_form_q(t, m, m, k, f, m, tau, q, m) == WEFT_OK);
  double worst = 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t l = 0; l <= j && l < m; l++) s += at(q, t, i + l * m) * at(f, t, l + j * m);
      worst = fmax(worst, fabs(s - a[i + j * m]) / big);
    }
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < m; j++) {
      double s = 0;
      for (int64_t l = 0; l < m; l++) s += at(q, t, l + i * m) * at(q, t, l + j * m);
      worst = fmax(worst, fabs(s - (i == j)));
    }
  free(a), free(f), free(tau), free(q);
  return worst;
}

static void test_factor(void) {
  const int64_t shapes[][2] = {{1, 1}, {5, 3}, {3, 5}, {7, 7}, {40, 33}, {33, 40}, {150, 129},
                               {129, 150}, {161, 161}, {200, 140}, {97, 200}};
  for (int threads = 1; threads <= 2; threads++) {
    weft_set_num_threads(threads);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
      CHECK(qr_error(WEFT_FLOAT64, shapes[i][0], shapes[i][1]) < 1e-13);
      CHECK(qr_error(WEFT_FLOAT32, shapes[i][0], shapes[i][1]) < 2e-5);
    }
  }
  weft_set_num_threads(1);
  /* dgeqrf's signs: [3 1; 4 2] (column-major 3 4 1 2): R[0][0] = -5, v = 4 / (3 + 5), tau = 8 / 5 */
  double a[4] = {3, 4, 1, 2}, tau[2];
  CHECK(weft__qr_factor(WEFT_FLOAT64, 2, 2, a, 2, tau) == WEFT_OK);
  CHECK(a[0] == -5 && fabs(a[1] - 0.5) < 1e-15 && fabs(tau[0] - 1.6) < 1e-15);
  CHECK(fabs(a[2] + 2.2) < 1e-15 && fabs(a[3] - 0.4) < 1e-15 && tau[1] == 0);
}

/* max |A^T (A x - b)| over the columns: the normal equations */
static double normal_residual(int64_t m, int64_t n, const double* a, const double* x, int64_t ldx, const double* b) {
  double worst = 0;
  for (int64_t j = 0; j < n; j++) {
    double s = 0;
    for (int64_t i = 0; i < m; i++) {
      double ax = -b[i];
      for (int64_t l = 0; l < n; l++) ax += a[i + l * m] * x[l];
      s += a[i + j * m] * ax;
    }
    worst = fmax(worst, fabs(s));
  }
  (void)ldx;
  return worst;
}

static void test_lstsq(void) {
  /* tall and wide, gels and gelsy: the normal equations hold; wide: x is
   * in A's row space (minimum norm), so the two agree */
  const int64_t shapes[][2] = {{6, 4}, {150, 140}, {4, 6}, {140, 150}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int64_t m = shapes[s][0], n = shapes[s][1], mx = m > n ? m : n, info = -1, rank = -1;
    double *a = malloc(sizeof(double) * (size_t)(m * n)), *b = malloc(sizeof(double) * (size_t)mx);
    for (int64_t i = 0; i < m * n; i++) a[i] = frand();
    for (int64_t i = 0; i < mx; i++) b[i] = i < m ? frand() : 0;
    double *a1 = malloc(sizeof(double) * (size_t)(m * n)), *x1 = malloc(sizeof(double) * (size_t)mx);
    double *a2 = malloc(sizeof(double) * (size_t)(m * n)), *x2 = malloc(sizeof(double) * (size_t)mx);
    memcpy(a1, a, sizeof(double) * (size_t)(m * n)), memcpy(a2, a, sizeof(double) * (size_t)(m * n));
    memcpy(x1, b, sizeof(double) * (size_t)mx), memcpy(x2, b, sizeof(double) * (size_t)mx);
    CHECK(weft__lstsq_gels(WEFT_FLOAT64, m, n, 1, a1, x1, mx, &info) == WEFT_OK && info == 0);
    CHECK(weft__lstsq_gelsy(WEFT_FLOAT64, m, n, 1, a2, x2, mx, 1e-12, &rank) == WEFT_OK);
    CHECK_EQ_I64(rank, m < n ? m : n);
    CHECK(normal_residual(m, n, a, x1, mx, b) < 1e-9);
    double diff = 0;
    for (int64_t i = 0; i < n; i++) diff = fmax(diff, fabs(x1[i] - x2[i]));
    CHECK(diff < 1e-9);
    free(a), free(b), free(a1), free(x1), free(a2), free(x2);
  }
  /* rank 2 in 5 x 4 (columns 2, 3 combinations of 0, 1): gelsy finds it
   * and returns the minimum-norm solution, x orthogonal to the null
   * space; gels reports the zero it meets on R's diagonal, or none */
  double a[20], b[5], x[5];
  for (int64_t i = 0; i < 5; i++) {
    a[i] = frand(), a[i + 5] = frand();
    a[i + 10] = a[i] + a[i + 5], a[i + 15] = a[i] - 2 * a[i + 5];
    b[i] = x[i] = frand();
  }
  double f[20];
  memcpy(f, a, sizeof f);
  int64_t rank = -1;
  CHECK(weft__lstsq_gelsy(WEFT_FLOAT64, 5, 4, 1, f, x, 5, 1e-10, &rank) == WEFT_OK);
  CHECK_EQ_I64(rank, 2);
  CHECK(normal_residual(5, 4, a, x, 5, b) < 1e-12);
  /* null space of A: (1, 1, -1, 0) and (1, -2, 0, -1) */
  CHECK(fabs(x[0] + x[1] - x[2]) < 1e-12 && fabs(x[0] - 2 * x[1] - x[3]) < 1e-12);
  /* the SVD driver: the same rank and minimum-norm solution; two zero
   * singular values; row 4 of its B the residual's norm */
  double y[5], sv[4];
  memcpy(y, b, sizeof y);
  CHECK(weft__lstsq_svd(WEFT_FLOAT64, 5, 4, 1, a, y, 5, 1e-10, 0, sv, &rank) == WEFT_OK);
  CHECK_EQ_I64(rank, 2);
  for (int i = 0; i < 4; i++) CHECK(fabs(x[i] - y[i]) < 1e-12);
  CHECK(sv[0] >= sv[1] && sv[1] > 1e-3 && sv[2] < 1e-14 && sv[3] < 1e-14);
  double r2 = 0;
  for (int i = 0; i < 5; i++) {
    double ri = b[i];
    for (int j = 0; j < 4; j++) ri -= a[i + 5 * j] * y[j];
    r2 += ri * ri;
  }
  CHECK(fabs(y[4] * y[4] - r2) < 1e-12);
  /* a cut above every singular value: rank 0, the zero solution */
  memcpy(y, b, sizeof y);
  CHECK(weft__lstsq_svd(WEFT_FLOAT64, 5, 4, 1, a, y, 5, 2, 0, sv, &rank) == WEFT_OK);
  CHECK(rank == 0 && y[0] == 0 && y[3] == 0);
  /* a zero matrix: rank 0 and the zero solution */
  double z[6] = {0}, zb[3] = {1, 2, 3};
  CHECK(weft__lstsq_gelsy(WEFT_FLOAT64, 3, 2, 1, z, zb, 3, 1e-10, &rank) ==
        WEFT_OK);
  CHECK(rank == 0 && zb[0] == 0 && zb[1] == 0 && zb[2] == 0);
  /* gels on an exactly singular R (a zero column): info names the diagonal entry */
  double s[6] = {1, 2, 3, 0, 0, 0}, sb[3] = {1, 1, 1};
  int64_t info = -1;
  CHECK(weft__lstsq_gels(WEFT_FLOAT64, 3, 2, 1, s, sb, 3, &info) == WEFT_OK);
  CHECK_EQ_I64(info, 2);
}

static weft_tensor* from(const double* v, const int64_t* sizes, int64_t nd, weft_dtype t) {
  weft_tensor* r = weft_empty(sizes, nd, t, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  for (int64_t i = 0; i < weft_tensor_numel(r); i++) put(weft_tensor_data_ptr(r), t, i, v[i]);
  return r;
}

static void test_ops(void) {
  const int64_t s[3] = {2, 4, 3};
  weft_tensor* a = weft_randn(s, 3, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor2 qr = weft_linalg_qr(a, "reduced");
  CHECK_SIZES(qr.t[0], 2, 4, 3);
  CHECK_STRIDES(qr.t[0], 12, 1, 4);
  CHECK_SIZES(qr.t[1], 2, 3, 3);
  CHECK_STRIDES(qr.t[1], 9, 1, 3);
  weft_tensor* back = weft_matmul(qr.t[0], qr.t[1]);
  weft_tensor* d = weft_sub(back, a, weft_scalar_int(1));
  weft_tensor* dm = weft_abs(d);
  weft_tensor* worst = weft_amax(dm, NULL, 0, false);
  CHECK(*(double*)weft_tensor_data_ptr(worst) < 1e-14);
  weft_tensor2 full = weft_linalg_qr(a, "complete");
  CHECK_SIZES(full.t[0], 2, 4, 4);
  CHECK_SIZES(full.t[1], 2, 4, 3);
  CHECK_STRIDES(full.t[1], 12, 1, 4);
  weft_tensor2 ronly = weft_linalg_qr(a, "r");
  CHECK_SIZES(ronly.t[0], 0);
  CHECK_SIZES(ronly.t[1], 2, 3, 3);
  CHECK(!weft_linalg_qr(a, "full").t[0]);
  CHECK_ERROR_HAS("qr received unrecognized mode 'full' but expected one of 'reduced' (default), 'r', or 'complete'");
  const int64_t s1[1] = {3};
  weft_tensor* v = weft_randn(s1, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(!weft_linalg_qr(v, "reduced").t[0]);
  CHECK_ERROR_HAS("linalg.qr: The input tensor A must have at least 2 dimensions.");
  weft_tensor* i64 = weft_to_dtype(a, WEFT_INT64, false);
  CHECK(!weft_linalg_qr(i64, "reduced").t[0]);
  CHECK_ERROR_HAS("linalg.qr: Expected a floating point or complex tensor as input. Got int64");
  /* empty: complete Q of a 3 x 0 matrix is I */
  const int64_t se[2] = {3, 0};
  double none[1] = {0};
  weft_tensor* e = from(none, se, 2, WEFT_FLOAT32);
  weft_tensor2 eq = weft_linalg_qr(e, "complete");
  CHECK_SIZES(eq.t[0], 3, 3);
  CHECK_SIZES(eq.t[1], 3, 0);
  CHECK(((float*)weft_tensor_data_ptr(eq.t[0]))[0] == 1 && ((float*)weft_tensor_data_ptr(eq.t[0]))[1] == 0);
  weft_tensor* list[] = {a, qr.t[0], qr.t[1], back, d, dm, worst, full.t[0], full.t[1], ronly.t[0], ronly.t[1],
                         v, i64, e, eq.t[0], eq.t[1]};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
}

/* sum(wq * Q) + sum(wr * R) of qr(A), in = {A, wq, wr}; its gradient wrt
 * wrt in *g when g */
static double qr_loss(weft_tensor* const* in, weft_tensor* wrt, weft_tensor** g) {
  weft_tensor2 qr = weft_linalg_qr(in[0], "reduced");
  weft_tensor *pq = weft_mul(qr.t[0], in[1]), *pr = weft_mul(qr.t[1], in[2]);
  weft_tensor *sq = weft_sum(pq, (weft_dtype)-1), *sr = weft_sum(pr, (weft_dtype)-1);
  weft_tensor* tot = weft_add(sq, sr, weft_scalar_int(1));
  double v = *(double*)weft_tensor_data_ptr(tot);
  if (g) CHECK(weft_autograd_grad(&tot, NULL, 1, &wrt, 1, false, false, false, g) == WEFT_OK);
  weft_tensor* list[] = {qr.t[0], qr.t[1], pq, pr, sq, sr, tot};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
  return v;
}

/* sum(w * lstsq(A, B).solution), in = {A, B, w} */
static double lstsq_loss(weft_tensor* const* in, weft_tensor* wrt, weft_tensor** g) {
  weft_tensor4 r = weft_linalg_lstsq(in[0], in[1], NAN, "gelsy");
  weft_tensor* p = weft_mul(r.t[0], in[2]);
  weft_tensor* tot = weft_sum(p, (weft_dtype)-1);
  double v = *(double*)weft_tensor_data_ptr(tot);
  if (g) CHECK(weft_autograd_grad(&tot, NULL, 1, &wrt, 1, false, false, false, g) == WEFT_OK);
  weft_tensor4_release(r);
  weft_tensor_release(p), weft_tensor_release(tot);
  return v;
}

typedef double (*loss_fn)(weft_tensor* const* in, weft_tensor* wrt, weft_tensor** g);

/* max |d loss / d wrt - its central difference| relative to max(1, max |d loss / d wrt|) (float64) */
static double gradient_error(loss_fn loss, weft_tensor* const* in, weft_tensor* wrt) {
  weft_tensor* g = NULL;
  weft_set_requires_grad(wrt, true);
  loss(in, wrt, &g);
  weft_set_requires_grad(wrt, false);
  weft_tensor* gc = g ? weft_contiguous(g, WEFT_CONTIGUOUS_FORMAT) : NULL;
  double *v = weft_tensor_data_ptr(wrt), worst = gc ? 0 : INFINITY, big = 1;
  for (int64_t i = 0; gc && i < weft_tensor_numel(wrt); i++) {
    double keep = v[i], h = 1e-6;
    v[i] = keep + h;
    double up = loss(in, wrt, NULL);
    v[i] = keep - h;
    double down = loss(in, wrt, NULL);
    v[i] = keep;
    double gi = ((double*)weft_tensor_data_ptr(gc))[i];
    worst = fmax(worst, fabs((up - down) / (2 * h) - gi)), big = fmax(big, fabs(gi));
  }
  weft_tensor_release(g), weft_tensor_release(gc);
  return worst / big;
}

static void check_gradients(int64_t m, int64_t n) {
  int64_t k = m < n ? m : n, sa[2] = {m, n}, sq[2] = {m, k}, sr[2] = {k, n}, sb[2] = {m, 2}, sx[2] = {n, 2};
  weft_tensor* in[4] = {weft_randn(sa, 2, WEFT_FLOAT64, WEFT_DEVICE_CPU), weft_randn(sq, 2, WEFT_FLOAT64, WEFT_DEVICE_CPU),
                        weft_randn(sr, 2, WEFT_FLOAT64, WEFT_DEVICE_CPU), weft_randn(sb, 2, WEFT_FLOAT64, WEFT_DEVICE_CPU)};
  CHECK(gradient_error(qr_loss, in, in[0]) < 1e-6);
  weft_tensor* ls[3] = {in[0], in[3], weft_randn(sx, 2, WEFT_FLOAT64, WEFT_DEVICE_CPU)};
  CHECK(gradient_error(lstsq_loss, ls, ls[0]) < 1e-6);
  CHECK(gradient_error(lstsq_loss, ls, ls[1]) < 1e-6);
  for (int i = 0; i < 4; i++) weft_tensor_release(in[i]);
  weft_tensor_release(ls[2]);
}

static void test_lstsq_op(void) {
  const int64_t sa[3] = {2, 5, 3}, sb[3] = {1, 5, 2}; /* b broadcast over a's batch */
  weft_tensor* a = weft_randn(sa, 3, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor* b = weft_randn(sb, 3, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor4 r = weft_linalg_lstsq(a, b, NAN, "gels");
  CHECK_SIZES(r.t[0], 2, 3, 2);
  CHECK_STRIDES(r.t[0], 10, 1, 5); /* a view of LAPACK's 5 x 2 B */
  CHECK_SIZES(r.t[1], 2, 2);
  CHECK_SIZES(r.t[2], 0);
  CHECK_SIZES(r.t[3], 0);
  /* residuals = |A X - B|^2 per column */
  weft_tensor* ax = weft_matmul(a, r.t[0]);
  weft_tensor* d = weft_sub(ax, b, weft_scalar_int(1));
  weft_tensor* d2 = weft_mul(d, d);
  int64_t dim = -2;
  weft_tensor* res = weft_sum_dim(d2, &dim, 1, false, (weft_dtype)-1);
  weft_tensor* diff = weft_sub(res, r.t[1], weft_scalar_int(1));
  weft_tensor* ad = weft_abs(diff);
  weft_tensor* worst = weft_amax(ad, NULL, 0, false);
  CHECK(*(double*)weft_tensor_data_ptr(worst) < 1e-12);
  weft_tensor4 y = weft_linalg_lstsq(a, b, NAN, "gelsy");
  CHECK_SIZES(y.t[1], 0);
  CHECK_SIZES(y.t[2], 2);
  CHECK(((int64_t*)weft_tensor_data_ptr(y.t[2]))[0] == 3);
  /* gelsd: the same solution and residuals (full rank), rank and singular values filled */
  weft_tensor4 sd = weft_linalg_lstsq(a, b, NAN, "gelsd");
  CHECK_SIZES(sd.t[2], 2);
  CHECK_SIZES(sd.t[3], 2, 3);
  CHECK(((int64_t*)weft_tensor_data_ptr(sd.t[2]))[1] == 3);
  for (int i = 0; i < 2; i++) {
    weft_tensor* e = weft_sub(sd.t[i], r.t[i], weft_scalar_int(1));
    weft_tensor* ea = e ? weft_abs(e) : NULL;
    weft_tensor* em = ea ? weft_amax(ea, NULL, 0, false) : NULL;
    CHECK(em && *(double*)weft_tensor_data_ptr(em) < 1e-12);
    weft_tensor_release(e), weft_tensor_release(ea), weft_tensor_release(em);
  }
  weft_tensor4_release(sd);
  CHECK(!weft_linalg_lstsq(a, b, NAN, "svd").t[0]);
  CHECK_ERROR_HAS("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  /* Meta: the same shapes, no data */
  weft_tensor* ma = weft_empty(sa, 3, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* mb = weft_empty(sb, 3, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor4 mr = weft_linalg_lstsq(ma, mb, NAN, "gelsy");
  CHECK_SIZES(mr.t[0], 2, 3, 2);
  CHECK_SIZES(mr.t[2], 2);
  weft_tensor4 ms = weft_linalg_lstsq(ma, mb, NAN, "gelss");
  CHECK_SIZES(ms.t[1], 2, 2);
  CHECK_SIZES(ms.t[3], 2, 3);
  weft_tensor4_release(ms);
  weft_tensor2 mq = weft_linalg_qr(ma, "complete");
  CHECK_SIZES(mq.t[0], 2, 5, 5);
  CHECK_SIZES(mq.t[1], 2, 5, 3);
  weft_tensor4_release(mr);
  weft_tensor2_release(mq);
  weft_tensor* list[] = {a, b, ax, d, d2, res, diff, ad, worst, ma, mb};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
  weft_tensor4_release(r);
  weft_tensor4_release(y);
}

static void test_gradients(void) {
  check_gradients(5, 3);
  check_gradients(4, 4);
  check_gradients(3, 5);
}

static weft_tensor* fault_run(weft_tensor* a) {
  weft_tensor2 qr = weft_linalg_qr(a, "reduced");
  weft_tensor* p = qr.t[0] ? weft_matmul(qr.t[0], qr.t[1]) : NULL;
  weft_tensor4 ls = p ? weft_linalg_lstsq(a, p, NAN, "gelsy") : (weft_tensor4){{NULL, NULL, NULL, NULL}};
  weft_tensor* s = ls.t[0] ? weft_sum(ls.t[0], (weft_dtype)-1) : NULL;
  weft_tensor4_release(ls);
  weft_tensor* g = NULL;
  weft_status st = s ? weft_autograd_grad(&s, NULL, 1, &a, 1, false, false, false, &g) : weft_last_status();
  weft_tensor_release(qr.t[0]), weft_tensor_release(qr.t[1]), weft_tensor_release(p), weft_tensor_release(s);
  if (st != WEFT_OK) weft_tensor_release(g);
  return st == WEFT_OK ? g : NULL;
}

/* the gradient's success, for check_fails_cleanly */
static bool fault_ok(void* a) {
  weft_tensor* r = fault_run(a);
  weft_tensor_release(r);
  return r != NULL;
}

static void test_allocation_failures(void) {
  const int64_t sa[3] = {2, 4, 3};
  weft_tensor* a = weft_randn(sa, 3, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_set_requires_grad(a, true);
  check_fails_cleanly(fault_ok, a, 3000);
  weft_tensor_release(a);
}

int main(void) {
  srand(25);
  weft_manual_seed(25);
  test_factor();
  test_lstsq();
  test_ops();
  test_lstsq_op();
  test_gradients();
  test_allocation_failures();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
