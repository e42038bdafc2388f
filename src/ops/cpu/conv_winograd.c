/* Winograd F(2x2, 3x3) over NHWC, float32 (Lavin & Gray, 2015): a 3x3,
 * stride 1, undilated, one-group convolution computed per 2x2 output tile
 * from its 4x4 input patch d as
 *
 *   Y = A^T [ (G g G^T) .* (B^T d B) ] A      (.*: 16 products per channel pair)
 *
 * so 16 multiply-adds per input/output channel pair make 4 outputs instead
 * of 36: resnet's 3x3 convolutions in 2.25x fewer multiply-adds, at the
 * price of the transforms (additions only, linear in the channels).
 *
 * Shape of the work, as weft's other GEMM convolutions: the 16 transformed
 * weights U = G g G^T are packed once (cached on the weight's storage by
 * _conv2d_fused) as NR-column panels per position xi; a task takes TB tiles
 * x NS output channels: it transforms its tiles' patches into MR-row A
 * panels per xi (V = B^T d B, zeros outside the input), runs the 16 GEMMs
 * [TB x Cin] [Cin x NS] of the micro-kernels into a scratch M, and
 * transforms M back, applying the epilogue (bias, residual, relu/relu6) as
 * each output is stored. The transforms are plain loops over channels, which
 * the compiler vectorizes.
 *
 *   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
 *   G   = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1]
 *   A^T = [1 1 1 0; 0 1 -1 -1] */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "ops/cpu/conv_fused.h"
#include "ops/cpu/gemm.h"
#include "weft/parallel.h"

/* tiles per task (a multiple of MR): 64 ran no faster than 16 on
 * resnet18's layers (the V and M buffers then leave L2) */
#define TB 16
#define TASK_WORK 65536 /* multiply-adds per parallel chunk at least */

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

bool weft__conv2d_winograd_fits(const weft_conv2d_geom* g, weft_dtype dtype, bool channels_last) {
  /* with few channels the transforms outweigh the saved products. Measured on resnet18's layers (wasm,
   * one thread, CPU time) with the vectorized transforms: 56x56x64 1.7x, 28x28x128 1.7x, 14x14x256
   * 1.15x and 7x7x512 1.5x faster than the implicit GEMM. */
  return channels_last && dtype == WEFT_FLOAT32 && g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 &&
         g->dh == 1 && g->dw == 1 && g->groups == 1 && g->c >= 64 && g->cout >= 64 && g->ho >= 4 && g->wo >= 4;
}

static void tile_sizes(int* mr, int* nr) {
  int kc;
  weft__gemm_tile(WEFT_FLOAT32, mr, nr, &kc);
}

size_t weft__conv2d_winograd_bytes(const weft_conv2d_geom* g) {
  int mr, nr;
  tile_sizes(&mr, &nr);
  return (size_t)(16 * g->c * cdiv(g->cout, nr) * nr) * sizeof(float);
}

/* U = G g G^T of every (co, ci), as panels: position xi, panel p of NR
 * output channels at (xi * npanels + p) * C * NR, holding [ci][j] */
void weft__conv2d_winograd_pack(const weft_conv2d_geom* g, const float* w, float* dst) {
  int mr, nr;
  tile_sizes(&mr, &nr);
  int64_t np = cdiv(g->cout, nr);
  memset(dst, 0, weft__conv2d_winograd_bytes(g));
  for (int64_t co = 0; co < g->cout; co++)
    for (int64_t ci = 0; ci < g->c; ci++) {
      float k[3][3], t[4][3];
      for (int r = 0; r < 3; r++)
        for (int s = 0; s < 3; s++) k[r][s] = w[co * g->ws[0] + ci * g->ws[1] + r * g->ws[2] + s * g->ws[3]];
      for (int s = 0; s < 3; s++) { /* t = G k */
        t[0][s] = k[0][s];
        t[1][s] = 0.5f * (k[0][s] + k[1][s] + k[2][s]);
        t[2][s] = 0.5f * (k[0][s] - k[1][s] + k[2][s]);
        t[3][s] = k[2][s];
      }
      for (int r = 0; r < 4; r++) { /* U = t G^T */
        const float u[4] = {t[r][0], 0.5f * (t[r][0] + t[r][1] + t[r][2]), 0.5f * (t[r][0] - t[r][1] + t[r][2]), t[r][2]};
        for (int s = 0; s < 4; s++)
          dst[((r * 4 + s) * np + co / nr) * g->c * nr + ci * nr + co % nr] = u[s];
      }
    }
}

