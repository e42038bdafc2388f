/* Issue 25's pointwise ops that PyTorch 1.13 writes in terms of other
 * operators, or whose formula is a few operators (pointwise.def): isnan,
 * isinf, isfinite, isposinf/isneginf, isclose, nan_to_num, square, logit,
 * lerp, addcmul, addcdiv, linalg_cross and cross. Each kernel is
 * CompositeImplicitAutograd: every step is a dispatcher call, so the Meta
 * device and autograd come from the steps (their gradients are the
 * formulas of derivatives.yaml, reached through the chain rule). The
 * checks and messages are 1.13's, made before the first step. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "ops/ops.h"

/* ---- temporaries: each step's result is kept and released at the end ---- */
enum { MAX_TMP = 32 };
typedef struct {
  weft_tensor* t[MAX_TMP];
  int n;
} tmps;

static weft_tensor* keep(tmps* k, weft_tensor* t) {
  if (!t) return NULL;
  if (k->n == MAX_TMP) { /* a composition longer than the list: a bug here, never a leak */
    weft_tensor_release(t);
    return weft__error_null(WEFT_INTERNAL, "pointwise: more than %d steps", MAX_TMP);
  }
  k->t[k->n++] = t;
  return t;
}
/* r survives (a new reference), the rest is released */
static weft_tensor* done(tmps* k, weft_tensor* r) {
  if (r) weft_tensor_retain(r);
  for (int i = 0; i < k->n; i++) weft_tensor_release(k->t[i]);
  k->n = 0;
  return r;
}
#define STEP(var, expr)                  \
  weft_tensor* var = keep(&k, (expr));  \
  if (!var) return done(&k, NULL)

/* ---- out= and in-place tails: r's values into out / self, PyTorch's cast rule ---- */
static bool castable(const char* op, weft_dtype from, weft_dtype to) {
  if (weft_can_cast(from, to)) return true;
  weft__error(WEFT_TYPE_ERROR, "%s: result type %s can't be cast to the desired output type %s", op,
              weft_dtype_name(from), weft_dtype_name(to));
  return false;
}

static weft_tensor* into_out(const char* op, weft_tensor* r, weft_tensor* out) {
  if (!r) return NULL;
  weft_status s = castable(op, r->dtype, out->dtype) ? weft__into_out(op, r, out) : weft_last_status();
  weft_tensor_release(r);
  return s == WEFT_OK ? weft_tensor_retain(out) : NULL;
}

static void shape_str(char* buf, size_t n, const weft_tensor* t) {
  size_t at = (size_t)snprintf(buf, n, "[");
  for (int d = 0; d < t->ndim && at < n; d++)
    at += (size_t)snprintf(buf + at, n - at, d ? ", %lld" : "%lld", (long long)t->sizes[d]);
  if (at < n) snprintf(buf + at, n - at, "]");
}

static weft_status into_self(const char* op, weft_tensor* r, weft_tensor* self) {
  if (!r) return weft_last_status();
  weft_status s = WEFT_OK;
  if (r->ndim != self->ndim || memcmp(r->sizes, self->sizes, sizeof(int64_t) * (size_t)r->ndim) != 0) {
    char a[160], b[160];
    shape_str(a, sizeof a, self);
    shape_str(b, sizeof b, r);
    s = weft__error(WEFT_INVALID_ARGUMENT, "%s: output with shape %s doesn't match the broadcast shape %s", op, a, b);
  } else if (!castable(op, r->dtype, self->dtype)) {
    s = weft_last_status();
  } else if (self->device != WEFT_DEVICE_META) {
    s = weft_copy_(self, r);
  }
  weft_tensor_release(r);
  return s;
}

static double scalar_f64(weft_scalar s) {
  return s.tag == WEFT_SCALAR_DOUBLE ? s.v.d : s.tag == WEFT_SCALAR_BOOL ? (double)s.v.b : (double)s.v.i;
}

static bool is_int(const weft_tensor* t) { return weft_dtype_is_integral(t->dtype, true); }

/* ---- isnan, isinf, isfinite, isposinf, isneginf (1.13: TensorCompare.cpp) ---- */
static weft_tensor* isnan_kernel(const weft_tensor* self) { return weft_ne(self, self); }

