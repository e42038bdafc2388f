/* weft_explain_boxed: run an op with its iterator loops replaced by a
 * recording of the first iterator's plan (include/weft/explain.h). */
#include <stdlib.h>

#include "base/strbuf.h"
#include "iter/iter_internal.h"
#include "ops/ops.h"
#include "weft/explain.h"
#include "weft/parallel.h"

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

weft_status weft__explain_kernel(const char* op, const char* kind, const char* path, weft_dtype dtype, int64_t rows,
                                 int64_t inner) {
  weft__strbuf b = {0};
  weft__strbuf_put(&b, "{");
  if (op) weft__strbuf_put(&b, "\"op\":\"%s\",", op);
  weft__strbuf_put(&b, "\"kind\":\"%s\",\"path\":\"%s\",\"dtype\":\"%s\",", kind, path, weft_dtype_name(dtype));
  weft__strbuf_put(&b, "\"rows\":%lld,\"inner\":%lld,\"threads\":%d}", (long long)rows, (long long)inner,
                   weft_get_num_threads());
  return weft__explain_record_json(weft__strbuf_finish(&b, kind));
}
