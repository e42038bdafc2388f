/* explain()'s capture: while on, the loop drivers record the first plan they
 * were about to run instead of running it. src/ops/explain.c turns an op
 * call into a plan with it; the iterator itself never calls an operator. */
#include <stdlib.h>

#include "core/internal.h"
#include "iter/iter_internal.h"

/* Per thread: ops run on the calling thread; workers never build iterators. */
static WEFT_THREAD_LOCAL struct {
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

weft_status weft__explain_record_json(char* json) {
  if (capture.json) {
    free(json);
    return WEFT_OK;
  }
  capture.json = json;
  if (!capture.json) capture.oom = weft__error(WEFT_OUT_OF_MEMORY, "explain: out of memory");
  return capture.oom;
}

bool weft__explain_begin(void) {
  if (capture.on) return false;
  capture.on = true;
  capture.json = NULL;
  capture.oom = WEFT_OK;
  return true;
}

weft_status weft__explain_end(weft_status s, char** json) {
  capture.on = false;
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