static weft_tensor* bool_like(const weft_tensor* self, bool v) {
  return v ? weft_ones_like(self, WEFT_BOOL, WEFT_PRESERVE_FORMAT) : weft_zeros_like(self, WEFT_BOOL, WEFT_PRESERVE_FORMAT);
}

static weft_tensor* isinf_kernel(const weft_tensor* self) {
  if (is_int(self)) return bool_like(self, false);
  tmps k = {0};
  STEP(a, weft_abs(self));
  return done(&k, keep(&k, weft_eq_scalar(a, weft_scalar_double(INFINITY))));
}

static weft_tensor* isfinite_kernel(const weft_tensor* self) {
  if (is_int(self)) return bool_like(self, true);
  tmps k = {0};
  STEP(same, weft_eq(self, self));
  STEP(a, weft_abs(self));
  STEP(finite, weft_ne_scalar(a, weft_scalar_double(INFINITY)));
  return done(&k, keep(&k, weft_mul(same, finite)));
}

static weft_tensor* signed_inf(const char* op, const weft_tensor* self, double inf, weft_tensor* out) {
  if (out && out->dtype != WEFT_BOOL)
    return weft__error_null(WEFT_TYPE_ERROR, "%s: %s does not support non-boolean outputs.", op, op);
  weft_tensor* r = is_int(self) ? bool_like(self, false) : weft_eq_scalar(self, weft_scalar_double(inf));
  return out ? into_out(op, r, out) : r;
}
static weft_tensor* isposinf_kernel(const weft_tensor* self) { return signed_inf("isposinf", self, INFINITY, NULL); }
static weft_tensor* isneginf_kernel(const weft_tensor* self) { return signed_inf("isneginf", self, -INFINITY, NULL); }
static weft_tensor* isposinf_out_kernel(const weft_tensor* self, weft_tensor* out) {
  return signed_inf("isposinf", self, INFINITY, out);
}
static weft_tensor* isneginf_out_kernel(const weft_tensor* self, weft_tensor* out) {
  return signed_inf("isneginf", self, -INFINITY, out);
}

/* ---- isclose: |self - other| <= atol + rtol |other|, or equal (1.13's order of steps) ---- */
static weft_tensor* isclose_kernel(const weft_tensor* self, const weft_tensor* other, double rtol, double atol,
                                   bool equal_nan) {
  if (self->dtype != other->dtype)
    return weft__error_null(WEFT_TYPE_ERROR, "isclose: %s did not match %s", weft_dtype_name(self->dtype),
                            weft_dtype_name(other->dtype));
  if (!(rtol >= 0))
    return weft__error_null(WEFT_INVALID_ARGUMENT, "isclose: rtol must be greater than or equal to zero, but got %.17g",
                            rtol);
  if (!(atol >= 0))
    return weft__error_null(WEFT_INVALID_ARGUMENT, "isclose: atol must be greater than or equal to zero, but got %.17g",
                            atol);
  tmps k = {0};
  STEP(close, weft_eq(self, other));
  bool floating = weft_dtype_is_floating(self->dtype);
  if (equal_nan && floating) {
    STEP(na, weft_ne(self, self));
    STEP(nb, weft_ne(other, other));
    STEP(both, weft_logical_and(na, nb));
    close = keep(&k, weft_logical_or(close, both));
    if (!close) return done(&k, NULL);
  }
  if (rtol == 0 && atol == 0) return done(&k, close);
  /* integers too: rtol * other promotes them to the default float dtype; bool goes there first */
  if (self->dtype == WEFT_BOOL) {
    STEP(sf, weft_to_dtype(self, weft_get_default_dtype(), false));
    STEP(of, weft_to_dtype(other, weft_get_default_dtype(), false));
    self = sf;
    other = of;
  }
  STEP(scaled, weft_mul_scalar(other, weft_scalar_double(rtol)));
  STEP(ascaled, weft_abs(scaled));
  STEP(allowed, weft_add_scalar(ascaled, weft_scalar_double(atol), weft_scalar_int(1)));
  STEP(diff, weft_sub(self, other, weft_scalar_int(1)));
  STEP(actual, weft_abs(diff));
  STEP(fin, isfinite_kernel(actual));
  STEP(within, weft_le(actual, allowed));
  STEP(ok, weft_logical_and(fin, within));
  return done(&k, keep(&k, weft_logical_or(close, ok)));
}

