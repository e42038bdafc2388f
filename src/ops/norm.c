/* norm, all, any, logsumexp (issue 11), as PyTorch 1.13's ReduceOps.cpp,
 * on the reduction iterator of src/iter/iter_reduce.c (the same planning,
 * thread split and explain() plan as sum):
 *
 *   norm       the input (converted to dtype= first, self.to(dtype) as
 *              make_reduction does) reduced into an accumulator, float for
 *              float16/bfloat16/float32 and double when float64 takes part:
 *              p = 0 counts non-zeros (NaN counts), 1 sums |x|, 2 sums x*x,
 *              inf / -inf take the max / min of |x| (NaN wins), any other p
 *              sums |x|^p; then a finishing pass writes sqrt / ^(1/p) in the
 *              result dtype. float32 rows of p = 1 and 2 go through the
 *              cascaded SIMD kernels (contiguous rows and outer reductions).
 *              An empty input gives zeros, as PyTorch's result.zero_().
 *   all, any   bool results (uint8 for uint8 inputs); an element is true
 *              when it is not 0 (NaN is true).
 *   logsumexp  max-shifted: m = amax(x, dims, keepdim) with +-inf replaced
 *              by 0, then log(sum(exp(x - m))) + m; integral inputs are
 *              converted to float32 first (the default dtype).
 * Meta kernels are the same functions: the result is allocated and nothing
 * runs. */
#include <math.h>
#include <string.h>

#include "base/half.h"
#include "core/internal.h"
#include "core/scalar.h"
#include "iter/iter_internal.h"
#include "kernels/kernels.h"
#include "ops/ops.h"
#include "ops/reduce_util.h"
#include "ops/reduce_webgpu.h"
#include "weft/iter.h"

/* ---- the common part: dims, result, accumulator, iterator ---- */

typedef struct {
  const char* name;
  const weft_tensor* x; /* the input the loops read (owned: self converted, or self retained) */
  uint32_t mask;
  bool keepdim;
  weft_tensor* result;
  weft_tensor* acc;     /* what the loop accumulates into: result, or a float/double copy of its shape */
  weft_tensor* extra;   /* logsumexp: the shifts m (keepdim shape) */
  weft_iter it;
  bool have_it;
} nred;

static void nred_release(nred* r) {
  if (r->have_it) weft_iter_destroy(&r->it);
  weft_tensor_release((weft_tensor*)r->x);
  weft_tensor_release(r->result);
  weft_tensor_release(r->acc);
  weft_tensor_release(r->extra);
  memset(r, 0, sizeof *r);
}

/* The accumulator: the result itself when it has the accumulation dtype,
 * else a contiguous tensor of its shape. */
static weft_status make_acc(nred* r, weft_dtype acc_dtype) {
  weft_tensor* res = r->result;
  if (res->dtype == acc_dtype) {
    r->acc = weft_tensor_retain(res);
    return WEFT_OK;
  }
  int64_t strides[WEFT_MAX_DIMS] = {0};
  weft__strides_for_format(res->sizes, res->ndim, WEFT_CONTIGUOUS_FORMAT, strides);
  r->acc = weft__tensor_alloc(r->name, res->sizes, strides, res->ndim, acc_dtype, res->device);
  return r->acc ? WEFT_OK : weft_last_status();
}

/* The reduction iterator: the accumulator seen with x's shape (stride 0 on
 * the reduced dims), x, and for logsumexp the shifts, broadcast the same way. */
