/* The conv2d backward drivers: explicit im2col / col2im around the packed
 * GEMM of src/ops/cpu/gemm.c (the forward's implicit GEMM packs its panels
 * straight from the input; here the patch matrix is a GEMM operand on
 * both sides, so it is built once per image (NCHW) or per block of images
 * (NHWC) and read through strides, never transposed).
 *
 *   grad_weight[q] (Coutg x K) = sum over images  gy[q] (Coutg x P) col^T (P x K)
 *   grad_input  col = W[q]^T (K x Coutg) gy[q] (Coutg x P), then col2im
 *
 * with P the output pixels and K = Cg*kh*kw (NCHW order (ci, ky, kx), the
 * weight's contiguous order; NHWC order (ky, kx, ci), the weight's
 * channels_last order). col2im's tasks each own part of the input's
 * gradient (NCHW: a channel plane the task's taps add into; NHWC: a row of
 * pixels, each gathering the patch entries that read it), so they never
 * race and the result is the same for any thread count. The weight's
 * gradient with one input channel per group (NCHW) skips the GEMM: see
 * direct_weight. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "ops/cpu/conv.h"
#include "ops/cpu/gemm.h"
#include "weft/parallel.h"

#define COL_BYTES (4 << 20) /* NHWC: images per block keep the patch matrix under this */
#define TASK_WORK 16384     /* values copied per parallel chunk, at least */

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The patch matrix of one image block: NCHW col[k][p] for image `img`,
 * group q; NHWC col[m][k] for images [img, img + nimg), group q. */
typedef struct {
  const weft_conv2d_geom* g;
  bool nhwc, f64;
  int64_t img, nimg, q, cg, k, p; /* p: output pixels per image */
  const char* x;                  /* im2col: the input */
  char* col;
  char* gx;                       /* col2im: the input's gradient */
} patch;

/* The input row of output row o at tap t (dim: 0 rows, 1 columns); -1 outside. */
static int64_t tap_src(const weft_conv2d_geom* g, int dim, int64_t o, int64_t t) {
  int64_t i = dim == 0 ? o * g->sh - g->ph + t * g->dh : o * g->sw - g->pw + t * g->dw;
  return i >= 0 && i < (dim == 0 ? g->h : g->w) ? i : -1;
}

/* The output index reading input index i at tap t, or -1. */
static int64_t tap_dst(const weft_conv2d_geom* g, int dim, int64_t i, int64_t t) {
  int64_t s = dim == 0 ? g->sh : g->sw, v = i + (dim == 0 ? g->ph - t * g->dh : g->pw - t * g->dw);
  int64_t n = dim == 0 ? g->ho : g->wo;
  return v >= 0 && v % s == 0 && v / s < n ? v / s : -1;
}

