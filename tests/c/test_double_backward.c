/* Second derivatives through createGraph (issue 15), natively, so the ASan
 * and TSan builds cover the recorded backward ops: for a program f of one
 * float64 input x, F(x) = sum(grad_x f(x) * v) with the gradient made with
 * createGraph, and dF/dx from autograd against central differences of F
 * (select_backward, convolution_backward, the pool backward ops, CopySlices,
 * AsStridedBackward0), NCHW and channels_last; no leak. PyTorch's values and
 * node names: tests/js/double-backward.test.mjs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"
#include "test.h"
#include "weft/autograd.h"

static weft_tensor* W; /* conv2d's constant operand */

/* sum(y^p), y released */
static weft_tensor* sum_pow(weft_tensor* y, double p) {
  weft_tensor* q = y ? weft_pow_scalar(y, weft_scalar_double(p)) : NULL;
  weft_tensor* s = q ? weft_sum(q, (weft_dtype)-1) : NULL;
  weft_tensor_release(y);
  weft_tensor_release(q);
  return s;
}

static const int64_t ONE2[2] = {1, 1}, TWO2[2] = {2, 2}, ZERO2[2] = {0, 0};

static weft_tensor* p_select(weft_tensor* x) { return sum_pow(weft_select(x, 1, 2), 3); }
static weft_tensor* p_conv_input(weft_tensor* x) {
  return sum_pow(weft_conv2d(x, W, NULL, ONE2, 2, ONE2, 2, ONE2, 2, 1), 2);
}
static weft_tensor* p_conv_weight(weft_tensor* w) {
  return sum_pow(weft_conv2d(W, w, NULL, TWO2, 2, ONE2, 2, ONE2, 2, 2), 2);
}
static weft_tensor* p_max_pool(weft_tensor* x) {
  return sum_pow(weft_max_pool2d(x, TWO2, 2, NULL, 0, ZERO2, 2, ONE2, 2, false), 3);
}
static weft_tensor* p_avg_pool(weft_tensor* x) {
  const int64_t k[2] = {3, 3};
  return sum_pow(weft_avg_pool2d(x, k, 2, TWO2, 2, ONE2, 2, false, false, INT64_MIN), 2);
}
static weft_tensor* p_adaptive(weft_tensor* x) {
  const int64_t out[2] = {2, 3};
  return sum_pow(weft_adaptive_avg_pool2d(x, out, 2), 2);
}
/* c = x * 1, v = c[:, 1:3], then v.sin_() and sum(c^3) (CopySlices around
 * SinBackward0), or c.sin_() and sum(v^3) (v's grad_fn becomes AsStridedBackward0) */
static weft_tensor* sin_through_view(weft_tensor* x, bool write_view) {
  weft_tensor* c = weft_mul_scalar(x, weft_scalar_int(1));
  weft_tensor* v = c ? weft_narrow(c, 1, 1, 2) : NULL;
  weft_status s = v ? weft_sin_(write_view ? v : c) : weft_last_status();
  weft_tensor* kept = write_view ? c : v;
  weft_tensor_release(write_view ? v : c);
  if (s) {
    weft_tensor_release(kept);
    return NULL;
  }
  return sum_pow(kept, 3);
}
static weft_tensor* p_copy_slices(weft_tensor* x) { return sin_through_view(x, true); }
static weft_tensor* p_as_strided(weft_tensor* x) { return sin_through_view(x, false); }

typedef struct {
  const char* name;
  weft_tensor* (*f)(weft_tensor*);
  int64_t sizes[4];
  int ndim;
  bool cl;
} dd_case;

