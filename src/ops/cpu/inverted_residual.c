/* MobileNetV2's inverted residual block as one pass over row bands (NHWC,
 * float32, inference):
 *
 *   e = relu6(x We^T + be)        1x1 expansion to ch = t * cin channels
 *   d = relu6(dwconv(e, Wd) + bd) kh x kw depthwise, stride s
 *   y = d Wp^T + bp (+ x)         1x1 projection, the skip when s = 1
 *
 * Run as three convolutions, e and d (6x the block's input and output)
 * are written to memory and read back. Here a task walks down its output
 * rows in bands of R rows: the input rows a band's taps read are expanded
 * into a ring of (R - 1) * s + kh rows (each row once per task: the rows
 * the next band shares stay in the ring), the band's depthwise rows go to a
 * band buffer, and the projection reads them from there into y. Both
 * buffers are per thread and sized to stay in cache. The pieces are the
 * unfused path's (weft__conv2d_1x1_rows_f32, the f32_dwconv_nhwc_px kernel),
 * with the same K blocks and orders, so y equals the unfused result bit for
 * bit. Tasks are row ranges of one image; threads split an image's rows
 * when there are fewer images than threads (each range expands its own
 * halo rows). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "ops/cpu/conv_fused.h"
#include "ops/cpu/inverted_residual.h"
#include "weft/parallel.h"

#define BAND_PIXELS 64 /* output pixels per band at least (the GEMM's MC) */

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

int64_t weft__ir_band_rows(const weft_ir_geom* g) {
  int64_t r = (BAND_PIXELS + g->wo - 1) / (g->wo > 0 ? g->wo : 1);
  return max64(1, min64(r, g->ho));
}

static int64_t chunks_per_image(const weft_ir_geom* g) {
  int threads = weft_in_parallel_region() ? 1 : weft_get_num_threads();
  int64_t c = g->n >= threads ? 1 : (threads + g->n - 1) / g->n;
  return max64(1, min64(c, g->ho));
}

int64_t weft__ir_tasks(const weft_ir_geom* g) { return g->n * chunks_per_image(g); }

struct ir_ctx {
  const weft_kernels* kt;
  const weft_ir_geom* g;
  int64_t chunks, band;
  const float *x, *we, *be, *wd, *bd, *wp, *bp; /* wd packed [taps][ch] */
  float* y;
};

/* per-task scratch: the expanded rows' ring, the band's depthwise rows,
 * the taps' pointers of one output row, a row of zeros for the padding */
struct ir_scratch {
  float *ring, *band, *zero;
  const float** ptr;
  int64_t cap; /* rows in the ring */
};

/* The expanded input rows (lo..hi] of image xn into the ring (row iy at
 * slot iy % cap), in runs that do not wrap: one GEMM call per run. */
static void expand_rows(const struct ir_ctx* c, const struct ir_scratch* s, const float* xn, int64_t from,
                        int64_t to) {
  const weft_ir_geom* g = c->g;
  for (int64_t iy = from; iy <= to;) {
    int64_t slot = iy % s->cap, rows = min64(to - iy + 1, s->cap - slot);
    weft__conv2d_1x1_rows_f32(c->kt, g->cin, g->ch, rows * g->w, xn + iy * g->w * g->cin, (size_t)g->cin, c->we,
                              c->be, NULL, 0, WEFT_CONV_ACT_RELU6, s->ring + slot * g->w * g->ch, (size_t)g->ch);
    iy += rows;
  }
}

/* The depthwise output row oy into d, its taps read from the ring (or from
 * x itself without an expansion) */
static void dw_row(const struct ir_ctx* c, const struct ir_scratch* s, const float* xn, int64_t oy, float* d) {
  const weft_ir_geom* g = c->g;
  const int64_t taps = g->kh * g->kw, ph = (g->kh - 1) / 2, pw = (g->kw - 1) / 2;
  for (int64_t ky = 0; ky < g->kh; ky++) {
    int64_t iy = oy * g->stride - ph + ky;
    bool row_in = iy >= 0 && iy < g->h;
    const float* row = !row_in ? NULL : g->expand ? s->ring + iy % s->cap * g->w * g->ch : xn + iy * g->w * g->ch;
    for (int64_t kx = 0; kx < g->kw; kx++) {
      const float** pt = s->ptr + ky * g->kw + kx;
      for (int64_t ox = 0, ix = kx - pw; ox < g->wo; ox++, ix += g->stride, pt += taps)
        *pt = row_in && ix >= 0 && ix < g->w ? row + ix * g->ch : s->zero;
    }
  }
  const struct weft_f32_clamp_params relu6 = {0.0f, 6.0f};
  c->kt->f32_dwconv_nhwc_px((size_t)g->wo, (size_t)g->ch, (size_t)taps, s->ptr, c->wd, c->bd, NULL, d, &relu6);
}

