/* _conv2d_fused (issue 23): the epilogue of every conv2d algorithm against
 * the unfused composition, and the op over it.
 *   - kernels: f32/f64_conv_epilogue, SIMD against scalar bit for bit and
 *     against the definition, NaN and -0 kept, with and without a residual;
 *   - drivers: every algorithm, scalar and SIMD kernels, float32 and
 *     float64, 1 and 2 threads, each activation with and without a residual
 *     and bias, the weight packed by the driver or ahead (weft__conv2d_pack)
 *     against weft__conv2d followed by the add and the clamp;
 *   - the op: both memory formats, an unbatched input, a weight written in
 *     place between calls (the cached panels repacked), Meta, explain's
 *     epilogue, the refusals (activation, residual shape and dtype, grad). */
#include <math.h>
#include <stdlib.h>

#include "core/internal.h"
#include "kernel_test_util.h"
#include "ops/cpu/conv_fused.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/autograd.h"
#include "weft/explain.h"
#include "weft/parallel.h"

/* ---- kernels ---- */

static void test_kernels(void) {
  int bad = 0;
  float r[1100], y0[1100], y[KT_NBACKENDS][1100];
  double rd[40], yd[40];
  for (size_t i = 0; i < 1100; i++) r[i] = kt_randf(-4, 4), y0[i] = kt_randf(-8, 8);
  y0[3] = NAN, y0[4] = -0.0f, r[4] = -0.0f; /* clamp keeps -0, as PyTorch's */
  const struct weft_f32_clamp_params ps[3] = {{0.0f, INFINITY}, {0.0f, 6.0f}, {-INFINITY, INFINITY}};
  for (size_t si = 0; si < KT_NSIZES; si++)
    for (int pi = 0; pi < 3; pi++)
      for (int wr = 0; wr < 2; wr++) {
        size_t n = kt_sizes[si];
        for (int k = 0; k < KT_NBACKENDS; k++) {
          memcpy(y[k], y0, sizeof y0);
          kt_backend(k)->f32_conv_epilogue(n, wr ? r : NULL, y[k], &ps[pi]);
        }
        for (size_t i = 0; i < 1100; i++) {
          float v = wr ? y0[i] + r[i] : y0[i], lo = ps[pi].lo, hi = ps[pi].hi;
          float c = v < lo ? lo : v;
          float want = i < n ? (hi < c ? hi : c) : y0[i];
          bad += !kt_same_f32(y[0][i], y[1][i]) || !kt_same_f32(y[0][i], want);
        }
      }
  for (int i = 0; i < 40; i++) rd[i] = i - 20.5, yd[i] = i % 7 - 3;
  yd[5] = NAN;
  const struct weft_f64_clamp_params p6 = {0.0, 6.0};
  double want[40];
  for (int i = 0; i < 40; i++) want[i] = i == 5 ? NAN : fmin(fmax(yd[i] + rd[i], 0.0), 6.0);
  weft__kernels()->f64_conv_epilogue(40, rd, yd, &p6);
  for (int i = 0; i < 40; i++) bad += i == 5 ? !isnan(yd[i]) : yd[i] != want[i];
  CHECK(bad == 0);
}

/* ---- drivers ---- */

static weft_conv2d_geom geom(int64_t n, int64_t c, int64_t h, int64_t w, int64_t cout, int64_t k, int64_t s,
                             int64_t p, int64_t d, int64_t groups) {
  weft_conv2d_geom g = {n, c, h, w, cout, k, k, s, s, p, p, d, d, groups, 0, 0, {0, 0, 0, 0}};
  g.ho = (h + 2 * p - d * (k - 1) - 1) / s + 1;
  g.wo = (w + 2 * p - d * (k - 1) - 1) / s + 1;
  int64_t cg = c / groups;
  g.ws[3] = 1, g.ws[2] = k, g.ws[1] = k * k, g.ws[0] = cg * k * k;
  return g;
}

