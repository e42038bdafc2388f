/* The resizing drivers (src/ops/cpu/resize.c): PyTorch 1.13's index math
 * for interpolate's modes and for reflection / replication padding, the
 * choice of kernel (src/kernels/resize.c) and threading. */
#ifndef WEFT_OPS_CPU_RESIZE_H
#define WEFT_OPS_CPU_RESIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "weft/dtype.h"
#include "weft/error.h"

typedef enum { WEFT_RESIZE_NEAREST, WEFT_RESIZE_NEAREST_EXACT, WEFT_RESIZE_LINEAR, WEFT_RESIZE_CUBIC } weft_resize_mode;

/* One resize: input n x c x h x w, output n x c x oh x ow, both dense in
 * the same format (channels_last: NHWC, else NCHW; never for cubic, whose
 * output PyTorch makes contiguous). A 1-D resize is h =
 * oh = 1 with one_d set (no H axis: its tap is the row itself). scale_h /
 * scale_w are the ops' scales_h / scales_w (NaN: None). */
typedef struct {
  weft_resize_mode mode;
  bool align_corners, one_d, channels_last;
  int64_t n, c, h, w, oh, ow;
  double scale_h, scale_w;
} weft_resize2d;

/* y from x: float32 (kernels of table kt; the others plain C), float64,
 * and for the nearest modes any element type (copies). Parallel over output
 * rows. */
weft_status weft__resize2d_run(const weft_kernels* kt, const weft_resize2d* g, weft_dtype dtype, const void* x,
                               void* y);
/* The plain serial loop the kernels are checked against (float32 / float64). */
weft_status weft__resize2d_reference(const weft_resize2d* g, weft_dtype dtype, const void* x, void* y);
/* gx (zeroed here, g's format) from gy: PyTorch's accumulation order.
 * float32 / float64; parallel over planes. */
weft_status weft__resize2d_backward(const weft_resize2d* g, weft_dtype dtype, const void* gy, void* gx);

/* Reflection / replication padding of `planes` planes of d x h x w (NCDHW
 * contiguous) into od x oh x ow: left pads pl (d, h, w order; negative
 * crops); the output index o of an axis reads input o - pl, reflected or
 * clamped into the input. */
typedef struct {
  bool reflect;
  int64_t planes, d, h, w, od, oh, ow;
  int64_t pl[3];
} weft_pad3d;

/* any element size 1, 2, 4 or 8; parallel over output rows */
weft_status weft__pad3d_run(const weft_pad3d* g, size_t elem, const void* x, void* y);
/* gx (zeroed here) from gy, float32 / float64; parallel over planes */
weft_status weft__pad3d_backward(const weft_pad3d* g, weft_dtype dtype, const void* gy, void* gx);

#endif
