/* The conv2d drivers: packing, blocking and threading over the kernels of
 * src/kernels (gemm.c's micro-kernels, conv.c's depthwise ones).
 *
 * implicit GEMM, NHWC (channels_last): per group, Y[M, Coutg] = A B with
 *   M = N*Ho*Wo output pixels, K = kh*kw*Cg (k = (ky*kw + kx)*Cg + ci) and
 *   B the weight, packed once into NR-column panels. A is never built:
 *   each tile packs its MR-row panels straight from the NHWC input (a tap's
 *   Cg channels are contiguous there), zeros where the tap falls in the
 *   padding. Tiles: MC pixels x NS output channels, B's micro-panel in L1,
 *   the tile's A block in L2 (src/ops/cpu/gemm.c's loop nest).
 * im2col GEMM, NCHW: per image and group, Y[Coutg, Ho*Wo] = W X with the
 *   weight packed once as MR-row panels (k = ci*kh*kw + ky*kw + kx) and
 *   each tile packing its NR-column panels of the im2col matrix directly
 *   from the input (a full panel on one output row at stride 1 is one
 *   8-value copy per k); no im2col buffer of the whole image.
 * 1x1, stride 1, no padding: the convolution is a matrix product, handed
 *   to weft__gemm (NHWC: X[NHW, C] W^T; NCHW: W[Cout, C] X[n][C, HW]).
 * depthwise: the dwconv kernels (NCHW: per channel plane, copied with its
 *   padding into a scratch plane, one call per output row vectorized over
 *   the width; NHWC: one output row per kernel call, pixels in pairs
 *   sharing each tap's weight loads, taps in the padding reading a row of
 *   zeros, the epilogue in the kernel's store).
 * Bias: the output tile is filled with it first and the GEMM accumulates
 * (the micro-kernels' accumulate flag), so no second pass. A fused epilogue
 * (conv_fused.h) starts the tile at bias + residual and clamps in the
 * micro-kernel's store of the last K block. float32 hands a tile's MR
 * panels of one NR column panel to one call (f32_gemm_4x8_rows). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "ops/cpu/conv.h"
#include "ops/cpu/conv_fused.h"
#include "ops/cpu/gemm.h"
#include "weft/parallel.h"

#define KC 256       /* depth of a K block (as the GEMM) */
#define MC_NHWC 64   /* output pixels per NHWC tile (16 MR panels) */
#define NS_NCHW 128  /* output pixels per NCHW tile (16 NR panels) */
#define TILE_WORK 65536 /* multiply-adds per parallel chunk at least */

const char* weft__conv2d_algo_name(weft_conv2d_algo a) {
  static const char* const names[] = {"implicit_gemm_nhwc", "im2col_gemm_nchw", "gemm_1x1_nhwc",
                                      "gemm_1x1_nchw",      "depthwise_nhwc",   "depthwise_nchw",
                                      "winograd_f2x2_3x3_nhwc"};
  return names[a];
}