static void fill(void* p, size_t es, int64_t n, float lo, float hi) {
  for (int64_t i = 0; i < n; i++) {
    float v = kt_randf(lo, hi);
    if (es == 8)
      ((double*)p)[i] = v;
    else
      ((float*)p)[i] = v;
  }
}

static double at(const void* p, size_t es, int64_t i) { return es == 8 ? ((const double*)p)[i] : ((const float*)p)[i]; }

/* One geometry, algorithm, dtype and epilogue: fused (packed by the driver,
 * then ahead) against weft__conv2d + residual + clamp. */
static int check_fused(const weft_kernels* kt, weft_dtype dt, weft_conv2d_algo a, weft_conv2d_geom g, bool bias,
                       weft_conv_act act, bool residual) {
  size_t es = dt == WEFT_FLOAT64 ? 8 : 4;
  int64_t nx = g.n * g.c * g.h * g.w, nw = g.cout * (g.c / g.groups) * g.kh * g.kw, ny = g.n * g.cout * g.ho * g.wo;
  char *x = malloc(es * (size_t)nx), *w = malloc(es * (size_t)nw), *b = malloc(es * (size_t)g.cout);
  char *r = malloc(es * (size_t)ny), *y0 = malloc(es * (size_t)ny), *y1 = malloc(es * (size_t)ny);
  char* y2 = malloc(es * (size_t)ny);
  fill(x, es, nx, -1, 1), fill(w, es, nw, -1, 1), fill(b, es, g.cout, -1, 1), fill(r, es, ny, -2, 2);
  size_t pb = weft__conv2d_packed_bytes(dt, a, &g);
  char* wp = malloc(pb ? pb : 1);
  const weft_conv2d_epilogue e = {act, residual ? r : NULL};
  /* the unfused reference: the implicit GEMM for Winograd's geometry */
  weft_conv2d_algo ref = a == WEFT_CONV_WINOGRAD_NHWC ? WEFT_CONV_IMPLICIT_GEMM_NHWC : a;
  int bad = weft__conv2d(kt, dt, ref, &g, x, w, bias ? b : NULL, y0) != WEFT_OK;
  bad += weft__conv2d_fused(kt, dt, a, &g, x, w, NULL, bias ? b : NULL, &e, y1) != WEFT_OK;
  bad += weft__conv2d_pack(dt, a, &g, w, wp) != WEFT_OK;
  bad += weft__conv2d_fused(kt, dt, a, &g, x, w, pb ? wp : NULL, bias ? b : NULL, &e, y2) != WEFT_OK;
  int wrong = 0;
  for (int64_t i = 0; i < ny && !bad; i++) {
    double want = at(y0, es, i) + (residual ? at(r, es, i) : 0.0);
    if (act != WEFT_CONV_ACT_NONE) want = want < 0 ? 0 : act == WEFT_CONV_ACT_RELU6 && want > 6 ? 6 : want;
    /* Winograd's transforms round differently: within float32's error of the sums */
    double tol = (dt == WEFT_FLOAT64 ? 1e-12 : a == WEFT_CONV_WINOGRAD_NHWC ? 1e-4 : 2e-5) * (1 + fabs(want));
    wrong += fabs(at(y1, es, i) - want) > tol || at(y2, es, i) != at(y1, es, i);
  }
  if (bad || wrong)
    fprintf(stderr, "%s %s %s act %d res %d bias %d: %d wrong (n%lld c%lld %lldx%lld -> %lld k%lld s%lld g%lld)\n",
            kt->isa, weft__conv2d_algo_name(a), weft_dtype_name(dt), (int)act, residual, bias, bad + wrong,
            (long long)g.n, (long long)g.c, (long long)g.h, (long long)g.w, (long long)g.cout, (long long)g.kh,
            (long long)g.sh, (long long)g.groups);
  free(x), free(w), free(b), free(r), free(y0), free(y1), free(y2), free(wp);
  return bad + wrong;
}

static int check_all_epilogues(const weft_kernels* kt, weft_dtype dt, weft_conv2d_algo a, weft_conv2d_geom g) {
  int bad = 0;
  for (int act = 0; act < 3; act++)
    for (int res = 0; res < 2; res++) bad += check_fused(kt, dt, a, g, (act + res) % 2 == 0, (weft_conv_act)act, res);
  return bad;
}

