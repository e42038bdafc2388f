/* Autograd (issue 15): the engine (seed 004's program against PyTorch 1.13's
 * numbers, diamonds, retain_graph, grad(), higher order), version counters,
 * grad mode, refusals, and a float64 finite-difference gradcheck of every
 * formula over broadcast and non-contiguous inputs. */
#include <stdlib.h>

#include "ops/ops.h"
#include "test.h"

static weft_tensor* from(const double* v, const int64_t* sizes, int64_t ndim, weft_dtype dt) {
  weft_tensor* t = weft_full(sizes, ndim, 0.0, dt, WEFT_DEVICE_CPU);
  int64_t n = weft_tensor_numel(t);
  for (int64_t i = 0; i < n; i++) {
    if (dt == WEFT_FLOAT64) ((double*)weft_tensor_data_ptr(t))[i] = v[i];
    else ((float*)weft_tensor_data_ptr(t))[i] = (float)v[i];
  }
  return t;
}

static double at(const weft_tensor* t, int64_t i) { return weft_tensor_get_double(t, i); }

static bool close_to(const weft_tensor* t, const double* want, int64_t n, double tol) {
  if (!t || weft_tensor_numel(t) != n) return false;
  for (int64_t i = 0; i < n; i++)
    if (fabs(at(t, i) - want[i]) > tol * (1 + fabs(want[i]))) {
      fprintf(stderr, "  [%lld] %g != %g\n", (long long)i, at(t, i), want[i]);
      return false;
    }
  return true;
}

static const int64_t S22[] = {2, 2};
static const weft_scalar ONE = {WEFT_SCALAR_INT, {.i = 1}};

/* Seed 004: a = mm(t0, t1); b = a + t1; c = b + t0; d = sin(c); e = d.mean(). */
static void test_seed_program(void) {
  const double v0[] = {0.1, -0.2, 0.3, 0.4}, v1[] = {0.5, 0.6, -0.7, 0.8};
  weft_tensor *t0 = from(v0, S22, 2, WEFT_FLOAT32), *t1 = from(v1, S22, 2, WEFT_FLOAT32);
  CHECK(weft_set_requires_grad(t0, true) == WEFT_OK && weft_set_requires_grad(t1, true) == WEFT_OK);
  weft_tensor* a = weft_mm(t0, t1);
  weft_tensor* b = weft_add(a, t1, ONE);
  weft_tensor* c = weft_add(b, t0, ONE);
  weft_tensor* d = weft_sin(c);
  weft_tensor* e = weft_mean(d, (weft_dtype)-1);
  CHECK(e && weft_requires_grad(e) && !weft_is_leaf(e));
  CHECK(strcmp(weft_node_name(weft_grad_fn(e)), "MeanBackward0") == 0);
  CHECK(strcmp(weft_node_name(weft_grad_fn(d)), "SinBackward0") == 0);
  CHECK(strcmp(weft_node_name(weft_node_next(weft_grad_fn(d), 0, NULL)), "AddBackward0") == 0);
  CHECK(strcmp(weft_node_name(weft_node_next(weft_grad_fn(a), 0, NULL)), "AccumulateGrad") == 0);
  CHECK(weft_node_variable(weft_node_next(weft_grad_fn(a), 0, NULL)) == t0);
  CHECK(weft_node_sequence_nr(weft_grad_fn(e)) > weft_node_sequence_nr(weft_grad_fn(a)));
  CHECK(weft_backward(&e, NULL, 1, false, false) == WEFT_OK);
  /* torch 1.13, the same program and inputs */
  const double g0[] = {0.40724247694015503, 0.3067285120487213, 0.30422598123550415, -0.20897124707698822};
  const double g1[] = {0.25826799869537354, 0.2530542016029358, 0.2667902112007141, -0.09286237508058548};
  weft_tensor *gt0 = weft_tensor_grad(t0), *gt1 = weft_tensor_grad(t1);
  CHECK(close_to(gt0, g0, 4, 1e-6));
  CHECK(close_to(gt1, g1, 4, 1e-6));
  CHECK(weft_tensor_grad(a) == NULL); /* non-leaf without retain_grad */
  /* the graph is freed: a second pass through saved tensors fails */
  CHECK(weft_backward(&e, NULL, 1, false, false) != WEFT_OK);
  CHECK_ERROR_HAS("Trying to backward through the graph a second time");
  weft_tensor* all[] = {t0, t1, a, b, c, d, e, gt0, gt1};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) weft_tensor_release(all[i]);
}

