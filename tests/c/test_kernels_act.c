/* The activation kernels (issue 23): the f32 SIMD kernels of vunary.c and
 * vunary_math.c against plain-C references on every backend (specials, the
 * tile sizes, in place, nothing written past n), then the ops on large
 * tensors (threaded, contiguous SIMD rows) and strided views (plain rows)
 * against the per-element formula, bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel_test_util.h"
#include "test.h"
#include "weft/weft.h"

#define MAXN 1100

static float special(void) {
  switch (kt_rand() % 12) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return 0.0f;
    case 4: return -0.0f;
    case 5: return (float)(int)(kt_rand() % 13) - 6.0f; /* the kinks: -3, 0, 3, 6 */
    default: return kt_randf(-12.0f, 12.0f);
  }
}

/* ---- references: PyTorch's scalar formulas, in float ---- */
static float r_hardtanh(float x, const struct weft_f32_unary_params* p) {
  float y = x < p->a ? p->a : x;
  return p->b < y ? p->b : y;
}
static float r_leaky_relu(float x, const struct weft_f32_unary_params* p) { return x > 0 ? x : x * p->a; }
static float r_hs(float x) {
  float y = x + 3.0f;
  y = y < 0.0f ? 0.0f : y;
  return 6.0f < y ? 6.0f : y;
}
static float r_hardsigmoid(float x, const struct weft_f32_unary_params* p) { (void)p; return r_hs(x) / 6.0f; }
static float r_hardswish(float x, const struct weft_f32_unary_params* p) { (void)p; return x * r_hs(x) / 6.0f; }

struct pcase {
  const char* name;
  size_t off;
  float (*ref)(float, const struct weft_f32_unary_params*);
};
#define PC(field, fn) {#field, offsetof(weft_kernels, field), fn}
static const struct pcase pcases[] = {
    PC(f32_vhardtanh, r_hardtanh), PC(f32_vleaky_relu, r_leaky_relu), PC(f32_vhardsigmoid, r_hardsigmoid),
    PC(f32_vhardswish, r_hardswish),
};
static const struct weft_f32_unary_params params[] = {
    {0, -1.0f, 1.0f, 0}, {0, 0.0f, 6.0f, 0}, {0, 0.01f, 0, 0}, {0, -0.5f, 2.5f, 0}, {0, 0.2f, 0.3f, 0}};

static void test_exact(void) {
  static float x[MAXN], y[MAXN + 8], ix[MAXN];
  for (int bk = 0; bk < KT_NBACKENDS; bk++) {
    const weft_kernels* k = kt_backend(bk);
    for (size_t c = 0; c < sizeof pcases / sizeof pcases[0]; c++) {
      weft_f32_vunary_fn* fn = *(weft_f32_vunary_fn* const*)((const char*)k + pcases[c].off);
      int ok = 1;
      for (size_t pi = 0; pi < sizeof params / sizeof params[0]; pi++)
        for (size_t si = 0; si < KT_NSIZES; si++) {
          size_t n = kt_sizes[si];
          const struct weft_f32_unary_params* p = &params[pi];
          for (size_t i = 0; i < n; i++) x[i] = special();
          for (size_t i = 0; i < n + 8; i++) y[i] = 4242.0f;
          fn(n, x, y, p);
          for (size_t i = 0; i < n; i++) {
            float want = pcases[c].ref(x[i], p);
            if (!kt_same_f32(y[i], want)) {
              if (ok) fprintf(stderr, "%s (%s) x=%a got %a want %a\n", pcases[c].name, k->isa, x[i], y[i], want);
              ok = 0;
            }
          }
          for (size_t i = n; i < n + 8; i++) ok &= y[i] == 4242.0f;
          memcpy(ix, x, n * 4);
          fn(n, ix, ix, p); /* in place */
          for (size_t i = 0; i < n; i++) ok &= kt_same_f32(ix[i], y[i]);
        }
      CHECK(ok);
    }
  }
}

/* ---- silu and elu: SIMD and scalar backends agree bit for bit, both
 * within a few ulp of the formula in double ---- */
static double d_silu(double x, const struct weft_f32_unary_params* p) { (void)p; return x / (1 + exp(-x)); }
static double d_elu(double x, const struct weft_f32_unary_params* p) {
  return x > 0 ? x * p->b : (exp(x * p->c) - 1) * ((double)p->a * p->b);
}
struct mcase {
  const char* name;
  size_t off;
  double (*ref)(double, const struct weft_f32_unary_params*);
};
static const struct mcase mcases[] = {
    {"f32_vsilu", offsetof(weft_kernels, f32_vsilu), d_silu},
    {"f32_velu", offsetof(weft_kernels, f32_velu), d_elu},
};
static const struct weft_f32_unary_params eparams[] = {{0, 1.0f, 1.0f, 1.0f}, {0, 1.6732632f, 1.0507010f, 1.0f},
                                                        {0, 0.5f, 2.0f, 0.25f}};