static void test_drivers(void) {
  const weft_dtype dts[2] = {WEFT_FLOAT32, WEFT_FLOAT64};
  for (int th = 1; th <= 2; th++) {
    weft_set_num_threads(th);
    int bad = 0;
    for (int k = 0; k < KT_NBACKENDS; k++)
      for (int d = 0; d < 2; d++) {
        const weft_kernels* kt = kt_backend(k);
        weft_dtype dt = dts[d];
        for (int64_t m = 1; m <= 9; m += 4) {
          weft_conv2d_geom g3 = geom(2, 5, m + 2, m, 11, 3, 1, 1, 1, 1);
          bad += check_all_epilogues(kt, dt, WEFT_CONV_IMPLICIT_GEMM_NHWC, g3);
          bad += check_all_epilogues(kt, dt, WEFT_CONV_IM2COL_GEMM_NCHW, g3);
          weft_conv2d_geom g1 = geom(2, 6, m, m + 1, 13, 1, 1, 0, 1, 1);
          bad += check_all_epilogues(kt, dt, WEFT_CONV_GEMM_1X1_NHWC, g1);
          bad += check_all_epilogues(kt, dt, WEFT_CONV_GEMM_1X1_NCHW, g1);
          weft_conv2d_geom gd = geom(2, 9, m + 2, m + 6, 9, 3, 1 + m % 2, 1, 1, 9);
          bad += check_all_epilogues(kt, dt, WEFT_CONV_DEPTHWISE_NHWC, gd);
          bad += check_all_epilogues(kt, dt, WEFT_CONV_DEPTHWISE_NCHW, gd);
          /* stride 1 (the pixel pairs over a row of odd and even widths) */
          bad += check_all_epilogues(kt, dt, WEFT_CONV_DEPTHWISE_NHWC, geom(2, 9, m + 2, m + 6, 9, 3, 1, 1, 1, 9));
        }
        /* no padding, channels past the 8- and 4-lane blocks, a dilated 3x3, a 5x5 */
        bad += check_all_epilogues(kt, dt, WEFT_CONV_DEPTHWISE_NHWC, geom(1, 22, 9, 8, 22, 3, 1, 0, 1, 22));
        bad += check_all_epilogues(kt, dt, WEFT_CONV_DEPTHWISE_NHWC, geom(1, 22, 10, 12, 22, 3, 2, 1, 1, 22));
        bad += check_all_epilogues(kt, dt, WEFT_CONV_DEPTHWISE_NHWC, geom(1, 6, 9, 9, 6, 3, 1, 2, 2, 6));
        bad += check_all_epilogues(kt, dt, WEFT_CONV_DEPTHWISE_NHWC, geom(1, 7, 9, 9, 7, 5, 1, 2, 1, 7));
        /* the stem's shape (7x7 s2, 3 channels), K over KC blocks, groups */
        bad += check_all_epilogues(kt, dt, WEFT_CONV_IMPLICIT_GEMM_NHWC, geom(1, 3, 20, 18, 10, 7, 2, 3, 1, 1));
        bad += check_all_epilogues(kt, dt, WEFT_CONV_IM2COL_GEMM_NCHW, geom(1, 3, 20, 18, 10, 7, 2, 3, 1, 1));
        bad += check_all_epilogues(kt, dt, WEFT_CONV_IMPLICIT_GEMM_NHWC, geom(1, 70, 7, 7, 20, 3, 1, 1, 1, 1));
        bad += check_all_epilogues(kt, dt, WEFT_CONV_IM2COL_GEMM_NCHW, geom(1, 70, 7, 7, 20, 3, 1, 1, 1, 1));
        bad += check_all_epilogues(kt, dt, WEFT_CONV_GEMM_1X1_NHWC, geom(1, 300, 7, 7, 36, 1, 1, 0, 1, 2));
        bad += check_all_epilogues(kt, dt, WEFT_CONV_GEMM_1X1_NCHW, geom(1, 300, 7, 7, 36, 1, 1, 0, 1, 2));
        bad += check_all_epilogues(kt, dt, WEFT_CONV_IM2COL_GEMM_NCHW, geom(2, 6, 11, 10, 9, 3, 2, 2, 2, 3));
        if (dt != WEFT_FLOAT32) continue;
        /* Winograd F(2x2, 3x3): odd and even maps (partial output tiles), padding 0-2, more tiles than a
         * task's 16, output channels past the NR panels and the task's column split */
        for (int64_t m = 2; m <= 9; m += 7)
          for (int64_t p = 0; p <= 2; p++)
            bad += check_all_epilogues(kt, dt, WEFT_CONV_WINOGRAD_NHWC, geom(2, 16 + m, m + 3, m + 2, 17 + 4 * p, 3, 1, p, 1, 1));
        bad += check_all_epilogues(kt, dt, WEFT_CONV_WINOGRAD_NHWC, geom(1, 64, 7, 7, 130, 3, 1, 1, 1, 1));
      }
    CHECK(bad == 0);
  }
  weft_set_num_threads(1);
  /* _conv2d_fused picks Winograd for channels_last float32 3x3 stride 1 with >= 64 channels on >= 4x4 maps */
  weft_conv2d_geom gw = geom(1, 64, 10, 12, 64, 3, 1, 1, 1, 1);
  CHECK(weft__conv2d_fused_pick(&gw, true, WEFT_FLOAT32) == WEFT_CONV_WINOGRAD_NHWC);
  CHECK(weft__conv2d_fused_pick(&gw, false, WEFT_FLOAT32) == WEFT_CONV_IM2COL_GEMM_NCHW);
  CHECK(weft__conv2d_fused_pick(&gw, true, WEFT_FLOAT64) == WEFT_CONV_IMPLICIT_GEMM_NHWC);
  weft_conv2d_geom gs = geom(1, 96, 10, 12, 96, 3, 2, 1, 1, 1), g7 = geom(1, 512, 7, 7, 512, 3, 1, 1, 1, 1);
  weft_conv2d_geom g3 = geom(1, 512, 3, 3, 512, 3, 1, 1, 1, 1), gc = geom(1, 48, 10, 12, 64, 3, 1, 1, 1, 1);
  CHECK(weft__conv2d_fused_pick(&gs, true, WEFT_FLOAT32) == WEFT_CONV_IMPLICIT_GEMM_NHWC);
  CHECK(weft__conv2d_fused_pick(&g7, true, WEFT_FLOAT32) == WEFT_CONV_WINOGRAD_NHWC);
  CHECK(weft__conv2d_fused_pick(&g3, true, WEFT_FLOAT32) == WEFT_CONV_IMPLICIT_GEMM_NHWC);
  CHECK(weft__conv2d_fused_pick(&gc, true, WEFT_FLOAT32) == WEFT_CONV_IMPLICIT_GEMM_NHWC);
}

