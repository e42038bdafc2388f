/* The normalization driver (normalization.h).
 *
 *   planes (nsc false)  task = one (image, channel) plane of s contiguous
 *                       elements: one kernel call per plane.
 *   rows (nsc true)     task = a chunk of one image's rows of c channels;
 *                       the kernels vectorize across channels. Reductions
 *                       write one partial per task, merged in task order.
 * float32 goes through the kernels (their float64 accumulators), float64
 * through the plain loops below, accumulated in double. */
#include "ops/cpu/normalization.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "weft/parallel.h"

#define TASK_WORK 16384 /* elements per parallel chunk, at least */

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* rows per task of the nsc form, and tasks per image */
static int64_t rows_per_task(const weft_norm_geom* g) { return max64(16, TASK_WORK / max64(g->c, 1)); }
static int64_t tasks_per_image(const weft_norm_geom* g) {
  int64_t r = rows_per_task(g);
  return g->s == 0 ? 1 : (g->s + r - 1) / r;
}

static float* to_floats(const double* v, int64_t n) {
  float* f = malloc(sizeof(float) * (size_t)max64(n, 1));
  if (!f) return NULL;
  for (int64_t i = 0; i < n; i++) f[i] = (float)v[i];
  return f;
}

static weft_status oom(void) { return weft__error(WEFT_OUT_OF_MEMORY, "out of memory: normalization workspace"); }

/* ---- one pass, several forms: what a task does ---- */
typedef enum { PASS_MOMENTS, PASS_DOTS, PASS_APPLY, PASS_APPLY_BACKWARD } pass_kind;

typedef struct {
  pass_kind kind;
  const weft_kernels* kt;
  const weft_norm_geom* g;
  weft_dtype dt;
  const void *x, *dy;
  void* y;
  const double *k, *a, *b, *c; /* per (image, channel) */
  const float *kf, *af, *bf, *cf; /* the same as floats (float32 rows) */
  double *out0, *out1;         /* planes: per (image, channel); rows: per task, c each */
} pass;

/* float64 element loops: one contiguous run of len elements (planes: a
 * plane with scalars a0..; rows: one row with per-channel arrays, step 1) */
static void f64_moments(int64_t len, const double* x, double k, double* s, double* q) {
  double a = 0, b = 0;
  for (int64_t e = 0; e < len; e++) {
    double d = x[e] - k;
    a += d;
    b += d * d;
  }
  *s += a;
  *q += b;
}
static void f64_dots(int64_t len, const double* dy, const double* x, double k, double* s, double* q) {
  double a = 0, b = 0;
  for (int64_t e = 0; e < len; e++) {
    a += dy[e];
    b += dy[e] * (x[e] - k);
  }
  *s += a;
  *q += b;
}

static void plane_task(const pass* p, int64_t t) {
  const int64_t s = p->g->s;
  const bool f32 = p->dt == WEFT_FLOAT32;
  const size_t es = f32 ? 4 : 8;
  const char* x = (const char*)p->x + (size_t)(t * s) * es;
  const char* dy = p->dy ? (const char*)p->dy + (size_t)(t * s) * es : NULL;
  char* y = p->y ? (char*)p->y + (size_t)(t * s) * es : NULL;
  double two[2] = {0, 0};
  switch (p->kind) {
    case PASS_MOMENTS:
      if (f32) p->kt->f32_rmoments((size_t)s, (const float*)x, (float)p->k[t], two);
      else f64_moments(s, (const double*)x, p->k[t], &two[0], &two[1]);
      p->out0[t] = two[0], p->out1[t] = two[1];
      break;
    case PASS_DOTS:
      if (f32) p->kt->f32_rdotc((size_t)s, (const float*)dy, (const float*)x, NULL, (float)p->k[t], two);
      else f64_dots(s, (const double*)dy, (const double*)x, p->k[t], &two[0], &two[1]);
      p->out0[t] = two[0], p->out1[t] = two[1];
      break;
    case PASS_APPLY:
      if (f32) {
        p->kt->f32_vnorm((size_t)s, (const float*)x, (float)p->a[t], (float)p->b[t], NULL, NULL, (float*)y);
      } else {
        const double* xd = (const double*)x;
        double* yd = (double*)y;
        for (int64_t e = 0; e < s; e++) yd[e] = xd[e] * p->a[t] + p->b[t];
      }
      break;
    case PASS_APPLY_BACKWARD:
      if (f32) {
        p->kt->f32_vnorm_bwd((size_t)s, (const float*)dy, (const float*)x, NULL, (float)p->a[t], (float)p->b[t],
                             (float)p->c[t], (float*)y);
      } else {
        const double *xd = (const double*)x, *gd = (const double*)dy;
        double* yd = (double*)y;
        for (int64_t e = 0; e < s; e++) yd[e] = (gd[e] * p->a[t] + xd[e] * p->b[t]) + p->c[t];
      }
      break;
  }
}

