/* Library-internal definitions shared by src/: the tensor and storage
 * structs, error setters, checked arithmetic. Not installed. */
#ifndef WEFT_CORE_INTERNAL_H
#define WEFT_CORE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "weft/weft.h"

/* Thread-local storage, or plain static storage in a wasm build without
 * pthreads: wasm-ld (clang 14) refuses TLS in objects built with
 * -mbulk-memory but without atomics, and one thread needs none. */
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define WEFT_THREAD_LOCAL
#else
#define WEFT_THREAD_LOCAL _Thread_local
#endif

struct weft_storage {
  atomic_int refcount;
  weft_device device;
  int64_t nbytes;       /* requested size */
  size_t alloc_bytes;   /* size handed to the allocator (padding included); 0 for meta */
  void* data;           /* NULL for meta */
  const weft_allocator* allocator;
};

struct weft_tensor {
  atomic_int refcount;
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
};

/* ---- errors (src/core/error.c) ----
 * Set this thread's status and message; returns the status so callers can
 * `return weft__error(...)`. The OOM path formats into a static-size
 * thread-local buffer and never allocates. */
weft_status weft__error(weft_status s, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Same, returning NULL, for handle-returning calls. */
void* weft__error_null(weft_status s, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* "[2, 3]" into buf (always terminated); returns the length written. */
size_t weft__format_int_list(char* buf, size_t cap, const int64_t* v, int64_t n);
/* A temporary "[..]" string for error messages: WEFT__LIST(sizes, n). */
typedef struct { char s[256]; } weft__list_buf;
static inline weft__list_buf weft__list(const int64_t* v, int64_t n) {
  weft__list_buf b;
  weft__format_int_list(b.s, sizeof b.s, v, n);
  return b;
}
#define WEFT__LIST(v, n) (weft__list((v), (n)).s)

/* ---- a growing text buffer for JSON (src/core/strbuf.c) ----
 * Start with `weft__strbuf b = {0};`; finish returns the malloc'ed text, or
 * NULL with an "<op>: out of memory" error (the buffer freed). */
typedef struct {
  char* buf;
  size_t len, cap;
  bool oom;
} weft__strbuf;
void weft__strbuf_put(weft__strbuf* b, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void weft__strbuf_put_json_str(weft__strbuf* b, const char* s);
char* weft__strbuf_finish(weft__strbuf* b, const char* op);

/* ---- checked arithmetic: false on overflow ---- */
static inline bool weft__mul_overflow(int64_t a, int64_t b, int64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}
static inline bool weft__add_overflow(int64_t a, int64_t b, int64_t* out) {
  return __builtin_add_overflow(a, b, out);
}

/* Wrap a possibly negative dim into [0, ndim). ndim 0 is treated as 1, as
 * PyTorch's maybe_wrap_dim does for scalars. Sets the "Dimension out of
 * range" error and returns false when out of range. */
bool weft__wrap_dim(const char* op, int64_t dim, int64_t ndim, int64_t* out);

/* ---- live statistics (src/core/alloc.c) ---- */
void weft__stats_tensor(int delta);
void weft__stats_storage(int delta, int64_t nbytes);

/* ---- tensor construction (src/core/tensor.c) ----
 * A new handle with the given metadata on storage s (retained). Does not
 * validate against the storage; callers have. Recomputes numel and flags. */
weft_tensor* weft__tensor_new(weft_storage* s, const int64_t* sizes, const int64_t* strides,
                              int64_t ndim, int64_t offset, weft_dtype dtype);
/* Recompute numel and every cached flag after sizes/strides changed: the one
 * place they are computed. */
void weft__tensor_refresh(weft_tensor* t);
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

#endif
