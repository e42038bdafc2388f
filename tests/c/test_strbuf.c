/* The JSON text buffer (src/base/strbuf.c): literal text, formatted text and
 * escaped strings appended in any order give one NUL-terminated text, across
 * many regrowths; the op table's JSON is built this way at init. */
#include <stdlib.h>

#include "base/strbuf.h"
#include "test.h"

static void test_mixed_pieces(void) {
  weft__strbuf b = {0};
  weft__strbuf_put(&b, "{\"a\":");
  weft__strbuf_put_json_str(&b, "x\"y\\z\n\x01 end");
  weft__strbuf_put(&b, ",\"n\":%d,\"s\":\"%s\"", 42, "t");
  weft__strbuf_put(&b, ",\"pct\":\"100%%\"}");
  char* s = weft__strbuf_finish(&b, "test");
  CHECK(s != NULL);
  if (s) CHECK(strcmp(s, "{\"a\":\"x\\\"y\\\\z\\u000a\\u0001 end\",\"n\":42,\"s\":\"t\",\"pct\":\"100%\"}") == 0);
  free(s);
}

static void test_empty_and_null_strings(void) {
  weft__strbuf b = {0};
  weft__strbuf_put_json_str(&b, NULL);
  weft__strbuf_put_json_str(&b, "");
  char* s = weft__strbuf_finish(&b, "test");
  CHECK(s != NULL);
  if (s) CHECK(strcmp(s, "\"\"\"\"") == 0);
  free(s);
}

/* Many small appends: every regrowth keeps what was there and the NUL. */
static void test_growth(void) {
  weft__strbuf b = {0};
  for (int i = 0; i < 5000; i++) {
    if (i % 3 == 0) weft__strbuf_put(&b, "ab");
    else if (i % 3 == 1) weft__strbuf_put_json_str(&b, "c\"");
    else weft__strbuf_put(&b, "%d", i % 10);
  }
  char* s = weft__strbuf_finish(&b, "test");
  CHECK(s != NULL);
  if (s) {
    size_t want = 0;
    for (int i = 0; i < 5000; i++) want += i % 3 == 0 ? 2 : i % 3 == 1 ? 5 : 1;
    CHECK_EQ_I64(strlen(s), want);
    CHECK(strncmp(s, "ab\"c\\\"\"2ab", 10) == 0);
    CHECK_EQ_I64(strlen(s), b.len);
  }
  free(s);
}

int main(void) {
  test_mixed_pieces();
  test_empty_and_null_strings();
  test_growth();
  TEST_REPORT();
}