/* float64 rows: r rows of c channels, row stride c */
static void f64_rows(const pass* p, int64_t r, const double* x, const double* dy, double* y, int64_t base) {
  const int64_t c = p->g->c;
  for (int64_t e = 0; e < r; e++, x += c, dy = dy ? dy + c : NULL, y = y ? y + c : NULL)
    for (int64_t j = 0; j < c; j++) {
      const int64_t q = base + j;
      switch (p->kind) {
        case PASS_MOMENTS: {
          double d = x[j] - p->k[q];
          p->out0[j] += d;
          p->out1[j] += d * d;
          break;
        }
        case PASS_DOTS:
          p->out0[j] += dy[j];
          p->out1[j] += dy[j] * (x[j] - p->k[q]);
          break;
        case PASS_APPLY: y[j] = x[j] * p->a[q] + p->b[q]; break;
        case PASS_APPLY_BACKWARD: y[j] = (dy[j] * p->a[q] + x[j] * p->b[q]) + p->c[q]; break;
      }
    }
}

static void row_task(const pass* p, int64_t t) {
  const weft_norm_geom* g = p->g;
  const int64_t per = tasks_per_image(g), rpt = rows_per_task(g);
  const int64_t i = t / per, r0 = (t % per) * rpt, r = g->s - r0 < rpt ? g->s - r0 : rpt;
  const int64_t c = g->c, base = i * c;
  const bool f32 = p->dt == WEFT_FLOAT32;
  const size_t es = f32 ? 4 : 8, off = (size_t)((i * g->s + r0) * c) * es, rs = (size_t)c * es;
  const char* x = (const char*)p->x + off;
  const char* dy = p->dy ? (const char*)p->dy + off : NULL;
  char* y = p->y ? (char*)p->y + off : NULL;
  double *o0 = p->out0 ? p->out0 + t * c : NULL, *o1 = p->out1 ? p->out1 + t * c : NULL;
  pass local = *p;
  local.out0 = o0, local.out1 = o1;
  if (!f32) {
    f64_rows(&local, r, (const double*)x, (const double*)dy, (double*)y, base);
    return;
  }
  const float *kf = p->kf ? p->kf + base : NULL, *af = p->af ? p->af + base : NULL;
  const float *bf = p->bf ? p->bf + base : NULL, *cf = p->cf ? p->cf + base : NULL;
  switch (p->kind) {
    case PASS_MOMENTS: p->kt->f32_vmoments_rows((size_t)r, (size_t)c, (const float*)x, rs, kf, o0, o1); break;
    case PASS_DOTS:
      p->kt->f32_vdotc_rows((size_t)r, (size_t)c, (const float*)dy, rs, (const float*)x, rs, kf, o0, o1);
      break;
    case PASS_APPLY:
      for (int64_t e = 0; e < r; e++)
        p->kt->f32_vnorm_c((size_t)c, (const float*)(x + e * rs), af, bf, (float*)(y + e * rs));
      break;
    case PASS_APPLY_BACKWARD:
      for (int64_t e = 0; e < r; e++)
        p->kt->f32_vnorm_bwd_c((size_t)c, (const float*)(dy + e * rs), (const float*)(x + e * rs), af, bf, cf,
                               (float*)(y + e * rs));
      break;
  }
}

static weft_status pass_range(void* ctx, int64_t begin, int64_t end) {
  const pass* p = ctx;
  for (int64_t t = begin; t < end; t++) {
    if (p->g->nsc) row_task(p, t);
    else plane_task(p, t);
  }
  return WEFT_OK;
}

/* Runs p over its tasks; rows reductions merge the per-task partials into
 * sum/sq (per image, channel). */
