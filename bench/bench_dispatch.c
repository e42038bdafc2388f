/* Cost of one call of a tiny op through the dispatcher: the kernel called
 * directly, the unboxed (typed) path, the boxed path (stack in, stack out),
 * and a boxed fallback in front of an unboxed kernel. Prints ns per call. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dispatch/opgen.h"
#include "weft/weft.h"

#define BENCH_OPS(X)                                                                      \
  X(bench_tiny, "bench::tiny(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", TENSOR, \
    (TENSOR, self), (TENSOR, other), (SCALAR, alpha))

BENCH_OPS(WEFT_OP_DECLARE)
BENCH_OPS(WEFT_OP_DEFINE)
static weft_status register_bench_ops(void) {
  BENCH_OPS(WEFT_OP_REGISTER)
  return WEFT_OK;
}

/* Returns self: the op's cost is all dispatch. */
static weft_tensor* tiny_cpu(const weft_tensor* self, const weft_tensor* other, weft_scalar alpha) {
  (void)other;
  (void)alpha;
  return weft_tensor_retain((weft_tensor*)self);
}

static weft_status passthrough(const weft_op* op, weft_keyset ks, weft_stack* stack, void* ctx) {
  (void)ctx;
  return weft_op_redispatch_boxed(op, ks & weft_keyset_full_after(WEFT_KEY_TRACER), stack);
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef weft_tensor* (*call_fn)(const weft_op* op, const weft_tensor* a);

static weft_tensor* via_kernel(const weft_op* op, const weft_tensor* a) {
  (void)op;
  weft_tensor* (*volatile k)(const weft_tensor*, const weft_tensor*, weft_scalar) = tiny_cpu;
  return k(a, a, weft_scalar_int(1));
}
static weft_tensor* via_unboxed(const weft_op* op, const weft_tensor* a) {
  (void)op;
  return weft_bench_tiny(a, a, weft_scalar_int(1));
}
/* (a, a, alpha=1): fits bench::tiny and aten::add.Tensor alike */
static weft_tensor* via_boxed(const weft_op* op, const weft_tensor* a) {
  weft_stack st;
  weft_stack_init(&st);
  weft_stack_push_tensor(&st, a);
  weft_stack_push_tensor(&st, a);
  weft_stack_push_int(&st, 1);
  weft_tensor* r = weft_op_call_boxed(op, &st) == WEFT_OK ? weft_stack_pop_tensor(&st) : NULL;
  weft_stack_clear(&st);
  return r;
}

/* a library op: t() of a 1-element tensor (allocates the view's handle);
 * its kernel is static in src/ops, so it is taken from the CPU table entry */
typedef weft_tensor* (*t_kernel_fn)(const weft_tensor*);
static t_kernel_fn t_kernel;
static weft_tensor* via_t_kernel(const weft_op* op, const weft_tensor* a) {
  (void)op;
  return t_kernel(a);
}
static weft_tensor* via_t(const weft_op* op, const weft_tensor* a) {
  (void)op;
  return weft_t(a);
}
static weft_tensor* via_t_boxed(const weft_op* op, const weft_tensor* a) {
  weft_stack st;
  weft_stack_init(&st);
  weft_stack_push_tensor(&st, a);
  weft_tensor* r = weft_op_call_boxed(op, &st) == WEFT_OK ? weft_stack_pop_tensor(&st) : NULL;
  weft_stack_clear(&st);
  return r;
}

/* the real thing: a 1-element float32 add (dispatch + meta + iterator + kernel + allocation) */
static weft_tensor* via_add(const weft_op* op, const weft_tensor* a) {
  (void)op;
  return weft_add(a, a, weft_scalar_int(1));
}

static double bench(const char* what, call_fn fn, const weft_op* op, const weft_tensor* a, long iters) {
  for (long i = 0; i < iters / 10; i++) weft_tensor_release(fn(op, a));
  double t0 = now_ns();
  for (long i = 0; i < iters; i++) weft_tensor_release(fn(op, a));
  double ns = (now_ns() - t0) / (double)iters;
  printf("  %-44s %8.1f ns/call\n", what, ns);
  return ns;
}

int main(int argc, char** argv) {
  long iters = argc > 1 ? atol(argv[1]) : 2000000;
  if (register_bench_ops() != WEFT_OK) {
    fprintf(stderr, "%s\n", weft_last_error());
    return 1;
  }
  weft_impl_bench_tiny(WEFT_KEY_CPU, tiny_cpu, "tiny_cpu");
  const weft_op* op = weft_op_find("bench::tiny");
  const int64_t one[] = {1};
  weft_tensor* a = weft_empty(one, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  printf("dispatch: tiny op (1-element tensors, kernel returns self), %ld calls\n", iters);
  bench("kernel called directly", via_kernel, op, a, iters);
  bench("unboxed: weft_bench_tiny(a, b, alpha)", via_unboxed, op, a, iters);
  bench("boxed: weft_op_call_boxed(op, stack)", via_boxed, op, a, iters);
  weft_kernel k = {passthrough, NULL, NULL, "passthrough", 0};
  weft_registration* fb = weft_dispatch_fallback(WEFT_KEY_TRACER, k);
  weft_tls_guard g = weft_tls_include(weft_keyset_of(WEFT_KEY_TRACER));
  bench("unboxed, through a boxed Tracer fallback", via_unboxed, op, a, iters);
  weft_tls_restore(g);
  weft_registration_release(fb);
  const weft_op* t_op = weft_op_find("aten::t");
  t_kernel = (t_kernel_fn)weft__lookup(t_op, weft_keyset_of(WEFT_KEY_CPU))->k.unboxed;
  printf("aten::t on a 1-element tensor\n");
  bench("implementation called directly (t's kernel)", via_t_kernel, t_op, a, iters);
  bench("unboxed: weft_t(a)", via_t, t_op, a, iters);
  bench("boxed: weft_op_call_boxed(aten::t, stack)", via_t_boxed, t_op, a, iters);
  const weft_op* add_op = weft_op_find("aten::add.Tensor");
  printf("aten::add.Tensor on 1-element float32 tensors (allocates the output)\n");
  bench("unboxed: weft_add(a, b, alpha)", via_add, add_op, a, iters / 4);
  bench("boxed: weft_op_call_boxed(aten::add.Tensor)", via_boxed, add_op, a, iters / 4);
  weft_tensor_release(a);
  return 0;
}
