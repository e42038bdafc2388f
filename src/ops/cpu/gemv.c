/* The matrix-vector driver: a product with at most WEFT_GEMV_MAX_ROWS rows
 * on one side (a decode step's x @ W^T, mv) skips the GEMM's packing, whose
 * copy of the weight costs as much as the product itself when each weight
 * value is used by so few rows, and whose MR-row panels would be mostly
 * zero padding. The kernels of src/kernels/gemv.c read the weight in place:
 * along its rows for W [n, k] (nn.Linear's layout, x @ W^T), down strips of
 * columns for W [k, n]. Threads take contiguous ranges of output columns,
 * that is, contiguous slices of the weight, each streamed once. */
#include <stdint.h>
#include <stdlib.h>

#include "base/error.h"
#include "ops/cpu/gemv.h"
#include "weft/parallel.h"

#define COL_UNIT 32                   /* columns per work unit: whole kernel tiles and strips */
#define PARALLEL_MIN_MACS (1 << 16)   /* smaller products stay on the calling thread. A decode step's every
                                         projection is above it (stories15M's 288 x 288 wo: 83K): with the
                                         pool's workers spinning between ops (src/parallel/parallel.c) a split
                                         costs a few microseconds, and the weights stream from memory on both
                                         cores (at 2^18, with a futex wake-up per product, only w1||w3 and the
                                         classifier split and 2 threads barely helped) */
#define CHUNK_MIN_MACS (1 << 15)      /* multiply-adds per chunk at least */

struct gemv_ctx {
  weft_f32_gemv_fn* fn;
  int64_t m, n, k;
  const float* x;
  size_t ldx;
  const float* w;
  ptrdiff_t ldw, wstep; /* wstep: elements from the weight's column j (of C) to j + 1 */
  float* y;
  size_t ldy;
  struct weft_f32_gemm_params p;
};

static weft_status run_cols(void* q, int64_t begin, int64_t end) {
  const struct gemv_ctx* g = q;
  int64_t j0 = begin * COL_UNIT, j1 = end * COL_UNIT < g->n ? end * COL_UNIT : g->n;
  struct weft_f32_gemm_params p = g->p;
  if (p.bias) p.bias += j0;
  g->fn((size_t)g->m, (size_t)(j1 - j0), (size_t)g->k, g->x, g->ldx, g->w + (ptrdiff_t)j0 * g->wstep, g->ldw,
        g->y + j0, g->ldy, &p);
  return WEFT_OK;
}

/* A's m x k values as contiguous rows (the kernels' x): a new buffer when A's
 * own rows are not, else NULL with *x pointing into A. */
static float* rows_of(weft_gemm_operand a, int64_t m, int64_t k, const float** x, size_t* ldx, weft_status* s) {
  const float* p = a.p;
  if ((a.cs == 1 || k == 1) && (m == 1 || a.rs >= 0)) {
    *x = p;
    *ldx = m == 1 ? (size_t)k : (size_t)a.rs;
    return NULL;
  }
  float* buf = malloc(sizeof(float) * (size_t)(m * k));
  if (!buf) {
    *s = weft__error(WEFT_OUT_OF_MEMORY, "gemv: out of memory (%zu bytes)", sizeof(float) * (size_t)(m * k));
    return NULL;
  }
  for (int64_t i = 0; i < m; i++)
    for (int64_t q = 0; q < k; q++) buf[i * k + q] = p[i * a.rs + q * a.cs];
  *x = buf, *ldx = (size_t)k;
  return buf;
}

/* The bytes an operand of rows x cols spans: [*lo, *hi). */
static void span(const void* p, int64_t rows, int64_t cols, ptrdiff_t rs, ptrdiff_t cs, const char** lo,
                 const char** hi) {
  ptrdiff_t a = (rows - 1) * rs, b = (cols - 1) * cs;
  ptrdiff_t first = (a < 0 ? a : 0) + (b < 0 ? b : 0), last = (a > 0 ? a : 0) + (b > 0 ? b : 0);
  *lo = (const char*)p + first * (ptrdiff_t)sizeof(float);
  *hi = (const char*)p + (last + 1) * (ptrdiff_t)sizeof(float);
}

/* C shares memory with A or B (an out= on an input): C's rows are written
 * while A and B are still read, so that is the GEMM's, which packs first. */
static bool overlaps_inputs(int64_t m, int64_t n, int64_t k, weft_gemm_operand a, weft_gemm_operand b,
                            const void* c, ptrdiff_t c_rs) {
  const char *clo, *chi, *lo, *hi;
  span(c, m, n, c_rs, 1, &clo, &chi);
  span(a.p, m, k, a.rs, a.cs, &lo, &hi);
  if ((uintptr_t)lo < (uintptr_t)chi && (uintptr_t)clo < (uintptr_t)hi) return true;
  span(b.p, k, n, b.rs, b.cs, &lo, &hi);
  return (uintptr_t)lo < (uintptr_t)chi && (uintptr_t)clo < (uintptr_t)hi;
}

bool weft__gemv(const weft_kernels* kt, weft_dtype dtype, int64_t m, int64_t n, int64_t k, double alpha,
                weft_gemm_operand a, weft_gemm_operand b, bool accumulate, const float* bias, void* c,
                ptrdiff_t c_rs, ptrdiff_t c_cs, weft_status* s) {
  if (dtype != WEFT_FLOAT32 || m < 1 || n < 1 || k < 1) return false;
  if (n == 1) c_cs = 1;
  if (m == 1) c_rs = n;
  if (m > WEFT_GEMV_MAX_ROWS || c_cs != 1) { /* few columns: C^T = B^T A^T, few rows */
    if (bias || n > WEFT_GEMV_MAX_ROWS || c_rs != 1) return false;
    weft_gemm_operand at = {b.p, b.cs, b.rs}, bt = {a.p, a.cs, a.rs};
    return weft__gemv(kt, dtype, n, m, k, alpha, at, bt, accumulate, NULL, c, c_cs, 1, s);
  }
  if (m > 1 && c_rs < n) return false; /* C's rows overlap or run backwards */
  /* the weight B[kk, j]: along k (x @ W^T) or along n (x @ W) unit-strided */
  bool along_k = b.rs == 1 || k == 1, along_n = b.cs == 1 || n == 1;
  if ((!along_k && !along_n) || overlaps_inputs(m, n, k, a, b, c, c_rs)) return false;
  struct gemv_ctx g = {along_k ? kt->f32_gemv_t : kt->f32_gemv_n, m, n, k, NULL, 0, b.p,
                       along_k ? b.cs : b.rs, along_k ? b.cs : 1, c, (size_t)c_rs,
                       {.alpha = (float)alpha, .accumulate = accumulate, .bias = accumulate ? NULL : bias}};
  *s = WEFT_OK;
  float* buf = rows_of(a, m, k, &g.x, &g.ldx, s);
  if (*s != WEFT_OK) return true;
  int64_t units = (n + COL_UNIT - 1) / COL_UNIT, per_unit = m * k * COL_UNIT;
  bool serial = (double)m * (double)n * (double)k < PARALLEL_MIN_MACS;
  int64_t grain = serial ? INT64_MAX : (CHUNK_MIN_MACS + per_unit - 1) / per_unit;
  *s = weft_parallel_for(0, units, grain, run_cols, &g);
  free(buf);
  return true;
}