static weft_status run_pass(pass* p, double* sum, double* sq) {
  const weft_norm_geom* g = p->g;
  const int64_t nc = g->n * g->c;
  if (nc == 0) return WEFT_OK;
  bool reduce = p->kind == PASS_MOMENTS || p->kind == PASS_DOTS;
  if (!g->nsc) {
    p->out0 = sum, p->out1 = sq;
    return weft_parallel_for(0, nc, max64(1, TASK_WORK / max64(g->s, 1)), pass_range, p);
  }
  const int64_t per = tasks_per_image(g), ntasks = g->n * per;
  weft_status st = WEFT_OK;
  float* f[4] = {NULL, NULL, NULL, NULL};
  const double* src[4] = {p->k, p->a, p->b, p->c};
  for (int q = 0; q < 4 && p->dt == WEFT_FLOAT32; q++)
    if (src[q] && !(f[q] = to_floats(src[q], nc))) st = oom();
  p->kf = f[0], p->af = f[1], p->bf = f[2], p->cf = f[3];
  double* part = NULL;
  if (st == WEFT_OK && reduce) {
    part = calloc((size_t)(ntasks * g->c * 2), sizeof(double));
    if (!part) st = oom();
    p->out0 = part, p->out1 = part ? part + ntasks * g->c : NULL;
  }
  if (st == WEFT_OK && g->s > 0) st = weft_parallel_for(0, ntasks, 1, pass_range, p);
  if (st == WEFT_OK && reduce) {
    memset(sum, 0, sizeof(double) * (size_t)nc);
    memset(sq, 0, sizeof(double) * (size_t)nc);
    for (int64_t t = 0; t < ntasks; t++)
      for (int64_t j = 0; j < g->c; j++) {
        sum[(t / per) * g->c + j] += p->out0[t * g->c + j];
        sq[(t / per) * g->c + j] += p->out1[t * g->c + j];
      }
  }
  free(part);
  for (int q = 0; q < 4; q++) free(f[q]);
  return st;
}

