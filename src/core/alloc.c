/* The default CPU allocator and the live memory statistics. */
#include <stdlib.h>

#include "core/internal.h"

static void* default_alloc(void* ctx, size_t nbytes) {
  (void)ctx;
  /* aligned_alloc wants a multiple of the alignment */
  size_t rounded = (nbytes + WEFT_ALLOC_ALIGNMENT - 1) & ~(size_t)(WEFT_ALLOC_ALIGNMENT - 1);
  if (rounded < nbytes) return NULL;
  return aligned_alloc(WEFT_ALLOC_ALIGNMENT, rounded);
}

static void default_free(void* ctx, void* ptr, size_t nbytes) {
  (void)ctx;
  (void)nbytes;
  free(ptr);
}

static const weft_allocator default_allocator = {default_alloc, default_free, NULL, "cpu"};
static void* fail_nth_alloc(void* ctx, size_t nbytes) {
  weft_fail_nth_allocator* f = ctx;
  if (f->countdown > 0 && --f->countdown == 0) {
    f->injected++;
    return NULL;
  }
  return default_alloc(NULL, nbytes);
}

void weft_fail_nth_allocator_init(weft_fail_nth_allocator* f) {
  f->allocator = (weft_allocator){fail_nth_alloc, default_free, f, "fail-nth"};
  f->countdown = 0;
  f->injected = 0;
}

static _Atomic(const weft_allocator*) current_allocator = &default_allocator;

const weft_allocator* weft_default_allocator(void) { return &default_allocator; }

const weft_allocator* weft_set_allocator(const weft_allocator* a) {
  return atomic_exchange(&current_allocator, a ? a : &default_allocator);
}

const weft_allocator* weft_get_allocator(void) { return atomic_load(&current_allocator); }

static atomic_llong live_tensors, live_storages, bytes_in_use, peak_bytes, meta_bytes;

void weft__stats_tensor(int delta) { atomic_fetch_add(&live_tensors, delta); }

void weft__stats_storage(int delta, int64_t nbytes, bool meta) {
  atomic_fetch_add(&live_storages, delta);
  if (meta) { /* shapes only: nothing was allocated */
    atomic_fetch_add(&meta_bytes, (long long)delta * nbytes);
    return;
  }
  long long now = atomic_fetch_add(&bytes_in_use, (long long)delta * nbytes) + (long long)delta * nbytes;
  long long peak = atomic_load(&peak_bytes);
  while (now > peak && !atomic_compare_exchange_weak(&peak_bytes, &peak, now)) {
  }
}

weft_memory_stats weft_memory(void) {
  weft_memory_stats s = {atomic_load(&live_tensors), atomic_load(&live_storages),
                         atomic_load(&bytes_in_use), atomic_load(&peak_bytes), atomic_load(&meta_bytes)};
  return s;
}

void weft_reset_peak_bytes(void) { atomic_store(&peak_bytes, atomic_load(&bytes_in_use)); }
