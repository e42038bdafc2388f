/* var and std (PyTorch 1.13's var / var.dim / var.correction and std's):
 * composed of the reductions and elementwise ops, in float64 whatever the
 * input (PyTorch's CPU kernel accumulates floats in double too):
 *   sum((x - mean(x, dim, keepdim=True))^2, dim) / max(0, N - correction)
 * then sqrt for std, then back to the input's dtype. N - correction <= 0
 * divides by 0 (nan or inf), as PyTorch does. Only floating inputs. */
#include "core/internal.h"
#include "ops/ops.h"

static weft_tensor* release2(weft_tensor* a, weft_tensor* keep) {
  weft_tensor_release(a);
  return keep;
}

static weft_tensor* var_impl(bool is_std, const weft_tensor* self, const int64_t* dims, int64_t ndims,
                             int64_t correction, bool keepdim) {
  const char* name = is_std ? "std" : "var";
  if (!weft_dtype_is_floating(self->dtype)) {
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
  return var_impl(false, self, NULL, 0, unbiased ? 1 : 0, false);
}
static weft_tensor* k_var_dim(const weft_tensor* self, const int64_t* dim, int64_t n, bool unbiased, bool keepdim) {
  return var_impl(false, self, dim, n, unbiased ? 1 : 0, keepdim);
}
static weft_tensor* k_var_correction(const weft_tensor* self, const int64_t* dim, int64_t n, int64_t correction,
                                     bool keepdim) {
  return var_impl(false, self, dim, n, correction, keepdim);
}
static weft_tensor* k_std(const weft_tensor* self, bool unbiased) {
  return var_impl(true, self, NULL, 0, unbiased ? 1 : 0, false);
}
static weft_tensor* k_std_dim(const weft_tensor* self, const int64_t* dim, int64_t n, bool unbiased, bool keepdim) {
  return var_impl(true, self, dim, n, unbiased ? 1 : 0, keepdim);
}
static weft_tensor* k_std_correction(const weft_tensor* self, const int64_t* dim, int64_t n, int64_t correction,
                                     bool keepdim) {
  return var_impl(true, self, dim, n, correction, keepdim);
}

/* CompositeImplicitAutograd in PyTorch: one kernel serves every backend */
weft_status weft__var_register(void) {
  WEFT_KERNEL(var, COMPOSITE_IMPLICIT_AUTOGRAD, k_var);
  WEFT_KERNEL(var_dim, COMPOSITE_IMPLICIT_AUTOGRAD, k_var_dim);
  WEFT_KERNEL(var_correction, COMPOSITE_IMPLICIT_AUTOGRAD, k_var_correction);
  WEFT_KERNEL(std, COMPOSITE_IMPLICIT_AUTOGRAD, k_std);
  WEFT_KERNEL(std_dim, COMPOSITE_IMPLICIT_AUTOGRAD, k_std_dim);
  WEFT_KERNEL(std_correction, COMPOSITE_IMPLICIT_AUTOGRAD, k_std_correction);
  return WEFT_OK;
}
