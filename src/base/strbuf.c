/* A growing, malloc'ed text buffer for the JSON the library hands to JS
 * (iterator plans, op tables). An allocation failure is remembered and
 * reported once, by weft__strbuf_finish. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/strbuf.h"

void weft__strbuf_put(weft__strbuf* b, const char* fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->buf ? b->buf + b->len : NULL, b->buf ? b->cap - b->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->oom = true;
      return;
    }
    if (b->buf && (size_t)n < b->cap - b->len) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = b->cap * 2 + (size_t)n + 64;
    char* p = realloc(b->buf, cap);
    if (!p) {
      b->oom = true;
      return;
    }
    b->buf = p;
    b->cap = cap;
  }
}

void weft__strbuf_put_json_str(weft__strbuf* b, const char* s) {
  weft__strbuf_put(b, "\"");
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\') weft__strbuf_put(b, "\\%c", *s);
    else if ((unsigned char)*s < 0x20) weft__strbuf_put(b, "\\u%04x", *s);
    else weft__strbuf_put(b, "%c", *s);
  }
  weft__strbuf_put(b, "\"");
}

char* weft__strbuf_finish(weft__strbuf* b, const char* op) {
  if (b->oom || !b->buf) {
    free(b->buf);
    return weft__error_null(WEFT_OUT_OF_MEMORY, "%s: out of memory", op);
  }
  return b->buf;
}
