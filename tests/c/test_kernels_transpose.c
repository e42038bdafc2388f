/* Transposes: every element size and backend over many (width, height),
 * padded strides, untouched padding; the parallel blocked driver against
 * the plain loop at 1-4 threads. */
#include <stdlib.h>

#include "kernel_test_util.h"
#include "ops/cpu/transpose.h"
#include "test.h"
#include "weft/parallel.h"

/* in: height rows of width elements, row stride pad_in elements longer */
static int check_padded(weft_transpose_fn* fn, const weft_kernels* k, size_t es, size_t width, size_t height,
                        int blocked, size_t pad_in, size_t pad_out) {
  size_t in_stride = (width + pad_in) * es, out_stride = (height + pad_out) * es;
  size_t in_bytes = height * in_stride, out_bytes = width * out_stride;
  char* in = malloc(in_bytes + 1);
  char* out = malloc(out_bytes + 1);
  kt_fill_bytes(in, in_bytes);
  memset(out, 0xCD, out_bytes);
  if (blocked)
    CHECK(weft__transpose_2d(k, es, in, out, in_stride, out_stride, width, height) == WEFT_OK);
  else
    fn(in, out, in_stride, out_stride, width, height);
  int ok = 1;
  for (size_t j = 0; j < width; j++) {
    for (size_t i = 0; i < height; i++)
      ok &= memcmp(out + j * out_stride + i * es, in + i * in_stride + j * es, es) == 0;
    for (size_t b = height * es; b < out_stride; b++) ok &= (unsigned char)out[j * out_stride + b] == 0xCD;
  }
  if (!ok)
    fprintf(stderr, "transpose x%zu %s %zux%zu%s wrong\n", es * 8, k->isa, width, height, blocked ? " blocked" : "");
  free(in);
  free(out);
  return ok;
}

static int check_one(weft_transpose_fn* fn, const weft_kernels* k, size_t es, size_t width, size_t height,
                     int blocked) {
  return check_padded(fn, k, es, width, height, blocked, (width * 7) % 5, (height * 3) % 4);
}

/* packed RGB(A) pixels <-> planes: the x8 pixel paths and their tails */
static void test_pixels(void) {
  for (int b = 0; b < KT_NBACKENDS; b++) {
    const weft_kernels* k = kt_backend(b);
    int ok = 1;
    for (size_t c = 1; c <= 5; c++)
      for (size_t n = 1; n <= 70; n += (n < 40 ? 1 : 7)) {
        ok &= check_padded(k->x8_transposec, k, 1, c, n, 0, 0, 0);  /* pixels -> planes */
        ok &= check_padded(k->x8_transposec, k, 1, c, n, 0, 0, 5);  /* planes padded */
        ok &= check_padded(k->x8_transposec, k, 1, n, c, 0, 0, 0);  /* planes -> pixels */
        ok &= check_padded(k->x8_transposec, k, 1, n, c, 0, 3, 0);
      }
    CHECK(ok);
  }
  for (int t = 1; t <= 2; t++) { /* a 1080p frame through the blocked driver */
    weft_set_num_threads(t);
    CHECK(check_padded(NULL, weft__kernels(), 1, 4, 1920 * 1080, 1, 0, 0));
    CHECK(check_padded(NULL, weft__kernels(), 1, 1920 * 1080, 3, 1, 0, 0));
  }
  weft_set_num_threads(1);
}

static void test_kernels(void) {
  for (int b = 0; b < KT_NBACKENDS; b++) {
    const weft_kernels* k = kt_backend(b);
    for (size_t es = 1; es <= 8; es *= 2) {
      int ok = 1;
      for (size_t w = 1; w <= 19; w++)
        for (size_t h = 1; h <= 19; h++) ok &= check_one(weft__transpose_kernel(k, es), k, es, w, h, 0);
      ok &= check_one(weft__transpose_kernel(k, es), k, es, 64, 20, 0);
      ok &= check_one(weft__transpose_kernel(k, es), k, es, 20, 64, 0);
      CHECK(ok);
    }
  }
}

