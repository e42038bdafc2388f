/* libFuzzer target: the boxed call path (what wt.ops.call uses): any op of
 * the table, by index, with a random stack of random ivalues (wrong types,
 * wrong counts, None, lists, strings, enums out of range, tensors of random
 * dtypes and layouts). Every call returns a result or a clean error, and the
 * stack and every tensor are gone afterwards. */
#include "fuzz.h"

/* Integers that matter: small ones, edges, and extremes (no mid-size ones:
 * those ask for gigabytes, which libFuzzer's malloc limit reports). */
static int64_t small_int(fz* f) {
  static const int64_t edge[] = {INT64_MIN, INT64_MAX, -1, 0, 1, 2, 3, 4, -2, 16, 17};
  uint8_t b = fz_u8(f);
  return b < 128 ? (int64_t)(b % 7) - 2 : edge[b % (sizeof edge / sizeof edge[0])];
}

static double any_double(fz* f) {
  static const double v[] = {0, 1, -1.5, 0.5, 3, 1e300, -1e300, 1.0 / 0.0, -1.0 / 0.0, 0.0 / 0.0, 2.5e-308, 100};
  return v[fz_u8(f) % (sizeof v / sizeof v[0])];
}

static weft_status push_random(fz* f, weft_stack* st) {
  switch (fz_u8(f) % 13) {
    case 0: return weft_stack_push_none(st);
    case 1:
    case 2:
    case 3: return weft_stack_push_tensor_owned(st, fz_strided(f, fz_dtype(f), 4));
    case 4: return weft_stack_push_int(st, small_int(f));
    case 5: return weft_stack_push_double(st, any_double(f));
    case 6: return weft_stack_push_bool(st, fz_bool(f));
    case 7: {
      int64_t n = fz_range(f, 0, 5), v[5];
      for (int64_t i = 0; i < n; i++) v[i] = small_int(f);
      return weft_stack_push_int_list(st, v, n);
    }
    case 8: {
      static const char* s[] = {"", "cpu", "meta", "mean", "float32", "channels_last", "\xff", "none"};
      return weft_stack_push_string(st, s[fz_u8(f) % 8]);
    }
    case 9: return weft_stack_push_dtype(st, (weft_dtype)fz_range(f, -1, WEFT_DTYPE_COUNT));
    case 10: return weft_stack_push_memory_format(st, (weft_memory_format)fz_range(f, -1, WEFT_MEMORY_FORMAT_COUNT));
    case 11: return weft_stack_push_device(st, (weft_device)fz_range(f, -1, 2));
    default: {
      weft_tensor* ts[3];
      int64_t n = fz_range(f, 0, 3);
      for (int64_t i = 0; i < n; i++) ts[i] = fz_strided(f, fz_dtype(f), 3);
      weft_status s = weft_stack_push_tensor_list(st, ts, n);
      for (int64_t i = 0; i < n; i++) weft_tensor_release(ts[i]);
      return s;
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fz f = {data, size};
  static bool once;
  if (!once) {
    weft_init();
    weft_set_num_threads(1);
    once = true;
  }
  fz_begin();
  const weft_op* op = weft_op_at(fz_range(&f, 0, weft_op_count() - 1));
  weft_stack st;
  weft_stack_init(&st);
  int64_t given = fz_range(&f, 0, 7);
  weft_status s = WEFT_OK;
  for (int64_t i = 0; i < given && s == WEFT_OK; i++) s = push_random(&f, &st);
  if (s != WEFT_OK) FUZZ_FAIL("push failed: %s", weft_last_error());
  s = weft_op_prepare_args(op, &st, given);
  if (s == WEFT_OK) s = weft_op_call_boxed(op, &st);
  if (s != WEFT_OK) fz_clean_error(weft_op_name(op));
  for (int64_t i = 0; i < st.size; i++) /* results are well-formed */
    if (st.v[i].tag == WEFT_IV_TENSOR && st.v[i].u.t && weft_tensor_numel(st.v[i].u.t) < 0) FUZZ_FAIL("bad result");
  weft_stack_clear(&st);
  fz_end();
  return 0;
}
