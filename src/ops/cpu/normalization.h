/* The normalization driver (src/ops/cpu/normalization.c): the passes of
 * batch_norm, group_norm and layer_norm over a dense input seen as n images
 * of c channels of s elements each, threaded over planes or row chunks,
 * float32 through the kernels of src/kernels/norm.c and float64 in plain C.
 * Every per-(image, channel) quantity is an array of n * c doubles. The
 * split into tasks depends on the shape only, and partial sums are merged
 * in task order, so the results are the same for any thread count. */
#ifndef WEFT_OPS_CPU_NORMALIZATION_H
#define WEFT_OPS_CPU_NORMALIZATION_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "weft/dtype.h"
#include "weft/error.h"

/* nsc: element (i, j, e) of image i, channel j, position e is at
 * (i * s + e) * c + j (channels innermost: channels_last, or a 2-D input);
 * else at (i * c + j) * s + e. */
typedef struct {
  int64_t n, c, s;
  bool nsc;
} weft_norm_geom;

/* Shifted moments per (image, channel): sum[i*c+j] = sum_e (x - k[i*c+j]),
 * sq[i*c+j] = sum_e (x - k)^2. */
weft_status weft__norm_moments(const weft_kernels* kt, const weft_norm_geom* g, weft_dtype dt, const void* x,
                               const double* k, double* sum, double* sq);

/* The backward's sums per (image, channel): sum[.] = sum_e dy, dot[.] =
 * sum_e dy * (x - k[.]); dy and x in the same layout. */
weft_status weft__norm_dots(const weft_kernels* kt, const weft_norm_geom* g, weft_dtype dt, const void* dy,
                            const void* x, const double* k, double* sum, double* dot);

/* y = x * a[.] + b[.] per (image, channel) (y may be x). */
weft_status weft__norm_apply(const weft_kernels* kt, const weft_norm_geom* g, weft_dtype dt, const void* x,
                             const double* a, const double* b, void* y);

/* dx = dy * a[.] + x * b[.] + c[.] per (image, channel). */
weft_status weft__norm_apply_backward(const weft_kernels* kt, const weft_norm_geom* g, weft_dtype dt, const void* dy,
                                      const void* x, const double* a, const double* b, const double* c, void* dx);

/* layer_norm over m contiguous rows of k elements: mean and rstd per row */
weft_status weft__layer_norm_stats(const weft_kernels* kt, int64_t m, int64_t k, weft_dtype dt, const void* x,
                                   double eps, double* mean, double* rstd);
/* y = (x - mean) * rstd * w + b per row; w, b (k elements of dt) may be NULL */
weft_status weft__layer_norm_apply(const weft_kernels* kt, int64_t m, int64_t k, weft_dtype dt, const void* x,
                                   const double* mean, const double* rstd, const void* w, const void* b, void* y);
/* The gradients of layer_norm: dx (may be NULL) and per column gw, gb (each
 * may be NULL; k elements of dt). */
weft_status weft__layer_norm_backward(const weft_kernels* kt, int64_t m, int64_t k, weft_dtype dt, const void* dy,
                                      const void* x, const double* mean, const double* rstd, const void* w, void* dx,
                                      void* gw, void* gb);

/* rms_norm's eps when None: the machine epsilon of the type it computes in
 * (PyTorch 2.4: numeric_limits<opmath_type<scalar_t>>::epsilon()) */
static inline double weft__rms_norm_default_eps(weft_dtype dt) {
  return dt == WEFT_FLOAT64 ? 2.220446049250313e-16 : 1.1920928955078125e-07;
}
/* rms_norm over m contiguous rows rows of k elements, one fused pass per row:
 * rstd = 1 / sqrt(mean(x^2) + eps) (rounded to float32 for float32 rows),
 * y = x * rstd * w (w, k elements of dt, may be NULL). */
weft_status weft__rms_norm_forward(const weft_kernels* kt, int64_t m, int64_t k, weft_dtype dt, const void* x,
                                   double eps, const void* w, void* y, double* rstd);
/* Its gradients: dx = rstd g - x rstd^3 sum(g x) / k with g = dy * w, and
 * gw = sum over rows of dy x rstd (each may be NULL). */
weft_status weft__rms_norm_backward(const weft_kernels* kt, int64_t m, int64_t k, weft_dtype dt, const void* dy,
                                    const void* x, const double* rstd, const void* w, void* dx, void* gw);

#endif