static void test_blocked(void) {
  static const size_t shapes[][2] = {{1, 1}, {1, 1000}, {1000, 1}, {31, 33}, {32, 32}, {33, 97},
                                     {64, 20}, {3136, 64}, {64, 3136}, {100, 257}, {513, 65},
                                     /* thin: RGB(A) pixels both ways, long blocks */
                                     {3, 5000}, {5000, 3}, {4, 3001}, {3001, 4}, {17, 2000}, {2000, 9}};
  const int threads[] = {1, 2, 3, 4};
  for (size_t t = 0; t < 4; t++) {
    weft_set_num_threads(threads[t]);
    for (size_t es = 1; es <= 8; es *= 2)
      for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        CHECK(check_one(NULL, weft__kernels(), es, shapes[s][0], shapes[s][1], 1));
  }
}

/* batch images with gaps between them (untouched) and between rows */
static int check_batched(size_t es, size_t width, size_t height, size_t batch) {
  size_t in_stride = (width + 3) * es, out_stride = (height + 1) * es;
  size_t in_b = height * in_stride + 5 * es, out_b = width * out_stride + 7 * es;
  size_t in_bytes = batch * in_b, out_bytes = batch * out_b;
  char* in = malloc(in_bytes);
  char* out = malloc(out_bytes);
  kt_fill_bytes(in, in_bytes);
  memset(out, 0xCD, out_bytes);
  CHECK(weft__transpose_2d_batched(weft__kernels(), es, in, out, in_stride, out_stride, width, height, batch,
                                   (ptrdiff_t)in_b, (ptrdiff_t)out_b) == WEFT_OK);
  int ok = 1;
  for (size_t b = 0; b < batch; b++) {
    const char* x = in + b * in_b;
    const char* y = out + b * out_b;
    for (size_t j = 0; j < width; j++) {
      for (size_t i = 0; i < height; i++) ok &= memcmp(y + j * out_stride + i * es, x + i * in_stride + j * es, es) == 0;
      for (size_t k = height * es; k < out_stride; k++) ok &= (unsigned char)y[j * out_stride + k] == 0xCD;
    }
    for (size_t k = width * out_stride; k < out_b; k++) ok &= (unsigned char)y[k] == 0xCD;
  }
  if (!ok) fprintf(stderr, "batched transpose x%zu %zux%zu x%zu wrong\n", es * 8, width, height, batch);
  free(in);
  free(out);
  return ok;
}

static void test_batched(void) {
  static const size_t shapes[][3] = {{1, 1, 1}, {3136, 64, 3}, {64, 3136, 2}, {5, 7, 9},
                                     {65, 63, 4}, {200, 130, 2}, {16, 16, 40},
                                     {3, 2500, 3}, {2500, 3, 3}, {4, 1500, 2}};
  for (int t = 1; t <= 4; t++) {
    weft_set_num_threads(t);
    for (size_t es = 1; es <= 8; es *= 2)
      for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        CHECK(check_batched(es, shapes[s][0], shapes[s][1], shapes[s][2]));
  }
  /* the task count: 64 x 64 blocks (x32), every image */
  int64_t grain = 0;
  CHECK_EQ_I64(weft__transpose_2d_blocks(4, 3136, 64, 32, &grain), 32 * 49);
  CHECK_EQ_I64(grain, 8);
  /* a thin one: 3 columns of x32 -> 1360-row blocks of 16 KB */
  CHECK_EQ_I64(weft__transpose_2d_blocks(4, 3, 50176, 2, &grain), 2 * 37);
  CHECK_EQ_I64(grain, 8);
  CHECK_EQ_I64(weft__transpose_2d_blocks(4, 50176, 3, 1, &grain), 37);
  CHECK(weft__transpose_2d_batched(weft__kernels(), 4, NULL, NULL, 4, 4, 3, 3, 0, 0, 0) == WEFT_OK);
  weft_set_num_threads(1);
}

int main(void) {
  setenv("WEFT_MAX_THREADS", "4", 1);
  test_kernels();
  test_pixels();
  test_blocked();
  test_batched();
  TEST_REPORT();
}
