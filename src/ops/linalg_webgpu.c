/* The matmul family's step on the WebGPU device (src/ops/linalg.c runs the
 * checks, output allocation and the decomposition of matmul / linear / dot /
 * mv into 3-D products, as on the cpu; here the product runs as the tiled
 * GEMM of src/webgpu/wgsl_gemm.c, reading every operand through its
 * strides: a transposed or broadcast (expanded) operand costs no copy. */
#include "ops/ops.h"
#include "ops/webgpu_ops.h"

static weft__webgpu_mat mat_of(const weft_tensor* t) {
  return (weft__webgpu_mat){weft__webgpu_buffer_of(t), t->storage_offset, t->strides[0], t->strides[1], t->strides[2]};
}

static bool shares(const weft_tensor* c, const weft_tensor* t) { return t && t->storage == c->storage; }

weft_status weft__webgpu_bmm(const char* op, weft_tensor* c, const weft_tensor* a, const weft_tensor* b,
                             const weft_tensor* d, double alpha, double beta) {
  weft_dtype t = c->dtype;
  if (c->numel == 0) return WEFT_OK;
  if ((t != WEFT_FLOAT32 && t != WEFT_INT32) || a->dtype != t || b->dtype != t || (d && d->dtype != t))
    return weft__error(WEFT_NOT_IMPLEMENTED, "%s: not implemented on the webgpu device for %s yet", op,
                       weft_dtype_name(a->dtype != t ? a->dtype : t));
  if (shares(c, a) || shares(c, b) || shares(c, d)) {
    /* the output cannot be bound beside an input of the same buffer */
    weft_tensor* tmp = weft_empty(c->sizes, 3, t, WEFT_DEVICE_WEBGPU, WEFT_CONTIGUOUS_FORMAT);
    weft_status s = tmp ? weft__webgpu_bmm(op, tmp, a, b, d, alpha, beta) : weft_last_status();
    if (s == WEFT_OK) s = weft_copy_(c, tmp);
    weft_tensor_release(tmp);
    return s;
  }
  weft__webgpu_matmul m = {.dtype = t, .batch = c->sizes[0], .m = c->sizes[1], .n = c->sizes[2], .k = a->sizes[2],
                           .c = mat_of(c), .a = mat_of(a), .b = mat_of(b), .has_d = d != NULL,
                           .alpha = weft__webgpu_bits(alpha, t), .beta = weft__webgpu_bits(beta, t)};
  if (d) m.d = mat_of(d);
  weft__webgpu_program p;
  weft_status s = weft__webgpu_matmul_program(op, &m, &p);
  return s == WEFT_OK ? weft__webgpu_run(op, &p) : s;
}

weft__webgpu_t4 weft__webgpu_t4_of(const weft_tensor* t) {
  weft__webgpu_t4 r = {weft__webgpu_buffer_of(t), t->storage_offset, {0, 0, 0, 0}};
  if (t->ndim == 1) r.strides[0] = t->strides[0];
  for (int i = 0; t->ndim > 1 && i < t->ndim && i < 4; i++) r.strides[4 - t->ndim + i] = t->strides[i];
  return r;
}

weft_status weft__webgpu_same_device(const char* op, const weft_tensor* const* ts, int n) {
  bool gpu = false;
  for (int i = 0; i < n; i++) gpu = gpu || (ts[i] && ts[i]->device == WEFT_DEVICE_WEBGPU);
  const weft_tensor* first = NULL;
  for (int i = 0; gpu && i < n; i++) {
    if (!ts[i]) continue;
    if (!first) first = ts[i];
    else if (ts[i]->device != first->device)
      return weft__error(WEFT_INVALID_ARGUMENT,
                         "%s: Expected all tensors to be on the same device, but found at least two devices, %s and %s!",
                         op, weft_device_name(first->device), weft_device_name(ts[i]->device));
  }
  return WEFT_OK;
}
