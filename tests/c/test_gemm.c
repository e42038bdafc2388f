/* The GEMM micro-kernels and driver (src/kernels/gemm.c, src/ops/cpu/gemm.c):
 *   - micro-kernels: the SIMD backend against the scalar one, bit for bit,
 *     at every mr <= MR, nc <= NR, several kc, alpha, accumulate, and the
 *     clamp of a fused activation (none, [0, inf), [-0.3, 0.4]), and a
 *     bias added per column when not accumulating; f32 with A read in place
 *     (p->lda) as with A packed;
 *   - the driver against a naive float64 reference, float32 and float64,
 *     every M / N remainder of the tile and K across the KC block, at 1-4
 *     threads, with row-major, transposed, sliced and broadcast (stride 0)
 *     operands, and row-major, column-major and padded outputs;
 *   - batched products, small (parallel over the batch) and large;
 *   - the same cases with B packed ahead (weft__gemm_pack_b), and past NC. */
#include <stdlib.h>

#include "kernel_test_util.h"
#include "ops/cpu/gemm.h"
#include "test.h"
#include "weft/parallel.h"

static void test_microkernels(void) {
  const weft_kernels *simd = weft__kernels(), *sc = weft__kernels_scalar();
  float a[300 * 4], b[300 * 8];
  double ad[300 * 4], bd[300 * 4];
  for (int i = 0; i < 300 * 4; i++) a[i] = kt_randf(-1, 1);
  for (int i = 0; i < 300 * 8; i++) b[i] = kt_randf(-1, 1);
  for (int i = 0; i < 300 * 4; i++) ad[i] = kt_randf(-1, 1), bd[i] = kt_randf(-1, 1);
  const size_t kcs[] = {0, 1, 2, 3, 7, 64, 300};
  int bad = 0;
  for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++)
    for (size_t mr = 1; mr <= 4; mr++)
      for (size_t nc = 1; nc <= 8; nc++)
        for (int acc = 0; acc < 2; acc++)
          for (int al = 0; al < 2; al++)
            for (int cl = 0; cl < 3; cl++) {
            float c1[4 * 11], c2[4 * 11];
            for (int i = 0; i < 44; i++) c1[i] = c2[i] = (float)i * 0.25f;
            const float lo = cl == 2 ? -0.3f : 0.0f, hi = cl == 2 ? 0.4f : (float)INFINITY;
            static const float fb[8] = {0.5f, -1, 2, 0.25f, -0.75f, 1.5f, 3, -2};
            static const double db[8] = {0.5, -1, 2, 0.25, -0.75, 1.5, 3, -2};
            struct weft_f32_gemm_params p = {al ? 0.5f : 1.0f, acc, cl != 0, lo, hi, cl == 1 ? fb : NULL, 0};
            simd->f32_gemm_4x8(mr, nc, kcs[ki], a, b, c1, 11, &p);
            sc->f32_gemm_4x8(mr, nc, kcs[ki], a, b, c2, 11, &p);
            for (int i = 0; i < 44; i++) bad += !kt_same_f32(c1[i], c2[i]);
            /* A in place (mr rows 301 apart, nothing read past them): the packed result, bit for bit */
            float* ar = malloc(sizeof(float) * (mr * 301));
            for (size_t i = 0; i < mr; i++)
              for (size_t k = 0; k < 301; k++) ar[i * 301 + k] = k < kcs[ki] ? a[k * 4 + i] : NAN;
            struct weft_f32_gemm_params pr = p;
            pr.lda = 301;
            for (int k = 0; k < 2; k++) {
              float c3[4 * 11];
              for (int i = 0; i < 44; i++) c3[i] = (float)i * 0.25f;
              (k ? sc : simd)->f32_gemm_4x8(mr, nc, kcs[ki], ar, b, c3, 11, &pr);
              for (int i = 0; i < 44; i++) bad += !kt_same_f32(c1[i], c3[i]);
            }
            free(ar);
            /* reference: rows/cols outside the tile untouched */
            for (size_t i = 0; i < 4; i++)
              for (size_t j = 0; j < 11; j++) {
                double want = (float)(i * 11 + j) * 0.25;
                if (i < mr && j < nc) {
                  double s = 0;
                  for (size_t k = 0; k < kcs[ki]; k++) s += (double)a[k * 4 + i] * b[k * 8 + j];
                  want = (acc ? want : cl == 1 ? fb[j] : 0) + (al ? 0.5 : 1.0) * s;
                  if (cl) want = want < lo ? lo : want > hi ? hi : want;
                  bad += fabs(c1[i * 11 + j] - want) > 1e-4 * (1 + fabs(want));
                } else {
                  bad += c1[i * 11 + j] != want;
                }
              }
            if (nc <= 4) {
              double d1[4 * 5], d2[4 * 5];
              for (int i = 0; i < 20; i++) d1[i] = d2[i] = i * 0.5;
              struct weft_f64_gemm_params q = {al ? 0.5 : 1.0, acc, cl != 0, lo, hi, cl == 1 ? db : NULL};
              simd->f64_gemm_4x4(mr, nc, kcs[ki], ad, bd, d1, 5, &q);
              sc->f64_gemm_4x4(mr, nc, kcs[ki], ad, bd, d2, 5, &q);
              bad += memcmp(d1, d2, sizeof d1) != 0;
              for (size_t i = 0; i < mr && cl; i++)
                for (size_t j = 0; j < nc; j++) bad += d1[i * 5 + j] < lo || d1[i * 5 + j] > hi;
            }
          }
  CHECK(bad == 0);
}

