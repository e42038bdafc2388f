/* The packed-weight cache (packed_cache.h).
 *
 * A weight's panels hang on its storage (freed with it) in a list keyed on
 * the view (offset, sizes, strides), the source dtype, the packing's kind
 * and parameter, the compute dtype, and the storage's version counter: an
 * in-place write to the weight (copy_, loadStateDict, an optimizer step)
 * makes the entry stale and the next call repacks. The counter counts only
 * once autograd's in-place kernels are registered (the first tensor that
 * requires grad registers them, as every nn module's parameters do);
 * before that a written weight cannot be told from the one packed, so
 * nothing is cached. Writes into a tensor's memory behind the ops' back (a
 * typed-array view filled from JS) are not seen. */
#include "ops/packed_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/tls.h"
#include "core/internal.h"
#include "ops/ops.h"

#define KEY_DIMS 4

struct weft__packed {
  struct weft__packed* next;
  /* the list's reference while it is on the list, plus one per call reading
   * the panels: a stale entry unlinked while another thread still reads it
   * is freed by the last of them */
  atomic_int refs;
  int64_t offset, sizes[KEY_DIMS], strides[KEY_DIMS];
  int32_t ndim;
  weft_dtype src;
  weft__packed_key key;
  unsigned version;
  double data[]; /* the panels (8-byte aligned) */
};

/* guards every storage's list (a lookup, or one weight's packing) */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

void weft__packed_release(weft__packed* e) {
  if (e && atomic_fetch_sub(&e->refs, 1) == 1) free(e);
}

/* the storage is going: drop the list's references */
static void free_entries(void* list) {
  for (weft__packed *e = list, *next; e; e = next) next = e->next, weft__packed_release(e);
}

bool weft__packed_cacheable(void) {
  static weft_op* _Atomic copy_op;
  weft_op* op = atomic_load(&copy_op);
  if (!op) atomic_store(&copy_op, op = weft_op_find("copy_"));
  return op && weft_op_has_kernel(op, WEFT_KEY_AD_INPLACE_OR_VIEW);
}

static bool same_key(const weft__packed* e, const weft_tensor* w, weft__packed_key k) {
  size_t n = sizeof(int64_t) * (size_t)w->ndim;
  return e->offset == w->storage_offset && e->ndim == w->ndim && memcmp(e->sizes, w->sizes, n) == 0 &&
         memcmp(e->strides, w->strides, n) == 0 && e->src == w->dtype && e->key.kind == k.kind &&
         e->key.param == k.param && e->key.ct == k.ct;
}

/* Under the lock: the entry for this key with a hold for the caller,
 * packed when missing or stale. */
static weft__packed* find_or_pack(const weft_tensor* w, weft__packed_key key, size_t bytes, weft__pack_fn fn,
                                  void* ctx) {
  weft_storage* st = w->storage;
  unsigned version = weft_tensor_version(w);
  weft__packed* head = atomic_load(&st->packed);
  for (weft__packed** link = &head; *link; link = &(*link)->next) {
    weft__packed* e = *link;
    if (!same_key(e, w, key)) continue;
    if (e->version == version) {
      atomic_fetch_add(&e->refs, 1);
      return e;
    }
    *link = e->next; /* stale: written since it was packed */
    atomic_store(&st->packed, head);
    weft__packed_release(e);
    break;
  }
  weft__packed* e = malloc(sizeof *e + bytes);
  if (!e) return weft__error_null(WEFT_OUT_OF_MEMORY, "out of memory (%zu bytes for a packed weight)", bytes);
  *e = (weft__packed){.next = head, .refs = 2, .offset = w->storage_offset, .ndim = w->ndim, .src = w->dtype,
                      .key = key, .version = version};
  memcpy(e->sizes, w->sizes, sizeof(int64_t) * (size_t)w->ndim);
  memcpy(e->strides, w->strides, sizeof(int64_t) * (size_t)w->ndim);
  if (fn(ctx, e->data) != WEFT_OK) {
    free(e);
    return NULL;
  }
  atomic_store(&weft__storage_packed_free, free_entries);
  atomic_store(&st->packed, e);
  return e;
}

const void* weft__packed_get(const weft_tensor* w, weft__packed_key key, size_t bytes, weft__pack_fn fn, void* ctx,
                             weft__packed** held) {
  *held = NULL;
  if (w->ndim > KEY_DIMS) return weft__error_null(WEFT_INTERNAL, "packed weight: %d dimensions", (int)w->ndim);
  pthread_mutex_lock(&cache_lock);
  weft__packed* e = find_or_pack(w, key, bytes, fn, ctx);
  pthread_mutex_unlock(&cache_lock); /* e is the caller's until weft__packed_release */
  *held = e;
  return e ? e->data : NULL;
}

/* ---- linear's weight, on this thread ---- */

static WEFT_THREAD_LOCAL const weft_storage* tls_weight;

void weft__packed_weight_set(const weft_tensor* w) { tls_weight = w ? w->storage : NULL; }

bool weft__packed_is_weight(const weft_tensor* b) { return tls_weight && b->storage == tls_weight; }
