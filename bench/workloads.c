/* The benchmark workloads (see workloads.h). add and add_broadcast call the
 * dispatched op (add.out into a preallocated output); add_iter runs the
 * same add on a bare TensorIterator with the f32 kernels (contiguous rows ->
 * vadd, a broadcast operand -> vaddc), so the two show what the op's front
 * end costs. */
#include "workloads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "core/internal.h"
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"
#include "weft/weft.h"

#define N 32
#define C 64
#define HW (56 * 56)
#define NX ((int64_t)N * C * HW)
#define N4M 4194304
#define N16M 16777216
#define AM_ROWS 512
#define AM_COLS 1000

static struct {
  int ready;
  weft_tensor *x, *y_cl, *bias, *y_badd; /* W1, W3 */
  weft_tensor *a, *b, *y_add, *h16;      /* W2, W4 */
  char *raw_in, *raw_out;                /* memcpy ceilings */
  weft_tensor *big, *sum_out, *x_cl, *hw_out, *am_in, *am_out; /* reductions */
} S;

static weft_tensor* empty(const int64_t* sizes, int ndim, weft_dtype dt, weft_memory_format f) {
  return weft_empty(sizes, ndim, dt, WEFT_DEVICE_CPU, f);
}

static float* f32(const weft_tensor* t) { return weft_tensor_data_ptr(t); }

weft_status weft_bench_setup(void) {
  if (S.ready) return WEFT_OK;
  int64_t sx[] = {N, C, 56, 56}, sb[] = {C, 1, 1}, s4[] = {N4M};
  S.x = empty(sx, 4, WEFT_FLOAT32, WEFT_CONTIGUOUS_FORMAT);
  S.y_cl = empty(sx, 4, WEFT_FLOAT32, WEFT_CHANNELS_LAST);
  S.y_badd = empty(sx, 4, WEFT_FLOAT32, WEFT_CONTIGUOUS_FORMAT);
  S.bias = empty(sb, 3, WEFT_FLOAT32, WEFT_CONTIGUOUS_FORMAT);
  S.a = empty(s4, 1, WEFT_FLOAT32, WEFT_CONTIGUOUS_FORMAT);
  S.b = empty(s4, 1, WEFT_FLOAT32, WEFT_CONTIGUOUS_FORMAT);
  S.y_add = empty(s4, 1, WEFT_FLOAT32, WEFT_CONTIGUOUS_FORMAT);
  S.h16 = empty(s4, 1, WEFT_FLOAT16, WEFT_CONTIGUOUS_FORMAT);
  int64_t s16[] = {N16M}, shw[] = {N, C}, sam[] = {AM_ROWS, AM_COLS}, samo[] = {AM_ROWS};
  S.big = empty(s16, 1, WEFT_FLOAT32, WEFT_CONTIGUOUS_FORMAT);
  S.sum_out = empty(NULL, 0, WEFT_FLOAT32, WEFT_CONTIGUOUS_FORMAT);
  S.x_cl = empty(sx, 4, WEFT_FLOAT32, WEFT_CHANNELS_LAST);
  S.hw_out = empty(shw, 2, WEFT_FLOAT32, WEFT_CONTIGUOUS_FORMAT);
  S.am_in = empty(sam, 2, WEFT_FLOAT32, WEFT_CONTIGUOUS_FORMAT);
  S.am_out = empty(samo, 1, WEFT_INT64, WEFT_CONTIGUOUS_FORMAT);
  S.raw_in = malloc((size_t)NX * 4);
  S.raw_out = malloc((size_t)NX * 4);
  if (!S.x || !S.y_cl || !S.y_badd || !S.bias || !S.a || !S.b || !S.y_add || !S.h16 || !S.raw_in || !S.raw_out ||
      !S.big || !S.sum_out || !S.x_cl || !S.hw_out || !S.am_in || !S.am_out) {
    weft_bench_teardown();
    return weft__error(WEFT_OUT_OF_MEMORY, "bench: out of memory");
  }
  /* every page touched before timing */
  for (int64_t i = 0; i < NX; i++) f32(S.x)[i] = (float)(i % 1009) * 0.5f - 200.0f;
  for (int64_t i = 0; i < C; i++) f32(S.bias)[i] = (float)i * 0.25f;
  for (int64_t i = 0; i < N4M; i++) {
    f32(S.a)[i] = (float)(i % 997) * 0.125f;
    f32(S.b)[i] = (float)(i % 89) - 40.0f;
  }
  memset(f32(S.y_cl), 0, (size_t)NX * 4);
  memset(f32(S.y_badd), 0, (size_t)NX * 4);
  memset(f32(S.y_add), 0, (size_t)N4M * 4);
  memset(weft_tensor_data_ptr(S.h16), 0, (size_t)N4M * 2);
  memcpy(S.raw_in, f32(S.x), (size_t)NX * 4);
  for (int64_t i = 0; i < N16M; i++) f32(S.big)[i] = (float)(i % 1013) * 0.001f;
  weft_status cs = weft_copy_(S.x_cl, S.x);
  if (cs != WEFT_OK) {
    weft_bench_teardown();
    return cs;
  }
  for (int64_t i = 0; i < AM_ROWS * AM_COLS; i++) f32(S.am_in)[i] = (float)((i * 7919) % 10007);
  memset(S.raw_out, 0, (size_t)NX * 4);
  S.ready = 1;
  return WEFT_OK;
}