static void test_math(void) {
  static float x[MAXN], ya[MAXN + 8], yb[MAXN + 8];
  const weft_kernels *ka = kt_backend(0), *kb = kt_backend(1);
  for (size_t c = 0; c < sizeof mcases / sizeof mcases[0]; c++) {
    weft_f32_vunary_fn* fa = *(weft_f32_vunary_fn* const*)((const char*)ka + mcases[c].off);
    weft_f32_vunary_fn* fb = *(weft_f32_vunary_fn* const*)((const char*)kb + mcases[c].off);
    int ok = 1;
    for (size_t pi = 0; pi < 3; pi++)
      for (size_t si = 0; si < KT_NSIZES; si++) {
        size_t n = kt_sizes[si];
        const struct weft_f32_unary_params* p = &eparams[pi];
        for (size_t i = 0; i < n; i++) x[i] = si % 3 ? kt_randf(-30.0f, 30.0f) : special();
        for (size_t i = 0; i < n + 8; i++) ya[i] = yb[i] = 4242.0f;
        fa(n, x, ya, p);
        fb(n, x, yb, p);
        for (size_t i = 0; i < n; i++) {
          double want = mcases[c].ref(x[i], p);
          /* elu's exp(x) - 1 (PyTorch's) loses the low bits near 0: an absolute bound there */
          double tol = 4e-7 * fabs(want) + 4e-7 * (fabs(x[i]) < 1 ? 1 : 0) + 1e-30;
          int good = kt_same_f32(ya[i], yb[i]) &&
                     (isnan(want) ? isnan(ya[i]) : isinf(want) ? ya[i] == want : fabs(ya[i] - want) <= tol);
          if (!good && ok)
            fprintf(stderr, "%s x=%a simd %.9g scalar %.9g want %.9g\n", mcases[c].name, x[i], ya[i], yb[i], want);
          ok &= good;
        }
        for (size_t i = n; i < n + 8; i++) ok &= ya[i] == 4242.0f && yb[i] == 4242.0f;
      }
    CHECK(ok);
  }
}

/* ---- through the ops: a large contiguous tensor (threaded SIMD rows) and a
 * strided view (plain rows) give the per-element code's bits ---- */
static float hardtanh_1(float v) { const struct weft_f32_unary_params p = {0, -0.5f, 2.0f, 0}; return r_hardtanh(v, &p); }
/* the bounds through volatiles: with constant ones, emcc 3.1.6 -O2 folds x < 0 ? 0 : x into
 * f32.max, which makes relu6(-0.0) +0.0 (PyTorch and weft's kernels keep -0.0) */
static float relu6_1(float v) {
  volatile float lo = 0.0f, hi = 6.0f;
  const struct weft_f32_unary_params p = {0, lo, hi, 0};
  return r_hardtanh(v, &p);
}
static float leaky_1(float v) { const struct weft_f32_unary_params p = {0, 0.2f, 0, 0}; return r_leaky_relu(v, &p); }
static float hsig_1(float v) { return r_hardsigmoid(v, NULL); }
static float hswish_1(float v) { return r_hardswish(v, NULL); }
static float elu_1(float v) { const struct weft_f32_unary_params p = {0, 1.5f, 1.0f, 1.0f}; return weft__f32_elu_1(v, &p); }

static weft_tensor* run_op(int op, const weft_tensor* t) {
  switch (op) {
    case 0: return weft_hardtanh(t, weft_scalar_double(-0.5), weft_scalar_double(2.0));
    case 1: return weft_relu6(t);
    case 2: return weft_leaky_relu(t, weft_scalar_double(0.2));
    case 3: return weft_hardsigmoid(t);
    case 4: return weft_hardswish(t);
    case 5: return weft_silu(t);
    default: return weft_elu(t, weft_scalar_double(1.5), weft_scalar_int(1), weft_scalar_int(1));
  }
}
static float (*const op_ref[])(float) = {hardtanh_1, relu6_1, leaky_1, hsig_1, hswish_1, weft__f32_silu_1, elu_1};

static long compare(int op, const weft_tensor* in, const weft_tensor* out) {
  const int64_t *n = weft_tensor_sizes(in), *is = weft_tensor_strides(in), *os = weft_tensor_strides(out);
  const float *ip = weft_tensor_data_ptr(in), *op_ = weft_tensor_data_ptr(out);
  long bad = 0;
  for (int64_t i = 0; i < n[0]; i++)
    for (int64_t j = 0; j < n[1]; j++) bad += !kt_same_f32(op_[i * os[0] + j * os[1]], op_ref[op](ip[i * is[0] + j * is[1]]));
  return bad;
}

static void test_ops_paths(int threads) {
  const int64_t sz[2] = {512, 1030};
  weft_set_num_threads(threads);
  weft_tensor* base = weft_empty(sz, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  CHECK(base != NULL);
  if (!base) return;
  float* bp = weft_tensor_data_ptr(base);
  for (int64_t i = 0; i < sz[0] * sz[1]; i++) bp[i] = special();
  weft_tensor* strided = weft_slice(base, 1, 1, sz[1], 3);
  for (int op = 0; op < 7; op++) {
    const weft_tensor* ins[2] = {base, strided};
    for (int v = 0; v < 2; v++) {
      weft_tensor* r = run_op(op, ins[v]);
      CHECK(r != NULL);
      if (!r) continue;
      long bad = compare(op, ins[v], r);
      if (bad) fprintf(stderr, "op %d (%s, %d threads): %ld values differ\n", op, v ? "strided" : "contiguous", threads, bad);
      CHECK(bad == 0);
      weft_tensor_release(r);
    }
  }
  weft_tensor_release(strided);
  weft_tensor_release(base);
}

int main(void) {
  test_exact();
  test_math();
  test_ops_paths(1);
  test_ops_paths(2);
  TEST_REPORT();
}