/* The NHWC convolution by its definition (double sums), for the stems'
 * in-place rows: y[n, oy, ox, co] = act(b[co] + sum x w + r) */
static void naive_nhwc(const weft_conv2d_geom* g, const float* x, const float* w, const float* b, const float* r,
                       weft_conv_act act, double* y) {
  for (int64_t n = 0; n < g->n; n++)
    for (int64_t oy = 0; oy < g->ho; oy++)
      for (int64_t ox = 0; ox < g->wo; ox++)
        for (int64_t co = 0; co < g->cout; co++) {
          int64_t at = ((n * g->ho + oy) * g->wo + ox) * g->cout + co;
          double acc = b ? b[co] : 0.0;
          for (int64_t ky = 0; ky < g->kh; ky++)
            for (int64_t kx = 0; kx < g->kw; kx++) {
              int64_t iy = oy * g->sh - g->ph + ky, ix = ox * g->sw - g->pw + kx;
              if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w) continue;
              for (int64_t ci = 0; ci < g->c; ci++)
                acc += (double)x[((n * g->h + iy) * g->w + ix) * g->c + ci] *
                       w[co * g->ws[0] + ci * g->ws[1] + ky * g->ws[2] + kx];
            }
          acc += r ? r[at] : 0.0;
          if (act != WEFT_CONV_ACT_NONE) acc = acc < 0 ? 0 : act == WEFT_CONV_ACT_RELU6 && acc > 6 ? 6 : acc;
          y[at] = acc;
        }
}