static weft_status build_iter(nred* r) {
  weft_tensor* view = weft__reduce_view(r->x, r->mask, r->keepdim, r->acc);
  weft_tensor* mview = r->extra && view ? weft__reduce_view(r->x, r->mask, true, r->extra) : NULL;
  if (!view || (r->extra && !mview)) {
    weft_tensor_release(view);
    return weft_last_status();
  }
  weft_iter_config c = weft_iter_config_init();
  weft_iter_config_set_op_name(&c, r->name);
  weft_iter_config_add_owned_output(&c, view);
  weft_iter_config_add_input(&c, r->x);
  if (mview) weft_iter_config_add_owned_input(&c, mview);
  weft_iter_config_check_mem_overlap(&c, false);
  weft_iter_config_resize_outputs(&c, false);
  weft_iter_config_check_all_same_dtype(&c, false);
  weft_iter_config_is_reduction(&c, true);
  weft_status s = weft_iter_build(&c, &r->it);
  r->have_it = s == WEFT_OK;
  return s;
}

/* dims, the result (new or out=), input x (owned) */
static weft_status nred_meta(nred* r, const char* name, weft_tensor* x, const int64_t* dims, int64_t ndims,
                             bool keepdim, weft_dtype dtype, weft_tensor* out) {
  memset(r, 0, sizeof *r);
  r->name = name;
  r->x = x;
  r->keepdim = keepdim;
  if (!x) return weft_last_status();
  weft_status s = weft__reduce_dim_mask(name, x, dims, ndims, &r->mask);
  if (s != WEFT_OK) return s;
  r->result = weft__reduce_result(name, x, r->mask, keepdim, dtype, out);
  return r->result ? WEFT_OK : weft_last_status();
}

static bool is_f64(weft_dtype t) { return t == WEFT_FLOAT64; }


/* A finishing pass over the result: result = fin(acc[, m]) in the result's
 * dtype, through an elementwise iterator (the result may be a strided out=). */
typedef double (*fin_fn)(const void* ctx, double acc, double m);
typedef struct {
  fin_fn fn;
  const void* ctx;
  weft_dtype out, acc, m;
} fin_ctx;

static void fin_loop(void* p, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  const fin_ctx* f = p;
  int nin = f->m == (weft_dtype)-1 ? 2 : 3;
  for (int64_t j = 0; j < n1; j++)
    for (int64_t i = 0; i < n0; i++) {
      char* o = data[0] + i * s[0] + j * s[nin];
      double a = weft__load_f64(data[1] + i * s[1] + j * s[nin + 1], f->acc);
      double m = nin == 3 ? weft__load_f64(data[2] + i * s[2] + j * s[nin + 2], f->m) : 0;
      weft__store(o, f->out, weft__value_from_double(f->fn(f->ctx, a, m)));
    }
}

/* the shifts (keepdim shape) seen with the result's shape */
static weft_tensor* squeezed(const nred* r) {
  const weft_tensor* m = r->extra;
  int64_t strides[WEFT_MAX_DIMS];
  int k = 0;
  for (int d = 0; d < m->ndim; d++)
    if (r->keepdim || !(r->mask >> d & 1)) strides[k++] = m->strides[d];
  return weft__tensor_new(m->storage, r->result->sizes, strides, r->result->ndim, m->storage_offset, m->dtype);
}

static weft_status finish(const nred* r, fin_fn fn, const void* ctx) {
  if (r->result->numel == 0) return WEFT_OK;
  weft_iter it;
  weft_iter_config c = weft_iter_config_init();
  weft_iter_config_set_op_name(&c, r->name);
  weft_iter_config_add_output(&c, r->result);
  weft_iter_config_add_input(&c, r->acc);
  if (r->extra) weft_iter_config_add_owned_input(&c, squeezed(r));
  weft_iter_config_check_mem_overlap(&c, false);
  weft_iter_config_resize_outputs(&c, false);
  weft_iter_config_check_all_same_dtype(&c, false);
  weft_status s = weft_iter_build(&c, &it);
  if (s != WEFT_OK) return s;
  fin_ctx f = {fn, ctx, r->result->dtype, r->acc->dtype, r->extra ? r->extra->dtype : (weft_dtype)-1};
  s = weft_iter_for_each(&it, fin_loop, &f, WEFT_GRAIN_SIZE);
  weft_iter_destroy(&it);
  return s;
}

/* ---- norm ---- */

