/* Sorting (issue 13): the kernels of src/kernels/sort.h against a plain
 * reference (an insertion sort by (key, index)) at sizes around the
 * insertion / radix switch, for every dtype's keys with NaN, signed zeros and
 * ties, ascending and flipped; k-selection against the sorted prefix; then
 * the ops through their typed entry points: threads 1-3 give the same bytes,
 * Meta tensors get shapes without data, and errors leave nothing behind.
 * The PyTorch cases are tests/fixtures/sort.json (tests/js/sort-fixtures.test.mjs). */
#include <stdint.h>
#include <stdlib.h>

#include "base/half.h"
#include "core/internal.h"
#include "kernel_test_util.h"
#include "kernels/sort.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/parallel.h"
#include "weft/weft.h"

static void ref_sort(size_t n, weft_sort_pair* p) {
  for (size_t i = 1; i < n; i++) {
    for (size_t j = i; j > 0; j--) {
      weft_sort_pair a = p[j - 1], b = p[j];
      if (a.key < b.key || (a.key == b.key && a.idx < b.idx)) break;
      p[j - 1] = b;
      p[j] = a;
    }
  }
}

/* n elements of dtype t: small values (ties), NaN, infinities and signed zeros */
static void fill(weft_dtype t, size_t n, char* x) {
  static const float special[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f};
  size_t es = weft_dtype_size(t);
  for (size_t i = 0; i < n; i++) {
    int r = (int)(kt_rand() % 41) - 20;
    float f = kt_rand() % 7 == 0 ? special[kt_rand() % 5] : (float)r / 4;
    double d = f;
    int64_t v = t == WEFT_INT64 ? (int64_t)r * 1000000007 : t == WEFT_UINT8 ? r + 20 : t == WEFT_BOOL ? (r & 1) : r;
    char* p = x + i * es;
    switch (t) {
      case WEFT_FLOAT32: memcpy(p, &f, 4); break;
      case WEFT_FLOAT64: memcpy(p, &d, 8); break;
      case WEFT_FLOAT16: { uint16_t h = weft__f32_to_f16(f); memcpy(p, &h, 2); break; }
      case WEFT_BFLOAT16: { uint16_t h = weft__f32_to_bf16(f); memcpy(p, &h, 2); break; }
      default: memcpy(p, &v, es); break; /* little-endian: the low bytes */
    }
  }
}

static int cmp_pair(const void* a, const void* b) {
  const weft_sort_pair *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* the sampled radix select against the sorted line q, sorted and not */
static void check_select(weft_dtype t, size_t n, const char* x, bool flip, const weft_sort_pair* q) {
  weft_sort_pair *p = malloc(n * sizeof *p), *tmp = malloc(n * sizeof *tmp);
  size_t ks[] = {1, 25, 26, n / 3 + 1, n / 2, n - 1, n};
  for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
    size_t k = ks[ki];
    if (k < 1 || k > n) continue;
    weft_sort_pair* best = malloc(k * sizeof *best); /* exactly k: ASan sees a write past them */
    for (int sorted = 0; sorted < 2; sorted++) {
      weft__sort_select_sampled(t, n, x, (ptrdiff_t)weft_dtype_size(t), flip, k, sorted, best, p, tmp);
      if (!sorted) qsort(best, k, sizeof *best, cmp_pair);
      bool ok = memcmp(best, q, k * sizeof *q) == 0;
      if (!ok) fprintf(stderr, "select %s n=%zu k=%zu flip=%d sorted=%d differs\n", weft_dtype_name(t), n, k, flip, sorted);
      CHECK(ok);
    }
    free(best);
  }
  free(p);
  free(tmp);
}