/* stems (few input channels) read their A in place, a row at a time:
 * against the definition, interiors and edges, rows in the padding */
static int check_in_place(const weft_kernels* kt, weft_conv2d_geom g, bool bias, weft_conv_act act, bool residual) {
  int64_t nx = g.n * g.c * g.h * g.w, nw = g.cout * g.c * g.kh * g.kw, ny = g.n * g.cout * g.ho * g.wo;
  float *x = malloc(4 * (size_t)nx), *w = malloc(4 * (size_t)nw), *b = malloc(4 * (size_t)g.cout);
  float *r = malloc(4 * (size_t)ny), *y = malloc(4 * (size_t)ny);
  double* want = malloc(8 * (size_t)ny);
  fill(x, 4, nx, -1, 1), fill(w, 4, nw, -1, 1), fill(b, 4, g.cout, -1, 1), fill(r, 4, ny, -2, 2);
  const weft_conv2d_epilogue e = {act, residual ? r : NULL};
  int bad = !weft__conv2d_rows_in_place(&g, WEFT_FLOAT32);
  bad += weft__conv2d_fused(kt, WEFT_FLOAT32, WEFT_CONV_IMPLICIT_GEMM_NHWC, &g, x, w, NULL, bias ? b : NULL, &e, y) !=
         WEFT_OK;
  naive_nhwc(&g, x, w, bias ? b : NULL, residual ? r : NULL, act, want);
  for (int64_t i = 0; i < ny && !bad; i++) bad += fabs(y[i] - want[i]) > 2e-5 * (1 + fabs(want[i]));
  if (bad)
    fprintf(stderr, "%s in-place rows act %d res %d bias %d: %d wrong (n%lld c%lld %lldx%lld k%lld s%lld p%lld)\n",
            kt->isa, (int)act, residual, bias, bad, (long long)g.n, (long long)g.c, (long long)g.h, (long long)g.w,
            (long long)g.kh, (long long)g.sh, (long long)g.ph);
  free(x), free(w), free(b), free(r), free(y), free(want);
  return bad;
}

static void test_in_place_rows(void) {
  /* a 5x5 stride-2 stem, mobilenet's (3x3 s2), a row narrower than the kernel (edges only), padding
   * past a kernel row (output rows whose taps all fall outside), stride 1, 5x5 taps of 1 channel */
  const weft_conv2d_geom gs[] = {geom(1, 3, 20, 18, 10, 5, 2, 2, 1, 1), geom(2, 3, 17, 15, 19, 3, 2, 1, 1, 1),
                                 geom(1, 3, 9, 3, 8, 5, 2, 2, 1, 1),    geom(1, 2, 6, 9, 9, 3, 1, 3, 1, 1),
                                 geom(1, 1, 12, 11, 33, 5, 1, 2, 1, 1)};
  for (int th = 1; th <= 2; th++) {
    weft_set_num_threads(th);
    int bad = 0;
    for (int k = 0; k < KT_NBACKENDS; k++)
      for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++)
        for (int act = 0; act < 3; act++)
          for (int res = 0; res < 2; res++)
            bad += check_in_place(kt_backend(k), gs[i], (act + res) % 2 == 0, (weft_conv_act)act, res);
    CHECK(bad == 0);
  }
  weft_set_num_threads(1);
  /* not: many channels, dilated, resnet's stem (kernel rows of 21 values) */
  weft_conv2d_geom g64 = geom(1, 64, 9, 9, 64, 3, 1, 1, 1, 1), g4 = geom(1, 3, 9, 9, 8, 3, 1, 1, 2, 1);
  weft_conv2d_geom g7 = geom(1, 3, 20, 18, 10, 7, 2, 3, 1, 1);
  CHECK(!weft__conv2d_rows_in_place(&g64, WEFT_FLOAT32) && !weft__conv2d_rows_in_place(&g4, WEFT_FLOAT32));
  CHECK(!weft__conv2d_rows_in_place(&g7, WEFT_FLOAT32));
  CHECK(!weft__conv2d_rows_in_place(&gs[0], WEFT_FLOAT64));
}

