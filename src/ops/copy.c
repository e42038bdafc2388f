/* copy_, clone, contiguous, to: the copies a user calls, over the iterator
 * copy driver (src/ops/cpu/copy_iter.c). copy_ touches data, so it has a
 * kernel per backend (Meta only checks); the rest are composites that reach
 * data through copy_ and empty_like. */
#include "ops/cpu/copy_iter.h"
#include "ops/ops.h"

/* The fast path: TensorIterator + SIMD kernels (src/ops/cpu/copy_iter.c). */
static weft_status copy_impl(weft_tensor* self, const weft_tensor* src) {
  if (self->device != src->device && self->device != WEFT_DEVICE_META && src->device != WEFT_DEVICE_META)
    return weft__error(WEFT_INVALID_ARGUMENT, "copy_: cannot copy from a %s tensor into a %s tensor",
                       weft_device_name(src->device), weft_device_name(self->device));
  return weft__copy_iter(self, src);
}

/* A new tensor like self (empty_like's layout rule for f) holding self's values. */
static weft_tensor* copy_like(const weft_tensor* self, weft_dtype dtype, weft_memory_format f) {
  weft_tensor* out = weft_empty_like(self, dtype, f);
  if (!out) return NULL;
  if (weft_copy_(out, self) != WEFT_OK) {
    weft_tensor_release(out);
    return NULL;
  }
  return out;
}

static weft_tensor* clone_impl(const weft_tensor* self, weft_memory_format f) {
  if (weft__check_format_rank("clone", f, self->ndim) != WEFT_OK) return NULL;
  return copy_like(self, self->dtype, f);
}

static weft_tensor* contiguous_impl(const weft_tensor* self, weft_memory_format f) {
  if (weft__check_format_rank("contiguous", f, self->ndim) != WEFT_OK) return NULL;
  /* PRESERVE asks the default flag, so an already contiguous tensor passes */
  if (weft_tensor_is_contiguous(self, f)) return weft_tensor_retain((weft_tensor*)self);
  if (f == WEFT_PRESERVE_FORMAT)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "contiguous: preserve memory format is unsupported by the contiguous operator");
  return weft_clone(self, f);
}

/* PyTorch's to_will_alias: self itself when nothing would change and no copy
 * is asked for; otherwise a copy in the asked memory format (preserve: the
 * input's, as empty_like keeps it). */
static weft_tensor* to_impl(const weft_tensor* self, weft_dtype dtype, bool copy, weft_memory_format f) {
  if (!weft_dtype_is_valid((int)dtype))
    return weft__error_null(WEFT_TYPE_ERROR, "to: invalid dtype %d", (int)dtype);
  if (weft__check_format_rank("to", f, self->ndim) != WEFT_OK) return NULL;
  bool same_format = f == WEFT_PRESERVE_FORMAT || weft_tensor_is_contiguous(self, f);
  if (dtype == self->dtype && same_format && !copy) return weft_tensor_retain((weft_tensor*)self);
  return copy_like(self, dtype, f);
}

static weft_tensor* to_dtype_kernel(const weft_tensor* self, weft_dtype dtype, bool copy) {
  return to_impl(self, dtype, copy, WEFT_PRESERVE_FORMAT);
}

static weft_tensor* to_dtype_layout_kernel(const weft_tensor* self, weft_dtype dtype, bool copy,
                                           weft_memory_format f) {
  return to_impl(self, weft__dtype_or(dtype, self->dtype), copy, weft__format_or(f, WEFT_PRESERVE_FORMAT));
}

/* ---- kernels ---- */

static weft_tensor* clone_kernel(const weft_tensor* self, weft_memory_format f) {
  return clone_impl(self, weft__format_or(f, WEFT_PRESERVE_FORMAT));
}

static weft_tensor* contiguous_kernel(const weft_tensor* self, weft_memory_format f) {
  return contiguous_impl(self, weft__format_or(f, WEFT_CONTIGUOUS_FORMAT));
}

weft_status weft__copy_register(void) {
  WEFT_KERNEL(copy_, CPU, copy_impl);
  WEFT_KERNEL(copy_, META, copy_impl);
  WEFT_KERNEL(clone, COMPOSITE_EXPLICIT_AUTOGRAD, clone_kernel);
  WEFT_KERNEL(contiguous, COMPOSITE_IMPLICIT_AUTOGRAD, contiguous_kernel);
  WEFT_KERNEL(to_dtype, COMPOSITE_IMPLICIT_AUTOGRAD, to_dtype_kernel);
  WEFT_KERNEL(to_dtype_layout, COMPOSITE_IMPLICIT_AUTOGRAD, to_dtype_layout_kernel);
  return WEFT_OK;
}
