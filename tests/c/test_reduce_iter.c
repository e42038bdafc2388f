/* TensorIterator in reduction mode: reduced dims first and coalesced, the
 * inner/outer/strided kind, the two thread splits (over outputs, over the
 * reduced range with partials), explain's reduction fields, and a double
 * sum run through every plan at 1-4 threads against a direct loop, on
 * contiguous, transposed, sliced and channels_last inputs. */
#include <stdlib.h>

#include "test.h"
#include "weft/iter.h"
#include "weft/parallel.h"

/* out (keepdim shape, contiguous) as a view with x's shape, 0 on reduced dims */
static weft_tensor* reduce_view(weft_tensor* x, unsigned mask, weft_tensor** result) {
  int nd = (int)weft_tensor_dim(x);
  int64_t ks[WEFT_MAX_DIMS], st[WEFT_MAX_DIMS];
  const int64_t* sz = weft_tensor_sizes(x);
  for (int d = 0; d < nd; d++) ks[d] = (mask >> d) & 1 ? 1 : sz[d];
  *result = weft_full(ks, nd, 0.0, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  int64_t next = 1;
  for (int d = nd - 1; d >= 0; d--) {
    st[d] = (mask >> d) & 1 ? 0 : next;
    next *= ks[d];
  }
  return weft_as_strided(*result, sz, st, nd, 0);
}

static weft_status build(weft_tensor* x, unsigned mask, weft_tensor** result, weft_iter* it) {
  weft_iter_config c = weft_iter_config_init();
  weft_iter_config_set_op_name(&c, "sum");
  weft_iter_config_add_owned_output(&c, reduce_view(x, mask, result));
  weft_iter_config_add_input(&c, x);
  weft_iter_config_check_mem_overlap(&c, false);
  weft_iter_config_resize_outputs(&c, false);
  weft_iter_config_check_all_same_dtype(&c, false);
  weft_iter_config_is_reduction(&c, true);
  return weft_iter_build(&c, it);
}

static void sum_loop(void* ctx, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  (void)ctx;
  for (int64_t j = 0; j < n1; j++)
    for (int64_t i = 0; i < n0; i++) {
      double* o = (double*)(data[0] + i * s[0] + j * s[2]);
      *o += *(const double*)(data[1] + i * s[1] + j * s[3]);
    }
}

static void sum_combine(void* ctx, char** out, char** part) {
  (void)ctx;
  *(double*)out[0] += *(const double*)part[0];
}

/* value at logical index of x, via strides */
static double at(weft_tensor* x, const int64_t* idx) {
  const double* p = (const double*)weft_tensor_data_ptr(x);
  int64_t off = 0;
  for (int d = 0; d < weft_tensor_dim(x); d++) off += idx[d] * weft_tensor_strides(x)[d];
  return p[off];
}

/* runs the reduction of x over mask and compares with a direct sum */
static void check_sum(weft_tensor* x, unsigned mask, int64_t grain) {
  weft_tensor* result;
  weft_iter it;
  CHECK(build(x, mask, &result, &it) == WEFT_OK);
  CHECK(weft_iter_reduce_for_each(&it, sum_loop, sum_combine, NULL, grain, WEFT_FLOAT64) == WEFT_OK);
  weft_iter_destroy(&it);
  int nd = (int)weft_tensor_dim(x);
  const int64_t* sz = weft_tensor_sizes(x);
  int64_t numel = weft_tensor_numel(x);
  int64_t nres = weft_tensor_numel(result);
  double* expect = calloc((size_t)(nres ? nres : 1), sizeof(double));
  int64_t idx[WEFT_MAX_DIMS] = {0};
  for (int64_t e = 0; e < numel; e++) {
    int64_t r = 0;
    for (int d = 0; d < nd; d++) r = r * ((mask >> d) & 1 ? 1 : sz[d]) + ((mask >> d) & 1 ? 0 : idx[d]);
    expect[r] += at(x, idx);
    for (int d = nd - 1; d >= 0; d--) {
      if (++idx[d] < sz[d]) break;
      idx[d] = 0;
    }
  }
  const double* got = weft_tensor_data_ptr(result);
  int bad = 0;
  for (int64_t r = 0; r < nres; r++)
    if (fabs(got[r] - expect[r]) > 1e-9 * (1 + fabs(expect[r]))) bad++;
  CHECK_EQ_I64(bad, 0);
  free(expect);
  weft_tensor_release(result);
}

static weft_tensor* arange_shaped(const int64_t* sizes, int nd) {
  int64_t n = 1;
  for (int d = 0; d < nd; d++) n *= sizes[d];
  weft_tensor* a = weft_arange(0, (double)n, 1, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor* v = weft_view(a, sizes, nd);
  weft_tensor_release(a);
  return v;
}

static void test_plan_shapes(void) {
  weft_set_num_threads(1);
  int64_t s[] = {4, 5, 6};
  weft_tensor* x = arange_shaped(s, 3);
  weft_tensor* result;
  weft_iter it;
  weft_reduce_plan p;
  /* sum over dim 1: reduced dim moves first; not coalescable with the others */
  CHECK(build(x, 2u, &result, &it) == WEFT_OK);
  CHECK_EQ_I64(it.ndim, 3);
  CHECK_EQ_I64(it.shape[0], 5);
  CHECK_EQ_I64(it.ops[0].stride_bytes[0], 0);
  weft_iter_reduce_plan(&it, WEFT_GRAIN_SIZE, &p);
  CHECK_EQ_I64(p.num_outputs, 24);
  CHECK_EQ_I64(p.reduce_size, 5);
  CHECK(p.kind == WEFT_REDUCE_OUTER);
  CHECK(p.split == WEFT_REDUCE_SERIAL);
  char* j = weft_iter_reduce_explain_json(&it, WEFT_GRAIN_SIZE, WEFT_FLOAT64);
  CHECK(j && strstr(j, "\"reduction\":{\"reducedDims\":[1],\"kind\":\"outer\",\"numOutputs\":24,"
                       "\"reduceSize\":5,\"split\":\"serial\",\"splitDim\":-1,\"chunks\":1,"
                       "\"accDtype\":\"float64\"}}"));
  free(j);
  weft_iter_destroy(&it);
  weft_tensor_release(result);
  /* sum over (1, 2): the two coalesce into one inner contiguous dim */
  CHECK(build(x, 6u, &result, &it) == WEFT_OK);
  CHECK_EQ_I64(it.ndim, 2);
  CHECK_EQ_I64(it.shape[0], 30);
  weft_iter_reduce_plan(&it, WEFT_GRAIN_SIZE, &p);
  CHECK(p.kind == WEFT_REDUCE_INNER);
  CHECK_EQ_I64(p.reduced_iter_dims, 1);
  weft_iter_destroy(&it);
  weft_tensor_release(result);
  /* full reduction: one dim */
  CHECK(build(x, 7u, &result, &it) == WEFT_OK);
  CHECK_EQ_I64(it.ndim, 1);
  CHECK_EQ_I64(it.shape[0], 120);
  weft_iter_destroy(&it);
  weft_tensor_release(result);
  /* a transposed input, sum over dim 0 (contiguous in memory): inner */
  weft_tensor* xt = weft_transpose(x, 0, 2); /* [6,5,4], dim 0 stride 1 */
  CHECK(build(xt, 1u, &result, &it) == WEFT_OK);
  weft_iter_reduce_plan(&it, WEFT_GRAIN_SIZE, &p);
  CHECK(p.kind == WEFT_REDUCE_INNER);
  weft_iter_destroy(&it);
  weft_tensor_release(result);
  weft_tensor_release(xt);
  weft_tensor_release(x);
}

static void test_splits(void) {
  if (weft_max_threads() < 2) return;
  weft_set_num_threads(4);
  int threads = weft_get_num_threads();
  weft_tensor* result;
  weft_iter it;
  weft_reduce_plan p;
  /* full reduction: over the reduced range */
  int64_t s1[] = {100000};
  weft_tensor* x = arange_shaped(s1, 1);
  CHECK(build(x, 1u, &result, &it) == WEFT_OK);
  weft_iter_reduce_plan(&it, WEFT_GRAIN_SIZE, &p);
  CHECK(p.split == WEFT_REDUCE_SPLIT_REDUCED);
  /* ceil(100000 / grain) chunks, at most 4 per thread (stealing evens them out) */
  int64_t want = (100000 + WEFT_GRAIN_SIZE - 1) / WEFT_GRAIN_SIZE;
  CHECK_EQ_I64(p.chunks, want < 4 * threads ? want : 4 * threads);
  weft_iter_destroy(&it);
  weft_tensor_release(result);
  weft_tensor_release(x);
  /* tall matrix, sum(dim=0): fewer outputs than threads, split over the rows */
  int64_t s2[] = {40000, threads - 1};
  x = arange_shaped(s2, 2);
  CHECK(build(x, 1u, &result, &it) == WEFT_OK);
  weft_iter_reduce_plan(&it, WEFT_GRAIN_SIZE, &p);
  CHECK(p.split == WEFT_REDUCE_SPLIT_REDUCED);
  CHECK_EQ_I64(p.split_dim, 0);
  weft_iter_destroy(&it);
  weft_tensor_release(result);
  /* wide: sum(dim=1): over outputs */
  CHECK(build(x, 2u, &result, &it) == WEFT_OK);
  weft_iter_reduce_plan(&it, WEFT_GRAIN_SIZE, &p);
  CHECK(p.split == WEFT_REDUCE_SPLIT_OUTPUTS);
  CHECK(p.chunks > 1);
  char* j = weft_iter_reduce_explain_json(&it, WEFT_GRAIN_SIZE, WEFT_FLOAT64);
  CHECK(j && strstr(j, "\"split\":\"outputs\""));
  free(j);
  weft_iter_destroy(&it);
  weft_tensor_release(result);
  weft_tensor_release(x);
  weft_set_num_threads(1);
}

/* every mask of a few layouts, at 1..4 threads, with grains that make every plan */
static void test_values(void) {
  int64_t s[] = {3, 7, 5, 9};
  for (int threads = 1; threads <= 4; threads++) {
    weft_set_num_threads(threads);
    for (int layout = 0; layout < 4; layout++) {
      weft_tensor* base = arange_shaped(s, 4);
      weft_tensor* x = NULL;
      if (layout == 0) x = weft_tensor_retain(base);
      if (layout == 1) x = weft_transpose(base, 1, 3);
      if (layout == 2) x = weft_slice(base, 1, 1, 7, 2);
      if (layout == 3) x = weft_contiguous(base, WEFT_CHANNELS_LAST);
      if (layout == 3) { /* a channels_last tensor viewed in NCHW order */
        CHECK(!weft_tensor_is_contiguous(x, WEFT_CONTIGUOUS_FORMAT));
      }
      for (unsigned mask = 0; mask < 16; mask++) {
        check_sum(x, mask, 1);
        check_sum(x, mask, 17);
        check_sum(x, mask, WEFT_GRAIN_SIZE);
      }
      weft_tensor_release(x);
      weft_tensor_release(base);
    }
  }
  weft_set_num_threads(1);
}

int main(void) {
  test_plan_shapes();
  test_splits();
  test_values();
  TEST_REPORT();
}
