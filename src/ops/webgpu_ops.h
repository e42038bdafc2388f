/* The WebGPU device's pieces shared by op files (src/ops/webgpu.c,
 * elementwise_webgpu.c; docs/webgpu.md). Not installed. */
#ifndef WEFT_OPS_WEBGPU_OPS_H
#define WEFT_OPS_WEBGPU_OPS_H

#include "ops/cpu/conv.h"
#include "ops/cpu/pool.h"
#include "ops/elementwise.h"
#include "weft/iter.h"
#include "webgpu/webgpu.h"

/* Dispatches p, or records its plan while explaining; frees its WGSL. */
weft_status weft__webgpu_run(const char* op, weft__webgpu_program* p);

/* The map description of an iterator's plan: element strides from its byte
 * strides, element offsets from each tensor's storage offset; a 0-dim cpu
 * input becomes a scalar parameter in `compute`. */
void weft__webgpu_describe(const weft_iter* it, weft__webgpu_map* m, weft_dtype compute);
/* A number's 32 bits in dtype t. */
uint32_t weft__webgpu_bits(double v, weft_dtype t);

/* An elementwise op's loop on the device over the iterator meta built:
 * inputs in `compute`, the expression's value in `result` (bool for
 * comparisons), `number` is alpha (add/sub) or the fill value. */
weft_status weft__ew_webgpu(ew_op op, const char* name, const weft_iter* it, weft_dtype compute, weft_dtype result,
                            double number);

/* A webgpu int32 tensor holding a copy of t's whole storage (its words). */
weft_tensor* weft__webgpu_storage_copy(const char* op, const weft_tensor* t);
/* In place (out op= ...): an input that is the output's own elements is
 * marked alias (read through the output's binding); another view of the
 * output's storage reads a storage copy, returned in *snapshot for the
 * caller to release once the dispatch is recorded. */
weft_status weft__webgpu_resolve_aliases(const char* op, weft__webgpu_map* m, const weft_tensor* out,
                                         weft_tensor** snapshot);

/* The audit's guard (docs/webgpu.md): a kernel that reads t's values on the
 * host (a composite's loop over a target, a mask it writes) refuses a webgpu
 * t, naming op, instead of reading through its NULL host pointer. NULL and
 * host tensors pass. */
weft_status weft__host_readable(const char* op, const weft_tensor* t);
/* ---- matmul, conv and pooling (src/ops/linalg_webgpu.c, conv_webgpu.c,
 * pool_webgpu.c): the device's step after the CPU's meta step ---- */

/* c = alpha * a @ b (+ beta * d when d), all 3-D (batch, rows, columns) of
 * c's dtype (float32 or int32), any strides; d may share c's storage (a
 * temporary then takes the result). */
weft_status weft__webgpu_bmm(const char* op, weft_tensor* c, const weft_tensor* a, const weft_tensor* b,
                             const weft_tensor* d, double alpha, double beta);

/* PyTorch's device check of an op whose tensors (NULLs skipped) include a
 * webgpu one: all on one device (the kernels read webgpu buffers, the cpu
 * paths data pointers). The elementwise family has the iterator's. */
weft_status weft__webgpu_same_device(const char* op, const weft_tensor* const* ts, int n);

/* A webgpu tensor's buffer, offset and 4 strides: a 3-D one with a 0 stride in
 * front, a 1-D one its stride first. */
weft__webgpu_t4 weft__webgpu_t4_of(const weft_tensor* t);

/* conv2d's output (new, in format f) from its checked geometry, float32;
 * and gradient `which` (0 input, 1 weight: new, in the layout of x or w;
 * 2 bias: new [cout]) from grad_output gy. */
weft_tensor* weft__webgpu_conv2d(const char* op, const weft_conv2d_geom* g, weft_memory_format f, const weft_tensor* x,
                                 const weft_tensor* w, const weft_tensor* b);
weft_tensor* weft__webgpu_conv2d_grad(const char* op, int which, const weft_conv2d_geom* g, const weft_tensor* gy,
                                      const weft_tensor* x, const weft_tensor* w);

/* Pooling g of x into y (and int32 indices idx, or NULL); its backward from
 * gy (and idx for max) into gx. float32. */
weft_status weft__webgpu_pool2d(const char* op, const weft_pool2d* g, const weft_tensor* x, weft_tensor* y,
                                weft_tensor* idx);
weft_status weft__webgpu_pool2d_backward(const char* op, const weft_pool2d* g, const weft_tensor* gy,
                                         const weft_tensor* idx, weft_tensor* gx);

#endif
