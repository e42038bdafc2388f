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

/* 4-byte gathers into a unit-stride row (a channel of an interleaved image,
 * the vector path): the source holds exactly up to the last element read, so
 * ASan sees any load past it. */
static void test_gather32(const weft_kernels* k) {
  for (ptrdiff_t s = 2; s <= 4; s++) {
    for (size_t si = 0; si < KT_NSIZES; si++) {
      size_t n = kt_sizes[si], nx = n ? (n - 1) * (size_t)s + 1 : 0;
      unsigned char* x = malloc(nx * 4 + 1);
      unsigned char* y = malloc(n * 4 + GUARD);
      kt_fill_bytes(x, nx * 4);
      memset(y, 0xAB, n * 4 + GUARD);
      weft__copy_strided_kernel(k, 4)(n, x, 4 * s, y, 4);
      int ok = 1;
      for (size_t i = 0; i < n; i++) ok &= memcmp(y + 4 * i, x + 4 * (size_t)s * i, 4) == 0;
      for (size_t i = n * 4; i < n * 4 + GUARD; i++) ok &= y[i] == 0xAB;
      CHECK(ok);
      free(x);
      free(y);
    }
  }
}

/* 2, 3 or 4 rows of 4-byte elements stored interleaved, a guard zone after. */
static void test_interleave32(const weft_kernels* k) {
  for (size_t c = 2; c <= 4; c++) {
    for (size_t si = 0; si < KT_NSIZES; si++) {
      size_t n = kt_sizes[si];
      unsigned char* rows[4];
      for (size_t j = 0; j < c; j++) {
        rows[j] = malloc(n * 4 + 1);
        for (size_t b = 0; b < n * 4; b++) rows[j][b] = (unsigned char)(b * 7 + j * 31 + 1); /* rows differ */
      }
      unsigned char* y = malloc(n * c * 4 + GUARD);
      memset(y, 0xAB, n * c * 4 + GUARD);
      k->x32_interleave(n, c, (const void* const*)rows, y);
      int ok = 1;
      for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < c; j++) ok &= memcmp(y + 4 * (i * c + j), rows[j] + 4 * i, 4) == 0;
      for (size_t i = n * c * 4; i < n * c * 4 + GUARD; i++) ok &= y[i] == 0xAB;
      CHECK(ok);
      for (size_t j = 0; j < c; j++) free(rows[j]);
      free(y);
    }
  }
}

/* The first cout of each cin interleaved 4-byte elements, a guard zone after. */
static void test_pick32(const weft_kernels* k) {
  for (size_t cin = 2; cin <= 4; cin++) {
    for (size_t cout = 1; cout < cin; cout++) {
      for (size_t si = 0; si < KT_NSIZES; si++) {
        size_t n = kt_sizes[si];
        /* the source ends right after the last pixel's kept channels */
        size_t nx = n ? ((n - 1) * cin + cout) * 4 : 0;
        unsigned char* x = malloc(nx + 1);
        for (size_t b = 0; b < nx; b++) x[b] = (unsigned char)(b * 13 + 5);
        unsigned char* y = malloc(n * cout * 4 + GUARD);
        memset(y, 0xAB, n * cout * 4 + GUARD);
        k->x32_pick(n, cin, cout, x, y);
        int ok = 1;
        for (size_t i = 0; i < n; i++) ok &= memcmp(y + 4 * i * cout, x + 4 * i * cin, 4 * cout) == 0;
        for (size_t i = n * cout * 4; i < n * cout * 4 + GUARD; i++) ok &= y[i] == 0xAB;
        CHECK(ok);
        free(x);
        free(y);
      }
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
  /* the build's best backend is the one selected (scalar when forced) */
  CHECK(strcmp(weft__kernels()->isa, WEFT_TEST_BEST_ISA) == 0);
  for (int b = 0; b < KT_NBACKENDS; b++) {
    const weft_kernels* k = kt_backend(b);
    test_copy(k);
    test_copy_strided(k);
    test_gather32(k);
    test_interleave32(k);
    test_pick32(k);
    test_fill(k);
  }
  TEST_REPORT();
}
