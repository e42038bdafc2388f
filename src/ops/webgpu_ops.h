/* The WebGPU device's pieces shared by op files (src/ops/webgpu.c,
 * elementwise_webgpu.c; docs/webgpu.md). Not installed. */
#ifndef WEFT_OPS_WEBGPU_OPS_H
#define WEFT_OPS_WEBGPU_OPS_H

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

#endif
