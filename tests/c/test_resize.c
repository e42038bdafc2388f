/* Padding and resizing (issue 23): the kernels (f32_resize_blend,
 * f32_resize_gather, f32_resize_pixels) of the SIMD and the scalar tables against a naive loop,
 * bit for bit, at every length 1..40 and tap count 1..4; the resize driver
 * on random geometries of every mode, both formats, float32 with both
 * tables at 1 and 3 threads against the plain reference loop (bit for bit),
 * float64 likewise; the backward's adjoint identity <gy, resize(x)> ==
 * <gx, x> with 1 and 3 threads bitwise equal; the pad driver against a
 * naive index loop and its backward's adjoint; the ops through the
 * dispatcher (shapes, formats, Meta, errors). The values against PyTorch
 * are tests/js/resize-fixtures.test.mjs's. */
#include <stdlib.h>

#include "core/internal.h"
#include "ops/cpu/resize.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/parallel.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t next(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 11);
}
static float rnd(void) { return (float)((int)(next() % 2001) - 1000) / 256.0f; }

/* ---- kernels ---- */

static void test_kernels(void) {
  const weft_kernels* tables[2] = {weft__kernels(), weft__kernels_scalar()};
  float xs[4][48], w[4 * 48], y[48], want[48];
  int64_t idx[4 * 48];
  int bad = 0;
  for (int k = 1; k <= 4; k++)
    for (size_t n = 1; n <= 40; n++) {
      for (int m = 0; m < k; m++)
        for (size_t j = 0; j < 48; j++) xs[m][j] = rnd();
      for (size_t j = 0; j < 4 * 48; j++) w[j] = rnd() / 8, idx[j] = next() % 48;
      const float* rows[4] = {xs[0], xs[1], xs[2], xs[3]};
      for (size_t j = 0; j < n; j++) { /* blend: first tap a product, then adds */
        float a = xs[0][j] * w[0];
        for (int m = 1; m < k; m++) a = a + xs[m][j] * w[m];
        want[j] = a;
      }
      for (int t = 0; t < 2; t++) {
        y[n] = 12345.0f; /* never written past n */
        tables[t]->f32_resize_blend(n, (size_t)k, rows, w, y);
        bad += memcmp(y, want, n * sizeof(float)) != 0 || y[n] != 12345.0f;
      }
      for (size_t j = 0; j < n; j++) {
        float a = xs[0][idx[j * k]] * w[j * k];
        for (int m = 1; m < k; m++) a = a + xs[0][idx[j * k + m]] * w[j * k + m];
        want[j] = a;
      }
      for (int t = 0; t < 2; t++) {
        y[n] = 12345.0f;
        tables[t]->f32_resize_gather(n, (size_t)k, xs[0], idx, w, y);
        bad += memcmp(y, want, n * sizeof(float)) != 0 || y[n] != 12345.0f;
      }
    }
  /* pixels: n pixels x c channels (c < 4 scalar, >= 4 vectors with an overlapping tail) */
  for (size_t c = 1; c <= 19; c++)
    for (size_t n = 1; n <= 5; n++)
      for (int k = 1; k <= 4; k++) {
        float px_data[4][20 * 6], out[6 * 20 + 1], ref[6 * 20];
        const float* px[6 * 4];
        float pw[6 * 4];
        for (int m = 0; m < 4; m++)
          for (size_t j = 0; j < 20 * 6; j++) px_data[m][j] = rnd();
        for (size_t j = 0; j < n; j++)
          for (int m = 0; m < k; m++) px[j * k + m] = px_data[m] + (next() % 5) * c, pw[j * k + m] = rnd() / 8;
        for (size_t j = 0; j < n; j++)
          for (size_t i = 0; i < c; i++) {
            float a = px[j * k][i] * pw[j * k];
            for (int m = 1; m < k; m++) a = a + px[j * k + m][i] * pw[j * k + m];
            ref[j * c + i] = a;
          }
        for (int t = 0; t < 2; t++) {
          out[n * c] = 12345.0f;
          tables[t]->f32_resize_pixels(n, c, (size_t)k, px, pw, out);
          bad += memcmp(out, ref, n * c * sizeof(float)) != 0 || out[n * c] != 12345.0f;
        }
      }
  printf("kernels: %d mismatches\n", bad);
  CHECK(bad == 0);
}

/* ---- the resize driver ---- */

static weft_resize2d random_geometry(int it) {
  weft_resize2d g;
  memset(&g, 0, sizeof g);
  g.mode = (weft_resize_mode)(it % 4);
  g.one_d = g.mode != WEFT_RESIZE_CUBIC && (next() % 4 == 0);
  g.channels_last = !g.one_d && g.mode != WEFT_RESIZE_CUBIC && (next() % 2);
  g.align_corners = g.mode >= WEFT_RESIZE_LINEAR && (next() % 2);
  g.n = 1 + next() % 2;
  g.c = 1 + next() % 11;
  g.h = g.one_d ? 1 : 1 + next() % 9;
  g.w = 1 + next() % 13;
  g.oh = g.one_d ? 1 : 1 + next() % 17;
  g.ow = 1 + next() % 23;
  if (next() % 3 == 0) g.ow = 2 * g.w; /* nearest's shortcut */
  g.scale_h = g.scale_w = NAN;
  if (next() % 2) { /* the scales a scale factor passes */
    g.scale_h = g.one_d ? NAN : (double)g.oh / g.h + 0.01 * (next() % 5);
    g.scale_w = (double)g.ow / g.w + 0.01 * (next() % 5);
  }
  return g;
}