static weft_tensor* leaf_of(const double* vals, const dd_case* c) {
  weft_tensor* t = weft_empty(c->sizes, c->ndim, WEFT_FLOAT64, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  memcpy(weft_tensor_data_ptr(t), vals, sizeof(double) * (size_t)weft_tensor_numel(t));
  weft_tensor* r = c->cl ? weft_contiguous(t, WEFT_CHANNELS_LAST) : weft_tensor_retain(t);
  weft_tensor_release(t);
  weft_set_requires_grad(r, true);
  return r;
}

/* F(x) = sum(grad_x f(x) * v): a scalar that still requires grad */
static weft_tensor* objective(const dd_case* c, weft_tensor* x, const weft_tensor* v) {
  weft_tensor* y = c->f(x);
  weft_tensor* g = NULL;
  if (!y || weft_autograd_grad(&y, NULL, 1, &x, 1, false, true, false, &g) != WEFT_OK) {
    weft_tensor_release(y);
    return NULL;
  }
  weft_tensor* gv = weft_mul(g, v);
  weft_tensor* s = gv ? weft_sum(gv, (weft_dtype)-1) : NULL;
  weft_tensor_release(y);
  weft_tensor_release(g);
  weft_tensor_release(gv);
  return s;
}

static double objective_at(const dd_case* c, const double* vals, const weft_tensor* v) {
  weft_tensor* x = leaf_of(vals, c);
  weft_tensor* s = objective(c, x, v);
  double r = s ? weft_tensor_get_double(s, 0) : NAN;
  weft_tensor_release(s);
  weft_tensor_release(x);
  return r;
}

static void check_case(const dd_case* c) {
  int64_t n = 1;
  for (int d = 0; d < c->ndim; d++) n *= c->sizes[d];
  double* vals = malloc(sizeof(double) * (size_t)n);
  weft_tensor* vr = weft_randn(c->sizes, c->ndim, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor* xr = weft_randn(c->sizes, c->ndim, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  for (int64_t i = 0; i < n; i++) vals[i] = weft_tensor_get_double(xr, i);
  weft_tensor* x = leaf_of(vals, c);
  weft_tensor* s = objective(c, x, vr);
  weft_tensor* h = NULL;
  bool ok = s && weft_autograd_grad(&s, NULL, 1, &x, 1, false, false, false, &h) == WEFT_OK && h;
  if (!ok) fprintf(stderr, "  %s: %s\n", c->name, weft_last_error());
  weft_tensor* hc = ok ? weft_contiguous(h, WEFT_CONTIGUOUS_FORMAT) : NULL;
  for (int64_t j = 0; ok && j < n; j++) {
    const double e = 1e-6, x0 = vals[j];
    vals[j] = x0 + e;
    double up = objective_at(c, vals, vr);
    vals[j] = x0 - e;
    double down = objective_at(c, vals, vr);
    vals[j] = x0;
    double num = (up - down) / (2 * e), ana = weft_tensor_get_double(hc, j);
    if (!(fabs(num - ana) <= 1e-5 * (1 + fabs(num)))) {
      fprintf(stderr, "  %s [%lld]: analytic %g, numeric %g\n", c->name, (long long)j, ana, num);
      ok = false;
    }
  }
  CHECK(ok);
  weft_tensor* rel[] = {vr, xr, x, s, h, hc};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) weft_tensor_release(rel[i]);
  free(vals);
}

int main(void) {
  weft_manual_seed(15);
  const dd_case cases[] = {
      {"select", p_select, {3, 4}, 2, false},
      {"conv2d input", p_conv_input, {1, 2, 4, 4}, 4, false},
      {"conv2d input channels_last", p_conv_input, {1, 2, 4, 4}, 4, true},
      {"conv2d weight (groups 2, stride 2)", p_conv_weight, {4, 1, 3, 3}, 4, false},
      {"max_pool2d", p_max_pool, {1, 2, 4, 4}, 4, false},
      {"max_pool2d channels_last", p_max_pool, {1, 2, 4, 4}, 4, true},
      {"avg_pool2d", p_avg_pool, {1, 2, 5, 5}, 4, true},
      {"adaptive_avg_pool2d", p_adaptive, {1, 2, 5, 4}, 4, false},
      {"CopySlices", p_copy_slices, {3, 4}, 2, false},
      {"AsStridedBackward0", p_as_strided, {3, 4}, 2, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const int64_t sw[4] = {3, 2, 3, 3};
    W = weft_randn(sw, 4, WEFT_FLOAT64, WEFT_DEVICE_CPU);
    if (cases[i].f == p_conv_weight) {
      const int64_t sx[4] = {1, 2, 5, 5};
      weft_tensor_release(W);
      W = weft_randn(sx, 4, WEFT_FLOAT64, WEFT_DEVICE_CPU);
    }
    check_case(&cases[i]);
    weft_tensor_release(W);
  }
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
