/* weft_explain_boxed: any op's iterator plan, with its loops skipped. */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "weft/weft.h"

static char* explain(const char* name, weft_stack* st, int64_t given) {
  weft_op* op = weft_op_find(name);
  CHECK(op != NULL);
  char* json = NULL;
  CHECK(weft_op_prepare_args(op, st, given) == WEFT_OK);
  CHECK(weft_explain_boxed(op, st, &json) == WEFT_OK);
  CHECK_EQ_I64(st->size, 0);
  return json;
}

/* The seed's [1,64,5,4] contiguous -> channels_last copy. */
static void test_contiguous_channels_last(void) {
  int64_t s[] = {1, 64, 5, 4};
  weft_tensor* x = weft_empty(s, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  weft_stack st;
  weft_stack_init(&st);
  weft_stack_push_tensor(&st, x);
  weft_stack_push_memory_format(&st, WEFT_CHANNELS_LAST);
  char* json = explain("contiguous", &st, 2);
  CHECK(json != NULL);
  if (json) {
    CHECK(strstr(json, "\"op\":\"copy_\"") != NULL);
    CHECK(strstr(json, "\"shape\":[64,20]") != NULL);
    CHECK(strstr(json, "\"strides\":[[4,256],[80,4]]") != NULL);
    free(json);
  }
  /* already contiguous: no iterator */
  weft_stack_push_tensor(&st, x);
  CHECK(explain("contiguous", &st, 1) == NULL);
  weft_stack_clear(&st);
  weft_tensor_release(x);
}

/* copy_ is explained without writing. */
static void test_copy_untouched(void) {
  int64_t s[] = {4, 3};
  weft_tensor* dst = weft_full(s, 2, 0.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* src = weft_full(s, 2, 7.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* srct = weft_t(src);
  weft_tensor* dstt = weft_t(dst);
  weft_stack st;
  weft_stack_init(&st);
  weft_stack_push_tensor(&st, dstt);
  weft_stack_push_tensor(&st, srct);
  char* json = explain("copy_", &st, 2);
  CHECK(json != NULL);
  free(json);
  const float* d = weft_tensor_data_ptr(dst);
  for (int i = 0; i < 12; i++) CHECK(d[i] == 0.0f);
  /* errors pass through, and explaining ends */
  int64_t s3[] = {5};
  weft_tensor* bad = weft_empty(s3, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  weft_op* op = weft_op_find("copy_");
  weft_stack_push_tensor(&st, bad);
  weft_stack_push_tensor(&st, src);
  char* none = NULL;
  CHECK(weft_explain_boxed(op, &st, &none) != WEFT_OK);
  CHECK(none == NULL);
  CHECK_EQ_I64(st.size, 0);
  CHECK(!weft_explaining());
  weft_tensor* all[] = {dst, src, srct, dstt, bad};
  for (int i = 0; i < 5; i++) weft_tensor_release(all[i]);
}

int main(void) {
  test_contiguous_channels_last();
  test_copy_untouched();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
