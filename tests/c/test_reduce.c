/* Reductions (issue 11): the PyTorch 1.13 cases of reduce_cases.inc
 * (tests/fixtures/gen_reduce_fixtures.py) replayed through the boxed
 * dispatcher at 1 and 3 threads; a property test of sum/mean/amax/amin/prod
 * against a float64 reference at 1-4 threads on odd sizes around the vector
 * width and the grain, contiguous / transposed / channels_last; Meta
 * kernels; explain's reduction plan; no tensor left behind on errors. */
#include <stdint.h>
#include <stdlib.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "dispatch/opgen.h"
#include "reduce_replay.h"
#include "test.h"
#include "weft/explain.h"
#include "weft/parallel.h"
#include "weft/weft.h"

#define WEFT_OP WEFT_OP_DECLARE
#include "ops/reduce.def"
#undef WEFT_OP

#include "reduce_cases.inc"

static const rd_tables tables = {rd_cases, rd_args, rd_vals};
#define NROWS ((int)(sizeof rd_cases / sizeof rd_cases[0]))


/* ---- property test against a float64 reference ---- */

static uint64_t rng = 88172645463325252ull;
static double urand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

static weft_tensor* random_tensor(const int64_t* sizes, int nd, weft_dtype t, int layout) {
  weft_tensor* x = weft_empty(sizes, nd, t, WEFT_DEVICE_CPU,
                              layout == 2 && nd == 4 ? WEFT_CHANNELS_LAST : WEFT_CONTIGUOUS_FORMAT);
  int64_t n = weft_tensor_numel(x);
  for (int64_t i = 0; i < n; i++) {
    int64_t off = 0, rem = i;
    for (int d = nd - 1; d >= 0; d--) {
      off += (rem % sizes[d]) * weft_tensor_strides(x)[d];
      rem /= sizes[d];
    }
    weft__store((char*)weft_tensor_data_ptr(x) + off * (int64_t)weft_dtype_size(t), t,
                weft__value_from_double(urand() * 2 - 0.9));
  }
  if (layout == 1 && nd >= 2) { /* a transposed view */
    weft_tensor* y = weft_transpose(x, 0, nd - 1);
    weft_tensor_release(x);
    return y;
  }
  return x;
}

/* reference: reduce x over mask in float64; res/abs_sum per output (row-major keepdim order) */
static void reference(const weft_tensor* x, uint32_t mask, int op, double* res, double* mag) {
  int nd = (int)weft_tensor_dim(x);
  const int64_t* sz = weft_tensor_sizes(x);
  int64_t n = weft_tensor_numel(x), nout = 1;
  for (int d = 0; d < nd; d++) nout *= (mask >> d & 1) ? 1 : sz[d];
  for (int64_t o = 0; o < nout; o++) {
    res[o] = op == 2 ? 1 : op >= 3 ? NAN : 0;
    mag[o] = op >= 5 ? -1 : 0; /* argmax/argmin: the index (res holds the best value) */
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t rem = i, o = 0, mul = 1, ri = 0, rmul = 1;
    for (int d = nd - 1; d >= 0; d--) {
      int64_t id = rem % sz[d];
      rem /= sz[d];
      if (!(mask >> d & 1)) {
        o += id * mul;
        mul *= sz[d];
      } else {
        ri += id * rmul;
        rmul *= sz[d];
      }
    }
    double v = fx_element(x, i);
    if (op >= 5) {
      bool better = mag[o] < 0 || (op == 5 ? v > res[o] : v < res[o]) || (v == res[o] && ri < mag[o]);
      if (better) res[o] = v, mag[o] = (double)ri;
      continue;
    }
    mag[o] += fabs(v);
    if (op <= 1) res[o] += v;
    else if (op == 2) res[o] *= v;
    else if (op == 3) res[o] = isnan(res[o]) || v > res[o] ? v : res[o];
    else res[o] = isnan(res[o]) || v < res[o] ? v : res[o];
  }
}

