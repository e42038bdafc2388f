/* Shape, fill and random ops (issue 13) natively: registration of every
 * shape.def op, values of the gathers (flip, roll, repeat, repeat_interleave)
 * and triangles on strided inputs against a plain reference, 1 vs 3
 * threads, errors leaving nothing behind, meta shapes and the seeded
 * streams (PyTorch 1.13's values for seed 0; the full set is
 * tests/fixtures/shape.json, replayed by tests/js/shape-fixtures.test.mjs). */
#include <string.h>

#include "core/internal.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/alloc.h"
#include "weft/parallel.h"

static weft_tensor* iota(int64_t rows, int64_t cols) {
  weft_tensor* t = weft_arange(0, (double)(rows * cols), 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  int64_t s[2] = {rows, cols};
  weft_tensor* v = weft_view(t, s, 2);
  weft_tensor_release(t);
  return v;
}

static float at2(const weft_tensor* t, int64_t i, int64_t j) {
  return (float)weft_tensor_get_double(t, i * t->sizes[1] + j);
}

static void test_registration(void) {
#define WEFT_OP(cname, schema, ...) schema,
  static const char* const schemas[] = {
#include "ops/shape.def"
  };
#undef WEFT_OP
  for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++) {
    char name[128] = "aten::";
    size_t len = strcspn(schemas[i], "(");
    memcpy(name + 6, schemas[i], len);
    name[6 + len] = '\0';
    weft_op* op = weft_op_find(name);
    CHECK(op != NULL);
    if (!op) continue;
    bool composite = weft_op_has_kernel(op, WEFT_KEY_COMPOSITE_EXPLICIT_AUTOGRAD);
    CHECK(composite || (weft_op_has_kernel(op, WEFT_KEY_CPU) && weft_op_has_kernel(op, WEFT_KEY_META)));
  }
}

/* A transposed [cols, rows] view of a contiguous iota: every gather reads strided input. */
static void test_gathers(void) {
  weft_tensor* base = iota(37, 29);
  weft_tensor* x = weft_transpose(base, 0, 1); /* [29, 37], strides [1, 29] */
  int64_t both[] = {0, -1}, sh[] = {3, -40}, reps[] = {2, 1, 3};
  weft_tensor* f = weft_flip(x, both, 2);
  weft_tensor* r = weft_roll(x, sh, 2, both, 2);
  weft_tensor* p = weft_repeat(x, reps, 3);
  weft_tensor* ri = weft_repeat_interleave_self_int(x, 3, 1, INT64_MIN);
  CHECK(f && r && p && ri);
  if (f && r && p && ri) {
    CHECK_STRIDES(f, 1, 29); /* empty_like keeps the transposed layout */
    CHECK_SIZES(p, 2, 29, 111);
    CHECK_SIZES(ri, 29, 111);
    int bad = 0;
    for (int64_t i = 0; i < 29; i++)
      for (int64_t j = 0; j < 37; j++) {
        float v = at2(x, i, j);
        bad += at2(f, 28 - i, 36 - j) != v;
        bad += at2(r, (i + 3) % 29, ((j - 40) % 37 + 37) % 37) != v;
        bad += (float)weft_tensor_get_double(p, 29 * 111 + i * 111 + 37 * 2 + j) != v;
        bad += at2(ri, i, 3 * j + 2) != v;
      }
    CHECK_EQ_I64(bad, 0);
  }
  int64_t twice[] = {2, 1};
  weft_tensor* pc = weft_repeat(base, twice, 2); /* contiguous rows: one memcpy each */
  CHECK(pc != NULL);
  if (pc) {
    int bad = 0;
    for (int64_t i = 0; i < 74; i++)
      for (int64_t j = 0; j < 29; j++) bad += at2(pc, i, j) != at2(base, i % 37, j);
    CHECK_EQ_I64(bad, 0);
  }
  weft_tensor_release(pc);
  weft_tensor* l = weft_tril(x, 2);
  weft_tensor* u = weft_triu(x, -3);
  CHECK(l && u);
  if (l && u) {
    int bad = 0;
    for (int64_t i = 0; i < 29; i++)
      for (int64_t j = 0; j < 37; j++) {
        float v = at2(x, i, j);
        bad += at2(l, i, j) != (j - i <= 2 ? v : 0);
        bad += at2(u, i, j) != (j - i >= -3 ? v : 0);
      }
    CHECK_EQ_I64(bad, 0);
  }
  weft_tensor* list[] = {f, r, p, ri, l, u, x, base};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
}

static bool same_values(const weft_tensor* a, const weft_tensor* b) {
  if (!a || !b || a->numel != b->numel) return false;
  for (int64_t i = 0; i < a->numel; i++)
    if (weft_tensor_get_double(a, i) != weft_tensor_get_double(b, i)) return false;
  return true;
}