static void test_kernels(void) {
  size_t sizes[] = {1, 2, 5, 31, 32, 33, 100, 257, 1000, 4099};
  for (int t = 0; t < WEFT_DTYPE_COUNT; t++) {
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      size_t n = sizes[si];
      char* x = malloc(n * 8);
      weft_sort_pair *p = malloc(n * sizeof *p), *q = malloc(n * sizeof *q), *tmp = malloc(n * sizeof *tmp);
      fill((weft_dtype)t, n, x);
      for (int flip = 0; flip < 2; flip++) {
        weft__sort_keys((weft_dtype)t, n, x, (ptrdiff_t)weft_dtype_size((weft_dtype)t), flip, p);
        memcpy(q, p, n * sizeof *p);
        ref_sort(n, q);
        weft__sort_pairs(n, p, tmp);
        CHECK(memcmp(p, q, n * sizeof *p) == 0);
        size_t ks[] = {1, 2, n / 2 + 1, n};
        for (int ki = 0; ki < 4; ki++) {
          size_t k = ks[ki] > n ? n : ks[ki];
          weft__sort_select_keys((weft_dtype)t, n, x, (ptrdiff_t)weft_dtype_size((weft_dtype)t), flip, k, tmp);
          CHECK(memcmp(tmp, q, k * sizeof *q) == 0);
        }
        check_select((weft_dtype)t, n, x, flip, q);
      }
      free(x);
      free(p);
      free(q);
      free(tmp);
    }
  }
  /* key order: -inf < -1 < -0.0 == 0.0 < 1 < inf < NaN (every NaN equal) */
  float v[] = {NAN, 1, -0.0f, 0.0f, -INFINITY, INFINITY, -1, -NAN};
  weft_sort_pair p[8];
  weft__sort_keys(WEFT_FLOAT32, 8, (const char*)v, 4, false, p);
  CHECK(p[4].key < p[6].key && p[6].key < p[2].key && p[2].key == p[3].key && p[3].key < p[1].key);
  CHECK(p[1].key < p[5].key && p[5].key < p[0].key && p[0].key == p[7].key);
}

static weft_tensor* data_f32(int64_t rows, int64_t cols) {
  weft_tensor* a = weft_arange(0, (double)(rows * cols), 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  float* d = weft_tensor_data_ptr(a);
  for (int64_t i = 0; i < rows * cols; i++) d[i] = (float)((i * 7919) % 211) - 105 + (i % 53 == 0 ? NAN : 0);
  int64_t s[] = {rows, cols};
  weft_tensor* r = weft_view(a, s, 2);
  weft_tensor_release(a);
  return r;
}

static bool same_bytes(const weft_tensor* a, const weft_tensor* b) {
  return a->numel == b->numel && memcmp(weft_tensor_data_ptr(a), weft_tensor_data_ptr(b),
                                        (size_t)a->numel * weft_dtype_size(a->dtype)) == 0;
}

static void test_threads(void) {
  weft_tensor* x = data_f32(40, 900);
  weft_tensor2 ref[3];
  for (int threads = 1; threads <= 3; threads++) {
    weft_set_num_threads(threads);
    weft_tensor2 r[3] = {weft_sort(x, 1, true), weft_topk(x, 7, 1, true, true), weft_kthvalue(x, 450, -1, false)};
    for (int i = 0; i < 3; i++) {
      CHECK(r[i].t[0] && r[i].t[1]);
      if (threads == 1) {
        ref[i] = r[i];
        continue;
      }
      CHECK(same_bytes(r[i].t[0], ref[i].t[0]) && same_bytes(r[i].t[1], ref[i].t[1]));
      weft_tensor_release(r[i].t[0]);
      weft_tensor_release(r[i].t[1]);
    }
  }
  weft_set_num_threads(1);
  for (int i = 0; i < 3; i++) {
    weft_tensor_release(ref[i].t[0]);
    weft_tensor_release(ref[i].t[1]);
  }
  weft_tensor_release(x);
}

static void test_meta_and_errors(void) {
  int64_t before = weft_memory().tensors;
  int64_t s[] = {5, 6};
  weft_tensor* m = weft_empty(s, 2, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor2 r = weft_topk(m, 2, 0, true, true);
  CHECK(r.t[0] && r.t[0]->sizes[0] == 2 && r.t[1]->dtype == WEFT_INT64 && r.t[0]->device == WEFT_DEVICE_META);
  weft_tensor_release(r.t[0]);
  weft_tensor_release(r.t[1]);
  weft_tensor2 e = weft_topk(m, 6, 0, true, true);
  CHECK(!e.t[0] && !e.t[1] && strstr(weft_last_error(), "selected index k out of range"));
  weft_tensor* x = data_f32(2, 3);
  weft_tensor* v = weft_empty(s, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* i = weft_empty(s, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  e = weft_sort_values(x, 0, false, v, i); /* indices out of the wrong dtype */
  CHECK(!e.t[0] && strstr(weft_last_error(), "Expected out tensor to have dtype int64, but got float32 instead"));
  CHECK(v->sizes[0] == 5); /* checked before any resize */
  weft_tensor_release(m);
  weft_tensor_release(x);
  weft_tensor_release(v);
  weft_tensor_release(i);
  CHECK_EQ_I64(weft_memory().tensors, before);
}

int main(void) {
  weft_init();
  test_kernels();
  test_threads();
  test_meta_and_errors();
  TEST_REPORT();
}
