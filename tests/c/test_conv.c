/* conv2d (issue 12): the PyTorch 1.13 cases of conv_cases.inc
 * (tests/fixtures/gen_conv_fixtures.py; the same as tests/fixtures/conv.json)
 * through the boxed dispatcher at 1 and 3 threads; every algorithm of the
 * driver with the scalar and the SIMD kernels at 1 and 3 threads against a
 * float64 direct reference on random data; the algorithm each layout picks
 * (explain); Meta tensors. */
#include <stdlib.h>

#include "core/internal.h"
#include "ops/cpu/conv.h"
#include "ops/ops.h"
#include "weft/explain.h"
#include "weft/parallel.h"

#include "case_replay.h"
#include "conv_cases.inc"

static const fx_table cases = {lin_vals, lin_args, lin_cases, (int)(sizeof lin_cases / sizeof lin_cases[0])};

/* y[n, co, oy, ox] by the definition, x NCHW contiguous, w [cout, cg, kh, kw] contiguous */
static double ref_at(const weft_conv2d_geom* g, const double* x, const double* w, const double* b, int64_t n,
                     int64_t co, int64_t oy, int64_t ox) {
  int64_t cg = g->c / g->groups, q = co / (g->cout / g->groups);
  double s = b ? b[co] : 0.0;
  for (int64_t ci = 0; ci < cg; ci++)
    for (int64_t ky = 0; ky < g->kh; ky++)
      for (int64_t kx = 0; kx < g->kw; kx++) {
        int64_t iy = oy * g->sh - g->ph + ky * g->dh, ix = ox * g->sw - g->pw + kx * g->dw;
        if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w) continue;
        s += x[((n * g->c + q * cg + ci) * g->h + iy) * g->w + ix] * w[((co * cg + ci) * g->kh + ky) * g->kw + kx];
      }
  return s;
}

/* Runs one geometry through algorithm a (NHWC algorithms get the input and
 * output in NHWC) with table kt, float32, and compares with the reference. */
static int check_algo(const weft_kernels* kt, weft_conv2d_algo a, weft_conv2d_geom g, bool bias) {
  bool nhwc = a == WEFT_CONV_IMPLICIT_GEMM_NHWC || a == WEFT_CONV_GEMM_1X1_NHWC || a == WEFT_CONV_DEPTHWISE_NHWC;
  int64_t cg = g.c / g.groups, nx = g.n * g.c * g.h * g.w, nw = g.cout * cg * g.kh * g.kw;
  int64_t ny = g.n * g.cout * g.ho * g.wo;
  double *xd = malloc(sizeof(double) * (size_t)nx), *wd = malloc(sizeof(double) * (size_t)nw);
  double* bd = malloc(sizeof(double) * (size_t)g.cout);
  float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw);
  float *b = malloc(sizeof(float) * (size_t)g.cout), *y = malloc(sizeof(float) * (size_t)ny);
  unsigned r = 12345;
  for (int64_t i = 0; i < nx; i++) xd[i] = (double)((r = r * 1103515245u + 12345u) >> 16 & 15) / 8 - 1;
  for (int64_t i = 0; i < nw; i++) wd[i] = (double)((r = r * 1103515245u + 12345u) >> 16 & 15) / 8 - 1;
  for (int64_t i = 0; i < g.cout; i++) bd[i] = b[i] = (float)(i % 5) / 4;
  for (int64_t i = 0; i < nw; i++) w[i] = (float)wd[i];
  for (int64_t n = 0; n < g.n; n++) /* x in the algorithm's layout */
    for (int64_t c = 0; c < g.c; c++)
      for (int64_t i = 0; i < g.h * g.w; i++)
        x[nhwc ? (n * g.h * g.w + i) * g.c + c : (n * g.c + c) * g.h * g.w + i] = (float)xd[(n * g.c + c) * g.h * g.w + i];
  g.ws[3] = 1, g.ws[2] = g.kw, g.ws[1] = g.kh * g.kw, g.ws[0] = cg * g.kh * g.kw;
  int bad = weft__conv2d(kt, WEFT_FLOAT32, a, &g, x, w, bias ? b : NULL, y) != WEFT_OK;
  for (int64_t n = 0; n < g.n && !bad; n++)
    for (int64_t co = 0; co < g.cout; co++)
      for (int64_t oy = 0; oy < g.ho; oy++)
        for (int64_t ox = 0; ox < g.wo; ox++) {
          int64_t p = oy * g.wo + ox;
          float got = y[nhwc ? (n * g.ho * g.wo + p) * g.cout + co : (n * g.cout + co) * g.ho * g.wo + p];
          bad += got != (float)ref_at(&g, xd, wd, bias ? bd : NULL, n, co, oy, ox); /* exact: sixteenths */
        }
  if (bad)
    fprintf(stderr, "%s %s: %d wrong (n%lld c%lld %lldx%lld -> %lld, k%lldx%lld s%lld,%lld p%lld,%lld d%lld,%lld g%lld)\n",
            kt->isa, weft__conv2d_algo_name(a), bad, (long long)g.n, (long long)g.c, (long long)g.h, (long long)g.w,
            (long long)g.cout, (long long)g.kh, (long long)g.kw, (long long)g.sh, (long long)g.sw, (long long)g.ph,
            (long long)g.pw, (long long)g.dh, (long long)g.dw, (long long)g.groups);
  free(xd), free(wd), free(bd), free(x), free(w), free(b), free(y);
  return bad;
}

