/* weft_explain_boxed: run an op with its iterator loops replaced by a
 * recording of the first iterator's plan (include/weft/explain.h). */
#include <stdlib.h>

#include "iter/iter_internal.h"
#include "ops/ops.h"
#include "weft/explain.h"

weft_status weft_explain_boxed(const weft_op* op, weft_stack* stack, char** json) {
  *json = NULL;
  if (!weft__explain_begin()) {
    weft_stack_drop(stack, weft_op_schema(op)->nargs);
    return weft__error(WEFT_INVALID_ARGUMENT, "explain: already explaining on this thread");
  }
  int64_t base = stack->size - weft_op_schema(op)->nargs;
  weft_status s = weft_op_call_boxed(op, stack);
  if (stack->size > base) weft_stack_drop(stack, stack->size - base);
  return weft__explain_end(s, json);
}