/* y = x*x + x (x reached twice, a diamond); retain_graph lets backward run twice and accumulate. */
static void test_accumulation_and_retain(void) {
  const double v[] = {1, 2, 3, 4};
  weft_tensor* x = from(v, S22, 2, WEFT_FLOAT32);
  weft_set_requires_grad(x, true);
  weft_tensor* sq = weft_mul(x, x);
  weft_tensor* y = weft_add(sq, x, ONE);
  weft_tensor* s = weft_sum(y, (weft_dtype)-1);
  CHECK(weft_retain_grad(y) == WEFT_OK);
  CHECK(weft_backward(&s, NULL, 1, true, false) == WEFT_OK);
  const double g[] = {3, 5, 7, 9}, ones[] = {1, 1, 1, 1};
  weft_tensor* gx = weft_tensor_grad(x);
  CHECK(close_to(gx, g, 4, 0));
  weft_tensor* gy = weft_tensor_grad(y);
  CHECK(close_to(gy, ones, 4, 0));
  weft_tensor_release(gx);
  weft_tensor_release(gy);
  CHECK(weft_backward(&s, NULL, 1, false, false) == WEFT_OK);
  const double g2[] = {6, 10, 14, 18};
  gx = weft_tensor_grad(x);
  CHECK(close_to(gx, g2, 4, 0));
  weft_tensor_release(gx);
  /* non-scalar root without a gradient; wrong-shaped gradient */
  CHECK(weft_backward(&y, NULL, 1, false, false) != WEFT_OK);
  CHECK_ERROR_HAS("grad can be implicitly created only for scalar outputs");
  CHECK(weft_backward(&y, &s, 1, false, false) != WEFT_OK);
  CHECK_ERROR_HAS("Mismatch in shape: grad_output[0] has a shape of [] and output[0] has a shape of [2, 2]");
  weft_tensor* plain = weft_full(S22, 2, 1.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(weft_backward(&plain, NULL, 1, false, false) != WEFT_OK);
  CHECK_ERROR_HAS("does not require grad and does not have a grad_fn");
  weft_tensor* all[] = {x, sq, y, s, plain};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) weft_tensor_release(all[i]);
}

