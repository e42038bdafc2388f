/* libFuzzer target: schema strings (src/dispatch/schema.c).
 * Any text parses or fails with a clean error; a parsed schema prints to a
 * canonical text that parses again and prints the same (a fixed point). */
#include "fuzz.h"

static void check_fixed_point(const weft_schema* s) {
  size_t n = weft_schema_format(s, NULL, 0);
  char* a = malloc(n + 1);
  if (!a) abort();
  if (weft_schema_format(s, a, n + 1) != n || strlen(a) != n) FUZZ_FAIL("schema_format length");
  weft_schema* again = weft_schema_parse(a, "aten");
  if (!again) FUZZ_FAIL("printed schema does not parse: \"%s\": %s", a, weft_last_error());
  size_t m = weft_schema_format(again, NULL, 0);
  char* b = malloc(m + 1);
  if (!b) abort();
  weft_schema_format(again, b, m + 1);
  if (strcmp(a, b) != 0) FUZZ_FAIL("not a fixed point:\n  %s\n  %s", a, b);
  if (again->nargs != s->nargs || again->nreturns != s->nreturns) FUZZ_FAIL("argument count changed: %s", a);
  weft_schema_free(again);
  free(a);
  free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  char* text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  fz_begin();
  weft_schema* s = weft_schema_parse(text, size & 1 ? "aten" : NULL);
  if (s) {
    if (!s->full_name || !s->name || !s->ns || !s->overload) FUZZ_FAIL("parsed schema without a name");
    for (int i = 0; i < s->nargs; i++) {
      char buf[8];
      weft_arg_type_format(&s->args[i], buf, sizeof buf); /* truncation must be safe */
    }
    check_fixed_point(s);
    weft_schema_free(s);
  } else {
    fz_clean_error("schema_parse");
  }
  free(text);
  fz_end();
  return 0;
}
