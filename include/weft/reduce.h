/* Reductions (PyTorch 1.13 semantics): the dispatching entry points of
 * src/ops/reduce.def.
 *
 * dim lists: `dim` points at dim_len dims (negative ones count from the end);
 * NULL (None) or an empty list reduces every dim. dtype: (weft_dtype)-1 for
 * None, else the result dtype (the input is converted to it first). Integral
 * and bool sum/prod give int64; mean refuses integral inputs. Out forms write
 * into out (resized when its shape differs) and return a new reference to
 * it. argmax/argmin take dim INT64_MIN for None (the flattened input). NULL
 * with weft_last_error() on failure. */
#ifndef WEFT_REDUCE_H
#define WEFT_REDUCE_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sum(Tensor self, *, ScalarType? dtype=None) -> Tensor */
weft_tensor* weft_sum(const weft_tensor* self, weft_dtype dtype);
/* sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor */
weft_tensor* weft_sum_dim(const weft_tensor* self, const int64_t* dim, int64_t dim_len, bool keepdim,
                          weft_dtype dtype);
/* sum.IntList_out(..., *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!) */
weft_tensor* weft_sum_out(const weft_tensor* self, const int64_t* dim, int64_t dim_len, bool keepdim,
                          weft_dtype dtype, weft_tensor* out);
weft_tensor* weft_mean(const weft_tensor* self, weft_dtype dtype);
weft_tensor* weft_mean_dim(const weft_tensor* self, const int64_t* dim, int64_t dim_len, bool keepdim,
                           weft_dtype dtype);
weft_tensor* weft_mean_out(const weft_tensor* self, const int64_t* dim, int64_t dim_len, bool keepdim,
                           weft_dtype dtype, weft_tensor* out);
/* prod takes one dim (prod.dim_int) */
weft_tensor* weft_prod(const weft_tensor* self, weft_dtype dtype);
weft_tensor* weft_prod_dim(const weft_tensor* self, int64_t dim, bool keepdim, weft_dtype dtype);
weft_tensor* weft_prod_out(const weft_tensor* self, int64_t dim, bool keepdim, weft_dtype dtype, weft_tensor* out);
/* amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor; NaN propagates */
weft_tensor* weft_amax(const weft_tensor* self, const int64_t* dim, int64_t dim_len, bool keepdim);
weft_tensor* weft_amax_out(const weft_tensor* self, const int64_t* dim, int64_t dim_len, bool keepdim,
                           weft_tensor* out);
weft_tensor* weft_amin(const weft_tensor* self, const int64_t* dim, int64_t dim_len, bool keepdim);
weft_tensor* weft_amin_out(const weft_tensor* self, const int64_t* dim, int64_t dim_len, bool keepdim,
                           weft_tensor* out);
/* max(Tensor self) -> Tensor (no dim: a 0-dim tensor) */
weft_tensor* weft_max(const weft_tensor* self);
weft_tensor* weft_min(const weft_tensor* self);
/* argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor (int64; ties: the first index) */
weft_tensor* weft_argmax(const weft_tensor* self, int64_t dim, bool keepdim);
weft_tensor* weft_argmax_out(const weft_tensor* self, int64_t dim, bool keepdim, weft_tensor* out);
weft_tensor* weft_argmin(const weft_tensor* self, int64_t dim, bool keepdim);
weft_tensor* weft_argmin_out(const weft_tensor* self, int64_t dim, bool keepdim, weft_tensor* out);
/* softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor; numerically stable (max shifted) */
weft_tensor* weft_softmax(const weft_tensor* self, int64_t dim, weft_dtype dtype);
weft_tensor* weft_log_softmax(const weft_tensor* self, int64_t dim, weft_dtype dtype);
/* var / std: var(self, unbiased), var.dim(self, dim, unbiased, keepdim), var.correction(self, dim, *,
 * correction (INT64_MIN: None = 1), keepdim); floating inputs only */
weft_tensor* weft_var(const weft_tensor* self, bool unbiased);
weft_tensor* weft_var_dim(const weft_tensor* self, const int64_t* dim, int64_t dim_len, bool unbiased, bool keepdim);
weft_tensor* weft_var_correction(const weft_tensor* self, const int64_t* dim, int64_t dim_len, int64_t correction,
                                 bool keepdim);
weft_tensor* weft_std(const weft_tensor* self, bool unbiased);
weft_tensor* weft_std_dim(const weft_tensor* self, const int64_t* dim, int64_t dim_len, bool unbiased, bool keepdim);
weft_tensor* weft_std_correction(const weft_tensor* self, const int64_t* dim, int64_t dim_len, int64_t correction,
                                 bool keepdim);

/* ---- two results (weft_tensor2: both new references, both NULL on error) ---- */
/* max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices): t[0] the values
 * (self's dtype), t[1] int64 indices; ties: the first index; NaN wins (and its index) */
weft_tensor2 weft_max_dim(const weft_tensor* self, int64_t dim, bool keepdim);
/* max.dim_max(..., *, Tensor(a!) max, Tensor(b!) max_values): into max (values) and max_values (indices) */
weft_tensor2 weft_max_dim_out(const weft_tensor* self, int64_t dim, bool keepdim, weft_tensor* max,
                              weft_tensor* max_values);
