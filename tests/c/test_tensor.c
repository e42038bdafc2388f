/* The tensor model: dtypes, flags, memory formats, factories, overflow,
 * allocation failure, reference copy, clone and contiguous. */
#include <stdlib.h>

#include "base/half.h"
#include "core/internal.h"
#include "core/scalar.h"
#include "test.h"

static void test_dtypes(void) {
  CHECK(strcmp(weft_dtype_name(WEFT_FLOAT32), "float32") == 0);
  CHECK(strcmp(weft_dtype_name(WEFT_BFLOAT16), "bfloat16") == 0);
  CHECK_EQ_I64(weft_dtype_size(WEFT_INT64), 8);
  CHECK_EQ_I64(weft_dtype_size(WEFT_FLOAT16), 2);
  weft_dtype t;
  CHECK(weft_dtype_from_name("torch.half", &t) == WEFT_OK && t == WEFT_FLOAT16);
  CHECK(weft_dtype_from_name("long", &t) == WEFT_OK && t == WEFT_INT64);
  CHECK(weft_dtype_from_name("complex64", &t) == WEFT_TYPE_ERROR);
  CHECK_ERROR_HAS("unknown dtype 'complex64'");
  CHECK(weft_promote_types(WEFT_UINT8, WEFT_INT8) == WEFT_INT16);
  CHECK(weft_promote_types(WEFT_FLOAT16, WEFT_BFLOAT16) == WEFT_FLOAT32);
  CHECK(weft_promote_types(WEFT_INT64, WEFT_FLOAT16) == WEFT_FLOAT16);
  CHECK(weft_promote_types(WEFT_BOOL, WEFT_UINT8) == WEFT_UINT8);
  CHECK(weft_promote_types(WEFT_UINT8, WEFT_INT32) == WEFT_INT32);
  CHECK(weft_promote_types(WEFT_BFLOAT16, WEFT_FLOAT64) == WEFT_FLOAT64);
  for (int a = 0; a < WEFT_DTYPE_COUNT; a++)
    for (int b = 0; b < WEFT_DTYPE_COUNT; b++)
      CHECK(weft_promote_types(a, b) == weft_promote_types(b, a));
  CHECK(!weft_can_cast(WEFT_FLOAT32, WEFT_INT64));
  CHECK(!weft_can_cast(WEFT_INT8, WEFT_BOOL));
  CHECK(weft_can_cast(WEFT_INT64, WEFT_FLOAT16));
}

static weft_tensor* strided(const int64_t* sizes, const int64_t* strides, int64_t ndim) {
  return weft_empty_strided(sizes, strides, ndim, WEFT_FLOAT32, WEFT_DEVICE_CPU);
}

