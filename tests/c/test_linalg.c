/* The matmul family (issue 12): the PyTorch 1.13 cases of linalg_cases.inc
 * (tests/fixtures/gen_linalg_fixtures.py; the same cases as
 * tests/fixtures/linalg.json) through the boxed dispatcher at 1 and 3
 * threads and with the scalar GEMM kernels; registration of every op; Meta
 * tensors; x @ w.T on a large transposed weight against a float64
 * reference. */
#include <stdlib.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "ops/ops.h"
#include "weft/parallel.h"

#include "case_replay.h"
#include "linalg_cases.inc"

static const fx_table cases = {lin_vals, lin_args, lin_cases, (int)(sizeof lin_cases / sizeof lin_cases[0])};

static void test_registration(void) {
#define WEFT_OP(cname, schema, ...) schema,
  static const char* const schemas[] = {
#include "ops/linalg.def"
  };
#undef WEFT_OP
  fx_check_registered(schemas, sizeof schemas / sizeof schemas[0], &cases, WEFT_KEY_CPU);
}

static void test_meta(void) {
  int64_t sa[3] = {4, 2, 3}, sb[2] = {3, 5};
  weft_tensor* a = weft_empty(sa, 3, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* b = weft_empty(sb, 2, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* r = weft_matmul(a, b);
  CHECK(r && weft_tensor_device(r) == WEFT_DEVICE_META);
  if (r) CHECK_SIZES(r, 4, 2, 5);
  weft_tensor* e = weft_mm(b, b);
  CHECK(!e);
  CHECK_ERROR_HAS("mat1 and mat2 shapes cannot be multiplied (3x5 and 3x5)");
  weft_tensor_release(r);
  weft_tensor_release(a);
  weft_tensor_release(b);
}

/* x @ w.T with w [256, 784] read transposed, at 1 and 4 threads */
static void test_linear_large(void) {
  int64_t sx[2] = {64, 784}, sw[2] = {256, 784};
  weft_manual_seed(3);
  weft_tensor* x = weft_randn(sx, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* w = weft_randn(sw, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  for (int th = 1; th <= 4; th += 3) {
    weft_set_num_threads(th);
    weft_tensor* y = weft_linear(x, w, NULL);
    CHECK(y != NULL);
    if (!y) continue;
    const float *px = weft_tensor_data_ptr(x), *pw = weft_tensor_data_ptr(w), *py = weft_tensor_data_ptr(y);
    int bad = 0;
    for (int64_t i = 0; i < 64; i++)
      for (int64_t j = 0; j < 256; j++) {
        double s = 0;
        for (int64_t k = 0; k < 784; k++) s += (double)px[i * 784 + k] * pw[j * 784 + k];
        bad += fabs(py[i * 256 + j] - s) > 1e-3;
      }
    CHECK(bad == 0);
    weft_tensor_release(y);
  }
  weft_set_num_threads(1);
  weft_tensor_release(x);
  weft_tensor_release(w);
}

int main(void) {
  fx_replay_threads(&cases);
  test_registration();
  test_meta();
  test_linear_large();
  TEST_REPORT();
}
