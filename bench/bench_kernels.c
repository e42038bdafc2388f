/* Kernel bandwidth: memcpy as the ceiling, f32 copy, contiguous add, the
 * NCHW -> NHWC transpose of [32, 64, 56, 56] float32 (and of the same shape
 * in 16- and 8-bit elements), f32 -> f16 cast; at 1
 * and 2 threads. Prints one line per case: median ms, GB/s (bytes read +
 * written), ratio to memcpy of the same run. Then the f32 transcendental
 * kernels on one thread against libm one element at a time (the path they
 * replaced): GB/s of each and the speedup. `--json` prints JSON lines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "ops/cpu/transpose.h"
#include <time.h>

#include "kernels/kernels.h"
#include "weft/parallel.h"

#define REPS 9


struct job {
  int kind;
  const float* a;
  const float* b;
  void* y;
  const weft_kernels* k;
};
enum { MEMCPY, COPY, ADD, CAST, TRANSPOSE, TRANSPOSE16, TRANSPOSE8 };

#define N_ELEMS 4194304
#define TN 32
#define TC 64
#define THW (56 * 56)

static weft_status run_range(void* p, int64_t b, int64_t e) {
  struct job* j = p;
  size_t n = (size_t)(e - b);
  switch (j->kind) {
    case MEMCPY: memcpy((float*)j->y + b, j->a + b, n * 4); break;
    case COPY: j->k->x32_copy(n, j->a + b, (float*)j->y + b); break;
    case ADD: {
      struct weft_f32_binary_params prm = {1.0f};
      j->k->f32_vadd(n, j->a + b, j->b + b, (float*)j->y + b, &prm);
      break;
    }
    case CAST: j->k->f32_f16_cvt(n, j->a + b, (uint16_t*)j->y + b); break;
  }
  return WEFT_OK;
}

static double run_once(struct job* j) {
  double t0 = now_ms();
  if (j->kind >= TRANSPOSE) {
    size_t es = j->kind == TRANSPOSE ? 4 : j->kind == TRANSPOSE16 ? 2 : 1;
    weft__transpose_2d_batched(j->k, es, j->a, j->y, THW * es, TC * es, THW, TC, TN, (ptrdiff_t)(TC * THW * es),
                               (ptrdiff_t)(TC * THW * es));
  } else {
    weft_parallel_for(0, N_ELEMS, 65536, run_range, j);
  }
  return now_ms() - t0;
}

static double median_ms(struct job* j) {
  double t[REPS];
  run_once(j); /* warm up: page faults, pool start */
  for (int r = 0; r < REPS; r++) t[r] = run_once(j);
  qsort(t, REPS, sizeof t[0], cmp_d);
  return t[REPS / 2];
}

/* ---- transcendental f32 kernels vs libm per element ---- */

#define U_ELEMS 1048576
static float lm_sigmoid(float v) { return 1.0f / (1.0f + expf(-v)); }
static float lm_gelu(float v) { return 0.5f * v * (1.0f + erff(v * (float)M_SQRT1_2)); }
static float lm_gelu_tanh(float v) {
  return 0.5f * v * (1.0f + tanhf((float)(M_2_SQRTPI * M_SQRT1_2) * (v + 0.044715f * v * v * v)));
}

struct ucase {
  const char* name;
  size_t off; /* kernel in weft_kernels */
  float (*libm)(float);
  int approximate;
  float lo, hi; /* inputs uniform in [lo, hi) */
};

/* this thread's CPU time: the one-thread unary runs stay comparable on a busy machine */
static double cpu_ms(void) {
#ifdef __EMSCRIPTEN__
  return now_ms();
#else
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
#endif
}

static double median_of(double* t, int n) {
  qsort(t, (size_t)n, sizeof t[0], cmp_d);
  return t[n / 2];
}