#define DEF_IM2COL(T, name)                                                                     \
  static weft_status name(void* ctx, int64_t begin, int64_t end) {                             \
    const patch* c = ctx;                                                                       \
    const weft_conv2d_geom* g = c->g;                                                           \
    const T* x = (const T*)c->x;                                                                \
    T* col = (T*)c->col;                                                                        \
    for (int64_t r = begin; r < end; r++) {                                                     \
      if (!c->nhwc) { /* row r = k = (ci, ky, kx): the tap over every output pixel */           \
        int64_t ci = r / (g->kh * g->kw), ky = r / g->kw % g->kh, kx = r % g->kw;                \
        const T* xp = x + (c->img * g->c + c->q * c->cg + ci) * g->h * g->w;                    \
        T* d = col + r * c->p;                                                                  \
        for (int64_t oh = 0; oh < g->ho; oh++) {                                                \
          int64_t ih = tap_src(g, 0, oh, ky);                                                   \
          for (int64_t ow = 0; ow < g->wo; ow++) {                                              \
            int64_t iw = tap_src(g, 1, ow, kx);                                                 \
            d[oh * g->wo + ow] = ih >= 0 && iw >= 0 ? xp[ih * g->w + iw] : 0;                   \
          }                                                                                     \
        }                                                                                       \
      } else { /* row r = output pixel: its taps, each Cg contiguous channels */                 \
        int64_t n = c->img + r / c->p, oh = r % c->p / g->wo, ow = r % g->wo;                   \
        T* d = col + r * c->k;                                                                  \
        for (int64_t ky = 0; ky < g->kh; ky++) {                                                \
          int64_t ih = tap_src(g, 0, oh, ky);                                                   \
          for (int64_t kx = 0; kx < g->kw; kx++, d += c->cg) {                                  \
            int64_t iw = tap_src(g, 1, ow, kx);                                                 \
            if (ih < 0 || iw < 0) {                                                             \
              memset(d, 0, sizeof(T) * (size_t)c->cg);                                          \
              continue;                                                                         \
            }                                                                                   \
            memcpy(d, x + ((n * g->h + ih) * g->w + iw) * g->c + c->q * c->cg, sizeof(T) * (size_t)c->cg); \
          }                                                                                     \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
    return WEFT_OK;                                                                             \
  }
DEF_IM2COL(float, im2col_f32)
DEF_IM2COL(double, im2col_f64)

/* Output columns [*lo, *hi) whose tap kx reads inside the input row. */
static void valid_cols(const weft_conv2d_geom* g, int64_t kx, int64_t* lo, int64_t* hi) {
  int64_t off = kx * g->dw - g->pw; /* iw = ow * sw + off */
  *lo = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;
  *hi = g->w - off <= 0 ? 0 : (g->w - off + g->sw - 1) / g->sw;
  if (*hi > g->wo) *hi = g->wo;
  if (*lo > *hi) *lo = *hi;
}

/* col2im. NCHW: task = one input plane (ci), zeroed, then every tap's patch
 * row added into it (a run of output columns per output row: unit stride in
 * both at stride 1); the plane is the task's alone. NHWC: task = (image,
 * input row), a gather: each input pixel sums the patch entries that read it. */
#define DEF_COL2IM(T, name)                                                                     \
  static weft_status name(void* ctx, int64_t begin, int64_t end) {                             \
    const patch* c = ctx;                                                                       \
    const weft_conv2d_geom* g = c->g;                                                           \
    const T* col = (const T*)c->col;                                                            \
    T* gx = (T*)c->gx;                                                                          \
    for (int64_t r = begin; r < end; r++) {                                                     \
      if (!c->nhwc) {                                                                           \
        T* plane = gx + (c->img * g->c + c->q * c->cg + r) * g->h * g->w;                       \
        memset(plane, 0, sizeof(T) * (size_t)(g->h * g->w));                                    \
        for (int64_t ky = 0; ky < g->kh; ky++)                                                  \
          for (int64_t kx = 0; kx < g->kw; kx++) {                                              \
            int64_t lo, hi, sw = g->sw, off = kx * g->dw - g->pw;                               \
            valid_cols(g, kx, &lo, &hi);                                                        \
            const T* row = col + ((r * g->kh + ky) * g->kw + kx) * c->p;                        \
            for (int64_t oh = 0; oh < g->ho; oh++) {                                            \
              int64_t ih = tap_src(g, 0, oh, ky);                                               \
              if (ih < 0) continue;                                                             \
              T* d = plane + ih * g->w;                                                         \
              const T* s = row + oh * g->wo;                                                    \
              if (sw == 1)                                                                      \
                for (int64_t ow = lo; ow < hi; ow++) d[ow + off] += s[ow];                      \
              else                                                                              \
                for (int64_t ow = lo; ow < hi; ow++) d[ow * sw + off] += s[ow];                 \
            }                                                                                   \
          }                                                                                     \
        continue;                                                                               \
      }                                                                                         \
      int64_t ih = r % g->h, n = r / g->h; /* n: relative to the block */                       \
      for (int64_t iw = 0; iw < g->w; iw++) {                                                   \
        T* d = gx + (((c->img + n) * g->h + ih) * g->w + iw) * g->c + c->q * c->cg;             \
        for (int64_t ci = 0; ci < c->cg; ci++) d[ci] = 0;                                       \
        for (int64_t ky = 0; ky < g->kh; ky++) {                                                \
          int64_t oh = tap_dst(g, 0, ih, ky);                                                   \
          if (oh < 0) continue;                                                                 \
          for (int64_t kx = 0; kx < g->kw; kx++) {                                              \
            int64_t ow = tap_dst(g, 1, iw, kx);                                                 \
            if (ow < 0) continue;                                                               \
            const T* s = col + (n * c->p + oh * g->wo + ow) * c->k + (ky * g->kw + kx) * c->cg; \
            for (int64_t ci = 0; ci < c->cg; ci++) d[ci] += s[ci];                              \
          }                                                                                     \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
    return WEFT_OK;                                                                             \
  }
DEF_COL2IM(float, col2im_f32)
DEF_COL2IM(double, col2im_f64)

static weft_status im2col(patch* c) {
  int64_t rows = c->nhwc ? c->nimg * c->p : c->k, len = c->nhwc ? c->k : c->p;
  return weft_parallel_for(0, rows, max64(TASK_WORK / max64(len, 1), 1), c->f64 ? im2col_f64 : im2col_f32, c);
}

static weft_status col2im(patch* c) {
  int64_t rows = c->nhwc ? c->nimg * c->g->h : c->cg;
  int64_t len = c->g->w * c->g->kh * c->g->kw * (c->nhwc ? c->cg : c->g->h);
  return weft_parallel_for(0, rows, max64(TASK_WORK / max64(len, 1), 1), c->f64 ? col2im_f64 : col2im_f32, c);
}

/* One driver run: the patch matrix buffer and the image blocks. */
typedef struct {
  const weft_kernels* kt;
  weft_dtype dtype;
  size_t es;
  patch pc;
  int64_t block; /* images per patch matrix */
} run_ctx;

static weft_status run_init(run_ctx* r, const weft_kernels* kt, weft_dtype dtype, bool nhwc,
                            const weft_conv2d_geom* g) {
  memset(r, 0, sizeof *r);
  r->kt = kt;
  r->dtype = dtype;
  r->es = dtype == WEFT_FLOAT64 ? 8 : 4;
  patch* c = &r->pc;
  c->g = g;
  c->nhwc = nhwc;
  c->f64 = dtype == WEFT_FLOAT64;
  c->cg = g->c / g->groups;
  c->k = c->cg * g->kh * g->kw;
  c->p = g->ho * g->wo;
  size_t per_image = (size_t)(c->k * c->p) * r->es;
  r->block = nhwc ? max64((int64_t)(COL_BYTES / (per_image ? per_image : 1)), 1) : 1;
  if (r->block > g->n) r->block = max64(g->n, 1);
  size_t bytes = per_image * (size_t)r->block;
  c->col = malloc(bytes ? bytes : 1);
  if (!c->col) return weft__error(WEFT_OUT_OF_MEMORY, "conv2d backward: out of memory (%zu bytes of patches)", bytes);
  return WEFT_OK;
}

static bool empty(const weft_conv2d_geom* g) { return g->n == 0 || g->c == 0 || g->cout == 0 || g->ho * g->wo == 0; }

/* The GEMM (and col2im) of one image block and group; gy points at the
 * block's first output value of the group. */
typedef weft_status (*group_step)(run_ctx* r, const char* gy, const void* other, void* out);

/* grad_weight[q] (+)= gy[q] col^T */
static weft_status weight_step(run_ctx* r, const char* gy, const void* x, void* gw) {
  patch* c = &r->pc;
  const weft_conv2d_geom* g = c->g;
  int64_t coutg = g->cout / g->groups;
  c->x = x;
  weft_status s = im2col(c);
  if (s) return s;
  char* dst = (char*)gw + (size_t)(c->q * coutg * c->k) * r->es;
  /* NHWC: gy's rows are pixels (Coutg x M read transposed), col M x K; NCHW: gy Coutg x P, col K x P transposed */
  weft_gemm_operand a = c->nhwc ? (weft_gemm_operand){gy, 1, g->cout} : (weft_gemm_operand){gy, c->p, 1};
  weft_gemm_operand b = c->nhwc ? (weft_gemm_operand){c->col, c->k, 1} : (weft_gemm_operand){c->col, 1, c->p};
  return weft__gemm(r->kt, r->dtype, coutg, c->k, c->nimg * c->p, 1.0, a, b, c->img > 0, dst, c->k, 1);
}

/* col = gy[q] W[q] (NHWC: M x K) or W[q]^T gy[q] (NCHW: K x P), then col2im into gx */
static weft_status input_step(run_ctx* r, const char* gy, const void* w, void* gx) {
  patch* c = &r->pc;
  const weft_conv2d_geom* g = c->g;
  int64_t coutg = g->cout / g->groups;
  const char* wq = (const char*)w + (size_t)(c->q * coutg * c->k) * r->es;
  weft_status s;
  if (c->nhwc)
    s = weft__gemm(r->kt, r->dtype, c->nimg * c->p, c->k, coutg, 1.0, (weft_gemm_operand){gy, g->cout, 1},
                   (weft_gemm_operand){wq, c->k, 1}, false, c->col, c->k, 1);
  else
    s = weft__gemm(r->kt, r->dtype, c->k, c->p, coutg, 1.0, (weft_gemm_operand){wq, 1, c->k},
                   (weft_gemm_operand){gy, c->p, 1}, false, c->col, c->p, 1);
  c->gx = gx;
  return s ? s : col2im(c);
}

/* Runs step over every image block and group (out zeroed when there is no product). */
static weft_status each_group(const weft_kernels* kt, weft_dtype dtype, bool nhwc, const weft_conv2d_geom* g,
                              group_step step, const void* gy, const void* other, void* out, int64_t out_numel) {
  if (empty(g)) {
    memset(out, 0, (size_t)out_numel * (dtype == WEFT_FLOAT64 ? 8 : 4));
    return WEFT_OK;
  }
  run_ctx r;
  weft_status s = run_init(&r, kt, dtype, nhwc, g);
  patch* c = &r.pc;
  int64_t coutg = g->cout / g->groups;
  for (int64_t n0 = 0; s == WEFT_OK && n0 < g->n; n0 += r.block) {
    c->img = n0;
    c->nimg = r.block < g->n - n0 ? r.block : g->n - n0;
    for (int64_t q = 0; s == WEFT_OK && q < g->groups; q++) {
      c->q = q;
      size_t first = (size_t)(nhwc ? n0 * c->p * g->cout + q * coutg : (n0 * g->cout + q * coutg) * c->p);
      s = step(&r, (const char*)gy + first * r.es, other, out);
    }
  }
  free(c->col);
  return s;
}

/* ---- the weight's gradient with one input channel per group, NCHW ----
 * (a first layer over gray images, depthwise): K = kh * kw is too short a
 * GEMM depth to pay for the patch matrix and the packing, so each
 * (image, output channel) plane is one dwconv_wgrad call:
 *   gw[o][t] += sum over pixels p of gy[n][o][p] * x[n][o's channel][tap t of p]
 * With padding, the planes of a block of images are first copied with
 * their zeros (PAD_BYTES at most). A task owns output channels and adds
 * the images in order, so the sums are the same for any thread count. */
#define PAD_BYTES (1 << 20)

typedef struct {
  const weft_kernels* kt;
  const weft_conv2d_geom* g;
  size_t es;
  const char *x, *gy;
  char* gw;
  char* pad;         /* the block's padded planes, or NULL: x read as it is */
  int64_t img, nimg; /* the block of images */
  int64_t hp, wp;    /* a plane as read: padded, or the input's */
} wgrad_ctx;

static weft_status pad_planes(void* ctx, int64_t begin, int64_t end) {
  const wgrad_ctx* c = ctx;
  const weft_conv2d_geom* g = c->g;
  for (int64_t pl = begin; pl < end; pl++) /* plane pl of the block: image img + pl / C */
    weft__conv2d_pad_plane(g, c->es, c->x + (size_t)((c->img * g->c + pl) * g->h * g->w) * c->es,
                           c->pad + (size_t)(pl * c->hp * c->wp) * c->es, c->hp, c->wp);
  return WEFT_OK;
}

static weft_status wgrad_channels(void* ctx, int64_t begin, int64_t end) {
  const wgrad_ctx* c = ctx;
  const weft_conv2d_geom* g = c->g;
  const size_t es = c->es;
  const int64_t taps = g->kh * g->kw, coutg = g->cout / g->groups, plane = c->hp * c->wp, p = g->ho * g->wo;
  const char** ptr = malloc((sizeof(char*) + sizeof(size_t)) * (size_t)taps);
  if (!ptr) return weft__error(WEFT_OUT_OF_MEMORY, "conv2d backward: out of memory");
  size_t* off = (size_t*)(ptr + taps); /* tap t's first value in a plane, bytes */
  for (int64_t t = 0; t < taps; t++) off[t] = (size_t)(t / g->kw * g->dh * c->wp + t % g->kw * g->dw) * es;
  for (int64_t o = begin; o < end; o++) {
    char* acc = c->gw + (size_t)(o * taps) * es;
    if (c->img == 0) memset(acc, 0, (size_t)taps * es);
    for (int64_t n = c->img; n < c->img + c->nimg; n++) {
      int64_t ch = o / coutg; /* the group's one input channel */
      const char* xp = c->pad ? c->pad + (size_t)(((n - c->img) * g->c + ch) * plane) * es
                              : c->x + (size_t)((n * g->c + ch) * plane) * es;
      for (int64_t t = 0; t < taps; t++) ptr[t] = xp + off[t];
      const char* gyp = c->gy + (size_t)((n * g->cout + o) * p) * es;
      if (es == 8)
        c->kt->f64_dwconv_wgrad((size_t)g->ho, (size_t)g->wo, (size_t)taps, (const double* const*)ptr,
                                (size_t)(g->sh * c->wp), (size_t)g->sw, (const double*)gyp, (double*)acc);
      else
        c->kt->f32_dwconv_wgrad((size_t)g->ho, (size_t)g->wo, (size_t)taps, (const float* const*)ptr,
                                (size_t)(g->sh * c->wp), (size_t)g->sw, (const float*)gyp, (float*)acc);
    }
  }
  free(ptr);
  return WEFT_OK;
}

static weft_status direct_weight(const weft_kernels* kt, weft_dtype dtype, const weft_conv2d_geom* g, const void* gy,
                                 const void* x, void* gw) {
  wgrad_ctx c = {kt, g, dtype == WEFT_FLOAT64 ? 8 : 4, x, gy, gw, NULL, 0, 0, g->h, g->w};
  bool padded = g->ph > 0 || g->pw > 0;
  int64_t block = g->n;
  if (padded) {
    c.hp = weft__conv2d_span(g->ho, g->sh, g->kh, g->dh), c.wp = weft__conv2d_span(g->wo, g->sw, g->kw, g->dw);
    size_t per_image = (size_t)(g->c * c.hp * c.wp) * c.es;
    block = max64((int64_t)(PAD_BYTES / per_image), 1);
    if (block > g->n) block = g->n;
    c.pad = malloc(per_image * (size_t)block);
    if (!c.pad) return weft__error(WEFT_OUT_OF_MEMORY, "conv2d backward: out of memory (%zu bytes of planes)",
                                   per_image * (size_t)block);
  }
  int64_t per_channel = block * g->kh * g->kw * g->ho * g->wo; /* multiply-adds of a task's channel */
  weft_status s = WEFT_OK;
  for (int64_t n0 = 0; s == WEFT_OK && n0 < g->n; n0 += block) {
    c.img = n0, c.nimg = block < g->n - n0 ? block : g->n - n0;
    if (padded) s = weft_parallel_for(0, c.nimg * g->c, max64(TASK_WORK / max64(c.hp * c.wp, 1), 1), pad_planes, &c);
    if (s == WEFT_OK) s = weft_parallel_for(0, g->cout, max64(TASK_WORK / max64(per_channel, 1), 1), wgrad_channels, &c);
  }
  free(c.pad);
  return s;
}

weft_status weft__conv2d_backward_weight(const weft_kernels* kt, weft_dtype dtype, bool nhwc,
                                         const weft_conv2d_geom* g, const void* gy, const void* x, void* gw) {
  if (!nhwc && g->c == g->groups && !empty(g)) return direct_weight(kt, dtype, g, gy, x, gw);
  return each_group(kt, dtype, nhwc, g, weight_step, gy, x, gw, g->cout * (g->c / g->groups) * g->kh * g->kw);
}

weft_status weft__conv2d_backward_input(const weft_kernels* kt, weft_dtype dtype, bool nhwc,
                                        const weft_conv2d_geom* g, const void* gy, const void* w, void* gx) {
  return each_group(kt, dtype, nhwc, g, input_step, gy, w, gx, g->n * g->c * g->h * g->w);
}
