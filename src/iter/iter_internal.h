/* Helpers shared by src/iter/. Not installed. */
#ifndef WEFT_ITER_INTERNAL_H
#define WEFT_ITER_INTERNAL_H

#include "weft/iter.h"

/* How many chunks weft_parallel_for cuts [0, len) into at this thread count. */
int64_t weft__parallel_chunks(int64_t len, int64_t grain);
/* Does for_each split this iterator between threads by dim 0, each chunk
 * taking all of dim 1 (a pointwise one over 2..4 channels of pixels), and
 * with which grain along dim 0 (iter_loop.c) */
bool weft__splits_long_dim(const weft_iter* it);
int64_t weft__long_dim_grain(const weft_iter* it, int64_t grain);
/* explain JSON with the loop kind and chunk count a caller chose. */
char* weft__iter_explain_json_ex(const weft_iter* it, weft_loop_kind loop, int64_t chunks);
/* While weft_explaining(): keeps the first plan a loop driver was about to
 * run (src/iter/explain_capture.c); the driver then returns without looping. */
weft_status weft__explain_record(const weft_iter* it, weft_loop_kind loop, int64_t chunks);
/* The same with a plan already made (malloc'd, taken over; NULL: OOM). */
weft_status weft__explain_record_json(char* json);
/* Starts capturing on this thread; false when already capturing. */
bool weft__explain_begin(void);
/* Stops; on success (s WEFT_OK, no OOM while recording) hands over the
 * recorded plan (malloc'd, NULL when no loop ran), else frees it and returns
 * the error. */
weft_status weft__explain_end(weft_status s, char** json);
/* While explaining (weft_explaining()): records the plan of a dedicated
 * kernel that runs without the iterator, {"kind", "path", "dtype", "rows",
 * "inner", "threads"} plus op when known (explain_capture.c; ops and their ops/cpu drivers call it). Rows are the
 * units parallel_for splits; inner the elements each one moves. */
weft_status weft__explain_kernel(const char* op, const char* kind, const char* path, weft_dtype dtype, int64_t rows,
                                 int64_t inner);

#endif