/* ---- nan_to_num: None (NaN here) is 0, the dtype's largest and lowest ---- */
static double dtype_max(weft_dtype t) {
  switch (t) {
    case WEFT_FLOAT16: return 65504.0;
    case WEFT_BFLOAT16: return 3.3895313892515355e38;
    case WEFT_FLOAT32: return FLT_MAX;
    default: return DBL_MAX;
  }
}

static weft_tensor* nan_to_num_impl(const weft_tensor* self, double nan, double posinf, double neginf) {
  if (is_int(self)) return weft_clone(self, WEFT_PRESERVE_FORMAT);
  double big = dtype_max(self->dtype);
  tmps k = {0};
  STEP(isn, weft_ne(self, self));
  STEP(isp, weft_eq_scalar(self, weft_scalar_double(INFINITY)));
  STEP(ism, weft_eq_scalar(self, weft_scalar_double(-INFINITY)));
  STEP(r1, weft_where_scalar_self(isn, weft_scalar_double(isnan(nan) ? 0.0 : nan), self));
  STEP(r2, weft_where_scalar_self(isp, weft_scalar_double(isnan(posinf) ? big : posinf), r1));
  return done(&k, keep(&k, weft_where_scalar_self(ism, weft_scalar_double(isnan(neginf) ? -big : neginf), r2)));
}
static weft_tensor* nan_to_num_kernel(const weft_tensor* self, double nan, double posinf, double neginf) {
  return nan_to_num_impl(self, nan, posinf, neginf);
}
static weft_status nan_to_num_inplace_kernel(weft_tensor* self, double nan, double posinf, double neginf) {
  return into_self("nan_to_num_", nan_to_num_impl(self, nan, posinf, neginf), self);
}
static weft_tensor* nan_to_num_out_kernel(const weft_tensor* self, double nan, double posinf, double neginf,
                                          weft_tensor* out) {
  if (out->dtype != self->dtype)
    return weft__error_null(WEFT_TYPE_ERROR, "nan_to_num: dtype of out: %s should be same as input: %s",
                            weft_dtype_name(out->dtype), weft_dtype_name(self->dtype));
  return into_out("nan_to_num", nan_to_num_impl(self, nan, posinf, neginf), out);
}

/* ---- square: pow(self, 2), as 1.13 (so bool squares to int64) ---- */
static weft_tensor* square_kernel(const weft_tensor* self) { return weft_pow_scalar(self, weft_scalar_int(2)); }
static weft_status square_inplace_kernel(weft_tensor* self) { return weft_pow_scalar_(self, weft_scalar_int(2)); }
static weft_tensor* square_out_kernel(const weft_tensor* self, weft_tensor* out) {
  return weft_pow_scalar_out(self, weft_scalar_int(2), out);
}

/* ---- logit: log(z / (1 - z)), z clamped to [eps, 1 - eps] when eps >= 0 ---- */
static weft_tensor* logit_impl(const weft_tensor* self, double eps) {
  tmps k = {0};
  const weft_tensor* x = self;
  if (is_int(self)) {
    STEP(xf, weft_to_dtype(self, weft_get_default_dtype(), false));
    x = xf;
  }
  if (eps >= 0) { /* None (NaN) and a negative eps leave the input unclamped, as 1.13's kernel */
    weft_scalar lo = weft_scalar_double(eps), hi = weft_scalar_double(1 - eps);
    STEP(xc, weft_clamp(x, &lo, &hi));
    x = xc;
  }
  STEP(negx, weft_neg(x));
  STEP(one_minus, weft_add_scalar(negx, weft_scalar_int(1), weft_scalar_int(1))); /* 1 + (-x): 1 - x's bits */
  STEP(ratio, weft_div(x, one_minus));
  return done(&k, keep(&k, weft_log(ratio)));
}
static weft_tensor* logit_kernel(const weft_tensor* self, double eps) { return logit_impl(self, eps); }
static weft_status logit_inplace_kernel(weft_tensor* self, double eps) {
  return into_self("logit_", logit_impl(self, eps), self);
}
static weft_tensor* logit_out_kernel(const weft_tensor* self, double eps, weft_tensor* out) {
  return into_out("logit", logit_impl(self, eps), out);
}

