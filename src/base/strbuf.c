/* A growing, malloc'ed text buffer for the JSON the library hands to JS
 * (iterator plans, op tables). An allocation failure is remembered and
 * reported once, by weft__strbuf_finish. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

/* Room for n more bytes and a NUL; false (oom remembered) when out of memory. */
static bool reserve(weft__strbuf* b, size_t n) {
  if (b->buf && b->cap - b->len > n) return true;
  size_t cap = b->cap * 2 + n + 64;
  char* p = realloc(b->buf, cap);
  if (!p) {
    b->oom = true;
    return false;
  }
  b->buf = p;
  b->cap = cap;
  return true;
}

/* n bytes of s as they are. (The op table's JSON is half a megabyte made at
 * init: a vsnprintf per character of it was most of init()'s time in wasm.) */
static void append(weft__strbuf* b, const char* s, size_t n) {
  if (b->oom || !reserve(b, n)) return;
  memcpy(b->buf + b->len, s, n);
  b->len += n;
  b->buf[b->len] = '\0';
}

void weft__strbuf_put(weft__strbuf* b, const char* fmt, ...) {
  if (b->oom) return;
  if (!strchr(fmt, '%')) {
    append(b, fmt, strlen(fmt));
    return;
  }
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
    if (!reserve(b, (size_t)n)) return;
  }
}

void weft__strbuf_puts(weft__strbuf* b, const char* s) { append(b, s, strlen(s)); }

void weft__strbuf_put_json_str(weft__strbuf* b, const char* s) {
  append(b, "\"", 1);
  while (s && *s) {
    size_t run = 0; /* the characters JSON takes as they are, in one append */
    while (s[run] && s[run] != '"' && s[run] != '\\' && (unsigned char)s[run] >= 0x20) run++;
    append(b, s, run);
    s += run;
    if (!*s) break;
    if (*s == '"' || *s == '\\') weft__strbuf_put(b, "\\%c", *s);
    else weft__strbuf_put(b, "\\u%04x", *s);
    s++;
  }
  append(b, "\"", 1);
}

char* weft__strbuf_finish(weft__strbuf* b, const char* op) {
  if (b->oom || !b->buf) {
    free(b->buf);
    return weft__error_null(WEFT_OUT_OF_MEMORY, "%s: out of memory", op);
  }
  return b->buf;
}