static void test_versions_and_modes(void) {
  const double v[] = {0.5, 1, 1.5, 2};
  weft_tensor* x = from(v, S22, 2, WEFT_FLOAT32);
  weft_set_requires_grad(x, true);
  /* in-place on a leaf that requires grad */
  CHECK(weft_mul_scalar_(x, weft_scalar_double(2)) != WEFT_OK);
  CHECK_ERROR_HAS("a leaf Variable that requires grad is being used in an in-place operation.");
  /* ... allowed under no-grad, and it bumps the version */
  uint32_t v0 = weft_tensor_version(x);
  bool was = weft_set_grad_enabled(false);
  CHECK(was && !weft_grad_enabled());
  weft_tensor* ng = weft_mul(x, x);
  CHECK(ng && !weft_requires_grad(ng) && weft_grad_fn(ng) == NULL);
  CHECK(weft_mul_scalar_(x, weft_scalar_double(1)) == WEFT_OK);
  weft_set_grad_enabled(true);
  CHECK(weft_tensor_version(x) == v0 + 1);
  /* a saved tensor modified in place */
  weft_tensor* w = weft_full(S22, 2, 3.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* y = weft_mul(x, w); /* saves w */
  weft_tensor* view = weft_t(w);   /* a view shares the counter */
  CHECK(weft_add_scalar_(view, weft_scalar_int(1), ONE) == WEFT_OK);
  weft_tensor* s = weft_sum(y, (weft_dtype)-1);
  CHECK(weft_backward(&s, NULL, 1, false, false) != WEFT_OK);
  CHECK_ERROR_HAS("one of the variables needed for gradient computation has been modified by an inplace "
                  "operation: [float32 [2, 2]] is at version ");
  CHECK_ERROR_HAS("instead. (needed by MulBackward0)");
  /* ops without a formula refuse instead of returning a wrong gradient */
  weft_tensor* fl = weft_floor_divide(x, x);
  CHECK(fl == NULL);
  CHECK_ERROR_HAS("the derivative for 'floor_divide' is not implemented.");
  /* in-place on a non-leaf: its history continues at the write's node */
  weft_tensor* y2 = weft_mul(x, x);
  CHECK(weft_add_scalar_(y2, weft_scalar_int(1), ONE) == WEFT_OK);
  CHECK(weft_grad_fn(y2) && strcmp(weft_node_name(weft_grad_fn(y2)), "AddBackward0") == 0);
  CHECK(strcmp(weft_node_name(weft_node_next(weft_grad_fn(y2), 0, NULL)), "MulBackward0") == 0);
  /* an op without a formula still refuses in place */
  CHECK(weft_floor_divide_(y2, x) != WEFT_OK);
  CHECK_ERROR_HAS("the derivative for 'floor_divide_' is not implemented");
  /* requires_grad rules */
  weft_tensor* idx = weft_full(S22, 2, 1.0, WEFT_INT64, WEFT_DEVICE_CPU);
  CHECK(weft_set_requires_grad(idx, true) != WEFT_OK);
  CHECK_ERROR_HAS("only Tensors of floating point dtype can require gradients");
  CHECK(weft_set_requires_grad(y2, false) != WEFT_OK);
  CHECK_ERROR_HAS("you can only change requiresGrad flags of leaf variables.");
  weft_tensor* det = weft_detach(y2);
  CHECK(det && !weft_requires_grad(det) && weft_is_leaf(det));
  CHECK(weft_detach_(y2) == WEFT_OK && weft_is_leaf(y2) && !weft_requires_grad(y2));
  weft_tensor* all[] = {x, ng, w, y, view, s, y2, idx, det};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) weft_tensor_release(all[i]);
}

/* grad() leaves .grad alone; create_graph gives second derivatives. */
static void test_grad_and_higher_order(void) {
  const double v[] = {0.5, 1, 1.5, 2};
  weft_tensor* x = from(v, S22, 2, WEFT_FLOAT64);
  weft_set_requires_grad(x, true);
  weft_tensor* x3 = weft_pow_scalar(x, weft_scalar_int(3));
  weft_tensor* s = weft_sum(x3, (weft_dtype)-1);
  weft_tensor* g = NULL;
  CHECK(weft_autograd_grad(&s, NULL, 1, &x, 1, false, true, false, &g) == WEFT_OK);
  const double d1[] = {0.75, 3, 6.75, 12}, d2[] = {3, 6, 9, 12};
  CHECK(close_to(g, d1, 4, 1e-12));
  CHECK(weft_tensor_grad(x) == NULL);
  CHECK(g && weft_requires_grad(g));
  weft_tensor* gs = weft_sum(g, (weft_dtype)-1);
  weft_tensor* gg = NULL;
  CHECK(weft_autograd_grad(&gs, NULL, 1, &x, 1, false, false, false, &gg) == WEFT_OK);
  CHECK(close_to(gg, d2, 4, 1e-12));
  /* an input the outputs do not depend on */
  weft_tensor* z = from(v, S22, 2, WEFT_FLOAT64);
  weft_set_requires_grad(z, true);
  weft_tensor* xx = weft_mul(x, x);
  weft_tensor* s2 = weft_sum(xx, (weft_dtype)-1);
  weft_tensor* r = NULL;
  CHECK(weft_autograd_grad(&s2, NULL, 1, &z, 1, true, false, false, &r) != WEFT_OK);
  CHECK_ERROR_HAS("appears to not have been used in the graph");
  CHECK(weft_autograd_grad(&s2, NULL, 1, &z, 1, false, false, true, &r) == WEFT_OK && r == NULL);
  weft_tensor* all[] = {x, x3, s, g, gs, gg, z, xx, s2};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) weft_tensor_release(all[i]);
}

