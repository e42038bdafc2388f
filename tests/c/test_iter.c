/* TensorIterator build(): broadcasting and its errors, type promotion (0-dim
 * tensors, wrapped numbers), overlap errors, output layouts as PyTorch 1.13
 * gives them for `a + b` (checked with torch), coalescing, the seed's plan,
 * DimCounter stepping. */
#include <stdlib.h>

#include "core/internal.h"
#include "ops/cpu/copy_iter.h"
#include "test.h"
#include "weft/iter.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static weft_tensor* strided_t(const int64_t* sizes, const int64_t* strides, int ndim, weft_dtype dt) {
  return weft_empty_strided(sizes, strides, ndim, dt, WEFT_DEVICE_CPU);
}
static weft_tensor* contig_t(const int64_t* sizes, int ndim, weft_dtype dt) {
  return weft_empty(sizes, ndim, dt, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
}
static weft_tensor* scalar_t(weft_dtype dt) { return weft_empty(NULL, 0, dt, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT); }

/* PyTorch's BINARY_OP_CONFIG with an optional out tensor and wrapped b. */
static weft_status binary(weft_tensor* out, weft_tensor* a, weft_tensor* b, bool b_wrapped, bool to_float,
                          weft_iter* it) {
  weft_iter_config c = weft_iter_config_init();
  weft_iter_config_set_op_name(&c, "add");
  weft_iter_config_add_output(&c, out);
  weft_iter_config_add_input(&c, a);
  if (b_wrapped) weft_iter_config_add_wrapped_number(&c, b);
  else weft_iter_config_add_input(&c, b);
  weft_iter_config_promote_inputs_to_common_dtype(&c, true);
  weft_iter_config_cast_common_dtype_to_outputs(&c, true);
  weft_iter_config_enforce_safe_casting_to_output(&c, true);
  weft_iter_config_promote_integer_inputs_to_float(&c, to_float);
  return weft_iter_build(&c, it);
}

/* dtype of `a + b` with a NULL output */
static weft_dtype result_dtype(weft_tensor* a, weft_tensor* b, bool b_wrapped, bool to_float) {
  weft_iter it;
  if (binary(NULL, a, b, b_wrapped, to_float, &it) != WEFT_OK) return (weft_dtype)-1;
  weft_dtype d = weft_tensor_dtype(weft_iter_output(&it, 0));
  weft_iter_destroy(&it);
  return d;
}

static void test_broadcast(void) {
  int64_t s3[] = {3}, s4[] = {4}, s23[] = {2, 3}, s414[] = {4, 1, 4}, s13[] = {1, 3}, s21[] = {2, 1};
  weft_tensor *a = contig_t(s3, 1, WEFT_FLOAT32), *b = contig_t(s4, 1, WEFT_FLOAT32);
  weft_iter it;
  CHECK(binary(NULL, a, b, false, false, &it) == WEFT_SHAPE_ERROR);
  CHECK_ERROR_HAS("add: The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0");
  weft_tensor *c = contig_t(s23, 2, WEFT_FLOAT32), *d = contig_t(s414, 3, WEFT_FLOAT32);
  CHECK(binary(NULL, c, d, false, false, &it) == WEFT_SHAPE_ERROR);
  CHECK_ERROR_HAS("The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 2");
  /* [1,3] + [2,1] -> [2,3] */
  weft_tensor *e = contig_t(s13, 2, WEFT_FLOAT32), *f = contig_t(s21, 2, WEFT_FLOAT32);
  CHECK(binary(NULL, e, f, false, false, &it) == WEFT_OK);
  CHECK_SIZES(weft_iter_output(&it, 0), 2, 3);
  CHECK_EQ_I64(it.broadcast_ndim, 2);
  CHECK(it.fast_setup == WEFT_ITER_FAST_NONE);
  weft_iter_destroy(&it);
  /* out= of a wrong shape is resized; an in-place output is not */
  weft_tensor* o = contig_t(s4, 1, WEFT_FLOAT32);
  CHECK(binary(o, e, f, false, false, &it) == WEFT_OK);
  CHECK_SIZES(o, 2, 3);
  CHECK_STRIDES(o, 3, 1);
  weft_iter_destroy(&it);
  CHECK(binary(e, e, f, false, false, &it) == WEFT_SHAPE_ERROR);
  CHECK_ERROR_HAS("output with shape [1, 3] doesn't match the broadcast shape [2, 3]");
  weft_tensor* tensors[] = {a, b, c, d, e, f, o};
  for (int i = 0; i < N(tensors); i++) weft_tensor_release(tensors[i]);
}

static void test_promotion(void) {
  int64_t s2[] = {2};
  weft_tensor* i32 = contig_t(s2, 1, WEFT_INT32);
  weft_tensor* u8 = contig_t(s2, 1, WEFT_UINT8);
  weft_tensor* i8 = contig_t(s2, 1, WEFT_INT8);
  weft_tensor* i16 = contig_t(s2, 1, WEFT_INT16);
  weft_tensor* b1 = contig_t(s2, 1, WEFT_BOOL);
  weft_tensor* f16 = contig_t(s2, 1, WEFT_FLOAT16);
  weft_tensor* bf16 = contig_t(s2, 1, WEFT_BFLOAT16);
  weft_tensor *z_f32 = scalar_t(WEFT_FLOAT32), *z_i64 = scalar_t(WEFT_INT64), *z_f64 = scalar_t(WEFT_FLOAT64);
  weft_tensor *z_i32 = scalar_t(WEFT_INT32), *z_u8 = scalar_t(WEFT_UINT8), *z_b = scalar_t(WEFT_BOOL);
  weft_tensor *z_f16 = scalar_t(WEFT_FLOAT16);
  /* every expectation below is what torch 1.13 answers */
  CHECK(result_dtype(i32, z_f32, false, false) == WEFT_FLOAT32);   /* higher category 0-dim */
  CHECK(result_dtype(i32, z_i64, false, false) == WEFT_INT32);     /* same category: ignored */
  CHECK(result_dtype(u8, i8, false, false) == WEFT_INT16);
  CHECK(result_dtype(b1, z_i64, true, false) == WEFT_INT64);       /* bool + 5 */
  CHECK(result_dtype(i32, z_f64, true, false) == WEFT_FLOAT32);    /* int + 2.5 */
  CHECK(result_dtype(f16, z_f64, true, false) == WEFT_FLOAT16);    /* half + 2.5 */
  CHECK(result_dtype(f16, z_f64, false, false) == WEFT_FLOAT16);   /* half + 0-dim double */
  CHECK(result_dtype(z_i64, z_f64, true, false) == WEFT_FLOAT32);  /* all scalars */
  CHECK(result_dtype(z_i32, z_i64, false, false) == WEFT_INT64);
  CHECK(result_dtype(z_b, z_i64, true, false) == WEFT_INT64);
  CHECK(result_dtype(u8, z_i64, true, false) == WEFT_UINT8);       /* uint8 + -1 */
  CHECK(result_dtype(f16, bf16, false, false) == WEFT_FLOAT32);
  CHECK(result_dtype(i8, z_u8, false, false) == WEFT_INT8);
  CHECK(result_dtype(b1, z_u8, false, false) == WEFT_UINT8);
  CHECK(result_dtype(b1, z_b, true, false) == WEFT_BOOL);
  CHECK(result_dtype(z_i32, z_f64, false, false) == WEFT_FLOAT64);
  CHECK(result_dtype(i32, i32, false, true) == WEFT_FLOAT32);      /* true division */
  CHECK(result_dtype(z_f64, z_f32, false, false) == WEFT_FLOAT64);
  CHECK(result_dtype(i16, z_f16, false, false) == WEFT_FLOAT16);

  /* casts are recorded, not materialized */
  weft_iter it;
  CHECK(binary(NULL, i32, z_f64, true, false, &it) == WEFT_OK);
  CHECK(it.common_dtype == WEFT_FLOAT32);
  CHECK(weft_iter_dtype(&it, 1) == WEFT_INT32 && weft_iter_target_dtype(&it, 1) == WEFT_FLOAT32);
  CHECK(weft_iter_needs_cast(&it, 1) && weft_iter_needs_cast(&it, 2) && !weft_iter_needs_cast(&it, 0));
  weft_iter_destroy(&it);

  /* out dtype checks */
  weft_tensor* out_i64 = contig_t(s2, 1, WEFT_INT64);
  CHECK(binary(out_i64, i32, z_f32, false, false, &it) == WEFT_TYPE_ERROR);
  CHECK_ERROR_HAS("add: result type float32 can't be cast to the desired output type int64");
  CHECK(binary(out_i64, i32, i8, false, false, &it) == WEFT_OK); /* int32 -> int64 is fine */
  CHECK(weft_iter_target_dtype(&it, 0) == WEFT_INT32 && weft_iter_dtype(&it, 0) == WEFT_INT64);
  weft_iter_destroy(&it);
  weft_tensor* out_b = contig_t(s2, 1, WEFT_BOOL);
  CHECK(binary(out_b, i32, i8, false, false, &it) == WEFT_TYPE_ERROR);
  CHECK_ERROR_HAS("result type int32 can't be cast to the desired output type bool");

  /* check_all_same_dtype (unary ops): "Found dtype int64 but expected int32" */
  weft_iter_config c = weft_iter_config_init();
  weft_iter_config_set_op_name(&c, "neg");
  weft_iter_config_add_output(&c, out_i64);
  weft_iter_config_add_input(&c, i32);
  CHECK(weft_iter_build(&c, &it) == WEFT_TYPE_ERROR);
  CHECK_ERROR_HAS("neg: Found dtype int64 but expected int32");

  weft_tensor* all[] = {i32, u8, i8, i16, b1, f16, bf16, z_f32, z_i64, z_f64, z_i32, z_u8, z_b, z_f16, out_i64, out_b};
  for (int i = 0; i < N(all); i++) weft_tensor_release(all[i]);
}

static void test_overlap(void) {
  int64_t s3[] = {3}, s23[] = {2, 3}, st_exp[] = {0, 1}, s10[] = {10};
  weft_tensor* base = contig_t(s3, 1, WEFT_FLOAT32);
  weft_tensor* expanded = weft_tensor_from_storage(weft_tensor_storage(base), s23, st_exp, 2, 0, WEFT_FLOAT32);
  weft_tensor* src = contig_t(s23, 2, WEFT_FLOAT32);
  weft_iter it;
  CHECK(weft__copy_iter_build(expanded, src, &it) == WEFT_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("copy_: unsupported operation: more than one element of the written-to tensor refers to a "
                  "single memory location. Please clone() the tensor before performing the operation.");
  /* a[2:7] = a[0:5] + a[0:5] */
  weft_tensor* a = contig_t(s10, 1, WEFT_FLOAT32);
  int64_t s5[] = {5}, st1[] = {1};
  weft_tensor* lo = weft_tensor_from_storage(weft_tensor_storage(a), s5, st1, 1, 0, WEFT_FLOAT32);
  weft_tensor* mid = weft_tensor_from_storage(weft_tensor_storage(a), s5, st1, 1, 2, WEFT_FLOAT32);
  weft_tensor* hi = weft_tensor_from_storage(weft_tensor_storage(a), s5, st1, 1, 5, WEFT_FLOAT32);
  CHECK(binary(mid, lo, lo, false, false, &it) == WEFT_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("unsupported operation: some elements of the input tensor and the written-to tensor refer to "
                  "a single memory location. Please clone() the tensor before performing the operation.");
  /* disjoint halves, and exact in-place (another handle, same layout) are fine */
  CHECK(binary(hi, lo, lo, false, false, &it) == WEFT_OK);
  weft_iter_destroy(&it);
  weft_tensor* lo2 = weft_tensor_from_storage(weft_tensor_storage(a), s5, st1, 1, 0, WEFT_FLOAT32);
  CHECK(binary(lo2, lo, hi, false, false, &it) == WEFT_OK);
  CHECK(it.ops[0].is_read_write);
  weft_iter_destroy(&it);
  /* check_mem_overlap(false) lets it through */
  weft_iter_config c = weft_iter_config_init();
  weft_iter_config_add_output(&c, expanded);
  weft_iter_config_add_input(&c, src);
  weft_iter_config_check_mem_overlap(&c, false);
  CHECK(weft_iter_build(&c, &it) == WEFT_OK);
  weft_iter_destroy(&it);
  weft_tensor* all[] = {base, expanded, src, a, lo, mid, hi, lo2};
  for (int i = 0; i < N(all); i++) weft_tensor_release(all[i]);
}

/* output strides of `a + b` (NULL out) */
static bool out_strides_are(weft_tensor* a, weft_tensor* b, bool b_wrapped, const int64_t* want, int n) {
  weft_iter it;
  if (binary(NULL, a, b, b_wrapped, false, &it) != WEFT_OK) return false;
  weft_tensor* o = weft_iter_output(&it, 0);
  bool ok = weft_tensor_dim(o) == n;
  for (int i = 0; ok && i < n; i++) ok = weft_tensor_strides(o)[i] == want[i];
  if (!ok) {
    fprintf(stderr, "  got strides");
    for (int i = 0; i < weft_tensor_dim(o); i++) fprintf(stderr, " %lld", (long long)weft_tensor_strides(o)[i]);
    fprintf(stderr, "\n");
  }
  weft_iter_destroy(&it);
  return ok;
}

static void test_layouts(void) {
  /* expectations from torch 1.13 */
  int64_t s4d[] = {1, 64, 5, 4};
  weft_tensor* x = weft_empty(s4d, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST);
  weft_tensor* xc = contig_t(s4d, 4, WEFT_FLOAT32);
  int64_t cl[] = {1280, 1, 256, 64}, nchw[] = {1280, 20, 4, 1};
  CHECK(out_strides_are(x, x, false, cl, 4));
  CHECK(out_strides_are(x, xc, false, cl, 4));   /* the first operand decides */
  CHECK(out_strides_are(xc, x, false, nchw, 4));

  int64_t s34[] = {3, 4}, st_t[] = {1, 3}, s4[] = {4};
  weft_tensor* y = strided_t(s34, st_t, 2, WEFT_FLOAT32); /* ones(4,3).t() */
  weft_tensor* yc = contig_t(s34, 2, WEFT_FLOAT32);
  weft_tensor* v4 = contig_t(s4, 1, WEFT_FLOAT32);
  weft_tensor* one = scalar_t(WEFT_INT64);
  int64_t t13[] = {1, 3}, t41[] = {4, 1};
  CHECK(out_strides_are(y, yc, false, t13, 2));
  CHECK(out_strides_are(yc, y, false, t41, 2));
  CHECK(out_strides_are(y, v4, false, t13, 2));
  CHECK(out_strides_are(v4, y, false, t13, 2)); /* the broadcast operand defers */
  CHECK(out_strides_are(y, one, true, t13, 2));

  int64_t s423[] = {4, 2, 3}, st_p[] = {1, 12, 4}, s3[] = {3}, s411[] = {4, 1, 1};
  weft_tensor* z = strided_t(s423, st_p, 3, WEFT_FLOAT32); /* ones(2,3,4).permute(2,0,1) */
  weft_tensor* v3 = contig_t(s3, 1, WEFT_FLOAT32);
  weft_tensor* v411 = contig_t(s411, 3, WEFT_FLOAT32);
  CHECK(out_strides_are(z, z, false, st_p, 3));
  CHECK(out_strides_are(z, v3, false, st_p, 3));
  CHECK(out_strides_are(z, v411, false, st_p, 3));

  int64_t s83[] = {8, 3}, st_s[] = {6, 2}, t31[] = {3, 1};
  weft_tensor* w = strided_t(s83, st_s, 2, WEFT_FLOAT32); /* ones(8,6)[:, ::2] */
  CHECK(out_strides_are(w, w, false, t31, 2));
  CHECK(out_strides_are(w, one, true, t31, 2));

  int64_t s2311[] = {2, 3, 1, 1}, st_n[] = {3, 1, 3, 3}, t3111[] = {3, 1, 1, 1};
  weft_tensor* n = strided_t(s2311, st_n, 4, WEFT_FLOAT32); /* NC11 channels_last */
  weft_tensor* nc = contig_t(s2311, 4, WEFT_FLOAT32);
  CHECK(out_strides_are(n, n, false, t3111, 4));
  CHECK(out_strides_are(n, nc, false, t3111, 4));

  int64_t s1344[] = {1, 3, 4, 4}, s311[] = {3, 1, 1}, t_cl[] = {48, 1, 12, 3};
  weft_tensor* m = weft_empty(s1344, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST);
  weft_tensor* v311 = contig_t(s311, 3, WEFT_FLOAT32);
  CHECK(out_strides_are(m, v311, false, t_cl, 4));
  CHECK(out_strides_are(v311, m, false, t_cl, 4)); /* channels_last in -> channels_last out */

  weft_tensor* all[] = {x, xc, y, yc, v4, one, z, v3, v411, w, n, nc, m, v311};
  for (int i = 0; i < N(all); i++) weft_tensor_release(all[i]);
}

typedef struct {
  int ndim;
  int64_t sizes[WEFT_MAX_DIMS], strides[WEFT_MAX_DIMS];
} layout;
static const struct {
  layout a, b, out;
} layout_cases[] = {
#include "iter_layout_cases.inc"
};

/* Output strides of a + b for random layouts (permuted, sliced, expanded,
 * broadcast) equal torch's. */
static void test_layouts_vs_torch(void) {
  int bad = 0;
  for (int i = 0; i < N(layout_cases); i++) {
    const layout* la = &layout_cases[i].a;
    const layout* lb = &layout_cases[i].b;
    const layout* lo = &layout_cases[i].out;
    weft_tensor* a = strided_t(la->sizes, la->strides, la->ndim, WEFT_FLOAT32);
    weft_tensor* b = strided_t(lb->sizes, lb->strides, lb->ndim, WEFT_FLOAT32);
    if (!a || !b || !out_strides_are(a, b, false, lo->strides, lo->ndim)) {
      fprintf(stderr, "  layout case %d differs from torch\n", i);
      bad++;
    }
    weft_tensor_release(a);
    weft_tensor_release(b);
  }
  CHECK_EQ_I64(bad, 0);
}

static void test_seed_plan(void) {
  /* contiguous(channels_last) of [1,64,5,4]: out = empty channels_last, in = NCHW */
  int64_t s[] = {1, 64, 5, 4};
  weft_tensor* out = weft_empty(s, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST);
  weft_tensor* in = contig_t(s, 4, WEFT_FLOAT32);
  weft_iter it;
  CHECK(weft__copy_iter_build(out, in, &it) == WEFT_OK);
  CHECK(it.fast_setup == WEFT_ITER_FAST_NONE);
  CHECK_EQ_I64(it.ndim, 2);
  CHECK_EQ_I64(it.shape[0], 64);
  CHECK_EQ_I64(it.shape[1], 20);
  CHECK_EQ_I64(it.ops[0].stride_bytes[0], 4);
  CHECK_EQ_I64(it.ops[0].stride_bytes[1], 256);
  CHECK_EQ_I64(it.ops[1].stride_bytes[0], 80);
  CHECK_EQ_I64(it.ops[1].stride_bytes[1], 4);
  /* the seed: after reorder shape_ = [64, 4, 5, 1], i.e. perm = [1, 3, 2, 0] */
  CHECK_EQ_I64(it.perm_ndim, 4);
  CHECK(it.perm[0] == 1 && it.perm[1] == 3 && it.perm[2] == 2 && it.perm[3] == 0);
  CHECK(weft_iter_loop_kind(&it) == WEFT_LOOP_TRANSPOSE);
  char* json = weft_iter_explain_json(&it, WEFT_GRAIN_SIZE);
  CHECK(json != NULL);
  if (json) {
    CHECK(strstr(json, "\"shape\":[64,20]") != NULL);
    CHECK(strstr(json, "\"strides\":[[4,256],[80,4]]") != NULL);
    CHECK(strstr(json, "\"broadcastShape\":[1,64,5,4]") != NULL);
    CHECK(strstr(json, "\"permutation\":[1,3,2,0]") != NULL);
    CHECK(strstr(json, "\"loop\":\"transpose\"") != NULL);
    CHECK(strstr(json, "\"fastSetup\":\"none\"") != NULL);
    CHECK(strstr(json, "\"chunks\":1") != NULL);
    free(json);
  }
  weft_iter_destroy(&it);

  /* all contiguous: fast setup, one dim */
  weft_tensor* in2 = contig_t(s, 4, WEFT_FLOAT32);
  weft_tensor* out2 = contig_t(s, 4, WEFT_FLOAT32);
  CHECK(weft__copy_iter_build(out2, in2, &it) == WEFT_OK);
  CHECK(it.fast_setup == WEFT_ITER_FAST_CONTIGUOUS);
  CHECK_EQ_I64(it.ndim, 1);
  CHECK_EQ_I64(it.shape[0], 1280);
  CHECK(weft_iter_loop_kind(&it) == WEFT_LOOP_VECTORIZED);
  weft_iter_destroy(&it);
  /* broadcast a row: scalar-broadcast inner loop */
  int64_t s_row[] = {5, 1}, s_full[] = {5, 7};
  weft_tensor* col = contig_t(s_row, 2, WEFT_FLOAT32);
  weft_tensor* full = contig_t(s_full, 2, WEFT_FLOAT32);
  CHECK(weft__copy_iter_build(full, col, &it) == WEFT_OK);
  CHECK(weft_iter_loop_kind(&it) == WEFT_LOOP_SCALAR_BROADCAST);
  CHECK_EQ_I64(it.ops[1].stride_bytes[0], 0);
  weft_iter_destroy(&it);
  weft_tensor* all[] = {out, in, in2, out2, col, full};
  for (int i = 0; i < N(all); i++) weft_tensor_release(all[i]);
}

static void test_coalesce(void) {
  /* [2,3,4] sliced in the last dim: the first two dims merge, the last does not */
  int64_t s[] = {2, 3, 4}, st[] = {24, 8, 1}, so[] = {2, 3, 4};
  weft_tensor* in = strided_t(s, st, 3, WEFT_INT16);
  weft_tensor* out = contig_t(so, 3, WEFT_INT16);
  weft_iter it;
  CHECK(weft__copy_iter_build(out, in, &it) == WEFT_OK);
  CHECK_EQ_I64(it.ndim, 2);
  CHECK_EQ_I64(it.shape[0], 4);
  CHECK_EQ_I64(it.shape[1], 6);
  CHECK_EQ_I64(it.ops[0].stride_bytes[1], 8);
  CHECK_EQ_I64(it.ops[1].stride_bytes[1], 16);
  CHECK(weft_iter_has_contiguous_first_dim(&it));
  weft_iter_destroy(&it);
  /* size-1 dims vanish whatever their stride */
  int64_t s1[] = {3, 1, 5}, st1[] = {5, 99, 1};
  weft_tensor* a = strided_t(s1, st1, 3, WEFT_FLOAT32);
  weft_tensor* b = contig_t(s1, 3, WEFT_FLOAT32);
  CHECK(weft__copy_iter_build(b, a, &it) == WEFT_OK);
  CHECK_EQ_I64(it.ndim, 1);
  CHECK_EQ_I64(it.shape[0], 15);
  weft_iter_destroy(&it);
  /* linear iteration keeps a transposed input in logical order */
  int64_t s2[] = {3, 4}, st2[] = {1, 3};
  weft_tensor* t = strided_t(s2, st2, 2, WEFT_FLOAT32);
  weft_iter_config c = weft_iter_config_init();
  weft_iter_config_add_output(&c, NULL);
  weft_iter_config_add_input(&c, t);
  weft_iter_config_enforce_linear_iteration(&c, true);
  CHECK(weft_iter_build(&c, &it) == WEFT_OK);
  CHECK_STRIDES(weft_iter_output(&it, 0), 4, 1);
  CHECK_EQ_I64(it.ops[1].stride_bytes[0], 12);
  weft_iter_destroy(&it);
  weft_tensor* all[] = {in, out, a, b, t};
  for (int i = 0; i < N(all); i++) weft_tensor_release(all[i]);
}

static void test_static_and_misc(void) {
  int64_t s[] = {2, 3};
  weft_tensor* a = contig_t(s, 2, WEFT_FLOAT32);
  weft_iter it;
  weft_iter_config c = weft_iter_config_init();
  weft_iter_config_add_output(&c, NULL);
  weft_iter_config_add_input(&c, a);
  weft_iter_config_check_all_same_dtype(&c, false);
  weft_iter_config_declare_static_dtype(&c, WEFT_BOOL);
  CHECK(weft_iter_build(&c, &it) == WEFT_OK);
  CHECK(weft_tensor_dtype(weft_iter_output(&it, 0)) == WEFT_BOOL);
  weft_iter_destroy(&it);
  /* misuse is reported by build */
  c = weft_iter_config_init();
  weft_iter_config_declare_static_dtype(&c, WEFT_BOOL);
  CHECK(weft_iter_build(&c, &it) == WEFT_INTERNAL);
  CHECK_ERROR_HAS("check_all_same_dtype(false) must be called before declare_static_dtype(...)");
  c = weft_iter_config_init();
  weft_iter_config_add_input(&c, a);
  weft_iter_config_add_output(&c, NULL);
  CHECK(weft_iter_build(&c, &it) == WEFT_INTERNAL);
  /* owned references are consumed by build, on success and on error */
  int32_t rc = weft_tensor_refcount(a);
  c = weft_iter_config_init();
  weft_iter_config_add_output(&c, NULL);
  weft_iter_config_add_owned_input(&c, weft_tensor_retain(a));
  CHECK(weft_iter_build(&c, &it) == WEFT_OK);
  CHECK_EQ_I64(weft_tensor_refcount(a), rc + 1); /* the iterator's */
  weft_iter_destroy(&it);
  CHECK_EQ_I64(weft_tensor_refcount(a), rc);
  /* 0-dim everything: ndim 0, one element */
  weft_tensor* z = scalar_t(WEFT_FLOAT32);
  CHECK(binary(NULL, z, z, false, false, &it) == WEFT_OK);
  CHECK_EQ_I64(it.ndim, 0);
  CHECK_EQ_I64(weft_iter_numel(&it), 1);
  CHECK_EQ_I64(weft_tensor_dim(weft_iter_output(&it, 0)), 0);
  weft_iter_destroy(&it);
  /* zero-size */
  int64_t s0[] = {0, 3};
  weft_tensor* e = contig_t(s0, 2, WEFT_FLOAT32);
  CHECK(binary(NULL, e, a, false, false, &it) == WEFT_SHAPE_ERROR);
  int64_t s03[] = {3};
  weft_tensor* r = contig_t(s03, 1, WEFT_FLOAT32);
  CHECK(binary(NULL, e, r, false, false, &it) == WEFT_OK);
  CHECK_EQ_I64(weft_iter_numel(&it), 0);
  CHECK_SIZES(weft_iter_output(&it, 0), 0, 3);
  weft_iter_destroy(&it);
  /* out= of the wrong size takes the layout the inputs suggest (torch: add(x, x, out=empty(0))) */
  int64_t s4[] = {2, 3, 4, 5}, s7[] = {7}, s34[] = {3, 4}, st_t[] = {1, 3};
  weft_tensor* x = weft_empty(s4, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST);
  weft_tensor* o = contig_t(s7, 1, WEFT_FLOAT32);
  CHECK(binary(o, x, x, false, false, &it) == WEFT_OK);
  CHECK_STRIDES(o, 60, 1, 15, 3);
  weft_iter_destroy(&it);
  weft_tensor* y = strided_t(s34, st_t, 2, WEFT_FLOAT32);
  CHECK(binary(o, y, y, false, false, &it) == WEFT_OK);
  CHECK_STRIDES(o, 1, 3);
  weft_iter_destroy(&it);
  /* a right-sized out= keeps its own strides */
  weft_tensor* oc = contig_t(s34, 2, WEFT_FLOAT32);
  CHECK(binary(oc, y, y, false, false, &it) == WEFT_OK);
  CHECK_STRIDES(oc, 4, 1);
  CHECK_EQ_I64(it.ndim, 2);
  weft_iter_destroy(&it);
  /* static shape: no broadcasting checks, no fast setup */
  c = weft_iter_config_init();
  weft_iter_config_add_output(&c, oc);
  weft_iter_config_add_input(&c, y);
  weft_iter_config_resize_outputs(&c, false);
  weft_iter_config_declare_static_shape(&c, s34, 2);
  CHECK(weft_iter_build(&c, &it) == WEFT_OK);
  CHECK(it.fast_setup == WEFT_ITER_FAST_NONE);
  CHECK_EQ_I64(weft_iter_numel(&it), 12);
  weft_iter_destroy(&it);
  c = weft_iter_config_init();
  weft_iter_config_declare_static_shape(&c, s34, 2);
  CHECK(weft_iter_build(&c, &it) == WEFT_INTERNAL);
  CHECK_ERROR_HAS("resize_outputs() must be called before declare_static_shape(...)");
  weft_tensor* all[] = {a, z, e, r, x, o, y, oc};
  for (int i = 0; i < N(all); i++) weft_tensor_release(all[i]);
}

/* ---- DimCounter ---- */

static void test_dim_counter_seed(void) {
  int64_t shape[] = {64, 2000, 10}, step[2];
  weft_dim_counter dc;
  weft_dim_counter_init(&dc, shape, 3, 1066670, 1280000);
  CHECK(dc.values[0] == 46 && dc.values[1] == 666 && dc.values[2] == 8);
  weft_dim_counter_max_2d_step(&dc, step);
  CHECK(step[0] == 18 && step[1] == 1);
  weft_dim_counter_increment(&dc, step);
  CHECK(dc.values[0] == 0 && dc.values[1] == 667 && dc.values[2] == 8);
  weft_dim_counter_max_2d_step(&dc, step);
  CHECK(step[0] == 64 && step[1] == 1333);
  weft_dim_counter_increment(&dc, step);
  CHECK(dc.values[0] == 0 && dc.values[1] == 0 && dc.values[2] == 9);
  weft_dim_counter_max_2d_step(&dc, step);
  CHECK(step[0] == 64 && step[1] == 2000);
  weft_dim_counter_increment(&dc, step);
  CHECK(weft_dim_counter_is_done(&dc));
  CHECK_EQ_I64(dc.offset, 1280000);
}

/* Every range of odd shapes is covered exactly once, in order, by 2-D steps. */
static void test_dim_counter_property(void) {
  unsigned seed = 7;
  int bad = 0;
  for (int trial = 0; trial < 400; trial++) {
    int ndim = 2 + (int)(rand_r(&seed) % 4);
    int64_t shape[WEFT_MAX_DIMS], numel = 1;
    for (int d = 0; d < ndim; d++) {
      shape[d] = 1 + rand_r(&seed) % 7;
      numel *= shape[d];
    }
    int64_t begin = rand_r(&seed) % (numel + 1);
    int64_t end = begin + rand_r(&seed) % (numel - begin + 1);
    if (end == begin) continue; /* serial_for_each never counts an empty range */
    weft_dim_counter dc;
    weft_dim_counter_init(&dc, shape, ndim, begin, end);
    int64_t expect = begin, step[2];
    while (!weft_dim_counter_is_done(&dc)) {
      int64_t lin = 0, mul = 1; /* values -> linear index */
      for (int d = 0; d < ndim; d++) {
        lin += dc.values[d] * mul;
        mul *= shape[d];
      }
      if (lin != expect) bad++;
      weft_dim_counter_max_2d_step(&dc, step);
      if (step[0] < 1 || step[1] < 1 || dc.values[0] + step[0] > shape[0]) bad++;
      if (step[1] > 1 && (dc.values[0] != 0 || step[0] != shape[0] || dc.values[1] + step[1] > shape[1])) bad++;
      expect += step[0] * step[1];
      weft_dim_counter_increment(&dc, step);
    }
    if (expect != end && end > begin) bad++;
  }
  CHECK_EQ_I64(bad, 0);
}

int main(void) {
  test_broadcast();
  test_promotion();
  test_overlap();
  test_layouts();
  test_layouts_vs_torch();
  test_seed_plan();
  test_coalesce();
  test_static_and_misc();
  test_dim_counter_seed();
  test_dim_counter_property();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