/* ---- the op ---- */

static const int64_t one2[2] = {1, 1}, pad1[2] = {1, 1};

static weft_tensor* fused(const weft_tensor* x, const weft_tensor* w, const weft_tensor* b, const char* act,
                          const weft_tensor* r) {
  return weft_op__conv2d_fused(x, w, b, one2, 2, pad1, 2, one2, 2, 1, act, r);
}

static double max_diff(const weft_tensor* a, const weft_tensor* b) {
  weft_tensor* d = weft_sub(a, b, weft_scalar_int(1));
  weft_tensor* ad = d ? weft_abs(d) : NULL;
  weft_tensor* adc = ad ? weft_contiguous(ad, WEFT_CONTIGUOUS_FORMAT) : NULL;
  double m = adc ? 0 : INFINITY;
  for (int64_t i = 0; adc && i < adc->numel; i++) {
    float v = ((const float*)weft_tensor_data_ptr(adc))[i];
    m = v > m || v != v ? v : m;
  }
  weft_tensor_release(d), weft_tensor_release(ad), weft_tensor_release(adc);
  return m;
}

/* relu(conv2d(x, w, b) + r), unfused */
static weft_tensor* composed(const weft_tensor* x, const weft_tensor* w, const weft_tensor* b, const weft_tensor* r) {
  weft_tensor* c = weft_conv2d(x, w, b, one2, 2, pad1, 2, one2, 2, 1);
  weft_tensor* s = c ? weft_add(c, r, weft_scalar_int(1)) : NULL;
  weft_tensor* y = s ? weft_relu(s) : NULL;
  weft_tensor_release(c), weft_tensor_release(s);
  return y;
}