static void test_flags(void) {
  /* the seed's example: [2,2048,1,1] @ [2048,1,1,1] is contiguous AND channels_last */
  int64_t s1[] = {2, 2048, 1, 1}, st1[] = {2048, 1, 1, 1};
  weft_tensor* a = strided(s1, st1, 4);
  CHECK(weft_tensor_is_contiguous(a, WEFT_CONTIGUOUS_FORMAT));
  CHECK(weft_tensor_is_contiguous(a, WEFT_CHANNELS_LAST));
  CHECK(weft_tensor_is_non_overlapping_and_dense(a));
  /* ambiguous: suggest_memory_format falls back to NCHW for N,C,1,1 */
  CHECK(weft_tensor_suggest_memory_format(a) == WEFT_CONTIGUOUS_FORMAT);
  weft_tensor_release(a);

  int64_t s2[] = {1, 64, 5, 4};
  weft_tensor* b = weft_empty(s2, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST);
  CHECK_STRIDES(b, 1280, 1, 256, 64);
  CHECK(!weft_tensor_is_contiguous(b, WEFT_CONTIGUOUS_FORMAT));
  CHECK(weft_tensor_is_contiguous(b, WEFT_CHANNELS_LAST));
  CHECK(weft_tensor_suggest_memory_format(b) == WEFT_CHANNELS_LAST);
  CHECK(weft_tensor_is_non_overlapping_and_dense(b));
  weft_tensor_release(b);

  /* a permuted (non-standard order) tensor is dense but neither format */
  int64_t s3[] = {3, 4, 5}, st3[] = {1, 15, 3};
  weft_tensor* c = strided(s3, st3, 3);
  CHECK(!weft_tensor_is_contiguous(c, WEFT_CONTIGUOUS_FORMAT));
  CHECK(weft_tensor_is_non_overlapping_and_dense(c));
  weft_tensor_release(c);

  /* gaps: not dense */
  int64_t s4[] = {3, 4}, st4[] = {8, 1};
  weft_tensor* d = strided(s4, st4, 2);
  CHECK(!weft_tensor_is_non_overlapping_and_dense(d));
  CHECK(!weft_tensor_is_contiguous(d, WEFT_CONTIGUOUS_FORMAT));
  weft_tensor_release(d);

  /* 1-D rule and 0-dim */
  int64_t s5[] = {5}, st5[] = {2};
  weft_tensor* e = strided(s5, st5, 1);
  CHECK(!weft_tensor_is_non_overlapping_and_dense(e));
  weft_tensor_release(e);
  weft_tensor* z = weft_empty(NULL, 0, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  CHECK(weft_tensor_is_contiguous(z, WEFT_CONTIGUOUS_FORMAT) && weft_tensor_numel(z) == 1);
  CHECK(weft_tensor_is_non_overlapping_and_dense(z));
  weft_tensor_release(z);

  /* channels_last_3d */
  int64_t s6[] = {2, 3, 4, 5, 6};
  weft_tensor* f = weft_empty(s6, 5, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST_3D);
  CHECK_STRIDES(f, 360, 1, 90, 18, 3);
  CHECK(weft_tensor_is_contiguous(f, WEFT_CHANNELS_LAST_3D));
  CHECK(!weft_tensor_is_contiguous(f, WEFT_CHANNELS_LAST));
  CHECK(weft_tensor_suggest_memory_format(f) == WEFT_CHANNELS_LAST_3D);
  weft_tensor_release(f);

  /* N1H1: channels_last strides [H,1,1,1] vs contiguous [H,H,1,1] */
  int64_t s7[] = {2, 1, 3, 1}, cl7[] = {3, 1, 1, 1}, nc7[] = {3, 3, 1, 1};
  weft_tensor* g = strided(s7, cl7, 4);
  weft_tensor* h = strided(s7, nc7, 4);
  CHECK(weft_tensor_is_contiguous(g, WEFT_CHANNELS_LAST) && weft_tensor_is_contiguous(g, WEFT_CONTIGUOUS_FORMAT));
  CHECK(weft_tensor_suggest_memory_format(g) == WEFT_CHANNELS_LAST);
  CHECK(weft_tensor_suggest_memory_format(h) == WEFT_CONTIGUOUS_FORMAT);
  weft_tensor_release(g);
  weft_tensor_release(h);

  /* zero-size: contiguous strides use max(size,1), channels_last ones do not */
  int64_t s8[] = {2, 0, 3, 3};
  weft_tensor* i = weft_empty(s8, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  CHECK_STRIDES(i, 9, 9, 3, 1);
  CHECK(weft_tensor_is_contiguous(i, WEFT_CONTIGUOUS_FORMAT));
  weft_tensor_release(i);
  weft_tensor* j = weft_empty(s8, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST);
  CHECK_STRIDES(j, 0, 1, 0, 0);
  weft_tensor_release(j);
}

static void test_factories_and_errors(void) {
  int64_t bad[] = {-1, 2};
  CHECK(weft_empty(bad, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT) == NULL);
  CHECK_ERROR_HAS("Trying to create tensor with negative dimension -1: [-1, 2]");
  int64_t s3[] = {2, 3, 4};
  CHECK(weft_empty(s3, 3, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST) == NULL);
  CHECK_ERROR_HAS("required rank 4 tensor to use channels_last format");
  CHECK(weft_empty(s3, 17, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT) == NULL);
  /* numel overflow is an error, not a wrap */
  int64_t huge[] = {INT64_C(1) << 32, INT64_C(1) << 32};
  CHECK(weft_empty(huge, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT) == NULL);
  CHECK(weft_last_status() == WEFT_OVERFLOW);
  /* nbytes overflow */
  int64_t big[] = {INT64_C(1) << 62};
  CHECK(weft_empty(big, 1, WEFT_FLOAT64, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT) == NULL);
  CHECK(weft_last_status() == WEFT_OVERFLOW);
  /* fits int64 but not memory */
  int64_t large[] = {INT64_C(1) << 50};
  CHECK(weft_empty(large, 1, WEFT_UINT8, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT) == NULL);
  CHECK(weft_last_status() == WEFT_OUT_OF_MEMORY);
  CHECK_ERROR_HAS("out of memory: tried to allocate 1125899906842624 bytes");
  /* zero-size shapes whose other sizes would overflow: numel 0, strides overflow */
  int64_t zhuge[] = {INT64_C(1) << 40, INT64_C(1) << 40, INT64_C(1) << 40, 0};
  CHECK(weft_empty(zhuge, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT) == NULL);
  CHECK_ERROR_HAS("Stride calculation overflowed");
  int64_t zok[] = {INT64_C(1) << 40, 0, 3};
  weft_tensor* zt = weft_empty(zok, 3, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  CHECK(zt && weft_tensor_numel(zt) == 0);
  weft_tensor_release(zt);
  /* meta tensors allocate nothing, and bytes_in_use says so */
  weft_memory_stats m0 = weft_memory();
  weft_tensor* m = weft_empty(large, 1, WEFT_UINT8, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  CHECK(m && weft_tensor_data_ptr(m) == NULL && weft_tensor_device(m) == WEFT_DEVICE_META);
  CHECK_EQ_I64(weft_memory().bytes_in_use, m0.bytes_in_use);
  CHECK_EQ_I64(weft_memory().meta_bytes, m0.meta_bytes + large[0]);
  CHECK_EQ_I64(weft_memory().storages, m0.storages + 1);
  weft_tensor_release(m);
  CHECK_EQ_I64(weft_memory().meta_bytes, m0.meta_bytes);
  int64_t st[] = {1, -1};
  int64_t sz[] = {2, 2};
  CHECK(weft_empty_strided(sz, st, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU) == NULL);

  weft_tensor* a = weft_arange(0, 10, 3, WEFT_INT64, WEFT_DEVICE_CPU);
  CHECK_SIZES(a, 4);
  CHECK(weft_tensor_get_double(a, 3) == 9);
  weft_tensor_release(a);
  a = weft_arange(1, 0, 0.25, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(a == NULL);
  CHECK_ERROR_HAS("upper bound and larger bound inconsistent with step sign");
  a = weft_arange(0, 1, -0.25, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(a == NULL);
  a = weft_arange(1, 0, -0.25, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  CHECK_SIZES(a, 4);
  CHECK(weft_tensor_get_double(a, 3) == 0.25);
  weft_tensor_release(a);

  weft_tensor* f = weft_full(s3, 3, 2.5, WEFT_INT32, WEFT_DEVICE_CPU);
  CHECK(weft_tensor_get_double(f, 23) == 2);
  weft_tensor_release(f);
  f = weft_full(s3, 3, -0.5, WEFT_BOOL, WEFT_DEVICE_CPU);
  CHECK(weft_tensor_get_double(f, 0) == 1);
  weft_tensor_release(f);
  /* a value the dtype cannot hold is fill_'s overflow error, not an unfilled tensor */
  weft_memory_stats f0 = weft_memory();
  CHECK(weft_full(s3, 3, 1e300, WEFT_INT32, WEFT_DEVICE_CPU) == NULL);
  CHECK(weft_last_status() == WEFT_OVERFLOW);
  CHECK_ERROR_HAS("value cannot be converted to type int32 without overflow");
  CHECK_EQ_I64(weft_memory().tensors, f0.tensors);
  CHECK_EQ_I64(weft_memory().bytes_in_use, f0.bytes_in_use);
}

static void test_rand(void) {
  /* torch.manual_seed(0); torch.rand(3) */
  weft_manual_seed(0);
  int64_t n = 3;
  weft_tensor* r = weft_rand(&n, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(fabs(weft_tensor_get_double(r, 0) - 0.49625658988952637) < 1e-7);
  CHECK(fabs(weft_tensor_get_double(r, 1) - 0.7682217955589294) < 1e-7);
  CHECK(fabs(weft_tensor_get_double(r, 2) - 0.08847743272781372) < 1e-7);
  weft_tensor_release(r);
  CHECK(weft_rand(&n, 1, WEFT_INT64, WEFT_DEVICE_CPU) == NULL);
  int64_t big = 1000;
  r = weft_randn(&big, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  double sum = 0, sq = 0;
  for (int i = 0; i < 1000; i++) {
    double v = weft_tensor_get_double(r, i);
    sum += v;
    sq += v * v;
  }
  CHECK(fabs(sum / 1000) < 0.15 && fabs(sq / 1000 - 1) < 0.2);
  weft_tensor_release(r);
}

/* An allocator that fails on demand: the library must report OOM and keep working. */
static int fail_next;
static void* failing_alloc(void* ctx, size_t n) {
  if (fail_next) return NULL;
  return weft_default_allocator()->alloc(ctx, n);
}
static void failing_free(void* ctx, void* p, size_t n) { weft_default_allocator()->free(ctx, p, n); }

static void test_alloc_failure(void) {
  weft_allocator failing = {failing_alloc, failing_free, NULL, "failing"};
  weft_memory_stats before = weft_memory();
  weft_set_allocator(&failing);
  int64_t s[] = {2, 3, 4, 5};
  weft_tensor* src = weft_rand(s, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  fail_next = 1;
  CHECK(weft_empty(s, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT) == NULL);
  CHECK(weft_last_status() == WEFT_OUT_OF_MEMORY);
  CHECK_ERROR_HAS("out of memory: tried to allocate 480 bytes");
  CHECK(weft_contiguous(src, WEFT_CHANNELS_LAST) == NULL);
  CHECK(weft_last_status() == WEFT_OUT_OF_MEMORY);
  fail_next = 0;
  weft_tensor* ok = weft_contiguous(src, WEFT_CHANNELS_LAST);
  CHECK(ok != NULL);
  weft_tensor_release(ok);
  weft_tensor_release(src);
  weft_set_allocator(NULL);
  weft_memory_stats after = weft_memory();
  CHECK_EQ_I64(after.tensors, before.tensors);
  CHECK_EQ_I64(after.storages, before.storages);
  CHECK_EQ_I64(after.bytes_in_use, before.bytes_in_use);
}

static void test_copy_and_contiguous(void) {
  int64_t s[] = {1, 64, 5, 4};
  weft_tensor* x = weft_arange(0, 1280, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* x4 = weft_tensor_from_storage(weft_tensor_storage(x), s, weft_tensor_strides(x) /* unused */, 0, 0,
                                             WEFT_FLOAT32);
  weft_tensor_release(x4);
  int64_t st[] = {1280, 20, 4, 1};
  x4 = weft_tensor_from_storage(weft_tensor_storage(x), s, st, 4, 0, WEFT_FLOAT32);
  CHECK(x4 != NULL);
  /* contiguous() of a contiguous tensor is the tensor itself */
  weft_tensor* same = weft_contiguous(x4, WEFT_CONTIGUOUS_FORMAT);
  CHECK(same == x4);
  weft_tensor_release(same);
  weft_tensor* y = weft_contiguous(x4, WEFT_CHANNELS_LAST);
  CHECK(y != x4);
  CHECK_STRIDES(y, 1280, 1, 256, 64);
  CHECK(!weft_tensor_is_contiguous(y, WEFT_CONTIGUOUS_FORMAT));
  CHECK(weft_tensor_is_contiguous(y, WEFT_CHANNELS_LAST));
  /* element [0,c,h,w] keeps its value, now at c + 64*(w + 4*h) */
  const float* yd = weft_tensor_data_ptr(y);
  CHECK(yd[1] == 20.0f && yd[64] == 1.0f && yd[256] == 4.0f);
  for (int64_t i = 0; i < 1280; i++) CHECK(weft_tensor_get_double(y, i) == (double)i);
  /* and back */
  weft_tensor* z = weft_contiguous(y, WEFT_CONTIGUOUS_FORMAT);
  const float* zd = weft_tensor_data_ptr(z);
  int bad = 0;
  for (int i = 0; i < 1280; i++) bad += zd[i] != (float)i;
  CHECK(bad == 0);
  CHECK(weft_contiguous(y, WEFT_PRESERVE_FORMAT) == NULL);
  CHECK_ERROR_HAS("preserve memory format is unsupported by the contiguous operator");
  /* clone(preserve) keeps a dense permuted layout */
  weft_tensor* c = weft_clone(y, WEFT_PRESERVE_FORMAT);
  CHECK_STRIDES(c, 1280, 1, 256, 64);
  weft_tensor_release(c);
  /* reference copy refuses mismatches */
  CHECK(weft_copy_reference(z, x) == WEFT_SHAPE_ERROR);
  weft_tensor* zi = weft_to_dtype(z, WEFT_INT16, false);
  CHECK(weft_copy_reference(zi, z) == WEFT_TYPE_ERROR);
  CHECK(weft_tensor_get_double(zi, 1279) == 1279);
  weft_tensor_release(zi);
  /* broadcasting copy_ */
  int64_t one[] = {4};
  weft_tensor* row = weft_arange(0, 4, 1, WEFT_INT64, WEFT_DEVICE_CPU);
  CHECK(weft_copy_(z, row) == WEFT_OK);
  CHECK(weft_tensor_get_double(z, 1279) == 3 && weft_tensor_get_double(z, 5) == 1);
  int64_t three[] = {3};
  weft_tensor* bad3 = weft_empty(three, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  CHECK(weft_copy_(z, bad3) == WEFT_SHAPE_ERROR);
  (void)one;
  weft_tensor_release(bad3);
  weft_tensor_release(row);
  weft_tensor_release(z);
  weft_tensor_release(y);
  weft_tensor_release(x4);
  weft_tensor_release(x);
}

/* Found by tests/fuzz (views/crashes/channels-last-stride-overflow): an empty
 * view may have any strides; deciding whether they look channels_last
 * multiplied them by the sizes and overflowed int64 (UBSan). */
static void test_huge_strides_of_an_empty_view(void) {
  weft_tensor* base = weft_empty((const int64_t[]){4}, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* v = weft_as_strided(base, (const int64_t[]){0, 25, 2, 3}, (const int64_t[]){1, INT64_MAX, 3, 1}, 4, 0);
  CHECK(v != NULL);
  if (v) {
    CHECK(weft_tensor_suggest_memory_format(v) == WEFT_CONTIGUOUS_FORMAT);
    weft_tensor* c = weft_contiguous(v, WEFT_PRESERVE_FORMAT);
    CHECK(c != NULL);
    weft_tensor_release(c);
  }
  weft_tensor_release(v);
  weft_tensor_release(base);
}

static void test_conversions(void) {
  CHECK(weft__f32_to_f16(1.0f) == 0x3c00);
  CHECK(weft__f32_to_f16(65504.0f) == 0x7bff);
  CHECK(weft__f32_to_f16(65520.0f) == 0x7c00);
  CHECK(weft__f32_to_f16(65519.0f) == 0x7bff);
  CHECK(weft__f32_to_f16(-0.0f) == 0x8000);
  CHECK(weft__f32_to_f16(5.9604644775390625e-08f) == 0x0001);     /* smallest subnormal */
  CHECK(weft__f32_to_f16(2.98023223876953125e-08f) == 0x0000);    /* half of it: tie to even */
  CHECK(weft__f32_to_f16(8.940696716308594e-08f) == 0x0002);      /* 1.5 ulp: tie to even */
  CHECK(weft__f32_to_f16(1.0009765625f + 0.00048828125f) == 0x3c02); /* 1 + 1.5ulp -> even */
  CHECK(weft__f32_to_f16(1.00048828125f) == 0x3c00);              /* 1 + 0.5 ulp -> even (1) */
  CHECK((weft__f32_to_f16(NAN) & 0x7c00) == 0x7c00 && (weft__f32_to_f16(NAN) & 0x3ff));
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue;
    if (weft__f32_to_f16(weft__f16_to_f32((uint16_t)h)) != h) {
      CHECK(!"f16 round trip");
      break;
    }
  }
  CHECK(weft__f32_to_bf16(1.0f) == 0x3f80);
  CHECK(weft__f32_to_bf16(weft__f32_from_bits(0x3f808000u)) == 0x3f80); /* tie to even */
  CHECK(weft__f32_to_bf16(weft__f32_from_bits(0x3f818000u)) == 0x3f82);
  CHECK(weft__f64_to_i64_sat(-2.7) == -2 && weft__f64_to_i64_sat(NAN) == 0);
}

int main(void) {
  test_dtypes();
  test_flags();
  test_factories_and_errors();
  test_rand();
  test_alloc_failure();
  test_copy_and_contiguous();
  test_huge_strides_of_an_empty_view();
  test_conversions();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
