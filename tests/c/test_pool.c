/* 2-D pooling (issue 12): the PyTorch 1.13 cases of pool_cases.inc
 * (tests/fixtures/gen_pool_fixtures.py; the same cases as
 * tests/fixtures/pool.json) through the boxed dispatcher at 1 and 3 threads,
 * max_pool2d's cases also through max_pool2d_with_indices; registration;
 * Meta tensors; explain's path; then the driver on random geometries, both
 * formats, with the SIMD and the scalar kernels at 1 and 3 threads against
 * the plain reference loop (bit for bit, NaN as NaN, indices equal). */
#include <stdlib.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "fixture_util.h"
#include "ops/cpu/pool.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/explain.h"
#include "weft/parallel.h"

enum {
  W_BOOL = WEFT_BOOL, W_UINT8 = WEFT_UINT8, W_INT8 = WEFT_INT8, W_INT16 = WEFT_INT16, W_INT32 = WEFT_INT32,
  W_INT64 = WEFT_INT64, W_FLOAT16 = WEFT_FLOAT16, W_BFLOAT16 = WEFT_BFLOAT16, W_FLOAT32 = WEFT_FLOAT32,
  W_FLOAT64 = WEFT_FLOAT64
};

typedef struct {
  int dtype, ndim;
  int64_t size[5], stride[5];
  int first, count; /* storage values in pool_vals */
} pool_input;

typedef struct {
  const char* op;
  pool_input in;
  int64_t kernel[3];
  int nkernel; /* -1: not an argument of op */
  int64_t stride[3];
  int nstride;
  int64_t padding[3];
  int npadding;
  int64_t dilation[3];
  int ndilation;
  int64_t output_size[3];
  int noutput_size;
  int ceil_mode, count_include_pad;
  int64_t divisor_override; /* INT64_MIN: None */
  int out;                  /* out= dtype, -1: none */
  int indices_out;          /* max_pool2d_with_indices.out's indices= dtype, -1: none */
  int dtype;                /* -1: PyTorch raised `error` */
  int ndim;
  int64_t size[5], stride_r[5];
  int vals, nvals;
  int indices; /* first index value in pool_vals, -1: none */
  const char* error;
} pool_case;

#include "pool_cases.inc"

static weft_tensor* input_of(const pool_input* a) {
  return fx_make_tensor(pool_vals + a->first, a->count, (weft_dtype)a->dtype, a->size, a->stride, a->ndim, 0);
}

static weft_status push_list(weft_stack* st, const int64_t* v, int n) {
  return n < 0 ? WEFT_OK : weft_stack_push_int_list(st, v, n);
}