/* ---- the driver against a float64 reference ---- */

typedef struct {
  int64_t m, n, k;
  int alayout, blayout, clayout; /* 0 row-major, 1 transposed, 2 sliced (A/B) / padded (C), 3 broadcast row */
} gcase;

static int64_t rs_of(int layout, int64_t rows, int64_t cols, int64_t* cs, int64_t* span) {
  switch (layout) {
    case 1: *cs = rows; *span = rows * cols; return 1;
    case 2: *cs = 2; *span = rows * (2 * cols + 1) + 1; return 2 * cols + 1;
    case 3: *cs = 1; *span = cols; return 0;
    default: *cs = 1; *span = rows * cols; return cols;
  }
}

/* run_case's product from B packed ahead (weft__gemm_pack_b, weft__gemm_packed) where that takes it */
static bool use_packed;

static weft_status product(weft_dtype dt, const gcase* g, double alpha, weft_gemm_operand a, weft_gemm_operand b,
                           bool accumulate, void* c, int64_t crs, int64_t ccs) {
  if (!use_packed || ccs != 1 || g->m < 1 || g->n < 1 || g->k < 1)
    return weft__gemm(weft__kernels(), dt, g->m, g->n, g->k, alpha, a, b, accumulate, c, crs, ccs);
  void* bp = malloc(weft__gemm_packed_b_bytes(dt, g->k, g->n));
  weft_status s = weft__gemm_pack_b(dt, g->k, g->n, b, bp);
  if (s == WEFT_OK) s = weft__gemm_packed(weft__kernels(), dt, g->m, g->n, g->k, alpha, a, bp, accumulate, c, crs);
  free(bp);
  return s;
}

