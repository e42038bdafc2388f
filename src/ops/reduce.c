/* Reductions (issue 11): sum, mean, prod, amax, amin, as PyTorch 1.13's
 * ReduceOps.cpp does them.
 *
 *   meta  dims wrapped and checked (out of range, repeated), the result dtype
 *         (integral and bool sum/prod -> int64, mean refuses integers, out='s
 *         dtype rules), empty-reduction errors, the result (allocated, or the
 *         out= tensor resized), then the reduction iterator over a view of
 *         the result with the input's shape and stride 0 on the reduced dims
 *         (make_reduction + review_reduce_result).
 *   impl  the result filled with the op's identity, then
 *         weft_iter_reduce_for_each: the loop converts each input element to
 *         the result dtype (PyTorch's self.to(dtype)) and accumulates in its
 *         accumulation type (float for float16/bfloat16/float32, double,
 *         int64 for integers and bool); float32 rows go through the cascade
 *         and vectorized kernels of src/kernels/reduce.c. mean divides the
 *         sum by the count afterwards, in the result dtype.
 * The Meta kernel is the same function: meta results are allocated and
 * nothing runs. */
#include <math.h>
#include <string.h>

#include "base/half.h"
#include "core/internal.h"
#include "core/scalar.h"
#include "iter/iter_internal.h"
#include "kernels/kernels.h"
#include "ops/ops.h"
#include "ops/reduce_internal.h"
#include "ops/reduce_util.h"
#include "ops/reduce_webgpu.h"
#include "weft/iter.h"

typedef enum { R_SUM, R_MEAN, R_PROD, R_AMAX, R_AMIN, R_ARGMAX, R_ARGMIN } rop;

static bool is_arg(rop op) { return op == R_ARGMAX || op == R_ARGMIN; }

/* ---- meta ---- */

typedef struct {
  rop op;
  const char* name;
  const weft_tensor* self;
  uint32_t mask;     /* reduced dims of self */
  bool keepdim;
  weft_dtype dtype;  /* the result's */
  int64_t count;     /* input elements per result element */
  weft_tensor* result;
  weft_tensor* values; /* argmax/argmin: the best values so far (self's dtype) */
  bool keep_values;    /* max.dim/min.dim: values is a result too */
  weft_tensor* values_out; /* their values out= tensor (NULL: a new one) */
  weft_tensor* index;  /* argmax/argmin: each element's index along the reduced dims */
  weft_iter it;
} reduction;

static void release_all(reduction* r) {
  weft_tensor_release(r->result);
  weft_tensor_release(r->values);
  weft_tensor_release(r->index);
  r->result = r->values = r->index = NULL;
}

static weft_status dim_mask(reduction* r, const int64_t* dims, int64_t n) {
  return weft__reduce_dim_mask(r->name, r->self, dims, n, &r->mask);
}

static weft_status result_dtype(reduction* r, weft_dtype opt, const weft_tensor* out) {
  weft_dtype in = r->self->dtype;
  bool have_opt = (int)opt >= 0;
  switch (r->op) {
    case R_SUM:
    case R_PROD:
      r->dtype = have_opt ? opt : out ? out->dtype : weft_dtype_is_integral(in, true) ? WEFT_INT64 : in;
      break;
    case R_MEAN:
      if (!have_opt && !weft_dtype_is_floating(in)) {
        return weft__error(WEFT_TYPE_ERROR,
                           "mean(): could not infer output dtype. Input dtype must be either a floating point "
                           "or complex dtype. Got: %s",
                           weft_dtype_name(in));
      }
      if (have_opt && !weft_dtype_is_floating(opt)) {
        return weft__error(WEFT_TYPE_ERROR,
                           "mean(): could not infer output dtype. Optional dtype must be either a floating "
                           "point or complex dtype. Got: %s",
                           weft_dtype_name(opt));
      }
      r->dtype = have_opt ? opt : out ? out->dtype : in;
      if (!weft_dtype_is_floating(r->dtype)) {
        return weft__error(WEFT_TYPE_ERROR, "mean: result type float32 can't be cast to the desired output type %s",
                           weft_dtype_name(r->dtype));
      }
      break;
    case R_ARGMAX:
    case R_ARGMIN:
      r->dtype = WEFT_INT64;
      if (r->values_out && r->values_out->dtype != in) {
        return weft__error(WEFT_TYPE_ERROR, "%s: Expected out tensor to have dtype %s, but got %s instead", r->name,
                           weft_dtype_name(in), weft_dtype_name(r->values_out->dtype));
      }
      break;
    case R_AMAX:
    case R_AMIN:
      r->dtype = in;
      if (out && out->dtype != in) {
        return weft__error(WEFT_TYPE_ERROR,
                           "%s: Expected the dtype for input and out to match, but got %s for input's dtype "
                           "and %s for out's dtype.",
                           r->name, weft_dtype_name(in), weft_dtype_name(out->dtype));
      }
      break;
  }
  if (out && out->dtype != r->dtype) {
    return weft__error(WEFT_TYPE_ERROR, "%s: Expected out tensor to have dtype %s, but got %s instead", r->name,
                       weft_dtype_name(r->dtype), weft_dtype_name(out->dtype));
  }
  if (is_arg(r->op) && !r->keep_values && r->self->numel > 0 && in == WEFT_BOOL) {
    return weft__error(WEFT_TYPE_ERROR, "%s: \"%s_cpu\" not implemented for 'bool'", r->name, r->name);
  }
  /* the kernel's dtype check: an empty input never reaches the kernel */
  if (r->op == R_PROD && r->self->numel > 0 && (r->dtype == WEFT_FLOAT16 || r->dtype == WEFT_BFLOAT16)) {
    return weft__error(WEFT_TYPE_ERROR, "prod: \"prod_cpu\" not implemented for '%s'",
                       weft_dtype_name(r->dtype));
  }
  return WEFT_OK;
}