typedef enum { P_ZERO, P_ONE, P_TWO, P_INF, P_NINF, P_OTHER } pkind;

typedef struct {
  pkind kind;
  double p;
  weft_dtype in, acc;
  const weft_kernels* k;
} nctx;

static pkind kind_of(double p) {
  if (p == 0) return P_ZERO;
  if (p == 1) return P_ONE;
  if (p == 2) return P_TWO;
  if (p == INFINITY) return P_INF;
  if (p == -INFINITY) return P_NINF;
  return P_OTHER;
}

/* the per-element term and how terms combine (max/min of |x| keep a NaN) */
static inline double term(const nctx* c, double v) {
  switch (c->kind) {
    case P_ZERO: return v != 0;
    case P_TWO: return v * v;
    case P_OTHER: return c->acc == WEFT_FLOAT64 ? pow(fabs(v), c->p) : (double)powf(fabsf((float)v), (float)c->p);
    default: return fabs(v);
  }
}
static inline double comb(pkind k, double a, double t) {
  if (k == P_INF || k == P_NINF) {
    if (a != a) return a;
    if (t != t) return t;
    return (k == P_INF ? t > a : t < a) ? t : a;
  }
  return a + t;
}

#define BLOCK 1024

/* n elements at byte stride st, as one float (sums cascaded through the kernel) */
static float row_f32(const nctx* c, const char* x, int64_t st, int64_t n) {
  const weft_kernels* k = c->k;
  if (c->in == WEFT_FLOAT32 && st == 4) {
    if (c->kind == P_TWO) return k->f32_rsumsq((size_t)n, (const float*)x);
    if (c->kind == P_ONE) return k->f32_rasum((size_t)n, (const float*)x);
  }
  float buf[BLOCK];
  double acc = c->kind == P_NINF ? INFINITY : 0;
  for (int64_t i0 = 0; i0 < n; i0 += BLOCK) {
    int64_t m = n - i0 < BLOCK ? n - i0 : BLOCK;
    for (int64_t i = 0; i < m; i++) buf[i] = (float)term(c, (float)weft__load_f64(x + (i0 + i) * st, c->in));
    if (c->kind == P_INF || c->kind == P_NINF) {
      for (int64_t i = 0; i < m; i++) acc = comb(c->kind, acc, buf[i]);
    } else {
      acc = (float)(acc + k->f32_rsum((size_t)m, buf));
    }
  }
  return (float)acc;
}

static void norm_loop_f32(const nctx* c, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  int64_t so0 = s[0], si0 = s[1], so1 = s[2], si1 = s[3];
  bool sums = c->kind == P_ONE || c->kind == P_TWO;
  if (so0 == 0 && sums && c->in == WEFT_FLOAT32 && so1 == 4 && si1 == 4 && si0 != 4 && n1 > 1) {
    /* outer reduction, vectorized across the kept dim */
    weft_f32_vsum_rows_fn* f = c->kind == P_TWO ? c->k->f32_vsumsq_rows : c->k->f32_vasum_rows;
    f((size_t)n0, (size_t)n1, (const float*)data[1], (size_t)si0, (float*)data[0]);
    return;
  }
  for (int64_t j = 0; j < n1; j++) {
    if (so0 == 0) {
      float* o = (float*)(data[0] + j * so1);
      *o = (float)comb(c->kind, *o, row_f32(c, data[1] + j * si1, si0, n0));
      continue;
    }
    for (int64_t i = 0; i < n0; i++) {
      float* o = (float*)(data[0] + i * so0 + j * so1);
      *o = (float)comb(c->kind, *o, (float)term(c, (float)weft__load_f64(data[1] + i * si0 + j * si1, c->in)));
    }
  }
}

static void norm_loop(void* p, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  const nctx* c = p;
  if (c->acc == WEFT_FLOAT32) {
    norm_loop_f32(c, data, s, n0, n1);
    return;
  }
  for (int64_t j = 0; j < n1; j++)
    for (int64_t i = 0; i < n0; i++) {
      double* o = (double*)(data[0] + i * s[0] + j * s[2]);
      *o = comb(c->kind, *o, term(c, weft__load_f64(data[1] + i * s[1] + j * s[3], c->in)));
    }
}

