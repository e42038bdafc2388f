/* The reductions', softmax's and the norms' kernels on the WebGPU device
 * (src/ops/reduce_webgpu.c), called by their CPU op files once the meta step
 * (checks, results, the iterator's plan) is done and the tensors are on
 * webgpu. */
#ifndef WEFT_OPS_REDUCE_WEBGPU_H
#define WEFT_OPS_REDUCE_WEBGPU_H

#include "weft/iter.h"
#include "webgpu/webgpu.h"

typedef enum {
  WEFT__RED_SUM, WEFT__RED_MEAN, WEFT__RED_PROD, WEFT__RED_AMAX, WEFT__RED_AMIN,
  WEFT__RED_ALL, WEFT__RED_ANY, WEFT__RED_VAR, WEFT__RED_STD, WEFT__RED_LSE,
  WEFT__RED_NORM0, WEFT__RED_NORM1, WEFT__RED_NORM2, WEFT__RED_NORMINF, WEFT__RED_NORMNINF, WEFT__RED_NORMP
} weft__red_kind;

/* Fills output 0 of a reduction iterator (its input operand 1, reduced where
 * the output's stride is 0). param: var/std's correction, norm's p. */
weft_status weft__reduce_webgpu(const char* op, weft__red_kind kind, const weft_iter* it, double param);
/* out = softmax (log_softmax) of in along dim (wrapped), float32 */
weft_status weft__softmax_webgpu(bool log, const weft_tensor* in, weft_tensor* out, int64_t dim);
/* native_layer_norm's (y, mean, rstd) over the last nn dims of x */
weft_status weft__layer_norm_webgpu(const weft_tensor* x, const weft_tensor* w, const weft_tensor* b, int64_t nn,
                                    double eps, weft_tensor* const* out);
/* native_layer_norm_backward's (dx, dw, db), NULL where the mask says no */
weft_status weft__layer_norm_backward_webgpu(const weft_tensor* gy, const weft_tensor* x, int64_t nn,
                                             const weft_tensor* mean, const weft_tensor* rstd, const weft_tensor* w,
                                             weft_tensor* const* out);
/* _fused_rms_norm's (y, rstd), and _rms_norm_backward's (dx, dw) (NULL where not asked) */
weft_status weft__rms_norm_webgpu(const weft_tensor* x, const weft_tensor* w, int64_t nn, double eps,
                                  weft_tensor* const* out);
weft_status weft__rms_norm_backward_webgpu(const weft_tensor* gy, const weft_tensor* x, int64_t nn,
                                           const weft_tensor* rstd, const weft_tensor* w, weft_tensor* const* out);
/* native_batch_norm's (y, save_mean, save_invstd) with the running statistics updated in training */
weft_status weft__batch_norm_webgpu(const weft_tensor* x, const weft_tensor* w, const weft_tensor* b,
                                    weft_tensor* rm, weft_tensor* rv, bool training, double momentum, double eps,
                                    weft_tensor* const* out);
/* native_batch_norm_backward's (dx, dw, db); mean / s: saved mean and invstd (train) or running mean and var */
weft_status weft__batch_norm_backward_webgpu(const weft_tensor* gy, const weft_tensor* x, const weft_tensor* w,
                                             const weft_tensor* mean, const weft_tensor* s, bool train, double eps,
                                             weft_tensor* const* out);
/* native_group_norm's (y, mean, rstd) and its backward's (dx, dw, db) */
weft_status weft__group_norm_webgpu(const weft_tensor* x, const weft_tensor* w, const weft_tensor* b, int64_t group,
                                    double eps, weft_tensor* const* out);
weft_status weft__group_norm_backward_webgpu(const weft_tensor* gy, const weft_tensor* x, const weft_tensor* mean,
                                             const weft_tensor* rstd, const weft_tensor* w, int64_t group,
                                             weft_tensor* const* out);
/* A description's dispatch: one pass, or a two-pass split of long rows. */
weft_status weft__webgpu_reduce_run(const char* op, weft__webgpu_reduce* r);

#endif
