/* Allocation-failure injection, the way SQLite tests its failure paths: an
 * allocator that fails its Nth allocation (tensor data and the tensor and
 * storage structs all come from it) runs each scenario with N = 1, 2, 3, ...
 * until the scenario completes. Every failing run must end in a clean
 * OutOfMemory with the live tensors, storages and bytes back to where they
 * were; the completing run must give the right values. */
#include <math.h>

#include "test.h"

/* the library's fail-the-Nth allocator (include/weft/alloc.h) */
static weft_fail_nth_allocator injecting;

/* A scenario makes its result (NULL + the error on failure) from inputs made
 * before injection starts; check verifies a completed result. */
typedef struct {
  const char* name;
  weft_tensor* (*run)(weft_tensor* const* in);
  bool (*check)(const weft_tensor* r, weft_tensor* const* in);
} scenario;

static bool close_to(double a, double b) { return fabs(a - b) <= 1e-5 * (1 + fabs(b)); }

/* contiguous(channels_last): clone -> empty_like -> empty -> copy_ (transpose driver) */
static weft_tensor* run_channels_last(weft_tensor* const* in) { return weft_contiguous(in[0], WEFT_CHANNELS_LAST); }
static bool check_same(const weft_tensor* r, weft_tensor* const* in) {
  for (int64_t i = 0; i < weft_tensor_numel(in[0]); i += 7)
    if (weft_tensor_get_double(r, i) != weft_tensor_get_double(in[0], i)) return false;
  return true;
}