static void norm_combine(void* p, char** out, char** part) {
  const nctx* c = p;
  if (c->acc == WEFT_FLOAT32) {
    float* o = (float*)out[0];
    *o = (float)comb(c->kind, *o, *(const float*)part[0]);
  } else {
    double* o = (double*)out[0];
    *o = comb(c->kind, *o, *(const double*)part[0]);
  }
}

static double norm_root(const void* p, double a, double m) {
  const nctx* c = p;
  if (c->kind == P_TWO) return c->acc == WEFT_FLOAT64 ? sqrt(a) : sqrtf((float)a);
  if (c->kind == P_OTHER) return c->acc == WEFT_FLOAT64 ? pow(a, 1.0 / c->p) : powf((float)a, 1.0f / (float)c->p);
  return a;
}

/* the result filled by the device's reduction over the same plan */
static weft_status on_webgpu(nred* r, weft__red_kind kind, double param) {
  r->acc = weft_tensor_retain(r->result);
  weft_status s = build_iter(r);
  return s == WEFT_OK ? weft__reduce_webgpu(r->name, kind, &r->it, param) : s;
}

static weft__red_kind norm_kind(pkind k) {
  static const weft__red_kind kinds[] = {WEFT__RED_NORM0, WEFT__RED_NORM1, WEFT__RED_NORM2, WEFT__RED_NORMINF,
                                         WEFT__RED_NORMNINF, WEFT__RED_NORMP};
  return kinds[k];
}

/* dtype: the dtype= (None -1); out: norm.out / dtype_out */
static weft_tensor* norm_impl(const weft_tensor* self, const weft_scalar* p, const int64_t* dims, int64_t ndims,
                              bool keepdim, weft_dtype dtype, weft_tensor* out) {
  bool have_dtype = (int)dtype >= 0;
  if (have_dtype && !weft_dtype_is_floating(dtype)) {
    return weft__error_null(WEFT_TYPE_ERROR,
                            "norm(): the desired output dtype should be either floating point or complex. Got %s "
                            "instead.",
                            weft_dtype_name(dtype));
  }
  if (!have_dtype && !weft_dtype_is_floating(self->dtype)) {
    return weft__error_null(WEFT_TYPE_ERROR,
                            "norm(): input dtype should be either floating point or complex. Got %s instead.",
                            weft_dtype_name(self->dtype));
  }
  weft_dtype in = have_dtype ? dtype : self->dtype;
  weft_dtype rdt = out ? out->dtype : in;
  if (!weft_dtype_is_floating(rdt) && self->numel > 0) {
    return weft__error_null(WEFT_TYPE_ERROR, "norm: \"norm_cpu\" not implemented for '%s'",
                            weft_dtype_name(rdt));
  }
  nred r;
  weft_tensor* x = have_dtype ? weft_to_dtype(self, dtype, false) : weft_tensor_retain((weft_tensor*)self);
  weft_status s = nred_meta(&r, "norm", x, dims, ndims, keepdim, rdt, out);
  nctx c = {kind_of(p ? weft_scalar_to_double(*p) : 2.0), p ? weft_scalar_to_double(*p) : 2.0, in,
            is_f64(in) || is_f64(rdt) ? WEFT_FLOAT64 : WEFT_FLOAT32, weft__kernels()};
  bool run = s == WEFT_OK && r.result->device != WEFT_DEVICE_META;
  if (run && x->numel == 0) {
    if (!weft_explaining() && r.result->numel > 0) s = weft_fill_(r.result, 0);
    run = false;
  }
  if (run && r.result->device == WEFT_DEVICE_WEBGPU) {
    run = false;
    s = on_webgpu(&r, norm_kind(c.kind), c.p);
  }
  if (run) s = make_acc(&r, c.acc);
  if (run && s == WEFT_OK) s = build_iter(&r);
  if (run && s == WEFT_OK && !weft_explaining()) s = weft_fill_(r.acc, c.kind == P_NINF ? INFINITY : 0);
  if (run && s == WEFT_OK) s = weft_iter_reduce_for_each(&r.it, norm_loop, norm_combine, &c, WEFT_GRAIN_SIZE, c.acc);
  if (run && s == WEFT_OK && !weft_explaining() && (r.acc != r.result || c.kind == P_TWO || c.kind == P_OTHER)) {
    s = finish(&r, norm_root, &c);
  }
  weft_tensor* res = s == WEFT_OK ? weft_tensor_retain(r.result) : NULL;
  nred_release(&r);
  return res;
}

