/* parallel_for over a persistent pool of pthread workers.
 *
 * weft_parallel_for(begin, end, grain, fn, ctx) has the same result as the
 * serial loop `fn(ctx, begin, end)`: the range is cut into chunks of at least
 * `grain` elements (the last may be shorter) and every chunk is handed to fn
 * exactly once, on some thread. The caller thread works too. One thread, a
 * range no larger than the grain, or a call made from inside a chunk runs
 * inline. The first error a chunk returns is returned to the caller (its
 * message is copied to the caller's weft_last_error()). */
#ifndef WEFT_PARALLEL_H
#define WEFT_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef weft_status (*weft_range_fn)(void* ctx, int64_t begin, int64_t end);

weft_status weft_parallel_for(int64_t begin, int64_t end, int64_t grain, weft_range_fn fn, void* ctx);
/* n >= 1; clamped to the build's pool size (1 in single-threaded builds). */
weft_status weft_set_num_threads(int n);
int weft_get_num_threads(void);
/* Threads the build/hardware allows (the default of get_num_threads). */
int weft_max_threads(void);
/* True inside a parallel_for chunk (nested calls run inline). */
bool weft_in_parallel_region(void);

#ifdef __cplusplus
}
#endif
#endif
