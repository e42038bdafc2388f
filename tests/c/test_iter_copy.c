/* copy_ on the TensorIterator against an element-by-element oracle (and the
 * reference copy for same-dtype cases): random shapes, permutations, steps,
 * offsets, broadcasting and dtype pairs, at 1-4 threads; writes outside dst
 * are caught with a sentinel. Also for_each chunking with a small grain. */
#include <stdlib.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "ops/cpu/copy_iter.h"
#include "test.h"
#include "weft/iter.h"

static unsigned rng = 12345;
static int rnd(int n) { return (int)(rand_r(&rng) % (unsigned)n); }

typedef struct {
  int ndim;
  int64_t sizes[WEFT_MAX_DIMS];
} shape_t;

/* A view of `sh` over a fresh storage: dims laid out in a random order, each
 * stride stretched by a random step, at a random offset. */
static weft_tensor* random_layout(const shape_t* sh, weft_dtype dt, bool shuffle) {
  int order[WEFT_MAX_DIMS];
  for (int i = 0; i < sh->ndim; i++) order[i] = i;
  for (int i = sh->ndim - 1; shuffle && i > 0; i--) {
    int j = rnd(i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  int64_t strides[WEFT_MAX_DIMS], next = 1 + (shuffle ? rnd(2) : 0);
  for (int k = sh->ndim - 1; k >= 0; k--) { /* order[ndim-1] is innermost */
    int d = order[k];
    strides[d] = next;
    next *= sh->sizes[d] * (shuffle && rnd(4) == 0 ? 2 : 1);
  }
  int64_t offset = shuffle ? rnd(3) : 0;
  int64_t elems = offset + next + 4;
  weft_storage* s = weft_storage_new(elems * (int64_t)weft_dtype_size(dt), WEFT_DEVICE_CPU);
  weft_tensor* t = weft_tensor_from_storage(s, sh->sizes, strides, sh->ndim, offset, dt);
  weft_storage_release(s);
  return t;
}

static void fill_random(weft_tensor* t) {
  weft_storage* s = weft_tensor_storage(t);
  size_t es = weft_dtype_size(t->dtype);
  int64_t n = weft_storage_nbytes(s) / (int64_t)es;
  char* p = weft_storage_data(s);
  for (int64_t i = 0; i < n; i++) {
    weft__value v = {1, 0, (rnd(6000) - 3000) / 8.0};
    weft__store(p + i * (int64_t)es, t->dtype, v);
  }
}

/* byte offset of logical element `lin` of t, broadcasting t to `sh` */
static int64_t elem_offset(const weft_tensor* t, const shape_t* sh, int64_t lin) {
  int64_t off = t->storage_offset;
  for (int d = sh->ndim - 1; d >= 0; d--) {
    int64_t i = lin % sh->sizes[d];
    lin /= sh->sizes[d];
    int td = d - (sh->ndim - t->ndim);
    if (td >= 0 && t->sizes[td] != 1) off += i * t->strides[td];
  }
  return off * (int64_t)weft_dtype_size(t->dtype);
}

/* dst must equal the oracle at its elements and keep the sentinel elsewhere */
static int count_mismatches(const weft_tensor* dst, const weft_tensor* src, const shape_t* sh,
                            const unsigned char* before) {
  const char* d = weft_storage_data(dst->storage);
  const char* s = weft_storage_data(src->storage);
  size_t es = weft_dtype_size(dst->dtype);
  int64_t nbytes = weft_storage_nbytes(dst->storage);
  unsigned char* covered = calloc((size_t)nbytes, 1);
  int bad = 0;
  for (int64_t lin = 0; lin < dst->numel; lin++) {
    int64_t od = elem_offset(dst, sh, lin), os = elem_offset(src, sh, lin);
    char want[8];
    weft__store(want, dst->dtype, weft__load(s + os, src->dtype));
    if (memcmp(want, d + od, es) != 0) bad++;
    memset(covered + od, 1, es);
  }
  for (int64_t b = 0; b < nbytes; b++)
    if (!covered[b] && (unsigned char)d[b] != before[b]) bad++;
  free(covered);
  return bad;
}

static void one_case(const shape_t* dsh, const shape_t* ssh, weft_dtype dt, weft_dtype st, int* bad,
                     int* ran) {
  weft_tensor* dst = random_layout(dsh, dt, true);
  weft_tensor* src = random_layout(ssh, st, rnd(3) != 0);
  fill_random(src);
  int64_t nbytes = weft_storage_nbytes(dst->storage);
  unsigned char* before = malloc((size_t)nbytes + 1);
  memset(weft_storage_data(dst->storage), 0xA5, (size_t)nbytes);
  memcpy(before, weft_storage_data(dst->storage), (size_t)nbytes);
  if (weft__copy_iter(dst, src) != WEFT_OK) {
    fprintf(stderr, "copy failed: %s\n", weft_last_error());
    (*bad)++;
  } else {
    int m = count_mismatches(dst, src, dsh, before);
    if (m) {
      fprintf(stderr, "mismatch (%d) ndim %d %s <- %s\n", m, dsh->ndim, weft_dtype_name(dt), weft_dtype_name(st));
      (*bad)++;
    }
    (*ran)++;
  }
  /* same dtype and shape: the reference copy into the same layout agrees */
  if (dt == st && ssh->ndim == dsh->ndim && memcmp(ssh->sizes, dsh->sizes, sizeof(int64_t) * (size_t)dsh->ndim) == 0) {
    weft_tensor* ref = weft_empty_strided(dst->sizes, dst->strides, dst->ndim, dt, WEFT_DEVICE_CPU);
    weft_tensor* ref_out = weft_tensor_from_storage(weft_tensor_storage(ref), dst->sizes, dst->strides, dst->ndim,
                                                    0, dt);
    if (ref_out && weft_copy_reference(ref_out, src) == WEFT_OK) {
      for (int64_t lin = 0; lin < dst->numel; lin++) {
        const char* a = (const char*)weft_storage_data(dst->storage) + elem_offset(dst, dsh, lin);
        const char* b = (const char*)weft_storage_data(ref_out->storage) + elem_offset(ref_out, dsh, lin);
        if (memcmp(a, b, weft_dtype_size(dt)) != 0) {
          (*bad)++;
          break;
        }
      }
    }
    weft_tensor_release(ref_out);
    weft_tensor_release(ref);
  }
  free(before);
  weft_tensor_release(dst);
  weft_tensor_release(src);
}

static void random_shapes(shape_t* dsh, shape_t* ssh, int max_size) {
  dsh->ndim = 1 + rnd(4);
  for (int d = 0; d < dsh->ndim; d++) dsh->sizes[d] = rnd(8) == 0 ? 1 : 1 + rnd(max_size);
  if (rnd(20) == 0) dsh->sizes[rnd(dsh->ndim)] = 0;
  /* src: same shape, or broadcastable (leading dims dropped, some set to 1) */
  int drop = rnd(3) == 0 ? rnd(dsh->ndim + 1) : 0;
  ssh->ndim = dsh->ndim - drop;
  for (int d = 0; d < ssh->ndim; d++) {
    ssh->sizes[d] = dsh->sizes[d + drop];
    if (rnd(5) == 0) ssh->sizes[d] = 1;
  }
}

static void test_random_copies(void) {
  int bad = 0, ran = 0;
  for (int threads = 1; threads <= 4; threads++) {
    weft_set_num_threads(threads);
    for (int trial = 0; trial < 300; trial++) {
      shape_t dsh, ssh;
      random_shapes(&dsh, &ssh, 7);
      weft_dtype dt = (weft_dtype)rnd(WEFT_DTYPE_COUNT);
      weft_dtype st = rnd(2) ? dt : (weft_dtype)rnd(WEFT_DTYPE_COUNT);
      one_case(&dsh, &ssh, dt, st, &bad, &ran);
    }
  }
  CHECK_EQ_I64(bad, 0);
  CHECK(ran > 1000);
}

/* Above the grain, so parallel_for really cuts chunks. */
static void test_large_copies(void) {
  int bad = 0, ran = 0;
  for (int threads = 1; threads <= 4; threads++) {
    weft_set_num_threads(threads);
    for (int trial = 0; trial < 6; trial++) {
      shape_t dsh = {3, {3 + rnd(3), 90 + rnd(40), 100 + rnd(60)}}, ssh = dsh;
      if (trial % 3 == 1) ssh.sizes[1] = 1;
      weft_dtype dt = trial % 2 ? WEFT_FLOAT32 : WEFT_INT16;
      weft_dtype st = trial == 4 ? WEFT_FLOAT64 : dt;
      one_case(&dsh, &ssh, dt, st, &bad, &ran);
    }
    /* NCHW -> NHWC: the transpose path */
    int64_t s[] = {2, 64, 30, 30};
    weft_tensor* in = weft_empty(s, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
    weft_tensor* out = weft_empty(s, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST);
    fill_random(in);
    weft_iter it;
    CHECK(weft__copy_iter_build(out, in, &it) == WEFT_OK);
    CHECK(weft_iter_loop_kind(&it) == WEFT_LOOP_TRANSPOSE);
    CHECK_EQ_I64(weft_iter_num_chunks(&it, WEFT_GRAIN_SIZE), weft_get_num_threads() == 1 ? 1 : 4);
    weft_iter_destroy(&it);
    CHECK(weft__copy_iter(out, in) == WEFT_OK);
    shape_t sh = {4, {2, 64, 30, 30}};
    unsigned char* before = calloc((size_t)weft_storage_nbytes(out->storage), 1);
    CHECK_EQ_I64(count_mismatches(out, in, &sh, before), 0);
    free(before);
    weft_tensor_release(in);
    weft_tensor_release(out);
  }
  weft_set_num_threads(1);
  CHECK_EQ_I64(bad, 0);
  CHECK_EQ_I64(ran, 24);
}

/* for_each with a tiny grain visits every element exactly once. */
typedef struct {
  int64_t count;
} visit_ctx;

static void visit_loop(void* p, char** data, const int64_t* strides, int64_t n0, int64_t n1) {
  (void)p;
  for (int64_t j = 0; j < n1; j++) {
    char* y = data[0] + j * strides[2];
    for (int64_t i = 0; i < n0; i++) *(int32_t*)(y + i * strides[0]) += 1;
  }
}

static void test_for_each_chunks(void) {
  int64_t s[] = {7, 13, 11}, st[] = {1, 7 * 11, 7};
  for (int threads = 1; threads <= 4; threads++) {
    weft_set_num_threads(threads);
    for (int grain = 1; grain <= 1024; grain *= 4) {
      weft_tensor* t = weft_empty_strided(s, st, 3, WEFT_INT32, WEFT_DEVICE_CPU);
      memset(weft_tensor_data_ptr(t), 0, 7 * 13 * 11 * 4);
      weft_iter_config c = weft_iter_config_init();
      weft_iter_config_add_output(&c, t);
      weft_iter_config_resize_outputs(&c, false); /* PyTorch's NULLARY_OP_CONFIG */
      weft_iter_config_check_all_same_dtype(&c, false);
      weft_iter it;
      CHECK(weft_iter_build(&c, &it) == WEFT_OK);
      CHECK(weft_iter_for_each(&it, visit_loop, NULL, grain) == WEFT_OK);
      weft_iter_destroy(&it);
      int bad = 0;
      for (int i = 0; i < 7 * 13 * 11; i++) bad += ((int32_t*)weft_tensor_data_ptr(t))[i] != 1;
      CHECK_EQ_I64(bad, 0);
      weft_tensor_release(t);
    }
  }
  weft_set_num_threads(1);
}

static void test_copy_errors(void) {
  int64_t s3[] = {3}, s4[] = {4}, s34[] = {3, 4};
  weft_tensor* a = weft_empty(s4, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* b = weft_empty(s34, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* c = weft_empty(s3, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  CHECK(weft__copy_iter(a, b) == WEFT_SHAPE_ERROR);
  CHECK_ERROR_HAS("copy_: output with shape [4] doesn't match the broadcast shape [3, 4]");
  CHECK(weft__copy_iter(b, c) == WEFT_SHAPE_ERROR);
  CHECK_ERROR_HAS("copy_: The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1");
  CHECK(weft__copy_iter(b, b) == WEFT_OK);
  /* a 0-dim source fills */
  weft_tensor* z = weft_full(NULL, 0, 2.5, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  CHECK(weft__copy_iter(b, z) == WEFT_OK);
  CHECK(weft_tensor_get_double(b, 11) == 2.5);
  weft_tensor* m = weft_empty(s34, 2, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  CHECK(weft__copy_iter(b, m) == WEFT_NOT_IMPLEMENTED);
  CHECK(weft__copy_iter(m, b) == WEFT_OK);
  weft_tensor* all[] = {a, b, c, z, m};
  for (int i = 0; i < 5; i++) weft_tensor_release(all[i]);
}

/* Found by tests/fuzz (views/crashes/f16-nan-broadcast-copy): a same-dtype
 * copy keeps every bit; the broadcast (fill) path went through a double and
 * turned a float16 signalling NaN 0xfc01 into 0xfe00. */
static void test_broadcast_copy_keeps_bits(void) {
  static const struct { weft_dtype t; uint64_t bits; } cases[] = {
      {WEFT_FLOAT16, 0xfc01}, {WEFT_BFLOAT16, 0xff81}, {WEFT_FLOAT32, 0x7f800001}, {WEFT_FLOAT64, 0xfff0000000000001ull}};
  int64_t n = 5, zero = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    weft_tensor* x = weft_empty(&n, 1, cases[i].t, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
    weft_tensor* y = weft_empty(&n, 1, cases[i].t, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
    size_t es = weft_dtype_size(cases[i].t);
    memcpy(weft_tensor_data_ptr(x), &cases[i].bits, es);
    weft_tensor* b = weft_as_strided(x, &n, &zero, 1, 0);
    CHECK(weft_copy_(y, b) == WEFT_OK);
    for (int64_t j = 0; j < n; j++) CHECK(memcmp((char*)weft_tensor_data_ptr(y) + j * es, &cases[i].bits, es) == 0);
    weft_tensor_release(b);
    weft_tensor_release(x);
    weft_tensor_release(y);
  }
}

static void test_copy_explain(void) {
  int64_t s[] = {1, 64, 56, 56};
  weft_tensor* in = weft_empty(s, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* out = weft_empty(s, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST);
  weft_set_num_threads(2);
  char* json = weft__copy_explain_json(out, in);
  CHECK(json != NULL);
  if (json) {
    CHECK(strstr(json, "\"op\":\"copy_\"") != NULL);
    CHECK(strstr(json, "\"shape\":[64,3136]") != NULL);
    CHECK(strstr(json, "\"strides\":[[4,256],[12544,4]]") != NULL);
    CHECK(strstr(json, "\"loop\":\"transpose\"") != NULL);
    /* 2 x 98 blocks of 32 x 32, >= 32 blocks per chunk */
    CHECK(strstr(json, weft_get_num_threads() == 1 ? "\"chunks\":1}" : "\"chunks\":7}") != NULL);
    free(json);
  }
  /* a batch: [C, H*W, N] goes to the batched driver whole, 4 x 49 blocks of
   * 64 x 64, cut into 4 chunks per thread */
  int64_t sb[] = {4, 64, 56, 56};
  weft_tensor* inb = weft_empty(sb, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* outb = weft_empty(sb, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST);
  json = weft__copy_explain_json(outb, inb);
  CHECK(json != NULL);
  if (json) {
    CHECK(strstr(json, "\"shape\":[64,3136,4]") != NULL);
    CHECK(strstr(json, weft_get_num_threads() == 1 ? "\"chunks\":1}" : "\"chunks\":8}") != NULL);
    free(json);
  }
  weft_tensor_release(inb);
  weft_tensor_release(outb);
  weft_set_num_threads(1);
  int64_t s3[] = {3};
  weft_tensor* bad = weft_empty(s3, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  CHECK(weft__copy_explain_json(bad, in) == NULL);
  CHECK_ERROR_HAS("copy_: The size of tensor a (3) must match the size of tensor b (56)");
  weft_tensor_release(bad);
  weft_tensor_release(in);
  weft_tensor_release(out);
}

int main(void) {
  setenv("WEFT_MAX_THREADS", "4", 1); /* 1-4 threads even on a 2-core machine */
  test_copy_explain();
  test_copy_errors();
  test_broadcast_copy_keeps_bits();
  test_for_each_chunks();
  test_random_copies();
  test_large_copies();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
