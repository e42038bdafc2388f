/* Setting this thread's error (src/base/error.c); the status list and the
 * readers (weft_last_error, weft_status_name) are public in weft/error.h.
 * The OOM path formats into a fixed thread-local buffer and never allocates. */
#ifndef WEFT_BASE_ERROR_H
#define WEFT_BASE_ERROR_H

#include <stddef.h>
#include <stdint.h>

#include "weft/error.h"

#if defined(__GNUC__)
#define WEFT__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define WEFT__PRINTF(f, a)
#endif

/* Sets status and message; returns s so callers can `return weft__error(...)`. */
weft_status weft__error(weft_status s, const char* fmt, ...) WEFT__PRINTF(2, 3);
/* Same, returning NULL, for handle-returning calls. */
void* weft__error_null(weft_status s, const char* fmt, ...) WEFT__PRINTF(2, 3);

/* A message "inner: ..." set by an op a composite ran becomes "op: ...", so
 * it names the op the caller called; other messages and OOM's stay as they are. */
void weft__error_rename(const char* inner, const char* op);

/* "[2, 3]" into buf (always terminated); returns the length written. */
size_t weft__format_int_list(char* buf, size_t cap, const int64_t* v, int64_t n);
/* A temporary "[..]" string for error messages: WEFT__LIST(sizes, n). */
typedef struct { char s[256]; } weft__list_buf;
static inline weft__list_buf weft__list(const int64_t* v, int64_t n) {
  weft__list_buf b;
  weft__format_int_list(b.s, sizeof b.s, v, n);
  return b;
}
#define WEFT__LIST(v, n) (weft__list((v), (n)).s)

#endif