void weft_bench_teardown(void) {
  weft_tensor* all[] = {S.x, S.y_cl, S.y_badd, S.bias, S.a, S.b, S.y_add, S.h16,
                        S.big, S.sum_out, S.x_cl, S.hw_out, S.am_in, S.am_out};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) weft_tensor_release(all[i]);
  free(S.raw_in);
  free(S.raw_out);
  memset(&S, 0, sizeof S);
}

/* ---- ceilings ---- */

struct mc {
  char* dst;
  const char* src;
};
/* memcpy lowers to memory.copy in a wasm build with -mbulk-memory */
static weft_status memcpy_range(void* p, int64_t b, int64_t e) {
  struct mc* m = p;
  memcpy(m->dst + b, m->src + b, (size_t)(e - b));
  return WEFT_OK;
}
static weft_status par_memcpy(void* dst, const void* src, size_t n) {
  struct mc m = {dst, src};
  return weft_parallel_for(0, (int64_t)n, 1 << 20, memcpy_range, &m);
}

static weft_status add3_range(void* p, int64_t b, int64_t e) {
  (void)p;
  const float* x = f32(S.a);
  const float* y = f32(S.b);
  float* z = (float*)S.raw_out;
  int64_t i = b;
  for (; i + 16 <= e; i += 16) {
    wv128 x0 = wv_v128_load(x + i), x1 = wv_v128_load(x + i + 4), x2 = wv_v128_load(x + i + 8),
          x3 = wv_v128_load(x + i + 12);
    wv128 y0 = wv_v128_load(y + i), y1 = wv_v128_load(y + i + 4), y2 = wv_v128_load(y + i + 8),
          y3 = wv_v128_load(y + i + 12);
    wv_v128_store(z + i, wv_f32x4_add(x0, y0));
    wv_v128_store(z + i + 4, wv_f32x4_add(x1, y1));
    wv_v128_store(z + i + 8, wv_f32x4_add(x2, y2));
    wv_v128_store(z + i + 12, wv_f32x4_add(x3, y3));
  }
  for (; i < e; i++) z[i] = x[i] + y[i];
  return WEFT_OK;
}

/* ---- add on the iterator ---- */

/* data: out, a, b; strides[0..2] along dim 0, [3..5] along dim 1 */
static void add_loop(void* ctx, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  const weft_kernels* k = ctx;
  struct weft_f32_binary_params prm = {1.0f};
  char *y = data[0], *a = data[1], *b = data[2];
  for (int64_t j = 0; j < n1; j++, y += s[3], a += s[4], b += s[5]) {
    if (s[0] == 4 && s[1] == 4 && s[2] == 4) {
      k->f32_vadd((size_t)n0, (const float*)a, (const float*)b, (float*)y, &prm);
    } else if (s[0] == 4 && s[1] == 4 && s[2] == 0) {
      k->f32_vaddc((size_t)n0, (const float*)a, (const float*)b, (float*)y, &prm);
    } else if (s[0] == 4 && s[1] == 0 && s[2] == 4) {
      k->f32_vaddc((size_t)n0, (const float*)b, (const float*)a, (float*)y, &prm);
    } else {
      for (int64_t i = 0; i < n0; i++)
        *(float*)(y + i * s[0]) = *(const float*)(a + i * s[1]) + *(const float*)(b + i * s[2]);
    }
  }
}

