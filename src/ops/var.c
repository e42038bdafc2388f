/* var and std (PyTorch 1.13's var / var.dim / var.correction and std's) in
 * one pass over the reduction iterator: Welford's running mean and sum of
 * squared deviations in float64 whatever the input (PyTorch's CPU kernel,
 * WelfordOps<scalar_t, double, ...>), rows folded locally and merged with
 * Chan's formula (also how the threads' partials combine), then
 *   m2 / max(0, N - correction), sqrt for std,
 * in the input's dtype. N - correction <= 0 divides by 0 (nan or inf), as
 * PyTorch does. Only floating inputs. */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "iter/iter_internal.h"
#include "ops/ops.h"
#include "ops/reduce_util.h"
#include "ops/reduce_webgpu.h"
#include "weft/iter.h"

/* a running state: count, mean, sum of squared deviations */
typedef struct {
  double n, mean, m2;
} welford;

static inline void w_add(welford* w, double x) {
  w->n += 1;
  double d = x - w->mean;
  w->mean += d / w->n;
  w->m2 += d * (x - w->mean);
}

/* Chan et al.: the state of the union of two disjoint sets */
static inline welford w_merge(welford a, welford b) {
  if (b.n == 0) return a;
  if (a.n == 0) return b;
  welford r;
  r.n = a.n + b.n;
  double d = b.mean - a.mean;
  r.mean = a.mean + d * (b.n / r.n);
  r.m2 = a.m2 + b.m2 + d * d * (a.n * b.n / r.n);
  return r;
}

/* the state as three float64 outputs (n, mean, m2) */
static inline welford w_load(char* const* o) {
  welford w;
  memcpy(&w.n, o[0], 8);
  memcpy(&w.mean, o[1], 8);
  memcpy(&w.m2, o[2], 8);
  return w;
}
static inline void w_store(char* const* o, welford w) {
  memcpy(o[0], &w.n, 8);
  memcpy(o[1], &w.mean, 8);
  memcpy(o[2], &w.m2, 8);
}


/* operands: n, mean, m2, x; strides s[0..3] along dim 0, s[4..7] along dim 1 */
static void var_loop(void* p, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  weft_dtype t = *(const weft_dtype*)p;
  bool row = s[0] == 0 && s[1] == 0 && s[2] == 0;
  for (int64_t j = 0; j < n1; j++) {
    const char* x = data[3] + j * s[7];
    if (row) {
      char* o[3] = {data[0] + j * s[4], data[1] + j * s[5], data[2] + j * s[6]};
      welford w = {0, 0, 0};
      for (int64_t i = 0; i < n0; i++) w_add(&w, weft__load_f64(x + i * s[3], t));
      w_store(o, w_merge(w_load(o), w));
      continue;
    }
    for (int64_t i = 0; i < n0; i++) {
      char* o[3] = {data[0] + i * s[0] + j * s[4], data[1] + i * s[1] + j * s[5], data[2] + i * s[2] + j * s[6]};
      welford w = w_load(o);
      w_add(&w, weft__load_f64(x + i * s[3], t));
      w_store(o, w);
    }
  }
}

static void var_combine(void* p, char** out, char** part) {
  w_store(out, w_merge(w_load(out), w_load(part)));
}

/* result[i] = m2[i] / denom (sqrt for std), result contiguous like the states */
static void var_finish(weft_tensor* res, const weft_tensor* m2, double denom, bool is_std) {
  const double* q = weft_tensor_data_ptr((weft_tensor*)m2);
  char* o = weft_tensor_data_ptr(res);
  int64_t es = (int64_t)weft_dtype_size(res->dtype);
  for (int64_t i = 0; i < res->numel; i++) {
    double v = q[i] / denom;
    weft__store(o + i * es, res->dtype, weft__value_from_double(is_std ? sqrt(v) : v));
  }
}

/* the same reduction plan, the device's Welford pass */
static weft_tensor* var_webgpu(bool is_std, const weft_tensor* self, uint32_t mask, bool keepdim, int64_t correction,
                               weft_tensor* res) {
  const char* name = is_std ? "std" : "var";
  weft_tensor* view = weft__reduce_view(self, mask, keepdim, res);
  if (!view) {
    weft_tensor_release(res);
    return NULL;
  }
  weft_iter it;
  weft_iter_config c = weft_iter_config_init();
  weft_iter_config_set_op_name(&c, name);
  weft_iter_config_add_owned_output(&c, view);
  weft_iter_config_add_input(&c, self);
  weft_iter_config_check_mem_overlap(&c, false);
  weft_iter_config_resize_outputs(&c, false);
  weft_iter_config_is_reduction(&c, true);
  weft_status s = weft_iter_build(&c, &it);
  if (s == WEFT_OK) {
    s = weft__reduce_webgpu(name, is_std ? WEFT__RED_STD : WEFT__RED_VAR, &it, correction == INT64_MIN ? 1.0 : (double)correction);
    weft_iter_destroy(&it);
  }
  if (s == WEFT_OK) return res;
  weft_tensor_release(res);
  return NULL;
}

