/* Kernel registrations for the op table (TORCH_LIBRARY_IMPL blocks), the
 * None defaults of boxed calls, and the public functions whose C signature
 * differs from their op's (one length for two lists). */
#include "dispatch/opgen.h"
#include "ops/impls.h"
#include "ops/ops.h"

/* ---- None -> the kernel's default (boxed calls pass -1 / INT64_MIN) ---- */
static weft_dtype dtype_or(weft_dtype d, weft_dtype dflt) { return (int)d < 0 ? dflt : d; }
static weft_memory_format format_or(weft_memory_format f, weft_memory_format dflt) {
  return (int)f < 0 ? dflt : f;
}

static weft_tensor* empty_kernel(const int64_t* size, int64_t n, weft_dtype dtype, weft_device device,
                                 weft_memory_format f) {
  return weft__empty(size, n, dtype_or(dtype, WEFT_FLOAT32), device, format_or(f, WEFT_CONTIGUOUS_FORMAT));
}

static weft_tensor* empty_strided_kernel(const int64_t* size, int64_t n, const int64_t* stride, int64_t nstride,
                                         weft_dtype dtype, weft_device device) {
  if (n != nstride)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "empty_strided: mismatch in length of strides and shape (%lld vs %lld)",
                            (long long)nstride, (long long)n);
  return weft__empty_strided(size, stride, n, dtype_or(dtype, WEFT_FLOAT32), device);
}

static weft_tensor* full_kernel(const int64_t* size, int64_t n, double v, weft_dtype dtype, weft_device device) {
  return weft__full(size, n, v, dtype_or(dtype, WEFT_FLOAT32), device);
}

static weft_tensor* arange_kernel(double start, double end, double step, weft_dtype dtype, weft_device device) {
  return weft__arange(start, end, step, dtype_or(dtype, WEFT_FLOAT32), device);
}

static weft_tensor* rand_kernel(const int64_t* size, int64_t n, weft_dtype dtype, weft_device device) {
  return weft__rand(size, n, dtype_or(dtype, WEFT_FLOAT32), device);
}

static weft_tensor* randn_kernel(const int64_t* size, int64_t n, weft_dtype dtype, weft_device device) {
  return weft__randn(size, n, dtype_or(dtype, WEFT_FLOAT32), device);
}

static weft_tensor* empty_like_kernel(const weft_tensor* self, weft_dtype dtype, weft_memory_format f) {
  return weft__empty_like(self, dtype_or(dtype, weft_tensor_dtype(self)), format_or(f, WEFT_PRESERVE_FORMAT));
}

static weft_tensor* clone_kernel(const weft_tensor* self, weft_memory_format f) {
  return weft__clone(self, format_or(f, WEFT_PRESERVE_FORMAT));
}

static weft_tensor* contiguous_kernel(const weft_tensor* self, weft_memory_format f) {
  return weft__contiguous(self, format_or(f, WEFT_CONTIGUOUS_FORMAT));
}

static weft_tensor* as_strided_kernel(const weft_tensor* self, const int64_t* size, int64_t n,
                                      const int64_t* stride, int64_t nstride, int64_t offset) {
  if (n != nstride)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "as_strided: mismatch in length of strides and shape (%lld vs %lld)",
                            (long long)nstride, (long long)n);
  return weft__as_strided(self, size, stride, n, offset == INT64_MIN ? weft_tensor_storage_offset(self) : offset);
}

static weft_tensor* slice_kernel(const weft_tensor* self, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return weft__slice(self, dim, start == INT64_MIN ? 0 : start, end == INT64_MIN ? INT64_MAX : end, step);
}

static weft_tensor* movedim_kernel(const weft_tensor* self, const int64_t* src, int64_t nsrc, const int64_t* dst,
                                   int64_t ndst) {
  if (nsrc != ndst)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "movedim: Invalid source or destination dims: source (%s dims) should contain the "
                            "same number of dims as destination (%s dims)",
                            WEFT__LIST(src, nsrc), WEFT__LIST(dst, ndst));
  return weft__movedim(self, src, dst, nsrc);
}