static weft_status push_args(const pool_case* c, weft_stack* st) {
  weft_tensor* x = input_of(&c->in);
  if (!x) return weft_last_status();
  weft_status s = weft_stack_push_tensor_owned(st, x);
  bool avg = strncmp(c->op, "avg", 3) == 0;
  if (!s) s = push_list(st, c->kernel, c->nkernel);
  if (!s) s = push_list(st, c->stride, c->nstride);
  if (!s) s = push_list(st, c->padding, c->npadding);
  if (!s) s = push_list(st, c->dilation, c->ndilation);
  if (!s && c->nkernel >= 0) s = weft_stack_push_bool(st, c->ceil_mode);
  if (!s && avg) s = weft_stack_push_bool(st, c->count_include_pad);
  if (!s && avg)
    s = c->divisor_override == INT64_MIN ? weft_stack_push_none(st) : weft_stack_push_int(st, c->divisor_override);
  if (!s) s = push_list(st, c->output_size, c->noutput_size);
  const int outs[2] = {c->out, c->indices_out};
  for (int i = 0; i < 2 && !s; i++) {
    if (outs[i] < 0) continue;
    int64_t zero = 0;
    weft_tensor* o = weft_empty(&zero, 1, (weft_dtype)outs[i], WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
    s = o ? weft_stack_push_tensor_owned(st, o) : weft_last_status();
  }
  return s;
}

static const char* check_result(const pool_case* c, const weft_tensor* r, char* buf, size_t cap) {
  return fx_check(r, (weft_dtype)c->dtype, c->ndim, c->size, c->stride_r, pool_vals + c->vals, c->nvals,
                  fx_tol((weft_dtype)c->dtype), buf, cap)
             ? NULL
             : buf;
}

static const char* check_idx(const pool_case* c, const weft_tensor* idx, char* buf, size_t cap) {
  return fx_check(idx, WEFT_INT64, c->ndim, c->size, c->stride_r, pool_vals + c->indices, c->nvals, 0, buf, cap)
             ? NULL
             : buf;
}

/* max_pool2d cases: the indices max_pool2d_with_indices gives, through its C entry point */
static const char* check_indices(const pool_case* c, char* buf, size_t cap) {
  weft_tensor* x = input_of(&c->in);
  weft_tensor2 r = {{NULL, NULL}};
  if (x)
    r = weft_max_pool2d_with_indices(x, c->kernel, c->nkernel, c->stride, c->nstride, c->padding, c->npadding,
                                     c->dilation, c->ndilation, c->ceil_mode);
  const char* bad = !r.t[0] ? "with_indices failed" : check_idx(c, r.t[1], buf, cap);
  weft_tensor_release(x);
  weft_tensor2_release(r);
  return bad;
}

static int replay(int ci) {
  const pool_case* c = &pool_cases[ci];
  weft_op* op = weft_op_find(c->op);
  weft_stack st;
  weft_stack_init(&st);
  const char* bad = op ? NULL : "no such op";
  if (!bad && push_args(c, &st) != WEFT_OK) bad = "arguments";
  char buf[256];
  if (!bad) {
    weft_status s = weft_op_call_boxed(op, &st);
    if (c->dtype < 0) bad = s == WEFT_OK ? "expected an error" : fx_error_has(c->error) ? NULL : "message";
    else if (s != WEFT_OK) bad = "unexpected error";
    else if (strncmp(c->op, "max_pool2d_with_indices", 23) == 0) { /* (values, indices) on the stack */
      bad = check_result(c, weft_stack_peek(&st, 1)->u.t, buf, sizeof buf);
      if (!bad) bad = check_idx(c, weft_stack_peek(&st, 0)->u.t, buf, sizeof buf);
    } else {
      bad = check_result(c, weft_stack_peek(&st, 0)->u.t, buf, sizeof buf);
    }
  }
  if (!bad && c->indices >= 0 && strcmp(c->op, "max_pool2d") == 0) bad = check_indices(c, buf, sizeof buf);
  if (bad)
    fprintf(stderr, "case %d %s: %s (last error: %s; want %s)\n", ci, c->op, bad, weft_last_error(),
            c->error ? c->error : "a result");
  weft_stack_clear(&st);
  return bad != NULL;
}

FX_REPLAY_HELPERS(pool_cases)

/* The backward ops' cases are tests/fixtures/conv_grad.json (through
 * autograd, tests/js/conv-grad.test.mjs) and test_backward_ops below. */
static int forward_cases_of(const char* name) { return strstr(name, "_backward") ? 1 : cases_of(name); }

static void test_registration(void) {
#define WEFT_OP(cname, schema, ...) schema,
  static const char* const schemas[] = {
#include "ops/pool.def"
  };
#undef WEFT_OP
  CHECK(fx_check_ops(schemas, sizeof schemas / sizeof schemas[0], forward_cases_of) == 0);
}

static void test_meta(void) {
  int64_t sz[4] = {2, 3, 9, 9}, k[1] = {3}, s[1] = {2}, p[1] = {1}, d[1] = {1};
  weft_tensor* x = weft_empty(sz, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CHANNELS_LAST);
  weft_tensor* r = weft_max_pool2d(x, k, 1, s, 1, p, 1, d, 1, true);
  CHECK(r && weft_tensor_device(r) == WEFT_DEVICE_META);
  if (r) {
    CHECK_SIZES(r, 2, 3, 5, 5);
    CHECK_STRIDES(r, 75, 1, 15, 3);
  }
  weft_tensor_release(r);
  r = weft_avg_pool2d(x, k, 1, s, 1, p, 1, false, true, INT64_MIN);
  CHECK(r && weft_tensor_device(r) == WEFT_DEVICE_META);
  weft_tensor_release(r);
  const int64_t os[2] = {2, 3};
  r = weft_adaptive_avg_pool2d(x, os, 2);
  if (r) CHECK_SIZES(r, 2, 3, 2, 3);
  weft_tensor_release(r);
  int64_t big[1] = {12};
  CHECK(!weft_max_pool2d(x, big, 1, s, 0, p, 1, d, 1, false));
  CHECK_ERROR_HAS("Output size is too small");
  weft_tensor_release(x);
}

/* explain() names the driver's path and runs nothing */
static void test_explain(void) {
  int64_t sz[4] = {1, 4, 8, 8};
  weft_tensor* x = weft_empty(sz, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST);
  weft_op* op = weft_op_find("aten::max_pool2d");
  weft_stack st;
  weft_stack_init(&st);
  int64_t k[1] = {2};
  CHECK(weft_stack_push_tensor(&st, x) == WEFT_OK);
  weft_stack_push_int_list(&st, k, 1);
  weft_stack_push_int_list(&st, k, 0);
  k[0] = 0;
  weft_stack_push_int_list(&st, k, 1);
  k[0] = 1;
  weft_stack_push_int_list(&st, k, 1);
  weft_stack_push_bool(&st, false);
  char* json = NULL;
  CHECK(weft_explain_boxed(op, &st, &json) == WEFT_OK);
  CHECK(json && strstr(json, "\"path\":\"nhwc\"") && strstr(json, "\"memoryFormat\":\"channels_last\""));
  free(json);
  weft_stack_clear(&st);
  weft_tensor_release(x);
}

/* ---- the driver against the reference ---- */

static uint32_t rng = 12345;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}
static int64_t pick(int64_t lo, int64_t hi) { return lo + (int64_t)(next() % (uint32_t)(hi - lo + 1)); }