weft_status weft__norm_moments(const weft_kernels* kt, const weft_norm_geom* g, weft_dtype dt, const void* x,
                               const double* k, double* sum, double* sq) {
  pass p = {PASS_MOMENTS, kt, g, dt, x, NULL, NULL, k, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  return run_pass(&p, sum, sq);
}

weft_status weft__norm_dots(const weft_kernels* kt, const weft_norm_geom* g, weft_dtype dt, const void* dy,
                            const void* x, const double* k, double* sum, double* dot) {
  pass p = {PASS_DOTS, kt, g, dt, x, dy, NULL, k, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  return run_pass(&p, sum, dot);
}

weft_status weft__norm_apply(const weft_kernels* kt, const weft_norm_geom* g, weft_dtype dt, const void* x,
                             const double* a, const double* b, void* y) {
  pass p = {PASS_APPLY, kt, g, dt, x, NULL, y, NULL, a, b, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  return run_pass(&p, NULL, NULL);
}

weft_status weft__norm_apply_backward(const weft_kernels* kt, const weft_norm_geom* g, weft_dtype dt, const void* dy,
                                      const void* x, const double* a, const double* b, const double* c, void* dx) {
  pass p = {PASS_APPLY_BACKWARD, kt, g, dt, x, dy, dx, NULL, a, b, c, NULL, NULL, NULL, NULL, NULL, NULL};
  return run_pass(&p, NULL, NULL);
}

/* ---- layer_norm: rows of k contiguous elements ---- */
typedef struct {
  const weft_kernels* kt;
  int64_t m, k;
  bool f32;
  const void *x, *dy, *w, *b;
  void *y, *gw, *gb;
  const double* mean;
  double* mean_out;
  double *rstd_out, eps;
  const double* rstd;
  bool rms; /* rms_norm: no mean (mean is all zeros), dx has no mean term */
} ln_job;

static weft_status ln_stats_range(void* ctx, int64_t begin, int64_t end) {
  const ln_job* j = ctx;
  for (int64_t m = begin; m < end; m++) {
    double two[2] = {0, 0}, k0;
    if (j->f32) {
      const float* x = (const float*)j->x + m * j->k;
      k0 = x[0];
      j->kt->f32_rmoments((size_t)j->k, x, x[0], two);
    } else {
      const double* x = (const double*)j->x + m * j->k;
      k0 = x[0];
      f64_moments(j->k, x, x[0], &two[0], &two[1]);
    }
    double d = two[0] / (double)j->k, var = two[1] / (double)j->k - d * d;
    j->mean_out[m] = k0 + d;
    j->rstd_out[m] = 1.0 / sqrt((var > 0 ? var : 0) + j->eps);
  }
  return WEFT_OK;
}

weft_status weft__layer_norm_stats(const weft_kernels* kt, int64_t m, int64_t k, weft_dtype dt, const void* x,
                                   double eps, double* mean, double* rstd) {
  if (k == 0) {
    for (int64_t i = 0; i < m; i++) mean[i] = NAN, rstd[i] = NAN;
    return WEFT_OK;
  }
  ln_job j = {.kt = kt, .k = k, .f32 = dt == WEFT_FLOAT32, .x = x, .mean_out = mean, .rstd_out = rstd, .eps = eps};
  return weft_parallel_for(0, m, max64(1, TASK_WORK / k), ln_stats_range, &j);
}

static weft_status ln_apply_range(void* ctx, int64_t begin, int64_t end) {
  const ln_job* j = ctx;
  for (int64_t m = begin; m < end; m++) {
    double a = j->rstd[m], b = -j->mean[m] * j->rstd[m];
    if (j->f32) {
      j->kt->f32_vnorm((size_t)j->k, (const float*)j->x + m * j->k, (float)a, (float)b, j->w, j->b,
                       (float*)j->y + m * j->k);
      continue;
    }
    const double *x = (const double*)j->x + m * j->k, *w = j->w, *bb = j->b;
    double* y = (double*)j->y + m * j->k;
    for (int64_t e = 0; e < j->k; e++) y[e] = (x[e] * a + b) * (w ? w[e] : 1.0) + (bb ? bb[e] : 0.0);
  }
  return WEFT_OK;
}

weft_status weft__layer_norm_apply(const weft_kernels* kt, int64_t m, int64_t k, weft_dtype dt, const void* x,
                                   const double* mean, const double* rstd, const void* w, const void* b, void* y) {
  if (k == 0) return WEFT_OK;
  ln_job j = {.kt = kt, .k = k, .f32 = dt == WEFT_FLOAT32, .x = x, .w = w, .b = b, .y = y, .mean = mean, .rstd = rstd};
  return weft_parallel_for(0, m, max64(1, TASK_WORK / k), ln_apply_range, &j);
}

/* dx per row: with g = dy * w, s = sum g, t = sum g (x - mean),
 * dx = rstd g - rstd s / k - (x - mean) rstd^3 t / k */
static weft_status ln_dx_range(void* ctx, int64_t begin, int64_t end) {
  const ln_job* j = ctx;
  for (int64_t m = begin; m < end; m++) {
    double two[2] = {0, 0}, mu = j->mean[m], r = j->rstd[m], n = (double)j->k;
    const size_t off = (size_t)(m * j->k);
    if (j->f32) {
      j->kt->f32_rdotc((size_t)j->k, (const float*)j->dy + off, (const float*)j->x + off, j->w, (float)mu, two);
    } else {
      const double *dy = (const double*)j->dy + off, *x = (const double*)j->x + off, *w = j->w;
      for (int64_t e = 0; e < j->k; e++) {
        double g = w ? dy[e] * w[e] : dy[e];
        two[0] += g;
        two[1] += g * (x[e] - mu);
      }
    }
    double b = -r * r * r * two[1] / n, c = j->rms ? 0.0 : -r * two[0] / n - mu * b;
    if (j->f32) {
      j->kt->f32_vnorm_bwd((size_t)j->k, (const float*)j->dy + off, (const float*)j->x + off, j->w, (float)r, (float)b,
                           (float)c, (float*)j->y + off);
      continue;
    }
    const double *dy = (const double*)j->dy + off, *x = (const double*)j->x + off, *w = j->w;
    double* dx = (double*)j->y + off;
    for (int64_t e = 0; e < j->k; e++) dx[e] = ((w ? dy[e] * w[e] : dy[e]) * r + x[e] * b) + c;
  }
  return WEFT_OK;
}

#define COL_BLOCK 256
/* gw[e] = sum_m dy (x - mean) rstd, gb[e] = sum_m dy: column blocks, rows in order */
static weft_status ln_cols_range(void* ctx, int64_t begin, int64_t end) {
  const ln_job* j = ctx;
  for (int64_t blk = begin; blk < end; blk++) {
    double aw[COL_BLOCK] = {0}, ab[COL_BLOCK] = {0};
    int64_t e0 = blk * COL_BLOCK, ne = j->k - e0 < COL_BLOCK ? j->k - e0 : COL_BLOCK;
    for (int64_t m = 0; m < j->m; m++) {
      const size_t off = (size_t)(m * j->k + e0);
      double mu = j->mean[m], r = j->rstd[m];
      if (j->f32) {
        const float *dy = (const float*)j->dy + off, *x = (const float*)j->x + off;
        for (int64_t e = 0; e < ne; e++) aw[e] += (double)dy[e] * (((double)x[e] - mu) * r), ab[e] += dy[e];
      } else {
        const double *dy = (const double*)j->dy + off, *x = (const double*)j->x + off;
        for (int64_t e = 0; e < ne; e++) aw[e] += dy[e] * ((x[e] - mu) * r), ab[e] += dy[e];
      }
    }
    for (int64_t e = 0; e < ne; e++) {
      if (j->gw && j->f32) ((float*)j->gw)[e0 + e] = (float)aw[e];
      if (j->gw && !j->f32) ((double*)j->gw)[e0 + e] = aw[e];
      if (j->gb && j->f32) ((float*)j->gb)[e0 + e] = (float)ab[e];
      if (j->gb && !j->f32) ((double*)j->gb)[e0 + e] = ab[e];
    }
  }
  return WEFT_OK;
}

weft_status weft__layer_norm_backward(const weft_kernels* kt, int64_t m, int64_t k, weft_dtype dt, const void* dy,
                                      const void* x, const double* mean, const double* rstd, const void* w, void* dx,
                                      void* gw, void* gb) {
  ln_job j = {.kt = kt, .m = m, .k = k, .f32 = dt == WEFT_FLOAT32, .x = x, .dy = dy, .w = w, .y = dx};
  j.gw = gw, j.gb = gb, j.mean = mean, j.rstd = rstd;
  weft_status s = WEFT_OK;
  if (dx && k > 0) s = weft_parallel_for(0, m, max64(1, TASK_WORK / k), ln_dx_range, &j);
  if (s == WEFT_OK && (gw || gb) && k > 0) {
    s = weft_parallel_for(0, (k + COL_BLOCK - 1) / COL_BLOCK, 1, ln_cols_range, &j);
  }
  return s;
}

/* ---- rms_norm: layer_norm's rows without the mean ---- */

/* one row: rstd from the mean of squares (the moments about 0), then y in the same task, the row still cached */
static weft_status rms_fwd_range(void* ctx, int64_t begin, int64_t end) {
  const ln_job* j = ctx;
  for (int64_t m = begin; m < end; m++) {
    double two[2] = {0, 0};
    const size_t off = (size_t)(m * j->k);
    if (j->f32) j->kt->f32_rmoments((size_t)j->k, (const float*)j->x + off, 0.0f, two);
    else f64_moments(j->k, (const double*)j->x + off, 0.0, &two[0], &two[1]);
    double r = 1.0 / sqrt(two[1] / (double)j->k + j->eps);
    if (j->f32) {
      r = (float)r; /* the float32 rstd the backward reads back */
      j->kt->f32_vnorm((size_t)j->k, (const float*)j->x + off, (float)r, 0.0f, j->w, NULL, (float*)j->y + off);
    } else {
      const double *x = (const double*)j->x + off, *w = j->w;
      double* y = (double*)j->y + off;
      for (int64_t e = 0; e < j->k; e++) y[e] = x[e] * r * (w ? w[e] : 1.0);
    }
    j->rstd_out[m] = r;
  }
  return WEFT_OK;
}

weft_status weft__rms_norm_forward(const weft_kernels* kt, int64_t m, int64_t k, weft_dtype dt, const void* x,
                                   double eps, const void* w, void* y, double* rstd) {
  if (k == 0) {
    for (int64_t i = 0; i < m; i++) rstd[i] = NAN; /* the mean of no squares is 0 / 0 */
    return WEFT_OK;
  }
  ln_job j = {.kt = kt, .k = k, .f32 = dt == WEFT_FLOAT32, .x = x, .w = w, .y = y, .rstd_out = rstd, .eps = eps};
  return weft_parallel_for(0, m, max64(1, TASK_WORK / k), rms_fwd_range, &j);
}

weft_status weft__rms_norm_backward(const weft_kernels* kt, int64_t m, int64_t k, weft_dtype dt, const void* dy,
                                    const void* x, const double* rstd, const void* w, void* dx, void* gw) {
  double* zeros = calloc((size_t)max64(m, 1), sizeof(double));
  if (!zeros) return oom();
  ln_job j = {.kt = kt, .m = m, .k = k, .f32 = dt == WEFT_FLOAT32, .x = x, .dy = dy, .w = w, .y = dx, .rms = true};
  j.gw = gw, j.mean = zeros, j.rstd = rstd;
  weft_status s = WEFT_OK;
  if (dx && k > 0) s = weft_parallel_for(0, m, max64(1, TASK_WORK / k), ln_dx_range, &j);
  if (s == WEFT_OK && gw && k > 0) s = weft_parallel_for(0, (k + COL_BLOCK - 1) / COL_BLOCK, 1, ln_cols_range, &j);
  free(zeros);
  return s;
}
