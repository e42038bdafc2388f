/* A growing text buffer for the JSON the library hands to JS (iterator
 * plans, op tables). Start with `weft__strbuf b = {0};`; finish returns the
 * malloc'ed text, or NULL with an "<op>: out of memory" error (the buffer
 * freed): an allocation failure is remembered and reported once. */
#ifndef WEFT_BASE_STRBUF_H
#define WEFT_BASE_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

typedef struct {
  char* buf;
  size_t len, cap;
  bool oom;
} weft__strbuf;

void weft__strbuf_put(weft__strbuf* b, const char* fmt, ...) WEFT__PRINTF(2, 3);
void weft__strbuf_put_json_str(weft__strbuf* b, const char* s);
/* s as it is (not a format) */
void weft__strbuf_puts(weft__strbuf* b, const char* s);
char* weft__strbuf_finish(weft__strbuf* b, const char* op);

#endif