static void test_threads(void) {
  weft_tensor* base = iota(300, 257);
  weft_tensor* x = weft_transpose(base, 0, 1);
  int64_t dims[] = {0, 1}, reps[] = {2, 3};
  weft_tensor* one[4];
  weft_tensor* three[4];
  for (int round = 0; round < 2; round++) {
    weft_set_num_threads(round ? 3 : 1);
    weft_tensor** o = round ? three : one;
    o[0] = weft_flip(x, dims, 2);
    o[1] = weft_repeat(x, reps, 2);
    o[2] = weft_tril(x, 5);
    o[3] = weft_repeat_interleave_self_int(x, 2, 0, INT64_MIN);
  }
  weft_set_num_threads(1);
  for (int i = 0; i < 4; i++) {
    CHECK(same_values(one[i], three[i]));
    weft_tensor_release(one[i]);
    weft_tensor_release(three[i]);
  }
  weft_tensor_release(x);
  weft_tensor_release(base);
}

static void test_errors(void) {
  weft_tensor* x = iota(2, 3);
  int64_t dup[] = {0, -2}, big[] = {5}, none[1] = {0};
  CHECK(!weft_flip(x, dup, 2));
  CHECK_ERROR_HAS("dim 0 appears multiple times in the list of dims");
  CHECK(!weft_flip(x, big, 1));
  CHECK_ERROR_HAS("Dimension out of range (expected to be in range of [-2, 1], but got 5)");
  CHECK(!weft_roll(x, none, 0, none, 0));
  CHECK_ERROR_HAS("`shifts` required");
  CHECK(!weft_repeat(x, big, 1));
  CHECK_ERROR_HAS("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  CHECK(!weft_repeat_interleave_self_int(x, -1, 0, INT64_MIN));
  CHECK_ERROR_HAS("repeats can not be negative");
  CHECK(!weft_diagonal(x, 0, 1, -1));
  CHECK_ERROR_HAS("diagonal dimensions cannot be identical 1, -1");
  CHECK(!weft_clamp(x, NULL, NULL));
  CHECK_ERROR_HAS("clamp: At least one of 'min' or 'max' must not be null");
  CHECK(!weft_multinomial(x, 4, false));
  CHECK_ERROR_HAS("cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  CHECK(!weft_randint_low(3, 3, big, 1, WEFT_INT64, WEFT_DEVICE_CPU));
  CHECK_ERROR_HAS("random_ expects 'from' to be less than 'to', but got from=3 >= to=3");
  weft_tensor_release(x);
}

static void test_meta(void) {
  int64_t s[2] = {3, 4}, reps[2] = {2, 2};
  weft_tensor* m = weft_empty(s, 2, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* r = weft_repeat(m, reps, 2);
  weft_tensor* d = weft_diag(m, 0);
  weft_tensor* e = weft_eye_m(2, 5, WEFT_INT32, WEFT_DEVICE_META);
  CHECK(r && d && e);
  if (r && d && e) {
    CHECK_SIZES(r, 6, 8);
    CHECK_SIZES(d, 3);
    CHECK_SIZES(e, 2, 5);
    CHECK(weft_tensor_device(r) == WEFT_DEVICE_META);
  }
  weft_tensor_release(r);
  weft_tensor_release(d);
  weft_tensor_release(e);
  weft_tensor_release(m);
}

/* torch.manual_seed(0); torch.randperm(10), torch.randint(0, 100, (5,)) */
static void test_streams(void) {
  static const int64_t perm[10] = {4, 1, 7, 5, 3, 9, 0, 8, 6, 2};
  static const int64_t ints[5] = {44, 39, 33, 60, 63};
  weft_manual_seed(0);
  weft_tensor* p = weft_randperm(10, WEFT_INT64, WEFT_DEVICE_CPU);
  weft_manual_seed(0);
  int64_t n = 5;
  weft_tensor* r = weft_randint_low(0, 100, &n, 1, WEFT_INT64, WEFT_DEVICE_CPU);
  CHECK(p && r);
  if (p && r) {
    int bad = 0;
    for (int i = 0; i < 10; i++) bad += weft_tensor_get_double(p, i) != (double)perm[i];
    for (int i = 0; i < 5; i++) bad += weft_tensor_get_double(r, i) != (double)ints[i];
    CHECK_EQ_I64(bad, 0);
  }
  weft_tensor_release(p);
  weft_tensor_release(r);
}

int main(void) {
  weft_init();
  weft_set_num_threads(1);
  test_registration();
  test_gathers();
  test_threads();
  test_errors();
  test_meta();
  test_streams();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
