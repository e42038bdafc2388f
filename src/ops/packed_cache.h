/* Packed weights kept on the weight's storage (XNNPACK packs a weight once
 * per operator; weft's operators are calls, so the panels hang on the
 * tensor): conv2d, _conv2d_fused and linear. See packed_cache.c. */
#ifndef WEFT_OPS_PACKED_CACHE_H
#define WEFT_OPS_PACKED_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/tensor.h"

/* What the panels are, beside the weight's view: the packing's kind (each
 * user names its own: WEFT_PACKED_*), a parameter of it (conv's groups,
 * the GEMM's K block) and the compute dtype. */
enum { WEFT_PACKED_CONV_NCHW, WEFT_PACKED_CONV_NHWC, WEFT_PACKED_CONV_WINOGRAD, WEFT_PACKED_GEMM_B };
typedef struct {
  int kind;
  int64_t param;
  weft_dtype ct;
} weft__packed_key;

typedef struct weft__packed weft__packed; /* one set of panels, held by a call while it reads them */

/* Fills dst (the bytes asked) with w's panels. */
typedef weft_status (*weft__pack_fn)(void* ctx, void* dst);

/* Whether a write into a weight can be seen (in-place writes bump storage
 * versions once autograd's in-place kernels are registered); before that
 * nothing is cached and the callers pack per call. */
bool weft__packed_cacheable(void);

/* The panels of w (at most 4-D) under key: the cached ones when w's view,
 * key and version match, else packed now by fn(ctx, dst) into `bytes` and
 * cached (replacing a stale set). *held is the caller's hold: give it back
 * with weft__packed_release when done reading. NULL with the error set
 * (out of memory, or fn's status). */
const void* weft__packed_get(const weft_tensor* w, weft__packed_key key, size_t bytes, weft__pack_fn fn, void* ctx,
                             weft__packed** held);
void weft__packed_release(weft__packed* held); /* NULL: no-op */

/* linear's weight, for the products it runs on this thread (mm / addmm's
 * CPU kernel packs its B from the cache when B is a view of it): set
 * around the call, NULL after. */
void weft__packed_weight_set(const weft_tensor* w);
/* Whether b shares the weight's storage, set by linear on this thread. */
bool weft__packed_is_weight(const weft_tensor* b);

#endif