static int run_case(weft_dtype dt, const gcase* g, bool accumulate, double alpha) {
  size_t es = dt == WEFT_FLOAT64 ? 8 : 4;
  int64_t acs, bcs, ccs, aspan, bspan, cspan;
  int64_t ars = rs_of(g->alayout, g->m, g->k, &acs, &aspan);
  int64_t brs = rs_of(g->blayout, g->k, g->n, &bcs, &bspan);
  int64_t crs = g->clayout == 1 ? 1 : g->clayout == 2 ? g->n + 3 : g->n;
  ccs = g->clayout == 1 ? g->m : 1;
  cspan = g->clayout == 1 ? g->m * g->n : g->m * crs;
  if (cspan < 1) cspan = 1;
  char* A = malloc((size_t)(aspan + 1) * es);
  char* B = malloc((size_t)(bspan + 1) * es);
  char* C = malloc((size_t)cspan * es);
  double* C0 = malloc((size_t)cspan * sizeof(double));
  for (int64_t i = 0; i <= aspan; i++) {
    double v = kt_randf(-1, 1);
    if (es == 8) ((double*)A)[i] = v; else ((float*)A)[i] = (float)v;
  }
  for (int64_t i = 0; i <= bspan; i++) {
    double v = kt_randf(-1, 1);
    if (es == 8) ((double*)B)[i] = v; else ((float*)B)[i] = (float)v;
  }
  for (int64_t i = 0; i < cspan; i++) {
    C0[i] = kt_randf(-1, 1);
    if (es == 8) ((double*)C)[i] = C0[i]; else ((float*)C)[i] = (float)C0[i];
  }
#define EL(P, i) (es == 8 ? ((const double*)(P))[i] : (double)((const float*)(P))[i])
  weft_gemm_operand a = {A, ars, acs}, b = {B, brs, bcs};
  weft_status s = product(dt, g, alpha, a, b, accumulate, C, crs, ccs);
  int bad = s != WEFT_OK;
  double tol = (es == 8 ? 1e-13 : 2e-6) * (double)(g->k + 1);
  for (int64_t i = 0; i < g->m && !bad; i++)
    for (int64_t j = 0; j < g->n; j++) {
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < g->k; k++) {
        double x = EL(A, i * ars + k * acs) * EL(B, k * brs + j * bcs);
        ref += x;
        mag += fabs(x);
      }
      int64_t at = i * crs + j * ccs;
      double want = alpha * ref + (accumulate ? (es == 8 ? C0[at] : (double)(float)C0[at]) : 0);
      double got = EL(C, at);
      if (!(fabs(got - want) <= tol * (1 + mag + fabs(want)))) {
        fprintf(stderr, "gemm %s m%lld n%lld k%lld layouts %d%d%d acc %d: C[%lld,%lld] %.9g want %.9g\n",
                weft_dtype_name(dt), (long long)g->m, (long long)g->n, (long long)g->k, g->alayout, g->blayout,
                g->clayout, accumulate, (long long)i, (long long)j, got, want);
        bad = 1;
        break;
      }
    }
  /* the padding columns of a padded C are untouched */
  if (g->clayout == 2)
    for (int64_t i = 0; i < g->m; i++)
      for (int64_t j = g->n; j < crs; j++)
        bad |= EL(C, i * crs + j) != (es == 8 ? C0[i * crs + j] : (double)(float)C0[i * crs + j]);
#undef EL
  free(A);
  free(B);
  free(C);
  free(C0);
  return bad;
}

static void test_remainders(weft_dtype dt) {
  int mr, nr, kc;
  weft__gemm_tile(dt, &mr, &nr, &kc);
  const int64_t ks[] = {0, 1, 2, 3, 5, 16};
  int bad = 0, n = 0;
  for (int64_t m = 1; m <= 2 * mr + 1; m++)
    for (int64_t nn = 1; nn <= 2 * nr + 1; nn++)
      for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        gcase g = {m, nn, ks[ki], (int)(m + nn) % 3, (int)(m * nn + ki) % 3, (int)(m + ki) % 3};
        bad += run_case(dt, &g, (m + nn) % 2 == 0, (nn % 3) ? 1.0 : -0.5);
        n++;
      }
  if (bad) fprintf(stderr, "%s: %d of %d small cases failed\n", weft_dtype_name(dt), bad, n);
  CHECK(bad == 0);
}

static void test_blocks(weft_dtype dt) {
  int mr, nr, kc;
  weft__gemm_tile(dt, &mr, &nr, &kc);
  /* across KC (k), MC (96 / 64 rows), column tiles and every layout */
  const gcase cases[] = {
      {97, 67, (int64_t)kc + 1, 0, 0, 0}, {200, 131, 2 * (int64_t)kc + 3, 1, 1, 0},
      {13, 300, (int64_t)kc - 1, 2, 0, 1}, {257, 9, 40, 0, 1, 2},
      {64, 256, 300, 0, 1, 0}, {130, 70, 33, 3, 2, 2}, {1, 500, 77, 0, 0, 0}, {500, 1, 77, 1, 2, 1},
  };
  for (int threads = TEST_FIRST_THREADS; threads <= 4; threads++) {
    weft_set_num_threads(threads);
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      bad += run_case(dt, &cases[i], false, 1.0);
      bad += run_case(dt, &cases[i], true, 2.0);
    }
    if (bad) fprintf(stderr, "%s threads %d: %d block cases failed\n", weft_dtype_name(dt), threads, bad);
    CHECK(bad == 0);
  }
  weft_set_num_threads(1);
}

