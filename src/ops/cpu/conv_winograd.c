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
  /* with few channels the transforms (plain loops) outweigh the saved products; on a small map the
   * partial tiles at its edges waste them. Measured on resnet18's layers (wasm, one thread): 28x28x128
   * and 14x14x256 run faster (1.1x, 1.5x), 56x56x64 (0.7x) and 7x7x512 slower than the GEMM. */
  return channels_last && dtype == WEFT_FLOAT32 && g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 &&
         g->dh == 1 && g->dw == 1 && g->groups == 1 && g->c >= 96 && g->cout >= 96 && g->ho >= 10 && g->wo >= 10;
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

/* A panels of the tiles [t0, t0 + nt): for each xi, TB / MR panels of
 * [ci][MR], v[xi] at v + xi * TB * C */
static void input_transform(const struct wino_ctx* c, int64_t t0, int64_t nt, float* v) {
  const weft_conv2d_geom* g = c->g;
  const int64_t C = g->c, mr = c->mr;
  for (int64_t i = 0; i < TB; i++) {
    const float* p[16];
    int64_t t = t0 + min64(i, nt - 1), n = t / (c->th * c->tw), ty = t / c->tw % c->th, tx = t % c->tw;
    for (int r = 0; r < 4; r++)
      for (int s = 0; s < 4; s++) {
        int64_t iy = 2 * ty - g->ph + r, ix = 2 * tx - g->pw + s;
        bool in = i < nt && iy >= 0 && iy < g->h && ix >= 0 && ix < g->w;
        p[r * 4 + s] = in ? c->x + ((n * g->h + iy) * g->w + ix) * C : c->zero;
      }
    float* d = v + (i / mr) * C * mr + i % mr; /* v[xi][panel][ci][lane] */
    for (int64_t ci = 0; ci < C; ci++) {
      float b[4][4], q[4][4];
      for (int s = 0; s < 4; s++) { /* B^T d */
        b[0][s] = p[s][ci] - p[8 + s][ci];
        b[1][s] = p[4 + s][ci] + p[8 + s][ci];
        b[2][s] = p[8 + s][ci] - p[4 + s][ci];
        b[3][s] = p[4 + s][ci] - p[12 + s][ci];
      }
      for (int r = 0; r < 4; r++) { /* (B^T d) B */
        q[r][0] = b[r][0] - b[r][2];
        q[r][1] = b[r][1] + b[r][2];
        q[r][2] = b[r][2] - b[r][1];
        q[r][3] = b[r][1] - b[r][3];
      }
      for (int xi = 0; xi < 16; xi++) d[xi * TB * C + ci * mr] = q[xi / 4][xi % 4];
    }
  }
}

/* Y = A^T m A for the tiles' outputs in columns [j0, j0 + cols), then the
 * epilogue: per tile, the 16 values of a column make its 4 outputs at once
 * (loops over columns with no branch: outputs past the map go to a scratch
 * row, a missing bias or residual reads zeros) */
static void output_transform(const struct wino_ctx* c, int64_t t0, int64_t nt, int64_t j0, int64_t cols,
                             const float* m, float* spill) {
  const weft_conv2d_geom* g = c->g;
  const int64_t ms = TB * c->ns; /* floats per xi */
  const float* res = c->e ? (const float*)c->e->residual : NULL;
  const float* bias = c->bias ? c->bias + j0 : c->zero;
  const float lo = c->clamp ? c->lo : -INFINITY, hi = c->clamp ? c->hi : INFINITY;
  for (int64_t i = 0; i < nt; i++) {
    int64_t t = t0 + i, n = t / (c->th * c->tw), ty = t / c->tw % c->th, tx = t % c->tw;
    const float* mi = m + i * c->ns;
    float* yp[4];
    const float* rp[4];
    for (int o = 0; o < 4; o++) {
      int64_t yy = 2 * ty + o / 2, xx = 2 * tx + o % 2;
      size_t at = (size_t)(((n * g->ho + yy) * g->wo + xx) * g->cout + j0);
      bool in = yy < g->ho && xx < g->wo;
      yp[o] = in ? c->y + at : spill;
      rp[o] = res && in ? res + at : c->zero;
    }
    for (int64_t j = 0; j < cols; j++) {
      float r0[4], r1[4]; /* A^T m: rows 0 and 1, over the 4 columns */
      for (int s = 0; s < 4; s++) {
        const float m0 = mi[s * ms + j], m1 = mi[(4 + s) * ms + j], m2 = mi[(8 + s) * ms + j], m3 = mi[(12 + s) * ms + j];
        r0[s] = m0 + m1 + m2;
        r1[s] = m1 - m2 - m3;
      }
      const float b = bias[j];
      float v[4] = {r0[0] + r0[1] + r0[2] + b + rp[0][j], r0[1] - r0[2] - r0[3] + b + rp[1][j],
                    r1[0] + r1[1] + r1[2] + b + rp[2][j], r1[1] - r1[2] - r1[3] + b + rp[3][j]};
      for (int o = 0; o < 4; o++) { /* clamp; a NaN compares false and stays */
        float w = v[o] < lo ? lo : v[o];
        yp[o][j] = w > hi ? hi : w;
      }
    }
  }
}

static weft_status run_tasks(void* p, int64_t begin, int64_t end) {
  const struct wino_ctx* c = p;
  const int64_t C = c->g->c;
  size_t vbytes = sizeof(float) * (size_t)(16 * TB * C), mbytes = sizeof(float) * (size_t)(17 * TB * c->ns);
  float* v = malloc(vbytes + mbytes);
  if (!v) return weft__error(WEFT_OUT_OF_MEMORY, "conv2d: out of memory (%zu bytes for Winograd tiles)", vbytes + mbytes);
  float* m = v + 16 * TB * C;
  float* spill = m + 16 * TB * c->ns; /* outputs past the map */
  const struct weft_f32_gemm_params gp = {.alpha = 1.0f, .accumulate = 0};
  int64_t last_tb = -1;
  for (int64_t task = begin; task < end; task++) {
    int64_t tb = task / c->ntn, nt_i = task % c->ntn;
    int64_t t0 = tb * TB, nt = min64(TB, c->tiles - t0), j0 = nt_i * c->ns, cols = min64(c->ns, c->g->cout - j0);
    if (tb != last_tb) input_transform(c, t0, nt, v), last_tb = tb; /* a task's tiles, reused across its columns */
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