/* amax/amin have no identity: an empty reduction is an error. */
static weft_status check_empty(const reduction* r, bool dims_given) {
  if (r->op != R_AMAX && r->op != R_AMIN && !is_arg(r->op)) return WEFT_OK;
  const weft_tensor* s = r->self;
  if (s->numel != 0) return WEFT_OK;
  if (!dims_given) {
    return weft__error(WEFT_INDEX_ERROR, "%s(): Expected reduction dim to be specified for input.numel() == 0.%s",
                       r->name, is_arg(r->op) ? "" : " Specify the reduction dim with the 'dim' argument.");
  }
  for (int d = 0; d < s->ndim; d++) {
    if ((r->mask >> d & 1) && s->sizes[d] == 0) {
      return weft__error(WEFT_INDEX_ERROR, "%s(): Expected reduction dim %d to have non-zero size.", r->name, d);
    }
  }
  return WEFT_OK;
}

/* *dst: out resized to the reduced shape (its strides kept when the shape
 * already fits), or a new contiguous tensor of dtype (ops/reduce_util.c). */
static weft_status make_reduced(reduction* r, weft_tensor* out, weft_dtype dtype, weft_tensor** dst) {
  int64_t sizes[WEFT_MAX_DIMS];
  weft__reduce_shape(r->self, r->mask, r->keepdim, sizes, &r->count);
  *dst = weft__reduce_result(r->name, r->self, r->mask, r->keepdim, dtype, out);
  return *dst ? WEFT_OK : weft_last_status();
}

static weft_status make_result(reduction* r, weft_tensor* out) {
  return make_reduced(r, out, r->dtype, &r->result);
}

/* review_reduce_result: the result seen with self's shape, stride 0 on the reduced dims. */
static weft_tensor* reduce_view(const reduction* r, const weft_tensor* res) {
  return weft__reduce_view(r->self, r->mask, r->keepdim, res);
}

/* argmax/argmin's extra operands: a values buffer shaped as the result, and
 * the index of every element along the reduced dims (row-major over them,
 * 0 along the kept ones), which the loop reads as an input: indices stay
 * right whatever order and split the iterator picks. */
static weft_status make_arg_operands(reduction* r) {
  const weft_tensor* s = r->self;
  const weft_tensor* res = r->result;
  int64_t strides[WEFT_MAX_DIMS] = {0};
  weft__strides_for_format(res->sizes, res->ndim, WEFT_CONTIGUOUS_FORMAT, strides);
  if (r->keep_values) {
    weft_status st = make_reduced(r, r->values_out, s->dtype, &r->values);
    if (st != WEFT_OK) return st;
  } else {
    r->values = weft__tensor_alloc(r->name, res->sizes, strides, res->ndim, s->dtype, s->device);
  }
  if (!r->values) return weft_last_status();
  int64_t n = r->count, one = 1;
  r->index = weft__tensor_alloc(r->name, &n, &one, 1, WEFT_INT64, s->device);
  if (!r->index) return weft_last_status();
  if (s->device != WEFT_DEVICE_META) {
    int64_t* p = weft_tensor_data_ptr(r->index);
    for (int64_t i = 0; i < n; i++) p[i] = i;
  }
  return WEFT_OK;
}