static int64_t out_len(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil) {
  int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
  if (num < 0) return 0;
  int64_t o = num / s + 1;
  if (ceil && (o - 1) * s >= in + p) o--;
  return o;
}

static bool same_f32(float a, float b) { return (a != a && b != b) || memcmp(&a, &b, 4) == 0; }

/* a random geometry of kind k; false when it has no output */
static bool random_geometry(weft_pool_kind kind, weft_pool2d* g) {
  memset(g, 0, sizeof *g);
  g->kind = kind;
  g->n = pick(1, 2);
  g->c = pick(1, 19);
  g->h = pick(1, 12);
  g->w = pick(1, 41);
  g->channels_last = next() & 1;
  if (kind == WEFT_POOL_ADAPTIVE_AVG) {
    g->oh = pick(1, 7);
    g->ow = pick(1, 9);
    return true;
  }
  g->kh = pick(1, 4);
  g->kw = pick(1, 4);
  g->sh = pick(1, 3);
  g->sw = (next() & 1) ? pick(1, 2) : pick(1, 4);
  g->ph = pick(0, g->kh / 2);
  g->pw = pick(0, g->kw / 2);
  g->dh = g->dw = 1;
  if (kind == WEFT_POOL_MAX && next() % 3 == 0) g->dh = pick(1, 3), g->dw = pick(1, 3);
  g->count_include_pad = next() & 1;
  g->divisor_override = next() % 5 == 0 ? pick(1, 7) : 0;
  bool ceil = next() & 1;
  g->oh = out_len(g->h, g->kh, g->ph, g->sh, g->dh, ceil);
  g->ow = out_len(g->w, g->kw, g->pw, g->sw, g->dw, ceil);
  return g->oh > 0 && g->ow > 0;
}