static weft_tensor* var_impl(bool is_std, const weft_tensor* self, const int64_t* dims, int64_t ndims,
                             int64_t correction, bool keepdim) {
  const char* name = is_std ? "std" : "var";
  if (!weft_dtype_is_floating(self->dtype)) {
    return weft__error_null(WEFT_TYPE_ERROR, "%s: std and var only support floating point and complex dtypes",
                            name);
  }
  uint32_t mask;
  if (weft__reduce_dim_mask(name, self, dims, ndims, &mask) != WEFT_OK) return NULL;
  weft_tensor* res = weft__reduce_result(name, self, mask, keepdim, self->dtype, NULL);
  if (!res || res->device == WEFT_DEVICE_META || res->numel == 0) return res;
  if (res->device == WEFT_DEVICE_WEBGPU) return var_webgpu(is_std, self, mask, keepdim, correction, res);
  int64_t sizes[WEFT_MAX_DIMS], count;
  weft__reduce_shape(self, mask, keepdim, sizes, &count);
  /* the states: n, mean, m2 as float64 tensors of the result's (contiguous) layout */
  weft_tensor* st[3] = {NULL, NULL, NULL};
  weft_status s = WEFT_OK;
  for (int k = 0; k < 3 && s == WEFT_OK; k++) {
    st[k] = weft__tensor_alloc(name, res->sizes, res->strides, res->ndim, WEFT_FLOAT64, res->device);
    if (!st[k] || (!weft_explaining() && weft_fill_(st[k], 0) != WEFT_OK)) s = weft_last_status();
  }
  weft_iter it;
  weft_iter_config c = weft_iter_config_init();
  weft_iter_config_set_op_name(&c, name);
  for (int k = 0; k < 3; k++) {
    weft_tensor* v = st[k] ? weft__reduce_view(self, mask, keepdim, st[k]) : NULL;
    if (v) weft_iter_config_add_owned_output(&c, v);
    else s = s == WEFT_OK ? weft_last_status() : s;
  }
  weft_iter_config_add_input(&c, self);
  weft_iter_config_check_mem_overlap(&c, false);
  weft_iter_config_resize_outputs(&c, false);
  weft_iter_config_check_all_same_dtype(&c, false);
  weft_iter_config_is_reduction(&c, true);
  if (s != WEFT_OK) weft_iter_config_destroy(&c);
  else if ((s = weft_iter_build(&c, &it)) == WEFT_OK) { /* build consumes the config */
    weft_dtype t = self->dtype;
    s = weft_iter_reduce_for_each(&it, var_loop, var_combine, &t, WEFT_GRAIN_SIZE, WEFT_FLOAT64);
    weft_iter_destroy(&it);
  }
  int64_t denom = count - (correction == INT64_MIN ? 1.0 : (double)correction);
  if (s == WEFT_OK && !weft_explaining()) var_finish(res, st[2], denom > 0 ? (double)denom : 0.0, is_std);
  for (int k = 0; k < 3; k++) weft_tensor_release(st[k]);
  if (s != WEFT_OK) {
    weft_tensor_release(res);
    return NULL;
  }
  return res;
}

/* var_mean / std_mean: {var (std), mean}, both in self's dtype; with outs,
 * each result is copied into its out tensor (resized; its dtype may differ
 * within the out= cast rule) and the outs are returned. */
/* The out= cast rule of every other op (1.13's var/var_mean outs copy into
 * any dtype; weft refuses a float result into an integer out, as add's). */
static weft_status castable(const weft_tensor* out, weft_dtype result, const char* name) {
  if (weft_can_cast(result, out->dtype)) return WEFT_OK;
  return weft__error(WEFT_TYPE_ERROR, "%s: result type %s can't be cast to the desired output type %s", name,
                     weft_dtype_name(result), weft_dtype_name(out->dtype));
}

static weft_status copy_into(weft_tensor* out, const weft_tensor* r, const char* name) {
  if (out->ndim != r->ndim || memcmp(out->sizes, r->sizes, sizeof(int64_t) * (size_t)r->ndim) != 0) {
    int64_t strides[WEFT_MAX_DIMS];
    weft__strides_for_format(r->sizes, r->ndim, WEFT_CONTIGUOUS_FORMAT, strides);
    weft_status s = weft__tensor_resize_(out, r->sizes, strides, r->ndim, name);
    if (s != WEFT_OK) return s;
  }
  return weft_copy_(out, r);
}

