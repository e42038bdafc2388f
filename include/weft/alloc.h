/* The allocator interface and live memory statistics.
 *
 * Every byte of tensor data comes from the current allocator. The default
 * one returns 64-byte aligned blocks with WEFT_ALLOC_PADDING extra readable
 * bytes at the end, so SIMD kernels may read (never write) one vector past
 * the last element. */
#ifndef WEFT_ALLOC_H
#define WEFT_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_ALLOC_ALIGNMENT 64
#define WEFT_ALLOC_PADDING 16

typedef struct weft_allocator {
  /* Returns NULL on failure; nbytes already includes the padding. */
  void* (*alloc)(void* ctx, size_t nbytes);
  void (*free)(void* ctx, void* ptr, size_t nbytes);
  void* ctx;
  const char* name;
} weft_allocator;

const weft_allocator* weft_default_allocator(void);
/* The allocator new storages use; NULL restores the default. Storages keep
 * the allocator they were made with. Returns the previous one. */
const weft_allocator* weft_set_allocator(const weft_allocator* a);
const weft_allocator* weft_get_allocator(void);

/* Allocation-failure injection (the C tests, the wasm test hook): the
 * allocation that brings `countdown` to 0 fails and counts in `injected`;
 * every other one goes to the default allocator (countdown <= 0: none
 * fails). Init once, install with weft_set_allocator(&f->allocator); f must
 * outlive the storages made through it. */
typedef struct weft_fail_nth_allocator {
  weft_allocator allocator;
  int64_t countdown;
  int64_t injected;
} weft_fail_nth_allocator;
void weft_fail_nth_allocator_init(weft_fail_nth_allocator* f);

typedef struct weft_memory_stats {
  int64_t tensors;      /* live tensor handles */
  int64_t storages;     /* live storages */
  int64_t bytes_in_use; /* bytes of live storages with data (requested sizes) */
  int64_t peak_bytes;   /* high-water mark of bytes_in_use */
  int64_t meta_bytes;   /* bytes live meta storages describe; nothing is allocated for them */
  int64_t webgpu_bytes; /* bytes of live webgpu storages (GPU memory, not in bytes_in_use) */
} weft_memory_stats;

weft_memory_stats weft_memory(void);
void weft_reset_peak_bytes(void);

#ifdef __cplusplus
}
#endif
#endif
