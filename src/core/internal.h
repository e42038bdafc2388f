/* The tensor model's internals (src/core/): the tensor and storage structs,
 * construction, flags and layout math. Not installed. Includes only base/
 * and the core public headers. */
#ifndef WEFT_CORE_INTERNAL_H
#define WEFT_CORE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/overflow.h"
#include "base/tls.h"
#include "weft/alloc.h"
#include "weft/dtype.h"
#include "weft/storage.h"
#include "weft/tensor.h"

struct weft_storage {
  atomic_int refcount;
  weft_device device;
  int64_t nbytes;       /* requested size */
  size_t alloc_bytes;   /* size handed to the allocator (padding included); 0 for meta */
  void* data;           /* NULL for meta and webgpu */
  int32_t device_buffer; /* webgpu: the JS-side GPUBuffer handle (docs/webgpu.md); else 0 */
  const weft_allocator* allocator; /* data and this struct came from it */
  /* Autograd's version counter: bumped by every in-place write. It lives
   * here because every view of one base shares the storage, so they share
   * the counter (PyTorch's VariableVersion shared through view metadata). */
  atomic_uint version;
  /* What an upper layer derived from the data and keeps while the storage
   * lives (ops/conv_fused.c: convolution weights packed for inference),
   * freed with the storage by weft__storage_packed_free; NULL if none. */
  void* _Atomic packed;
};

struct weft_tensor {
  atomic_int refcount;
  const weft_allocator* allocator; /* the one this struct came from */
  int32_t ndim;
  weft_dtype dtype;
  weft_device device;
  weft_storage* storage; /* owned reference */
  int64_t storage_offset; /* in elements */
  int64_t numel;
  bool is_contiguous;
  bool is_channels_last_contiguous;
  bool is_channels_last_3d_contiguous;
  bool is_channels_last;    /* strides say channels_last (for suggest_memory_format) */
  bool is_channels_last_3d;
  bool is_non_overlapping_and_dense;
  int64_t sizes[WEFT_MAX_DIMS];
  int64_t strides[WEFT_MAX_DIMS];
  /* Autograd state, owned by src/autograd (core cannot know its type): the
   * dispatcher reads requires_grad to add the Autograd key, and releasing
   * the tensor hands autograd_meta to weft__autograd_meta_free. */
  bool requires_grad;
  void* autograd_meta;
};

/* Set by the layer that fills a storage's packed (before the first one). */
extern void (*_Atomic weft__storage_packed_free)(void* packed);

/* A device whose bytes live outside this memory (WebGPU: GPUBuffers in a
 * JS-side table). The layer that owns the device installs its ops before the
 * first storage; a storage keeps the handle alloc returned. NULL: refused. */
typedef struct weft__device_storage_ops {
  int32_t (*alloc)(int64_t nbytes); /* a handle > 0, or 0 with the error set */
  void (*free)(int32_t handle);
} weft__device_storage_ops;
extern const weft__device_storage_ops* _Atomic weft__webgpu_storage_ops;

/* Set once by the autograd layer; NULL while no tensor ever had meta. */
extern void (*_Atomic weft__autograd_meta_free)(void* meta);

/* Wrap a possibly negative dim into [0, ndim). ndim 0 is treated as 1, as
 * PyTorch's maybe_wrap_dim does for scalars. Sets the "Dimension out of
 * range" error and returns false when out of range. */
bool weft__wrap_dim(const char* op, int64_t dim, int64_t ndim, int64_t* out);

/* "[1, 3, 0, 4]" ("[]" for no dims) into buf, for error messages; returns buf. */
const char* weft__sizes_str(const int64_t* sizes, int64_t ndim, char* buf, size_t cap);

/* ---- live statistics (src/core/alloc.c) ---- */
void weft__stats_tensor(int delta);
/* by device: meta storages count in meta_bytes, webgpu ones in webgpu_bytes,
 * cpu ones in bytes_in_use */
void weft__stats_storage(int delta, int64_t nbytes, weft_device device);

/* ---- tensor construction (src/core/tensor.c) ----
 * A new handle with the given metadata on storage s (retained). Does not
 * validate against the storage; callers have. Recomputes numel and flags. */
weft_tensor* weft__tensor_new(weft_storage* s, const int64_t* sizes, const int64_t* strides,
                              int64_t ndim, int64_t offset, weft_dtype dtype);
/* Recompute numel and every cached flag after sizes/strides changed: the one
 * place they are computed. */
void weft__tensor_refresh(weft_tensor* t);
/* PyTorch's empty_strided_cpu, below the dispatcher: checks sizes (op names
 * the errors), dtype, device and strides (no negative ones), allocates the
 * storage the layout needs (none for meta tensors) and returns a new tensor. */
weft_tensor* weft__tensor_alloc(const char* op, const int64_t* sizes, const int64_t* strides, int64_t ndim,
                               weft_dtype dtype, weft_device device);
weft_status weft__check_dtype_device(const char* op, weft_dtype dtype, weft_device device);
/* out= resizing: set sizes/strides, growing the storage when too small. */
weft_status weft__tensor_resize_(weft_tensor* t, const int64_t* sizes, const int64_t* strides,
                                 int64_t ndim, const char* op);
/* Contiguous strides for sizes in memory format f (CONTIGUOUS / CHANNELS_LAST / _3D);
 * false when a stride overflows int64. */
bool weft__strides_for_format(const int64_t* sizes, int64_t ndim, weft_memory_format f,
                              int64_t* strides);
/* Bytes the given layout needs from its storage start (0 when any size is 0);
 * -1 + OVERFLOW error when it does not fit in int64. */
int64_t weft__required_bytes(const int64_t* sizes, const int64_t* strides, int64_t ndim,
                             int64_t offset, size_t elem_size, const char* op);

/* ---- memory overlap (ATen/MemoryOverlap.cpp) ---- */
/* true when a size > 1 dim has stride 0 (PyTorch's has_internal_overlap YES;
 * other layouts that are not dense are "too hard" and allowed). */
bool weft__has_internal_overlap(const weft_tensor* t);
typedef enum { WEFT__OVERLAP_NO, WEFT__OVERLAP_FULL, WEFT__OVERLAP_PARTIAL, WEFT__OVERLAP_TOO_HARD } weft__overlap;
/* get_overlap_status: FULL for the same elements in the same order (a == b
 * included), PARTIAL for any other shared byte; TOO_HARD when either is not
 * non-overlapping and dense. */
weft__overlap weft__mem_overlap(const weft_tensor* a, const weft_tensor* b);

#endif