static weft_tensor* k_norm(const weft_tensor* self, weft_scalar p) {
  return norm_impl(self, &p, NULL, 0, false, (weft_dtype)-1, NULL);
}
static weft_tensor* k_norm_dim(const weft_tensor* self, const weft_scalar* p, const int64_t* dim, int64_t n,
                               bool keepdim) {
  return norm_impl(self, p, dim, n, keepdim, (weft_dtype)-1, NULL);
}
static weft_tensor* k_norm_dim_dtype(const weft_tensor* self, const weft_scalar* p, const int64_t* dim, int64_t n,
                                     bool keepdim, weft_dtype dtype) {
  return norm_impl(self, p, dim, n, keepdim, dtype, NULL);
}
static weft_tensor* k_norm_dtype(const weft_tensor* self, const weft_scalar* p, weft_dtype dtype) {
  return norm_impl(self, p, NULL, 0, false, dtype, NULL);
}
static weft_tensor* k_norm_out(const weft_tensor* self, const weft_scalar* p, const int64_t* dim, int64_t n,
                               bool keepdim, weft_tensor* out) {
  return norm_impl(self, p, dim, n, keepdim, (weft_dtype)-1, out);
}
static weft_tensor* k_norm_dtype_out(const weft_tensor* self, const weft_scalar* p, const int64_t* dim, int64_t n,
                                     bool keepdim, weft_dtype dtype, weft_tensor* out) {
  return norm_impl(self, p, dim, n, keepdim, dtype, out);
}

/* ---- all / any ---- */

/* uint8 results see the input cast to uint8 first (PyTorch's uint8 kernel) */
static inline bool truthy(const char* p, weft_dtype t, bool as_u8) {
  if (as_u8 && t != WEFT_UINT8 && t != WEFT_BOOL) {
    uint8_t b;
    weft__store(&b, WEFT_UINT8, weft__load(p, t));
    return b != 0;
  }
  switch (t) {
    case WEFT_BOOL: case WEFT_UINT8: case WEFT_INT8: return *p != 0;
    case WEFT_FLOAT32: return (float)weft__load_f64(p, t) != 0; /* NaN != 0 */
    default: {
      weft__value v = weft__load(p, t);
      return v.is_float ? v.f != 0 : v.i != 0;
    }
  }
}

typedef struct {
  weft_dtype in;
  bool all; /* false: any */
  bool u8;  /* a uint8 result */
} actx;

static void all_loop(void* p, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  const actx* c = p;
  bool all = c->all;
  for (int64_t j = 0; j < n1; j++)
    for (int64_t i = 0; i < n0; i++) {
      char* o = data[0] + i * s[0] + j * s[2];
      bool t = truthy(data[1] + i * s[1] + j * s[3], c->in, c->u8);
      *o = all ? (*o && t) : (*o || t);
    }
}

static void all_combine(void* p, char** out, char** part) {
  const actx* c = p;
  *out[0] = c->all ? (*out[0] && *part[0]) : (*out[0] || *part[0]);
}