/* ---- broadcasting checked up front, so the message names the op called ---- */
typedef struct {
  int64_t sizes[WEFT_MAX_DIMS];
  int ndim;
} shape;

/* TensorIterator's compute_shape: infer_size of the shape so far (a) and the next operand (b) */
static bool broadcast(const char* op, const weft_tensor* const* ts, int n, shape* out) {
  out->ndim = 0;
  for (int i = 0; i < n; i++) {
    const weft_tensor* t = ts[i];
    int nd = t->ndim > out->ndim ? t->ndim : out->ndim;
    shape r = {{0}, nd};
    for (int d = nd - 1; d >= 0; d--) {
      int da = d - (nd - out->ndim), db = d - (nd - t->ndim);
      int64_t a = da >= 0 ? out->sizes[da] : 1, b = db >= 0 ? t->sizes[db] : 1;
      if (a != b && a != 1 && b != 1) {
        weft__error(WEFT_INVALID_ARGUMENT,
                    "%s: The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                    "dimension %d",
                    op, (long long)a, (long long)b, d);
        return false;
      }
      r.sizes[d] = a == 1 ? b : a;
    }
    *out = r;
  }
  return true;
}

/* ---- lerp: 1.13's formula, by the weight's size: self + w (end - self) below
 * |w| = 0.5, end - (end - self)(1 - w) from it ---- */
static bool lerp_checks(const char* op, const weft_tensor* self, const weft_tensor* end, const weft_tensor* weight) {
  const weft_tensor* ts[3] = {self, end, weight};
  const char* names[3] = {"", "end", "weight"};
  for (int i = 1; i < 3; i++)
    if (ts[i] && ts[i]->dtype != self->dtype) {
      weft__error(WEFT_TYPE_ERROR, "%s: expected dtype %s for `%s` but got dtype %s", op, weft_dtype_name(self->dtype),
                  names[i], weft_dtype_name(ts[i]->dtype));
      return false;
    }
  shape sh;
  if (!broadcast(op, ts, weight ? 3 : 2, &sh)) return false;
  if (!weft_dtype_is_floating(self->dtype)) {
    weft__error(WEFT_TYPE_ERROR, "%s: \"%s\" not implemented for '%s'", op,
                weight ? "lerp_kernel_tensor" : "lerp_kernel_scalar", weft_dtype_name(self->dtype));
    return false;
  }
  return true;
}

/* 1 - w in the opmath type of dtype t (float below float64), as the kernel rounds it */
static double one_minus(double w, weft_dtype t) { return t == WEFT_FLOAT64 ? 1 - w : (double)(1.0f - (float)w); }

/* r in self's layout when it has self's shape (the iterator of a one-kernel op
 * would pick self's order; the where of the composition picks the weight's) */
static weft_tensor* in_layout_of(tmps* k, weft_tensor* r, const weft_tensor* self) {
  if (r->ndim != self->ndim || memcmp(r->sizes, self->sizes, sizeof(int64_t) * (size_t)r->ndim) != 0) return r;
  weft_tensor* like = keep(k, weft_empty_like(self, r->dtype, WEFT_PRESERVE_FORMAT));
  if (!like) return NULL;
  if (memcmp(like->strides, r->strides, sizeof(int64_t) * (size_t)r->ndim) == 0) return r;
  return weft_copy_(like, r) == WEFT_OK ? like : NULL;
}

static weft_tensor* lerp_scalar_impl(const char* op, const weft_tensor* self, const weft_tensor* end, weft_scalar w) {
  if (!lerp_checks(op, self, end, NULL)) return NULL;
  double wd = scalar_f64(w);
  tmps k = {0};
  STEP(diff, weft_sub(end, self, weft_scalar_int(1)));
  if (fabs(wd) < 0.5) return done(&k, keep(&k, weft_add(self, diff, weft_scalar_double(wd))));
  return done(&k, keep(&k, weft_sub(end, diff, weft_scalar_double(one_minus(wd, self->dtype)))));
}

