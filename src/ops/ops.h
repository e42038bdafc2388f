/* The operator layer's internal header: the entry points generated from the
 * op table (weft_<cname>, weft_redispatch_<cname>, kernel types, typed
 * registration; src/dispatch/opgen.h) and the list of op files. Each op file
 * defines its kernels static and registers them itself, next to their
 * definitions, with WEFT_KERNEL (PyTorch's TORCH_LIBRARY_IMPL blocks). */
#ifndef WEFT_OPS_OPS_H
#define WEFT_OPS_OPS_H

#include "core/internal.h"
#include "dispatch/opgen.h"
#include "weft/copy.h"
#include "weft/elementwise.h"
#include "weft/factory.h"
#include "weft/join.h"
#include "weft/reduce.h"
#include "weft/view.h"

void weft_init(void); /* src/ops/ops.c; also declared in weft/weft.h */

#define WEFT_OP WEFT_OP_DECLARE
#include "ops/ops.def"
#undef WEFT_OP

/* X(file): src/ops/<file>.c defines weft_status weft__<file>_register(void),
 * called once by weft_init after every schema is defined. */
#define WEFT_OP_FILES(X) \
  X(factory) X(copy) X(view) X(view_dims) X(elementwise) X(reduce) X(softmax) X(var) X(linalg) \
  X(reduce_tuple) X(scan) X(pool) X(conv) X(conv_fused) X(norm) X(loss) X(shape) X(join) X(sort) X(index) X(index_advanced) \
  X(view_backward) X(pad) X(upsample) X(normalization) X(dropout) \
  X(embedding) X(index_copy) X(attention) X(einsum) X(linalg_decomp) X(linalg_norm) X(dataops) X(pointwise) X(cdist) X(linalg_qr) X(linalg_eigh) X(linalg_svd) \
  X(webgpu) X(inverted_residual) X(index_webgpu)
#define WEFT__OP_FILE_DECL(f) weft_status weft__##f##_register(void);
WEFT_OP_FILES(WEFT__OP_FILE_DECL)
#undef WEFT__OP_FILE_DECL

/* One gradient of conv2d(input, weight, bias, stride, padding, dilation,
 * groups) (src/ops/conv.c; convolution_backward's kernel): which 0 the
 * input's, 1 the weight's (each with that tensor's strides when it is
 * dense, as PyTorch's AccumulateGrad keeps a .grad), 2 the bias's. A new
 * reference, or NULL with the error set. */
weft_tensor* weft__conv2d_backward(const weft_tensor* grad_output, const weft_tensor* input, const weft_tensor* weight,
                                   const int64_t* stride, int64_t ns, const int64_t* padding, int64_t np,
                                   const int64_t* dilation, int64_t nd, int64_t groups, int which);

/* Dense strides in t's dim order (PyTorch's infer_dense_strides; src/ops/factory.c). */
void weft__infer_dense_strides(const weft_tensor* t, int64_t* out);

/* None -> the kernel's default (boxed calls pass -1 for ScalarType? and
 * MemoryFormat?). */
/* channels_last needs 4 dims, channels_last_3d 5: the error names op (the
 * call the user made, not the empty_like it reaches). */
weft_status weft__check_format_rank(const char* op, weft_memory_format f, int64_t ndim);
/* out= takes r's values, resized to r's shape and strides when its shape
 * differs (src/ops/shape.c). */
weft_status weft__into_out(const char* op, const weft_tensor* r, weft_tensor* out);
static inline weft_dtype weft__dtype_or(weft_dtype d, weft_dtype dflt) { return (int)d < 0 ? dflt : d; }
static inline weft_memory_format weft__format_or(weft_memory_format f, weft_memory_format dflt) {
  return (int)f < 0 ? dflt : f;
}

#endif