static void test_op(void) {
  const int64_t sx[4] = {2, 6, 7, 5}, sw[4] = {8, 6, 3, 3}, sb[1] = {8}, sy[4] = {2, 8, 7, 5};
  weft_tensor* x = weft_randn(sx, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* w = weft_randn(sw, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* b = weft_randn(sb, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* r = weft_randn(sy, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* xcl = weft_contiguous(x, WEFT_CHANNELS_LAST);
  for (int f = 0; f < 2; f++) { /* NCHW, channels_last: the result keeps the format */
    const weft_tensor* xi = f ? xcl : x;
    weft_tensor* y = fused(xi, w, b, "relu", r);
    weft_tensor* want = composed(xi, w, b, r);
    CHECK(y && want && max_diff(y, want) < 1e-5);
    CHECK(y && (f ? y->is_channels_last_contiguous : y->is_contiguous));
    weft_tensor_release(y), weft_tensor_release(want);
  }
  /* a weight written in place: packed per call before autograd counts
   * versions (no requires_grad yet in this program), then cached and
   * repacked after the write */
  for (int round = 0; round < 2; round++) {
    weft_tensor* y1 = fused(x, w, b, "relu", r);
    weft_tensor* w2 = weft_randn(sw, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
    CHECK(weft_copy_(w, w2) == WEFT_OK);
    weft_tensor* y2 = fused(x, w, b, "relu", r);
    weft_tensor* want2 = composed(x, w, b, r);
    CHECK(y1 && y2 && want2 && max_diff(y2, want2) < 1e-5 && max_diff(y1, y2) > 1e-3);
    weft_tensor_release(y1), weft_tensor_release(y2), weft_tensor_release(want2), weft_tensor_release(w2);
    CHECK((atomic_load(&w->storage->packed) != NULL) == (round == 1)); /* the panels kept on the storage */
    weft_tensor* t = weft_randn(sb, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU); /* registers autograd's kernels */
    CHECK(weft_set_requires_grad(t, true) == WEFT_OK);
    weft_tensor_release(t);
  }
  /* unbatched input and residual */
  weft_tensor* x3 = weft_select(x, 0, 1);
  weft_tensor* r3 = weft_select(r, 0, 1);
  weft_tensor* y3 = x3 && r3 ? fused(x3, w, b, "relu", r3) : NULL;
  weft_tensor* want3 = x3 && r3 ? composed(x3, w, b, r3) : NULL;
  CHECK(y3 && want3 && y3->ndim == 3 && max_diff(y3, want3) < 1e-5);
  weft_tensor_release(x3), weft_tensor_release(r3), weft_tensor_release(y3), weft_tensor_release(want3);
  /* refusals */
  CHECK(!fused(x, w, b, "gelu", NULL));
  CHECK_ERROR_HAS("_conv2d_fused: unknown activation 'gelu' (expected 'none', 'relu' or 'relu6')");
  CHECK(!fused(x, w, b, "none", x));
  CHECK_ERROR_HAS("_conv2d_fused: expected residual of size [2, 8, 7, 5] (the output's) but got [2, 6, 7, 5]");
  weft_tensor* rd = weft_to_dtype(r, WEFT_FLOAT64, false);
  CHECK(!fused(x, w, b, "none", rd));
  CHECK_ERROR_HAS("_conv2d_fused: expected residual of dtype float32 (the input's) but got float64");
  weft_tensor_release(rd);
  const int64_t sbad[4] = {8, 5, 3, 3};
  weft_tensor* wbad = weft_randn(sbad, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(!fused(x, wbad, b, "relu", NULL));
  CHECK_ERROR_HAS("_conv2d_fused: Given groups=1, weight of size [8, 5, 3, 3], expected input[2, 6, 7, 5] to have 5 "
                  "channels, but got 6 channels instead");
  weft_tensor_release(wbad);
  /* no gradient: refused while grad mode is on, computed under no_grad */
  weft_set_requires_grad(w, true);
  weft_tensor* yg = fused(x, w, b, "relu", NULL);
  CHECK(!yg);
  CHECK_ERROR_HAS("the derivative for '_conv2d_fused' is not implemented.");
  bool was = weft_set_grad_enabled(false);
  yg = fused(x, w, b, "relu", NULL);
  CHECK(yg != NULL);
  weft_set_grad_enabled(was);
  weft_tensor_release(yg);
  weft_set_requires_grad(w, false);
  /* explain shows the epilogue */
  weft_stack st;
  weft_stack_init(&st);
  weft_stack_push_tensor(&st, xcl);
  weft_stack_push_tensor(&st, w);
  weft_stack_push_tensor(&st, b);
  weft_stack_push_int_list(&st, one2, 2);
  weft_stack_push_int_list(&st, pad1, 2);
  weft_stack_push_int_list(&st, one2, 2);
  weft_stack_push_int(&st, 1);
  weft_stack_push_string(&st, "relu6");
  weft_stack_push_tensor(&st, r);
  char* json = NULL;
  CHECK(weft_explain_boxed(weft_op_find("_conv2d_fused"), &st, &json) == WEFT_OK);
  CHECK(json && strstr(json, "\"activation\":\"relu6\"") && strstr(json, "\"residual\":\"tile start\"") &&
        strstr(json, "\"algorithm\":\"implicit_gemm_nhwc\""));
  free(json);
  weft_stack_clear(&st);
  /* Meta */
  weft_tensor* xm = weft_empty(sx, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CHANNELS_LAST);
  weft_tensor* wm = weft_empty(sw, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* rm = weft_empty(sy, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* ym = fused(xm, wm, NULL, "relu", rm);
  CHECK(ym && weft_tensor_device(ym) == WEFT_DEVICE_META && ym->is_channels_last_contiguous);
  weft_tensor* list[] = {x, w, b, r, xcl, xm, wm, rm, ym};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
}

int main(void) {
  test_kernels();
  test_drivers();
  test_in_place_rows();
  test_op();
  TEST_REPORT();
}