static weft_tensor* all_impl(bool all, const weft_tensor* self, const int64_t* dim, bool keepdim, weft_tensor* out) {
  const char* name = all ? "all" : "any";
  if (out && out->dtype != WEFT_BOOL && out->dtype != WEFT_UINT8) {
    return weft__error_null(WEFT_TYPE_ERROR, "%s only supports bool tensor for result, got: %s", name,
                            weft_dtype_name(out->dtype));
  }
  weft_dtype rdt = out ? out->dtype : self->dtype == WEFT_UINT8 ? WEFT_UINT8 : WEFT_BOOL;
  nred r;
  weft_status s = nred_meta(&r, name, weft_tensor_retain((weft_tensor*)self), dim, dim ? 1 : 0, keepdim, rdt, out);
  actx c = {self->dtype, all, rdt == WEFT_UINT8};
  if (s == WEFT_OK && r.result->device == WEFT_DEVICE_WEBGPU) {
    s = on_webgpu(&r, all ? WEFT__RED_ALL : WEFT__RED_ANY, 0);
  } else if (s == WEFT_OK && r.result->device != WEFT_DEVICE_META) {
    r.acc = weft_tensor_retain(r.result);
    s = build_iter(&r);
    if (s == WEFT_OK && !weft_explaining() && r.result->numel > 0) s = weft_fill_(r.result, all ? 1 : 0);
    if (s == WEFT_OK) s = weft_iter_reduce_for_each(&r.it, all_loop, all_combine, &c, WEFT_GRAIN_SIZE, WEFT_BOOL);
  }
  weft_tensor* res = s == WEFT_OK ? weft_tensor_retain(r.result) : NULL;
  nred_release(&r);
  return res;
}

static weft_tensor* k_all(const weft_tensor* self) { return all_impl(true, self, NULL, false, NULL); }
static weft_tensor* k_all_dim(const weft_tensor* self, int64_t dim, bool keepdim) {
  return all_impl(true, self, &dim, keepdim, NULL);
}
static weft_tensor* k_all_out(const weft_tensor* self, int64_t dim, bool keepdim, weft_tensor* out) {
  return all_impl(true, self, &dim, keepdim, out);
}
static weft_tensor* k_all_all_out(const weft_tensor* self, weft_tensor* out) {
  return all_impl(true, self, NULL, false, out);
}
static weft_tensor* k_any(const weft_tensor* self) { return all_impl(false, self, NULL, false, NULL); }
static weft_tensor* k_any_dim(const weft_tensor* self, int64_t dim, bool keepdim) {
  return all_impl(false, self, &dim, keepdim, NULL);
}
static weft_tensor* k_any_out(const weft_tensor* self, int64_t dim, bool keepdim, weft_tensor* out) {
  return all_impl(false, self, &dim, keepdim, out);
}
static weft_tensor* k_any_all_out(const weft_tensor* self, weft_tensor* out) {
  return all_impl(false, self, NULL, false, out);
}

/* ---- logsumexp ---- */

typedef struct {
  weft_dtype in, acc;
  const weft_kernels* k;
} lctx;

/* bfloat16 rounds each step as PyTorch's bfloat16 ops do */
static inline float rnd(weft_dtype t, float v) {
  return t == WEFT_BFLOAT16 ? weft__bf16_to_f32(weft__f32_to_bf16(v)) : v;
}

/* one row of sum(exp(x - m)), m fixed: float32 contiguous rows in blocks through the SIMD kernels */
static float lse_row_f32(const lctx* c, const char* x, int64_t st, int64_t n, float m) {
  float buf[BLOCK];
  float acc = 0;
  for (int64_t i0 = 0; i0 < n; i0 += BLOCK) {
    int64_t b = n - i0 < BLOCK ? n - i0 : BLOCK;
    if (c->in == WEFT_FLOAT32 && st == 4) {
      c->k->f32_vsubc((size_t)b, (const float*)x + i0, &m, buf, NULL);
      c->k->f32_vexp((size_t)b, buf, buf, NULL);
    } else {
      for (int64_t i = 0; i < b; i++) buf[i] = rnd(c->in, expf(rnd(c->in, (float)weft__load_f64(x + (i0 + i) * st, c->in) - m)));
    }
    acc += c->k->f32_rsum((size_t)b, buf);
  }
  return acc;
}

