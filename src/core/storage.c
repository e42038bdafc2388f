/* Refcounted storage. */
#include <stdint.h>
#include <stdlib.h>

#include "core/internal.h"

weft_storage* weft_storage_new(int64_t nbytes, weft_device device) {
  if (nbytes < 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "storage: negative size %lld", (long long)nbytes);
  const weft_allocator* a = weft_get_allocator();
  /* the data first: when memory runs out the error names the data's size */
  void* data = NULL;
  size_t alloc_bytes = 0;
  int32_t buffer = 0;
  if (device == WEFT_DEVICE_WEBGPU) {
    const weft__device_storage_ops* ops = atomic_load(&weft__webgpu_storage_ops);
    if (!ops) return weft__error_null(WEFT_NOT_IMPLEMENTED, "webgpu: this library has no WebGPU device");
    if (!(buffer = ops->alloc(nbytes))) return NULL;
  } else if (device == WEFT_DEVICE_CPU) {
    /* the padding lets SIMD loads run one vector past the last element */
    if ((uint64_t)nbytes > (uint64_t)SIZE_MAX - WEFT_ALLOC_PADDING - WEFT_ALLOC_ALIGNMENT)
      return weft__error_null(WEFT_OUT_OF_MEMORY, "out of memory: tried to allocate %lld bytes", (long long)nbytes);
    alloc_bytes = (size_t)nbytes + WEFT_ALLOC_PADDING;
    data = a->alloc(a->ctx, alloc_bytes);
    if (!data)
      return weft__error_null(WEFT_OUT_OF_MEMORY, "out of memory: tried to allocate %lld bytes", (long long)nbytes);
  }
  /* the metadata through the allocator too, so an injected failure reaches it */
  weft_storage* s = a->alloc(a->ctx, sizeof *s);
  if (!s) {
    if (data) a->free(a->ctx, data, alloc_bytes);
    if (buffer) atomic_load(&weft__webgpu_storage_ops)->free(buffer);
    return weft__error_null(WEFT_OUT_OF_MEMORY, "out of memory: tried to allocate %zu bytes", sizeof *s);
  }
  atomic_init(&s->refcount, 1);
  atomic_init(&s->version, 0);
  atomic_init(&s->packed, NULL);
  s->device = device;
  s->nbytes = nbytes;
  s->alloc_bytes = alloc_bytes;
  s->data = data;
  s->device_buffer = buffer;
  s->allocator = a;
  weft__stats_storage(1, nbytes, device);
  return s;
}

weft_storage* weft_storage_retain(weft_storage* s) {
  if (s) atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
  return s;
}

void weft_storage_release(weft_storage* s) {
  if (!s) return;
  if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1) return;
  void* packed = atomic_load(&s->packed);
  if (packed) atomic_load(&weft__storage_packed_free)(packed);
  if (s->data) s->allocator->free(s->allocator->ctx, s->data, s->alloc_bytes);
  if (s->device_buffer) atomic_load(&weft__webgpu_storage_ops)->free(s->device_buffer);
  weft__stats_storage(-1, s->nbytes, s->device);
  s->allocator->free(s->allocator->ctx, s, sizeof *s);
}

void (*_Atomic weft__storage_packed_free)(void* packed);
const weft__device_storage_ops* _Atomic weft__webgpu_storage_ops;

void* weft_storage_data(const weft_storage* s) { return s->data; }
int64_t weft_storage_nbytes(const weft_storage* s) { return s->nbytes; }
weft_device weft_storage_device(const weft_storage* s) { return s->device; }
int32_t weft_storage_refcount(const weft_storage* s) { return atomic_load(&((weft_storage*)s)->refcount); }