struct wino_ctx {
  const weft_kernels* kt;
  const weft_conv2d_geom* g;
  const float *x, *u, *bias, *zero;
  const weft_conv2d_epilogue* e;
  float* y;
  int mr, nr;
  int64_t th, tw, tiles, ntb, ns, ntn, np;
  float lo, hi;
  bool clamp;
};

/* V = B^T d B of one patch (its 16 input pixels p, C channels each) into
 * d[xi * ds + ci]: contiguous over channels on both sides, so the loop
 * vectorizes (the GEMM's [ci][lane] order is a transpose, done after) */
static void input_patch(const float* const* p, int64_t C, float* restrict d, int64_t ds) {
  const float *p0 = p[0], *p1 = p[1], *p2 = p[2], *p3 = p[3], *p4 = p[4], *p5 = p[5], *p6 = p[6], *p7 = p[7];
  const float *p8 = p[8], *p9 = p[9], *p10 = p[10], *p11 = p[11], *p12 = p[12], *p13 = p[13], *p14 = p[14],
              *p15 = p[15];
  for (int64_t ci = 0; ci < C; ci++) {
    /* B^T d: rows 0-3 of the patch combined, per column s */
    const float b00 = p0[ci] - p8[ci], b01 = p1[ci] - p9[ci], b02 = p2[ci] - p10[ci], b03 = p3[ci] - p11[ci];
    const float b10 = p4[ci] + p8[ci], b11 = p5[ci] + p9[ci], b12 = p6[ci] + p10[ci], b13 = p7[ci] + p11[ci];
    const float b20 = p8[ci] - p4[ci], b21 = p9[ci] - p5[ci], b22 = p10[ci] - p6[ci], b23 = p11[ci] - p7[ci];
    const float b30 = p4[ci] - p12[ci], b31 = p5[ci] - p13[ci], b32 = p6[ci] - p14[ci], b33 = p7[ci] - p15[ci];
    /* (B^T d) B: the columns combined, per row */
    d[0 * ds + ci] = b00 - b02, d[1 * ds + ci] = b01 + b02, d[2 * ds + ci] = b02 - b01, d[3 * ds + ci] = b01 - b03;
    d[4 * ds + ci] = b10 - b12, d[5 * ds + ci] = b11 + b12, d[6 * ds + ci] = b12 - b11, d[7 * ds + ci] = b11 - b13;
    d[8 * ds + ci] = b20 - b22, d[9 * ds + ci] = b21 + b22, d[10 * ds + ci] = b22 - b21, d[11 * ds + ci] = b21 - b23;
    d[12 * ds + ci] = b30 - b32, d[13 * ds + ci] = b31 + b32, d[14 * ds + ci] = b32 - b31, d[15 * ds + ci] = b31 - b33;
  }
}

/* A panels of the tiles [t0, t0 + nt): for each xi, TB / MR panels of
 * [ci][MR], v[xi] at v + xi * TB * C. An MR group of patches is
 * transformed into t ([xi][MR][C]), then each xi's MR x C block is
 * transposed into its panel. */
