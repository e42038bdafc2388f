/* Indexing and gathering (issue 13): the PyTorch 1.13 cases of
 * index_cases.inc (tests/fixtures/gen_index_fixtures.py; the same cases as
 * tests/fixtures/index.json) through the boxed dispatcher at 1 and 3
 * threads; registration of every op; a scatter whose last index is out of
 * range leaves self untouched; gather and index_select on a large input at 1
 * and 4 threads against a plain loop; index.Tensor and index_put_ (values,
 * accumulate over repeated indices, a bad index writing nothing). */
#include <stdlib.h>

#include "core/internal.h"
#include "ops/ops.h"
#include "weft/parallel.h"

#include "case_replay.h"
#include "index_cases.inc"

static const fx_table cases = {lin_vals, lin_args, lin_cases, (int)(sizeof lin_cases / sizeof lin_cases[0])};

static void test_registration(void) {
#define WEFT_OP(cname, schema, ...) schema,
  static const char* const schemas[] = {
#include "ops/index.def"
  };
#undef WEFT_OP
  fx_check_registered(schemas, sizeof schemas / sizeof schemas[0], &cases, WEFT_KEY_CPU);
}

static void test_no_partial_write(void) {
  int64_t sx[2] = {4, 5}, si[2] = {2, 5};
  weft_tensor* x = weft_arange(0, 20, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* x2 = x ? weft_view(x, sx, 2) : NULL;
  weft_tensor* idx = weft_empty(si, 2, WEFT_INT64, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  CHECK(x2 && idx);
  if (!x2 || !idx) return;
  int64_t* p = weft_tensor_data_ptr(idx);
  for (int i = 0; i < 10; i++) p[i] = i % 5;
  p[9] = 5;
  CHECK(weft_scatter__value(x2, 1, idx, weft_scalar_double(-1)) == WEFT_INDEX_ERROR);
  CHECK_ERROR_HAS("index 5 is out of bounds for dimension 1 with size 5");
  const float* v = weft_tensor_data_ptr(x2);
  int changed = 0;
  for (int i = 0; i < 20; i++) changed += v[i] != (float)i;
  CHECK(changed == 0);
  weft_tensor_release(idx);
  weft_tensor_release(x2);
  weft_tensor_release(x);
}

/* [300, 257] float32: index_select of 700 indices on dim 1 and gather along
 * dim 0 against plain loops, at 1 and 4 threads */
static void test_large(void) {
  const int64_t R = 300, C = 257, K = 700;
  int64_t sx[2] = {R, C}, sk[1] = {K}, sg[2] = {R, C};
  weft_tensor* x = weft_empty(sx, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* ik = weft_empty(sk, 1, WEFT_INT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* ig = weft_empty(sg, 2, WEFT_INT64, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  CHECK(x && ik && ig);
  if (!x || !ik || !ig) return;
  float* px = weft_tensor_data_ptr(x);
  int32_t* pk = weft_tensor_data_ptr(ik);
  int64_t* pg = weft_tensor_data_ptr(ig);
  for (int64_t i = 0; i < R * C; i++) px[i] = (float)((i * 7919) % 1013);
  for (int64_t i = 0; i < K; i++) pk[i] = (int32_t)((i * 31) % C);
  for (int64_t i = 0; i < R * C; i++) pg[i] = (i * 13) % R;
  for (int th = 1; th <= 4; th += 3) {
    weft_set_num_threads(th);
    weft_tensor* a = weft_index_select(x, 1, ik);
    weft_tensor* b = weft_gather(x, 0, ig, false);
    CHECK(a && b);
    if (a && b) {
      const float *pa = weft_tensor_data_ptr(a), *pb = weft_tensor_data_ptr(b);
      int bad = 0;
      for (int64_t r = 0; r < R; r++) {
        for (int64_t k = 0; k < K; k++) bad += pa[r * K + k] != px[r * C + pk[k]];
        for (int64_t c = 0; c < C; c++) bad += pb[r * C + c] != px[pg[r * C + c] * C + c];
      }
      CHECK(bad == 0);
    }
    weft_tensor_release(a);
    weft_tensor_release(b);
  }
  weft_set_num_threads(1);
  weft_tensor_release(x);
  weft_tensor_release(ik);
  weft_tensor_release(ig);
}

/* t's values in logical order equal want[0..n) */
static bool values_are(weft_tensor* t, const float* want, int64_t n) {
  weft_tensor* c = t ? weft_contiguous(t, WEFT_CONTIGUOUS_FORMAT) : NULL;
  bool ok = c && weft_tensor_numel(c) == n;
  const float* p = c ? weft_tensor_data_ptr(c) : NULL;
  for (int64_t i = 0; ok && i < n; i++) ok = p[i] == want[i];
  weft_tensor_release(c);
  return ok;
}

/* index.Tensor and index_put_ on x = arange(24) as [2, 3, 4], at 1 and 3
 * threads (JS replays PyTorch's cases: tests/fixtures/index_items.json) */
static void test_advanced(void) {
  int64_t s3[3] = {2, 3, 4}, s1[1] = {1};
  weft_tensor* a = weft_arange(0, 24, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* x = weft_view(a, s3, 3);
  weft_tensor* i = weft_arange(0, 2, 1, WEFT_INT64, WEFT_DEVICE_CPU); /* [0, 1] */
  weft_tensor* seven = weft_full(s1, 1, 7, WEFT_INT64, WEFT_DEVICE_CPU);
  weft_tensor* hundred = weft_full(s1, 1, 100, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  for (int th = 1; th <= 3; th += 2) {
    weft_set_num_threads(th);
    const weft_tensor* l1[2] = {NULL, i};
    weft_tensor* r = weft_index_tensor(x, l1, 2); /* x[:, [0, 1]] */
    const float w1[16] = {0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15, 16, 17, 18, 19};
    CHECK(r && values_are(r, w1, 16));
    if (r) CHECK_SIZES(r, 2, 2, 4);
    weft_tensor_release(r);
    const weft_tensor* l2[3] = {i, NULL, i};
    r = weft_index_tensor(x, l2, 3); /* x[[0, 1], :, [0, 1]]: B first */
    const float w2[6] = {0, 4, 8, 13, 17, 21};
    CHECK(r && values_are(r, w2, 6));
    if (r) CHECK_SIZES(r, 2, 3);
    weft_tensor_release(r);
  }
  const weft_tensor* l3[2] = {NULL, seven};
  CHECK(weft_index_tensor(x, l3, 2) == NULL);
  CHECK_ERROR_HAS("index 7 is out of bounds for dimension 0 with size 3");
  /* accumulate: x[[0, 1], :, [0, 1]] += 100, then twice more into one row through repeated indices */
  const weft_tensor* l2[3] = {i, NULL, i};
  CHECK(weft_index_put_(x, l2, 3, hundred, true) == WEFT_OK);
  weft_tensor* zero = weft_full(s1, 1, 0, WEFT_INT64, WEFT_DEVICE_CPU);
  weft_tensor* zz = zero ? weft_expand(zero, (int64_t[]){2}, 1) : NULL;
  const weft_tensor* l4[1] = {zz};
  CHECK(weft_index_put_(x, l4, 1, hundred, true) == WEFT_OK);
  const float* p = weft_tensor_data_ptr(x);
  CHECK(p[0] == 300 && p[4] == 304 && p[1] == 201 && p[12 + 1] == 113 && p[12 + 0] == 12);
  /* a bad index writes nothing */
  const weft_tensor* l5[2] = {i, seven};
  CHECK(weft_index_put_(x, l5, 2, hundred, false) == WEFT_INDEX_ERROR);
  CHECK(p[0] == 300 && p[23] == 23);
  weft_tensor_release(zz);
  weft_tensor_release(zero);
  weft_tensor_release(hundred);
  weft_tensor_release(seven);
  weft_tensor_release(i);
  weft_tensor_release(x);
  weft_tensor_release(a);
  weft_set_num_threads(1);
}

int main(void) {
  fx_replay_threads(&cases);
  test_registration();
  test_no_partial_write();
  test_large();
  test_advanced();
  TEST_REPORT();
}