/* ---- public functions over ops with another C signature ---- */
weft_tensor* weft_empty_strided(const int64_t* sizes, const int64_t* strides, int64_t ndim, weft_dtype dtype,
                                weft_device device) {
  return weft_op_empty_strided(sizes, ndim, strides, ndim, dtype, device);
}

weft_tensor* weft_as_strided(const weft_tensor* self, const int64_t* sizes, const int64_t* strides, int64_t ndim,
                             int64_t storage_offset) {
  if (storage_offset == INT64_MIN) /* not None: an invalid offset, which the kernel reports */
    storage_offset = -1;
  return weft_op_as_strided(self, sizes, ndim, strides, ndim, storage_offset);
}

weft_tensor* weft_movedim(const weft_tensor* self, const int64_t* src, const int64_t* dst, int64_t n) {
  return weft_op_movedim(self, src, n, dst, n);
}

/* ---- registrations ---- */
#define REG(op, key, fn)                                   \
  do {                                                     \
    if (!weft_impl_##op(WEFT_KEY_##key, fn, #fn)) return weft_last_status(); \
  } while (0)
#define REG_BACKENDS(op, fn) \
  REG(op, CPU, fn);          \
  REG(op, META, fn)

weft_status weft__ops_register_kernels(void) {
  /* factories: BackendSelect (generated) redispatches to CPU or Meta */
  REG_BACKENDS(empty, empty_kernel);
  REG_BACKENDS(op_empty_strided, empty_strided_kernel);
  REG_BACKENDS(full, full_kernel);
  REG_BACKENDS(arange, arange_kernel);
  REG_BACKENDS(rand, rand_kernel);
  REG_BACKENDS(randn, randn_kernel);
  REG(empty_like, COMPOSITE_EXPLICIT_AUTOGRAD, empty_like_kernel);

  /* copies: copy_ and fill_ touch data, so they are per backend (Meta only checks) */
  REG_BACKENDS(copy_, weft__copy_);
  REG_BACKENDS(fill_, weft__fill_);
  REG(clone, COMPOSITE_EXPLICIT_AUTOGRAD, clone_kernel);
  REG(contiguous, COMPOSITE_IMPLICIT_AUTOGRAD, contiguous_kernel);
  REG(to_dtype, COMPOSITE_IMPLICIT_AUTOGRAD, weft__to_dtype);

  /* views: metadata only, the same kernel for every backend */
  REG(op_as_strided, COMPOSITE_EXPLICIT_AUTOGRAD, as_strided_kernel);
  REG(view, COMPOSITE_EXPLICIT_AUTOGRAD, weft__view);
  REG(reshape, COMPOSITE_IMPLICIT_AUTOGRAD, weft__reshape);
  REG(permute, COMPOSITE_EXPLICIT_AUTOGRAD, weft__permute);
  REG(transpose, COMPOSITE_EXPLICIT_AUTOGRAD, weft__transpose);
  REG(t, COMPOSITE_EXPLICIT_AUTOGRAD, weft__t);
  REG(expand, COMPOSITE_EXPLICIT_AUTOGRAD, weft__expand);
  REG(squeeze, COMPOSITE_EXPLICIT_AUTOGRAD, weft__squeeze);
  REG(squeeze_dim, COMPOSITE_EXPLICIT_AUTOGRAD, weft__squeeze_dim);
  REG(unsqueeze, COMPOSITE_EXPLICIT_AUTOGRAD, weft__unsqueeze);
  REG(narrow, COMPOSITE_IMPLICIT_AUTOGRAD, weft__narrow);
  REG(slice, COMPOSITE_EXPLICIT_AUTOGRAD, slice_kernel);
  REG(select, COMPOSITE_EXPLICIT_AUTOGRAD, weft__select);
  REG(flatten, COMPOSITE_IMPLICIT_AUTOGRAD, weft__flatten);
  REG(unflatten, COMPOSITE_IMPLICIT_AUTOGRAD, weft__unflatten);
  REG(op_movedim, COMPOSITE_IMPLICIT_AUTOGRAD, movedim_kernel);
  return WEFT_OK;
}