static weft_tensor* index_view(const reduction* r) {
  const weft_tensor* s = r->self;
  int64_t strides[WEFT_MAX_DIMS], next = 1;
  for (int d = s->ndim - 1; d >= 0; d--) {
    strides[d] = r->mask >> d & 1 ? next : 0;
    if (r->mask >> d & 1) next *= s->sizes[d];
  }
  return weft__tensor_new(r->index->storage, s->sizes, strides, s->ndim, 0, WEFT_INT64);
}

/* int64 results cannot live on the webgpu device (WGSL has no 64-bit
 * integers): arg reductions are refused there, and the integer sums say how
 * to get a 32-bit result. */
static weft_status webgpu_dtype_check(const reduction* r) {
  if (r->self->device != WEFT_DEVICE_WEBGPU || r->dtype != WEFT_INT64) return WEFT_OK;
  if (is_arg(r->op))
    return weft__error(WEFT_NOT_IMPLEMENTED,
                       "%s: its indices are int64, which a webgpu tensor cannot hold (WGSL has no 64-bit integers): "
                       "take it on the cpu (await x.toAsync('cpu'))", r->name);
  return weft__error(WEFT_TYPE_ERROR,
                     "%s: the result of an integer %s is int64, which a webgpu tensor cannot hold (WGSL has no "
                     "64-bit integers): pass { dtype: 'int32' } or { dtype: 'float32' }", r->name, r->name);
}

static weft__red_kind webgpu_kind(rop op) {
  static const weft__red_kind k[] = {WEFT__RED_SUM, WEFT__RED_MEAN, WEFT__RED_PROD, WEFT__RED_AMAX, WEFT__RED_AMIN};
  return k[op];
}

/* r: zeroed by the caller, or keep_values / values_out set */
static weft_status meta(reduction* r, rop op, const char* name, const weft_tensor* self, const int64_t* dims,
                        int64_t ndims, bool dims_given, bool keepdim, weft_dtype opt_dtype, weft_tensor* out) {
  r->op = op;
  r->name = name;
  r->self = self;
  r->keepdim = keepdim;
  weft_status s;
  if ((s = dim_mask(r, dims, ndims)) != WEFT_OK) return s;
  if ((s = result_dtype(r, opt_dtype, out)) != WEFT_OK) return s;
  if ((s = webgpu_dtype_check(r)) != WEFT_OK) return s;
  if ((s = check_empty(r, dims_given && ndims > 0)) != WEFT_OK) return s;
  if ((s = make_result(r, out)) != WEFT_OK) return s;
  if (is_arg(op) && (s = make_arg_operands(r)) != WEFT_OK) {
    release_all(r);
    return s;
  }
  weft_tensor* view = reduce_view(r, r->result);
  weft_tensor* vview = is_arg(op) && view ? reduce_view(r, r->values) : NULL;
  weft_tensor* iview = vview ? index_view(r) : NULL;
  if (!view || (is_arg(op) && !iview)) {
    weft_tensor_release(view);
    weft_tensor_release(vview);
    release_all(r);
    return weft_last_status();
  }
  weft_iter_config c = weft_iter_config_init();
  weft_iter_config_set_op_name(&c, r->name);
  weft_iter_config_add_owned_output(&c, view);
  if (vview) weft_iter_config_add_owned_output(&c, vview);
  weft_iter_config_add_input(&c, self);
  if (iview) weft_iter_config_add_owned_input(&c, iview);
  weft_iter_config_check_mem_overlap(&c, false);
  weft_iter_config_resize_outputs(&c, false);
  weft_iter_config_check_all_same_dtype(&c, false);
  weft_iter_config_is_reduction(&c, true);
  if ((s = weft_iter_build(&c, &r->it)) != WEFT_OK) {
    release_all(r);
    return s;
  }
  return WEFT_OK;
}

/* ---- the loops ---- */

typedef enum { ACC_F32, ACC_F64, ACC_I64 } acc_kind;

static acc_kind acc_of(weft_dtype t) {
  if (t == WEFT_FLOAT16 || t == WEFT_BFLOAT16 || t == WEFT_FLOAT32) return ACC_F32;
  return t == WEFT_FLOAT64 ? ACC_F64 : ACC_I64;
}

static weft_dtype acc_dtype(weft_dtype t) {
  acc_kind k = acc_of(t);
  return k == ACC_F32 ? WEFT_FLOAT32 : k == ACC_F64 ? WEFT_FLOAT64 : WEFT_INT64;
}

typedef struct {
  rop op;
  weft_dtype in, out;
  const weft_kernels* k;
} rctx;