/* a broadcast add with a wrapped number, then a float64 out= (iterator, cast loops) */
static weft_tensor* run_add(weft_tensor* const* in) {
  weft_tensor* s = weft_add_scalar(in[1], weft_scalar_double(0.5), weft_scalar_int(2));
  if (!s) return NULL;
  weft_tensor* r = weft_add(in[0], s, weft_scalar_int(1));
  weft_tensor_release(s);
  if (!r) return NULL;
  weft_tensor* out = weft_empty(NULL, 0, WEFT_FLOAT64, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  if (!out) {
    weft_tensor_release(r);
    return NULL;
  }
  weft_tensor* o = weft_mul_out(r, r, out); /* resizes out: a new storage */
  weft_tensor_release(out);
  weft_tensor_release(r);
  return o;
}
static bool check_add(const weft_tensor* r, weft_tensor* const* in) {
  /* in[0]: [2, 3, 4, 5]; in[1]: [4, 1]; r = (a + (b + 1))^2 */
  for (int64_t i = 0; i < weft_tensor_numel(r); i += 5) {
    int64_t w = i % 5, h = (i / 5) % 4;
    double v = weft_tensor_get_double(in[0], i) + weft_tensor_get_double(in[1], h) + 1.0;
    (void)w;
    if (!close_to(weft_tensor_get_double(r, i), v * v)) return false;
  }
  return weft_tensor_dtype(r) == WEFT_FLOAT64;
}

/* views and a reshape that must copy, then a dtype change */
static weft_tensor* run_views(weft_tensor* const* in) {
  weft_tensor* p = weft_permute(in[0], (const int64_t[]){3, 1, 2, 0}, 4);
  if (!p) return NULL;
  weft_tensor* r = weft_reshape(p, (const int64_t[]){5, -1}, 2);
  weft_tensor_release(p);
  if (!r) return NULL;
  weft_tensor* sl = weft_slice(r, 1, 1, 20, 3);
  weft_tensor_release(r);
  if (!sl) return NULL;
  weft_tensor* d = weft_to_dtype(sl, WEFT_FLOAT16, false);
  weft_tensor_release(sl);
  return d;
}
static bool check_views(const weft_tensor* r, weft_tensor* const* in) {
  /* r[i][j] = a.permute(3,1,2,0).reshape(5, 24)[i][1 + 3j], a: [2, 3, 4, 5] */
  if (weft_tensor_dim(r) != 2 || weft_tensor_sizes(r)[0] != 5 || weft_tensor_sizes(r)[1] != 7) return false;
  for (int64_t i = 0; i < 5; i++)
    for (int64_t j = 0; j < 7; j++) {
      int64_t k = 1 + 3 * j; /* index into the permuted [3, 4, 2] block */
      int64_t c = k / 8, h = (k / 2) % 4, n = k % 2;
      double want = weft_tensor_get_double(in[0], ((n * 3 + c) * 4 + h) * 5 + i);
      if (!close_to(weft_tensor_get_double(r, i * 7 + j), want) && fabs(weft_tensor_get_double(r, i * 7 + j) - want) > 1e-3)
        return false;
    }
  return true;
}

/* factories and a boxed call by name */
static weft_tensor* run_boxed(weft_tensor* const* in) {
  (void)in;
  weft_tensor* a = weft_arange(0, 12, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  if (!a) return NULL;
  weft_tensor* f = weft_full((const int64_t[]){12}, 1, 2.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  if (!f) {
    weft_tensor_release(a);
    return NULL;
  }
  weft_stack st;
  weft_stack_init(&st);
  weft_status s = weft_stack_push_tensor(&st, a);
  if (!s) s = weft_stack_push_tensor(&st, f);
  if (!s) s = weft_op_call_boxed(weft_op_find("aten::mul.Tensor"), &st);
  weft_tensor* r = s == WEFT_OK ? weft_stack_pop_tensor(&st) : NULL;
  weft_stack_clear(&st);
  weft_tensor_release(a);
  weft_tensor_release(f);
  return r;
}
static bool check_boxed(const weft_tensor* r, weft_tensor* const* in) {
  (void)in;
  for (int64_t i = 0; i < 12; i++)
    if (weft_tensor_get_double(r, i) != 2.0 * (double)i) return false;
  return true;
}

/* autograd through a multi-output node: split x [6, 3] (requires grad) in
 * three, sum(p0 * p2), grad() of x: the node's formula cats the pieces'
 * gradients with zeros in place of p1's */
static weft_tensor* run_split_grad(weft_tensor* const* in) {
  weft_tensor_list p = weft_split(in[2], 2, 0);
  if (!p.t) return NULL;
  weft_tensor* m = weft_mul(p.t[0], p.t[2]);
  weft_tensor_list_release(p);
  weft_tensor* l = m ? weft_sum(m, (weft_dtype)-1) : NULL;
  weft_tensor_release(m);
  if (!l) return NULL;
  weft_tensor* g = NULL;
  weft_status s = weft_autograd_grad(&l, NULL, 1, &in[2], 1, false, false, false, &g);
  weft_tensor_release(l);
  return s ? NULL : g;
}
static bool check_split_grad(const weft_tensor* r, weft_tensor* const* in) {
  for (int64_t i = 0; i < 18; i++) {
    int64_t row = i / 3;
    double want = row < 2 ? weft_tensor_get_double(in[2], i + 12) : row < 4 ? 0 : weft_tensor_get_double(in[2], i - 12);
    if (weft_tensor_get_double(r, i) != want) return false;
  }
  return true;
}

static void run_scenario(const scenario* sc, weft_tensor* const* in) {
  weft_memory_stats base = weft_memory();
  long failures = 0;
  for (long n = 1;; n++) {
    injecting.countdown = n;
    weft_clear_error();
    weft_set_allocator(&injecting.allocator);
    weft_tensor* r = sc->run(in);
    weft_set_allocator(NULL);
    bool hit = injecting.countdown == 0; /* the Nth allocation happened (and failed) */
    injecting.countdown = 0;
    if (r) {
      CHECK(!hit); /* a failed allocation must not give a result */
      CHECK(sc->check(r, in));
      weft_tensor_release(r);
      printf("  %s: completes after %ld injected failures\n", sc->name, failures);
      break;
    }
    failures++;
    CHECK(hit);
    CHECK(weft_last_status() == WEFT_OUT_OF_MEMORY);
    if (weft_last_status() != WEFT_OUT_OF_MEMORY) fprintf(stderr, "  %s, n=%ld: %s\n", sc->name, n, weft_last_error());
    weft_memory_stats m = weft_memory();
    CHECK_EQ_I64(m.tensors, base.tensors);
    CHECK_EQ_I64(m.storages, base.storages);
    CHECK_EQ_I64(m.bytes_in_use, base.bytes_in_use);
    if (n > 10000) { /* a scenario that never completes */
      CHECK(false);
      break;
    }
  }
  CHECK(failures > 0);
}

int main(void) {
  weft_init();
  weft_fail_nth_allocator_init(&injecting);
  weft_manual_seed(3);
  const int64_t s4[] = {2, 3, 4, 5}, s2[] = {4, 1}, s63[] = {6, 3};
  weft_tensor* in[3] = {weft_rand(s4, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU), weft_rand(s2, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU),
                        weft_rand(s63, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU)};
  CHECK(weft_set_requires_grad(in[2], true) == WEFT_OK);
  static const scenario scenarios[] = {
      {"contiguous(channels_last)", run_channels_last, check_same},
      {"broadcast add + out=", run_add, check_add},
      {"views, reshape copy, to(float16)", run_views, check_views},
      {"factories + boxed mul", run_boxed, check_boxed},
      {"split, grad() through SplitBackward0", run_split_grad, check_split_grad},
  };
  for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) run_scenario(&scenarios[i], in);
  printf("%lld allocation failures injected\n", (long long)injecting.injected);
  for (int i = 0; i < 3; i++) weft_tensor_release(in[i]);
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