static weft_tensor* lerp_tensor_impl(const char* op, const weft_tensor* self, const weft_tensor* end,
                                     const weft_tensor* weight) {
  if (!lerp_checks(op, self, end, weight)) return NULL;
  tmps k = {0};
  STEP(diff, weft_sub(end, self, weft_scalar_int(1)));
  STEP(wd, weft_mul(weight, diff));
  STEP(low, weft_add(self, wd, weft_scalar_int(1)));
  STEP(negw, weft_neg(weight));
  STEP(rest, weft_add_scalar(negw, weft_scalar_int(1), weft_scalar_int(1)));
  STEP(dr, weft_mul(diff, rest));
  STEP(high, weft_sub(end, dr, weft_scalar_int(1)));
  STEP(aw, weft_abs(weight));
  STEP(small, weft_lt_scalar(aw, weft_scalar_double(0.5)));
  STEP(r, weft_where(small, low, high));
  return done(&k, in_layout_of(&k, r, self));
}

static weft_tensor* lerp_scalar_kernel(const weft_tensor* self, const weft_tensor* end, weft_scalar w) {
  return lerp_scalar_impl("lerp", self, end, w);
}
static weft_tensor* lerp_tensor_kernel(const weft_tensor* self, const weft_tensor* end, const weft_tensor* w) {
  return lerp_tensor_impl("lerp", self, end, w);
}
static weft_status lerp_scalar_inplace_kernel(weft_tensor* self, const weft_tensor* end, weft_scalar w) {
  return into_self("lerp_", lerp_scalar_impl("lerp_", self, end, w), self);
}
static weft_status lerp_tensor_inplace_kernel(weft_tensor* self, const weft_tensor* end, const weft_tensor* w) {
  return into_self("lerp_", lerp_tensor_impl("lerp_", self, end, w), self);
}
static weft_tensor* lerp_scalar_out_kernel(const weft_tensor* self, const weft_tensor* end, weft_scalar w,
                                           weft_tensor* out) {
  return into_out("lerp", lerp_scalar_impl("lerp", self, end, w), out);
}
static weft_tensor* lerp_tensor_out_kernel(const weft_tensor* self, const weft_tensor* end, const weft_tensor* w,
                                           weft_tensor* out) {
  return into_out("lerp", lerp_tensor_impl("lerp", self, end, w), out);
}

/* ---- addcmul / addcdiv: self + value * t1 * t2 and self + value * t1 / t2,
 * in the kernel's order ((value t1) op t2); value in the promoted dtype ---- */
static weft_dtype promoted(const weft_tensor* a, const weft_tensor* b, const weft_tensor* c) {
  return weft_promote_types(weft_promote_types(a->dtype, b->dtype), c->dtype);
}

static weft_tensor* addc_impl(const char* op, const weft_tensor* self, const weft_tensor* t1, const weft_tensor* t2,
                              weft_scalar value, bool divide) {
  weft_dtype common = promoted(self, t1, t2);
  if (divide && weft_dtype_is_integral(t1->dtype, true) && weft_dtype_is_integral(t2->dtype, true))
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "%s: Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
                            "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                            "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                            "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                            "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
                            "for all dtypes.",
                            op);
  const weft_tensor* ts[3] = {self, t1, t2};
  shape sh;
  if (!broadcast(op, ts, 3, &sh)) return NULL;
  /* value.to<scalar_t>(): an integral result truncates it, bool tests it */
  double v = scalar_f64(value);
  weft_scalar vs = value;
  if (common == WEFT_BOOL) vs = weft_scalar_bool(v != 0);
  else if (weft_dtype_is_integral(common, false) && value.tag == WEFT_SCALAR_DOUBLE) vs = weft_scalar_int((int64_t)v);
  tmps k = {0};
  STEP(t1c, weft_to_dtype(t1, common, false));
  STEP(t2c, weft_to_dtype(t2, common, false));
  STEP(scaled, weft_mul_scalar(t1c, vs));
  STEP(prod, divide ? weft_div(scaled, t2c) : weft_mul(scaled, t2c));
  return done(&k, keep(&k, weft_add(self, prod, weft_scalar_int(1))));
}