static weft_tensor2 var_mean_impl(bool is_std, const weft_tensor* self, const int64_t* dims, int64_t ndims,
                                  int64_t correction, bool keepdim, weft_tensor* out0, weft_tensor* out1) {
  weft_tensor2 r = {{NULL, NULL}};
  const char* name = is_std ? "std_mean" : "var_mean";
  if (!weft_dtype_is_floating(self->dtype)) {
    weft__error(WEFT_TYPE_ERROR, "%s only support floating point and complex dtypes", name);
    return r;
  }
  /* through the dispatcher, so autograd records the var/std half (var_mean is composite) */
  weft_tensor* v = is_std ? weft_std_correction(self, dims, ndims, correction, keepdim)
                          : weft_var_correction(self, dims, ndims, correction, keepdim);
  if (!v) return r;
  /* the mean as var's pass sees it: accumulated in float64 (nan when empty); in
   * float32 on webgpu, which has no float64 */
  weft_tensor* x = self->device == WEFT_DEVICE_WEBGPU ? weft_tensor_retain((weft_tensor*)self)
                                                      : weft_to_dtype(self, WEFT_FLOAT64, false);
  weft_tensor* mk = x ? weft_mean_dim(x, dims, ndims, keepdim, (weft_dtype)-1) : NULL;
  weft_tensor* mean = mk ? weft_to_dtype(mk, self->dtype, false) : NULL;
  weft_tensor_release(mk);
  weft_tensor_release(x);
  if (!mean) {
    weft_tensor_release(v);
    return r;
  }
  if (out0) {
    weft_status s = castable(out0, v->dtype, name);
    if (s == WEFT_OK) s = castable(out1, mean->dtype, name);
    if (s == WEFT_OK) s = copy_into(out0, v, name);
    if (s == WEFT_OK) s = copy_into(out1, mean, name);
    weft_tensor_release(v);
    weft_tensor_release(mean);
    if (s != WEFT_OK) return r;
    v = weft_tensor_retain(out0);
    mean = weft_tensor_retain(out1);
  }
  r.t[0] = v;
  r.t[1] = mean;
  return r;
}

static weft_tensor2 k_var_mean(const weft_tensor* self, bool unbiased) {
  return var_mean_impl(false, self, NULL, 0, unbiased ? 1 : 0, false, NULL, NULL);
}
static weft_tensor2 k_var_mean_dim(const weft_tensor* self, const int64_t* dim, int64_t n, bool unbiased,
                                   bool keepdim) {
  return var_mean_impl(false, self, dim, n, unbiased ? 1 : 0, keepdim, NULL, NULL);
}
static weft_tensor2 k_var_mean_correction(const weft_tensor* self, const int64_t* dim, int64_t n, int64_t correction,
                                          bool keepdim) {
  return var_mean_impl(false, self, dim, n, correction, keepdim, NULL, NULL);
}
static weft_tensor2 k_var_mean_correction_out(const weft_tensor* self, const int64_t* dim, int64_t n,
                                              int64_t correction, bool keepdim, weft_tensor* out0,
                                              weft_tensor* out1) {
  return var_mean_impl(false, self, dim, n, correction, keepdim, out0, out1);
}
static weft_tensor2 k_std_mean(const weft_tensor* self, bool unbiased) {
  return var_mean_impl(true, self, NULL, 0, unbiased ? 1 : 0, false, NULL, NULL);
}
static weft_tensor2 k_std_mean_dim(const weft_tensor* self, const int64_t* dim, int64_t n, bool unbiased,
                                   bool keepdim) {
  return var_mean_impl(true, self, dim, n, unbiased ? 1 : 0, keepdim, NULL, NULL);
}
static weft_tensor2 k_std_mean_correction(const weft_tensor* self, const int64_t* dim, int64_t n, int64_t correction,
                                          bool keepdim) {
  return var_mean_impl(true, self, dim, n, correction, keepdim, NULL, NULL);
}
static weft_tensor2 k_std_mean_correction_out(const weft_tensor* self, const int64_t* dim, int64_t n,
                                              int64_t correction, bool keepdim, weft_tensor* out0,
                                              weft_tensor* out1) {
  return var_mean_impl(true, self, dim, n, correction, keepdim, out0, out1);
}

/* var.correction / std.correction are the kernels (CPU and Meta); var,
 * var.dim, std, std.dim are CompositeImplicitAutograd over them, as in PyTorch. */