/* operands: acc, x, m */
static void lse_loop(void* p, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  const lctx* c = p;
  for (int64_t j = 0; j < n1; j++) {
    if (c->acc == WEFT_FLOAT32 && s[0] == 0 && s[2] == 0) {
      float* o = (float*)(data[0] + j * s[3]);
      *o += lse_row_f32(c, data[1] + j * s[4], s[1], n0, (float)weft__load_f64(data[2] + j * s[5], c->in));
      continue;
    }
    for (int64_t i = 0; i < n0; i++) {
      char* o = data[0] + i * s[0] + j * s[3];
      const char* x = data[1] + i * s[1] + j * s[4];
      const char* m = data[2] + i * s[2] + j * s[5];
      /* exp in the input's precision (x - m and exp are ops on x's dtype), summed in the accumulator's */
      float e = c->in == WEFT_FLOAT64 ? 0 : rnd(c->in, expf(rnd(c->in, (float)weft__load_f64(x, c->in) - (float)weft__load_f64(m, c->in))));
      if (c->acc == WEFT_FLOAT32) *(float*)o += e;
      else *(double*)o += c->in == WEFT_FLOAT64 ? exp(weft__load_f64(x, c->in) - weft__load_f64(m, c->in)) : e;
    }
  }
}

static void lse_combine(void* p, char** out, char** part) {
  const lctx* c = p;
  if (c->acc == WEFT_FLOAT32) *(float*)out[0] += *(const float*)part[0];
  else *(double*)out[0] += *(const double*)part[0];
}

static double lse_finish(const void* p, double a, double m) {
  const lctx* c = p;
  if (c->acc == WEFT_FLOAT64) return log(a) + m;
  return rnd(c->in, rnd(c->in, logf((float)a)) + (float)m);
}

/* m: amax over the dims (keepdim), infinities replaced by 0 */
static weft_tensor* shifts(const nred* r, const int64_t* dims, int64_t ndims) {
  if (weft_explaining()) {
    int64_t sizes[WEFT_MAX_DIMS], strides[WEFT_MAX_DIMS] = {0}, count;
    int n = weft__reduce_shape(r->x, r->mask, true, sizes, &count);
    weft__strides_for_format(sizes, n, WEFT_CONTIGUOUS_FORMAT, strides);
    return weft__tensor_alloc(r->name, sizes, strides, n, r->x->dtype, r->x->device);
  }
  weft_tensor* m = weft_amax(r->x, dims, ndims, true);
  if (!m) return NULL;
  char* p = weft_tensor_data_ptr(m); /* amax's result is contiguous */
  int64_t es = (int64_t)weft_dtype_size(m->dtype);
  for (int64_t i = 0; i < m->numel; i++) {
    if (isinf(weft__value_f64(weft__load(p + i * es, m->dtype)))) weft__store(p + i * es, m->dtype, weft__value_from_double(0));
  }
  return m;
}

static weft_status lse_checks(const weft_tensor* self, const int64_t* dims, int64_t ndims, bool keepdim,
                              const weft_tensor* out) {
  if (out && !weft_dtype_is_floating(out->dtype)) {
    return weft__error(WEFT_TYPE_ERROR, "logsumexp(): Expected floating point type for result tensor, but got: %s",
                       weft_dtype_name(out->dtype));
  }
  if (self->dtype == WEFT_FLOAT16) {
    return weft__error(WEFT_TYPE_ERROR, "logsumexp: \"exp_vml_cpu\" not implemented for 'float16'");
  }
  if (ndims == 0 && !keepdim && self->ndim > 0 && self->numel > 0) {
    /* 1.13 reduces every dim but adds the keepdim shifts to the squeezed result */
    char shape[4 * WEFT_MAX_DIMS + 4] = "";
    for (int d = 0; d < self->ndim; d++) strcat(shape, d ? ", 1" : "1");
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "logsumexp: output with shape [] doesn't match the broadcast shape [%s]", shape);
  }
  return WEFT_OK;
}

