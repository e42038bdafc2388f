/* The packed-weight cache (src/ops/packed_cache.c) under linear and conv2d:
 *   - linear's weight packed once and kept on its storage once versions
 *     count (nothing kept before), the result the same bits as the product
 *     of a copy of the weight (same blocks, same micro-kernel);
 *   - a write into the weight in place (copy_, sub_) repacks: the result
 *     follows the new values;
 *   - a weight that requires grad (training's forward): forward through the
 *     cache, the gradients unchanged;
 *   - conv2d (NCHW and channels_last) the same. */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "core/internal.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/autograd.h"
#include "weft/parallel.h"


static bool same_bits(const weft_tensor* a, const weft_tensor* b) {
  weft_tensor* ac = a ? weft_contiguous(a, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_tensor* bc = b ? weft_contiguous(b, WEFT_CONTIGUOUS_FORMAT) : NULL;
  bool same = ac && bc && ac->numel == bc->numel &&
              memcmp(weft_tensor_data_ptr(ac), weft_tensor_data_ptr(bc), (size_t)ac->numel * 4) == 0;
  weft_tensor_release(ac), weft_tensor_release(bc);
  return same;
}

static weft_tensor* fresh_copy(const weft_tensor* t) { return weft_clone(t, WEFT_PRESERVE_FORMAT); }

static bool has_panels(const weft_tensor* w) { return atomic_load(&w->storage->packed) != NULL; }

/* y = linear(x, w, b) against the same with a copy of w (a storage never cached) */
static bool linear_matches(const weft_tensor* x, const weft_tensor* w, const weft_tensor* b) {
  weft_tensor* wc = fresh_copy(w);
  weft_tensor* y = weft_linear(x, w, b);
  weft_tensor* want = wc ? weft_linear(x, wc, b) : NULL;
  bool ok = same_bits(y, want);
  weft_tensor_release(wc), weft_tensor_release(y), weft_tensor_release(want);
  return ok;
}

static void register_autograd(void) {
  const int64_t s1[1] = {1};
  weft_tensor* t = weft_full(s1, 1, 0.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(t && weft_set_requires_grad(t, true) == WEFT_OK);
  weft_tensor_release(t);
}

static void test_linear(void) {
  const int64_t sx[2] = {37, 300}, sw[2] = {45, 300}, sb[1] = {45};
  weft_tensor* x = weft_randn(sx, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* w = weft_randn(sw, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* b = weft_randn(sb, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  /* before versions count: packed per call, nothing kept */
  CHECK(linear_matches(x, w, b) && !has_panels(w));
  register_autograd();
  for (int threads = 1; threads <= 2; threads++) {
    weft_set_num_threads(threads);
    CHECK(linear_matches(x, w, b) && linear_matches(x, w, NULL));
    CHECK(has_panels(w));
    CHECK(linear_matches(x, w, b)); /* from the kept panels */
  }
  /* written in place: the next call repacks */
  weft_tensor* w2 = weft_randn(sw, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* y1 = weft_linear(x, w, b);
  CHECK(weft_copy_(w, w2) == WEFT_OK);
  weft_tensor* y2 = weft_linear(x, w, b);
  CHECK(linear_matches(x, w, b) && !same_bits(y1, y2));
  CHECK(weft_sub_scalar_(w, weft_scalar_double(0.25), weft_scalar_int(1)) == WEFT_OK);
  CHECK(linear_matches(x, w, b));
  /* a batch of a few rows (the matrix-vector driver) and a 3-D input */
  weft_tensor* x2 = weft_narrow(x, 0, 0, 3);
  CHECK(x2 && linear_matches(x2, w, b));
  const int64_t s3[3] = {4, 9, 300};
  weft_tensor* x3 = weft_randn(s3, 3, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(x3 && linear_matches(x3, w, b));
  weft_tensor_release(y1), weft_tensor_release(y2), weft_tensor_release(w2), weft_tensor_release(x2);
  weft_tensor_release(x3), weft_tensor_release(x), weft_tensor_release(w), weft_tensor_release(b);
  weft_set_num_threads(1);
}

/* training's forward: the weight requires grad; the gradients are those of a copy */
static void test_linear_training(void) {
  const int64_t sx[2] = {20, 64}, sw[2] = {24, 64};
  weft_tensor* x = weft_randn(sx, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* w[2] = {weft_randn(sw, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU), NULL};
  w[1] = fresh_copy(w[0]);
  weft_tensor* loss[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++) {
    CHECK(weft_set_requires_grad(w[i], true) == WEFT_OK);
    weft_tensor* y = weft_linear(x, w[i], NULL);
    weft_tensor* t = y ? weft_tanh(y) : NULL;
    loss[i] = t ? weft_sum(t, (weft_dtype)-1) : NULL;
    CHECK(loss[i] && weft_backward(&loss[i], NULL, 1, false, false) == WEFT_OK);
    weft_tensor_release(y), weft_tensor_release(t);
  }
  CHECK(has_panels(w[0]) && has_panels(w[1]));
  weft_tensor* g0 = weft_tensor_grad(w[0]);
  weft_tensor* g1 = weft_tensor_grad(w[1]);
  CHECK(same_bits(loss[0], loss[1]) && same_bits(g0, g1));
  weft_tensor_release(g0), weft_tensor_release(g1), weft_tensor_release(loss[0]), weft_tensor_release(loss[1]);
  weft_tensor_release(x), weft_tensor_release(w[0]), weft_tensor_release(w[1]);
}

static void test_conv2d(void) {
  const int64_t sx[4] = {2, 6, 9, 7}, sw[4] = {10, 6, 3, 3}, sb[1] = {10}, st[2] = {1, 1}, pad[2] = {1, 1};
  weft_tensor* x = weft_randn(sx, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* xcl = x ? weft_contiguous(x, WEFT_CHANNELS_LAST) : NULL;
  weft_tensor* w = weft_randn(sw, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* b = weft_randn(sb, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  for (int round = 0; round < 2; round++) {
    for (int f = 0; f < 2; f++) {
      const weft_tensor* xi = f ? xcl : x;
      weft_tensor* wc = fresh_copy(w);
      weft_tensor* y = weft_conv2d(xi, w, b, st, 2, pad, 2, st, 2, 1);
      weft_tensor* want = wc ? weft_conv2d(xi, wc, b, st, 2, pad, 2, st, 2, 1) : NULL;
      CHECK(same_bits(y, want));
      weft_tensor_release(wc), weft_tensor_release(y), weft_tensor_release(want);
    }
    CHECK(has_panels(w)); /* autograd registered by test_linear: both layouts' panels kept */
    weft_tensor* w2 = weft_randn(sw, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
    CHECK(weft_copy_(w, w2) == WEFT_OK); /* the second round repacks */
    weft_tensor_release(w2);
  }
  weft_tensor_release(x), weft_tensor_release(xcl), weft_tensor_release(w), weft_tensor_release(b);
}

int main(void) {
  weft_set_num_threads(1);
  test_linear();
  test_linear_training();
  test_conv2d();
  TEST_REPORT();
}