static weft_tensor* k_var_correction(const weft_tensor* self, const int64_t* dim, int64_t n, int64_t correction,
                                     bool keepdim) {
  return var_impl(false, self, dim, n, correction, keepdim);
}
static weft_tensor* k_std_correction(const weft_tensor* self, const int64_t* dim, int64_t n, int64_t correction,
                                     bool keepdim) {
  return var_impl(true, self, dim, n, correction, keepdim);
}
/* var.correction_out / std.correction_out: the result copied into out
 * (resized; its dtype may differ within the out= cast rule) */
static weft_tensor* var_out(bool is_std, const weft_tensor* self, const int64_t* dim, int64_t n, int64_t correction,
                            bool keepdim, weft_tensor* out) {
  weft_tensor* v = is_std ? weft_std_correction(self, dim, n, correction, keepdim)
                          : weft_var_correction(self, dim, n, correction, keepdim);
  if (!v) return NULL;
  const char* name = is_std ? "std" : "var";
  weft_status s = castable(out, v->dtype, name);
  if (s == WEFT_OK) s = copy_into(out, v, name);
  weft_tensor_release(v);
  return s == WEFT_OK ? weft_tensor_retain(out) : NULL;
}
static weft_tensor* k_var_correction_out(const weft_tensor* self, const int64_t* dim, int64_t n, int64_t correction,
                                         bool keepdim, weft_tensor* out) {
  return var_out(false, self, dim, n, correction, keepdim, out);
}
static weft_tensor* k_std_correction_out(const weft_tensor* self, const int64_t* dim, int64_t n, int64_t correction,
                                         bool keepdim, weft_tensor* out) {
  return var_out(true, self, dim, n, correction, keepdim, out);
}
static weft_tensor* k_var(const weft_tensor* self, bool unbiased) {
  return weft_var_correction(self, NULL, 0, unbiased ? 1 : 0, false);
}
static weft_tensor* k_var_dim(const weft_tensor* self, const int64_t* dim, int64_t n, bool unbiased, bool keepdim) {
  return weft_var_correction(self, dim, n, unbiased ? 1 : 0, keepdim);
}
static weft_tensor* k_std(const weft_tensor* self, bool unbiased) {
  return weft_std_correction(self, NULL, 0, unbiased ? 1 : 0, false);
}
static weft_tensor* k_std_dim(const weft_tensor* self, const int64_t* dim, int64_t n, bool unbiased, bool keepdim) {
  return weft_std_correction(self, dim, n, unbiased ? 1 : 0, keepdim);
}

weft_status weft__var_register(void) {
  WEFT_KERNEL(var, COMPOSITE_IMPLICIT_AUTOGRAD, k_var);
  WEFT_KERNEL(var_dim, COMPOSITE_IMPLICIT_AUTOGRAD, k_var_dim);
  WEFT_KERNEL(var_correction, CPU, k_var_correction);
  WEFT_KERNEL(var_correction, META, k_var_correction);
  WEFT_KERNEL(var_correction, WEBGPU, k_var_correction);
  WEFT_KERNEL(std_correction, WEBGPU, k_std_correction);
  WEFT_KERNEL(var_correction_out, COMPOSITE_IMPLICIT_AUTOGRAD, k_var_correction_out);
  WEFT_KERNEL(std, COMPOSITE_IMPLICIT_AUTOGRAD, k_std);
  WEFT_KERNEL(std_dim, COMPOSITE_IMPLICIT_AUTOGRAD, k_std_dim);
  WEFT_KERNEL(std_correction, CPU, k_std_correction);
  WEFT_KERNEL(std_correction, META, k_std_correction);
  WEFT_KERNEL(std_correction_out, COMPOSITE_IMPLICIT_AUTOGRAD, k_std_correction_out);
  WEFT_KERNEL(var_mean, COMPOSITE_IMPLICIT_AUTOGRAD, k_var_mean);
  WEFT_KERNEL(var_mean_dim, COMPOSITE_IMPLICIT_AUTOGRAD, k_var_mean_dim);
  WEFT_KERNEL(var_mean_correction, COMPOSITE_IMPLICIT_AUTOGRAD, k_var_mean_correction);
  WEFT_KERNEL(var_mean_correction_out, COMPOSITE_IMPLICIT_AUTOGRAD, k_var_mean_correction_out);
  WEFT_KERNEL(std_mean, COMPOSITE_IMPLICIT_AUTOGRAD, k_std_mean);
  WEFT_KERNEL(std_mean_dim, COMPOSITE_IMPLICIT_AUTOGRAD, k_std_mean_dim);
  WEFT_KERNEL(std_mean_correction, COMPOSITE_IMPLICIT_AUTOGRAD, k_std_mean_correction);
  WEFT_KERNEL(std_mean_correction_out, COMPOSITE_IMPLICIT_AUTOGRAD, k_std_mean_correction_out);
  return WEFT_OK;
}
