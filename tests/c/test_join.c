/* Joining and splitting through the C API: weft_cat's list argument and
 * the split family's weft_tensor_list (views, their release), the block
 * driver against a plain reference on random geometries at 1 and 3 threads
 * (bit for bit), the block path against the strided one, formats, out=,
 * Meta tensors and errors. PyTorch's values and messages are checked in
 * tests/js/join-fixtures.test.mjs. */
#include <stdlib.h>

#include "core/internal.h"
#include "ops/cpu/cat.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/parallel.h"

static weft_tensor* arange_f32(double from, int64_t n0, int64_t n1) {
  weft_tensor* a = weft_arange(from, from + (double)(n0 * n1), 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* r = weft_view(a, (const int64_t[]){n0, n1}, 2);
  weft_tensor_release(a);
  return r;
}

static bool same_values(const weft_tensor* a, const weft_tensor* b) {
  if (weft_tensor_numel(a) != weft_tensor_numel(b) || weft_tensor_dim(a) != weft_tensor_dim(b)) return false;
  weft_tensor* ac = weft_contiguous((weft_tensor*)a, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* bc = weft_contiguous((weft_tensor*)b, WEFT_CONTIGUOUS_FORMAT);
  bool ok = true;
  for (int64_t i = 0; i < weft_tensor_numel(a); i++) ok &= weft_tensor_get_double(ac, i) == weft_tensor_get_double(bc, i);
  weft_tensor_release(ac);
  weft_tensor_release(bc);
  return ok;
}

/* cat of contiguous inputs (block path) equals the cat of transposed
 * copies of them (strided path), along both dims; stack's shape. */
static void test_cat_paths(void) {
  weft_tensor* a = arange_f32(0, 2, 3);
  weft_tensor* b = arange_f32(100, 4, 3);
  const weft_tensor* ab[] = {a, b};
  weft_tensor* r = weft_cat(ab, 2, 0);
  CHECK_SIZES(r, 6, 3);
  CHECK(weft_tensor_get_double(r, 5) == 5 && weft_tensor_get_double(r, 6) == 100);
  /* the same through transposed (non-contiguous) inputs */
  weft_tensor* at = weft_t(a);
  weft_tensor* bt = weft_t(b);
  weft_tensor* att = weft_t(at);
  weft_tensor* btt = weft_contiguous(bt, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* bttt = weft_t(btt);
  const weft_tensor* mixed[] = {att, bttt};
  weft_tensor* r2 = weft_cat(mixed, 2, -2);
  CHECK(r2 && same_values(r, r2));
  /* along dim 1 */
  const weft_tensor* tt[] = {at, bt};
  weft_tensor* r3 = weft_cat(tt, 2, 1);
  CHECK_SIZES(r3, 3, 6);
  CHECK(weft_tensor_get_double(r3, 2) == 100 && weft_tensor_get_double(r3, 6) == 1);
  weft_tensor* s = weft_op_stack(ab, 1, 1);
  CHECK_SIZES(s, 2, 1, 3);
  weft_tensor* rs[] = {r, r2, r3, s, at, bt, att, btt, bttt, a, b};
  for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) weft_tensor_release(rs[i]);
}

/* mixed dtypes promote; out= keeps its dtype when the cast is allowed. */
static void test_cat_dtypes_out(void) {
  weft_tensor* f = arange_f32(0.5, 1, 2);
  weft_tensor* i = weft_arange(0, 2, 1, WEFT_INT64, WEFT_DEVICE_CPU);
  weft_tensor* i2 = weft_view(i, (const int64_t[]){1, 2}, 2);
  const weft_tensor* fi[] = {i2, f};
  weft_tensor* r = weft_cat(fi, 2, 0);
  CHECK(weft_tensor_dtype(r) == WEFT_FLOAT32);
  CHECK(weft_tensor_get_double(r, 1) == 1 && weft_tensor_get_double(r, 2) == 0.5);
  weft_tensor* o = weft_empty((const int64_t[]){1}, 1, WEFT_INT64, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  CHECK(weft_cat_out(fi, 2, 0, o) == NULL);
  CHECK_ERROR_HAS("cat(): input types can't be cast to the desired output type int64");
  weft_tensor* od = weft_empty((const int64_t[]){7}, 1, WEFT_FLOAT64, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* w = weft_cat_out(fi, 2, 1, od);
  CHECK(w == od);
  CHECK_SIZES(od, 1, 4);
  CHECK(weft_tensor_get_double(od, 3) == 1.5);
  /* an input that is the output */
  const weft_tensor* self_in[] = {od, od};
  CHECK(weft_cat_out(self_in, 2, 0, od) == NULL);
  CHECK_ERROR_HAS("some elements of the input tensor and the written-to tensor refer to a single memory location");
  weft_tensor* rs[] = {f, i, i2, r, o, od, w};
  for (size_t k = 0; k < sizeof rs / sizeof rs[0]; k++) weft_tensor_release(rs[k]);
}

/* channels_last inputs give a channels_last output (both paths), a mix a contiguous one. */
static void test_cat_formats(void) {
  const int64_t sz[] = {2, 3, 2, 2};
  weft_tensor* x = weft_rand(sz, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* xl = weft_contiguous(x, WEFT_CHANNELS_LAST);
  const weft_tensor* ll[] = {xl, xl};
  for (int64_t dim = 0; dim < 4; dim++) {
    weft_tensor* r = weft_cat(ll, 2, dim);
    weft_tensor* want = weft_cat((const weft_tensor* const[]){x, x}, 2, dim);
    CHECK(r && weft_tensor_is_contiguous(r, WEFT_CHANNELS_LAST) && same_values(r, want));
    weft_tensor_release(r);
    weft_tensor_release(want);
  }
  const weft_tensor* mix[] = {xl, x};
  weft_tensor* m = weft_cat(mix, 2, 1);
  CHECK(m && weft_tensor_is_contiguous(m, WEFT_CONTIGUOUS_FORMAT));
  weft_tensor_release(m);
  weft_tensor_release(xl);
  weft_tensor_release(x);
}

/* the driver: random rows and blocks (empty ones too) at 1 and 3 threads. */
static void test_blocks_driver(void) {
  srand(7);
  for (int round = 0; round < 40; round++) {
    int64_t n = 1 + rand() % 5, rows = rand() % 4 == 0 ? 1 : 1 + rand() % 300;
    size_t bytes[5], row = 0;
    unsigned char* src[5];
    for (int64_t i = 0; i < n; i++) {
      bytes[i] = rand() % 6 == 0 ? 0 : (size_t)(1 + rand() % (round < 20 ? 64 : 300000));
      row += bytes[i];
      src[i] = malloc(bytes[i] * (size_t)rows + 1);
      for (size_t k = 0; k < bytes[i] * (size_t)rows; k++) src[i][k] = (unsigned char)rand();
    }
    unsigned char* want = malloc(row * (size_t)rows + 1);
    unsigned char* got = malloc(row * (size_t)rows + 1);
    for (int64_t r = 0, at = 0; r < rows; r++)
      for (int64_t i = 0; i < n; i++, at += (int64_t)bytes[i - 1]) memcpy(want + at, src[i] + r * bytes[i], bytes[i]);
    for (int threads = 3; threads >= TEST_FIRST_THREADS; threads -= 2) { /* 3, then 1 */
      weft_set_num_threads(threads);
      memset(got, 0xAB, row * (size_t)rows);
      CHECK(weft__cat_blocks(got, (const void* const*)src, bytes, n, rows) == WEFT_OK);
      CHECK(memcmp(got, want, row * (size_t)rows) == 0);
    }
    for (int64_t i = 0; i < n; i++) free(src[i]);
    free(want);
    free(got);
  }
  weft_set_num_threads(1);
}

/* split family: views of self, released as one list */
static void test_splits(void) {
  weft_tensor* a = arange_f32(0, 5, 2);
  int64_t tensors = weft_memory().tensors;
  weft_tensor_list l = weft_split(a, 2, 0);
  CHECK(l.t && l.n == 3);
  CHECK_SIZES(l.t[2], 1, 2);
  CHECK(weft_tensor_storage(l.t[1]) == weft_tensor_storage(a) && weft_tensor_storage_offset(l.t[1]) == 4);
  weft_tensor_list_release(l);
  CHECK_EQ_I64(weft_memory().tensors, tensors);
  l = weft_chunk(a, 2, 1);
  CHECK(l.t && l.n == 2 && weft_tensor_strides(l.t[1])[0] == 2);
  weft_tensor_list_release(l);
  l = weft_unbind(a, -1);
  CHECK(l.t && l.n == 2);
  CHECK_SIZES(l.t[0], 5);
  weft_tensor_list_release(l);
  l = weft_tensor_split_indices(a, (const int64_t[]){1, -1, 9}, 3, 0);
  CHECK(l.t && l.n == 4 && weft_tensor_sizes(l.t[0])[0] == 1 && weft_tensor_sizes(l.t[1])[0] == 3 &&
        weft_tensor_sizes(l.t[2])[0] == 1 && weft_tensor_sizes(l.t[3])[0] == 0);
  weft_tensor_list_release(l);
  l = weft_split_with_sizes(a, (const int64_t[]){1, 3}, 2, 0);
  CHECK(l.t == NULL && l.n == 0);
  CHECK_ERROR_HAS("split_with_sizes expects split_sizes to sum exactly to 5 (input tensor's size at dimension 0), "
                  "but got split_sizes=[1, 3]");
  weft_tensor* z = weft_empty((const int64_t[]){0}, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  l = weft_chunk(z, 3, 0); /* an empty dim keeps the number of chunks */
  CHECK(l.t && l.n == 3);
  weft_tensor_list_release(l);
  l = weft_unbind(z, 0); /* no piece at all: an empty list, not an error */
  CHECK(l.t != NULL && l.n == 0);
  weft_tensor_list_release(l);
  CHECK_EQ_I64(weft_memory().tensors, tensors + 1);
  weft_tensor_release(z);
  weft_tensor_release(a);
}

static void test_errors_meta(void) {
  CHECK(weft_cat(NULL, 0, 0) == NULL);
  CHECK_ERROR_HAS("cat(): expected a non-empty list of Tensors");
  weft_tensor* a = weft_empty((const int64_t[]){2, 3}, 2, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* b = weft_empty((const int64_t[]){2, 4}, 2, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  const weft_tensor* ab[] = {a, b};
  weft_tensor* r = weft_cat(ab, 2, 1);
  CHECK(r && weft_tensor_device(r) == WEFT_DEVICE_META);
  CHECK_SIZES(r, 2, 7);
  weft_tensor_release(r);
  CHECK(weft_cat(ab, 2, 0) == NULL);
  CHECK_ERROR_HAS("cat: Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for "
                  "tensor number 1 in the list.");
  CHECK(weft_op_stack(ab, 2, 0) == NULL);
  CHECK_ERROR_HAS("stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 4] at entry 1");
  CHECK(weft_hstack(ab, 0) == NULL);
  CHECK(weft_last_status() == WEFT_INVALID_ARGUMENT);
  weft_tensor_release(a);
  weft_tensor_release(b);
}

int main(void) {
  int64_t tensors = weft_memory().tensors;
  test_cat_paths();
  test_cat_dtypes_out();
  test_cat_formats();
  test_blocks_driver();
  test_splits();
  test_errors_meta();
  CHECK_EQ_I64(weft_memory().tensors, tensors);
  TEST_REPORT();
}
