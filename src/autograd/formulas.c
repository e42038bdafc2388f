/* Expands derivatives.def into the backward function of each formula and
 * the formula table the recording kernel is registered with. The helpers
 * below are the dispatcher ops (so create_graph records the backward pass),
 * wrapped so that a failed step propagates NULL (the error stays in
 * weft_last_error) and every intermediate is released after the formula. */
#include <stdint.h>
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

static T nll_loss_backward(weft__bctx* c, T g, T self, T target, T weight, const char* reduction, int64_t ignore) {
  return g && self && target ? keep(c, weft_nll_loss_backward(g, self, target, weight, reduction, ignore)) : NULL;
}

static T permute_backward(weft__bctx* c, T g, const int64_t* dims, int64_t n) {
  int64_t inv[WEFT_MAX_DIMS];
  for (int64_t i = 0; i < n; i++) inv[dims[i] < 0 ? dims[i] + n : dims[i]] = i;
  return g ? keep(c, weft_permute(g, inv, n)) : NULL;
}

/* select/slice: the gradient written into zeros of the input's shape. The
 * write is not recorded, so a recorded (create_graph) pass refuses. */
static T scatter_into_zeros(weft__bctx* c, T g, const int64_t* sizes, int64_t n, weft_tensor* (*view)(T, void*),
                            void* arg) {
  if (!g) return NULL;
  if (g->requires_grad) {
    weft__error(WEFT_INVALID_ARGUMENT, "the derivative of %s is not implemented for createGraph yet",
                c->node->name);
    return NULL;
  }
  T z = zeros(c, g, sizes, n);
  weft_tensor* v = z ? view(z, arg) : NULL;
  weft_status s = v ? weft_copy_(v, g) : weft_last_status();
  weft_tensor_release(v);
  return s ? NULL : z;
}
typedef struct { int64_t dim, start, end, step; } slice_arg;
static weft_tensor* select_view(T z, void* p) {
  slice_arg* a = p;
  return weft_select(z, a->dim, a->start);
}
static weft_tensor* slice_view(T z, void* p) {
  slice_arg* a = p;
  return weft_slice(z, a->dim, a->start, a->end, a->step);
}
static T select_backward(weft__bctx* c, T g, const int64_t* sizes, int64_t n, int64_t dim, int64_t index) {
  slice_arg a = {dim, index, 0, 1};
  return scatter_into_zeros(c, g, sizes, n, select_view, &a);
}
static T slice_backward(weft__bctx* c, T g, const int64_t* sizes, int64_t n, int64_t dim, int64_t start,
                        int64_t end, int64_t step) {
  slice_arg a = {dim, start, end, step};
  return scatter_into_zeros(c, g, sizes, n, slice_view, &a);
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

/* ---- conv and pooling: the op's own arguments read from the node ---- */

/* conv2d(input, weight, bias, stride, padding, dilation, groups), padding
 * a list or (conv2d.padding) a string: gradient
 * `which` (0 input, 1 weight, 2 bias). Not a recorded op yet, so a
 * createGraph pass is refused rather than silently cut. */
static T conv2d_backward(weft__bctx* c, T g, T x, T w, int which) {
  if (!g || !x || !w) return NULL;
  if (g->requires_grad) {
    weft__error(WEFT_INVALID_ARGUMENT, "the derivative of %s is not implemented for createGraph yet",
                c->node->name);
    return NULL;
  }
  if (STR(4)) /* conv2d.padding: a padding string */
    return keep(c, weft__conv2d_padding_backward(g, x, w, IL(3), ILN(3), STR(4), IL(5), ILN(5), INT(6), which));
  return keep(c, weft__conv2d_backward(g, x, w, IL(3), ILN(3), IL(4), ILN(4), IL(5), ILN(5), INT(6), which));
}

/* max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode): the
 * indices recomputed from the saved input (max_pool2d keeps one output). */
static T max_pool2d_backward(weft__bctx* c, T g, T self) {
  if (!g || !self) return NULL;
  weft_tensor2 r = weft_max_pool2d_with_indices(self, IL(1), ILN(1), IL(2), ILN(2), IL(3), ILN(3), IL(4), ILN(4),
                                                BOOLA(5));
  weft_tensor** vi = (weft_tensor**)&r; /* values, indices (`t` is a macro here) */
  if (!vi[0]) return NULL;
  weft_tensor_release(vi[0]);
  T idx = keep(c, vi[1]);
  return idx ? keep(c, weft_max_pool2d_with_indices_backward(g, self, IL(1), ILN(1), IL(2), ILN(2), IL(3), ILN(3),
                                                             IL(4), ILN(4), BOOLA(5), idx))
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

/* ---- expansion ---- */
#define G(i, e)                                   \
  if (c->needs & A(i)) {                          \
    T g_ = (e);                                   \
    if (!g_) return weft_last_status();           \
    c->gi[i] = weft_tensor_retain((weft_tensor*)g_); \
  }
#define WEFT_DERIV(cn, name, save, res, body) \
  static weft_status bw_##cn(weft__bctx* c) { \
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