/* B packed ahead: every remainder and block case, and past NC columns */
static void test_packed(weft_dtype dt) {
  use_packed = true;
  test_remainders(dt);
  test_blocks(dt);
  const gcase wide = {9, 4100, 300, 0, 0, 2};
  for (int threads = TEST_FIRST_THREADS; threads <= 2; threads++) {
    weft_set_num_threads(threads);
    CHECK(run_case(dt, &wide, true, 1.0) == 0);
  }
  weft_set_num_threads(1);
  use_packed = false;
}

/* Threads and the scalar table give the same bits as one SIMD thread; so
 * does A read in place (row-major, several columns of tiles) beside A
 * packed (the same values column-major: At). */
static void test_threads_same_bits(void) {
  int64_t m = 150, n = 170, k = 600;
  float* A = malloc((size_t)(m * k) * 4);
  float* At = malloc((size_t)(m * k) * 4);
  float* B = malloc((size_t)(k * n) * 4);
  float* C[4];
  for (int64_t i = 0; i < m * k; i++) A[i] = kt_randf(-1, 1);
  for (int64_t i = 0; i < m; i++)
    for (int64_t x = 0; x < k; x++) At[x * m + i] = A[i * k + x];
  for (int64_t i = 0; i < k * n; i++) B[i] = kt_randf(-1, 1);
  weft_gemm_operand a = {A, k, 1}, at = {At, 1, m}, b = {B, 1, k}; /* b: B read transposed */
  for (int v = 0; v < 4; v++) {
    C[v] = malloc((size_t)(m * n) * 4);
    weft_set_num_threads(v == 1 ? 4 : 1);
    CHECK(weft__gemm(v == 2 ? weft__kernels_scalar() : weft__kernels(), WEFT_FLOAT32, m, n, k, 1.0, v == 3 ? at : a,
                     b, false, C[v], n, 1) == WEFT_OK);
  }
  weft_set_num_threads(1);
  for (int v = 1; v < 4; v++) CHECK(memcmp(C[0], C[v], (size_t)(m * n) * 4) == 0);
  for (int v = 0; v < 4; v++) free(C[v]);
  free(A);
  free(At);
  free(B);
}

static void test_batched(void) {
  for (int big = 0; big < 2; big++) {
    int64_t bt = big ? 2 : 37, m = big ? 130 : 5, n = big ? 120 : 7, k = big ? 90 : 3;
    float* A = malloc((size_t)(bt * m * k) * 4);
    float* B = malloc((size_t)(k * n) * 4);
    float* C = malloc((size_t)(bt * m * n) * 4);
    for (int64_t i = 0; i < bt * m * k; i++) A[i] = kt_randf(-1, 1);
    for (int64_t i = 0; i < k * n; i++) B[i] = kt_randf(-1, 1);
    weft_set_num_threads(3);
    weft_gemm_operand a = {A, k, 1}, b = {B, n, 1};
    CHECK(weft__gemm_batched(weft__kernels(), WEFT_FLOAT32, bt, m, n, k, 1.0, a, m * k, b, 0, false, C, n, 1,
                             m * n) == WEFT_OK);
    weft_set_num_threads(1);
    int bad = 0;
    for (int64_t q = 0; q < bt; q++)
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
          double ref = 0;
          for (int64_t x = 0; x < k; x++) ref += (double)A[q * m * k + i * k + x] * B[x * n + j];
          bad += fabs(C[q * m * n + i * n + j] - ref) > 1e-4;
        }
    CHECK(bad == 0);
    free(A);
    free(B);
    free(C);
  }
}

int main(void) {
  weft_set_num_threads(1);
  test_microkernels();
  test_remainders(WEFT_FLOAT32);
  test_remainders(WEFT_FLOAT64);
  test_blocks(WEFT_FLOAT32);
  test_blocks(WEFT_FLOAT64);
  test_threads_same_bits();
  test_batched();
  test_packed(WEFT_FLOAT32);
  test_packed(WEFT_FLOAT64);
  TEST_REPORT();
}
