/* weft_explain_boxed: run an op with its iterator loops replaced by a
 * recording of the first iterator's plan (include/weft/explain.h). */
#include <stdlib.h>

#include "core/internal.h"
#include "iter/iter_internal.h"
#include "weft/explain.h"

/* Per thread: ops run on the calling thread; workers never build iterators. */
static _Thread_local struct {
  bool on;
  char* json; /* first plan recorded */
  weft_status oom;
} capture;

bool weft_explaining(void) {
  return capture.on;
}

weft_status weft__explain_record(const weft_iter* it, weft_loop_kind loop, int64_t chunks) {
  if (capture.json) return WEFT_OK;
  capture.json = weft__iter_explain_json_ex(it, loop, chunks);
  if (!capture.json) capture.oom = weft__error(WEFT_OUT_OF_MEMORY, "explain: out of memory");
  return capture.oom;
}

weft_status weft_explain_boxed(const weft_op* op, weft_stack* stack, char** json) {
  *json = NULL;
  if (capture.on) {
    weft_stack_drop(stack, weft_op_schema(op)->nargs);
    return weft__error(WEFT_INVALID_ARGUMENT, "explain: already explaining on this thread");
  }
  int64_t base = stack->size - weft_op_schema(op)->nargs;
  capture.on = true;
  capture.json = NULL;
  capture.oom = WEFT_OK;
  weft_status s = weft_op_call_boxed(op, stack);
  capture.on = false;
  if (stack->size > base) weft_stack_drop(stack, stack->size - base);
  if (s == WEFT_OK) s = capture.oom;
  if (s != WEFT_OK) {
    free(capture.json);
    capture.json = NULL;
    return s;
  }
  *json = capture.json;
  capture.json = NULL;
  return WEFT_OK;
}
