/* select_backward, slice_backward, diagonal_backward (PyTorch 1.13's
 * TensorShape.cpp): zeros of the input's shape with grad_output copied into
 * the part the view picked. The copy runs below Autograd (plain); autograd
 * records the op itself, whose derivative is the view of its gradient. The
 * view's own checks (range, dims) give the errors, as in PyTorch. */
#include <stdio.h>
#include <string.h>

#include "ops/ops.h"

typedef weft_tensor* (*pick_fn)(const weft_tensor* z, const int64_t* a);

static weft_tensor* pick_select(const weft_tensor* z, const int64_t* a) { return weft_select(z, a[0], a[1]); }
static weft_tensor* pick_slice(const weft_tensor* z, const int64_t* a) { return weft_slice(z, a[0], a[1], a[2], a[3]); }
static weft_tensor* pick_diagonal(const weft_tensor* z, const int64_t* a) { return weft_diagonal(z, a[0], a[1], a[2]); }

/* copy_'s shape error, named after the op called */
static weft_status renamed_copy_error(const char* op) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s", weft_last_error());
  const char* tail = strncmp(msg, "copy_: ", 7) == 0 ? msg + 7 : msg;
  return weft__error(weft_last_status(), "%s: %s", op, tail);
}

static weft_tensor* write_into_zeros(const char* op, const weft_tensor* gy, const int64_t* sizes, int64_t n,
                                     pick_fn pick, const int64_t* a) {
  weft_tensor* z = weft_full(sizes, n, 0.0, gy->dtype, gy->device);
  weft_tensor* v = z ? pick(z, a) : NULL;
  weft_status s = !v ? weft_last_status() : gy->device == WEFT_DEVICE_META ? WEFT_OK : weft_copy_(v, gy);
  if (v && s) s = renamed_copy_error(op);
  weft_tensor_release(v);
  if (s != WEFT_OK) {
    weft_tensor_release(z);
    return NULL;
  }
  return z;
}

static weft_tensor* select_backward_kernel(const weft_tensor* gy, const int64_t* sizes, int64_t n, int64_t dim,
                                           int64_t index) {
  const int64_t a[] = {dim, index};
  return write_into_zeros("select_backward", gy, sizes, n, pick_select, a);
}

static weft_tensor* slice_backward_kernel(const weft_tensor* gy, const int64_t* sizes, int64_t n, int64_t dim,
                                          int64_t start, int64_t end, int64_t step) {
  const int64_t a[] = {dim, start, end, step};
  return write_into_zeros("slice_backward", gy, sizes, n, pick_slice, a);
}

static weft_tensor* diagonal_backward_kernel(const weft_tensor* gy, const int64_t* sizes, int64_t n, int64_t offset,
                                             int64_t dim1, int64_t dim2) {
  const int64_t a[] = {offset, dim1, dim2};
  return write_into_zeros("diagonal_backward", gy, sizes, n, pick_diagonal, a);
}

weft_status weft__view_backward_register(void) {
  WEFT_KERNEL(select_backward, CPU, select_backward_kernel);
  WEFT_KERNEL(select_backward, META, select_backward_kernel);
  WEFT_KERNEL(slice_backward, CPU, slice_backward_kernel);
  WEFT_KERNEL(slice_backward, META, slice_backward_kernel);
  WEFT_KERNEL(diagonal_backward, CPU, diagonal_backward_kernel);
  WEFT_KERNEL(diagonal_backward, META, diagonal_backward_kernel);
  return WEFT_OK;
}