static weft_status iter_add(weft_tensor* out, const weft_tensor* a, const weft_tensor* b) {
  weft_iter_config c = weft_iter_config_init();
  weft_iter_config_set_op_name(&c, "add");
  weft_iter_config_add_output(&c, out);
  weft_iter_config_add_input(&c, a);
  weft_iter_config_add_input(&c, b);
  weft_iter it;
  weft_status s = weft_iter_build(&c, &it);
  if (s != WEFT_OK) return s;
  s = weft_iter_for_each(&it, add_loop, (void*)weft__kernels(), WEFT_GRAIN_SIZE);
  weft_iter_destroy(&it);
  return s;
}

static weft_status op_add(weft_tensor* out, const weft_tensor* a, const weft_tensor* b) {
  weft_tensor* r = weft_add_out(a, b, weft_scalar_int(1), out);
  if (!r) return weft_last_status();
  weft_tensor_release(r);
  return WEFT_OK;
}

static weft_status done(weft_tensor* r) {
  if (!r) return weft_last_status();
  weft_tensor_release(r);
  return WEFT_OK;
}

weft_status weft_bench_run(int w) {
  static const int64_t hw[] = {2, 3};
  if (!S.ready) return weft__error(WEFT_INVALID_ARGUMENT, "bench: call weft_bench_setup first");
  switch (w) {
    case WEFT_BENCH_MEMCPY_X: return par_memcpy(S.raw_out, S.raw_in, (size_t)NX * 4);
    case WEFT_BENCH_MEMCPY_4M: return par_memcpy(S.raw_out, S.raw_in, (size_t)N4M * 4);
    case WEFT_BENCH_ADD3_CEILING: return weft_parallel_for(0, N4M, 65536, add3_range, NULL);
    case WEFT_BENCH_NCHW_TO_NHWC: return weft_copy_(S.y_cl, S.x);
    case WEFT_BENCH_NCHW_TO_NHWC_ALLOC: {
      weft_tensor* t = weft_contiguous(S.x, WEFT_CHANNELS_LAST);
      if (!t) return weft_last_status();
      weft_tensor_release(t);
      return WEFT_OK;
    }
    case WEFT_BENCH_ADD: return op_add(S.y_add, S.a, S.b);
    case WEFT_BENCH_BADD: return op_add(S.y_badd, S.x, S.bias);
    case WEFT_BENCH_ADD_ITER: return iter_add(S.y_add, S.a, S.b);
    case WEFT_BENCH_CAST_F16: return weft_copy_(S.h16, S.a);
    case WEFT_BENCH_SUM_16M: return done(weft_sum_out(S.big, NULL, 0, false, (weft_dtype)-1, S.sum_out));
    case WEFT_BENCH_SUM_HW: return done(weft_sum_out(S.x, hw, 2, false, (weft_dtype)-1, S.hw_out));
    case WEFT_BENCH_SUM_HW_CL: return done(weft_sum_out(S.x_cl, hw, 2, false, (weft_dtype)-1, S.hw_out));
    case WEFT_BENCH_ARGMAX: return done(weft_argmax_out(S.am_in, 1, false, S.am_out));
    case WEFT_BENCH_SOFTMAX: return done(weft_softmax(S.am_in, 1, (weft_dtype)-1));
    default: return weft__error(WEFT_INVALID_ARGUMENT, "bench: no workload %d", w);
  }
}

const char* weft_bench_name(int w) {
  static const char* const names[WEFT_BENCH_COUNT] = {
      "memcpy", "memcpy_4M", "add3_simd_ceiling", "nchw_to_nhwc", "nchw_to_nhwc_alloc", "add", "add_broadcast",
      "cast_f32_f16", "add_iter", "sum_16M", "sum_hw", "sum_hw_channels_last", "argmax_512x1000",
      "softmax_512x1000"};
  return w >= 0 && w < WEFT_BENCH_COUNT ? names[w] : NULL;
}