static weft_conv2d_geom geom(int64_t n, int64_t c, int64_t h, int64_t w, int64_t cout, int64_t kh, int64_t kw,
                             int64_t s, int64_t p, int64_t d, int64_t groups) {
  weft_conv2d_geom g = {n, c, h, w, cout, kh, kw, s, s, p, p, d, d, groups, 0, 0, {0, 0, 0, 0}};
  g.ho = (h + 2 * p - d * (kh - 1) - 1) / s + 1;
  g.wo = (w + 2 * p - d * (kw - 1) - 1) / s + 1;
  return g;
}

/* every algorithm, scalar and SIMD kernels, 1 and 3 threads, sizes around
 * the 4 x 8 tile and the 8-lane depthwise loops */
static void test_algorithms(void) {
  const weft_kernels* tables[2] = {weft__kernels_scalar(), weft__kernels()};
  for (int th = 1; th <= 3; th += 2) {
    weft_set_num_threads(th);
    for (int t = 0; t < 2; t++) {
      const weft_kernels* kt = tables[t];
      int bad = 0;
      for (int64_t m = 1; m <= 9; m++) {
        for (int64_t co = 1; co <= 17; co += 4) {
          weft_conv2d_geom g = geom(2, 3, m + 2, m, co, 3, 3, 1, 1, 1, 1);
          bad += check_algo(kt, WEFT_CONV_IMPLICIT_GEMM_NHWC, g, m % 2);
          bad += check_algo(kt, WEFT_CONV_IM2COL_GEMM_NCHW, g, m % 2);
          weft_conv2d_geom g1 = geom(2, 5, m, m + 1, co, 1, 1, 1, 0, 1, 1);
          bad += check_algo(kt, WEFT_CONV_GEMM_1X1_NHWC, g1, true);
          bad += check_algo(kt, WEFT_CONV_GEMM_1X1_NCHW, g1, false);
        }
        for (int64_t c = 1; c <= 19; c += 3) {
          weft_conv2d_geom g = geom(2, c, m + 1, m + 10, c, 3, 3, 1 + m % 2, 1, 1 + (m % 3 == 0), c);
          bad += check_algo(kt, WEFT_CONV_DEPTHWISE_NHWC, g, m % 2);
          bad += check_algo(kt, WEFT_CONV_DEPTHWISE_NCHW, g, m % 2);
          g.cout = 2 * c; /* multiplier 2 */
          bad += check_algo(kt, WEFT_CONV_DEPTHWISE_NCHW, g, true);
          bad += check_algo(kt, WEFT_CONV_IMPLICIT_GEMM_NHWC, g, true);
        }
      }
      /* K over several KC blocks, groups, stride/dilation/padding mixes */
      bad += check_algo(kt, WEFT_CONV_IMPLICIT_GEMM_NHWC, geom(1, 64, 9, 7, 20, 3, 3, 1, 1, 1, 1), true);
      bad += check_algo(kt, WEFT_CONV_IM2COL_GEMM_NCHW, geom(1, 64, 9, 7, 20, 3, 3, 1, 1, 1, 1), true);
      bad += check_algo(kt, WEFT_CONV_IMPLICIT_GEMM_NHWC, geom(2, 6, 11, 10, 9, 3, 2, 2, 2, 2, 3), true);
      bad += check_algo(kt, WEFT_CONV_IM2COL_GEMM_NCHW, geom(2, 6, 11, 10, 9, 3, 2, 2, 2, 2, 3), false);
      bad += check_algo(kt, WEFT_CONV_IM2COL_GEMM_NCHW, geom(1, 4, 30, 37, 5, 3, 3, 1, 1, 1, 1), true);
      bad += check_algo(kt, WEFT_CONV_GEMM_1X1_NHWC, geom(2, 8, 3, 4, 6, 1, 1, 1, 0, 1, 2), true);
      bad += check_algo(kt, WEFT_CONV_GEMM_1X1_NCHW, geom(2, 8, 3, 4, 6, 1, 1, 1, 0, 1, 2), true);
      /* 7 images >= 2 per thread at 3 threads: the 1x1 NCHW GEMMs run one image per task */
      bad += check_algo(kt, WEFT_CONV_GEMM_1X1_NCHW, geom(7, 8, 5, 3, 10, 1, 1, 1, 0, 1, 2), true);
      CHECK(bad == 0);
    }
  }
  weft_set_num_threads(1);
}