weft_tensor2 weft_min_dim(const weft_tensor* self, int64_t dim, bool keepdim);
weft_tensor2 weft_min_dim_out(const weft_tensor* self, int64_t dim, bool keepdim, weft_tensor* min,
                              weft_tensor* min_indices);
/* var_mean / std_mean -> (var or std, mean), overloads as var's; the out forms copy into out0/out1 */
weft_tensor2 weft_var_mean(const weft_tensor* self, bool unbiased);
weft_tensor2 weft_var_mean_dim(const weft_tensor* self, const int64_t* dim, int64_t dim_len, bool unbiased,
                               bool keepdim);
weft_tensor2 weft_var_mean_correction(const weft_tensor* self, const int64_t* dim, int64_t dim_len,
                                      int64_t correction, bool keepdim);
weft_tensor2 weft_var_mean_correction_out(const weft_tensor* self, const int64_t* dim, int64_t dim_len,
                                          int64_t correction, bool keepdim, weft_tensor* out0, weft_tensor* out1);
weft_tensor2 weft_std_mean(const weft_tensor* self, bool unbiased);
weft_tensor2 weft_std_mean_dim(const weft_tensor* self, const int64_t* dim, int64_t dim_len, bool unbiased,
                               bool keepdim);
weft_tensor2 weft_std_mean_correction(const weft_tensor* self, const int64_t* dim, int64_t dim_len,
                                      int64_t correction, bool keepdim);
weft_tensor2 weft_std_mean_correction_out(const weft_tensor* self, const int64_t* dim, int64_t dim_len,
                                          int64_t correction, bool keepdim, weft_tensor* out0, weft_tensor* out1);

/* ---- scans: cumsum / cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor ----
 * integral and bool inputs give int64 (dtype=None); the in-place forms keep self's dtype (dtype= must match) */
weft_tensor* weft_cumsum(const weft_tensor* self, int64_t dim, weft_dtype dtype);
weft_status weft_cumsum_(weft_tensor* self, int64_t dim, weft_dtype dtype);
weft_tensor* weft_cumsum_out(const weft_tensor* self, int64_t dim, weft_dtype dtype, weft_tensor* out);
weft_tensor* weft_cumprod(const weft_tensor* self, int64_t dim, weft_dtype dtype);
weft_status weft_cumprod_(weft_tensor* self, int64_t dim, weft_dtype dtype);
weft_tensor* weft_cumprod_out(const weft_tensor* self, int64_t dim, weft_dtype dtype, weft_tensor* out);

/* norm, all, any, logsumexp (src/ops/norm.c). norm's p: NULL (None) is 2; 0 counts non-zeros, inf / -inf
 * take the max / min of |x|; floating inputs only, an empty input gives zeros. dim lists as above. */
weft_tensor* weft_norm(const weft_tensor* self, weft_scalar p);
weft_tensor* weft_norm_dim(const weft_tensor* self, const weft_scalar* p, const int64_t* dim, int64_t dim_len,
                           bool keepdim);
weft_tensor* weft_norm_dim_dtype(const weft_tensor* self, const weft_scalar* p, const int64_t* dim, int64_t dim_len,
                                 bool keepdim, weft_dtype dtype);
weft_tensor* weft_norm_dtype(const weft_tensor* self, const weft_scalar* p, weft_dtype dtype);
weft_tensor* weft_norm_out(const weft_tensor* self, const weft_scalar* p, const int64_t* dim, int64_t dim_len,
                           bool keepdim, weft_tensor* out);
weft_tensor* weft_norm_dtype_out(const weft_tensor* self, const weft_scalar* p, const int64_t* dim, int64_t dim_len,
                                 bool keepdim, weft_dtype dtype, weft_tensor* out);
/* all / any: bool results (uint8 for uint8 inputs; out= may be bool or uint8); NaN is true */
weft_tensor* weft_all(const weft_tensor* self);
weft_tensor* weft_all_dim(const weft_tensor* self, int64_t dim, bool keepdim);
weft_tensor* weft_all_out(const weft_tensor* self, int64_t dim, bool keepdim, weft_tensor* out);
weft_tensor* weft_all_all_out(const weft_tensor* self, weft_tensor* out);
weft_tensor* weft_any(const weft_tensor* self);
weft_tensor* weft_any_dim(const weft_tensor* self, int64_t dim, bool keepdim);
weft_tensor* weft_any_out(const weft_tensor* self, int64_t dim, bool keepdim, weft_tensor* out);
weft_tensor* weft_any_all_out(const weft_tensor* self, weft_tensor* out);
/* logsumexp: max-shifted; integral inputs give float32 */
weft_tensor* weft_logsumexp(const weft_tensor* self, const int64_t* dim, int64_t dim_len, bool keepdim);
weft_tensor* weft_logsumexp_out(const weft_tensor* self, const int64_t* dim, int64_t dim_len, bool keepdim,
                                weft_tensor* out);

#ifdef __cplusplus
}
#endif
#endif