/* An input element converted to the result dtype (self.to(dtype)), as a value. */
static inline weft__value load_as(const char* p, weft_dtype in, weft_dtype out) {
  if (in == out) return weft__load(p, in);
  char tmp[8];
  weft__store(tmp, out, weft__load(p, in));
  return weft__load(tmp, out);
}

static inline float val_f32(weft__value v) { return v.is_float ? (float)v.f : (float)v.i; }
static inline int64_t val_i64(weft__value v) { return v.is_float ? weft__f64_to_i64_sat(v.f) : v.i; }

/* wasm's max/min (NaN wins), as the kernels */
static inline double max_nan(double a, double b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static inline double min_nan(double a, double b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

static inline float comb_f32(rop op, float a, float b) {
  switch (op) {
    case R_SUM: case R_MEAN: return a + b;
    case R_PROD: return a * b;
    case R_AMAX: return (float)max_nan(a, b);
    case R_AMIN: return (float)min_nan(a, b);
    case R_ARGMAX: case R_ARGMIN: break; /* arg_loop */
  }
  return a;
}
static inline double comb_f64(rop op, double a, double b) {
  switch (op) {
    case R_SUM: case R_MEAN: return a + b;
    case R_PROD: return a * b;
    case R_AMAX: return max_nan(a, b);
    case R_AMIN: return min_nan(a, b);
    case R_ARGMAX: case R_ARGMIN: break; /* arg_loop */
  }
  return a;
}
static inline int64_t comb_i64(rop op, int64_t a, int64_t b) {
  switch (op) {
    case R_SUM: case R_MEAN: return (int64_t)((uint64_t)a + (uint64_t)b); /* wraps, as C++ */
    case R_PROD: return (int64_t)((uint64_t)a * (uint64_t)b);
    case R_AMAX: return a > b ? a : b;
    case R_AMIN: return a < b ? a : b;
    case R_ARGMAX: case R_ARGMIN: break; /* arg_loop */
  }
  return a;
}

static inline void store_f32(char* p, weft_dtype t, float v) {
  if (t == WEFT_FLOAT32) memcpy(p, &v, 4);
  else weft__store(p, t, weft__value_from_f32(v));
}

#define CONV_BLOCK 1024

/* n elements at stride st reduced to one float (sum: cascaded through the kernel) */
static float row_f32(const rctx* c, const char* in, int64_t st, int64_t n) {
  const weft_kernels* k = c->k;
  bool f32 = c->in == WEFT_FLOAT32 && c->out == WEFT_FLOAT32;
  if (f32 && st == 4 && c->op != R_PROD) {
    if (c->op == R_AMAX) return k->f32_rmax((size_t)n, (const float*)in);
    if (c->op == R_AMIN) return k->f32_rmin((size_t)n, (const float*)in);
    return k->f32_rsum((size_t)n, (const float*)in);
  }
  float buf[CONV_BLOCK];
  float acc = 0;
  for (int64_t i0 = 0; i0 < n; i0 += CONV_BLOCK) {
    int64_t m = n - i0 < CONV_BLOCK ? n - i0 : CONV_BLOCK;
    const char* p = in + i0 * st;
    if (f32) for (int64_t i = 0; i < m; i++) memcpy(&buf[i], p + i * st, 4);
    else for (int64_t i = 0; i < m; i++) buf[i] = val_f32(load_as(p + i * st, c->in, c->out));
    float part;
    if (c->op == R_SUM || c->op == R_MEAN) {
      part = k->f32_rsum((size_t)m, buf);
    } else {
      part = buf[0];
      for (int64_t i = 1; i < m; i++) part = comb_f32(c->op, part, buf[i]);
    }
    acc = i0 == 0 ? part : comb_f32(c->op, acc, part);
  }
  return acc;
}

static void loop_f32(const rctx* c, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  int64_t so0 = s[0], si0 = s[1], so1 = s[2], si1 = s[3];
  weft_dtype T = c->out;
  if (so0 == 0 && n0 > 0) {
    /* outer reduction, vectorized across the kept dim */
    if ((c->op == R_SUM || c->op == R_MEAN) && c->in == WEFT_FLOAT32 && T == WEFT_FLOAT32 && so1 == 4 &&
        si1 == 4 && si0 != 4 && n1 > 1) {
      c->k->f32_vsum_rows((size_t)n0, (size_t)n1, (const float*)data[1], (size_t)si0, (float*)data[0]);
      return;
    }
    if ((c->op == R_AMAX || c->op == R_AMIN) && c->in == WEFT_FLOAT32 && so1 == 4 && si1 == 4 && si0 != 4 &&
        n1 > 1) {
      weft_f32_vbinary_fn* f = c->op == R_AMAX ? c->k->f32_vmax : c->k->f32_vmin;
      for (int64_t i = 0; i < n0; i++) {
        f((size_t)n1, (const float*)data[0], (const float*)(data[1] + i * si0), (float*)data[0], NULL);
      }
      return;
    }
    for (int64_t j = 0; j < n1; j++) {
      char* o = data[0] + j * so1;
      float r = row_f32(c, data[1] + j * si1, si0, n0);
      store_f32(o, T, comb_f32(c->op, val_f32(weft__load(o, T)), r));
    }
    return;
  }
  for (int64_t j = 0; j < n1; j++)
    for (int64_t i = 0; i < n0; i++) {
      char* o = data[0] + i * so0 + j * so1;
      float v = val_f32(load_as(data[1] + i * si0 + j * si1, c->in, T));
      store_f32(o, T, comb_f32(c->op, val_f32(weft__load(o, T)), v));
    }
}

static void loop_f64(const rctx* c, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  for (int64_t j = 0; j < n1; j++) {
    char* o = data[0] + j * s[2];
    const char* in = data[1] + j * s[3];
    if (s[0] == 0) {
      double acc;
      memcpy(&acc, o, 8);
      for (int64_t i = 0; i < n0; i++) acc = comb_f64(c->op, acc, weft__value_f64(load_as(in + i * s[1], c->in, WEFT_FLOAT64)));
      memcpy(o, &acc, 8);
    } else {
      for (int64_t i = 0; i < n0; i++) {
        double a;
        memcpy(&a, o + i * s[0], 8);
        a = comb_f64(c->op, a, weft__value_f64(load_as(in + i * s[1], c->in, WEFT_FLOAT64)));
        memcpy(o + i * s[0], &a, 8);
      }
    }
  }
}

static void loop_i64(const rctx* c, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  weft_dtype T = c->out;
  for (int64_t j = 0; j < n1; j++)
    for (int64_t i = 0; i < n0; i++) {
      char* o = data[0] + i * s[0] + j * s[2];
      int64_t v = val_i64(load_as(data[1] + i * s[1] + j * s[3], c->in, T));
      weft__value r = {0, comb_i64(c->op, val_i64(weft__load(o, T)), v), 0.0};
      weft__store(o, T, r);
    }
}

static void reduce_loop(void* p, char** data, const int64_t* strides, int64_t n0, int64_t n1) {
  const rctx* c = p;
  switch (acc_of(c->out)) {
    case ACC_F32: loop_f32(c, data, strides, n0, n1); break;
    case ACC_F64: loop_f64(c, data, strides, n0, n1); break;
    case ACC_I64: loop_i64(c, data, strides, n0, n1); break;
  }
}

static void reduce_combine(void* p, char** out, char** part) {
  const rctx* c = p;
  weft_dtype T = c->out;
  weft__value a = weft__load(out[0], T), b = weft__load(part[0], T);
  switch (acc_of(T)) {
    case ACC_F32: store_f32(out[0], T, comb_f32(c->op, val_f32(a), val_f32(b))); break;
    case ACC_F64: weft__store(out[0], T, weft__value_from_double(comb_f64(c->op, a.f, b.f))); break;
    case ACC_I64: {
      weft__value r = {0, comb_i64(c->op, a.i, b.i), 0.0};
      weft__store(out[0], T, r);
      break;
    }
  }
}

/* argmax/argmin: is (v, iv) better than (b, ib)? NaN wins, then the
 * larger (smaller) value, then the lower index. */
static inline bool arg_better(rop op, weft__value v, int64_t iv, weft__value b, int64_t ib) {
  if (v.is_float) {
    bool vn = v.f != v.f, bn = b.f != b.f;
    if (vn || bn) return vn && (!bn || iv < ib);
    if (v.f == b.f) return iv < ib;
    return op == R_ARGMAX ? v.f > b.f : v.f < b.f;
  }
  if (v.i == b.i) return iv < ib;
  return op == R_ARGMAX ? v.i > b.i : v.i < b.i;
}

/* float32 rows along a reduced dim 0: the best of the row in registers,
 * then merged with what the outputs hold */
static void arg_rows_f32(const rctx* c, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  bool mx = c->op == R_ARGMAX;
  for (int64_t j = 0; j < n1; j++) {
    const char* x = data[2] + j * s[6];
    const char* ix = data[3] + j * s[7];
    float best;
    int64_t bi;
    memcpy(&best, x, 4);
    memcpy(&bi, ix, 8);
    if (s[2] == 4 && n0 >= 16) {
      /* a contiguous row: its max (min) by the SIMD kernel, then the first
       * element equal to it (the first NaN when it is NaN); indices grow
       * along the row, so that one has the lowest index */
      const float* xf = (const float*)x;
      float m = mx ? c->k->f32_rmax((size_t)n0, xf) : c->k->f32_rmin((size_t)n0, xf);
      int64_t i = 0;
      if (m != m) while (xf[i] == xf[i]) i++;
      else while (xf[i] != m) i++;
      best = xf[i];
      memcpy(&bi, ix + i * s[3], 8);
    }
    int64_t scan = s[2] == 4 && n0 >= 16 ? 0 : n0; /* done above */
    for (int64_t i = 1; i < scan && best == best; i++) {
      float v;
      memcpy(&v, x + i * s[2], 4);
      if (v != v || (mx ? v > best : v < best)) {
        best = v;
        memcpy(&bi, ix + i * s[3], 8);
      } else if (v == best) {
        int64_t vi;
        memcpy(&vi, ix + i * s[3], 8);
        if (vi < bi) bi = vi;
      }
    }
    char* oi = data[0] + j * s[4];
    char* ov = data[1] + j * s[5];
    int64_t ib;
    memcpy(&ib, oi, 8);
    if (arg_better(c->op, weft__value_from_f32(best), bi, weft__load(ov, WEFT_FLOAT32), ib)) {
      memcpy(ov, &best, 4);
      memcpy(oi, &bi, 8);
    }
  }
}

/* operands: indices out, values out, self, index */
static void arg_loop(void* p, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  const rctx* c = p;
  if (c->in == WEFT_FLOAT32 && s[0] == 0 && s[1] == 0 && n0 > 0) {
    arg_rows_f32(c, data, s, n0, n1);
    return;
  }
  for (int64_t j = 0; j < n1; j++)
    for (int64_t i = 0; i < n0; i++) {
      char* oi = data[0] + i * s[0] + j * s[4];
      char* ov = data[1] + i * s[1] + j * s[5];
      weft__value v = weft__load(data[2] + i * s[2] + j * s[6], c->in);
      int64_t iv, ib;
      memcpy(&iv, data[3] + i * s[3] + j * s[7], 8);
      memcpy(&ib, oi, 8);
      if (arg_better(c->op, v, iv, weft__load(ov, c->in), ib)) {
        weft__store(ov, c->in, v);
        memcpy(oi, &iv, 8);
      }
    }
}

static void arg_combine(void* p, char** out, char** part) {
  const rctx* c = p;
  int64_t iv, ib;
  memcpy(&iv, part[0], 8);
  memcpy(&ib, out[0], 8);
  weft__value v = weft__load(part[1], c->in);
  if (arg_better(c->op, v, iv, weft__load(out[1], c->in), ib)) {
    weft__store(out[1], c->in, v);
    memcpy(out[0], &iv, 8);
  }
}

/* ---- impl ---- */

static double identity(rop op, weft_dtype t) {
  switch (op) {
    case R_SUM: case R_MEAN: return 0;
    case R_PROD: return 1;
    case R_AMAX:
      return weft_dtype_is_floating(t) ? -INFINITY : t == WEFT_BOOL || t == WEFT_UINT8 ? 0 : -ldexp(1, (int)weft_dtype_size(t) * 8 - 1);
    case R_AMIN:
      if (weft_dtype_is_floating(t)) return INFINITY;
      if (t == WEFT_BOOL) return 1;
      if (t == WEFT_UINT8) return 255;
      return ldexp(1, (int)weft_dtype_size(t) * 8 - 1) - 1; /* int64: 2^63, saturated on store */
    case R_ARGMAX: case R_ARGMIN: break;
  }
  return 0;
}

/* result = result / count in the result dtype (mean: sum, then div_) */
static void divide(weft_tensor* res, int64_t count) {
  int64_t n = res->numel, nd = res->ndim;
  weft_dtype T = res->dtype;
  char* base = weft_tensor_data_ptr(res);
  int64_t es = (int64_t)weft_dtype_size(T);
  /* the count as a scalar of the result dtype (PyTorch's wrapped number) */
  char tmp[8];
  weft__store(tmp, T, weft__value_from_double((double)count));
  double d = weft__value_f64(weft__load(tmp, T));
  for (int64_t i = 0; i < n; i++) {
    int64_t off = 0, rem = i;
    for (int64_t k = nd - 1; k >= 0; k--) {
      off += (rem % res->sizes[k]) * res->strides[k];
      rem /= res->sizes[k];
    }
    char* p = base + off * es;
    double v = weft__value_f64(weft__load(p, T));
    if (T == WEFT_FLOAT64) weft__store(p, T, weft__value_from_double(v / d));
    else store_f32(p, T, (float)v / (float)d);
  }
}

/* r: zeroed, or with keep_values (max.dim) */
static weft_status run_reduction(reduction* rp, rop op, const char* name, const weft_tensor* self,
                                 const int64_t* dims, int64_t ndims, bool dims_given, bool keepdim,
                                 weft_dtype opt_dtype, weft_tensor* out) {
  reduction r = *rp;
  if (meta(&r, op, name, self, dims, ndims, dims_given, keepdim, opt_dtype, out) != WEFT_OK) return weft_last_status();
  weft_status s = WEFT_OK;
  if (!r.it.is_meta && self->device == WEFT_DEVICE_WEBGPU) {
    s = weft__reduce_webgpu(name, webgpu_kind(op), &r.it, 0.0);
  } else if (!r.it.is_meta) {
    bool fill = !weft_explaining() && r.result->numel > 0;
    rctx c = {op, self->dtype, r.dtype, weft__kernels()};
    if (is_arg(op)) {
      if (fill) s = weft_fill_(r.result, 9223372036854775807.0); /* saturates to INT64_MAX: no index yet */
      if (fill && s == WEFT_OK) s = weft_fill_(r.values, identity(op == R_ARGMAX ? R_AMAX : R_AMIN, self->dtype));
      if (s == WEFT_OK) {
        s = weft_iter_reduce_for_each(&r.it, arg_loop, arg_combine, &c, WEFT_GRAIN_SIZE, self->dtype);
      }
    } else {
      if (fill) s = weft_fill_(r.result, identity(op, r.dtype));
      if (s == WEFT_OK) {
        s = weft_iter_reduce_for_each(&r.it, reduce_loop, reduce_combine, &c, WEFT_GRAIN_SIZE, acc_dtype(r.dtype));
      }
    }
    if (s == WEFT_OK && op == R_MEAN && !weft_explaining()) divide(r.result, r.count);
  }
  weft_iter_destroy(&r.it);
  if (s != WEFT_OK) {
    release_all(&r);
    return s;
  }
  *rp = r;
  return WEFT_OK;
}

static weft_tensor* run(rop op, const char* name, const weft_tensor* self, const int64_t* dims, int64_t ndims,
                        bool dims_given, bool keepdim, weft_dtype opt_dtype, weft_tensor* out) {
  reduction r = {0};
  if (run_reduction(&r, op, name, self, dims, ndims, dims_given, keepdim, opt_dtype, out) != WEFT_OK) return NULL;
  weft_tensor* result = weft_tensor_retain(r.result);
  release_all(&r);
  return result;
}

weft_tensor2 weft__reduce_minmax_dim(bool is_max, const weft_tensor* self, int64_t dim, bool keepdim,
                                     weft_tensor* values_out, weft_tensor* indices_out) {
  reduction r = {0};
  r.keep_values = true;
  r.values_out = values_out;
  weft_tensor2 res = {{NULL, NULL}};
  if (run_reduction(&r, is_max ? R_ARGMAX : R_ARGMIN, is_max ? "max" : "min", self, &dim, 1, true, keepdim,
                    (weft_dtype)-1, indices_out) != WEFT_OK) {
    return res;
  }
  res.t[0] = weft_tensor_retain(r.values);
  res.t[1] = weft_tensor_retain(r.result);
  release_all(&r);
  return res;
}

/* ---- kernels (CPU and Meta) ---- */

static weft_tensor* k_sum(const weft_tensor* self, weft_dtype dtype) {
  return run(R_SUM, "sum", self, NULL, 0, false, false, dtype, NULL);
}
static weft_tensor* k_sum_dim(const weft_tensor* self, const int64_t* dim, int64_t n, bool keepdim, weft_dtype dtype) {
  return run(R_SUM, "sum", self, dim, n, true, keepdim, dtype, NULL);
}
static weft_tensor* k_sum_out(const weft_tensor* self, const int64_t* dim, int64_t n, bool keepdim, weft_dtype dtype,
                              weft_tensor* out) {
  return run(R_SUM, "sum", self, dim, n, true, keepdim, dtype, out);
}
static weft_tensor* k_mean(const weft_tensor* self, weft_dtype dtype) {
  return run(R_MEAN, "mean", self, NULL, 0, false, false, dtype, NULL);
}
static weft_tensor* k_mean_dim(const weft_tensor* self, const int64_t* dim, int64_t n, bool keepdim,
                               weft_dtype dtype) {
  return run(R_MEAN, "mean", self, dim, n, true, keepdim, dtype, NULL);
}
static weft_tensor* k_mean_out(const weft_tensor* self, const int64_t* dim, int64_t n, bool keepdim,
                               weft_dtype dtype, weft_tensor* out) {
  return run(R_MEAN, "mean", self, dim, n, true, keepdim, dtype, out);
}
static weft_tensor* k_prod(const weft_tensor* self, weft_dtype dtype) {
  return run(R_PROD, "prod", self, NULL, 0, false, false, dtype, NULL);
}
static weft_tensor* k_prod_dim(const weft_tensor* self, int64_t dim, bool keepdim, weft_dtype dtype) {
  return run(R_PROD, "prod", self, &dim, 1, true, keepdim, dtype, NULL);
}
static weft_tensor* k_prod_out(const weft_tensor* self, int64_t dim, bool keepdim, weft_dtype dtype,
                               weft_tensor* out) {
  return run(R_PROD, "prod", self, &dim, 1, true, keepdim, dtype, out);
}
static weft_tensor* k_amax(const weft_tensor* self, const int64_t* dim, int64_t n, bool keepdim) {
  return run(R_AMAX, "amax", self, dim, n, true, keepdim, (weft_dtype)-1, NULL);
}
static weft_tensor* k_amax_out(const weft_tensor* self, const int64_t* dim, int64_t n, bool keepdim,
                               weft_tensor* out) {
  return run(R_AMAX, "amax", self, dim, n, true, keepdim, (weft_dtype)-1, out);
}
static weft_tensor* k_amin(const weft_tensor* self, const int64_t* dim, int64_t n, bool keepdim) {
  return run(R_AMIN, "amin", self, dim, n, true, keepdim, (weft_dtype)-1, NULL);
}
static weft_tensor* k_amin_out(const weft_tensor* self, const int64_t* dim, int64_t n, bool keepdim,
                               weft_tensor* out) {
  return run(R_AMIN, "amin", self, dim, n, true, keepdim, (weft_dtype)-1, out);
}

static weft_tensor* k_max(const weft_tensor* self) {
  return run(R_AMAX, "max", self, NULL, 0, false, false, (weft_dtype)-1, NULL);
}
static weft_tensor* k_min(const weft_tensor* self) {
  return run(R_AMIN, "min", self, NULL, 0, false, false, (weft_dtype)-1, NULL);
}
/* dim None (INT64_MIN): the flattened input */
static weft_tensor* arg(rop op, const weft_tensor* self, int64_t dim, bool keepdim, weft_tensor* out) {
  bool given = dim != INT64_MIN;
  return run(op, op == R_ARGMAX ? "argmax" : "argmin", self, given ? &dim : NULL, given, given, keepdim,
             (weft_dtype)-1, out);
}
static weft_tensor* k_argmax(const weft_tensor* self, int64_t dim, bool keepdim) {
  return arg(R_ARGMAX, self, dim, keepdim, NULL);
}
static weft_tensor* k_argmax_out(const weft_tensor* self, int64_t dim, bool keepdim, weft_tensor* out) {
  return arg(R_ARGMAX, self, dim, keepdim, out);
}
static weft_tensor* k_argmin(const weft_tensor* self, int64_t dim, bool keepdim) {
  return arg(R_ARGMIN, self, dim, keepdim, NULL);
}
static weft_tensor* k_argmin_out(const weft_tensor* self, int64_t dim, bool keepdim, weft_tensor* out) {
  return arg(R_ARGMIN, self, dim, keepdim, out);
}

#define BOTH(op, fn)          \
  WEFT_KERNEL(op, CPU, fn);   \
  WEFT_KERNEL(op, META, fn);  \
  WEFT_KERNEL(op, WEBGPU, fn)

weft_status weft__reduce_register(void) {
  BOTH(sum, k_sum);
  BOTH(sum_dim, k_sum_dim);
  BOTH(sum_out, k_sum_out);
  BOTH(mean, k_mean);
  BOTH(mean_dim, k_mean_dim);
  BOTH(mean_out, k_mean_out);
  BOTH(prod, k_prod);
  BOTH(prod_dim, k_prod_dim);
  BOTH(prod_out, k_prod_out);
  BOTH(amax, k_amax);
  BOTH(amax_out, k_amax_out);
  BOTH(amin, k_amin);
  BOTH(amin_out, k_amin_out);
  BOTH(max, k_max);
  BOTH(min, k_min);
  BOTH(argmax, k_argmax);
  BOTH(argmax_out, k_argmax_out);
  BOTH(argmin, k_argmin);
  BOTH(argmin_out, k_argmin_out);
  return WEFT_OK;
}