static void input_transform(const struct wino_ctx* c, int64_t t0, int64_t nt, float* v, float* t) {
  const weft_conv2d_geom* g = c->g;
  const int64_t C = g->c, mr = c->mr;
  weft_transpose_fn* tr = c->kt->x32_transposec;
  for (int64_t i0 = 0; i0 < TB; i0 += mr) {
    for (int64_t i = i0; i < i0 + mr; i++) {
      const float* p[16];
      int64_t tt = t0 + min64(i, nt - 1), n = tt / (c->th * c->tw), ty = tt / c->tw % c->th, tx = tt % c->tw;
      for (int r = 0; r < 4; r++)
        for (int s = 0; s < 4; s++) {
          int64_t iy = 2 * ty - g->ph + r, ix = 2 * tx - g->pw + s;
          bool in = i < nt && iy >= 0 && iy < g->h && ix >= 0 && ix < g->w;
          p[r * 4 + s] = in ? c->x + ((n * g->h + iy) * g->w + ix) * C : c->zero;
        }
      input_patch(p, C, t + (i - i0) * C, mr * C);
    }
    for (int xi = 0; xi < 16; xi++) /* v[xi][panel][ci][lane] */
      tr(t + xi * mr * C, v + xi * TB * C + i0 * C, (size_t)C * sizeof(float), (size_t)mr * sizeof(float),
         (size_t)C, (size_t)mr);
  }
}

/* The 4 outputs of one tile over cols columns: A^T m A from m's 16 rows
 * (row xi at m + xi * ms), + bias + the residual rows r[o], clamped to
 * [lo, hi] (a NaN compares false and stays), into y[o]. Distinct,
 * restrict-qualified rows: the loop over columns vectorizes. */
static void output_tile(int64_t cols, const float* restrict m, int64_t ms, const float* restrict bias,
                        const float* restrict r0, const float* restrict r1, const float* restrict r2,
                        const float* restrict r3, float* restrict y0, float* restrict y1, float* restrict y2,
                        float* restrict y3, float lo, float hi) {
  for (int64_t j = 0; j < cols; j++) {
    float a[4], b[4]; /* A^T m: rows 0 and 1, over the 4 columns */
    for (int s = 0; s < 4; s++) {
      const float m0 = m[s * ms + j], m1 = m[(4 + s) * ms + j], m2 = m[(8 + s) * ms + j], m3 = m[(12 + s) * ms + j];
      a[s] = m0 + m1 + m2;
      b[s] = m1 - m2 - m3;
    }
    const float bj = bias[j];
    float v0 = a[0] + a[1] + a[2] + bj + r0[j], v1 = a[1] - a[2] - a[3] + bj + r1[j];
    float v2 = b[0] + b[1] + b[2] + bj + r2[j], v3 = b[1] - b[2] - b[3] + bj + r3[j];
    v0 = v0 < lo ? lo : v0, v1 = v1 < lo ? lo : v1, v2 = v2 < lo ? lo : v2, v3 = v3 < lo ? lo : v3;
    y0[j] = v0 > hi ? hi : v0, y1[j] = v1 > hi ? hi : v1, y2[j] = v2 > hi ? hi : v2, y3[j] = v3 > hi ? hi : v3;
  }
}

/* Y = A^T m A for the tiles' outputs in columns [j0, j0 + cols), then the
 * epilogue: per tile, the 16 values of a column make its 4 outputs at once
 * (no branch in the column loop: outputs past the map go to rows of spill,
 * a missing bias or residual reads zeros) */
static void output_transform(const struct wino_ctx* c, int64_t t0, int64_t nt, int64_t j0, int64_t cols,
                             const float* m, float* spill) {
  const weft_conv2d_geom* g = c->g;
  const int64_t ms = TB * c->ns; /* floats per xi */
  const float* res = c->e ? (const float*)c->e->residual : NULL;
  const float* bias = c->bias ? c->bias + j0 : c->zero;
  const float lo = c->clamp ? c->lo : -INFINITY, hi = c->clamp ? c->hi : INFINITY;
  for (int64_t i = 0; i < nt; i++) {
    int64_t t = t0 + i, n = t / (c->th * c->tw), ty = t / c->tw % c->th, tx = t % c->tw;
    float* yp[4];
    const float* rp[4];
    for (int o = 0; o < 4; o++) {
      int64_t yy = 2 * ty + o / 2, xx = 2 * tx + o % 2;
      size_t at = (size_t)(((n * g->ho + yy) * g->wo + xx) * g->cout + j0);
      bool in = yy < g->ho && xx < g->wo;
      yp[o] = in ? c->y + at : spill + o * c->ns;
      rp[o] = res && in ? res + at : c->zero;
    }
    output_tile(cols, m + i * c->ns, ms, bias, rp[0], rp[1], rp[2], rp[3], yp[0], yp[1], yp[2], yp[3], lo, hi);
  }
}

