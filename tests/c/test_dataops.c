/* Issue 25's data ops in C: index_add and bincount give the same bits at 1
 * and 3 threads with repeated indices, histc's edge cases, index_fill's
 * negative indices, errors checked before anything is written, a clean
 * OutOfMemory at every failing allocation, and no leaks. PyTorch's values
 * are replayed by tests/js/dataops-fixtures.test.mjs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/alloc.h"
#include "weft/autograd.h"
#include "weft/parallel.h"

static weft_tensor* ints(int64_t n, int64_t hi, unsigned seed) {
  weft_tensor* t = weft_empty(&n, 1, WEFT_INT64, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  srand(seed);
  for (int64_t i = 0; i < n; i++) ((int64_t*)weft_tensor_data_ptr(t))[i] = rand() % hi;
  return t;
}
static const float* f32(const weft_tensor* t) { return weft_tensor_data_ptr(t); }
static bool same_bits(const weft_tensor* a, const weft_tensor* b) {
  return a && b && a->numel == b->numel &&
         !memcmp(weft_tensor_data_ptr(a), weft_tensor_data_ptr(b), (size_t)a->numel * weft_dtype_size(a->dtype));
}

static void test_threads(void) {
  const int64_t xs[2] = {40, 257}, ss[2] = {600, 257};
  weft_tensor *x = weft_randn(xs, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU), *src = weft_randn(ss, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor *idx = ints(600, 40, 3), *labels = ints(50000, 97, 4);
  const int64_t n = 50000;
  weft_tensor* w = weft_randn(&n, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* r[2][3];
  for (int t = 0; t < 2; t++) {
    weft_set_num_threads(t ? 3 : 1);
    r[t][0] = weft_index_add(x, 0, idx, src, weft_scalar_double(0.7));
    r[t][1] = weft_bincount(labels, w, 0);
    r[t][2] = weft_bincount(labels, NULL, 100);
  }
  weft_set_num_threads(1);
  for (int i = 0; i < 3; i++) CHECK(same_bits(r[0][i], r[1][i]));
  CHECK_SIZES(r[0][2], 100);
  int64_t total = 0;
  for (int i = 0; i < 100; i++) total += ((int64_t*)weft_tensor_data_ptr(r[0][2]))[i];
  CHECK_EQ_I64(total, 50000);
  /* a row's sum: x's row plus 0.7 times each source row sent to it, in index order */
  const int64_t* iv = weft_tensor_data_ptr(idx);
  float want = f32(x)[5 * 257 + 3];
  for (int i = 0; i < 600; i++)
    if (iv[i] == 5) want += 0.7f * f32(src)[i * 257 + 3];
  CHECK(fabsf(f32(r[0][0])[5 * 257 + 3] - want) <= 1e-4f * (1 + fabsf(want)));
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < 3; i++) weft_tensor_release(r[t][i]);
  weft_tensor_release(x), weft_tensor_release(src), weft_tensor_release(idx), weft_tensor_release(labels);
  weft_tensor_release(w);
}

static void test_histc_and_fill(void) {
  const int64_t n = 5;
  weft_tensor* x = weft_empty(&n, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  const float v[5] = {0.f, 0.25f, 1.f, NAN, 2.f};
  memcpy(weft_tensor_data_ptr(x), v, sizeof v);
  weft_tensor* h = weft_histc(x, 4, weft_scalar_int(0), weft_scalar_int(1));
  /* 1 is the top edge, 2 is out, NaN counts in the first bin as 1.13 counts it */
  CHECK(h && f32(h)[0] == 2 && f32(h)[1] == 1 && f32(h)[2] == 0 && f32(h)[3] == 1);
  weft_tensor_release(h);
  CHECK(!weft_histc(x, 4, weft_scalar_int(3), weft_scalar_int(1)));
  CHECK_ERROR_HAS("torch.histc: max must be larger than min");
  weft_tensor* neg = weft_full(&(int64_t){2}, 1, -1, WEFT_INT64, WEFT_DEVICE_CPU);
  CHECK(weft_index_fill__scalar(x, 0, neg, weft_scalar_double(7)) == WEFT_OK && f32(x)[4] == 7.f);
  ((int64_t*)weft_tensor_data_ptr(neg))[1] = -6;
  CHECK(weft_index_fill__scalar(x, 0, neg, weft_scalar_double(9)) != WEFT_OK);
  CHECK_ERROR_HAS("index -6 is out of bounds for dimension 0 with size 5");
  CHECK(f32(x)[4] == 7.f); /* checked before anything was written */
  weft_tensor_release(neg), weft_tensor_release(x);
}

/* ---- allocation failures: every failing allocation gives a clean OutOfMemory and leaves nothing ---- */
static weft_tensor* fault_run(int which, weft_tensor* x, weft_tensor* idx, weft_tensor* src) {
  if (which == 1) return weft_bincount(idx, NULL, 3);
  if (which == 2) return weft_histc(idx, 5, weft_scalar_int(0), weft_scalar_int(0)); /* idx: float32 here */
  if (which == 3) return weft_one_hot(idx, -1);
  weft_tensor* y = weft_index_add(x, 0, idx, src, weft_scalar_int(2));
  weft_tensor* s = y ? weft_sum(y, (weft_dtype)-1) : NULL;
  weft_tensor* g[2] = {NULL, NULL};
  weft_tensor* diff[2] = {x, src};
  weft_status st = s ? weft_autograd_grad(&s, NULL, 1, diff, 2, false, false, false, g) : weft_last_status();
  weft_tensor_release(y), weft_tensor_release(s), weft_tensor_release(g[0]);
  return st == WEFT_OK ? g[1] : NULL;
}

typedef struct {
  int which;
  weft_tensor *x, *idx, *src;
} fault_ctx;

static bool fault_ok(void* ctx) {
  const fault_ctx* c = ctx;
  weft_tensor* r = fault_run(c->which, c->x, c->idx, c->src);
  weft_tensor_release(r);
  return r != NULL;
}

static void test_allocation_failures(void) {
  const int64_t xs[2] = {4, 3}, ss[2] = {5, 3};
  weft_tensor *x = weft_randn(xs, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU), *src = weft_randn(ss, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor *idx = ints(5, 4, 8), *plain = weft_randn(ss, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_set_requires_grad(x, true), weft_set_requires_grad(src, true);
  for (int which = 0; which < 4; which++) {
    check_fails_cleanly(fault_ok, &(fault_ctx){which, x, which == 2 ? plain : idx, src}, 2000);
  }
  weft_tensor_release(x), weft_tensor_release(src), weft_tensor_release(idx), weft_tensor_release(plain);
}

int main(void) {
  weft_manual_seed(25);
  test_threads();
  test_histc_and_fill();
  test_allocation_failures();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
