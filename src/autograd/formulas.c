/* Expands derivatives.def into the backward function of each formula and
 * the formula table the recording kernel is registered with. The helpers
 * below are the dispatcher ops (so create_graph records the backward pass),
 * wrapped so that a failed step propagates NULL (the error stays in
 * weft_last_error) and every intermediate is released after the formula. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd_internal.h"

typedef const weft_tensor* T;

static T keep(weft__bctx* c, weft_tensor* t) {
  if (!t) return NULL;
  if (c->ntemps == (int)(sizeof c->temps / sizeof c->temps[0])) {
    weft_tensor_release(t);
    weft__error(WEFT_INTERNAL, "autograd: formula of %s has too many intermediates", c->node->name);
    return NULL;
  }
  c->temps[c->ntemps++] = t;
  return t;
}

/* ---- argument access ---- */
static weft_scalar arg_scalar(const weft_ivalue* v) {
  if (v->tag == WEFT_IV_DOUBLE) return weft_scalar_double(v->u.d);
  if (v->tag == WEFT_IV_BOOL) return weft_scalar_bool(v->u.b);
  return weft_scalar_int(v->u.i);
}
#define ARG(i) (&c->node->args[i])
#define SC(i) arg_scalar(ARG(i))
#define DBL(i) weft_scalar_to_double(SC(i))
#define INT(k) (ARG(k)->u.i)
#define OPTINT(k) (ARG(k)->tag == WEFT_IV_NONE ? INT64_MIN : ARG(k)->u.i)
#define BOOLA(i) (ARG(i)->u.b)
#define STR(i) (ARG(i)->tag == WEFT_IV_STRING ? ARG(i)->u.s : NULL)
#define IL(i) (ARG(i)->tag == WEFT_IV_INT_LIST ? ARG(i)->u.ilist.data : NULL)
#define ILN(i) (ARG(i)->tag == WEFT_IV_INT_LIST ? ARG(i)->u.ilist.len : 0)
#define SIZES(i) (c->node->in[i].sizes)
#define NDIM(i) ((int64_t)c->node->in[i].ndim)
#define S(i) ((T)c->saved[i])
#define RES ((T)c->result)
#define RES2 ((T)c->result2)
#define RES3 ((T)c->result3)
#define grad (c->grad)
#define A(i) (1u << (i))

/* ---- op wrappers: NULL in, NULL out ---- */
#define W1(name, call) \
  static T ag_##name(weft__bctx* c, T a) { return a ? keep(c, call) : NULL; }
#define W2(name, call) \
  static T ag_##name(weft__bctx* c, T a, T b) { return a && b ? keep(c, call) : NULL; }
#define WD(name, call) \
  static T ag_##name(weft__bctx* c, T a, double v) { return a ? keep(c, call) : NULL; }
W1(neg, weft_neg(a))
W1(log, weft_log(a))
W1(exp, weft_exp(a))
W1(sin, weft_sin(a))
W1(cos, weft_cos(a))
W1(sign, weft_sign(a))
W1(t, weft_t(a))
W2(mul, weft_mul(a, b))
W2(add, weft_add(a, b, weft_scalar_int(1)))
W2(div, weft_div(a, b))
W2(sub, weft_sub(a, b, weft_scalar_int(1)))
W2(pow, weft_pow(a, b))
W2(mm, weft_mm(a, b))
W2(bmm, weft_bmm(a, b))
W2(eq, weft_eq(a, b))
W2(gt, weft_gt(a, b))
W2(lt, weft_lt(a, b))
WD(mul_scalar, weft_mul_scalar(a, weft_scalar_double(v)))
WD(add_scalar, weft_add_scalar(a, weft_scalar_double(v), weft_scalar_int(1)))
WD(pow_scalar, weft_pow_scalar(a, weft_scalar_double(v)))
WD(gt_scalar, weft_gt_scalar(a, weft_scalar_double(v)))
#define neg ag_neg
#define log ag_log
#define exp ag_exp
#define sin ag_sin
#define cos ag_cos
#define sign ag_sign
#define t ag_t
#define mul ag_mul
#define add ag_add
#define div ag_div
#define sub ag_sub
#define pow ag_pow
#define mm ag_mm
#define bmm ag_bmm
#define mul_scalar ag_mul_scalar
#define add_scalar ag_add_scalar
#define pow_scalar ag_pow_scalar
#define gt_scalar ag_gt_scalar

static T scale(weft__bctx* c, T a, weft_scalar s) {
  if (!a || weft_scalar_to_double(s) == 1.0) return a;
  return keep(c, weft_mul_scalar(a, s));
}
static T div_scalar(weft__bctx* c, T a, weft_scalar s) { return a ? keep(c, weft_div_scalar(a, s)) : NULL; }
static T rsub_scalar(weft__bctx* c, T a, double v) { return add_scalar(c, neg(c, a), v); }
static T where_scalar_other(weft__bctx* c, T cond, T a, double v) {
  return cond && a ? keep(c, weft_where_scalar_other(cond, a, weft_scalar_int((int64_t)v))) : NULL;
}
static T where_scalar_self(weft__bctx* c, T cond, double v, T b) {
  return cond && b ? keep(c, weft_where_scalar_self(cond, weft_scalar_int((int64_t)v), b)) : NULL;
}
static T reshape(weft__bctx* c, T a, const int64_t* sizes, int64_t n) {
  return a ? keep(c, weft_reshape(a, sizes, n)) : NULL;
}
static T expand(weft__bctx* c, T a, const int64_t* sizes, int64_t n) {
  return a ? keep(c, weft_expand(a, sizes, n)) : NULL;
}
static T transpose(weft__bctx* c, T a, int64_t d0, int64_t d1) {
  return a ? keep(c, weft_transpose(a, d0, d1)) : NULL;
}
static T sum_dim(weft__bctx* c, T a, int64_t dim) {
  return a ? keep(c, weft_sum_dim(a, &dim, 1, true, (weft_dtype)-1)) : NULL;
}
static T zeros(weft__bctx* c, T like, const int64_t* sizes, int64_t n) {
  return keep(c, weft_full(sizes, n, 0.0, like->dtype, like->device));
}

static T total(weft__bctx* c, T a) { return a ? keep(c, weft_sum(a, (weft_dtype)-1)) : NULL; }

static T nll_loss_backward(weft__bctx* c, T g, T self, T target, T weight, const char* reduction, int64_t ignore) {
  return g && self && target ? keep(c, weft_nll_loss_backward(g, self, target, weight, reduction, ignore)) : NULL;
}

/* mm's gradients in the layout of the input they are for (PyTorch's
 * mm_mat1_backward / mm_mat2_backward): for a column-major input (a
 * transposed view, such as linear's weight.t()) the transposed product is
 * computed and handed back transposed, so the gradient reaches the leaf in
 * the leaf's own layout (AccumulateGrad keeps it as it is, the optimizer
 * reads it contiguously) without a copy. */
static bool column_major(T m) { return m->strides[0] == 1 && m->strides[1] == m->sizes[0]; }
static T mm_mat1_backward(weft__bctx* c, T g, T mat2, T mat1) {
  if (!g || !mat2 || !mat1) return NULL;
  return column_major(mat1) ? t(c, mm(c, mat2, t(c, g))) : mm(c, g, t(c, mat2));
}
static T mm_mat2_backward(weft__bctx* c, T g, T mat1, T mat2) {
  if (!g || !mat1 || !mat2) return NULL;
  return column_major(mat2) ? t(c, mm(c, t(c, g), mat1)) : mm(c, t(c, mat1), g);
}

static T permute_backward(weft__bctx* c, T g, const int64_t* dims, int64_t n) {
  int64_t inv[WEFT_MAX_DIMS];
  for (int64_t i = 0; i < n; i++) inv[dims[i] < 0 ? dims[i] + n : dims[i]] = i;
  return g ? keep(c, weft_permute(g, inv, n)) : NULL;
}