/* explain() names the algorithm; channels_last input gives channels_last output */
static const char* explained_algo(const weft_tensor* x, const weft_tensor* w, int64_t groups, char* buf, size_t cap) {
  weft_op* op = weft_op_find("conv2d");
  weft_stack st;
  weft_stack_init(&st);
  const int64_t one = 1, pad = 1;
  weft_stack_push_tensor(&st, x);
  weft_stack_push_tensor(&st, w);
  weft_stack_push_none(&st);
  weft_stack_push_int_list(&st, &one, 1);
  weft_stack_push_int_list(&st, &pad, 1);
  weft_stack_push_int_list(&st, &one, 1);
  weft_stack_push_int(&st, groups);
  char* json = NULL;
  buf[0] = '\0';
  if (weft_explain_boxed(op, &st, &json) == WEFT_OK && json) {
    const char* a = strstr(json, "\"algorithm\":\"");
    if (a) snprintf(buf, cap, "%.*s", (int)strcspn(a + 13, "\""), a + 13);
  }
  free(json);
  weft_stack_clear(&st);
  return buf;
}

static void test_explain_and_formats(void) {
  const int64_t sx[4] = {2, 8, 6, 6}, sw[4] = {8, 8, 3, 3}, sd[4] = {8, 1, 3, 3}, s1[4] = {8, 8, 1, 1};
  weft_tensor* x = weft_full(sx, 4, 1.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* xcl = weft_contiguous(x, WEFT_CHANNELS_LAST);
  weft_tensor* w = weft_full(sw, 4, 1.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* wd = weft_full(sd, 4, 1.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* w1 = weft_full(s1, 4, 1.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  char buf[64];
  CHECK(strcmp(explained_algo(x, w, 1, buf, sizeof buf), "im2col_gemm_nchw") == 0);
  CHECK(strcmp(explained_algo(xcl, w, 1, buf, sizeof buf), "implicit_gemm_nhwc") == 0);
  CHECK(strcmp(explained_algo(x, wd, 8, buf, sizeof buf), "depthwise_nchw") == 0);
  CHECK(strcmp(explained_algo(xcl, wd, 8, buf, sizeof buf), "depthwise_nhwc") == 0);
  /* padding 1 on a 1x1 kernel is not a plain GEMM */
  CHECK(strcmp(explained_algo(x, w1, 1, buf, sizeof buf), "im2col_gemm_nchw") == 0);
  const int64_t one[2] = {1, 1}, zero[2] = {0, 0};
  weft_tensor* y = weft_conv2d(xcl, w1, NULL, one, 2, zero, 2, one, 2, 1);
  CHECK(y && y->is_channels_last_contiguous);
  weft_tensor* y2 = weft_conv2d(x, w1, NULL, one, 2, zero, 2, one, 2, 1);
  CHECK(y2 && y2->is_contiguous);
  weft_tensor* list[] = {x, xcl, w, wd, w1, y, y2};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
}

static void test_meta(void) {
  const int64_t sx[4] = {8, 64, 56, 56}, sw[4] = {32, 64, 3, 3}, st[2] = {2, 2}, pd[2] = {1, 1}, dl[2] = {1, 1};
  weft_tensor* x = weft_empty(sx, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CHANNELS_LAST);
  weft_tensor* w = weft_empty(sw, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* y = weft_conv2d(x, w, NULL, st, 2, pd, 2, dl, 2, 1);
  CHECK(y && weft_tensor_device(y) == WEFT_DEVICE_META && y->is_channels_last_contiguous);
  if (y) CHECK_SIZES(y, 8, 32, 28, 28);
  weft_tensor* e = weft_conv2d_padding(x, w, NULL, st, 2, "same", dl, 2, 1);
  CHECK(!e);
  CHECK_ERROR_HAS("padding='same' is not supported for strided convolutions");
  weft_tensor_release(y);
  weft_tensor_release(x);
  weft_tensor_release(w);
}

/* ---- backward drivers (issue 15) ---- */

/* x, gy in the layout (nhwc or NCHW) from NCHW doubles; w dense
 * [cout][cg][kh][kw] (NCHW) or [cout][kh][kw][cg] (NHWC) */
static int64_t at4(bool nhwc, int64_t n, int64_t c, int64_t h, int64_t w, const int64_t d[4]) {
  return nhwc ? ((n * d[2] + h) * d[3] + w) * d[1] + c : ((n * d[1] + c) * d[2] + h) * d[3] + w;
}

/* Both gradients of one geometry in dtype (sixteenths: every sum exact) against the definition. */
static int check_backward(weft_dtype dt, bool nhwc, weft_conv2d_geom g) {
  int64_t cg = g.c / g.groups, coutg = g.cout / g.groups;
  const int64_t dx[4] = {g.n, g.c, g.h, g.w}, dy[4] = {g.n, g.cout, g.ho, g.wo}, dw[4] = {g.cout, cg, g.kh, g.kw};
  int64_t nx = g.n * g.c * g.h * g.w, ny = g.n * g.cout * g.ho * g.wo, nw = g.cout * cg * g.kh * g.kw;
  size_t es = dt == WEFT_FLOAT64 ? 8 : 4;
  double *xd = calloc((size_t)nx, 8), *yd = calloc((size_t)ny, 8), *wd = calloc((size_t)nw, 8);
  double *gxr = calloc((size_t)nx, 8), *gwr = calloc((size_t)nw, 8);
  char *x = malloc((size_t)nx * es), *gy = malloc((size_t)ny * es), *w = malloc((size_t)nw * es);
  char *gx = malloc((size_t)nx * es), *gw = malloc((size_t)nw * es);
  unsigned r = 777;
#define SET(buf, i, v) (dt == WEFT_FLOAT64 ? (void)(((double*)(buf))[i] = (v)) : (void)(((float*)(buf))[i] = (float)(v)))
#define GET(buf, i) (dt == WEFT_FLOAT64 ? ((double*)(buf))[i] : (double)((float*)(buf))[i])
  for (int64_t i = 0; i < nx; i++) xd[i] = (double)((r = r * 1103515245u + 12345u) >> 16 & 15) / 8 - 1;
  for (int64_t i = 0; i < ny; i++) yd[i] = (double)((r = r * 1103515245u + 12345u) >> 16 & 15) / 8 - 1;
  for (int64_t i = 0; i < nw; i++) wd[i] = (double)((r = r * 1103515245u + 12345u) >> 16 & 15) / 8 - 1;
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t c = 0; c < g.c; c++)
      for (int64_t i = 0; i < g.h * g.w; i++) SET(x, at4(nhwc, n, c, i / g.w, i % g.w, dx), xd[(n * g.c + c) * g.h * g.w + i]);
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t c = 0; c < g.cout; c++)
      for (int64_t i = 0; i < g.ho * g.wo; i++)
        SET(gy, at4(nhwc, n, c, i / g.wo, i % g.wo, dy), yd[(n * g.cout + c) * g.ho * g.wo + i]);
  for (int64_t o = 0; o < g.cout; o++)
    for (int64_t ci = 0; ci < cg; ci++)
      for (int64_t k = 0; k < g.kh * g.kw; k++) SET(w, at4(nhwc, o, ci, k / g.kw, k % g.kw, dw), wd[(o * cg + ci) * g.kh * g.kw + k]);
  for (int64_t n = 0; n < g.n; n++) /* the definition */
    for (int64_t co = 0; co < g.cout; co++)
      for (int64_t oy = 0; oy < g.ho; oy++)
        for (int64_t ox = 0; ox < g.wo; ox++)
          for (int64_t ci = 0; ci < cg; ci++)
            for (int64_t ky = 0; ky < g.kh; ky++)
              for (int64_t kx = 0; kx < g.kw; kx++) {
                int64_t iy = oy * g.sh - g.ph + ky * g.dh, ix = ox * g.sw - g.pw + kx * g.dw;
                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                int64_t xi = ((n * g.c + co / coutg * cg + ci) * g.h + iy) * g.w + ix, wi = ((co * cg + ci) * g.kh + ky) * g.kw + kx;
                double gyv = yd[((n * g.cout + co) * g.ho + oy) * g.wo + ox];
                gxr[xi] += gyv * wd[wi];
                gwr[wi] += gyv * xd[xi];
              }
  int bad = weft__conv2d_backward_input(weft__kernels(), dt, nhwc, &g, gy, w, gx) != WEFT_OK;
  bad += weft__conv2d_backward_weight(weft__kernels(), dt, nhwc, &g, gy, x, gw) != WEFT_OK;
  for (int64_t n = 0; n < g.n && !bad; n++)
    for (int64_t c = 0; c < g.c; c++)
      for (int64_t i = 0; i < g.h * g.w; i++)
        bad += GET(gx, at4(nhwc, n, c, i / g.w, i % g.w, dx)) != gxr[(n * g.c + c) * g.h * g.w + i];
  for (int64_t o = 0; o < g.cout && !bad; o++)
    for (int64_t ci = 0; ci < cg; ci++)
      for (int64_t k = 0; k < g.kh * g.kw; k++)
        bad += GET(gw, at4(nhwc, o, ci, k / g.kw, k % g.kw, dw)) != gwr[(o * cg + ci) * g.kh * g.kw + k];
#undef SET
#undef GET
  if (bad)
    fprintf(stderr, "conv backward %s %s: %d wrong (n%lld c%lld %lldx%lld -> %lld, k%lldx%lld s%lld p%lld d%lld g%lld)\n",
            weft_dtype_name(dt), nhwc ? "nhwc" : "nchw", bad, (long long)g.n, (long long)g.c, (long long)g.h,
            (long long)g.w, (long long)g.cout, (long long)g.kh, (long long)g.kw, (long long)g.sh, (long long)g.ph,
            (long long)g.dh, (long long)g.groups);
  free(xd), free(yd), free(wd), free(gxr), free(gwr), free(x), free(gy), free(w), free(gx), free(gw);
  return bad;
}

/* both layouts and dtypes at 1 and 3 threads: exact, so identical across thread counts */
static void test_backward_drivers(void) {
  for (int th = 1; th <= 3; th += 2) {
    weft_set_num_threads(th);
    int bad = 0;
    for (int l = 0; l < 2; l++)
      for (int d = 0; d < 2; d++) {
        weft_dtype dt = d ? WEFT_FLOAT64 : WEFT_FLOAT32;
        bad += check_backward(dt, l, geom(2, 3, 7, 6, 5, 3, 3, 1, 1, 1, 1));
        bad += check_backward(dt, l, geom(3, 6, 11, 10, 9, 3, 2, 2, 2, 2, 3));
        bad += check_backward(dt, l, geom(2, 4, 9, 9, 4, 3, 3, 2, 1, 1, 4)); /* depthwise */
        bad += check_backward(dt, l, geom(1, 64, 9, 7, 20, 3, 3, 1, 1, 1, 1)); /* K over several blocks */
        bad += check_backward(dt, l, geom(5, 8, 5, 4, 6, 1, 1, 1, 0, 1, 2));
        bad += check_backward(dt, l, geom(2, 2, 5, 5, 3, 5, 5, 3, 2, 1, 1)); /* input pixels no window reads */
      }
    CHECK(bad == 0);
  }
  weft_set_num_threads(1);
}

int main(void) {
  fx_replay_threads(&cases);
  test_algorithms();
  test_explain_and_formats();
  test_meta();
  test_backward_drivers();
  TEST_REPORT();
}
