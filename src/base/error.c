/* Thread-local error state. Formatting writes into a fixed buffer so the
 * out-of-memory path never allocates. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/tls.h"

#define WEFT__ERROR_BUF 1024

static WEFT_THREAD_LOCAL weft_status tls_status = WEFT_OK;
static WEFT_THREAD_LOCAL char tls_message[WEFT__ERROR_BUF];

#define WEFT__STATUS_STR(name, msg, js) msg,
static const char* const status_messages[] = {WEFT_STATUS_LIST(WEFT__STATUS_STR)};
#undef WEFT__STATUS_STR
#define WEFT__STATUS_JS(name, msg, js) js,
static const char* const status_names[] = {WEFT_STATUS_LIST(WEFT__STATUS_JS)};
#undef WEFT__STATUS_JS

const char* weft_status_str(weft_status s) {
  if ((unsigned)s >= WEFT_STATUS_COUNT) return "unknown status";
  return status_messages[s];
}

const char* weft_status_name(weft_status s) {
  if ((unsigned)s >= WEFT_STATUS_COUNT) return "UnknownError";
  return status_names[s];
}

const char* weft_last_error(void) { return tls_message; }
weft_status weft_last_status(void) { return tls_status; }

void weft_clear_error(void) {
  tls_status = WEFT_OK;
  tls_message[0] = '\0';
}

static void set_error_v(weft_status s, const char* fmt, va_list ap) {
  tls_status = s;
  int n = vsnprintf(tls_message, sizeof tls_message, fmt, ap);
  if (n < 0) snprintf(tls_message, sizeof tls_message, "%s", weft_status_str(s));
}

weft_status weft__error(weft_status s, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error_v(s, fmt, ap);
  va_end(ap);
  return s;
}

void* weft__error_null(weft_status s, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error_v(s, fmt, ap);
  va_end(ap);
  return NULL;
}

void weft__error_rename(const char* inner, const char* op) {
  size_t n = strlen(inner);
  if (tls_status == WEFT_OUT_OF_MEMORY || strncmp(tls_message, inner, n) != 0 || tls_message[n] != ':') return;
  char rest[WEFT__ERROR_BUF];
  snprintf(rest, sizeof rest, "%s", tls_message + n);
  snprintf(tls_message, sizeof tls_message, "%s%s", op, rest);
}

size_t weft__format_int_list(char* buf, size_t cap, const int64_t* v, int64_t n) {
  size_t used = 0;
  int w = snprintf(buf, cap, "[");
  if (w > 0) used += (size_t)w;
  for (int64_t i = 0; i < n && used < cap; i++) {
    w = snprintf(buf + used, cap - used, i ? ", %lld" : "%lld", (long long)v[i]);
    if (w > 0) used += (size_t)w;
  }
  if (used < cap) {
    w = snprintf(buf + used, cap - used, "]");
    if (w > 0) used += (size_t)w;
  }
  return used;
}