weft_conv2d_algo weft__conv2d_pick(const weft_conv2d_geom* g, bool channels_last) {
  bool depthwise = g->groups > 1 && g->groups == g->c;
  bool one = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 && g->ho == g->h &&
             g->wo == g->w;
  if (channels_last) {
    if (depthwise && g->cout == g->c) return WEFT_CONV_DEPTHWISE_NHWC;
    return one ? WEFT_CONV_GEMM_1X1_NHWC : WEFT_CONV_IMPLICIT_GEMM_NHWC;
  }
  if (depthwise) return WEFT_CONV_DEPTHWISE_NCHW;
  return one ? WEFT_CONV_GEMM_1X1_NCHW : WEFT_CONV_IM2COL_GEMM_NCHW;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
/* K in equal blocks of at most KC (576 = 3 x 192, not 2 x 256 + 64) */
static int64_t k_block(int64_t k) { return k > 0 ? cdiv(k, cdiv(k, KC)) : 1; }

/* ---- bias fill: rows of y set to the bias (or 0) before accumulating ---- */

struct fill_ctx {
  size_t es;
  char* y;
  int64_t len;       /* values per row */
  const char* bias;  /* NULL: zeros */
  int64_t per_value; /* NCHW: rows per bias value (row r takes bias[r / per_value % cout]); 0: the row is the bias */
  int64_t cout;
};

static weft_status run_fill(void* p, int64_t begin, int64_t end) {
  const struct fill_ctx* f = p;
  for (int64_t r = begin; r < end; r++) {
    char* row = f->y + (size_t)(r * f->len) * f->es;
    if (!f->bias) {
      memset(row, 0, (size_t)f->len * f->es);
    } else if (f->per_value == 0) {
      memcpy(row, f->bias, (size_t)f->len * f->es);
    } else {
      const char* v = f->bias + (size_t)(r / f->per_value % f->cout) * f->es;
      if (f->es == 8)
        for (int64_t i = 0; i < f->len; i++) memcpy(row + 8 * i, v, 8);
      else
        for (int64_t i = 0; i < f->len; i++) memcpy(row + 4 * i, v, 4);
    }
  }
  return WEFT_OK;
}

static weft_status fill_rows(size_t es, void* y, int64_t rows, int64_t len, const void* bias, int64_t per_value,
                             int64_t cout) {
  struct fill_ctx f = {es, y, len, bias, per_value, cout};
  int64_t grain = 16384 / (len > 0 ? len : 1);
  return weft_parallel_for(0, rows, grain < 1 ? 1 : grain, run_fill, &f);
}

/* ---- shared GEMM pieces ---- */

typedef struct {
  const weft_kernels* kt;
  bool f64;
  size_t es;
  int mr, nr;
} ukr;

static ukr ukr_of(const weft_kernels* kt, weft_dtype dtype) {
  ukr u = {kt, dtype == WEFT_FLOAT64, dtype == WEFT_FLOAT64 ? 8 : 4, 0, 0};
  int kc;
  weft__gemm_tile(dtype, &u.mr, &u.nr, &kc);
  return u;
}

/* The clamp of activation act: false for none. */
static bool act_bounds(weft_conv_act act, double* lo, double* hi) {
  *lo = -__builtin_inf(), *hi = __builtin_inf();
  if (act == WEFT_CONV_ACT_NONE) return false;
  *lo = 0.0;
  if (act == WEFT_CONV_ACT_RELU6) *hi = 6.0;
  return true;
}

/* c (m x nc, row stride cs) += A B over kc (or, when not acc, = A B +
 * bias[j], bias NULL adding nothing), then the activation of e when e is
 * given (the last K block's store). A: MR-row panels one after another, or
 * with lda > 0 (float32) m rows in place, lda elements apart. float32 hands
 * all m rows to one call (f32_gemm_4x8_rows: a 1x1 over few channels costs
 * its calls' entries otherwise). */
static void ukernel(const ukr* u, size_t m, size_t nc, size_t kc, const char* a, size_t lda, const char* b, char* c,
                    size_t cs, const weft_conv2d_epilogue* e, int acc, const char* bias) {
  double lo = 0.0, hi = 0.0;
  int clamp = e && act_bounds(e->act, &lo, &hi);
  if (u->f64) {
    const struct weft_f64_gemm_params p = {1.0, acc, clamp, lo, hi, (const double*)bias};
    for (size_t i = 0; i < m; i += (size_t)u->mr)
      u->kt->f64_gemm_4x4(m - i < (size_t)u->mr ? m - i : (size_t)u->mr, nc, kc, (const double*)a + i * kc, (const double*)b,
                          (double*)c + i * cs, cs, &p);
  } else {
    const struct weft_f32_gemm_params p = {1.0f, acc, clamp, (float)lo, (float)hi, (const float*)bias, lda};
    u->kt->f32_gemm_4x8_rows(m, nc, kc, (const float*)a, (const float*)b, (float*)c, cs, &p);
  }
}

/* y = r + bias over n values (bias one value per output when per_value,
 * else a single one); r NULL: y = bias; bias NULL: y = r (or 0) */
static void start_row(const ukr* u, size_t n, const char* r, const char* bias, bool per_value, char* y) {
  const struct weft_f32_binary_params one = {1.0f};
  if (!r && !bias) {
    memset(y, 0, n * u->es);
  } else if (!bias) {
    memcpy(y, r, n * u->es);
  } else if (!u->f64 && r) {
    (per_value ? u->kt->f32_vadd : u->kt->f32_vaddc)(n, (const float*)r, (const float*)bias, (float*)y, &one);
  } else if (u->f64) {
    double* yd = (double*)y;
    const double *rd = (const double*)r, *bd = (const double*)bias;
    for (size_t i = 0; i < n; i++) yd[i] = (rd ? rd[i] : 0.0) + bd[per_value ? i : 0];
  } else if (per_value) {
    memcpy(y, bias, n * 4);
  } else {
    for (size_t i = 0; i < n; i++) ((float*)y)[i] = *(const float*)bias;
  }
}

/* Weight offsets per k (elements): the GEMM's K order over (ci, ky, kx). */
static ptrdiff_t* weight_koffsets(const weft_conv2d_geom* g, bool nhwc_order) {
  int64_t cg = g->c / g->groups, k = cg * g->kh * g->kw;
  ptrdiff_t* off = malloc(sizeof(ptrdiff_t) * (size_t)(k > 0 ? k : 1));
  if (!off) return NULL;
  for (int64_t ci = 0; ci < cg; ci++)
    for (int64_t ky = 0; ky < g->kh; ky++)
      for (int64_t kx = 0; kx < g->kw; kx++) {
        int64_t idx = nhwc_order ? (ky * g->kw + kx) * cg + ci : (ci * g->kh + ky) * g->kw + kx;
        off[idx] = ci * g->ws[1] + ky * g->ws[2] + kx * g->ws[3];
      }
  return off;
}

/* The weight of every group packed once, as panels of r output channels:
 * group q, K block at pc (depth kc), panel p at
 *   q * K * rpad + pc * rpad + p * kc * r    (elements; rpad = Coutg rounded up to r)
 * holding d[k * r + i] = w[q * Coutg + p * r + i][k-th (ci, ky, kx)], zeros past Coutg. */
#define DEF_PACK_W(T, name)                                                                            \
  static void name(const weft_conv2d_geom* g, const T* w, const ptrdiff_t* koff, int r, T* dst) {      \
    int64_t coutg = g->cout / g->groups, k = g->c / g->groups * g->kh * g->kw, kcb = k_block(k);     \
    int64_t rpad = cdiv(coutg, r) * r;                                                               \
    for (int64_t q = 0; q < g->groups; q++)                                                          \
      for (int64_t pc = 0; pc < k; pc += kcb) {                                                      \
        int64_t kc = min64(kcb, k - pc);                                                             \
        for (int64_t p = 0; p < rpad / r; p++) {                                                     \
          T* d = dst + q * k * rpad + pc * rpad + p * kc * r;                                        \
          for (int64_t i = 0; i < r; i++) {                                                          \
            int64_t co = p * r + i;                                                                  \
            const T* wc = w + (q * coutg + co) * g->ws[0];                                           \
            for (int64_t kk = 0; kk < kc; kk++) d[kk * r + i] = co < coutg ? wc[koff[pc + kk]] : 0;  \
          }                                                                                          \
        }                                                                                            \
      }                                                                                              \
  }
DEF_PACK_W(float, pack_w_f32)
DEF_PACK_W(double, pack_w_f64)

/* Packs the weight for a GEMM algorithm (r: MR or NR); NULL on OOM. */
static char* pack_weight(const ukr* u, const weft_conv2d_geom* g, const void* w, bool nhwc_order, int r) {
  int64_t coutg = g->cout / g->groups, k = g->c / g->groups * g->kh * g->kw;
  size_t bytes = (size_t)(g->groups * cdiv(coutg, r) * r * (k > 0 ? k : 1)) * u->es;
  char* dst = malloc(bytes);
  ptrdiff_t* koff = weight_koffsets(g, nhwc_order);
  if (!dst || !koff) {
    free(dst);
    free(koff);
    weft__error(WEFT_OUT_OF_MEMORY, "conv2d: out of memory (%zu bytes for the packed weight)", bytes);
    return NULL;
  }
  if (u->f64)
    pack_w_f64(g, w, koff, r, (double*)dst);
  else
    pack_w_f32(g, w, koff, r, (float*)dst);
  free(koff);
  return dst;
}

/* ---- implicit GEMM over NHWC ---- */

/* One GEMM convolution (either layout): the weight packed once, the tiling,
 * and the tile function with its packing scratch (one per chunk). */
struct gemm_ctx {
  ukr u;
  const weft_conv2d_geom* g;
  const char* x;
  const char* wpack;
  const char* bias;
  char* y;
  const weft_conv2d_epilogue* epi; /* NULL: none */
  bool dense1x1;                   /* 1x1, stride 1, no padding: GEMM rows are consecutive pixels */
  int64_t k, kcb, cg, coutg, rpad; /* rpad: Coutg rounded up to the weight panels' width */
  int64_t rows;                    /* GEMM rows per group: NHWC N*Ho*Wo pixels; NCHW Ho*Wo per image */
  int64_t ntr, ntn, ns;            /* tiles along the pixels; NHWC: along Coutg, columns per tile */
  void (*tile)(const struct gemm_ctx* c, int64_t tile, char* scratch);
  size_t scratch;
};

/* A panel: rows [m0, m0 + rows) (output pixels), k in [pc, pc + kc), of
 * group q: d[k * MR + i] = x[n, iy, ix, q * Cg + ci] or 0 in the padding.
 * k runs over taps, each a run of Cg contiguous channels per pixel: when
 * the MR pixels sit on one output row and the tap reads inside the input
 * for all of them, the run is an MR x len transpose (pixels sw * C apart)
 * for the transpose kernel; otherwise values one by one. */
static void pack_a_nhwc(const struct gemm_ctx* c, int64_t q, int64_t m0, int64_t rows, int64_t pc, int64_t kc,
                        char* d) {
  const weft_conv2d_geom* g = c->g;
  const int mr = c->u.mr;
  const size_t es = c->u.es;
  const int64_t cg = c->cg;
  weft_transpose_fn* tr = c->u.f64 ? c->u.kt->x64_transposec : c->u.kt->x32_transposec;
  int64_t iy0[4], ix0[4];
  const char* xn[4];
  for (int i = 0; i < mr; i++) {
    int64_t m = m0 + (i < rows ? i : rows - 1), ox = m % g->wo, oy = m / g->wo % g->ho, n = m / (g->wo * g->ho);
    iy0[i] = oy * g->sh - g->ph, ix0[i] = ox * g->sw - g->pw;
    xn[i] = c->x + (size_t)(n * g->h * g->w * g->c + q * cg) * es;
  }
  bool run = rows == mr && (m0 % g->wo + mr <= g->wo || c->dense1x1);
  for (int64_t kk = pc, end = pc + kc; kk < end;) {
    int64_t tap = kk / cg, ci = kk % cg, len = min64(cg - ci, end - kk);
    int64_t dy = tap / g->kw * g->dh, kx = tap % g->kw, dx = kx * g->dw;
    char* dk = d + (size_t)((kk - pc) * mr) * es;
    if (run && iy0[0] + dy >= 0 && iy0[0] + dy < g->h && ix0[0] + dx >= 0 && ix0[mr - 1] + dx < g->w) {
      /* undilated, one group: the taps on to the row's end (or the input's)
       * are one run of channels (the stem's 7 taps x 3 channels: one call) */
      if (g->dw == 1 && cg == g->c) len = min64((min64(g->kw - 1, g->w - 1 - ix0[mr - 1]) - kx + 1) * cg - ci, end - kk);
      kk += len;
      const char* s = xn[0] + (size_t)(((iy0[0] + dy) * g->w + ix0[0] + dx) * g->c + ci) * es;
      tr(s, dk, (size_t)(g->sw * g->c) * es, (size_t)mr * es, (size_t)len, (size_t)mr);
      continue;
    }
    kk += len;
    for (int i = 0; i < mr; i++) {
      int64_t iy = iy0[i] + dy, ix = ix0[i] + dx;
      bool in = i < rows && iy >= 0 && iy < g->h && ix >= 0 && ix < g->w;
      const char* s = in ? xn[i] + (size_t)((iy * g->w + ix) * g->c + ci) * es : NULL;
      if (es == 8) {
        double* dd = (double*)dk + i;
        for (int64_t j = 0; j < len; j++) dd[j * mr] = s ? ((const double*)s)[j] : 0.0;
      } else {
        float* df = (float*)dk + i;
        for (int64_t j = 0; j < len; j++) df[j * mr] = s ? ((const float*)s)[j] : 0.0f;
      }
    }
  }
}

/* Output pixels [m0, m0 + rows) (rows <= MC_NHWC) x channels [j0, j0 + cols)
 * of group q, through A panels packed into apack. */
static void nhwc_block(const struct gemm_ctx* c, int64_t q, int64_t m0, int64_t rows, int64_t j0, int64_t cols,
                       char* apack) {
  const weft_conv2d_geom* g = c->g;
  const ukr* u = &c->u;
  const size_t es = u->es;
  size_t at = (size_t)(m0 * g->cout + q * c->coutg + j0) * es;
  char* y = c->y + at;
  const char* res = c->epi && c->epi->residual ? (const char*)c->epi->residual + at : NULL;
  const char* bias = c->bias ? c->bias + (size_t)(q * c->coutg + j0) * es : NULL;
  /* a residual starts the tile (with the bias); else the first K block's store adds the bias */
  for (int64_t i = 0; res && i < rows; i++)
    start_row(u, (size_t)cols, res + (size_t)(i * g->cout) * es, bias, true, y + (size_t)(i * g->cout) * es);
  int64_t panels = cdiv(rows, u->mr);
  /* a dense 1x1's A rows are the pixels' channels, read in place (float32's kernel) */
  const bool direct = c->dense1x1 && !u->f64;
  for (int64_t pc = 0; pc < c->k; pc += c->kcb) {
    int64_t kc = min64(c->kcb, c->k - pc);
    for (int64_t p = 0; p < panels && !direct; p++) {
      char* d = apack + (size_t)(p * kc * u->mr) * es;
      int64_t r = min64(u->mr, rows - p * u->mr);
      pack_a_nhwc(c, q, m0 + p * u->mr, r, pc, kc, d);
    }
    for (int64_t j = 0; j < cols; j += u->nr) {
      const char* bp = c->wpack + (size_t)(q * c->k * c->rpad + pc * c->rpad + (j0 + j) / u->nr * kc * u->nr) * es;
      size_t nc = (size_t)min64(u->nr, cols - j);
      /* the tile's rows in one call: its MR panels are consecutive in apack */
      const char* ap = direct ? c->x + (size_t)(m0 * g->c + q * c->cg + pc) * es : apack;
      ukernel(u, (size_t)rows, nc, (size_t)kc, ap, direct ? (size_t)g->c : 0, bp, y + (size_t)j * es, (size_t)g->cout,
              pc + kc >= c->k ? c->epi : NULL, res || pc > 0, bias && !res ? bias + (size_t)j * es : NULL);
    }
  }
}

static void nhwc_tile(const struct gemm_ctx* c, int64_t tile, char* apack) {
  int64_t nt = tile % c->ntn, mt = tile / c->ntn % c->ntr, q = tile / (c->ntn * c->ntr);
  int64_t m0 = mt * MC_NHWC, j0 = nt * c->ns;
  nhwc_block(c, q, m0, min64(MC_NHWC, c->rows - m0), j0, min64(c->ns, c->coutg - j0), apack);
}

/* ---- implicit GEMM over NHWC, A in place (stems) ---- */

/* A stem (few input channels: 3 x 3 taps is a kernel row's K) reads its A
 * in place: for an output pixel, kernel row ky's K slice, kw taps x C
 * channels, is one run of the input row, and consecutive pixels' runs are
 * sw x C apart, the lda of the micro-kernel's in-place rows. So an output
 * row's interior pixels (all taps inside the input row) are kh passes of
 * the micro-kernel over the whole row, one per kernel row inside the input,
 * accumulating in y (the weight panel's rows of that slice; one K block);
 * the few edge pixels go through packed panels as before. float32, one
 * group, undilated, a kernel row of at most 16 values: MobileNetV2's stem
 * (3x3 s2, 3 channels) ran in 0.95 ms instead of 1.3 (wasm, one thread, CPU
 * time), while resnet's (7x7 s2, kernel rows of 21) ran no faster: its 7
 * passes over the output row cost what the packing did. */
bool weft__conv2d_rows_in_place(const weft_conv2d_geom* g, weft_dtype dtype) {
  return dtype == WEFT_FLOAT32 && g->groups == 1 && g->dh == 1 && g->dw == 1 && g->kh > 1 &&
         g->c * g->kh * g->kw <= KC && g->c * g->kw <= 16;
}

/* the pixels [m0, m1) of one output row through packed panels */
static void nhwc_edge(const struct gemm_ctx* c, int64_t m0, int64_t m1, char* apack) {
  for (int64_t m = m0; m < m1; m += MC_NHWC) nhwc_block(c, 0, m, min64(MC_NHWC, m1 - m), 0, c->coutg, apack);
}

/* the interior pixels [ox0, ox1) of output row r = n * Ho + oy, ky in [ky0, ky1) inside the input */
static void row_interior(const struct gemm_ctx* c, int64_t r, int64_t ox0, int64_t ox1, int64_t ky0, int64_t ky1) {
  const weft_conv2d_geom* g = c->g;
  const ukr* u = &c->u;
  const int64_t rows = ox1 - ox0, run = g->kw * g->c, n = r / g->ho, iy0 = r % g->ho * g->sh - g->ph;
  float* y = (float*)c->y + (r * g->wo + ox0) * g->cout;
  const float* res = c->epi && c->epi->residual ? (const float*)c->epi->residual + (y - (float*)c->y) : NULL;
  const float* bias = (const float*)c->bias;
  for (int64_t i = 0; res && i < rows; i++)
    start_row(u, (size_t)g->cout, (const char*)(res + i * g->cout), (const char*)bias, true, (char*)(y + i * g->cout));
  for (int64_t ky = ky0; ky < ky1; ky++) {
    const float* a = (const float*)c->x + ((n * g->h + iy0 + ky) * g->w + ox0 * g->sw - g->pw) * g->c;
    for (int64_t j = 0; j < g->cout; j += u->nr) {
      const float* bp = (const float*)c->wpack + j / u->nr * c->k * u->nr + ky * run * u->nr;
      ukernel(u, (size_t)rows, (size_t)min64(u->nr, g->cout - j), (size_t)run, (const char*)a, (size_t)(g->sw * g->c),
              (const char*)bp, (char*)(y + j), (size_t)g->cout, ky + 1 == ky1 ? c->epi : NULL, res || ky > ky0,
              bias && !res && ky == ky0 ? (const char*)(bias + j) : NULL);
    }
  }
}

/* one output row: its interior in place, its edges (and a row whose
 * kernel rows all fall in the padding) packed */
static void nhwc_row_tile(const struct gemm_ctx* c, int64_t r, char* apack) {
  const weft_conv2d_geom* g = c->g;
  const int64_t iy0 = r % g->ho * g->sh - g->ph;
  const int64_t ky0 = iy0 < 0 ? -iy0 : 0, ky1 = min64(g->kh, g->h - iy0);
  int64_t ox0 = min64(cdiv(g->pw, g->sw), g->wo);
  int64_t ox1 = g->w - g->kw + g->pw < 0 ? 0 : min64((g->w - g->kw + g->pw) / g->sw + 1, g->wo);
  if (ox1 <= ox0 || ky1 <= ky0) {
    nhwc_edge(c, r * g->wo, (r + 1) * g->wo, apack);
    return;
  }
  nhwc_edge(c, r * g->wo, r * g->wo + ox0, apack);
  row_interior(c, r, ox0, ox1, ky0, ky1);
  nhwc_edge(c, r * g->wo + ox1, (r + 1) * g->wo, apack);
}

static weft_status run_tiles(void* p, int64_t begin, int64_t end) {
  const struct gemm_ctx* c = p;
  char* scratch = malloc(c->scratch);
  if (!scratch) return weft__error(WEFT_OUT_OF_MEMORY, "conv2d: out of memory (%zu bytes for packing)", c->scratch);
  for (int64_t t = begin; t < end; t++) c->tile(c, t, scratch);
  free(scratch);
  return WEFT_OK;
}

/* (conv.h) */
int64_t weft__conv_cols_per_tile(int64_t coutg, int64_t mtiles, int nr) {
  int threads = weft_in_parallel_region() ? 1 : weft_get_num_threads();
  int64_t want = threads > 1 ? 4 * (int64_t)threads : 1; /* one thread: no split (each N tile repacks A) */
  int64_t ntn = mtiles >= want ? 1 : cdiv(want, mtiles);
  int64_t ns = cdiv(cdiv(coutg, ntn), nr) * nr;
  return ns < 4 * nr ? 4 * nr : ns;
}

static int64_t grain_for(int64_t work_per_tile) {
  int64_t g = TILE_WORK / (work_per_tile > 0 ? work_per_tile : 1);
  return g < 1 ? 1 : g;
}

/* Packs the weight (panels of `r` channels, K in the layout's order), runs
 * the tiles, frees the weight. */
static weft_status gemm_conv(struct gemm_ctx* c, const void* w, bool nhwc_order, int r, int64_t ntiles,
                             int64_t work_per_tile) {
  if (c->wpack) return weft_parallel_for(0, ntiles, grain_for(work_per_tile), run_tiles, c); /* packed before */
  char* wpack = pack_weight(&c->u, c->g, w, nhwc_order, r);
  if (!wpack) return weft_last_status();
  c->wpack = wpack;
  weft_status s = weft_parallel_for(0, ntiles, grain_for(work_per_tile), run_tiles, c);
  free(wpack);
  return s;
}

/* the fused entry's extras: the epilogue and a weight packed before */
typedef struct {
  const weft_conv2d_epilogue* epi;
  const void* wpacked;
  bool dense1x1;
} fused_extras;

static struct gemm_ctx gemm_ctx_of(const ukr* u, const weft_conv2d_geom* g, const void* x, const void* bias, void* y,
                                   int r, const fused_extras* fx) {
  struct gemm_ctx c = {.u = *u, .g = g, .x = x, .bias = bias, .y = y};
  if (fx) c.epi = fx->epi, c.wpack = fx->wpacked, c.dense1x1 = fx->dense1x1;
  c.cg = g->c / g->groups, c.coutg = g->cout / g->groups;
  c.k = c.cg * g->kh * g->kw, c.kcb = k_block(c.k);
  c.rpad = cdiv(c.coutg, r) * r;
  return c;
}

static weft_status conv_nhwc(const ukr* u, const weft_conv2d_geom* g, const void* x, const void* w, const void* bias,
                             void* y, const fused_extras* fx) {
  struct gemm_ctx c = gemm_ctx_of(u, g, x, bias, y, u->nr, fx);
  if (weft__conv2d_rows_in_place(g, u->f64 ? WEFT_FLOAT64 : WEFT_FLOAT32)) { /* a tile per output row */
    c.rows = g->n * g->ho * g->wo, c.ntn = 1, c.ns = c.coutg;
    c.tile = nhwc_row_tile, c.scratch = (size_t)(cdiv(MC_NHWC, u->mr) * u->mr * c.kcb) * u->es;
    return gemm_conv(&c, w, true, u->nr, g->n * g->ho, g->wo * c.coutg * c.k);
  }
  c.rows = g->n * g->ho * g->wo, c.ntr = cdiv(c.rows, MC_NHWC);
  c.ns = weft__conv_cols_per_tile(c.coutg, c.ntr * g->groups, u->nr);
  c.ntn = cdiv(c.coutg, c.ns);
  c.tile = nhwc_tile, c.scratch = (size_t)(cdiv(MC_NHWC, u->mr) * u->mr * c.kcb) * u->es;
  return gemm_conv(&c, w, true, u->nr, g->groups * c.ntr * c.ntn, MC_NHWC * c.ns * c.k);
}

/* (conv_fused.h) nhwc_tile's direct 1x1 path over any m rows, for a driver
 * that keeps its rows in scratch (the fused inverted residual): the same K
 * blocks, start and store, so its sums equal _conv2d_fused's bit for bit.
 * Output channels [j0, j1) only (j0 a multiple of NR): a thread's share of
 * the panels, when threads split the channels rather than the rows. */
void weft__conv2d_1x1_cols_f32(const weft_kernels* kt, int64_t c, int64_t cout, int64_t j0, int64_t j1, int64_t m,
                               const float* a, size_t lda, const float* wpacked, const float* bias, const float* res,
                               size_t rs, weft_conv_act act, float* y, size_t ys) {
  const ukr u = ukr_of(kt, WEFT_FLOAT32);
  const weft_conv2d_epilogue epi = {act, NULL};
  const int64_t kcb = k_block(c), rpad = cdiv(cout, u.nr) * u.nr;
  for (int64_t i = 0; res && i < m; i++)
    start_row(&u, (size_t)(j1 - j0), (const char*)(res + (size_t)i * rs + j0), (const char*)(bias ? bias + j0 : NULL),
              true, (char*)(y + (size_t)i * ys + j0));
  for (int64_t pc = 0; pc < c; pc += kcb) {
    int64_t kc = min64(kcb, c - pc);
    for (int64_t j = j0; j < j1; j += u.nr) {
      const float* bp = wpacked + pc * rpad + j / u.nr * kc * u.nr;
      ukernel(&u, (size_t)m, (size_t)min64(u.nr, j1 - j), (size_t)kc, (const char*)(a + pc), lda,
              (const char*)bp, (char*)(y + j), ys, pc + kc >= c ? &epi : NULL, res || pc > 0,
              bias && !res ? (const char*)(bias + j) : NULL);
    }
  }
}

void weft__conv2d_1x1_rows_f32(const weft_kernels* kt, int64_t c, int64_t cout, int64_t m, const float* a,
                               size_t lda, const float* wpacked, const float* bias, const float* res, size_t rs,
                               weft_conv_act act, float* y, size_t ys) {
  weft__conv2d_1x1_cols_f32(kt, c, cout, 0, cout, m, a, lda, wpacked, bias, res, rs, act, y, ys);
}

/* ---- im2col GEMM over NCHW ---- */

/* B panel: output pixels [p0, p0 + cols) of image n, group q, k in
 * [pc, pc + kc): d[k * NR + j] = x[n, q * Cg + ci, iy, ix] or 0. k walks
 * (ci, ky, kx) with counters; a full panel on one output row at stride 1
 * reads NR consecutive values of one input row for every kx in
 * [kx_lo, kx_hi] (the others touch the padding and go value by value). */
#define DEF_PACK_B_NCHW(T, name)                                                                              \
  static void name(const struct gemm_ctx* c, int64_t n, int64_t q, int64_t p0, int64_t cols, int64_t pc,       \
                   int64_t kc, T* d) {                                                                        \
    const weft_conv2d_geom* g = c->g;                                                                         \
    const int nr = c->u.nr;                                                                                   \
    const int64_t hw = g->h * g->w, khw = g->kh * g->kw;                                                      \
    const T* xg = (const T*)c->x + (n * g->c + q * c->cg) * hw;                                               \
    if (c->dense1x1 && cols == nr) { /* k is the channel; the NR pixels are consecutive */                    \
      for (int64_t kk = 0; kk < kc; kk++, d += nr)                                                            \
        for (int j = 0; j < nr; j++) d[j] = xg[(pc + kk) * hw + p0 + j];                                      \
      return;                                                                                                 \
    }                                                                                                         \
    int64_t iy0[8], ix0[8];                                                                                   \
    for (int j = 0; j < nr; j++) {                                                                            \
      int64_t pj = p0 + (j < cols ? j : 0);                                                                   \
      iy0[j] = pj / g->wo * g->sh - g->ph, ix0[j] = pj % g->wo * g->sw - g->pw;                               \
    }                                                                                                         \
    bool run = cols == nr && g->sw == 1 && iy0[0] == iy0[nr - 1];                                             \
    int64_t kx_lo = 0, kx_hi = -1; /* kx whose NR reads are all inside the row */                             \
    if (run) {                                                                                                \
      kx_lo = ix0[0] >= 0 ? 0 : (-ix0[0] + g->dw - 1) / g->dw;                                                \
      kx_hi = g->w - nr - ix0[0] < 0 ? -1 : (g->w - nr - ix0[0]) / g->dw;                                     \
    }                                                                                                         \
    int64_t ci = pc / khw, ky = pc / g->kw % g->kh, kx = pc % g->kw;                                          \
    for (int64_t kk = 0; kk < kc; ky = 0, ci++) {                                                             \
      for (; ky < g->kh && kk < kc; ky++, kx = 0) {                                                           \
        int64_t dy = ky * g->dh;                                                                              \
        bool row_in = iy0[0] + dy >= 0 && iy0[0] + dy < g->h;                                                 \
        const T* xc = xg + ci * hw;                                                                           \
        for (; kx < g->kw && kk < kc; kx++, kk++, d += nr) {                                                  \
          int64_t dx = kx * g->dw;                                                                            \
          if (run && row_in && kx >= kx_lo && kx <= kx_hi) {                                                  \
            const T* s = xc + (iy0[0] + dy) * g->w + ix0[0] + dx;                                             \
            if (nr == 8) /* constant counts: never a memcpy call */                                          \
              for (int j = 0; j < 8; j++) d[j] = s[j];                                                        \
            else                                                                                              \
              for (int j = 0; j < 4; j++) d[j] = s[j];                                                        \
            continue;                                                                                         \
          }                                                                                                   \
          for (int j = 0; j < nr; j++) {                                                                      \
            int64_t iy = iy0[j] + dy, ix = ix0[j] + dx;                                                       \
            d[j] = j < cols && iy >= 0 && iy < g->h && ix >= 0 && ix < g->w ? xc[iy * g->w + ix] : 0;         \
          }                                                                                                   \
        }                                                                                                     \
      }                                                                                                       \
    }                                                                                                         \
  }
DEF_PACK_B_NCHW(float, pack_b_nchw_f32)
DEF_PACK_B_NCHW(double, pack_b_nchw_f64)

static void nchw_tile(const struct gemm_ctx* c, int64_t tile, char* bpack) {
  const weft_conv2d_geom* g = c->g;
  const ukr* u = &c->u;
  const size_t es = u->es;
  int64_t pt = tile % c->ntr, q = tile / c->ntr % g->groups, n = tile / (c->ntr * g->groups);
  int64_t p0 = pt * NS_NCHW, cols = min64(NS_NCHW, c->rows - p0);
  size_t at = (size_t)((n * g->cout + q * c->coutg) * c->rows + p0) * es;
  char* y = c->y + at;
  const char* res = c->epi && c->epi->residual ? (const char*)c->epi->residual + at : NULL;
  for (int64_t co = 0; co < c->coutg; co++)
    start_row(u, (size_t)cols, res ? res + (size_t)(co * c->rows) * es : NULL,
              c->bias ? c->bias + (size_t)(q * c->coutg + co) * es : NULL, false, y + (size_t)(co * c->rows) * es);
  int64_t panels = cdiv(cols, u->nr);
  for (int64_t pc = 0; pc < c->k; pc += c->kcb) {
    int64_t kc = min64(c->kcb, c->k - pc);
    for (int64_t jp = 0; jp < panels; jp++) {
      char* d = bpack + (size_t)(jp * kc * u->nr) * es;
      int64_t nc = min64(u->nr, cols - jp * u->nr);
      if (u->f64)
        pack_b_nchw_f64(c, n, q, p0 + jp * u->nr, nc, pc, kc, (double*)d);
      else
        pack_b_nchw_f32(c, n, q, p0 + jp * u->nr, nc, pc, kc, (float*)d);
    }
    const char* ap = c->wpack + (size_t)(q * c->k * c->rpad + pc * c->rpad) * es;
    for (int64_t jp = 0; jp < panels; jp++) {
      size_t nc = (size_t)min64(u->nr, cols - jp * u->nr);
      const char* bp = bpack + (size_t)(jp * kc * u->nr) * es;
      ukernel(u, (size_t)c->coutg, nc, (size_t)kc, ap, 0, bp, y + (size_t)(jp * u->nr) * es, (size_t)c->rows,
              pc + kc >= c->k ? c->epi : NULL, 1, NULL);
    }
  }
}

static weft_status conv_nchw(const ukr* u, const weft_conv2d_geom* g, const void* x, const void* w, const void* bias,
                             void* y, const fused_extras* fx) {
  struct gemm_ctx c = gemm_ctx_of(u, g, x, bias, y, u->mr, fx);
  c.rows = g->ho * g->wo, c.ntr = cdiv(c.rows, NS_NCHW);
  c.tile = nchw_tile, c.scratch = (size_t)(cdiv(NS_NCHW, u->nr) * u->nr * c.kcb) * u->es;
  return gemm_conv(&c, w, false, u->mr, g->n * g->groups * c.ntr, NS_NCHW * c.coutg * c.k);
}

/* ---- 1x1: one GEMM ---- */

/* NCHW: images [begin, end), per image and group Y[Coutg, HW] = W[Coutg, Cg] X[Cg, HW] */
struct images_ctx {
  const ukr* u;
  weft_dtype dt;
  const weft_conv2d_geom* g;
  const char *x, *w;
  bool acc;
  char* y;
};

static weft_status run_images(void* p, int64_t begin, int64_t end) {
  const struct images_ctx* c = p;
  const weft_conv2d_geom* g = c->g;
  int64_t cg = g->c / g->groups, coutg = g->cout / g->groups, hw = g->h * g->w;
  const size_t es = c->u->es;
  weft_status s = WEFT_OK;
  for (int64_t i = begin; i < end && s == WEFT_OK; i++)
    for (int64_t q = 0; q < g->groups && s == WEFT_OK; q++) {
      weft_gemm_operand a = {c->w + (size_t)(q * coutg * g->ws[0]) * es, g->ws[0], g->ws[1]};
      weft_gemm_operand b = {c->x + (size_t)((i * g->c + q * cg) * hw) * es, hw, 1};
      s = weft__gemm(c->u->kt, c->dt, coutg, hw, cg, 1.0, a, b, c->acc, c->y + (size_t)((i * g->cout + q * coutg) * hw) * es,
                     hw, 1);
    }
  return s;
}

static weft_status conv_1x1(const ukr* u, weft_dtype dt, const weft_conv2d_geom* g, bool nhwc, const char* x,
                            const char* w, const void* bias, char* y) {
  int64_t cg = g->c / g->groups, coutg = g->cout / g->groups, hw = g->h * g->w;
  const size_t es = u->es;
  weft_status s = WEFT_OK;
  if (bias) /* the GEMM accumulates onto the bias */
    s = nhwc ? fill_rows(es, y, g->n * hw, g->cout, bias, 0, 1) : fill_rows(es, y, g->n * g->cout, hw, bias, 1, g->cout);
  if (s != WEFT_OK) return s;
  if (!nhwc) {
    /* enough images for every thread: one image per task (its GEMMs then
     * run inline), else the images in turn, each GEMM parallel inside */
    struct images_ctx c = {u, dt, g, x, w, bias != NULL, y};
    int threads = weft_in_parallel_region() ? 1 : weft_get_num_threads();
    return threads > 1 && g->n >= 2 * threads ? weft_parallel_for(0, g->n, 1, run_images, &c) : run_images(&c, 0, g->n);
  }
  for (int64_t q = 0; q < g->groups && s == WEFT_OK; q++) { /* Y[NHW, Coutg] = X[NHW, Cg] W[Coutg, Cg]^T */
    weft_gemm_operand a = {x + (size_t)(q * cg) * es, g->c, 1};
    weft_gemm_operand b = {w + (size_t)(q * coutg * g->ws[0]) * es, g->ws[1], g->ws[0]};
    s = weft__gemm(u->kt, dt, g->n * hw, coutg, cg, 1.0, a, b, bias != NULL, y + (size_t)(q * coutg) * es, g->cout, 1);
  }
  return s;
}

/* ---- depthwise ---- */

struct dw_ctx {
  const weft_kernels* kt;
  bool f64;
  size_t es;
  const weft_conv2d_geom* g;
  const char* x;
  const char* w; /* NHWC: packed [taps][C]; NCHW: the weight tensor */
  const char* bias;
  char* y;
  const char* zero; /* NHWC: a row of C zeros */
  const weft_conv2d_epilogue* epi; /* NULL: none */
};

/* The epilogue over the n outputs at byte offset `at` of y, just written */
static void dw_epilogue(const struct dw_ctx* c, size_t at, size_t n) {
  const weft_conv2d_epilogue* e = c->epi;
  double lo, hi;
  act_bounds(e->act, &lo, &hi);
  const char* r = e->residual ? (const char*)e->residual + at : NULL;
  if (c->f64) {
    const struct weft_f64_clamp_params p = {lo, hi};
    c->kt->f64_conv_epilogue(n, (const double*)r, (double*)(c->y + at), &p);
  } else {
    const struct weft_f32_clamp_params p = {(float)lo, (float)hi};
    c->kt->f32_conv_epilogue(n, (const float*)r, (float*)(c->y + at), &p);
  }
}

/* The taps' input pixels of output pixels [0, wo) of row oy of image xn:
 * ptr[ox * taps + t], c->zero for a tap in the padding */
static void dw_row_pointers(const struct dw_ctx* c, const char* xn, int64_t oy, int64_t taps, const char** ptr) {
  const weft_conv2d_geom* g = c->g;
  for (int64_t ky = 0; ky < g->kh; ky++) {
    int64_t iy = oy * g->sh - g->ph + ky * g->dh;
    bool row_in = iy >= 0 && iy < g->h;
    const char* xr = xn + (size_t)(iy * g->w * g->c) * c->es;
    for (int64_t kx = 0; kx < g->kw; kx++) {
      const char** pt = ptr + ky * g->kw + kx;
      for (int64_t ox = 0, ix = kx * g->dw - g->pw; ox < g->wo; ox++, ix += g->sw, pt += taps)
        *pt = row_in && ix >= 0 && ix < g->w ? xr + (size_t)(ix * g->c) * c->es : c->zero;
    }
  }
}

/* NHWC, multiplier 1: output rows r = n * Ho + oy; float32 one kernel call
 * per row with the epilogue in its store, float64 one per pixel and the
 * epilogue after */
static weft_status run_dw_nhwc(void* p, int64_t begin, int64_t end) {
  const struct dw_ctx* c = p;
  const weft_conv2d_geom* g = c->g;
  int64_t taps = g->kh * g->kw;
  const char** ptr = malloc(sizeof(char*) * (size_t)(taps * g->wo));
  if (!ptr) return weft__error(WEFT_OUT_OF_MEMORY, "conv2d: out of memory");
  double lo = 0.0, hi = 0.0;
  act_bounds(c->epi ? c->epi->act : WEFT_CONV_ACT_NONE, &lo, &hi);
  const struct weft_f32_clamp_params bounds = {(float)lo, (float)hi};
  for (int64_t r = begin; r < end; r++) {
    int64_t n = r / g->ho, oy = r % g->ho;
    size_t at = (size_t)(r * g->wo * g->c) * c->es;
    dw_row_pointers(c, c->x + (size_t)(n * g->h * g->w * g->c) * c->es, oy, taps, ptr);
    if (!c->f64) {
      const char* res = c->epi && c->epi->residual ? (const char*)c->epi->residual + at : NULL;
      c->kt->f32_dwconv_nhwc_px((size_t)g->wo, (size_t)g->c, (size_t)taps, (const float* const*)ptr,
                                (const float*)c->w, (const float*)c->bias, (const float*)res, (float*)(c->y + at),
                                &bounds);
      continue;
    }
    for (int64_t ox = 0; ox < g->wo; ox++)
      c->kt->f64_dwconv_nhwc((size_t)g->c, (size_t)taps, (const double* const*)(ptr + ox * taps), (const double*)c->w,
                             (const double*)c->bias, (double*)(c->y + at) + ox * g->c);
    if (c->epi) dw_epilogue(c, at, (size_t)(g->wo * g->c));
  }
  free(ptr);
  return WEFT_OK;
}

int64_t weft__conv2d_span(int64_t out, int64_t stride, int64_t k, int64_t dil) {
  return (out - 1) * stride + (k - 1) * dil + 1;
}

void weft__conv2d_pad_plane(const weft_conv2d_geom* g, size_t es, const char* xp, char* pad, int64_t hp, int64_t wp) {
  memset(pad, 0, (size_t)(hp * wp) * es);
  int64_t x0 = g->pw, x1 = min64(wp, g->pw + g->w); /* columns of pad that hold input */
  for (int64_t r = 0; r < hp; r++) {
    int64_t iy = r - g->ph;
    if (iy < 0 || iy >= g->h || x1 <= x0) continue;
    memcpy(pad + (size_t)(r * wp + x0) * es, xp + (size_t)(iy * g->w) * es, (size_t)(x1 - x0) * es);
  }
}

/* NCHW, any multiplier: output planes p = n * Cout + co. Each plane's input
 * channel is first copied with its padding into a scratch plane, so every
 * output row is one vectorized kernel call over all taps. */
static weft_status run_dw_nchw(void* p, int64_t begin, int64_t end) {
  const struct dw_ctx* c = p;
  const weft_conv2d_geom* g = c->g;
  const size_t es = c->es;
  int64_t taps = g->kh * g->kw, mult = g->cout / g->c;
  int64_t hp = weft__conv2d_span(g->ho, g->sh, g->kh, g->dh), wp = weft__conv2d_span(g->wo, g->sw, g->kw, g->dw);
  const char** ptr = malloc(sizeof(char*) * (size_t)taps);
  char* wt = malloc(es * (size_t)taps);
  char* pad = malloc(es * (size_t)(hp * wp));
  if (!ptr || !wt || !pad) {
    free(ptr), free(wt), free(pad);
    return weft__error(WEFT_OUT_OF_MEMORY, "conv2d: out of memory");
  }
  for (int64_t pl = begin; pl < end; pl++) {
    int64_t co = pl % g->cout, n = pl / g->cout;
    weft__conv2d_pad_plane(g, es, c->x + (size_t)((n * g->c + co / mult) * g->h * g->w) * es, pad, hp, wp);
    for (int64_t t = 0; t < taps; t++) {
      const char* w = c->w + (size_t)(co * g->ws[0] + t / g->kw * g->ws[2] + t % g->kw * g->ws[3]) * es;
      if (es == 8)
        ((double*)wt)[t] = *(const double*)w;
      else
        ((float*)wt)[t] = *(const float*)w;
    }
    char* yp = c->y + (size_t)(pl * g->ho * g->wo) * es;
    for (int64_t oy = 0; oy < g->ho; oy++, yp += (size_t)g->wo * es) {
      for (int64_t t = 0; t < taps; t++)
        ptr[t] = pad + (size_t)((oy * g->sh + t / g->kw * g->dh) * wp + t % g->kw * g->dw) * es;
      if (c->f64)
        c->kt->f64_dwconv_row((size_t)g->wo, (size_t)taps, (const double* const*)ptr, (size_t)g->sw,
                              (const double*)wt, c->bias ? ((const double*)c->bias)[co] : 0.0, (double*)yp);
      else
        c->kt->f32_dwconv_row((size_t)g->wo, (size_t)taps, (const float* const*)ptr, (size_t)g->sw,
                              (const float*)wt, c->bias ? ((const float*)c->bias)[co] : 0.0f, (float*)yp);
      if (c->epi) dw_epilogue(c, (size_t)(yp - c->y), (size_t)g->wo);
    }
  }
  free(ptr), free(wt), free(pad);
  return WEFT_OK;
}

static weft_status conv_depthwise(const ukr* u, const weft_conv2d_geom* g, bool nhwc, const char* x, const char* w,
                                  const void* bias, char* y, const weft_conv2d_epilogue* e) {
  struct dw_ctx c = {u->kt, u->f64, u->es, g, x, w, bias, y, NULL, e};
  int64_t taps = g->kh * g->kw, per_row = g->wo * taps * (nhwc ? g->c : 1);
  if (!nhwc) return weft_parallel_for(0, g->n * g->cout, grain_for(per_row * g->ho), run_dw_nchw, &c);
  char* pack = malloc(u->es * (size_t)(taps * g->c) + u->es * (size_t)g->c);
  if (!pack) return weft__error(WEFT_OUT_OF_MEMORY, "conv2d: out of memory");
  char* zero = pack + u->es * (size_t)(taps * g->c);
  memset(zero, 0, u->es * (size_t)g->c);
  for (int64_t t = 0; t < taps; t++) /* [taps][C]: one tap's weights contiguous over channels */
    for (int64_t ch = 0; ch < g->c; ch++)
      memcpy(pack + (size_t)(t * g->c + ch) * u->es,
             w + (size_t)(ch * g->ws[0] + t / g->kw * g->ws[2] + t % g->kw * g->ws[3]) * u->es, u->es);
  c.w = pack, c.zero = zero;
  weft_status s = weft_parallel_for(0, g->n * g->ho, grain_for(per_row), run_dw_nhwc, &c);
  free(pack);
  return s;
}

weft_status weft__conv2d(const weft_kernels* kt, weft_dtype dtype, weft_conv2d_algo a, const weft_conv2d_geom* g,
                         const void* x, const void* w, const void* bias, void* y) {
  if (dtype != WEFT_FLOAT32 && dtype != WEFT_FLOAT64)
    return weft__error(WEFT_INTERNAL, "conv2d: no kernel for dtype %s", weft_dtype_name(dtype));
  if (g->n * g->cout * g->ho * g->wo == 0) return WEFT_OK;
  ukr u = ukr_of(kt, dtype);
  switch (a) {
    case WEFT_CONV_IMPLICIT_GEMM_NHWC: return conv_nhwc(&u, g, x, w, bias, y, NULL);
    case WEFT_CONV_IM2COL_GEMM_NCHW: return conv_nchw(&u, g, x, w, bias, y, NULL);
    case WEFT_CONV_GEMM_1X1_NHWC: return conv_1x1(&u, dtype, g, true, x, w, bias, y);
    case WEFT_CONV_GEMM_1X1_NCHW: return conv_1x1(&u, dtype, g, false, x, w, bias, y);
    case WEFT_CONV_DEPTHWISE_NHWC: return conv_depthwise(&u, g, true, x, w, bias, y, NULL);
    case WEFT_CONV_DEPTHWISE_NCHW: return conv_depthwise(&u, g, false, x, w, bias, y, NULL);
    case WEFT_CONV_WINOGRAD_NHWC: break; /* the fused entry's */
  }
  return weft__error(WEFT_INTERNAL, "conv2d: unknown algorithm");
}

/* ---- the fused entry (conv_fused.h) ---- */

weft_conv2d_algo weft__conv2d_fused_pick(const weft_conv2d_geom* g, bool channels_last, weft_dtype compute) {
  if (weft__conv2d_winograd_fits(g, compute, channels_last)) return WEFT_CONV_WINOGRAD_NHWC;
  return weft__conv2d_pick(g, channels_last);
}

/* The GEMM algorithm's weight panels: their width and K order (false for
 * the depthwise ones, which read the weight as it is) */
static bool packing_of(const ukr* u, weft_conv2d_algo a, int* r, bool* nhwc_order) {
  bool nhwc = a == WEFT_CONV_IMPLICIT_GEMM_NHWC || a == WEFT_CONV_GEMM_1X1_NHWC;
  bool nchw = a == WEFT_CONV_IM2COL_GEMM_NCHW || a == WEFT_CONV_GEMM_1X1_NCHW;
  *r = nhwc ? u->nr : u->mr, *nhwc_order = nhwc;
  return nhwc || nchw;
}

size_t weft__conv2d_packed_bytes(weft_dtype dtype, weft_conv2d_algo a, const weft_conv2d_geom* g) {
  if (a == WEFT_CONV_WINOGRAD_NHWC) return weft__conv2d_winograd_bytes(g);
  int mr, nr, kc;
  weft__gemm_tile(dtype, &mr, &nr, &kc);
  ukr u = {NULL, dtype == WEFT_FLOAT64, dtype == WEFT_FLOAT64 ? 8 : 4, mr, nr};
  int r;
  bool order;
  if (!packing_of(&u, a, &r, &order)) return 0;
  int64_t coutg = g->cout / g->groups, k = g->c / g->groups * g->kh * g->kw;
  return (size_t)(g->groups * cdiv(coutg, r) * r * (k > 0 ? k : 1)) * u.es;
}

weft_status weft__conv2d_pack(weft_dtype dtype, weft_conv2d_algo a, const weft_conv2d_geom* g, const void* w,
                              void* dst) {
  if (a == WEFT_CONV_WINOGRAD_NHWC) {
    weft__conv2d_winograd_pack(g, w, dst);
    return WEFT_OK;
  }
  ukr u = ukr_of(weft__kernels(), dtype);
  int r;
  bool order;
  if (!packing_of(&u, a, &r, &order)) return WEFT_OK;
  ptrdiff_t* koff = weight_koffsets(g, order);
  if (!koff) return weft__error(WEFT_OUT_OF_MEMORY, "conv2d: out of memory");
  if (u.f64)
    pack_w_f64(g, w, koff, r, (double*)dst);
  else
    pack_w_f32(g, w, koff, r, (float*)dst);
  free(koff);
  return WEFT_OK;
}

/* Winograd from its packed weights, transformed here when not given */
static weft_status winograd(const weft_kernels* kt, weft_dtype dtype, const weft_conv2d_geom* g, const void* x,
                            const void* w, const void* wpacked, const void* bias, const weft_conv2d_epilogue* e,
                            void* y) {
  if (dtype != WEFT_FLOAT32) return weft__error(WEFT_INTERNAL, "conv2d: Winograd runs float32 only");
  float* own = NULL;
  if (!wpacked) {
    own = malloc(weft__conv2d_winograd_bytes(g));
    if (!own) return weft__error(WEFT_OUT_OF_MEMORY, "conv2d: out of memory (the transformed weight)");
    weft__conv2d_winograd_pack(g, w, own);
  }
  weft_status s = weft__conv2d_winograd(kt, g, x, own ? own : wpacked, bias, e, y);
  free(own);
  return s;
}

weft_status weft__conv2d_fused(const weft_kernels* kt, weft_dtype dtype, weft_conv2d_algo a,
                               const weft_conv2d_geom* g, const void* x, const void* w, const void* wpacked,
                               const void* bias, const weft_conv2d_epilogue* e, void* y) {
  if (dtype != WEFT_FLOAT32 && dtype != WEFT_FLOAT64)
    return weft__error(WEFT_INTERNAL, "conv2d: no kernel for dtype %s", weft_dtype_name(dtype));
  if (g->n * g->cout * g->ho * g->wo == 0) return WEFT_OK;
  ukr u = ukr_of(kt, dtype);
  bool one = a == WEFT_CONV_GEMM_1X1_NHWC || a == WEFT_CONV_GEMM_1X1_NCHW;
  fused_extras fx = {e, wpacked, one};
  switch (a) {
    case WEFT_CONV_IMPLICIT_GEMM_NHWC:
    case WEFT_CONV_GEMM_1X1_NHWC: return conv_nhwc(&u, g, x, w, bias, y, &fx);
    case WEFT_CONV_IM2COL_GEMM_NCHW:
    case WEFT_CONV_GEMM_1X1_NCHW: return conv_nchw(&u, g, x, w, bias, y, &fx);
    case WEFT_CONV_DEPTHWISE_NHWC: return conv_depthwise(&u, g, true, x, w, bias, y, e);
    case WEFT_CONV_DEPTHWISE_NCHW: return conv_depthwise(&u, g, false, x, w, bias, y, e);
    case WEFT_CONV_WINOGRAD_NHWC: return winograd(kt, dtype, g, x, w, wpacked, bias, e, y);
  }
  return weft__error(WEFT_INTERNAL, "conv2d: unknown algorithm");
}
