/* Tensor metadata: sizes, strides, storage offset, dtype, device, and the
 * cached layout flags PyTorch keeps in TensorImpl.
 *
 * A weft_tensor* is a refcounted handle. Every function returning a new
 * weft_tensor* returns a reference the caller owns (release it), or NULL
 * with the error in weft_last_error(). Arguments are borrowed. */
#ifndef WEFT_TENSOR_H
#define WEFT_TENSOR_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/device.h"
#include "weft/dtype.h"
#include "weft/error.h"
#include "weft/storage.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_MAX_DIMS 16

typedef struct weft_tensor weft_tensor;

/* Two tensors from one call (an op returning `(Tensor, Tensor)`, PyTorch's
 * std::tuple): t[0] the first return (max.dim: values), t[1] the second
 * (indices). Both are new references, or both NULL on error. */
typedef struct weft_tensor2 {
  weft_tensor* t[2];
} weft_tensor2;

/* Three tensors from one call (an op returning `(Tensor, Tensor, Tensor)`,
 * such as convolution_backward): each a new reference, or NULL where the op
 * left that output undefined (PyTorch's undefined Tensor: an output_mask
 * entry false). status tells an error (all three NULL then) from a call
 * that asked for none. */
typedef struct weft_tensor3 {
  weft_tensor* t[3];
  int status; /* weft_status */
} weft_tensor3;

/* Four tensors from one call (an op returning four Tensors: linalg_lstsq's
 * solution, residuals, rank, singular_values): each a new reference; all
 * NULL on error. */
typedef struct weft_tensor4 {
  weft_tensor* t[4];
} weft_tensor4;

/* A list of tensors from one call (an op returning `Tensor[]`: split,
 * unbind): t is a malloc'd array of n new references. t is NULL on error
 * only; an empty result has a non-NULL t and n 0. Give it back with
 * weft_tensor_list_release (every reference and the array). */
typedef struct weft_tensor_list {
  weft_tensor** t;
  int64_t n;
} weft_tensor_list;

typedef enum {
  WEFT_CONTIGUOUS_FORMAT = 0,
  WEFT_CHANNELS_LAST = 1,    /* 4-D, NHWC order in memory */
  WEFT_CHANNELS_LAST_3D = 2, /* 5-D, NDHWC order in memory */
  WEFT_PRESERVE_FORMAT = 3,
  WEFT_MEMORY_FORMAT_COUNT
} weft_memory_format;

const char* weft_memory_format_name(weft_memory_format f); /* "contiguous_format", "channels_last", ... */
int weft_memory_format_from_name(const char* name, weft_memory_format* out); /* weft_status */

/* ---- lifetime ---- */
weft_tensor* weft_tensor_retain(weft_tensor* t);
void weft_tensor_release(weft_tensor* t); /* NULL is a no-op */
void weft_tensor2_release(weft_tensor2 r); /* both; NULLs are no-ops */
void weft_tensor3_release(weft_tensor3 r); /* all three; NULLs are no-ops */
void weft_tensor4_release(weft_tensor4 r); /* all four; NULLs are no-ops */
void weft_tensor_list_release(weft_tensor_list r); /* every reference, then the array; t NULL is a no-op */
/* n NULL entries (to fill with new references); t NULL + error when out of memory. */
weft_tensor_list weft_tensor_list_new(int64_t n);
int32_t weft_tensor_refcount(const weft_tensor* t);
/* Autograd's version counter (shared by every view of one storage): in-place
 * ops bump it, saved tensors compare it (PyTorch's tensor._version). */
uint32_t weft_tensor_version(const weft_tensor* t);
void weft_tensor_bump_version(weft_tensor* t);

/* ---- metadata (never fail on a valid handle) ---- */
int64_t weft_tensor_dim(const weft_tensor* t);
const int64_t* weft_tensor_sizes(const weft_tensor* t);
const int64_t* weft_tensor_strides(const weft_tensor* t);
int64_t weft_tensor_storage_offset(const weft_tensor* t);
int64_t weft_tensor_numel(const weft_tensor* t);
weft_dtype weft_tensor_dtype(const weft_tensor* t);
weft_device weft_tensor_device(const weft_tensor* t);
size_t weft_tensor_element_size(const weft_tensor* t);
weft_storage* weft_tensor_storage(const weft_tensor* t); /* borrowed */
/* Address of element [0,...,0] (storage data + offset * element size); NULL for meta. */
void* weft_tensor_data_ptr(const weft_tensor* t);

/* Cached flags, recomputed (in one place) on every metadata change. */
bool weft_tensor_is_contiguous(const weft_tensor* t, weft_memory_format f); /* PRESERVE -> the default flag */
bool weft_tensor_is_non_overlapping_and_dense(const weft_tensor* t);
/* PyTorch's suggest_memory_format (channels_last_strides_exact_match = false) */
weft_memory_format weft_tensor_suggest_memory_format(const weft_tensor* t);

/* Both arrays hold ndim values. Returns WEFT_OK or an error. */
weft_status weft_check_shape(const char* op, const int64_t* sizes, int64_t ndim);

/* A new handle onto an existing storage (retained). Validated like as_strided. */
weft_tensor* weft_tensor_from_storage(weft_storage* s, const int64_t* sizes, const int64_t* strides,
                                      int64_t ndim, int64_t offset, weft_dtype dtype);

/* Read/write one element at a linear logical index as double (any dtype). */
double weft_tensor_get_double(const weft_tensor* t, int64_t linear_index);

/* The plain strided reference copy (core, no dispatch): any layout to any
 * layout, same shape and dtype, one element at a time. Kept as the oracle
 * for faster paths. */
weft_status weft_copy_reference(weft_tensor* dst, const weft_tensor* src);

#ifdef __cplusplus
}
#endif
#endif
