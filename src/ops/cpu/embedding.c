/* The embedding driver: see embedding.h. */
#include "ops/cpu/embedding.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "core/scalar.h"
#include "weft/parallel.h"

#define TASK_BYTES 32768 /* bytes moved per parallel chunk, at least */

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static weft_status oom(void) { return weft__error(WEFT_OUT_OF_MEMORY, "out of memory: embedding workspace"); }

/* ---- forward ---- */
typedef struct {
  const void* idx;
  weft_dtype idx_dtype;
  const char* weight;
  int64_t w_stride;
  size_t row_bytes;
  char* out;
} gather_job;

static weft_status gather_range(void* ctx, int64_t begin, int64_t end) {
  const gather_job* j = ctx;
  for (int64_t i = begin; i < end; i++) {
    int64_t k = weft__embedding_index(j->idx, j->idx_dtype, i);
    memcpy(j->out + (size_t)i * j->row_bytes, j->weight + k * j->w_stride, j->row_bytes);
  }
  return WEFT_OK;
}

weft_status weft__embedding_gather(int64_t n, const void* idx, weft_dtype idx_dtype, const char* weight,
                                   int64_t w_stride, size_t row_bytes, char* out) {
  if (n == 0 || row_bytes == 0) return WEFT_OK;
  gather_job j = {idx, idx_dtype, weight, w_stride, row_bytes, out};
  return weft_parallel_for(0, n, max64(1, TASK_BYTES / (int64_t)row_bytes), gather_range, &j);
}

/* ---- backward: the positions grouped by row (a stable counting sort), then one task per row range ---- */
typedef struct {
  const weft_kernels* kt;
  const int64_t* start; /* row k's positions are order[start[k] .. start[k + 1]) */
  const int64_t* order;
  int64_t d;
  bool scale_by_freq;
  weft_dtype dt;
  const char* g;
  char* gw;
} acc_job;

/* y += g * scale over d elements, as PyTorch's add(alpha=scale) rounds it */
static void add_row(const acc_job* j, char* y, const char* g, double scale) {
  if (j->dt == WEFT_FLOAT32) {
    struct weft_f32_binary_params p = {(float)scale};
    j->kt->f32_vadd((size_t)j->d, (const float*)y, (const float*)g, (float*)y, &p);
  } else if (j->dt == WEFT_FLOAT64) {
    double *yd = (double*)y;
    const double* gd = (const double*)g;
    for (int64_t e = 0; e < j->d; e++) yd[e] = yd[e] + scale * gd[e];
  } else {
    size_t es = weft_dtype_size(j->dt);
    for (int64_t e = 0; e < j->d; e++) {
      double v = weft__load_f64(y + e * es, j->dt) + (double)(float)scale * weft__load_f64(g + e * es, j->dt);
      weft__store(y + e * es, j->dt, weft__value_from_double(v));
    }
  }
}

static weft_status acc_range(void* ctx, int64_t begin, int64_t end) {
  const acc_job* j = ctx;
  size_t row = (size_t)j->d * weft_dtype_size(j->dt);
  for (int64_t k = begin; k < end; k++) {
    char* y = j->gw + (size_t)k * row;
    memset(y, 0, row);
    int64_t cnt = j->start[k + 1] - j->start[k];
    double scale = j->scale_by_freq && cnt ? 1.0 / (double)cnt : 1.0;
    for (int64_t p = j->start[k]; p < j->start[k + 1]; p++) add_row(j, y, j->g + (size_t)j->order[p] * row, scale);
  }
  return WEFT_OK;
}

