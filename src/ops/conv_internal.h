/* Shared by the convolution ops (src/ops/conv.c: conv1d, conv2d and their
 * backward; src/ops/conv_transpose.c: conv_transpose2d): the checks and
 * helpers whose messages name the op the user called. */
#ifndef WEFT_OPS_CONV_INTERNAL_H
#define WEFT_OPS_CONV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "weft/tensor.h"

/* The op called and its number of spatial dims (1 or 2). A 1-D
 * convolution runs as a 2-D one of height 1: its parameters sit in the
 * second (width) slot of every [2] array, the first holding the identity. */
typedef struct {
  const char* op;
  int dim;
} conv_kind;

/* expand_param_if_needed: one value for every dim, or one per dim; out
 * in the 2-D slots, fill where a 1-D convolution has no dim. */
weft_status weft__conv_expand_param(const char* op, const char* what, const int64_t* v, int64_t n, int dim,
                                    int64_t fill, int64_t out[2]);
/* check_shape_forward's group checks of the weight's first dim */
weft_status weft__conv_check_groups(const char* op, const weft_tensor* w, int64_t groups);
/* The input must have the weight's dims; sep: what 1.13 puts between
 * "weight" and its sizes (" ", or "" from _convolution_same) */
weft_status weft__conv_check_weight_dim(const conv_kind* k, const weft_tensor* x, const weft_tensor* w, const char* sep);
/* Spatial size i (0 height, 1 width) of t, a dim-D input or weight (1 for a 1-D height). */
int64_t weft__conv_spatial(const weft_tensor* t, int dim, int i);
/* The dtype the kernels run in: float32/float64 themselves, bfloat16 in
 * float32, the integer dtypes in float64. */
weft_dtype weft__conv_compute_dtype(weft_dtype t);
/* r in like's dtype and strides (AccumulateGrad's layout); r itself when it already is. */
weft_tensor* weft__conv_in_layout_of(const weft_tensor* like, weft_tensor* r);

typedef weft_tensor* (*weft__conv_body)(const weft_tensor* x, const void* ctx);
/* The batchify of conv<k.dim>d: an input of dim + 1 dims runs as a batch
 * of one; other than dim + 1 or dim + 2 dims is refused. */
weft_tensor* weft__conv_batchify(const conv_kind* k, const weft_tensor* input, weft__conv_body body, const void* ctx);

/* conv_transpose2d (src/ops/conv_transpose.c): its kernels, and its
 * gradient `which` (0 input, 1 weight, 2 bias) for convolution_backward
 * with transposed=true. */
weft_status weft__conv_transpose_register(void);
weft_tensor* weft__conv_transpose2d_backward(const weft_tensor* grad_output, const weft_tensor* input,
                                             const weft_tensor* weight, const int64_t* stride, int64_t ns,
                                             const int64_t* padding, int64_t np, const int64_t* output_padding,
                                             int64_t nop, const int64_t* dilation, int64_t nd, int64_t groups,
                                             int which);

#endif