static weft_status run_tasks(void* p, int64_t begin, int64_t end) {
  const struct wino_ctx* c = p;
  const int64_t C = c->g->c;
  size_t vbytes = sizeof(float) * (size_t)(16 * TB * C), mbytes = sizeof(float) * (size_t)(17 * TB * c->ns);
  size_t tbytes = sizeof(float) * (size_t)(16 * c->mr * C);
  float* v = malloc(vbytes + mbytes + tbytes);
  if (!v)
    return weft__error(WEFT_OUT_OF_MEMORY, "conv2d: out of memory (%zu bytes for Winograd tiles)", vbytes + mbytes + tbytes);
  float* m = v + 16 * TB * C;
  float* spill = m + 16 * TB * c->ns; /* outputs past the map (4 rows of ns) */
  float* t = spill + TB * c->ns;      /* an MR group of transformed patches */
  const struct weft_f32_gemm_params gp = {.alpha = 1.0f, .accumulate = 0};
  int64_t last_tb = -1;
  for (int64_t task = begin; task < end; task++) {
    int64_t tb = task / c->ntn, nt_i = task % c->ntn;
    int64_t t0 = tb * TB, nt = min64(TB, c->tiles - t0), j0 = nt_i * c->ns, cols = min64(c->ns, c->g->cout - j0);
    if (tb != last_tb) input_transform(c, t0, nt, v, t), last_tb = tb; /* a task's tiles, reused across its columns */
    int64_t panels = cdiv(nt, c->mr);
    for (int xi = 0; xi < 16; xi++)
      for (int64_t j = 0; j < cols; j += c->nr) {
        const float* bp = c->u + ((xi * c->np + (j0 + j) / c->nr) * C) * c->nr;
        for (int64_t pi = 0; pi < panels; pi++)
          c->kt->f32_gemm_4x8((size_t)min64(c->mr, nt - pi * c->mr), (size_t)min64(c->nr, cols - j), (size_t)C,
                              v + xi * TB * C + pi * C * c->mr, bp, m + xi * TB * c->ns + pi * c->mr * c->ns + j,
                              (size_t)c->ns, &gp);
      }
    output_transform(c, t0, nt, j0, cols, m, spill);
  }
  free(v);
  return WEFT_OK;
}

weft_status weft__conv2d_winograd(const weft_kernels* kt, const weft_conv2d_geom* g, const float* x,
                                  const float* upack, const float* bias, const weft_conv2d_epilogue* e, float* y) {
  struct wino_ctx c = {.kt = kt, .g = g, .x = x, .u = upack, .bias = bias, .e = e, .y = y};
  tile_sizes(&c.mr, &c.nr);
  c.th = cdiv(g->ho, 2), c.tw = cdiv(g->wo, 2), c.tiles = g->n * c.th * c.tw, c.ntb = cdiv(c.tiles, TB);
  c.np = cdiv(g->cout, c.nr);
  c.ns = weft__conv_cols_per_tile(g->cout, c.ntb, c.nr);
  c.ntn = cdiv(g->cout, c.ns);
  if (e && e->act != WEFT_CONV_ACT_NONE) c.clamp = true, c.lo = 0.0f, c.hi = e->act == WEFT_CONV_ACT_RELU6 ? 6.0f : INFINITY;
  float* zero = calloc((size_t)(g->c > g->cout ? g->c : g->cout), sizeof(float)); /* input padding, no bias */
  if (!zero) return weft__error(WEFT_OUT_OF_MEMORY, "conv2d: out of memory");
  c.zero = zero;
  int64_t per_task = 16 * TB * g->c * c.ns, grain = TASK_WORK / (per_task > 0 ? per_task : 1);
  weft_status s = weft_parallel_for(0, c.ntb * c.ntn, grain < 1 ? 1 : grain, run_tasks, &c);
  free(zero);
  return s;
}
