/* var and std (PyTorch 1.13's var / var.dim / var.correction and std's):
 * composed of the reductions and elementwise ops, in float64 whatever the
 * input (PyTorch's CPU kernel accumulates floats in double too):
 *   sum((x - mean(x, dim, keepdim=True))^2, dim) / max(0, N - correction)
 * then sqrt for std, then back to the input's dtype. N - correction <= 0
 * divides by 0 (nan or inf), as PyTorch does. Only floating inputs. */
#include <string.h>

#include "core/internal.h"
#include "ops/ops.h"

static weft_tensor* release2(weft_tensor* a, weft_tensor* keep) {
  weft_tensor_release(a);
  return keep;
}

/* mean_out: var_mean/std_mean's mean too (then `name` is theirs) */
static weft_tensor* var_impl(bool is_std, const weft_tensor* self, const int64_t* dims, int64_t ndims,
                             int64_t correction, bool keepdim, weft_tensor** mean_out) {
  const char* name = mean_out ? (is_std ? "std_mean" : "var_mean") : is_std ? "std" : "var";
  if (!weft_dtype_is_floating(self->dtype)) {
    if (mean_out) {
      return weft__error_null(WEFT_TYPE_ERROR, "%s only support floating point and complex dtypes", name);
    }
    return weft__error_null(WEFT_TYPE_ERROR, "%s: std and var only support floating point and complex dtypes",
                            name);
  }
  uint32_t mask = 0;
  for (int64_t i = 0; i < ndims; i++) {
    int64_t d;
    if (!weft__wrap_dim(name, dims[i], self->ndim, &d)) return NULL;
    if (mask >> d & 1) {
      return weft__error_null(WEFT_INVALID_ARGUMENT, "%s: dim %lld appears multiple times in the list of dims",
                              name, (long long)d);
    }
    mask |= 1u << d;
  }
  int64_t n = 1;
  for (int d = 0; d < self->ndim; d++)
    if (ndims == 0 || (mask >> d & 1)) n *= self->sizes[d];
  int64_t denom = n - (correction == INT64_MIN ? 1 : correction);
  weft_tensor* x = weft_to_dtype(self, WEFT_FLOAT64, false);
  if (!x) return NULL;
  weft_tensor* m = weft_mean_dim(x, dims, ndims, true, (weft_dtype)-1);
  if (!m) return release2(x, NULL);
  if (mean_out) {
    weft_tensor* mk = keepdim ? weft_tensor_retain(m) : weft_mean_dim(x, dims, ndims, false, (weft_dtype)-1);
    *mean_out = mk ? weft_to_dtype(mk, self->dtype, false) : NULL;
    weft_tensor_release(mk);
    if (!*mean_out) {
      weft_tensor_release(m);
      return release2(x, NULL);
    }
  }
  weft_tensor* dev = weft_sub(x, m, weft_scalar_int(1));
  weft_tensor_release(m);
  weft_tensor_release(x);
  if (!dev) return NULL;
  weft_tensor* sq = weft_mul(dev, dev);
  weft_tensor_release(dev);
  if (!sq) return NULL;
  weft_tensor* s = weft_sum_dim(sq, dims, ndims, keepdim, (weft_dtype)-1);
  weft_tensor_release(sq);
  if (!s) return NULL;
  weft_tensor* v = weft_div_scalar(s, weft_scalar_double(denom > 0 ? (double)denom : 0.0));
  weft_tensor_release(s);
  if (!v) return NULL;
  if (is_std) {
    weft_tensor* r = weft_sqrt(v);
    weft_tensor_release(v);
    if (!r) return NULL;
    v = r;
  }
  weft_tensor* r = weft_to_dtype(v, self->dtype, false);
  weft_tensor_release(v);
  return r;
}

static weft_tensor* k_var(const weft_tensor* self, bool unbiased) {
  return var_impl(false, self, NULL, 0, unbiased ? 1 : 0, false, NULL);
}
static weft_tensor* k_var_dim(const weft_tensor* self, const int64_t* dim, int64_t n, bool unbiased, bool keepdim) {
  return var_impl(false, self, dim, n, unbiased ? 1 : 0, keepdim, NULL);
}
static weft_tensor* k_var_correction(const weft_tensor* self, const int64_t* dim, int64_t n, int64_t correction,
                                     bool keepdim) {
  return var_impl(false, self, dim, n, correction, keepdim, NULL);
}
static weft_tensor* k_std(const weft_tensor* self, bool unbiased) {
  return var_impl(true, self, NULL, 0, unbiased ? 1 : 0, false, NULL);
}
static weft_tensor* k_std_dim(const weft_tensor* self, const int64_t* dim, int64_t n, bool unbiased, bool keepdim) {
  return var_impl(true, self, dim, n, unbiased ? 1 : 0, keepdim, NULL);
}
static weft_tensor* k_std_correction(const weft_tensor* self, const int64_t* dim, int64_t n, int64_t correction,
                                     bool keepdim) {
  return var_impl(true, self, dim, n, correction, keepdim, NULL);
}

/* var_mean / std_mean: {var (std), mean}, both in self's dtype; with outs,
 * each result is copied into its out tensor (resized; its dtype may differ,
 * as PyTorch's copy into out0/out1) and the outs are returned. */
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
  weft_tensor* mean = NULL;
  weft_tensor* v = var_impl(is_std, self, dims, ndims, correction, keepdim, &mean);
  if (!v) return r;
  if (out0) {
    const char* name = is_std ? "std_mean" : "var_mean";
    weft_status s = copy_into(out0, v, name);
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

/* CompositeImplicitAutograd in PyTorch: one kernel serves every backend */
weft_status weft__var_register(void) {
  WEFT_KERNEL(var, COMPOSITE_IMPLICIT_AUTOGRAD, k_var);
  WEFT_KERNEL(var_dim, COMPOSITE_IMPLICIT_AUTOGRAD, k_var_dim);
  WEFT_KERNEL(var_correction, COMPOSITE_IMPLICIT_AUTOGRAD, k_var_correction);
  WEFT_KERNEL(std, COMPOSITE_IMPLICIT_AUTOGRAD, k_std);
  WEFT_KERNEL(std_dim, COMPOSITE_IMPLICIT_AUTOGRAD, k_std_dim);
  WEFT_KERNEL(std_correction, COMPOSITE_IMPLICIT_AUTOGRAD, k_std_correction);
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