/* Output rows [o0, o1) of image n, band by band */
static void run_rows(const struct ir_ctx* c, const struct ir_scratch* s, int64_t n, int64_t o0, int64_t o1) {
  const weft_ir_geom* g = c->g;
  const float* xn = c->x + n * g->h * g->w * g->cin;
  const int64_t ph = (g->kh - 1) / 2;
  int64_t done = -1; /* the last input row in the ring */
  for (int64_t oa = o0; oa < o1; oa += c->band) {
    int64_t ob = min64(oa + c->band, o1);
    int64_t lo = max64(0, oa * g->stride - ph), hi = min64(g->h - 1, (ob - 1) * g->stride - ph + g->kh - 1);
    if (g->expand && hi > done) {
      expand_rows(c, s, xn, max64(lo, done + 1), hi);
      done = hi;
    }
    for (int64_t oy = oa; oy < ob; oy++) dw_row(c, s, xn, oy, s->band + (oy - oa) * g->wo * g->ch);
    const float* res = g->residual ? xn + oa * g->w * g->cin : NULL;
    weft__conv2d_1x1_rows_f32(c->kt, g->ch, g->cout, (ob - oa) * g->wo, s->band, (size_t)g->ch, c->wp, c->bp, res,
                              (size_t)g->cin, WEFT_CONV_ACT_NONE, c->y + (n * g->ho + oa) * g->wo * g->cout,
                              (size_t)g->cout);
  }
}

static weft_status run_tasks(void* p, int64_t begin, int64_t end) {
  const struct ir_ctx* c = p;
  const weft_ir_geom* g = c->g;
  struct ir_scratch s = {.cap = g->expand ? (c->band - 1) * g->stride + g->kh : 0};
  size_t ring = (size_t)(s.cap * g->w * g->ch), band = (size_t)(c->band * g->wo * g->ch);
  size_t ptrs = sizeof(float*) * (size_t)(g->kh * g->kw * g->wo);
  char* buf = malloc(ptrs + sizeof(float) * (ring + band + (size_t)g->ch)); /* the pointers first: aligned */
  if (!buf) return weft__error(WEFT_OUT_OF_MEMORY, "_inverted_residual: out of memory (the block's row buffers)");
  s.ptr = (const float**)buf;
  s.ring = (float*)(buf + ptrs), s.band = s.ring + ring, s.zero = s.band + band;
  memset(s.zero, 0, sizeof(float) * (size_t)g->ch);
  for (int64_t t = begin; t < end; t++) {
    int64_t n = t / c->chunks, k = t % c->chunks;
    run_rows(c, &s, n, k * g->ho / c->chunks, (k + 1) * g->ho / c->chunks);
  }
  free(buf);
  return WEFT_OK;
}

weft_status weft__inverted_residual_f32(const weft_kernels* kt, const weft_ir_geom* g, const float* x,
                                        const float* we, const float* be, const float* wd, const float* bd,
                                        const float* wp, const float* bp, float* y) {
  if (g->n * g->ho * g->wo * g->cout == 0) return WEFT_OK;
  const int64_t taps = g->kh * g->kw;
  float* wdp = malloc(sizeof(float) * (size_t)(taps * g->ch));
  if (!wdp) return weft__error(WEFT_OUT_OF_MEMORY, "_inverted_residual: out of memory");
  for (int64_t t = 0; t < taps; t++) /* [taps][ch]: a tap's weights contiguous over the channels */
    for (int64_t j = 0; j < g->ch; j++) wdp[t * g->ch + j] = wd[j * g->dws[0] + t / g->kw * g->dws[2] + t % g->kw * g->dws[3]];
  struct ir_ctx c = {kt, g, chunks_per_image(g), weft__ir_band_rows(g), x, we, be, wdp, bd, wp, bp, y};
  weft_status s = weft_parallel_for(0, g->n * c.chunks, 1, run_tasks, &c);
  free(wdp);
  return s;
}
