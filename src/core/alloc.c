/* The default CPU allocator and the live memory statistics. */
#include <stdlib.h>

#include "core/internal.h"

/* ---- small blocks kept for reuse ----
 * A small op makes and frees three small blocks (its tensor, its storage and
 * a tiny tensor's data); malloc and free of those cost more than the op. So
 * freed blocks of up to CACHE_CLASSES * 64 bytes wait on a free list per
 * size, CACHE_DEPTH deep, for the next allocation of that size. One spinlock:
 * the sections are a few loads and stores, and ops allocate from one thread
 * at a time in practice. Off under AddressSanitizer, which must see every
 * free to find a use after it. */
#if defined(__SANITIZE_ADDRESS__)
#define WEFT_BLOCK_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT_BLOCK_CACHE 0
#endif
#endif
#ifndef WEFT_BLOCK_CACHE
#define WEFT_BLOCK_CACHE 1 /* -DWEFT_BLOCK_CACHE=0 gives every block back to malloc */
#endif

#define CACHE_CLASSES 8
#define CACHE_DEPTH 64

typedef struct cached_block {
  struct cached_block* next;
} cached_block;

static struct {
  cached_block* head;
  int n;
} block_cache[CACHE_CLASSES];
static atomic_flag cache_lock = ATOMIC_FLAG_INIT;

/* The class of a rounded size; -1: not cached. */
static int cache_class(size_t rounded) {
  size_t c = rounded / WEFT_ALLOC_ALIGNMENT;
  return WEFT_BLOCK_CACHE && c >= 1 && c <= CACHE_CLASSES ? (int)c - 1 : -1;
}

static void cache_lock_take(void) {
  while (atomic_flag_test_and_set_explicit(&cache_lock, memory_order_acquire)) {
  }
}

static void* cache_take(int c) {
  cache_lock_take();
  cached_block* b = block_cache[c].head;
  if (b) {
    block_cache[c].head = b->next;
    block_cache[c].n--;
  }
  atomic_flag_clear_explicit(&cache_lock, memory_order_release);
  return b;
}

static bool cache_put(int c, void* ptr) {
  cache_lock_take();
  bool kept = block_cache[c].n < CACHE_DEPTH;
  if (kept) {
    cached_block* b = ptr;
    b->next = block_cache[c].head;
    block_cache[c].head = b;
    block_cache[c].n++;
  }
  atomic_flag_clear_explicit(&cache_lock, memory_order_release);
  return kept;
}

/* aligned_alloc wants a multiple of the alignment; 0: overflow */
static size_t round_block(size_t nbytes) {
  size_t rounded = (nbytes + WEFT_ALLOC_ALIGNMENT - 1) & ~(size_t)(WEFT_ALLOC_ALIGNMENT - 1);
  return rounded < nbytes ? 0 : rounded;
}

static void* default_alloc(void* ctx, size_t nbytes) {
  (void)ctx;
  size_t rounded = round_block(nbytes);
  if (rounded == 0 && nbytes > 0) return NULL;
  int c = cache_class(rounded);
  void* p = c >= 0 ? cache_take(c) : NULL;
  return p ? p : aligned_alloc(WEFT_ALLOC_ALIGNMENT, rounded);
}

static void default_free(void* ctx, void* ptr, size_t nbytes) {
  (void)ctx;
  if (!ptr) return;
  int c = cache_class(round_block(nbytes));
  if (c >= 0 && cache_put(c, ptr)) return;
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

static atomic_llong live_tensors, live_storages, bytes_in_use, peak_bytes, meta_bytes, webgpu_bytes;

void weft__stats_tensor(int delta) { atomic_fetch_add(&live_tensors, delta); }

void weft__stats_storage(int delta, int64_t nbytes, weft_device device) {
  atomic_fetch_add(&live_storages, delta);
  if (device == WEFT_DEVICE_META) { /* shapes only: nothing was allocated */
    atomic_fetch_add(&meta_bytes, (long long)delta * nbytes);
    return;
  }
  if (device == WEFT_DEVICE_WEBGPU) { /* GPU memory, apart from this heap's */
    atomic_fetch_add(&webgpu_bytes, (long long)delta * nbytes);
    return;
  }
  long long now = atomic_fetch_add(&bytes_in_use, (long long)delta * nbytes) + (long long)delta * nbytes;
  long long peak = atomic_load(&peak_bytes);
  while (now > peak && !atomic_compare_exchange_weak(&peak_bytes, &peak, now)) {
  }
}

weft_memory_stats weft_memory(void) {
  weft_memory_stats s = {atomic_load(&live_tensors), atomic_load(&live_storages),
                         atomic_load(&bytes_in_use), atomic_load(&peak_bytes), atomic_load(&meta_bytes),
                         atomic_load(&webgpu_bytes)};
  return s;
}

void weft_reset_peak_bytes(void) { atomic_store(&peak_bytes, atomic_load(&bytes_in_use)); }