/* select/slice/diagonal: the ops that write the gradient into zeros of the
 * input's shape (recorded under createGraph; their own formulas are below). */
static T diagonal_backward(weft__bctx* c, T g, const int64_t* sizes, int64_t n, int64_t offset, int64_t d1,
                           int64_t d2) {
  return g ? keep(c, weft_diagonal_backward(g, sizes, n, offset, d1, d2)) : NULL;
}
static T select_backward(weft__bctx* c, T g, const int64_t* sizes, int64_t n, int64_t dim, int64_t index) {
  return g ? keep(c, weft_select_backward(g, sizes, n, dim, index)) : NULL;
}
/* slice's None bounds as slice_backward takes them (PyTorch's slice_backward_wrapper) */
static T slice_backward(weft__bctx* c, T g, const int64_t* sizes, int64_t n, int64_t dim, int64_t start,
                        int64_t end, int64_t step) {
  if (start == INT64_MIN) start = 0;
  if (end == INT64_MIN) end = INT64_MAX;
  return g ? keep(c, weft_slice_backward(g, sizes, n, dim, start, end, step)) : NULL;
}

/* Reduced dims put back as size 1 (PyTorch's restore_reduced_dims); no dims: all. */
static T unreduce(weft__bctx* c, T g, int64_t ndim, const int64_t* dims, int64_t n, bool keepdim) {
  if (!g || keepdim || ndim == 0) return g;
  if (n == 0) {
    int64_t ones[WEFT_MAX_DIMS];
    for (int64_t i = 0; i < ndim; i++) ones[i] = 1;
    return reshape(c, g, ones, ndim);
  }
  bool reduced[WEFT_MAX_DIMS] = {false};
  for (int64_t i = 0; i < n; i++) reduced[dims[i] < 0 ? dims[i] + ndim : dims[i]] = true;
  for (int64_t d = 0; d < ndim && g; d++)
    if (reduced[d]) g = keep(c, weft_unsqueeze(g, d));
  return g;
}

static double count(const int64_t* sizes, int64_t ndim, const int64_t* dims, int64_t n) {
  double k = 1;
  if (n == 0)
    for (int64_t i = 0; i < ndim; i++) k *= (double)sizes[i];
  for (int64_t i = 0; i < n; i++) k *= (double)sizes[dims[i] < 0 ? dims[i] + ndim : dims[i]];
  return k;
}

/* amax/amin/max: the gradient shared evenly among the elements equal to the extremum. */
static T extremum_backward(weft__bctx* c, T g, T self, T res, const int64_t* dims, int64_t n, bool keepdim) {
  T gu = unreduce(c, g, self->ndim, dims, n, keepdim), ru = unreduce(c, res, self->ndim, dims, n, keepdim);
  T mask = ag_eq(c, self, ru);
  T maskf = mask ? keep(c, weft_to_dtype(mask, g->dtype, false)) : NULL;
  T cnt = maskf ? keep(c, weft_sum_dim(maskf, dims, n, true, (weft_dtype)-1)) : NULL;
  return mul(c, div(c, gu, cnt), maskf);
}

static T pow_scalar_backward(weft__bctx* c, T g, T self, double e) {
  if (e == 0.0) return zeros(c, g, self->sizes, self->ndim);
  return mul_scalar(c, mul(c, g, pow_scalar(c, self, e - 1.0)), e);
}

/* maximum/minimum: the larger (smaller) input takes the gradient; ties split it. */
static T minmax_backward(weft__bctx* c, T g, T a, T b, bool is_max) {
  T wins = is_max ? ag_gt(c, a, b) : ag_lt(c, a, b);
  T tie = ag_eq(c, a, b);
  T half = mul_scalar(c, g, 0.5);
  T own = where_scalar_other(c, wins, g, 0.0);
  return tie && half && own ? keep(c, weft_where(tie, half, own)) : NULL;
}

/* ==== the remaining formulas (issue 15): generic callers, NULL in, NULL out ==== */
typedef weft_tensor* (*op1_fn)(const weft_tensor*);
typedef weft_tensor* (*op2_fn)(const weft_tensor*, const weft_tensor*);
typedef weft_tensor* (*ops_fn)(const weft_tensor*, weft_scalar);
static T call1(weft__bctx* c, op1_fn f, T a) { return a ? keep(c, f(a)) : NULL; }
static T call2(weft__bctx* c, op2_fn f, T a, T b) { return a && b ? keep(c, f(a, b)) : NULL; }
static T calls(weft__bctx* c, ops_fn f, T a, double v) { return a ? keep(c, f(a, weft_scalar_double(v))) : NULL; }
static T zeros_like_g(weft__bctx* c, T g) { return g ? zeros(c, g, g->sizes, g->ndim) : NULL; }
static T where0(weft__bctx* c, T cond, T g) { return where_scalar_other(c, cond, g, 0.0); }
static int64_t wrap_dim(int64_t d, int64_t ndim) { return d < 0 ? d + (ndim > 0 ? ndim : 1) : d; }

static const double LN2 = 0.6931471805599453, TWO_OVER_SQRT_PI = 1.1283791670955126;

/* gelu: d/dx x*Phi(x) = Phi(x) + x*phi(x); the tanh form differentiates its own approximation. */
static T gelu_backward(weft__bctx* c, T g, T x, const char* approximate) {
  if (approximate && strcmp(approximate, "tanh") == 0) {
    const double beta = 0.7978845608028654, kappa = 0.044715; /* sqrt(2/pi) */
    T x2 = mul(c, x, x);
    T th = call1(c, weft_tanh, mul_scalar(c, add(c, x, mul_scalar(c, mul(c, x2, x), kappa)), beta));
    T left = mul_scalar(c, add_scalar(c, th, 1.0), 0.5);
    T sech2 = rsub_scalar(c, mul(c, th, th), 1.0);
    T inner = mul_scalar(c, add_scalar(c, mul_scalar(c, x2, 3 * kappa), 1.0), beta);
    T right = mul(c, mul(c, mul_scalar(c, x, 0.5), sech2), inner);
    return mul(c, g, add(c, left, right));
  }
  T cdf = mul_scalar(c, add_scalar(c, call1(c, weft_erf, mul_scalar(c, x, 0.7071067811865476)), 1.0), 0.5);
  T pdf = mul_scalar(c, exp(c, mul_scalar(c, mul(c, x, x), -0.5)), 0.3989422804014327);
  return mul(c, g, add(c, cdf, mul(c, x, pdf)));
}

/* pow(number, exponent): d/de b^e = b^e ln b; a zero base gives 0 where e >= 0 (PyTorch's choice). */
static T pow_base_backward(weft__bctx* c, T g, double base, T res, T e) {
  T full = mul_scalar(c, mul(c, g, res), log2(base) * LN2);
  if (base != 0.0) return full;
  return where_scalar_self(c, calls(c, weft_ge_scalar, e, 0.0), 0.0, full);
}

/* clamp(min?, max?) with number bounds: the gradient passes where min <= x <= max. */
static T clamp_backward(weft__bctx* c, T g, T x, const weft_ivalue* lo, const weft_ivalue* hi) {
  bool has_lo = lo->tag != WEFT_IV_NONE, has_hi = hi->tag != WEFT_IV_NONE;
  if (!has_lo && !has_hi) return g;
  T a = has_lo ? keep(c, weft_ge_scalar(x, arg_scalar(lo))) : NULL;
  T b = has_hi ? keep(c, weft_le_scalar(x, arg_scalar(hi))) : NULL;
  if ((has_lo && !a) || (has_hi && !b)) return NULL;
  return where0(c, a && b ? call2(c, weft_logical_and, a, b) : a ? a : b, g);
}

