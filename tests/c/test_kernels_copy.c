/* Copies, strided copies and fills, every backend, sizes around the tiles;
 * a guard zone after each output proves nothing is written past the end. */
#include <stdlib.h>

#include "kernel_test_util.h"
#include "test.h"

#define GUARD 32

static void test_copy(const weft_kernels* k) {
  for (size_t es = 1; es <= 8; es *= 2) {
    for (size_t si = 0; si < KT_NSIZES; si++) {
      size_t n = kt_sizes[si], nb = n * es;
      unsigned char* x = malloc(nb);
      unsigned char* y = malloc(nb + GUARD);
      kt_fill_bytes(x, nb);
      memset(y, 0xAB, nb + GUARD);
      weft__copy_kernel(k, es)(n, x, y);
      CHECK(memcmp(x, y, nb) == 0);
      int guard_ok = 1;
      for (size_t i = nb; i < nb + GUARD; i++) guard_ok &= y[i] == 0xAB;
      CHECK(guard_ok);
      weft__copy_kernel(k, es)(n, y, y); /* in place */
      CHECK(memcmp(x, y, nb) == 0);
      free(x);
      free(y);
    }
  }
}

static void test_copy_strided(const weft_kernels* k) {
  for (size_t es = 1; es <= 8; es *= 2) {
    const ptrdiff_t xs_list[] = {0, (ptrdiff_t)es, 3 * (ptrdiff_t)es, -(ptrdiff_t)es};
    for (size_t t = 0; t < 4; t++) {
      size_t n = 37;
      ptrdiff_t xs = xs_list[t], ys = 2 * (ptrdiff_t)es;
      unsigned char* x = malloc(n * 3 * es + es);
      unsigned char* y = malloc(n * 2 * es);
      kt_fill_bytes(x, n * 3 * es + es);
      memset(y, 0, n * 2 * es);
      const unsigned char* x0 = xs < 0 ? x + (n - 1) * es : x;
      weft__copy_strided_kernel(k, es)(n, x0, xs, y, ys);
      int ok = 1;
      for (size_t i = 0; i < n; i++) {
        ok &= memcmp(y + i * (size_t)ys, x0 + (ptrdiff_t)i * xs, es) == 0;
        unsigned char z[8] = {0};
        ok &= memcmp(y + i * (size_t)ys + es, z, es) == 0; /* gaps untouched */
      }
      CHECK(ok);
      free(x);
      free(y);
    }
  }
}

static void test_fill(const weft_kernels* k) {
  for (size_t es = 1; es <= 8; es *= 2) {
    for (size_t si = 0; si < KT_NSIZES; si++) {
      size_t n = kt_sizes[si], nb = n * es;
      unsigned char v[8];
      kt_fill_bytes(v, sizeof v);
      unsigned char* y = malloc(nb + GUARD);
      memset(y, 0xAB, nb + GUARD);
      weft__fill_kernel(k, es)(n, v, y);
      int ok = 1;
      for (size_t i = 0; i < n; i++) ok &= memcmp(y + i * es, v, es) == 0;
      for (size_t i = nb; i < nb + GUARD; i++) ok &= y[i] == 0xAB;
      CHECK(ok);
      free(y);
    }
  }
}

int main(void) {
  for (int b = 0; b < KT_NBACKENDS; b++) {
    const weft_kernels* k = kt_backend(b);
    test_copy(k);
    test_copy_strided(k);
    test_fill(k);
  }
  TEST_REPORT();
}
