/* explain(): the TensorIterator plan an op would run, for any op.
 *
 * The op is called through the dispatcher as usual (argument checks,
 * allocation of outputs, meta steps, redispatches), but while explaining,
 * every TensorIterator loop is skipped: weft_iter_for_each (and copy_'s own
 * driver) records the iterator's plan instead of visiting elements. So
 * in-place and out= ops leave their tensors' values untouched, and elementwise
 * ops added to the op table are explained with no extra code. */
#ifndef WEFT_EXPLAIN_H
#define WEFT_EXPLAIN_H

#include "weft/dispatch.h"
#include "weft/iter.h" /* weft_explaining */

#ifdef __cplusplus
extern "C" {
#endif

/* The op's arguments are on top of `stack` (exactly its schema's, e.g. after
 * weft_op_prepare_args). Runs the op with loops skipped and drops its
 * arguments and returns. *json: the first iterator's plan in the format of
 * weft_iter_explain_json (malloc'd; free() it), or NULL when the op ran no
 * iterator (contiguous() of a contiguous tensor). */
weft_status weft_explain_boxed(const weft_op* op, weft_stack* stack, char** json);

#ifdef __cplusplus
}
#endif
#endif
