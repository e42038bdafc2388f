/* The 2-D pooling driver (src/ops/cpu/pool.c): window clipping, the choice
 * of kernel (src/kernels/pool.c) and threading over output rows. */
#ifndef WEFT_OPS_CPU_POOL_H
#define WEFT_OPS_CPU_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "weft/dtype.h"
#include "weft/error.h"

typedef enum { WEFT_POOL_MAX, WEFT_POOL_AVG, WEFT_POOL_ADAPTIVE_AVG } weft_pool_kind;

/* One pooling: input n x c x h x w (n = 1 for an unbatched input), output
 * n x c x oh x ow, both dense in the same memory format (channels_last:
 * NHWC order, else NCHW). max: kernel, stride, padding, dilation; avg: the
 * same with dilation 1, count_include_pad, divisor_override (0: none);
 * adaptive: only the output size. */
typedef struct {
  weft_pool_kind kind;
  int64_t n, c, h, w, oh, ow;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool count_include_pad;
  int64_t divisor_override;
  bool channels_last;
} weft_pool2d;

/* y (and idx, int64, for max when not NULL) from x, for dtype float32
 * (kernels of table kt), float64, or int64 (avg only). Parallel over output
 * rows. *path names the code that ran (explain). */
weft_status weft__pool2d_run(const weft_kernels* kt, const weft_pool2d* g, weft_dtype dtype, const void* x, void* y,
                             int64_t* idx, const char** path);

/* The path weft__pool2d_run would take, without running it. */
const char* weft__pool2d_path(const weft_pool2d* g, weft_dtype dtype, bool indices);

/* The plain loop every path is checked against: any dtype above, both
 * formats, serial. */
void weft__pool2d_reference(const weft_pool2d* g, weft_dtype dtype, const void* x, void* y, int64_t* idx);

/* The gradient of x (gx, dense in g's format) from the output's gradient gy
 * (and max's indices idx, a flat h * w offset per output; NULL for avg),
 * float32 or float64. Parallel over planes (NCHW) or over an image's
 * channel blocks (NHWC); identical for any thread count. */
weft_status weft__pool2d_backward(const weft_pool2d* g, weft_dtype dtype, const void* gy, const int64_t* idx,
                                  void* gx);

#endif
