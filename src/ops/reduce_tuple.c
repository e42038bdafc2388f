/* max.dim and min.dim (PyTorch 1.13's max.dim / max.dim_max, min.dim /
 * min.dim_min): {values, indices} along one dim, from the argmax/argmin
 * reduction of src/ops/reduce.c, which keeps its values here. Bool inputs
 * work (argmax refuses them); an empty reduced dim is an error naming it. */
#include "ops/reduce_internal.h"

static weft_tensor2 k_max_dim(const weft_tensor* self, int64_t dim, bool keepdim) {
  return weft__reduce_minmax_dim(true, self, dim, keepdim, NULL, NULL);
}
static weft_tensor2 k_max_dim_out(const weft_tensor* self, int64_t dim, bool keepdim, weft_tensor* max,
                                  weft_tensor* max_values) {
  return weft__reduce_minmax_dim(true, self, dim, keepdim, max, max_values);
}
static weft_tensor2 k_min_dim(const weft_tensor* self, int64_t dim, bool keepdim) {
  return weft__reduce_minmax_dim(false, self, dim, keepdim, NULL, NULL);
}
static weft_tensor2 k_min_dim_out(const weft_tensor* self, int64_t dim, bool keepdim, weft_tensor* min,
                                  weft_tensor* min_indices) {
  return weft__reduce_minmax_dim(false, self, dim, keepdim, min, min_indices);
}

/* WebGPU too: its meta step refuses the int64 indices with a message */
#define BOTH(op, fn)          \
  WEFT_KERNEL(op, CPU, fn);   \
  WEFT_KERNEL(op, META, fn);  \
  WEFT_KERNEL(op, WEBGPU, fn)

weft_status weft__reduce_tuple_register(void) {
  BOTH(max_dim, k_max_dim);
  BOTH(max_dim_out, k_max_dim_out);
  BOTH(min_dim, k_min_dim);
  BOTH(min_dim_out, k_min_dim_out);
  return WEFT_OK;
}