static void bench_unary(const weft_kernels* k, int json) {
  static const struct ucase cases[] = {
      {"exp", offsetof(weft_kernels, f32_vexp), expf, 0, -10, 10},
      {"expm1", offsetof(weft_kernels, f32_vexpm1), expm1f, 0, -10, 10},
      {"log", offsetof(weft_kernels, f32_vlog), logf, 0, 0.001f, 100},
      {"log1p", offsetof(weft_kernels, f32_vlog1p), log1pf, 0, -0.5f, 100},
      {"sigmoid", offsetof(weft_kernels, f32_vsigmoid), lm_sigmoid, 0, -10, 10},
      {"tanh", offsetof(weft_kernels, f32_vtanh), tanhf, 0, -5, 5},
      {"erf", offsetof(weft_kernels, f32_verf), erff, 0, -3, 3},
      {"gelu", offsetof(weft_kernels, f32_vgelu), lm_gelu, 0, -5, 5},
      {"gelu tanh", offsetof(weft_kernels, f32_vgelu), lm_gelu_tanh, 1, -5, 5},
      {"sin", offsetof(weft_kernels, f32_vsin), sinf, 0, -100, 100},
      {"cos", offsetof(weft_kernels, f32_vcos), cosf, 0, -100, 100},
      {"tan", offsetof(weft_kernels, f32_vtan), tanf, 0, -1.5f, 1.5f},
  };
  float* x = malloc(U_ELEMS * sizeof(float));
  float* y = malloc(U_ELEMS * sizeof(float));
  if (!x || !y) abort();
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const struct ucase* u = &cases[c];
    for (size_t i = 0; i < U_ELEMS; i++) x[i] = u->lo + (u->hi - u->lo) * (float)((i * 2654435761u) % U_ELEMS) / U_ELEMS;
    weft_f32_vunary_fn* fn = *(weft_f32_vunary_fn* const*)((const char*)k + u->off);
    struct weft_f32_unary_params prm = {.approximate = u->approximate};
    double tv[REPS], tl[REPS];
    for (int r = -1; r < REPS; r++) { /* r = -1 warms up */
      double t0 = cpu_ms();
      fn(U_ELEMS, x, y, &prm);
      double t1 = cpu_ms();
      for (size_t i = 0; i < U_ELEMS; i++) y[i] = u->libm(x[i]);
      double t2 = cpu_ms();
      if (r >= 0) tv[r] = t1 - t0, tl[r] = t2 - t1;
    }
    double mv = median_of(tv, REPS), ml = median_of(tl, REPS), bytes = 2.0 * U_ELEMS * 4;
    if (json)
      printf("{\"name\":\"%s f32 1M\",\"build\":\"%s\",\"threads\":1,\"ms\":%.3f,\"GB/s\":%.2f,"
             "\"libm_ms\":%.3f,\"libm_GB/s\":%.2f,\"speedup\":%.2f}\n",
             u->name, k->isa, mv, bytes / (mv * 1e6), ml, bytes / (ml * 1e6), ml / mv);
    else
      printf("%-10s f32 1M %-8s %8.3f ms %6.2f GB/s | libm %8.3f ms %6.2f GB/s | %5.1fx\n", u->name, k->isa, mv,
             bytes / (mv * 1e6), ml, bytes / (ml * 1e6), ml / mv);
  }
  free(x);
  free(y);
}

int main(int argc, char** argv) {
  int json = argc > 1 && strcmp(argv[1], "--json") == 0;
  size_t tbytes = (size_t)TN * TC * THW * 4;
  float* a = malloc(tbytes);
  float* b = malloc(N_ELEMS * 4);
  float* y = malloc(tbytes);
  for (size_t i = 0; i < tbytes / 4; i++) a[i] = (float)(i % 1000) * 0.25f;
  for (size_t i = 0; i < N_ELEMS; i++) b[i] = (float)(i % 77);
  memset(y, 0, tbytes);
  const weft_kernels* k = weft__kernels();
  static const struct {
    const char* name;
    int kind;
    double bytes;
  } cases[] = {
      {"memcpy f32 4M", MEMCPY, 2.0 * N_ELEMS * 4},
      {"copy f32 4M", COPY, 2.0 * N_ELEMS * 4},
      {"add f32 4M", ADD, 3.0 * N_ELEMS * 4},
      {"cast f32->f16 4M", CAST, N_ELEMS * 6.0},
      {"transpose [32,64,56,56] nchw->nhwc", TRANSPOSE, 2.0 * TN * TC * THW * 4},
      {"transpose x16 [32,64,56,56] nchw->nhwc", TRANSPOSE16, 2.0 * TN * TC * THW * 2},
      {"transpose x8 [32,64,56,56] nchw->nhwc", TRANSPOSE8, 2.0 * TN * TC * THW},
  };
  for (int threads = 1; threads <= 2; threads++) {
    weft_set_num_threads(threads);
    double memcpy_gbs = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      struct job j = {cases[c].kind, a, b, y, k};
      double ms = median_ms(&j);
      double gbs = cases[c].bytes / (ms * 1e6);
      if (cases[c].kind == MEMCPY) memcpy_gbs = gbs;
      if (json)
        printf("{\"name\":\"%s\",\"build\":\"%s\",\"threads\":%d,\"ms\":%.3f,\"GB/s\":%.2f,\"ratio\":%.3f}\n",
               cases[c].name, k->isa, weft_get_num_threads(), ms, gbs, gbs / memcpy_gbs);
      else
        printf("%-40s %-8s threads=%d %9.3f ms %7.2f GB/s  %5.2fx memcpy\n", cases[c].name, k->isa,
               weft_get_num_threads(), ms, gbs, gbs / memcpy_gbs);
    }
  }
  weft_set_num_threads(1);
  bench_unary(k, json);
  free(a);
  free(b);
  free(y);
  return 0;
}