static weft_tensor* lse_impl(const weft_tensor* self, const int64_t* dims, int64_t ndims, bool keepdim,
                             weft_tensor* out) {
  if (lse_checks(self, dims, ndims, keepdim, out) != WEFT_OK) return NULL;
  bool integral = weft_dtype_is_integral(self->dtype, true);
  weft_tensor* x = integral ? weft_to_dtype(self, WEFT_FLOAT32, false) : weft_tensor_retain((weft_tensor*)self);
  weft_dtype rdt = out ? out->dtype : integral ? WEFT_FLOAT32 : self->dtype;
  nred r;
  weft_status s = nred_meta(&r, "logsumexp", x, dims, ndims, keepdim, rdt, out);
  bool run = s == WEFT_OK && r.result->device != WEFT_DEVICE_META;
  if (run && x->numel == 0) { /* log(sum(exp(empty))) */
    if (!weft_explaining() && r.result->numel > 0) s = weft_fill_(r.result, -INFINITY);
    run = false;
  }
  lctx c = {s == WEFT_OK ? x->dtype : WEFT_FLOAT32, is_f64(rdt) || (x && is_f64(x->dtype)) ? WEFT_FLOAT64 : WEFT_FLOAT32,
            weft__kernels()};
  if (run && r.result->device == WEFT_DEVICE_WEBGPU) {
    run = false;
    s = on_webgpu(&r, WEFT__RED_LSE, 0);
  }
  if (run) {
    r.extra = shifts(&r, dims, ndims);
    s = r.extra ? make_acc(&r, c.acc) : weft_last_status();
  }
  if (run && s == WEFT_OK) s = build_iter(&r);
  if (run && s == WEFT_OK && !weft_explaining()) s = weft_fill_(r.acc, 0);
  if (run && s == WEFT_OK) s = weft_iter_reduce_for_each(&r.it, lse_loop, lse_combine, &c, WEFT_GRAIN_SIZE, c.acc);
  if (run && s == WEFT_OK && !weft_explaining()) s = finish(&r, lse_finish, &c);
  weft_tensor* res = s == WEFT_OK ? weft_tensor_retain(r.result) : NULL;
  nred_release(&r);
  return res;
}

static weft_tensor* k_logsumexp(const weft_tensor* self, const int64_t* dim, int64_t n, bool keepdim) {
  return lse_impl(self, dim, n, keepdim, NULL);
}
static weft_tensor* k_logsumexp_out(const weft_tensor* self, const int64_t* dim, int64_t n, bool keepdim,
                                    weft_tensor* out) {
  return lse_impl(self, dim, n, keepdim, out);
}

#define BOTH(op, fn)          \
  WEFT_KERNEL(op, CPU, fn);   \
  WEFT_KERNEL(op, META, fn);  \
  WEFT_KERNEL(op, WEBGPU, fn)

weft_status weft__norm_register(void) {
  BOTH(norm, k_norm);
  BOTH(norm_dim, k_norm_dim);
  BOTH(norm_dim_dtype, k_norm_dim_dtype);
  BOTH(norm_dtype, k_norm_dtype);
  BOTH(norm_out, k_norm_out);
  BOTH(norm_dtype_out, k_norm_dtype_out);
  BOTH(all, k_all);
  BOTH(all_dim, k_all_dim);
  BOTH(all_out, k_all_out);
  BOTH(all_all_out, k_all_all_out);
  BOTH(any, k_any);
  BOTH(any_dim, k_any_dim);
  BOTH(any_out, k_any_out);
  BOTH(any_all_out, k_any_all_out);
  BOTH(logsumexp, k_logsumexp);
  BOTH(logsumexp_out, k_logsumexp_out);
  return WEFT_OK;
}