static weft_tensor* addcmul_kernel(const weft_tensor* s, const weft_tensor* a, const weft_tensor* b, weft_scalar v) {
  return addc_impl("addcmul", s, a, b, v, false);
}
static weft_status addcmul_inplace_kernel(weft_tensor* s, const weft_tensor* a, const weft_tensor* b, weft_scalar v) {
  return into_self("addcmul_", addc_impl("addcmul_", s, a, b, v, false), s);
}
static weft_tensor* addcmul_out_kernel(const weft_tensor* s, const weft_tensor* a, const weft_tensor* b, weft_scalar v,
                                       weft_tensor* out) {
  return into_out("addcmul", addc_impl("addcmul", s, a, b, v, false), out);
}
static weft_tensor* addcdiv_kernel(const weft_tensor* s, const weft_tensor* a, const weft_tensor* b, weft_scalar v) {
  return addc_impl("addcdiv", s, a, b, v, true);
}
static weft_status addcdiv_inplace_kernel(weft_tensor* s, const weft_tensor* a, const weft_tensor* b, weft_scalar v) {
  return into_self("addcdiv_", addc_impl("addcdiv_", s, a, b, v, true), s);
}
static weft_tensor* addcdiv_out_kernel(const weft_tensor* s, const weft_tensor* a, const weft_tensor* b, weft_scalar v,
                                       weft_tensor* out) {
  return into_out("addcdiv", addc_impl("addcdiv", s, a, b, v, true), out);
}

/* ---- linalg_cross and cross (1.13: cross's dim None is the input's first dim of size 3) ---- */
static weft_tensor* component(tmps* k, const weft_tensor* t, int64_t dim, int64_t i) {
  return keep(k, weft_narrow(t, dim, i, 1));
}

/* a[j] b[l] - a[l] b[j]: the kernel's expression per component */
static weft_tensor* cross_term(tmps* k, const weft_tensor* a, const weft_tensor* b, int64_t dim, int j, int l) {
  weft_tensor *aj = component(k, a, dim, j), *bl = component(k, b, dim, l);
  weft_tensor *al = component(k, a, dim, l), *bj = component(k, b, dim, j);
  if (!aj || !bl || !al || !bj) return NULL;
  weft_tensor *p = keep(k, weft_mul(aj, bl)), *q = keep(k, weft_mul(al, bj));
  if (!p || !q) return NULL;
  return keep(k, weft_sub(p, q, weft_scalar_int(1)));
}

static weft_tensor* cross_impl(const char* op, const weft_tensor* self, const weft_tensor* other, int64_t dim) {
  if (self->ndim != other->ndim)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "%s: linalg.cross: inputs must have the same number of dimensions.",
                            op);
  int64_t d;
  if (!weft__wrap_dim(op, dim, self->ndim, &d)) return NULL;
  if (self->sizes[d] != 3 || other->sizes[d] != 3)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "%s: linalg.cross: inputs dimension %lld must have length 3. Got %lld and %lld",
                            op, (long long)dim, (long long)self->sizes[d], (long long)other->sizes[d]);
  const weft_tensor* ts[2] = {self, other};
  shape sh;
  if (!broadcast(op, ts, 2, &sh)) return NULL;
  if (self->dtype != other->dtype)
    return weft__error_null(WEFT_TYPE_ERROR, "%s: expected scalar type %s but found %s", op,
                            weft_dtype_name(self->dtype), weft_dtype_name(other->dtype));
  if (self->dtype == WEFT_BOOL)
    return weft__error_null(WEFT_TYPE_ERROR, "%s: \"cross\" not implemented for 'bool'", op);
  tmps k = {0};
  const weft_tensor* parts[3];
  for (int i = 0; i < 3; i++) {
    parts[i] = cross_term(&k, self, other, d, (i + 1) % 3, (i + 2) % 3);
    if (!parts[i]) return done(&k, NULL);
  }
  return done(&k, keep(&k, weft_cat(parts, 3, d)));
}

static weft_tensor* linalg_cross_kernel(const weft_tensor* self, const weft_tensor* other, int64_t dim) {
  return cross_impl("linalg_cross", self, other, dim);
}

static weft_tensor* cross_kernel(const weft_tensor* self, const weft_tensor* other, int64_t dim) {
  if (dim == INT64_MIN) {
    for (int i = 0; i < self->ndim && dim == INT64_MIN; i++)
      if (self->sizes[i] == 3) dim = i;
    if (dim == INT64_MIN) return weft__error_null(WEFT_INVALID_ARGUMENT, "cross: no dimension of size 3 in input");
  }
  return cross_impl("cross", self, other, dim);
}