static int check_resize_once(const weft_resize2d* g, weft_dtype dt) {
  size_t e = weft_dtype_size(dt);
  int64_t nx = g->n * g->c * g->h * g->w, ny = g->n * g->c * g->oh * g->ow;
  char *x = malloc((size_t)nx * e), *want = malloc((size_t)ny * e), *y = malloc((size_t)ny * e);
  for (int64_t i = 0; i < nx; i++) {
    if (dt == WEFT_FLOAT64) ((double*)x)[i] = rnd() + rnd() / 1024;
    else ((float*)x)[i] = rnd();
  }
  int bad = weft__resize2d_reference(g, dt, x, want) != WEFT_OK;
  const weft_kernels* tables[2] = {weft__kernels(), weft__kernels_scalar()};
  for (int t = 0; t < 2; t++)
    for (int th = 1; th <= 3; th += 2) {
      weft_set_num_threads(th);
      memset(y, 0x7f, (size_t)ny * e);
      bad += weft__resize2d_run(tables[t], g, dt, x, y) != WEFT_OK;
      bad += memcmp(y, want, (size_t)ny * e) != 0;
    }
  weft_set_num_threads(1);
  if (bad)
    fprintf(stderr, "resize mode %d %s cl %d ac %d 1d %d [%lld,%lld,%lld,%lld] -> [%lld,%lld]\n", (int)g->mode,
            weft_dtype_name(dt), g->channels_last, g->align_corners, g->one_d, (long long)g->n, (long long)g->c,
            (long long)g->h, (long long)g->w, (long long)g->oh, (long long)g->ow);
  free(x);
  free(y);
  free(want);
  return bad;
}

/* <gy, resize(x)> == <gx, x> (float64), 1 and 3 threads equal */
static int check_backward_once(const weft_resize2d* g) {
  int64_t nx = g->n * g->c * g->h * g->w, ny = g->n * g->c * g->oh * g->ow;
  double *x = malloc(8 * (size_t)nx), *y = malloc(8 * (size_t)ny), *gy = malloc(8 * (size_t)ny);
  double *gx1 = malloc(8 * (size_t)nx), *gx3 = malloc(8 * (size_t)nx);
  for (int64_t i = 0; i < nx; i++) x[i] = rnd();
  for (int64_t i = 0; i < ny; i++) gy[i] = rnd();
  int bad = weft__resize2d_reference(g, WEFT_FLOAT64, x, y) != WEFT_OK;
  weft_set_num_threads(1);
  bad += weft__resize2d_backward(g, WEFT_FLOAT64, gy, gx1) != WEFT_OK;
  weft_set_num_threads(3);
  bad += weft__resize2d_backward(g, WEFT_FLOAT64, gy, gx3) != WEFT_OK;
  weft_set_num_threads(1);
  double lhs = 0, rhs = 0, scale = 0;
  for (int64_t i = 0; i < ny; i++) lhs += gy[i] * y[i], scale += fabs(gy[i] * y[i]);
  for (int64_t i = 0; i < nx; i++) rhs += gx1[i] * x[i];
  bad += fabs(lhs - rhs) > 1e-10 * (scale + 1);
  bad += memcmp(gx1, gx3, 8 * (size_t)nx) != 0;
  if (bad) fprintf(stderr, "backward mode %d cl %d: %g vs %g\n", (int)g->mode, g->channels_last, lhs, rhs);
  free(x);
  free(y);
  free(gy);
  free(gx1);
  free(gx3);
  return bad;
}

static void test_resize_driver(void) {
  int failed = 0, runs = 0;
  for (int it = 0; it < 400; it++) {
    weft_resize2d g = random_geometry(it);
    failed += check_resize_once(&g, WEFT_FLOAT32);
    failed += check_resize_once(&g, WEFT_FLOAT64);
    failed += check_backward_once(&g);
    runs++;
  }
  printf("resize driver: %d geometries, %d failed\n", runs, failed);
  CHECK(failed == 0);
}

/* ---- padding ---- */

/* PyTorch's loops, literally: the index in the un-cropped frame, then moved */
static int64_t naive_src(bool reflect, int64_t o, int64_t pl, int64_t n) {
  int64_t ostart = pl > 0 ? pl : 0, istart = pl < 0 ? -pl : 0, ip;
  if (reflect) ip = o < pl ? pl * 2 - o : o < n + pl ? o : (n + pl - 1) * 2 - o;
  else ip = o < pl ? pl : o >= pl + n ? pl + n - 1 : o;
  return ip - ostart + istart;
}

