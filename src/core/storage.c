/* Refcounted storage. */
#include <stdint.h>
#include <stdlib.h>

#include "core/internal.h"

weft_storage* weft_storage_new(int64_t nbytes, weft_device device) {
  if (nbytes < 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "storage: negative size %lld", (long long)nbytes);
  const weft_allocator* a = weft_get_allocator();
  weft_storage* s = malloc(sizeof *s);
  if (!s) return weft__error_null(WEFT_OUT_OF_MEMORY, "out of memory: tried to allocate %zu bytes", sizeof *s);
  atomic_init(&s->refcount, 1);
  s->device = device;
  s->nbytes = nbytes;
  s->alloc_bytes = 0;
  s->data = NULL;
  s->allocator = a;
  if (device == WEFT_DEVICE_CPU) {
    /* the padding lets SIMD loads run one vector past the last element */
    if ((uint64_t)nbytes > (uint64_t)SIZE_MAX - WEFT_ALLOC_PADDING - WEFT_ALLOC_ALIGNMENT) {
      free(s);
      return weft__error_null(WEFT_OUT_OF_MEMORY, "out of memory: tried to allocate %lld bytes",
                              (long long)nbytes);
    }
    s->alloc_bytes = (size_t)nbytes + WEFT_ALLOC_PADDING;
    s->data = a->alloc(a->ctx, s->alloc_bytes);
    if (!s->data) {
      free(s);
      return weft__error_null(WEFT_OUT_OF_MEMORY, "out of memory: tried to allocate %lld bytes",
                              (long long)nbytes);
    }
  }
  weft__stats_storage(1, nbytes, device == WEFT_DEVICE_META);
  return s;
}

weft_storage* weft_storage_retain(weft_storage* s) {
  if (s) atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
  return s;
}

void weft_storage_release(weft_storage* s) {
  if (!s) return;
  if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1) return;
  if (s->data) s->allocator->free(s->allocator->ctx, s->data, s->alloc_bytes);
  weft__stats_storage(-1, s->nbytes, s->device == WEFT_DEVICE_META);
  free(s);
}

void* weft_storage_data(const weft_storage* s) { return s->data; }
int64_t weft_storage_nbytes(const weft_storage* s) { return s->nbytes; }
weft_device weft_storage_device(const weft_storage* s) { return s->device; }
int32_t weft_storage_refcount(const weft_storage* s) { return atomic_load(&((weft_storage*)s)->refcount); }