/* clamp with tensor bounds, as 1.13's clamp_backward_min_max: x's share where it
 * is inside the bounds; min's where x < min (and min < max); max's where x > max
 * or max < min (max wins a crossed pair). */
static T clamp_tensor_backward(weft__bctx* c, int which) {
  T x = S(0), lo = S(1), hi = S(2), mask;
  if (which == 0) {
    if (!lo && !hi) return grad;
    T a = lo ? call2(c, weft_ge, x, lo) : NULL, b = hi ? call2(c, weft_le, x, hi) : NULL;
    if ((lo && !a) || (hi && !b)) return NULL;
    return where0(c, a && b ? call2(c, weft_logical_and, a, b) : a ? a : b, grad);
  }
  if (which == 1) {
    mask = call2(c, weft_lt, x, lo);
    if (hi) mask = call2(c, weft_logical_and, mask, call2(c, weft_lt, lo, hi));
    return where0(c, mask, grad);
  }
  mask = call2(c, weft_gt, x, hi);
  if (lo) mask = call2(c, weft_logical_or, mask, call2(c, weft_lt, hi, lo));
  return where0(c, mask, grad);
}

/* ---- reductions ---- */
static T full_shape(weft__bctx* c, T like, const int64_t* sizes, int64_t n, double v) {
  return keep(c, weft_full(sizes, n, v, like->dtype, like->device));
}

