/* In-place autograd (issue 15): writes to non-leaf tensors rebase their
 * history, writes to views rebase the base's (CopySlices) and regenerate the
 * view's grad_fn (AsStridedBackward0), PyTorch's refusals, and the trace of
 * a backward pass. The gradients of many more programs are checked against
 * PyTorch by tests/js/autograd-inplace.test.mjs. */
#include <stdlib.h>

#include "ops/ops.h"
#include "test.h"

static const int64_t S23[] = {2, 3};
static const weft_scalar ONE = {WEFT_SCALAR_INT, {.i = 1}};

/* 2x3 leaf: 1..6 */
static weft_tensor* leaf(void) {
  weft_tensor* t = weft_full(S23, 2, 0.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  for (int i = 0; i < 6; i++) ((float*)weft_tensor_data_ptr(t))[i] = (float)(i + 1) * (i % 2 ? -1.f : 1.f);
  weft_set_requires_grad(t, true);
  return t;
}

static bool named(const weft_node* n, const char* name) {
  if (n && strcmp(weft_node_name(n), name) == 0) return true;
  fprintf(stderr, "  node %s, expected %s\n", n ? weft_node_name(n) : "(null)", name);
  return false;
}

static bool grad_is(const weft_tensor* t, const double* want) {
  weft_tensor* g = weft_tensor_grad(t);
  bool ok = g != NULL;
  for (int i = 0; ok && i < 6; i++) ok = fabs(weft_tensor_get_double(g, i) - want[i]) < 1e-6;
  weft_tensor_release(g);
  return ok;
}

static void backward_sum(weft_tensor* t) {
  weft_tensor* s = weft_sum(t, (weft_dtype)-1);
  CHECK(s && weft_backward(&s, NULL, 1, false, false) == WEFT_OK);
  weft_tensor_release(s);
}

/* x = a * 1; x.mul_(2); x.relu_(): the history is Relu <- Mul <- Mul, and the leaf's gradient follows. */
static void test_nonleaf(void) {
  weft_tensor* a = leaf();
  weft_tensor* x = weft_mul_scalar(a, weft_scalar_int(1));
  CHECK(weft_mul_scalar_(x, weft_scalar_int(2)) == WEFT_OK && weft_relu_(x) == WEFT_OK);
  weft_node* fn = weft_grad_fn(x);
  CHECK(named(fn, "ReluBackward0") && named(weft_node_next(fn, 0, NULL), "MulBackward0"));
  CHECK(named(weft_node_next(weft_node_next(fn, 0, NULL), 0, NULL), "MulBackward0"));
  CHECK(weft_retain_grad(x) == WEFT_OK);
  backward_sum(x);
  const double want[] = {2, 0, 2, 0, 2, 0};
  CHECK(grad_is(a, want));
  const double ones[] = {1, 1, 1, 1, 1, 1};
  CHECK(grad_is(x, ones));
  weft_tensor_release(x);
  weft_tensor_release(a);
}

/* base = a.clone(); v = base[0]; v.mul_(3); sum(base): row 0's gradient is 3. */
static void test_view_write(void) {
  weft_tensor* a = leaf();
  weft_tensor* base = weft_clone(a, (weft_memory_format)-1);
  weft_tensor* v = weft_select(base, 0, 0);
  CHECK(named(weft_grad_fn(v), "SelectBackward0"));
  CHECK(weft_mul_scalar_(v, weft_scalar_int(3)) == WEFT_OK);
  CHECK(named(weft_grad_fn(base), "CopySlices") && named(weft_grad_fn(v), "AsStridedBackward0"));
  CHECK(named(weft_node_next(weft_grad_fn(base), 0, NULL), "CloneBackward0"));
  CHECK(weft_node_next(weft_grad_fn(v), 0, NULL) == weft_grad_fn(base));
  /* createGraph through CopySlices (its gradient made of recorded ops; constant here: sum(base) is linear) */
  weft_tensor* total = weft_sum(base, (weft_dtype)-1);
  weft_tensor* got = NULL;
  const double want[] = {3, 3, 3, 1, 1, 1};
  CHECK(weft_autograd_grad(&total, NULL, 1, &a, 1, true, true, false, &got) == WEFT_OK && got);
  for (int i = 0; got && i < 6; i++) CHECK(fabs(weft_tensor_get_double(got, i) - want[i]) < 1e-6);
  weft_tensor_release(got);
  weft_tensor_release(total);
  backward_sum(base);
  CHECK(grad_is(a, want));
  weft_tensor_release(v);
  weft_tensor_release(base);
  weft_tensor_release(a);
}

/* A view taken before its base is written sees the write: v's grad_fn is regenerated. */
static void test_base_written_after_view(void) {
  weft_tensor* a = leaf();
  weft_tensor* base = weft_mul_scalar(a, weft_scalar_int(1));
  weft_tensor* v = weft_narrow(base, 1, 1, 2);
  CHECK(named(weft_grad_fn(v), "SliceBackward0"));
  CHECK(weft_mul_scalar_(base, weft_scalar_int(5)) == WEFT_OK);
  CHECK(named(weft_grad_fn(v), "AsStridedBackward0"));
  backward_sum(v);
  const double want[] = {0, 5, 5, 0, 5, 5};
  CHECK(grad_is(a, want));
  weft_tensor_release(v);
  weft_tensor_release(base);
  weft_tensor_release(a);
}

static void test_refusals(void) {
  weft_tensor* a = leaf();
  weft_tensor* va = weft_select(a, 0, 1);
  CHECK(weft_mul_scalar_(va, weft_scalar_int(2)) != WEFT_OK);
  CHECK_ERROR_HAS("a view of a leaf Variable that requires grad is being used in an in-place operation.");
  /* an op without a formula checks the write first, as PyTorch does */
  CHECK(weft_floor_divide_(va, a) != WEFT_OK);
  CHECK_ERROR_HAS("a view of a leaf Variable that requires grad is being used in an in-place operation.");
  weft_tensor* x = weft_mul_scalar(a, weft_scalar_int(1));
  bool was = weft_set_grad_enabled(false);
  weft_tensor* ng = weft_narrow(x, 0, 0, 1);
  weft_set_grad_enabled(was);
  CHECK(weft_add_scalar_(ng, weft_scalar_int(1), ONE) != WEFT_OK);
  CHECK_ERROR_HAS("A view was created in no_grad mode and is being modified inplace with grad mode enabled.");
  CHECK(weft_detach_(va) != WEFT_OK);
  CHECK_ERROR_HAS("Can't detach views in-place. Use detach() instead.");
  /* exp saves its result: writing it afterwards fails the backward pass */
  weft_tensor* e = weft_exp(x);
  CHECK(weft_mul_scalar_(e, weft_scalar_int(2)) == WEFT_OK);
  weft_tensor* s = weft_sum(e, (weft_dtype)-1);
  CHECK(weft_backward(&s, NULL, 1, false, false) != WEFT_OK);
  CHECK_ERROR_HAS("which is output 0 of ExpBackward0, is at version 1; expected version 0 instead. (needed by "
                  "ExpBackward0)");
  /* an output of split is one of several views: never written in place with grad */
  weft_tensor* z = weft_full(S23, 2, 0.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor_list parts = weft_split(z, 1, 0);
  CHECK(parts.t && parts.n == 2 && weft_add_(parts.t[0], x, ONE) != WEFT_OK);
  CHECK_ERROR_HAS("This view is the output of a function that returns multiple views.");
  weft_tensor_list_release(parts);
  weft_tensor* all[] = {a, va, x, ng, e, s, z};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) weft_tensor_release(all[i]);
}

/* The trace of a backward pass: each node as it runs, its formula's ops nested under it. */
static void test_trace(void) {
  weft_tensor* a = leaf();
  weft_tensor* x = weft_mul_scalar(a, weft_scalar_int(2));
  CHECK(weft_sin_(x) == WEFT_OK);
  weft_tensor* s = weft_sum(x, (weft_dtype)-1);
  weft_trace_start();
  CHECK(weft_backward(&s, NULL, 1, false, false) == WEFT_OK);
  weft_trace_stop();
  const char* order[] = {"SumBackward0", "SinBackward0", "MulBackward0", "AccumulateGrad"};
  int k = 0, node_depth = -1;
  bool nested = false;
  for (int64_t i = 0; i < weft_trace_count(); i++) {
    const weft_trace_entry* e = &weft_trace_entries()[i];
    if (e->node) {
      CHECK(k < 4 && strcmp(e->op, order[k]) == 0 && e->depth == 0);
      k++;
      node_depth = e->depth;
    } else if (k == 2 && strcmp(e->op, "aten::cos") == 0) {
      nested = e->depth > node_depth; /* SinBackward0's formula: grad * cos(self) */
    }
  }
  CHECK(k == 4 && nested);
  weft_tensor_release(s);
  weft_tensor_release(x);
  weft_tensor_release(a);
}

/* a.sum(1).sum() saves no tensor: a second backward without retainGraph runs
 * (as in PyTorch) with the dims it kept, not freed ones */
static void test_second_pass_without_saved_tensors(void) {
  weft_tensor* a = leaf();
  const int64_t dim = 1;
  weft_tensor* y = weft_sum_dim(a, &dim, 1, false, (weft_dtype)-1);
  weft_tensor* s = weft_sum(y, (weft_dtype)-1);
  CHECK(weft_backward(&s, NULL, 1, false, false) == WEFT_OK);
  CHECK(weft_backward(&s, NULL, 1, false, false) == WEFT_OK);
  const double want[] = {2, 2, 2, 2, 2, 2};
  CHECK(grad_is(a, want));
  weft_tensor* all[] = {a, y, s};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) weft_tensor_release(all[i]);
}

int main(void) {
  test_nonleaf();
  test_view_write();
  test_base_written_after_view();
  test_refusals();
  test_trace();
  test_second_pass_without_saved_tensors();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