/* ---- gradcheck: analytic vs central differences, float64 ---- */
typedef weft_tensor* (*fn_t)(weft_tensor* const* in);
#define F(name, expr) static weft_tensor* f_##name(weft_tensor* const* in) { return expr; }
static const int64_t d0[] = {0}, d1[] = {1}, dm1[] = {-1}, d01[] = {0, 1}, perm[] = {2, 0, 1};
static const int64_t sz6[] = {6, 4}, sz243[] = {2, 4, 3};
F(add, weft_add(in[0], in[1], weft_scalar_double(0.5)))
F(add_scalar, weft_add_scalar(in[0], weft_scalar_double(2), ONE))
F(sub, weft_sub(in[0], in[1], weft_scalar_int(2)))
F(sub_scalar, weft_sub_scalar(in[0], weft_scalar_double(2), ONE))
F(mul, weft_mul(in[0], in[1]))
F(mul_scalar, weft_mul_scalar(in[0], weft_scalar_double(-1.5)))
F(div, weft_div(in[0], in[1]))
F(div_scalar, weft_div_scalar(in[0], weft_scalar_double(4)))
F(pow, weft_pow(in[0], in[1]))
F(pow_scalar, weft_pow_scalar(in[0], weft_scalar_double(2.5)))
F(maximum, weft_maximum(in[0], in[1]))
F(minimum, weft_minimum(in[0], in[1]))
F(neg, weft_neg(in[0]))
F(exp, weft_exp(in[0]))
F(log, weft_log(in[0]))
F(sqrt, weft_sqrt(in[0]))
F(rsqrt, weft_rsqrt(in[0]))
F(sin, weft_sin(in[0]))
F(cos, weft_cos(in[0]))
F(tanh, weft_tanh(in[0]))
F(sigmoid, weft_sigmoid(in[0]))
F(relu, weft_relu(in[0]))
F(abs, weft_abs(in[0]))
F(reciprocal, weft_reciprocal(in[0]))
F(view, weft_view(in[0], sz6, 2))
F(reshape, weft_reshape(in[0], sz243, 3))
F(permute, weft_permute(in[0], perm, 3))
F(transpose, weft_transpose(in[0], 0, 2))
F(t, weft_t(in[0]))
F(expand, weft_expand(in[0], sz243, 3))
F(squeeze, weft_squeeze(in[0]))
F(unsqueeze, weft_unsqueeze(in[0], 1))
F(select, weft_select(in[0], 1, 2))
F(slice, weft_slice(in[0], 1, 1, INT64_MIN, 2))
F(narrow, weft_narrow(in[0], 0, 1, 2))
F(diagonal, weft_diagonal(in[0], -1, 2, 0))
F(flatten, weft_flatten(in[0], 0, -1))
F(clone, weft_clone(in[0], (weft_memory_format)-1))
F(contiguous, weft_contiguous(in[0], WEFT_CONTIGUOUS_FORMAT))
F(sum, weft_sum(in[0], (weft_dtype)-1))
F(sum_dim, weft_sum_dim(in[0], d1, 1, false, (weft_dtype)-1))
F(sum_keep, weft_sum_dim(in[0], dm1, 1, true, (weft_dtype)-1))
F(mean, weft_mean(in[0], (weft_dtype)-1))
F(mean_dim, weft_mean_dim(in[0], d01, 2, false, (weft_dtype)-1))
F(amax, weft_amax(in[0], d0, 1, false))
F(max, weft_max(in[0]))
F(softmax, weft_softmax(in[0], 1, (weft_dtype)-1))
F(log_softmax, weft_log_softmax(in[0], -1, (weft_dtype)-1))
F(mm, weft_mm(in[0], in[1]))
F(bmm, weft_bmm(in[0], in[1]))
F(addmm, weft_addmm(in[0], in[1], in[2], weft_scalar_double(0.5), weft_scalar_double(2)))
F(matmul, weft_matmul(in[0], in[1]))
F(linear, weft_linear(in[0], in[1], in[2]))
F(where, weft_where(in[0], in[1], in[2]))
F(to_copy, weft_to_dtype(in[0], WEFT_FLOAT64, true))

typedef struct {
  const char* name;
  fn_t f;
  int n;
  int64_t nd[3];
  int64_t sz[3][3];
  int flags;
} gc_case;
enum { POS = 1, TRANSPOSED = 2, BOOL_FIRST = 4 }; /* inputs > 0; first input non-contiguous; first is a mask */