static void property_case(const int64_t* sizes, int nd, uint32_t mask, weft_dtype t, int layout) {
  weft_tensor* x = random_tensor(sizes, nd, t, layout);
  const int64_t* xs = weft_tensor_sizes(x);
  int64_t dims[6], ndims = 0, nout = 1, count = 1;
  for (int d = 0; d < nd; d++) {
    if (mask >> d & 1) {
      dims[ndims++] = d;
      count *= xs[d];
    } else {
      nout *= xs[d];
    }
  }
  double* ref = malloc(sizeof(double) * (size_t)nout);
  double* mag = malloc(sizeof(double) * (size_t)nout);
  double eps = t == WEFT_FLOAT64 ? 1e-13 : t == WEFT_FLOAT32 ? 1e-6 : t == WEFT_BFLOAT16 ? 1e-2 : 2e-3;
  for (int op = 0; op < 7; op++) {
    if (op == 2 && t != WEFT_FLOAT64) continue; /* products of many values: float64 only */
    weft_tensor* r = NULL;
    switch (op) {
      case 0: r = weft_sum_dim(x, dims, ndims, true, (weft_dtype)-1); break;
      case 1: r = weft_mean_dim(x, dims, ndims, true, (weft_dtype)-1); break;
      case 2: r = ndims == 1 ? weft_prod_dim(x, dims[0], true, (weft_dtype)-1) : NULL; break;
      case 3: r = weft_amax(x, dims, ndims, true); break;
      case 4: r = weft_amin(x, dims, ndims, true); break;
      case 5: case 6: {
        weft_tensor* (*f)(const weft_tensor*, int64_t, bool) = op == 5 ? weft_argmax : weft_argmin;
        if (ndims == 1) r = f(x, dims[0], true);
        else if (ndims == nd) r = f(x, INT64_MIN, true);
        else continue;
        break;
      }
    }
    if (op == 2 && ndims != 1) continue;
    /* PyTorch divides by the count as a float16 (inf above 65504), so the
     * mean is 0 there: not what a float64 reference computes */
    if (op == 1 && t == WEFT_FLOAT16 && count > 65504) {
      weft_tensor_release(r);
      continue;
    }
    CHECK(r != NULL);
    if (!r) continue;
    reference(x, mask, op, ref, mag);
    int bad = 0;
    for (int64_t o = 0; o < nout; o++) {
      double want = op == 1 ? ref[o] / (double)count : ref[o];
      double scale = op == 1 ? mag[o] / (double)count : op == 2 ? fabs(want) : mag[o];
      double got = fx_element(r, o);
      if (op >= 5) bad += got != mag[o]; /* the index, the first of ties */
      else if (op >= 3) bad += got != want; /* max/min are exact */
      else if (!(fabs(got - want) <= eps * (scale + 1e-30) + 1e-30)) bad++;
    }
    if (bad) fprintf(stderr, "property: op %d dtype %s layout %d mask %u ndim %d: %d bad\n", op,
                     weft_dtype_name(t), layout, mask, nd, bad);
    CHECK_EQ_I64(bad, 0);
    weft_tensor_release(r);
  }
  free(ref);
  free(mag);
  weft_tensor_release(x);
}

static void test_property(void) {
  static const int64_t small[][4] = {{1, 1, 1, 1}, {3, 5, 7, 9}, {2, 15, 16, 17}, {4, 3, 1, 33}};
  static const int64_t big[][2] = {{3, 32771}, {32771, 3}, {181, 183}, {1, 65539}};
  weft_dtype types[] = {WEFT_FLOAT32, WEFT_FLOAT64, WEFT_FLOAT16, WEFT_BFLOAT16};
  for (int threads = TEST_FIRST_THREADS; threads <= 4; threads++) {
    weft_set_num_threads(threads);
    for (int ti = 0; ti < 4; ti++)
      for (int layout = 0; layout < 3; layout++) {
        for (int s = 0; s < 4; s++)
          for (uint32_t mask = 1; mask < 16; mask += (ti == 0 ? 1 : 5)) property_case(small[s], 4, mask, types[ti], layout);
        if (layout == 2 || ti >= 2) continue; /* the large shapes: float32 and float64 */
        for (int s = 0; s < 4; s++)
          for (uint32_t mask = 1; mask < 4; mask++) property_case(big[s], 2, mask, types[ti], layout);
      }
  }
  weft_set_num_threads(1);
}

/* ---- accuracy, meta, explain ---- */