/* start (nw + 1 entries) and order (the positions of non-padding indices, by row, in position order) */
static void group_positions(int64_t n, const void* idx, weft_dtype t, int64_t nw, int64_t pad, int64_t* start,
                            int64_t* order) {
  memset(start, 0, sizeof(int64_t) * (size_t)(nw + 1));
  for (int64_t i = 0; i < n; i++) {
    int64_t k = weft__embedding_index(idx, t, i);
    if (k != pad) start[k + 1]++;
  }
  for (int64_t k = 0; k < nw; k++) start[k + 1] += start[k];
  int64_t* next = order + n; /* the fill cursor of each row, after the n order slots */
  memcpy(next, start, sizeof(int64_t) * (size_t)nw);
  for (int64_t i = 0; i < n; i++) {
    int64_t k = weft__embedding_index(idx, t, i);
    if (k != pad) order[next[k]++] = i;
  }
}

weft_status weft__embedding_backward(const weft_kernels* kt, int64_t n, const void* idx, weft_dtype idx_dtype,
                                     int64_t nw, int64_t d, int64_t padding_idx, bool scale_by_freq, weft_dtype dt,
                                     const void* g, void* gw) {
  if (nw == 0 || d == 0) return WEFT_OK;
  int64_t* start = malloc(sizeof(int64_t) * (size_t)(nw + 1));
  int64_t* order = malloc(sizeof(int64_t) * (size_t)(n + nw + 1));
  if (!start || !order) {
    free(start), free(order);
    return oom();
  }
  group_positions(n, idx, idx_dtype, nw, padding_idx, start, order);
  acc_job j = {kt, start, order, d, scale_by_freq, dt, g, gw};
  int64_t per_row = d * (int64_t)weft_dtype_size(dt) * (1 + n / nw);
  weft_status s = weft_parallel_for(0, nw, max64(1, TASK_BYTES / max64(per_row, 1)), acc_range, &j);
  free(start), free(order);
  return s;
}

/* ---- embedding_renorm_ ---- */
static double row_norm(const char* r, int64_t col_bytes, int64_t d, weft_dtype dt, double p) {
  double acc = 0;
  for (int64_t e = 0; e < d; e++) {
    double a = fabs(weft__load_f64(r + e * col_bytes, dt));
    if (isinf(p)) acc = p > 0 ? (a > acc || isnan(a) ? a : acc) : (e == 0 || a < acc || isnan(a) ? a : acc);
    else if (p == 0) acc += a != 0;
    else if (p == 1) acc += a;
    else if (p == 2) acc += a * a;
    else acc += pow(a, p);
  }
  if (isinf(p) || p == 0 || p == 1) return acc;
  return p == 2 ? sqrt(acc) : pow(acc, 1.0 / p);
}

static int cmp_i64(const void* a, const void* b) {
  int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

weft_status weft__embedding_renorm(int64_t n, const void* idx, weft_dtype idx_dtype, char* w, int64_t w_stride,
                                   int64_t col_stride, int64_t d, weft_dtype dt, double max_norm, double norm_type) {
  int64_t* sorted = malloc(sizeof(int64_t) * (size_t)max64(n, 1));
  if (!sorted) return oom();
  for (int64_t i = 0; i < n; i++) sorted[i] = weft__embedding_index(idx, idx_dtype, i);
  qsort(sorted, (size_t)n, sizeof(int64_t), cmp_i64);
  int64_t es = (int64_t)weft_dtype_size(dt);
  for (int64_t i = 0; i < n; i++) {
    if (i > 0 && sorted[i] == sorted[i - 1]) continue;
    char* r = w + sorted[i] * w_stride * es;
    double norm = row_norm(r, col_stride * es, d, dt, norm_type);
    if (dt != WEFT_FLOAT64) norm = (float)norm; /* torch's norm(...).item() reads a float32 norm */
    if (!(norm > max_norm)) continue;
    double scale = max_norm / (norm + 1e-7);
    double sc = dt == WEFT_FLOAT64 ? scale : (double)(float)scale;
    for (int64_t e = 0; e < d; e++) {
      char* p = r + e * col_stride * es;
      weft__store(p, dt, weft__value_from_double(weft__load_f64(p, dt) * sc));
    }
  }
  free(sorted);
  return WEFT_OK;
}
