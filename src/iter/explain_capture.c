/* explain()'s capture: while on, the loop drivers record the first plan they
 * were about to run instead of running it (a dedicated kernel's plan through
 * weft__explain_kernel, so ops/cpu/ drivers need no ops/ call). src/ops/explain.c
 * turns an op call into a plan with it; the iterator never calls an operator. */
#include <stdlib.h>

#include "base/strbuf.h"
#include "core/internal.h"
#include "iter/iter_internal.h"
#include "weft/parallel.h"

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