static void test_accuracy(void) {
  int64_t n = 16777217;
  weft_tensor* ones = weft_full(&n, 1, 1.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  for (int threads = TEST_FIRST_THREADS; threads <= 4; threads++) {
    weft_set_num_threads(threads);
    weft_tensor* s = weft_sum(ones, (weft_dtype)-1);
    weft_tensor* d = weft_sum(ones, WEFT_FLOAT64);
    CHECK(s && weft_tensor_get_double(s, 0) == 16777216.0); /* PyTorch's float32 answer */
    CHECK(d && weft_tensor_get_double(d, 0) == 16777217.0);
    weft_tensor_release(s);
    weft_tensor_release(d);
  }
  weft_tensor_release(ones);
  /* 10^7 uniform values: within PyTorch's tolerance of the float64 sum */
  n = 10000000;
  weft_tensor* u = weft_rand(&n, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* ref = weft_sum(u, WEFT_FLOAT64);
  for (int threads = TEST_FIRST_THREADS; threads <= 4; threads++) {
    weft_set_num_threads(threads);
    weft_tensor* s = weft_sum(u, (weft_dtype)-1);
    double want = weft_tensor_get_double(ref, 0);
    CHECK(s && fabs(weft_tensor_get_double(s, 0) - want) <= 1.3e-6 * want);
    weft_tensor_release(s);
  }
  weft_tensor_release(ref);
  weft_tensor_release(u);
  weft_set_num_threads(1);
}

static void test_meta(void) {
  int64_t s[] = {2, 3, 4}, d[] = {1};
  weft_tensor* m = weft_empty(s, 3, WEFT_INT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* r = weft_sum_dim(m, d, 1, false, (weft_dtype)-1);
  CHECK(r && weft_tensor_device(r) == WEFT_DEVICE_META && weft_tensor_dtype(r) == WEFT_INT64);
  CHECK_SIZES(r, 2, 4);
  weft_tensor_release(r);
  r = weft_amax(m, d, 1, true);
  CHECK(r && weft_tensor_device(r) == WEFT_DEVICE_META && weft_tensor_dtype(r) == WEFT_INT32);
  CHECK_SIZES(r, 2, 1, 4);
  weft_tensor_release(r);
  CHECK(weft_mean(m, (weft_dtype)-1) == NULL);
  CHECK_ERROR_HAS("mean(): could not infer output dtype");
  const char* names[] = {"aten::sum", "aten::sum.dim_IntList", "aten::mean.dim", "aten::prod.dim_int",
                         "aten::amax", "aten::amin.out"};
  for (int i = 0; i < 6; i++) {
    weft_op* op = weft_op_find(names[i]);
    CHECK(op && weft_op_has_kernel(op, WEFT_KEY_META) && weft_op_has_kernel(op, WEFT_KEY_CPU));
  }
  weft_tensor_release(m);
}

static void test_explain(void) {
  int64_t s[] = {32, 64, 56, 56}, d[] = {2, 3};
  weft_tensor* x = weft_empty(s, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST);
  weft_set_num_threads(2);
  weft_stack st;
  weft_stack_init(&st);
  weft_stack_push_tensor(&st, x);
  weft_stack_push_int_list(&st, d, 2);
  weft_stack_push_bool(&st, false);
  weft_stack_push_none(&st);
  char* json = NULL;
  CHECK(weft_explain_boxed(weft_op_find("aten::sum.dim_IntList"), &st, &json) == WEFT_OK);
  CHECK(json && strstr(json, "\"reduction\":{\"reducedDims\":[2,3],\"kind\":\"outer\",\"numOutputs\":2048,"
                             "\"reduceSize\":3136,\"split\":"));
  /* 2 threads: over the outputs (without a pool: serial) */
  CHECK(json && strstr(json, weft_max_threads() > 1 ? "\"split\":\"outputs\"" : "\"split\":\"serial\""));
  CHECK(json && strstr(json, "\"accDtype\":\"float32\""));
  if (json) printf("explain: %s\n", json);
  free(json);
  weft_stack_clear(&st);
  weft_tensor_release(x);
  weft_set_num_threads(1);
}

int main(void) {
  rd_replay_threads(&tables, NROWS);
  test_property();
  test_accuracy();
  test_meta();
  test_explain();
  TEST_REPORT();
}