/* prod_{j<i} x_j along dim (1 for the first): cumprod of x shifted by one. */
static T exclusive_cumprod(weft__bctx* c, T x, int64_t dim) {
  int64_t n = x->sizes[dim], sz[WEFT_MAX_DIMS];
  if (n == 0) return x;
  memcpy(sz, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
  sz[dim] = 1;
  const weft_tensor* parts[2] = {full_shape(c, x, sz, x->ndim, 1.0), keep(c, weft_narrow(x, dim, 0, n - 1))};
  if (!parts[0] || !parts[1]) return NULL;
  T shifted = keep(c, weft_cat(parts, 2, dim));
  return shifted ? keep(c, weft_cumprod(shifted, dim, (weft_dtype)-1)) : NULL;
}

/* The product of the other elements of each line, without dividing (zeros are fine). */
static T prod_of_others(weft__bctx* c, T x, int64_t dim) {
  T before = exclusive_cumprod(c, x, dim);
  T fx = x ? keep(c, weft_flip(x, &dim, 1)) : NULL;
  T after_f = fx ? exclusive_cumprod(c, fx, dim) : NULL;
  T after = after_f ? keep(c, weft_flip(after_f, &dim, 1)) : NULL;
  return mul(c, before, after);
}

static T prod_backward(weft__bctx* c, T g, T x, bool all, int64_t dim, bool keepdim) {
  if (!g) return NULL;
  if (all) {
    int64_t flat = -1;
    T x1 = keep(c, weft_reshape(x, &flat, 1));
    T others = x1 ? prod_of_others(c, x1, 0) : NULL;
    return mul(c, g, reshape(c, others, x->sizes, x->ndim));
  }
  dim = wrap_dim(dim, x->ndim);
  if (x->ndim == 0) return g;
  return mul(c, unreduce(c, g, x->ndim, &dim, 1, keepdim), prod_of_others(c, x, dim));
}

static T flip1(weft__bctx* c, T a, int64_t dim) { return a ? keep(c, weft_flip(a, &dim, 1)) : NULL; }
static T cumsum_(weft__bctx* c, T a, int64_t dim) { return a ? keep(c, weft_cumsum(a, dim, (weft_dtype)-1)) : NULL; }
/* sum_{i>=k} g_i along dim */
static T reverse_cumsum(weft__bctx* c, T g, int64_t dim) { return flip1(c, cumsum_(c, flip1(c, g, dim), dim), dim); }

static bool any_zero(T x) {
  weft_tensor* z = weft_eq_scalar(x, weft_scalar_int(0));
  weft_tensor* a = z ? weft_any(z) : NULL;
  bool r = a && weft_tensor_get_double(a, 0) != 0;
  weft_tensor_release(z);
  weft_tensor_release(a);
  return r;
}

/* cumprod: dx_k = sum_{i>=k} g_i prod_{j<=i, j!=k} x_j. Without zeros that is
 * reverse_cumsum(g * y) / x; with zeros, prod_{j<k} x_j * h_k where
 * h_k = g_k + x_{k+1} h_{k+1} runs backwards along the line. */
static T cumprod_backward(weft__bctx* c, T g, T x, T res, int64_t dim) {
  if (!g) return NULL;
  dim = wrap_dim(dim, x->ndim);
  if (x->ndim == 0) return g;
  if (!any_zero(x)) return div(c, reverse_cumsum(c, mul(c, g, res), dim), x);
  int64_t n = x->sizes[dim];
  weft_tensor** h = calloc((size_t)n, sizeof *h);
  if (!h) return weft__error_null(WEFT_OUT_OF_MEMORY, "out of memory: cumprod backward");
  bool ok = true;
  for (int64_t k = n - 1; k >= 0 && ok; k--) {
    weft_tensor* gk = weft_narrow(g, dim, k, 1);
    if (k == n - 1) h[k] = gk;
    else {
      weft_tensor* xk = weft_narrow(x, dim, k + 1, 1);
      weft_tensor* p = xk ? weft_mul(xk, h[k + 1]) : NULL;
      h[k] = p && gk ? weft_add(gk, p, weft_scalar_int(1)) : NULL;
      weft_tensor_release(xk);
      weft_tensor_release(p);
      weft_tensor_release(gk);
    }
    ok = h[k] != NULL;
  }
  T hs = ok ? keep(c, weft_cat((const weft_tensor* const*)h, n, dim)) : NULL;
  for (int64_t k = 0; k < n; k++) weft_tensor_release(h[k]);
  free(h);
  return mul(c, exclusive_cumprod(c, x, dim), hs);
}

static T logsumexp_backward(weft__bctx* c, T g, T x, T res, const int64_t* dims, int64_t n, bool keepdim) {
  T gu = unreduce(c, g, x->ndim, dims, n, keepdim), ru = unreduce(c, res, x->ndim, dims, n, keepdim);
  return mul(c, gu, exp(c, sub(c, x, ru)));
}

/* var/std: d var = 2 (x - mean) / (N - correction); std divides by 2 std (0 where std is 0). */
static T centered_over_dof(weft__bctx* c, T x, const int64_t* dims, int64_t n, int64_t correction) {
  double dof = count(x->sizes, x->ndim, dims, n) - (double)(correction == INT64_MIN ? 1 : correction);
  T mean = keep(c, weft_mean_dim(x, dims, n, true, (weft_dtype)-1));
  return mul_scalar(c, sub(c, x, mean), 1.0 / dof);
}
static T var_backward(weft__bctx* c, T g, T x, const int64_t* dims, int64_t n, int64_t corr, bool keepdim) {
  T gu = unreduce(c, g, x->ndim, dims, n, keepdim);
  return mul(c, mul_scalar(c, gu, 2.0), centered_over_dof(c, x, dims, n, corr));
}
static T std_backward(weft__bctx* c, T g, T x, T res, const int64_t* dims, int64_t n, int64_t corr, bool keepdim) {
  T gu = unreduce(c, g, x->ndim, dims, n, keepdim), ru = unreduce(c, res, x->ndim, dims, n, keepdim);
  T scale = where_scalar_self(c, calls(c, weft_eq_scalar, ru, 0.0), 0.0, div(c, gu, ru));
  return mul(c, scale, centered_over_dof(c, x, dims, n, corr));
}

/* norm: p = 2 x/|x|, 1 sign(x), +-inf the extremal |x| sharing the gradient,
 * 0 nothing, otherwise sign(x) |x|^(p-1) / |x|_p^(p-1); 0 where the norm or x is 0. */
static T norm_backward(weft__bctx* c, T g, T x, T res, const weft_ivalue* pv, const int64_t* dims, int64_t n,
                       bool keepdim) {
  double p = pv->tag == WEFT_IV_NONE ? 2.0 : weft_scalar_to_double(arg_scalar(pv));
  if (p == 0.0) return zeros(c, x, x->sizes, x->ndim);
  T gu = unreduce(c, g, x->ndim, dims, n, keepdim), ru = unreduce(c, res, x->ndim, dims, n, keepdim);
  if (p == 1.0) return mul(c, gu, sign(c, x));
  if (p == 2.0) return mul(c, x, where_scalar_self(c, calls(c, weft_eq_scalar, ru, 0.0), 0.0, div(c, gu, ru)));
  if (isinf(p)) {
    T mask = call2(c, weft_eq, call1(c, weft_abs, x), ru);
    T maskf = mask ? keep(c, weft_to_dtype(mask, g->dtype, false)) : NULL;
    T cnt = maskf ? keep(c, weft_sum_dim(maskf, dims, n, true, (weft_dtype)-1)) : NULL;
    return mul(c, sign(c, x), mul(c, div(c, gu, cnt), maskf));
  }
  T xs = mul(c, sign(c, x), pow_scalar(c, call1(c, weft_abs, x), p - 1.0));
  xs = where_scalar_self(c, calls(c, weft_eq_scalar, x, 0.0), 0.0, xs);
  T scale = div(c, gu, pow_scalar(c, ru, p - 1.0));
  scale = where_scalar_self(c, calls(c, weft_eq_scalar, ru, 0.0), 0.0, scale);
  return mul(c, xs, scale);
}

/* ---- indexing ---- */
static T index_put_(weft__bctx* c, T base, const weft_tensor* const* idx, int64_t n, T values, bool accumulate) {
  return base && values ? keep(c, weft_index_put(base, idx, n, values, accumulate)) : NULL;
}
static T zeros_of(weft__bctx* c, T g, int i) { return g ? zeros(c, g, SIZES(i), NDIM(i)) : NULL; }

/* index_select (and repeat_interleave): the gradient added back at the indexed rows. */
static T index_add_backward(weft__bctx* c, T g, T zeros_in, int64_t dim, T index) {
  int64_t flat = -1;
  T idx1 = index ? keep(c, weft_reshape(index, &flat, 1)) : NULL;
  if (!idx1 || !zeros_in) return NULL;
  const weft_tensor* list[WEFT_MAX_DIMS] = {0};
  dim = wrap_dim(dim, zeros_in->ndim);
  list[dim] = idx1;
  if (zeros_in->ndim == 0) {
    T g1 = reshape(c, g, &flat, 1), z1 = reshape(c, zeros_in, &flat, 1);
    return reshape(c, index_put_(c, z1, list, 1, g1, true), zeros_in->sizes, 0);
  }
  return index_put_(c, zeros_in, list, dim + 1, g, true);
}

static T take_backward(weft__bctx* c, T g, T index) {
  int64_t flat = -1;
  T z = zeros_of(c, g, 0);
  T z1 = reshape(c, z, &flat, 1), g1 = reshape(c, g, &flat, 1), i1 = reshape(c, index, &flat, 1);
  if (!i1) return NULL;
  const weft_tensor* list[1] = {i1};
  return reshape(c, index_put_(c, z1, list, 1, g1, true), SIZES(0), NDIM(0));
}

static void broadcast_sizes(const int64_t* a, int64_t na, const int64_t* b, int64_t nb, int64_t* out, int64_t* n) {
  *n = na > nb ? na : nb;
  for (int64_t i = 0; i < *n; i++) {
    int64_t da = i < *n - na ? 1 : a[i - (*n - na)], db = i < *n - nb ? 1 : b[i - (*n - nb)];
    out[i] = da == 1 ? db : da;
  }
}

/* masked_select: the gradient written back, in order, where the (broadcast) mask is set. */
static T masked_select_backward(weft__bctx* c, T g, T mask) {
  int64_t sz[WEFT_MAX_DIMS], n;
  broadcast_sizes(SIZES(0), NDIM(0), mask->sizes, mask->ndim, sz, &n);
  T mb = expand(c, mask, sz, n);
  if (!mb || !g) return NULL;
  const weft_tensor* list[1] = {mb};
  return index_put_(c, zeros(c, g, sz, n), list, 1, g, false);
}

static const weft_tensor* const* tlist(const weft_ivalue* v) { return (const weft_tensor* const*)v->u.tlist.data; }

static T index_put_self_backward(weft__bctx* c, T g, const weft_ivalue* idx, bool accumulate) {
  if (accumulate || !g) return g;
  int64_t none = 0;
  T z = keep(c, weft_full(&none, 0, 0.0, g->dtype, g->device));
  return index_put_(c, g, tlist(idx), idx->u.tlist.len, z, false);
}

static T gather_(weft__bctx* c, T g, int64_t dim, T index) {
  return g && index ? keep(c, weft_gather(g, dim, index, false)) : NULL;
}
static T scatter_zero(weft__bctx* c, T g, int64_t dim, T index) {
  return g && index ? keep(c, weft_scatter_value(g, dim, index, weft_scalar_int(0))) : NULL;
}
static T scatter_add_(weft__bctx* c, T base, int64_t dim, T index, T src) {
  return base && index && src ? keep(c, weft_scatter_add(base, dim, index, src)) : NULL;
}

/* ---- shape ops ---- */
static T roll_backward(weft__bctx* c, T g, const int64_t* shifts, int64_t n, const int64_t* dims, int64_t nd) {
  int64_t neg_shifts[WEFT_MAX_DIMS];
  for (int64_t i = 0; i < n && i < WEFT_MAX_DIMS; i++) neg_shifts[i] = -shifts[i];
  return g ? keep(c, weft_roll(g, neg_shifts, n, dims, nd)) : NULL;
}

/* repeat: the gradient of every copy summed, through a [r0, s0, r1, s1, ...] view. */
static T repeat_backward(weft__bctx* c, T g, const int64_t* sizes, int64_t ndim, const int64_t* reps, int64_t nr) {
  if (!g) return NULL;
  if (2 * nr > WEFT_MAX_DIMS) {
    weft__error(WEFT_NOT_IMPLEMENTED, "the derivative of repeat is not implemented for more than %d dims",
                WEFT_MAX_DIMS / 2);
    return NULL;
  }
  int64_t split[WEFT_MAX_DIMS], rdims[WEFT_MAX_DIMS], lead = nr - ndim;
  for (int64_t i = 0; i < nr; i++) {
    split[2 * i] = reps[i];
    split[2 * i + 1] = i < lead ? 1 : sizes[i - lead];
    rdims[i] = 2 * i;
  }
  T s = reshape(c, g, split, 2 * nr);
  T r = s ? keep(c, weft_sum_dim(s, rdims, nr, false, (weft_dtype)-1)) : NULL;
  return reshape(c, r, sizes, ndim);
}
static T tile_backward(weft__bctx* c, T g, const int64_t* sizes, int64_t ndim, const int64_t* dims, int64_t n) {
  int64_t reps[WEFT_MAX_DIMS];
  int64_t nr = n < ndim ? ndim : n;
  for (int64_t i = 0; i < nr; i++) reps[i] = i < nr - n ? 1 : dims[i - (nr - n)];
  return repeat_backward(c, g, sizes, ndim, reps, nr);
}

/* repeat_interleave(x, r, dim): each row's r copies are adjacent, so a [.., n, r, ..] view summed over r. */
static T repeat_interleave_int_backward(weft__bctx* c, T g, const int64_t* sizes, int64_t ndim, int64_t r,
                                        int64_t dim) {
  if (!g) return NULL;
  int64_t sz[WEFT_MAX_DIMS + 1], nd;
  if (dim == INT64_MIN) { /* flattened */
    int64_t numel = 1;
    for (int64_t i = 0; i < ndim; i++) numel *= sizes[i];
    sz[0] = numel, sz[1] = r, nd = 2, dim = 0;
  } else {
    dim = wrap_dim(dim, ndim);
    nd = ndim > 0 ? ndim + 1 : 2;
    for (int64_t i = 0, j = 0; i < (ndim > 0 ? ndim : 1); i++) {
      sz[j++] = ndim > 0 ? sizes[i] : 1;
      if (i == dim) sz[j++] = r;
    }
  }
  T s = reshape(c, g, sz, nd);
  int64_t rd = dim + 1;
  T sum = s ? keep(c, weft_sum_dim(s, &rd, 1, false, (weft_dtype)-1)) : NULL;
  return reshape(c, sum, sizes, ndim);
}
static T repeat_interleave_tensor_backward(weft__bctx* c, T g, const int64_t* sizes, int64_t ndim, T repeats,
                                           int64_t dim) {
  T index = repeats ? keep(c, weft_repeat_interleave_tensor(repeats, INT64_MIN)) : NULL;
  if (dim != INT64_MIN) return index_add_backward(c, g, zeros(c, g, sizes, ndim), dim, index);
  int64_t flat = -1, numel = 1;
  for (int64_t i = 0; i < ndim; i++) numel *= sizes[i];
  T flat_g = index_add_backward(c, g, zeros(c, g, &numel, 1), 0, index);
  (void)flat;
  return reshape(c, flat_g, sizes, ndim);
}

static T tri_(weft__bctx* c, T g, int64_t k, bool lower) {
  return g ? keep(c, lower ? weft_tril(g, k) : weft_triu(g, k)) : NULL;
}

/* diag: a vector's gradient is the matrix gradient's diagonal; a matrix's is its diagonal written back. */
static T diag_backward(weft__bctx* c, T g, const int64_t* sizes, int64_t n, int64_t k) {
  if (n == 1) return g ? keep(c, weft_diagonal(g, k, 0, 1)) : NULL;
  return diagonal_backward(c, g, sizes, n, k, 0, 1);
}

static T movedim_backward(weft__bctx* c, T g, const int64_t* src, int64_t ns, const int64_t* dst, int64_t nd) {
  return g ? keep(c, weft_op_movedim(g, dst, nd, src, ns)) : NULL;
}

/* ---- (values, indices) ops: RES is the indices ---- */
/* max/min/kthvalue over a dim, sort, topk: the gradient written back where the values came from. */
static T value_selecting_backward(weft__bctx* c, T g, T idx, const int64_t* sizes, int64_t ndim, int64_t dim,
                                  bool keepdim) {
  if (!g || !idx) return NULL;
  if (ndim == 0) return g;
  dim = wrap_dim(dim, ndim);
  if (!keepdim) {
    g = keep(c, weft_unsqueeze(g, dim));
    idx = g ? keep(c, weft_unsqueeze(idx, dim)) : NULL;
    if (!idx) return NULL;
  }
  T z = zeros(c, g, sizes, ndim);
  return z ? keep(c, weft_scatter_src(z, dim, idx, g)) : NULL;
}
static T msort_backward(weft__bctx* c, T g, T x) {
  if (x->ndim == 0) return g;
  T idx = keep(c, weft_argsort(x, 0, false));
  return value_selecting_backward(c, g, idx, x->sizes, x->ndim, 0, true);
}

/* ---- Tensor[] inputs: the gradient of element k goes to c->gl[k] ---- */
static int64_t list_len(const weft_node* n) {
  int64_t len = 0;
  for (int32_t e = 0; n->edge_elem && e < n->nnext; e++)
    if (n->edge_elem[e] + 1 > len) len = n->edge_elem[e] + 1;
  return len;
}

/* The length along dim of element im in the joined result: its own size
 * there, or (hstack/vstack/dstack view lower ranks up) what its numel leaves. */
static int64_t joined_len(const weft__input_meta* im, T g, int64_t dim) {
  if (im->ndim == g->ndim) return im->sizes[dim];
  int64_t numel = 1, rest = 1;
  for (int32_t d = 0; d < im->ndim; d++) numel *= im->sizes[d];
  for (int64_t d = 0; d < g->ndim; d++) rest *= d == dim ? 1 : g->sizes[d];
  return rest ? numel / rest : 0;
}

/* cat, stack, hstack/vstack/dstack: each element's gradient is its block of
 * the result's (a select for stack), in the element's own shape. */
static T join_backward(weft__bctx* c, int64_t dim, bool stacked) {
  T g = grad;
  dim = wrap_dim(dim, g->ndim);
  int64_t off = 0, n = list_len(c->node);
  for (int64_t k = 0; k < n; k++) {
    const weft__input_meta* im = &c->node->edge_in[k];
    T piece;
    if (stacked) piece = keep(c, weft_select(g, dim, k));
    else if (im->ndim == 1 && im->sizes[0] == 0 && g->ndim != 1) piece = zeros(c, g, im->sizes, 1); /* skipped by cat */
    else {
      int64_t len = joined_len(im, g, dim);
      piece = keep(c, weft_narrow(g, dim, off, len));
      off += len;
    }
    if (piece && !weft__same_sizes(piece, im->sizes, im->ndim)) piece = reshape(c, piece, im->sizes, im->ndim);
    if (!piece) return NULL;
    c->gl[k] = weft_tensor_retain((weft_tensor*)piece);
  }
  return g;
}

/* ---- multi-output nodes (split, unbind): the gradients of the pieces
 * joined back into the input's shape, zeros where a piece got none
 * (PyTorch's split_with_sizes_backward / unbind_backward) ---- */
static int32_t pieces_of(const weft_node* n) { return n->nout > 1 ? n->nout : 1; }

/* Piece i of input argument 0 along dim: its shape (len[i] there, or dim
 * dropped when len is NULL, unbind). */
static int64_t piece_shape(weft__bctx* c, int64_t dim, const int64_t* len, int64_t i, int64_t* sizes) {
  int64_t nd = 0;
  for (int64_t d = 0; d < NDIM(0); d++)
    if (d != dim || len) sizes[nd++] = d == dim ? len[i] : SIZES(0)[d];
  return nd;
}

/* cat (stack when len is NULL) of the pieces' gradients along dim; the
 * zeros for missing ones are made here and released after the join */
static T join_pieces(weft__bctx* c, int64_t dim, const int64_t* len) {
  int32_t n = pieces_of(c->node);
  T like = NULL; /* the zeros take a gradient's dtype and device (the node runs only when one came) */
  for (int32_t i = 0; i < n && !like; i++) like = c->grads[i];
  if (!like) return weft__error_null(WEFT_INTERNAL, "autograd: %s ran without a gradient", c->node->name);
  const weft_tensor** parts = calloc((size_t)n, sizeof *parts);
  weft_tensor** zeros = calloc((size_t)n, sizeof *zeros);
  bool ok = parts && zeros;
  if (!ok) weft__error(WEFT_OUT_OF_MEMORY, "out of memory: %s", c->node->name);
  for (int32_t i = 0; ok && i < n; i++) {
    if ((parts[i] = c->grads[i])) continue;
    int64_t sizes[WEFT_MAX_DIMS], nd = piece_shape(c, dim, len, i, sizes);
    ok = (parts[i] = zeros[i] = weft_full(sizes, nd, 0.0, like->dtype, like->device)) != NULL;
  }
  weft_tensor* r = !ok ? NULL : len ? weft_cat(parts, n, dim) : weft_op_stack(parts, n, dim);
  for (int32_t i = 0; zeros && i < n; i++) weft_tensor_release(zeros[i]);
  free(zeros);
  free(parts);
  return keep(c, r);
}

/* split(self, split_size, dim): every piece split_size long but the last */
static T split_backward(weft__bctx* c, int64_t split_size, int64_t dim) {
  int32_t n = pieces_of(c->node);
  int64_t* len = malloc(sizeof *len * (size_t)n);
  if (!len) return weft__error_null(WEFT_OUT_OF_MEMORY, "out of memory: %s", c->node->name);
  dim = wrap_dim(dim, NDIM(0));
  for (int32_t i = 0; i < n; i++) len[i] = i < n - 1 ? split_size : SIZES(0)[dim] - split_size * (n - 1);
  T r = join_pieces(c, dim, len);
  free(len);
  return r;
}

static T split_with_sizes_backward(weft__bctx* c, const int64_t* sizes, int64_t dim) {
  return join_pieces(c, wrap_dim(dim, NDIM(0)), sizes);
}

static T unbind_backward(weft__bctx* c, int64_t dim) { return join_pieces(c, wrap_dim(dim, NDIM(0)), NULL); }

static T nll_loss_(weft__bctx* c, T g, T target, T weight, const char* reduction, int64_t ignore) {
  return g && target ? keep(c, weft_nll_loss(g, target, weight, reduction, ignore)) : NULL;
}

/* ---- backward ops computing several gradients in one call (the convolutions', the
 * normalizations'): the first G() makes them all, with an output mask from the edges ---- */
/* the output mask: which of (input, weight, bias), arguments in0/in1/in2, need a gradient */
static void norm_mask(weft__bctx* c, int in0, int in1, int in2, bool mask[3]) {
  mask[0] = (c->needs & A(in0)) != 0, mask[1] = (c->needs & A(in1)) != 0, mask[2] = (c->needs & A(in2)) != 0;
}
static T trio_set(weft__bctx* c, T gx, T gw, T gb, int which) {
  c->trio_done = true;
  c->trio[0] = (weft_tensor*)gx, c->trio[1] = (weft_tensor*)gw, c->trio[2] = (weft_tensor*)gb;
  return c->trio[which];
}
static T trio_pick(weft__bctx* c, weft_tensor3 r, int which) {
  weft_tensor** outs = (weft_tensor**)&r; /* r's tensors (`t` is a macro here) */
  T k[3];
  for (int i = 0; i < 3; i++) k[i] = outs[i] ? keep(c, outs[i]) : NULL;
  return trio_set(c, k[0], k[1], k[2], which);
}

/* ---- conv and pooling: the op's own arguments read from the node ---- */

/* Output `which` of convolution_backward (0 input, 1 weight, 2 bias). For a
 * convolution's node (all), one call makes every gradient it needs (the
 * others wait in the trio); under createGraph, and for the double backward,
 * each output is a call of its own with a one-hot mask instead, as
 * ConvolutionBackwardBackward0 differentiates the one output it owns. */
typedef struct {
  const int64_t *stride, *padding, *dilation, *output_padding; /* output_padding NULL: zeros */
  int64_t ns, np, nd, nop, groups;
  bool transposed;
} conv_args;
static T conv_backward_one(weft__bctx* c, T g, T x, T w, const conv_args* a, int which, bool all) {
  if (!g || !x || !w) return NULL;
  if (all && c->trio_done) return c->trio[which];
  bool one = !all || weft_grad_enabled(), mask[3] = {which == 0, which == 1, which == 2};
  if (!one) norm_mask(c, 0, 1, 2, mask);
  const int64_t no_output_padding[2] = {0, 0};
  bool op = a->output_padding != NULL;
  weft_tensor3 r = weft_convolution_backward(g, x, w, NULL, 0, a->stride, a->ns, a->padding, a->np, a->dilation,
                                             a->nd, a->transposed, op ? a->output_padding : no_output_padding,
                                             op ? a->nop : 2, a->groups, mask, 3);
  weft_tensor** outs = (weft_tensor**)&r; /* r's tensors (`t` is a macro here) */
  if (r.status) return NULL;
  return one ? keep(c, outs[which]) : trio_pick(c, r, which);
}

/* conv2d.padding's string as convolution_backward's padding: 'valid' 0;
 * 'same' d (k - 1) in total per dim, the odd one at the bottom/right as
 * 1.13 pads a copy of the input. Such a dim runs with the larger padding on
 * both sides, whose output has one more leading row: the gradient gets a
 * zero row there (slice_backward, recorded, so createGraph still works). */
static T same_padding(weft__bctx* c, T g, T w, const char* mode, const int64_t* dil, int64_t nd, int64_t pad[2]) {
  bool same = strcmp(mode, "same") == 0;
  for (int i = 0; i < 2 && g; i++) {
    int64_t total = same ? dil[nd == 1 ? 0 : i] * (w->sizes[2 + i] - 1) : 0;
    pad[i] = total - total / 2;
    if (total % 2 == 0) continue;
    int64_t sizes[4], dim = g->ndim - 2 + i;
    memcpy(sizes, g->sizes, sizeof(int64_t) * (size_t)g->ndim);
    sizes[dim]++;
    g = slice_backward(c, g, sizes, g->ndim, dim, 1, INT64_MAX, 1);
  }
  return g;
}

/* A 2-D convolution's gradient `which` (0 input, 1 weight, 2 bias) through
 * convolution_backward, padding a list (a) or a string (mode); a 3-D input
 * as a batch of one. */
static T conv_2d_backward(weft__bctx* c, T g, T x, T w, conv_args a, const char* mode, int which) {
  if (!g || !x || !w) return NULL;
  int64_t pad[2];
  if (mode) {
    a.padding = pad, a.np = 2;
    g = same_padding(c, g, w, mode, a.dilation, a.nd, pad);
  }
  if (!g || x->ndim != 3) return conv_backward_one(c, g, x, w, &a, which, true);
  T g4 = keep(c, weft_unsqueeze(g, 0)), x4 = g4 ? keep(c, weft_unsqueeze(x, 0)) : NULL;
  T r = conv_backward_one(c, g4, x4, w, &a, which, true);
  return which == 0 && r ? keep(c, weft_squeeze_dim(r, 0)) : r;
}

/* conv2d(input, weight, bias, stride, padding, dilation, groups), padding a
 * list or (conv2d.padding) a string */
static T conv2d_backward(weft__bctx* c, T g, T x, T w, int which) {
  conv_args a = {IL(3), IL(4), IL(5), NULL, ILN(3), ILN(4), ILN(5), 0, INT(6), false};
  return conv_2d_backward(c, g, x, w, a, STR(4), which);
}

/* A 1-D convolution's gradient: its tensors with a height of 1 (as 1.13's
 * view4d), the 2-D gradient (a's lists already 2-D), the height dropped again */
static T conv_1d_backward(weft__bctx* c, T g, T x, T w, const conv_args* a, const char* mode, int which) {
  if (!g || !x || !w) return NULL;
  T g2 = keep(c, weft_unsqueeze(g, -2));
  T x2 = g2 ? keep(c, weft_unsqueeze(x, -2)) : NULL;
  T w2 = x2 ? keep(c, weft_unsqueeze(w, 2)) : NULL;
  T r = w2 ? conv_2d_backward(c, g2, x2, w2, *a, mode, which) : NULL;
  if (!r || which == 2) return r;
  return keep(c, weft_squeeze_dim(r, which == 0 ? -2 : 2));
}

/* conv1d(input, weight, bias, stride, padding, dilation, groups) */
static T conv1d_backward(weft__bctx* c, T g, T x, T w, int which) {
  const int64_t stride[2] = {1, IL(3)[0]}, dil[2] = {1, IL(5)[0]}, pad[2] = {0, STR(4) ? 0 : IL(4)[0]};
  const conv_args a = {stride, pad, dil, NULL, 2, 2, 2, 0, INT(6), false};
  return conv_1d_backward(c, g, x, w, &a, STR(4), which);
}

/* conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation) */
static T conv_transpose1d_backward(weft__bctx* c, T g, T x, T w, int which) {
  const int64_t stride[2] = {1, IL(3)[0]}, pad[2] = {0, IL(4)[0]}, op[2] = {0, IL(5)[0]}, dil[2] = {1, IL(7)[0]};
  const conv_args a = {stride, pad, dil, op, 2, 2, 2, 2, INT(6), true};
  return conv_1d_backward(c, g, x, w, &a, NULL, which);
}

/* conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation) */
static T conv_transpose2d_backward(weft__bctx* c, T g, T x, T w, int which) {
  conv_args a = {IL(3), IL(4), IL(7), IL(5), ILN(3), ILN(4), ILN(7), ILN(5), INT(6), true};
  return conv_2d_backward(c, g, x, w, a, NULL, which);
}

/* convolution_backward's own derivative (PyTorch's
 * _convolution_double_backward), for the one output this node owns (the
 * true entry of output_mask): gI = conv^T(gO, W), gW = corr(gO, X) and
 * gb = sum(gO) are bilinear, so with G the incoming gradient
 *   of gI: ggO = conv(G, W),  gW' = convolution_backward(gO, G, W).weight
 *   of gW: ggO = conv(X, G),  gX' = convolution_backward(gO, X, G).input
 *   of gb: ggO = G broadcast over gO's batch and plane
 * and the tensor an output does not depend on gets zeros. */
static int owned_output(weft__bctx* c) {
  for (int i = 0; i < 3 && i < ILN(10); i++)
    if (IL(10)[i]) return i;
  return 0;
}
static T conv_double_backward(weft__bctx* c, T G, int arg) {
  T gO = S(0), x = S(1), w = S(2);
  if (!G || !gO || !x || !w) return NULL;
  conv_args a = {IL(4), IL(5), IL(6), IL(8), ILN(4), ILN(5), ILN(6), ILN(8), INT(9), BOOLA(7)};
  int j = owned_output(c);
  if (arg == 0 && j < 2) { /* the forward convolution itself */
    T in = j == 0 ? G : x, wt = j == 0 ? w : G;
    return keep(c, a.transposed ? weft_conv_transpose2d(in, wt, NULL, a.stride, a.ns, a.padding, a.np,
                                                         a.output_padding, a.nop, a.groups, a.dilation, a.nd)
                                : weft_conv2d(in, wt, NULL, a.stride, a.ns, a.padding, a.np, a.dilation, a.nd,
                                              a.groups));
  }
  if (arg == 0) {
    int64_t shape[4] = {1, G->sizes[0], 1, 1};
    return expand(c, reshape(c, G, shape, 4), gO->sizes, gO->ndim);
  }
  if (arg == 1 && j == 1) return conv_backward_one(c, gO, x, G, &a, 0, false);
  if (arg == 2 && j == 0) return conv_backward_one(c, gO, G, w, &a, 1, false);
  return zeros_of(c, G, arg);
}

/* max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode): the
 * indices recomputed from the saved input (max_pool2d keeps one output). */
static T max_pool2d_backward(weft__bctx* c, T g, T self) {
  if (!g || !self) return NULL;
  bool was = weft_set_grad_enabled(false); /* the indices only: not recorded under createGraph */
  weft_tensor2 r = weft_max_pool2d_with_indices(self, IL(1), ILN(1), IL(2), ILN(2), IL(3), ILN(3), IL(4), ILN(4),
                                                BOOLA(5));
  weft_set_grad_enabled(was);
  weft_tensor** vi = (weft_tensor**)&r; /* values, indices (`t` is a macro here) */
  if (!vi[0]) return NULL;
  weft_tensor_release(vi[0]);
  T idx = keep(c, vi[1]);
  return idx ? keep(c, weft_max_pool2d_with_indices_backward(g, self, IL(1), ILN(1), IL(2), ILN(2), IL(3), ILN(3),
                                                             IL(4), ILN(4), BOOLA(5), idx))
             : NULL;
}

/* max_pool2d_with_indices: its own indices (RES) */
static T max_pool2d_indices_backward(weft__bctx* c, T g, T self, T idx) {
  return g && self && idx ? keep(c, weft_max_pool2d_with_indices_backward(g, self, IL(1), ILN(1), IL(2), ILN(2), IL(3),
                                                                          ILN(3), IL(4), ILN(4), BOOLA(5), idx))
                          : NULL;
}

/* avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override) */
static T avg_pool2d_backward(weft__bctx* c, T g, T self) {
  return g && self ? keep(c, weft_avg_pool2d_backward(g, self, IL(1), ILN(1), IL(2), ILN(2), IL(3), ILN(3), BOOLA(4),
                                                      BOOLA(5), OPTINT(6)))
                   : NULL;
}

static T adaptive_avg_pool2d_backward(weft__bctx* c, T g, T self) {
  return g && self ? keep(c, weft_op__adaptive_avg_pool2d_backward(g, self)) : NULL;
}

/* ---- double backward (issue 15): the backward ops' own formulas ---- */
static T select_(weft__bctx* c, T g, int64_t dim, int64_t index) {
  return g ? keep(c, weft_select(g, dim, index)) : NULL;
}
static T slice_(weft__bctx* c, T g, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return g ? keep(c, weft_slice(g, dim, start, end, step)) : NULL;
}
static T diagonal_(weft__bctx* c, T g, int64_t offset, int64_t d1, int64_t d2) {
  return g ? keep(c, weft_diagonal(g, offset, d1, d2)) : NULL;
}

/* max_pool2d_with_indices_backward is linear in grad_output: its derivative
 * reads the input-shaped gradient at the saved argmax of each window
 * (PyTorch's max_pool_double_backward), a gather over the flattened plane. */
static T max_pool_double_backward(weft__bctx* c, T g, T indices) {
  if (!g || !indices) return NULL;
  int64_t nd = g->ndim, gs[4], is[4];
  for (int64_t d = 0; d < nd - 2; d++) gs[d] = is[d] = g->sizes[d];
  gs[nd - 2] = -1;
  is[nd - 2] = -1;
  T g2 = reshape(c, g, gs, nd - 1), i2 = reshape(c, indices, is, nd - 1);
  T r = g2 && i2 ? keep(c, weft_gather(g2, nd - 2, i2, false)) : NULL;
  return reshape(c, r, indices->sizes, indices->ndim);
}

/* avg_pool2d_backward(grad_output, self, kernel_size, stride, padding,
 * ceil_mode, count_include_pad, divisor_override): linear, its derivative is
 * the pooling itself with the same arguments. */
static T avg_pool2d_(weft__bctx* c, T g) {
  return g ? keep(c, weft_avg_pool2d(g, IL(2), ILN(2), IL(3), ILN(3), IL(4), ILN(4), BOOLA(5), BOOLA(6), OPTINT(7)))
           : NULL;
}
/* _adaptive_avg_pool2d_backward(grad_output, self): pooling to grad_output's plane */
static T adaptive_avg_pool2d_(weft__bctx* c, T g) {
  const int64_t* out = SIZES(0) + NDIM(0) - 2;
  return g ? keep(c, weft_op__adaptive_avg_pool2d(g, out, 2)) : NULL;
}

#include "autograd/formulas_resize.inc"
/* ---- normalizations: one backward call per node for all three gradients ---- */
/* Under createGraph the gradients are differentiable ops over the saved
 * input (PyTorch's infinitely_differentiable_native_*_backward): mean and
 * rstd recomputed from x, so a second pass sees how they depend on it.
 * xs: x as the statistics see it (reduced over dims, keepdim), g likewise;
 * with xhat = (x - mean) rstd and gh = g * w,
 *   dx = rstd (gh - mean(gh) - xhat mean(gh xhat)). */
static T mean_k(weft__bctx* c, T a, const int64_t* dims, int64_t n) {
  return a ? keep(c, weft_mean_dim(a, dims, n, true, (weft_dtype)-1)) : NULL;
}
static T sum_k(weft__bctx* c, T a, const int64_t* dims, int64_t n, bool keepdim) {
  return a ? keep(c, weft_sum_dim(a, dims, n, keepdim, (weft_dtype)-1)) : NULL;
}
static T rsqrt_eps(weft__bctx* c, T var, double eps) { return call1(c, weft_rsqrt, add_scalar(c, var, eps)); }
/* xhat over dims, and rstd */
static T normalized(weft__bctx* c, T x, const int64_t* dims, int64_t n, double eps, T* rstd) {
  T xc = sub(c, x, mean_k(c, x, dims, n));
  *rstd = rsqrt_eps(c, mean_k(c, mul(c, xc, xc), dims, n), eps);
  return mul(c, xc, *rstd);
}
static T dx_of(weft__bctx* c, T gh, T xhat, T rstd, const int64_t* dims, int64_t n) {
  T m1 = mean_k(c, gh, dims, n), m2 = mean_k(c, mul(c, gh, xhat), dims, n);
  return mul(c, rstd, sub(c, sub(c, gh, m1), mul(c, xhat, m2)));
}
/* w [C] as [1, C, 1, ...] against an ndim-dim input */
static T channel_view(weft__bctx* c, T w, int64_t ndim) {
  int64_t s[WEFT_MAX_DIMS];
  for (int64_t d = 0; d < ndim; d++) s[d] = d == 1 ? -1 : 1;
  return w ? reshape(c, w, s, ndim) : NULL;
}
/* the dims of x other than 1 */
static int64_t not_channels(int64_t ndim, int64_t* dims) {
  int64_t n = 0;
  for (int64_t d = 0; d < ndim; d++)
    if (d != 1) dims[n++] = d;
  return n;
}

static T batch_norm_composite(weft__bctx* c, int which) {
  T g = grad, x = S(0), w = S(1), rm = S(3), rv = S(4);
  int64_t dims[WEFT_MAX_DIMS], nd = not_channels(x->ndim, dims);
  T rstd, xhat;
  if (BOOLA(5)) {
    xhat = normalized(c, x, dims, nd, DBL(7), &rstd);
  } else {
    rstd = rsqrt_eps(c, channel_view(c, rv, x->ndim), DBL(7));
    xhat = mul(c, sub(c, x, channel_view(c, rm, x->ndim)), rstd);
  }
  T wv = channel_view(c, w, x->ndim), gh = wv ? mul(c, g, wv) : g;
  T gx = BOOLA(5) ? dx_of(c, gh, xhat, rstd, dims, nd) : mul(c, gh, rstd);
  return trio_set(c, gx, sum_k(c, mul(c, g, xhat), dims, nd, false), sum_k(c, g, dims, nd, false), which);
}

static T layer_norm_composite(weft__bctx* c, int which) {
  T g = grad, x = S(0), w = S(2);
  int64_t nn = ILN(1), axis = x->ndim - nn, dims[WEFT_MAX_DIMS], lead[WEFT_MAX_DIMS];
  for (int64_t i = 0; i < nn; i++) dims[i] = axis + i;
  for (int64_t i = 0; i < axis; i++) lead[i] = i;
  T rstd, xhat = normalized(c, x, dims, nn, DBL(4), &rstd);
  T gh = w ? mul(c, g, w) : g;
  T gp = mul(c, g, xhat);
  T gw = axis ? sum_k(c, gp, lead, axis, false) : gp, gb = axis ? sum_k(c, g, lead, axis, false) : g;
  return trio_set(c, dx_of(c, gh, xhat, rstd, dims, nn), gw, gb, which);
}

static T group_norm_composite(weft__bctx* c, int which) {
  T g = grad, x = S(0), w = S(1);
  const int64_t groups[3] = {INT(3), INT(6), -1}, two = 2;
  int64_t dims[WEFT_MAX_DIMS], nd = not_channels(x->ndim, dims);
  T rstd, xg = reshape(c, x, groups, 3);
  T xhat = xg ? normalized(c, xg, &two, 1, DBL(7), &rstd) : NULL;
  T wv = channel_view(c, w, x->ndim), gh = reshape(c, wv ? mul(c, g, wv) : g, groups, 3);
  T gx = reshape(c, dx_of(c, gh, xhat, rstd, &two, 1), x->sizes, x->ndim);
  T xh = reshape(c, xhat, x->sizes, x->ndim);
  return trio_set(c, gx, sum_k(c, mul(c, g, xh), dims, nd, false), sum_k(c, g, dims, nd, false), which);
}

/* native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps) */
static T batch_norm_grads(weft__bctx* c, int which) {
  if (c->trio_done) return c->trio[which];
  if (weft_grad_enabled()) return batch_norm_composite(c, which);
  bool mask[3];
  norm_mask(c, 0, 1, 2, mask);
  return trio_pick(
      c, weft_native_batch_norm_backward(grad, S(0), S(1), S(3), S(4), RES, RES2, BOOLA(5), DBL(7), mask, 3), which);
}
/* native_layer_norm(input, normalized_shape, weight, bias, eps) */
static T layer_norm_grads(weft__bctx* c, int which) {
  if (c->trio_done) return c->trio[which];
  if (weft_grad_enabled()) return layer_norm_composite(c, which);
  bool mask[3];
  norm_mask(c, 0, 2, 3, mask);
  return trio_pick(c, weft_native_layer_norm_backward(grad, S(0), IL(1), ILN(1), RES, RES2, S(2), S(3), mask, 3),
                   which);
}
/* native_group_norm(input, weight, bias, N, C, HxW, group, eps) */
static T group_norm_grads(weft__bctx* c, int which) {
  if (c->trio_done) return c->trio[which];
  if (weft_grad_enabled()) return group_norm_composite(c, which);
  bool mask[3];
  norm_mask(c, 0, 1, 2, mask);
  return trio_pick(
      c, weft_native_group_norm_backward(grad, S(0), RES, RES2, S(1), INT(3), INT(4), INT(5), INT(6), mask, 3), which);
}
#include "autograd/formulas_act.h"
#include "autograd/formulas_transformer.h"
#include "autograd/formulas_attention.h"
#include "autograd/formulas_linalg.h"
#include "autograd/formulas_eigh.h"
#include "autograd/formulas_svd.h"
#include "autograd/formulas_dataops.h"
#include "autograd/formulas_cdist.h"

/* ---- expansion ---- */
#define G(i, e)                                   \
  if (c->needs & A(i)) {                          \
    T g_ = (e);                                   \
    if (!g_) return weft_last_status();           \
    c->gi[i] = weft_tensor_retain((weft_tensor*)g_); \
  }
#define WEFT_DERIV(cn, name, save, res, body) \
  static weft_status bw_##cn(weft__bctx* c) { \
    (void)c;                                  \
    body return WEFT_OK;                      \
  }
#include "autograd/derivatives.def"
#undef WEFT_DERIV
#undef G

#define G(i, e) | A(i)
#define WEFT_DERIV(cn, name, save, res, body) {name, weft__op_##cn, save, res, 0 body, bw_##cn},
const weft__formula weft__formulas[] = {
#include "autograd/derivatives.def"
};
#undef WEFT_DERIV
#undef G
const int weft__nformulas = (int)(sizeof weft__formulas / sizeof weft__formulas[0]);
