/* einsum (src/ops/einsum.c): values of traces, diagonals, ellipses,
 * broadcasting and chains against direct sums written here, gradients through
 * the composite, PyTorch's errors, a clean OutOfMemory at every failing
 * allocation (forward and backward), and no leaks. PyTorch's own values are
 * replayed by tests/js/einsum-fixtures.test.mjs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/alloc.h"
#include "weft/autograd.h"

static bool near(double got, double want) { return fabs(got - want) <= 1e-10 * (1 + fabs(want)); }
static const double* f64(const weft_tensor* t) { return weft_tensor_data_ptr(t); }

static weft_tensor* rnd(const int64_t* sizes, int nd) { return weft_randn(sizes, nd, WEFT_FLOAT64, WEFT_DEVICE_CPU); }

static weft_tensor* einsum(const char* eq, weft_tensor** t, int64_t n) {
  return weft_einsum(eq, (const weft_tensor* const*)t, n, NULL, 0);
}

/* 'ii->i', 'ii' and 'bii->b' of a [2, 3, 3] tensor against the sums themselves */
static void test_diagonals(void) {
  const int64_t s[3] = {2, 3, 3};
  weft_tensor* x = rnd(s, 3);
  weft_tensor* dv = einsum("bii->bi", &x, 1); /* a view: strides [9, 4] */
  weft_tensor* d = dv ? weft_contiguous(dv, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_tensor* tr = einsum("bii", &x, 1);
  weft_tensor* all = einsum("bij->", &x, 1);
  CHECK(d && tr && all);
  CHECK_SIZES(d, 2, 3);
  CHECK_STRIDES(dv, 9, 4);
  CHECK_SIZES(tr, 2);
  double total = 0;
  for (int b = 0; b < 2; b++) {
    double sum = 0;
    for (int i = 0; i < 3; i++) {
      CHECK(near(f64(d)[b * 3 + i], f64(x)[b * 9 + i * 4]));
      sum += f64(x)[b * 9 + i * 4];
      for (int j = 0; j < 3; j++) total += f64(x)[b * 9 + i * 3 + j];
    }
    CHECK(near(f64(tr)[b], sum));
  }
  CHECK(near(f64(all)[0], total));
  weft_tensor_release(x), weft_tensor_release(dv), weft_tensor_release(d), weft_tensor_release(tr), weft_tensor_release(all);
}

/* '...ij,jk,k->...i' with a broadcast batch: one chain of two bmm */
static void test_chain(void) {
  const int64_t sa[4] = {2, 1, 3, 4}, sb[2] = {4, 5}, sc[1] = {5};
  weft_tensor* t[3] = {rnd(sa, 4), rnd(sb, 2), rnd(sc, 1)};
  weft_tensor* r = einsum("...ij,jk,k->...i", t, 3);
  CHECK(r);
  CHECK_SIZES(r, 2, 1, 3);
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < 3; i++) {
      double want = 0;
      for (int j = 0; j < 4; j++)
        for (int k = 0; k < 5; k++) want += f64(t[0])[b * 12 + i * 4 + j] * f64(t[1])[j * 5 + k] * f64(t[2])[k];
      CHECK(near(f64(r)[b * 3 + i], want));
    }
  weft_tensor_release(r);
  for (int i = 0; i < 3; i++) weft_tensor_release(t[i]);
  /* left to right, the running result on the left: PyTorch's contiguous [i, l] */
  const int64_t s0[2] = {2, 3}, s1[2] = {3, 4}, s2[2] = {4, 5};
  weft_tensor* m[3] = {rnd(s0, 2), rnd(s1, 2), rnd(s2, 2)};
  r = einsum("ij,jk,kl->il", m, 3);
  CHECK(r);
  CHECK_STRIDES(r, 5, 1);
  weft_tensor_release(r);
  for (int i = 0; i < 3; i++) weft_tensor_release(m[i]);
}

/* the gradient of sum('ij,ij->i') is the other operand */
static void test_gradient(void) {
  const int64_t s[2] = {3, 4};
  weft_tensor* t[2] = {rnd(s, 2), rnd(s, 2)};
  weft_set_requires_grad(t[0], true);
  weft_tensor* r = einsum("ij,ij->i", t, 2);
  weft_tensor* sum = r ? weft_sum(r, (weft_dtype)-1) : NULL;
  weft_tensor* g = NULL;
  CHECK(sum && weft_autograd_grad(&sum, NULL, 1, t, 1, false, false, false, &g) == WEFT_OK);
  for (int i = 0; g && i < 12; i++) CHECK(near(f64(g)[i], f64(t[1])[i]));
  weft_tensor_release(r), weft_tensor_release(sum), weft_tensor_release(g);
  weft_tensor_release(t[0]), weft_tensor_release(t[1]);
}

static void expect_error(const char* eq, weft_tensor** t, int64_t n, const char* needle) {
  weft_clear_error();
  weft_tensor* r = einsum(eq, t, n);
  CHECK(!r);
  CHECK_ERROR_HAS(needle);
  weft_tensor_release(r);
}

static void test_errors(void) {
  const int64_t s[2] = {3, 4};
  weft_tensor* t[2] = {rnd(s, 2), rnd(s, 2)};
  expect_error("ij,jk", t, 2, "subscript j has size 3 for operand 1 which does not broadcast with previously seen size 4");
  expect_error("ij,ij->ii", t, 2, "output subscript i appears more than once in the output");
  expect_error("ii", t, 1, "subscript i is repeated for operand 0 but the sizes don't match, 4 != 3");
  expect_error("ij", t, 0, "must provide at least one operand");
  expect_error("ij.", t, 1, "found '.' for operand 0 that is not part of any ellipsis");
  expect_error("abcdefghijklmnopq", t, 1, "the number of subscripts in the equation (17) does not match");
  weft_tensor_release(t[0]), weft_tensor_release(t[1]);
}

static bool fault_run(void* ctx) {
  weft_tensor** t = ctx;
  weft_tensor* r = einsum("bij,bjk,k->bi", t, 3);
  weft_tensor* s = r ? weft_sum(r, (weft_dtype)-1) : NULL;
  weft_tensor* g[3] = {NULL, NULL, NULL};
  weft_status st = s ? weft_autograd_grad(&s, NULL, 1, t, 3, false, false, false, g) : weft_last_status();
  weft_tensor_release(r), weft_tensor_release(s);
  for (int i = 0; i < 3; i++) weft_tensor_release(g[i]);
  return st == WEFT_OK;
}

static void test_allocation_failures(void) {
  const int64_t sa[3] = {2, 3, 4}, sb[3] = {2, 4, 5}, sc[1] = {5};
  weft_tensor* t[3] = {rnd(sa, 3), rnd(sb, 3), rnd(sc, 1)};
  for (int i = 0; i < 3; i++) weft_set_requires_grad(t[i], true);
  check_fails_cleanly(fault_run, t, 3000);
  for (int i = 0; i < 3; i++) weft_tensor_release(t[i]);
}

int main(void) {
  weft_manual_seed(25);
  test_diagonals();
  test_chain();
  test_gradient();
  test_errors();
  test_allocation_failures();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