static const gc_case gc_cases[] = {
  {"add (broadcast)", f_add, 2, {2, 1}, {{3, 4}, {4}}, 0},
  {"add_scalar", f_add_scalar, 1, {2}, {{3, 4}}, 0},
  {"sub (broadcast)", f_sub, 2, {2, 2}, {{3, 1}, {1, 4}}, 0},
  {"sub_scalar", f_sub_scalar, 1, {1}, {{5}}, 0},
  {"mul (broadcast, transposed)", f_mul, 2, {2, 2}, {{3, 4}, {1, 4}}, TRANSPOSED},
  {"mul_scalar", f_mul_scalar, 1, {2}, {{3, 4}}, 0},
  {"div", f_div, 2, {2, 1}, {{3, 4}, {4}}, POS},
  {"div_scalar", f_div_scalar, 1, {2}, {{3, 4}}, 0},
  {"pow", f_pow, 2, {2, 2}, {{3, 4}, {3, 4}}, POS},
  {"pow_scalar", f_pow_scalar, 1, {2}, {{3, 4}}, POS},
  {"maximum", f_maximum, 2, {2, 2}, {{3, 4}, {3, 4}}, 0},
  {"minimum", f_minimum, 2, {2, 1}, {{3, 4}, {4}}, 0},
  {"neg", f_neg, 1, {2}, {{3, 4}}, 0},
  {"exp", f_exp, 1, {2}, {{3, 4}}, TRANSPOSED},
  {"log", f_log, 1, {2}, {{3, 4}}, POS},
  {"sqrt", f_sqrt, 1, {2}, {{3, 4}}, POS},
  {"rsqrt", f_rsqrt, 1, {2}, {{3, 4}}, POS},
  {"sin", f_sin, 1, {2}, {{3, 4}}, 0},
  {"cos", f_cos, 1, {2}, {{3, 4}}, 0},
  {"tanh", f_tanh, 1, {2}, {{3, 4}}, 0},
  {"sigmoid", f_sigmoid, 1, {2}, {{3, 4}}, 0},
  {"relu", f_relu, 1, {2}, {{3, 4}}, 0},
  {"abs", f_abs, 1, {2}, {{3, 4}}, 0},
  {"reciprocal", f_reciprocal, 1, {2}, {{3, 4}}, POS},
  {"view", f_view, 1, {3}, {{2, 3, 4}}, 0},
  {"reshape (transposed)", f_reshape, 1, {2}, {{6, 4}}, TRANSPOSED},
  {"permute", f_permute, 1, {3}, {{2, 3, 4}}, 0},
  {"transpose", f_transpose, 1, {3}, {{2, 3, 4}}, 0},
  {"t", f_t, 1, {2}, {{3, 4}}, 0},
  {"expand", f_expand, 1, {2}, {{1, 3}}, 0},
  {"squeeze", f_squeeze, 1, {3}, {{3, 1, 4}}, 0},
  {"unsqueeze", f_unsqueeze, 1, {2}, {{3, 4}}, 0},
  {"select", f_select, 1, {2}, {{3, 4}}, 0},
  {"slice", f_slice, 1, {2}, {{3, 4}}, 0},
  {"narrow", f_narrow, 1, {2}, {{3, 4}}, 0},
  {"diagonal", f_diagonal, 1, {3}, {{3, 2, 4}}, TRANSPOSED},
  {"flatten", f_flatten, 1, {3}, {{2, 3, 2}}, 0},
  {"clone", f_clone, 1, {2}, {{3, 4}}, TRANSPOSED},
  {"contiguous", f_contiguous, 1, {2}, {{3, 4}}, TRANSPOSED},
  {"sum", f_sum, 1, {2}, {{3, 4}}, 0},
  {"sum_dim", f_sum_dim, 1, {3}, {{2, 3, 4}}, 0},
  {"sum keepdim", f_sum_keep, 1, {2}, {{3, 4}}, 0},
  {"mean", f_mean, 1, {2}, {{3, 4}}, 0},
  {"mean_dim", f_mean_dim, 1, {3}, {{2, 3, 4}}, 0},
  {"amax", f_amax, 1, {2}, {{3, 4}}, 0},
  {"max", f_max, 1, {2}, {{3, 4}}, 0},
  {"softmax", f_softmax, 1, {2}, {{3, 4}}, 0},
  {"log_softmax", f_log_softmax, 1, {2}, {{3, 4}}, TRANSPOSED},
  {"mm", f_mm, 2, {2, 2}, {{3, 4}, {4, 2}}, TRANSPOSED},
  {"bmm", f_bmm, 2, {3, 3}, {{2, 3, 4}, {2, 4, 2}}, 0},
  {"addmm (broadcast bias)", f_addmm, 3, {1, 2, 2}, {{2}, {3, 4}, {4, 2}}, 0},
  {"matmul (batched x 2-D)", f_matmul, 2, {3, 2}, {{2, 3, 4}, {4, 2}}, 0},
  {"linear", f_linear, 3, {2, 2, 1}, {{3, 4}, {2, 4}, {2}}, 0},
  {"where", f_where, 3, {2, 2, 1}, {{3, 4}, {3, 4}, {4}}, BOOL_FIRST},
  {"to", f_to_copy, 1, {2}, {{3, 4}}, 0},
};