weft_status weft__pointwise_register(void) {
  WEFT_KERNEL(isnan, COMPOSITE_IMPLICIT_AUTOGRAD, isnan_kernel);
  WEFT_KERNEL(isinf, COMPOSITE_IMPLICIT_AUTOGRAD, isinf_kernel);
  WEFT_KERNEL(isfinite, COMPOSITE_IMPLICIT_AUTOGRAD, isfinite_kernel);
  WEFT_KERNEL(isposinf, COMPOSITE_IMPLICIT_AUTOGRAD, isposinf_kernel);
  WEFT_KERNEL(isposinf_out, COMPOSITE_IMPLICIT_AUTOGRAD, isposinf_out_kernel);
  WEFT_KERNEL(isneginf, COMPOSITE_IMPLICIT_AUTOGRAD, isneginf_kernel);
  WEFT_KERNEL(isneginf_out, COMPOSITE_IMPLICIT_AUTOGRAD, isneginf_out_kernel);
  WEFT_KERNEL(isclose, COMPOSITE_IMPLICIT_AUTOGRAD, isclose_kernel);
  WEFT_KERNEL(nan_to_num, COMPOSITE_IMPLICIT_AUTOGRAD, nan_to_num_kernel);
  WEFT_KERNEL(nan_to_num_, COMPOSITE_IMPLICIT_AUTOGRAD, nan_to_num_inplace_kernel);
  WEFT_KERNEL(nan_to_num_out, COMPOSITE_IMPLICIT_AUTOGRAD, nan_to_num_out_kernel);
  WEFT_KERNEL(square, COMPOSITE_IMPLICIT_AUTOGRAD, square_kernel);
  WEFT_KERNEL(square_, COMPOSITE_IMPLICIT_AUTOGRAD, square_inplace_kernel);
  WEFT_KERNEL(square_out, COMPOSITE_IMPLICIT_AUTOGRAD, square_out_kernel);
  WEFT_KERNEL(logit, COMPOSITE_IMPLICIT_AUTOGRAD, logit_kernel);
  WEFT_KERNEL(logit_, COMPOSITE_IMPLICIT_AUTOGRAD, logit_inplace_kernel);
  WEFT_KERNEL(logit_out, COMPOSITE_IMPLICIT_AUTOGRAD, logit_out_kernel);
  WEFT_KERNEL(lerp_scalar, COMPOSITE_IMPLICIT_AUTOGRAD, lerp_scalar_kernel);
  WEFT_KERNEL(lerp_tensor, COMPOSITE_IMPLICIT_AUTOGRAD, lerp_tensor_kernel);
  WEFT_KERNEL(lerp_scalar_, COMPOSITE_IMPLICIT_AUTOGRAD, lerp_scalar_inplace_kernel);
  WEFT_KERNEL(lerp_tensor_, COMPOSITE_IMPLICIT_AUTOGRAD, lerp_tensor_inplace_kernel);
  WEFT_KERNEL(lerp_scalar_out, COMPOSITE_IMPLICIT_AUTOGRAD, lerp_scalar_out_kernel);
  WEFT_KERNEL(lerp_tensor_out, COMPOSITE_IMPLICIT_AUTOGRAD, lerp_tensor_out_kernel);
  WEFT_KERNEL(addcmul, COMPOSITE_IMPLICIT_AUTOGRAD, addcmul_kernel);
  WEFT_KERNEL(addcmul_, COMPOSITE_IMPLICIT_AUTOGRAD, addcmul_inplace_kernel);
  WEFT_KERNEL(addcmul_out, COMPOSITE_IMPLICIT_AUTOGRAD, addcmul_out_kernel);
  WEFT_KERNEL(addcdiv, COMPOSITE_IMPLICIT_AUTOGRAD, addcdiv_kernel);
  WEFT_KERNEL(addcdiv_, COMPOSITE_IMPLICIT_AUTOGRAD, addcdiv_inplace_kernel);
  WEFT_KERNEL(addcdiv_out, COMPOSITE_IMPLICIT_AUTOGRAD, addcdiv_out_kernel);
  WEFT_KERNEL(linalg_cross, COMPOSITE_IMPLICIT_AUTOGRAD, linalg_cross_kernel);
  WEFT_KERNEL(cross, COMPOSITE_IMPLICIT_AUTOGRAD, cross_kernel);
  return WEFT_OK;
}