double weft_bench_bytes(int w) {
  switch (w) {
    case WEFT_BENCH_MEMCPY_X:
    case WEFT_BENCH_NCHW_TO_NHWC:
    case WEFT_BENCH_NCHW_TO_NHWC_ALLOC: return 2.0 * NX * 4;
    case WEFT_BENCH_BADD: return 2.0 * NX * 4 + C * 4;
    case WEFT_BENCH_MEMCPY_4M: return 2.0 * N4M * 4;
    case WEFT_BENCH_ADD3_CEILING:
    case WEFT_BENCH_ADD:
    case WEFT_BENCH_ADD_ITER: return 3.0 * N4M * 4;
    case WEFT_BENCH_CAST_F16: return (double)N4M * 6;
    case WEFT_BENCH_SUM_16M: return (double)N16M * 4;
    case WEFT_BENCH_SUM_HW:
    case WEFT_BENCH_SUM_HW_CL: return (double)NX * 4 + N * C * 4;
    case WEFT_BENCH_ARGMAX: return (double)AM_ROWS * AM_COLS * 4 + AM_ROWS * 8;
    case WEFT_BENCH_SOFTMAX: return 2.0 * AM_ROWS * AM_COLS * 4;
    default: return 0;
  }
}

int weft_bench_ceiling(int w) {
  switch (w) {
    case WEFT_BENCH_ADD3_CEILING:
    case WEFT_BENCH_ADD:
    case WEFT_BENCH_ADD_ITER: return WEFT_BENCH_ADD3_CEILING;
    case WEFT_BENCH_MEMCPY_4M:
    case WEFT_BENCH_CAST_F16: return WEFT_BENCH_MEMCPY_4M;
    default: return WEFT_BENCH_MEMCPY_X;
  }
}

int weft_bench_verify(void) {
  if (!S.ready) return -1;
  const float *x = f32(S.x), *y = f32(S.y_cl), *yb = f32(S.y_badd), *bias = f32(S.bias);
  for (int64_t i = 0; i < NX; i += 97) {
    int64_t n = i / (C * HW), c = i / HW % C, hw = i % HW;
    if (y[n * C * HW + hw * C + c] != x[i]) return WEFT_BENCH_NCHW_TO_NHWC + 1;
    if (yb[i] != x[i] + bias[c]) return WEFT_BENCH_BADD + 1;
  }
  /* reductions: float64 references (the last run of sum_hw / sum_hw_channels_last wrote hw_out) */
  double big = 0;
  for (int64_t i = 0; i < N16M; i++) big += f32(S.big)[i];
  if (fabs(f32(S.sum_out)[0] - big) > 1e-5 * big) return WEFT_BENCH_SUM_16M + 1;
  for (int64_t nc = 0; nc < N * C; nc += 13) {
    double r = 0;
    for (int64_t k = 0; k < HW; k++) r += x[nc * HW + k];
    if (fabs(f32(S.hw_out)[nc] - r) > 1e-4 * (fabs(r) + 1)) return WEFT_BENCH_SUM_HW_CL + 1;
  }
  for (int64_t row = 0; row < AM_ROWS; row++) {
    const float* p = f32(S.am_in) + row * AM_COLS;
    int64_t best = 0;
    for (int64_t k = 1; k < AM_COLS; k++)
      if (p[k] > p[best]) best = k;
    if (((const int64_t*)weft_tensor_data_ptr(S.am_out))[row] != best) return WEFT_BENCH_ARGMAX + 1;
  }
  weft_tensor* sm = weft_softmax(S.am_in, 1, (weft_dtype)-1);
  if (!sm) return WEFT_BENCH_SOFTMAX + 1;
  for (int64_t row = 0; row < AM_ROWS; row += 17) {
    double t = 0;
    for (int64_t k = 0; k < AM_COLS; k++) t += f32(sm)[row * AM_COLS + k];
    if (fabs(t - 1) > 1e-4) {
      weft_tensor_release(sm);
      return WEFT_BENCH_SOFTMAX + 1;
    }
  }
  weft_tensor_release(sm);
  const float *a = f32(S.a), *b = f32(S.b), *z = f32(S.y_add);
  const uint16_t* h = weft_tensor_data_ptr(S.h16);
  for (int64_t i = 0; i < N4M; i += 7) {
    if (z[i] != a[i] + b[i]) return WEFT_BENCH_ADD + 1;
    if (h[i] != weft__f32_to_f16(a[i])) return WEFT_BENCH_CAST_F16 + 1;
  }
  return 0;
}
