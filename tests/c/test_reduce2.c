/* Two-result reductions and scans (issue 11): the PyTorch 1.13 cases of
 * reduce2_cases.inc (tests/fixtures/gen_reduce2_fixtures.py: max.dim,
 * min.dim, var_mean, std_mean, cumsum, cumprod and their out= / in-place
 * forms) replayed through the boxed dispatcher at 1 and 3 threads, each
 * returned tensor checked (a tuple's two in order); the typed entry points
 * (weft_tensor2); the scans at 1-4 threads on sizes around the kernels'
 * panels and the grain; Meta kernels; nothing left behind on errors. */
#include <stdint.h>
#include <stdlib.h>

#include "core/internal.h"
#include "reduce_replay.h"
#include "test.h"
#include "weft/parallel.h"
#include "weft/weft.h"


#include "reduce2_cases.inc"

static const rd_tables tables = {rd_cases, rd_args, rd_vals};
#define NROWS ((int)(sizeof rd_cases / sizeof rd_cases[0]))


/* ---- typed entry points ---- */

static weft_tensor* arange_f32(const int64_t* sizes, int nd) {
  int64_t n = 1;
  for (int d = 0; d < nd; d++) n *= sizes[d];
  weft_tensor* a = weft_arange(0, (double)n, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* r = weft_view(a, sizes, nd);
  weft_tensor_release(a);
  return r;
}

static void test_typed(void) {
  int64_t before = weft_memory().tensors;
  int64_t s[] = {3, 4};
  weft_tensor* x = arange_f32(s, 2);
  weft_tensor2 r = weft_max_dim(x, 1, false);
  CHECK(r.t[0] && r.t[1]);
  CHECK_SIZES(r.t[0], 3);
  CHECK(weft_tensor_dtype(r.t[1]) == WEFT_INT64 && weft_tensor_get_double(r.t[1], 2) == 3);
  CHECK(weft_tensor_get_double(r.t[0], 2) == 11);
  weft_tensor2_release(r);
  r = weft_min_dim(x, 2, false);
  CHECK(r.t[0] == NULL && r.t[1] == NULL);
  CHECK_ERROR_HAS("Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  weft_tensor* v = weft_empty((int64_t[]){0}, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* i = weft_empty((int64_t[]){0}, 1, WEFT_INT64, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  r = weft_min_dim_out(x, 0, true, v, i);
  CHECK(r.t[0] == v && r.t[1] == i);
  CHECK_SIZES(i, 1, 4);
  weft_tensor2_release(r);
  r = weft_var_mean_dim(x, (int64_t[]){1}, 1, true, false);
  CHECK(r.t[0] && fabs(weft_tensor_get_double(r.t[0], 0) - 5.0 / 3.0) < 1e-6);
  CHECK(r.t[1] && weft_tensor_get_double(r.t[1], 1) == 5.5);
  weft_tensor2_release(r);
  weft_tensor* c = weft_cumsum(x, 0, (weft_dtype)-1);
  CHECK(c && weft_tensor_get_double(c, 11) == 3 + 7 + 11);
  weft_tensor_release(c);
  CHECK(weft_cumprod_(x, 1, WEFT_FLOAT64) != WEFT_OK);
  CHECK_ERROR_HAS("Bad in-place call: input tensor dtype float32 and output tensor dtype float64 should match");
  CHECK(weft_cumsum_(x, 1, (weft_dtype)-1) == WEFT_OK);
  CHECK(weft_tensor_get_double(x, 3) == 0 + 1 + 2 + 3);
  weft_tensor_release(v);
  weft_tensor_release(i);
  weft_tensor_release(x);
  CHECK_EQ_I64(weft_memory().tensors, before);
}

/* ---- the scans against a float64 reference, 1-4 threads, layouts ---- */

static void check_scan(const weft_tensor* x, int64_t dim, bool prod) {
  weft_tensor* y = prod ? weft_cumprod(x, dim, (weft_dtype)-1) : weft_cumsum(x, dim, (weft_dtype)-1);
  CHECK(y != NULL);
  if (!y) return;
  int nd = (int)weft_tensor_dim(x);
  const int64_t* sz = weft_tensor_sizes(x);
  int64_t n = weft_tensor_numel(x), inner = 1;
  for (int d = nd - 1; d > dim; d--) inner *= sz[d];
  int bad = 0;
  for (int64_t i = 0; i < n; i++) {
    /* element i (row-major): the same line's previous elements along dim */
    int64_t k = (i / inner) % sz[dim];
    double acc = prod ? 1 : 0;
    for (int64_t j = 0; j <= k; j++) {
      double v = fx_element(x, i - (k - j) * inner);
      acc = prod ? acc * v : acc + v;
    }
    bad += (float)acc != (float)fx_element(y, i);
  }
  if (bad) fprintf(stderr, "scan: prod %d dim %lld ndim %d: %d bad\n", prod, (long long)dim, nd, bad);
  CHECK_EQ_I64(bad, 0);
  weft_tensor_release(y);
}

static void test_scan_threads(void) {
  static const int64_t shapes[][3] = {{3, 5, 7}, {2, 33, 17}, {1, 1031, 9}, {65, 3, 300}};
  for (int threads = TEST_FIRST_THREADS; threads <= 4; threads++) {
    weft_set_num_threads(threads);
    for (int s = 0; s < 4; s++) {
      weft_tensor* x = weft_rand(shapes[s], 3, WEFT_FLOAT32, WEFT_DEVICE_CPU);
      weft_tensor* h = weft_add_scalar(x, weft_scalar_double(0.5), weft_scalar_int(1)); /* cumprod stays finite */
      weft_tensor* t = weft_transpose(h, 0, 2);
      for (int64_t d = 0; d < 3; d++) {
        check_scan(x, d, false);
        check_scan(t, d, false);
        check_scan(h, d, true);
      }
      weft_tensor_release(t);
      weft_tensor_release(h);
      weft_tensor_release(x);
    }
  }
  weft_set_num_threads(1);
}

static void test_meta(void) {
  int64_t s[] = {2, 3, 4};
  weft_tensor* m = weft_empty(s, 3, WEFT_INT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor2 r = weft_max_dim(m, 1, true);
  CHECK(r.t[0] && weft_tensor_device(r.t[0]) == WEFT_DEVICE_META && weft_tensor_dtype(r.t[0]) == WEFT_INT32);
  CHECK(r.t[1] && weft_tensor_dtype(r.t[1]) == WEFT_INT64);
  CHECK_SIZES(r.t[1], 2, 1, 4);
  weft_tensor2_release(r);
  weft_tensor* c = weft_cumsum(m, -1, (weft_dtype)-1);
  CHECK(c && weft_tensor_device(c) == WEFT_DEVICE_META && weft_tensor_dtype(c) == WEFT_INT64);
  CHECK_SIZES(c, 2, 3, 4);
  weft_tensor_release(c);
  weft_tensor* f = weft_empty(s, 3, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  r = weft_var_mean_correction(f, (int64_t[]){0, 2}, 2, 0, false);
  CHECK(r.t[0] && weft_tensor_device(r.t[1]) == WEFT_DEVICE_META);
  CHECK_SIZES(r.t[1], 3);
  weft_tensor2_release(r);
  const char* names[] = {"aten::max.dim", "aten::min.dim_min", "aten::cumsum", "aten::cumprod_", "aten::cumsum.out"};
  for (int i = 0; i < 5; i++) {
    weft_op* op = weft_op_find(names[i]);
    CHECK(op && weft_op_has_kernel(op, WEFT_KEY_META) && weft_op_has_kernel(op, WEFT_KEY_CPU));
  }
  weft_tensor_release(f);
  weft_tensor_release(m);
}

int main(void) {
  rd_replay_threads(&tables, NROWS);
  test_typed();
  test_scan_threads();
  test_meta();
  TEST_REPORT();
}