static void test_pad_driver(void) {
  int bad = 0;
  for (int it = 0; it < 200; it++) {
    weft_pad3d g;
    memset(&g, 0, sizeof g);
    g.reflect = it % 2;
    g.planes = 1 + next() % 5;
    int64_t in[3] = {1 + next() % 4, 1 + next() % 6, 1 + next() % 9}, out[3];
    for (int a = 0; a < 3; a++) {
      int64_t l = (int64_t)(next() % (uint32_t)in[a]) - (int64_t)(next() % 2);
      int64_t r = (int64_t)(next() % (uint32_t)in[a]);
      if (!g.reflect) l += next() % 3, r += next() % 3;
      if (in[a] + l + r < 1) l = 0, r = 0;
      g.pl[a] = l;
      out[a] = in[a] + l + r;
    }
    g.d = in[0], g.h = in[1], g.w = in[2], g.od = out[0], g.oh = out[1], g.ow = out[2];
    int64_t nx = g.planes * g.d * g.h * g.w, ny = g.planes * g.od * g.oh * g.ow;
    double *x = malloc(8 * (size_t)nx), *y = malloc(8 * (size_t)ny), *gy = malloc(8 * (size_t)ny);
    double* gx = malloc(8 * (size_t)nx);
    for (int64_t i = 0; i < nx; i++) x[i] = rnd();
    for (int64_t i = 0; i < ny; i++) gy[i] = rnd();
    weft_set_num_threads(1 + 2 * (it % 2));
    bad += weft__pad3d_run(&g, 8, x, y) != WEFT_OK;
    int64_t k = 0;
    for (int64_t p = 0; p < g.planes; p++)
      for (int64_t d = 0; d < g.od; d++)
        for (int64_t h = 0; h < g.oh; h++)
          for (int64_t w = 0; w < g.ow; w++, k++) {
            int64_t s = ((p * g.d + naive_src(g.reflect, d, g.pl[0], g.d)) * g.h + naive_src(g.reflect, h, g.pl[1], g.h)) *
                            g.w + naive_src(g.reflect, w, g.pl[2], g.w);
            bad += y[k] != x[s];
          }
    bad += weft__pad3d_backward(&g, WEFT_FLOAT64, gy, gx) != WEFT_OK;
    double lhs = 0, rhs = 0;
    for (int64_t i = 0; i < ny; i++) lhs += gy[i] * y[i];
    for (int64_t i = 0; i < nx; i++) rhs += gx[i] * x[i];
    bad += fabs(lhs - rhs) > 1e-9 * (fabs(lhs) + 1);
    free(x);
    free(y);
    free(gy);
    free(gx);
  }
  weft_set_num_threads(1);
  printf("pad driver: %d mismatches\n", bad);
  CHECK(bad == 0);
}

/* ---- the ops ---- */

static void test_ops(void) {
  weft_init();
  const int64_t s4[4] = {2, 3, 5, 7}, os[2] = {8, 9};
  weft_tensor* x = weft_empty(s4, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CHANNELS_LAST);
  CHECK(x && weft_fill_(x, 1.5) == WEFT_OK);
  weft_tensor* y = weft_upsample_bilinear2d(x, os, 2, false, NAN, NAN);
  CHECK(y && weft_tensor_is_contiguous(y, WEFT_CHANNELS_LAST));
  weft_tensor* z = weft_upsample_bicubic2d(x, os, 2, true, NAN, NAN);
  CHECK(z && weft_tensor_is_contiguous(z, WEFT_CONTIGUOUS_FORMAT) && z->sizes[2] == 8 && z->sizes[3] == 9);
  CHECK(y && ((float*)weft_tensor_data_ptr(y))[17] == 1.5f);
  weft_tensor* m = weft_empty(s4, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* mr = weft_upsample_nearest2d(m, os, 2, NAN, NAN);
  CHECK(mr && mr->device == WEFT_DEVICE_META && mr->sizes[3] == 9);
  CHECK(weft_upsample_nearest2d(x, os, 1, NAN, NAN) == NULL &&
        strstr(weft_last_error(), "It is expected output_size equals to 2, but got size 1"));
  const int64_t p[4] = {1, 2, 3, 4};
  weft_tensor* r = weft_reflection_pad2d(x, p, 4);
  CHECK(r && r->sizes[2] == 12 && r->sizes[3] == 10 && weft_tensor_is_contiguous(r, WEFT_CONTIGUOUS_FORMAT));
  weft_tensor* c = weft_constant_pad_nd(x, p, 4, weft_scalar_double(2));
  CHECK(c && weft_tensor_is_contiguous(c, WEFT_CHANNELS_LAST));
  CHECK(weft_reflection_pad2d(x, p, 2) == NULL && strstr(weft_last_error(), "padding size is expected to be 4"));
  const int64_t big[2] = {7, 0};
  CHECK(weft_reflection_pad1d(x, big, 2) == NULL);
  weft_tensor* all[] = {x, y, z, m, mr, r, c};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) weft_tensor_release(all[i]);
}

int main(void) {
  test_kernels();
  test_resize_driver();
  test_pad_driver();
  test_ops();
  TEST_REPORT();
}
