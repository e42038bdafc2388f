/* Joining and splitting (PyTorch 1.13's cat, stack, hstack, vstack, dstack,
 * split, split_with_sizes, chunk, unbind, tensor_split). A list of tensors
 * is a pointer and a count; list results are a weft_tensor_list (views of
 * self for the split family) to give back with weft_tensor_list_release.
 * Errors follow PyTorch's wording. */
#ifndef WEFT_JOIN_H
#define WEFT_JOIN_H

#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* New tensors (NULL on error); _out forms write out (resized as PyTorch
 * does) and return a new reference to it. */
weft_tensor* weft_cat(const weft_tensor* const* tensors, int64_t tensors_len, int64_t dim);
weft_tensor* weft_cat_out(const weft_tensor* const* tensors, int64_t tensors_len, int64_t dim, weft_tensor* out);
weft_tensor* weft_op_stack(const weft_tensor* const* tensors, int64_t tensors_len, int64_t dim);
weft_tensor* weft_op_stack_out(const weft_tensor* const* tensors, int64_t tensors_len, int64_t dim,
                               weft_tensor* out);
weft_tensor* weft_hstack(const weft_tensor* const* tensors, int64_t tensors_len);
weft_tensor* weft_hstack_out(const weft_tensor* const* tensors, int64_t tensors_len, weft_tensor* out);
weft_tensor* weft_vstack(const weft_tensor* const* tensors, int64_t tensors_len);
weft_tensor* weft_vstack_out(const weft_tensor* const* tensors, int64_t tensors_len, weft_tensor* out);
weft_tensor* weft_dstack(const weft_tensor* const* tensors, int64_t tensors_len);
weft_tensor* weft_dstack_out(const weft_tensor* const* tensors, int64_t tensors_len, weft_tensor* out);

/* Views of self (t NULL on error). */
weft_tensor_list weft_split(const weft_tensor* self, int64_t split_size, int64_t dim);
weft_tensor_list weft_split_sizes(const weft_tensor* self, const int64_t* split_size, int64_t split_size_len,
                                  int64_t dim);
weft_tensor_list weft_split_with_sizes(const weft_tensor* self, const int64_t* split_sizes, int64_t split_sizes_len,
                                       int64_t dim);
weft_tensor_list weft_chunk(const weft_tensor* self, int64_t chunks, int64_t dim);
weft_tensor_list weft_unbind(const weft_tensor* self, int64_t dim);
weft_tensor_list weft_tensor_split(const weft_tensor* self, int64_t sections, int64_t dim);
weft_tensor_list weft_tensor_split_indices(const weft_tensor* self, const int64_t* indices, int64_t indices_len,
                                           int64_t dim);

#ifdef __cplusplus
}
#endif

#endif