static weft_tensor* make_input(const gc_case* k, int i) {
  int64_t nd = k->nd[i];
  int64_t sz[3];
  memcpy(sz, k->sz[i], sizeof sz);
  bool tr = i == 0 && (k->flags & TRANSPOSED) && nd == 2;
  if (tr) { int64_t s = sz[0]; sz[0] = sz[1]; sz[1] = s; }
  weft_tensor* r = weft_randn(sz, nd, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  double* p = weft_tensor_data_ptr(r);
  for (int64_t j = 0; j < weft_tensor_numel(r); j++) {
    if ((k->flags & POS)) p[j] = 0.5 + fabs(p[j]);
    if (i == 0 && (k->flags & BOOL_FIRST)) p[j] = p[j] > 0;
  }
  if (i == 0 && (k->flags & BOOL_FIRST)) {
    weft_tensor* b = weft_to_dtype(r, WEFT_BOOL, false);
    weft_tensor_release(r);
    return b;
  }
  if (!tr) return r;
  weft_tensor* t = weft_t(r); /* non-contiguous */
  weft_tensor_release(r);
  return t;
}

/* sum(f(x) * w) for a fixed w: a scalar whose gradient is the VJP with w. */
static double objective(const gc_case* k, weft_tensor* const* in, const weft_tensor* w) {
  weft_tensor* y = k->f(in);
  double s = 0;
  for (int64_t j = 0; j < weft_tensor_numel(y); j++) s += at(y, j) * at(w, j);
  weft_tensor_release(y);
  return s;
}

static void gradcheck(const gc_case* k) {
  weft_tensor* in[3] = {0};
  for (int i = 0; i < k->n; i++) in[i] = make_input(k, i);
  for (int i = (k->flags & BOOL_FIRST) ? 1 : 0; i < k->n; i++) weft_set_requires_grad(in[i], true);
  weft_tensor* y = k->f(in);
  if (!y) {
    fprintf(stderr, "%s: %s\n", k->name, weft_last_error());
    CHECK(y != NULL);
    return;
  }
  weft_tensor* w = weft_randn(weft_tensor_sizes(y), weft_tensor_dim(y), WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor* g[3] = {0};
  int first = (k->flags & BOOL_FIRST) ? 1 : 0;
  weft_status s = weft_autograd_grad(&y, &w, 1, in + first, k->n - first, false, false, false, g + first);
  if (s) fprintf(stderr, "%s: %s\n", k->name, weft_last_error());
  CHECK(s == WEFT_OK);
  bool was = weft_set_grad_enabled(false);
  for (int i = first; i < k->n && !s; i++) {
    CHECK(weft_tensor_dim(g[i]) == weft_tensor_dim(in[i]));
    for (int64_t j = 0; j < weft_tensor_numel(in[i]); j++) {
      /* element j in logical order, through the strides */
      int64_t off = 0, rem = j;
      for (int64_t d = weft_tensor_dim(in[i]) - 1; d >= 0; d--) {
        off += (rem % weft_tensor_sizes(in[i])[d]) * weft_tensor_strides(in[i])[d];
        rem /= weft_tensor_sizes(in[i])[d];
      }
      double* p = (double*)weft_tensor_data_ptr(in[i]) + off;
      const double h = 1e-6, x0 = *p;
      *p = x0 + h;
      double fp = objective(k, in, w);
      *p = x0 - h;
      double fm = objective(k, in, w);
      *p = x0;
      double num = (fp - fm) / (2 * h), ana = at(g[i], j);
      if (fabs(num - ana) > 1e-5 * (1 + fabs(num))) {
        fprintf(stderr, "%s: input %d element %lld: analytic %.10g, numeric %.10g\n", k->name, i, (long long)j,
                ana, num);
        CHECK(false);
        break;
      }
    }
  }
  weft_set_grad_enabled(was);
  for (int i = 0; i < 3; i++) {
    weft_tensor_release(in[i]);
    weft_tensor_release(g[i]);
  }
  weft_tensor_release(y);
  weft_tensor_release(w);
}

/* split: one SplitBackward0 for all pieces (output_nr tells them apart); a
 * piece's gradient alone, the others' zeros in their place; two pieces as
 * roots of one pass; grad() of pieces captured by (node, output_nr). */
static void test_multi_output(void) {
  const double v[] = {0, 1, 2, 3, 4, 5};
  const int64_t s32[] = {3, 2};
  weft_tensor* x = from(v, s32, 2, WEFT_FLOAT32);
  weft_set_requires_grad(x, true);
  weft_tensor_list p = weft_split(x, 1, 0);
  CHECK(p.n == 3 && weft_grad_fn(p.t[0]) == weft_grad_fn(p.t[2]));
  CHECK(strcmp(weft_node_name(weft_grad_fn(p.t[1])), "SplitBackward0") == 0);
  CHECK(weft_output_nr(p.t[0]) == 0 && weft_output_nr(p.t[2]) == 2);
  CHECK(weft_node_num_next(weft_grad_fn(p.t[1])) == 1);
  weft_tensor* s1 = weft_mul_scalar(p.t[1], weft_scalar_double(3));
  weft_tensor* l1 = weft_sum(s1, (weft_dtype)-1);
  CHECK(weft_backward(&l1, NULL, 1, false, false) == WEFT_OK);
  const double g1[] = {0, 0, 3, 3, 0, 0};
  weft_tensor* gx = weft_tensor_grad(x);
  CHECK(close_to(gx, g1, 6, 0));
  weft_tensor_release(gx);
  /* pieces 0 and 2 as two roots: each buffer of the node gets its own gradient */
  weft_tensor* roots[] = {weft_sum(p.t[0], (weft_dtype)-1), weft_sum(p.t[2], (weft_dtype)-1)};
  CHECK(weft_backward(roots, NULL, 2, false, false) == WEFT_OK);
  const double g2[] = {1, 1, 3, 3, 1, 1};
  gx = weft_tensor_grad(x);
  CHECK(close_to(gx, g2, 6, 0));
  /* d(sum(p0 * p2))/d(p2, p1, p0): p1 unused */
  weft_tensor* prod = weft_mul(p.t[0], p.t[2]);
  weft_tensor* l2 = weft_sum(prod, (weft_dtype)-1);
  weft_tensor* want[] = {p.t[2], p.t[1], p.t[0]};
  weft_tensor* res[3];
  CHECK(weft_autograd_grad(&l2, NULL, 1, want, 3, false, false, true, res) == WEFT_OK);
  const double d2[] = {0, 1}, d0[] = {4, 5};
  CHECK(close_to(res[0], d2, 2, 0) && res[1] == NULL && close_to(res[2], d0, 2, 0));
  weft_tensor* all[] = {x, s1, l1, gx, roots[0], roots[1], prod, l2, res[0], res[2]};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) weft_tensor_release(all[i]);
  weft_tensor_list_release(p);
}

int main(void) {
  test_seed_program();
  test_accumulation_and_retain();
  test_versions_and_modes();
  test_grad_and_higher_order();
  test_multi_output();
  weft_manual_seed(15);
  for (size_t i = 0; i < sizeof gc_cases / sizeof gc_cases[0]; i++) gradcheck(&gc_cases[i]);
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