static int check_driver_once(const weft_pool2d* g, const weft_kernels* kt, bool with_idx) {
  int64_t nx = g->n * g->c * g->h * g->w, ny = g->n * g->c * g->oh * g->ow;
  float* x = malloc(sizeof(float) * (size_t)nx);
  float *y = malloc(sizeof(float) * (size_t)ny), *want = malloc(sizeof(float) * (size_t)ny);
  int64_t *iy = malloc(sizeof(int64_t) * (size_t)ny), *iwant = malloc(sizeof(int64_t) * (size_t)ny);
  for (int64_t i = 0; i < nx; i++) {
    uint32_t r = next() % 64;
    x[i] = r == 0 ? NAN : r == 1 ? -INFINITY : (float)((int)(next() % 33) - 16) / 8.0f;
  }
  weft__pool2d_reference(g, WEFT_FLOAT32, x, want, with_idx ? iwant : NULL);
  const char* path;
  int bad = weft__pool2d_run(kt, g, WEFT_FLOAT32, x, y, with_idx ? iy : NULL, &path) != WEFT_OK;
  for (int64_t i = 0; i < ny && !bad; i++) {
    bad = !same_f32(y[i], want[i]) || (with_idx && iy[i] != iwant[i]);
    if (bad)
      fprintf(stderr, "driver %s kind %d path %s [%lld,%lld,%lld,%lld] k %lldx%lld s %lldx%lld p %lldx%lld d %lldx%lld: "
              "out %lld got %g/%lld want %g/%lld\n", kt->isa, (int)g->kind, path, (long long)g->n, (long long)g->c,
              (long long)g->h, (long long)g->w, (long long)g->kh, (long long)g->kw, (long long)g->sh, (long long)g->sw,
              (long long)g->ph, (long long)g->pw, (long long)g->dh, (long long)g->dw, (long long)i, y[i],
              with_idx ? (long long)iy[i] : 0LL, want[i], with_idx ? (long long)iwant[i] : 0LL);
  }
  free(x);
  free(y);
  free(want);
  free(iy);
  free(iwant);
  return bad;
}

static void test_driver(void) {
  const weft_kernels* tables[2] = {weft__kernels(), weft__kernels_scalar()};
  int failed = 0, runs = 0;
  for (int it = 0; it < 400; it++) {
    weft_pool2d g;
    weft_pool_kind kind = (weft_pool_kind)(it % 3);
    if (!random_geometry(kind, &g)) continue;
    bool idx = kind == WEFT_POOL_MAX && (it & 4);
    for (int t = 0; t < 2; t++)
      for (int th = 1; th <= 3; th += 2) {
        weft_set_num_threads(th);
        failed += check_driver_once(&g, tables[t], idx);
        runs++;
      }
  }
  weft_set_num_threads(1);
  printf("driver: %d runs, %d failed\n", runs, failed);
  CHECK(failed == 0);
}

/* Backward (issue 15): pooling is linear in x for fixed windows (max: for
 * fixed indices), so the driver's gx must satisfy the adjoint identity
 * <gy, pool(x)> == <gx, x> for any x; float64 on sixteenths, with random
 * geometries in both formats; 1 and 3 threads bit for bit equal. */
static int check_backward_once(const weft_pool2d* g) {
  int64_t nx = g->n * g->c * g->h * g->w, ny = g->n * g->c * g->oh * g->ow;
  double *x = malloc(8 * (size_t)nx), *y = malloc(8 * (size_t)ny), *gy = malloc(8 * (size_t)ny);
  double *gx1 = malloc(8 * (size_t)nx), *gx3 = malloc(8 * (size_t)nx);
  int64_t* idx = malloc(8 * (size_t)ny);
  for (int64_t i = 0; i < nx; i++) x[i] = (double)((int)(next() % 33) - 16) / 8.0;
  for (int64_t i = 0; i < ny; i++) gy[i] = (double)((int)(next() % 33) - 16) / 8.0;
  bool max = g->kind == WEFT_POOL_MAX;
  weft__pool2d_reference(g, WEFT_FLOAT64, x, y, max ? idx : NULL);
  weft_set_num_threads(1);
  int bad = weft__pool2d_backward(g, WEFT_FLOAT64, gy, max ? idx : NULL, gx1) != WEFT_OK;
  weft_set_num_threads(3);
  bad += weft__pool2d_backward(g, WEFT_FLOAT64, gy, max ? idx : NULL, gx3) != WEFT_OK;
  weft_set_num_threads(1);
  double lhs = 0, rhs = 0, scale = 0;
  for (int64_t i = 0; i < ny; i++) lhs += gy[i] * y[i], scale += fabs(gy[i] * y[i]);
  for (int64_t i = 0; i < nx; i++) rhs += gx1[i] * x[i];
  bad += fabs(lhs - rhs) > 1e-12 * (scale + 1);
  bad += memcmp(gx1, gx3, 8 * (size_t)nx) != 0;
  if (bad)
    fprintf(stderr, "backward kind %d cl %d [%lld,%lld,%lld,%lld] k %lldx%lld s %lldx%lld p %lldx%lld: %g vs %g\n",
            (int)g->kind, (int)g->channels_last, (long long)g->n, (long long)g->c, (long long)g->h, (long long)g->w,
            (long long)g->kh, (long long)g->kw, (long long)g->sh, (long long)g->sw, (long long)g->ph,
            (long long)g->pw, lhs, rhs);
  free(x), free(y), free(gy), free(gx1), free(gx3), free(idx);
  return bad;
}

static void test_backward_driver(void) {
  int failed = 0, runs = 0;
  for (int it = 0; it < 300; it++) {
    weft_pool2d g;
    if (!random_geometry((weft_pool_kind)(it % 3), &g)) continue;
    failed += check_backward_once(&g);
    runs++;
  }
  printf("backward: %d runs, %d failed\n", runs, failed);
  CHECK(failed == 0 && runs > 200);
}

/* The backward ops on a 1 x 1 x 4 x 4 input of 0..15, in both formats:
 * max 2x2 sends each gradient to its window's last element, avg spreads a
 * quarter, adaptive 2x2 the same; a grad_output of the wrong size is
 * PyTorch's message; Meta gives the input's shape and format. */
static void test_backward_ops(void) {
  const int64_t sx[4] = {1, 1, 4, 4}, sy[4] = {1, 1, 2, 2}, k[1] = {2}, z[1] = {0}, one[1] = {1};
  weft_tensor* base = weft_arange(0, 16, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* x = base ? weft_view(base, sx, 4) : NULL;
  weft_tensor* gy = weft_full(sy, 4, 4.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor2 mi = weft_max_pool2d_with_indices(x, k, 1, k, 1, z, 1, one, 1, false);
  weft_tensor* gmax = weft_max_pool2d_with_indices_backward(gy, x, k, 1, k, 1, z, 1, one, 1, false, mi.t[1]);
  weft_tensor* gavg = weft_avg_pool2d_backward(gy, x, k, 1, k, 1, z, 1, false, true, INT64_MIN);
  weft_tensor* gad = weft_op__adaptive_avg_pool2d_backward(gy, x);
  CHECK(gmax && gavg && gad);
  if (gmax && gavg && gad) {
    const float* m = weft_tensor_data_ptr(gmax);
    const float* a = weft_tensor_data_ptr(gavg);
    const float* d = weft_tensor_data_ptr(gad);
    int bad = 0;
    for (int i = 0; i < 16; i++) {
      bad += m[i] != ((i / 4) % 2 == 1 && i % 2 == 1 ? 4.0f : 0.0f);
      bad += a[i] != 1.0f || d[i] != 1.0f;
    }
    CHECK(bad == 0);
  }
  const int64_t sbad[4] = {1, 1, 3, 2};
  weft_tensor* gbad = weft_full(sbad, 4, 1.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(!weft_avg_pool2d_backward(gbad, x, k, 1, k, 1, z, 1, false, true, INT64_MIN));
  CHECK_ERROR_HAS("avg_pool2d_backward: Expected a tensor of dimension 4 and tensor.size[2] == 2 but got: dimension 4 "
                  "and tensor.size[2] = 3");
  weft_tensor* xm = weft_empty(sx, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CHANNELS_LAST);
  weft_tensor* gm = weft_empty(sy, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CHANNELS_LAST);
  weft_tensor* rm = weft_avg_pool2d_backward(gm, xm, k, 1, k, 1, z, 1, false, true, INT64_MIN);
  CHECK(rm && weft_tensor_device(rm) == WEFT_DEVICE_META);
  weft_tensor* list[] = {base, x, gy, mi.t[0], mi.t[1], gmax, gavg, gad, gbad, xm, gm, rm};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
}

int main(void) {
  weft_set_num_threads(1);
  replay_all("1 thread");
  weft_set_num_threads(3);
  replay_all("3 threads");
  weft_set_num_threads(1);
  test_registration();
  test_meta();
  test_explain();
  test_driver();
  test_backward_driver();
  test_backward_ops();
  TEST_REPORT();
}
