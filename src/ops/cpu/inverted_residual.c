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
 * halo rows).
 *
 * Small maps on several threads (MobileNetV2's 14x14 and 7x7 blocks) run
 * staged instead: there a range's halo rows were 15-30% more expansion and
 * the 7 rows of a 7x7 map split 3 / 4, while the block's weights (up to
 * 2 x 160 x 960 floats, past L2) outweigh its activations and every thread
 * streamed all of them. So: the expansion of the whole map into a buffer,
 * threads splitting its channels (NR panels); the depthwise rows into a
 * second one, threads splitting the rows; the projection, threads splitting
 * its channels again. Two more barriers, no work done twice, each thread
 * reads its share of the weights. The same kernels with the same K blocks:
 * the sums are the row-band path's bit for bit. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "ops/cpu/conv_fused.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/inverted_residual.h"
#include "weft/parallel.h"

#define BAND_PIXELS 64 /* output pixels per band at least (the GEMM's MC) */
/* the staged path's whole expanded map at most (floats): resnet's 14x14 and
 * 7x7 blocks (113K and 47K), not the 28x28 ones (150K), whose row ranges
 * share few halo rows */
#define STAGED_FLOATS (128 * 1024)

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

int64_t weft__ir_band_rows(const weft_ir_geom* g) {
  int64_t r = (BAND_PIXELS + g->wo - 1) / (g->wo > 0 ? g->wo : 1);
  return max64(1, min64(r, g->ho));
}

static int threads_here(void) { return weft_in_parallel_region() ? 1 : weft_get_num_threads(); }

static int64_t chunks_per_image(const weft_ir_geom* g) {
  int threads = threads_here();
  int64_t c = g->n >= threads ? 1 : (threads + g->n - 1) / g->n;
  return max64(1, min64(c, g->ho));
}

bool weft__ir_staged(const weft_ir_geom* g) {
  return chunks_per_image(g) > 1 && g->h * g->w * g->ch <= STAGED_FLOATS;
}

int64_t weft__ir_tasks(const weft_ir_geom* g) {
  return weft__ir_staged(g) ? threads_here() : g->n * chunks_per_image(g);
}

struct ir_ctx {
  const weft_kernels* kt;
  const weft_ir_geom* g;
  int64_t chunks, band;
  const float *x, *we, *be, *wd, *bd, *wp, *bp; /* wd packed [taps][ch] */
  float* y;
  float *e, *d; /* the staged path's whole maps: expanded [n*h*w, ch], depthwise [n*ho*wo, ch] */
  int64_t tasks;
  bool projecting; /* the staged path's second 1x1 */
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

/* ---- the staged path (small maps, several threads) ---- */

/* channels [j0, j1) of `total` for task t of c->tasks, cut at NR panels */
static void channel_share(const struct ir_ctx* c, int64_t total, int64_t t, int64_t* j0, int64_t* j1) {
  int mr, nr, kc;
  weft__gemm_tile(WEFT_FLOAT32, &mr, &nr, &kc);
  int64_t panels = (total + nr - 1) / nr;
  *j0 = min64(total, panels * t / c->tasks * nr);
  *j1 = min64(total, panels * (t + 1) / c->tasks * nr);
}

/* task t's channels of the expansion (into e) or, once c->projecting, of
 * the projection (from d into y, the skip added) */
static weft_status staged_1x1(void* p, int64_t begin, int64_t end) {
  const struct ir_ctx* c = p;
  const weft_ir_geom* g = c->g;
  const bool pr = c->projecting;
  const int64_t k = pr ? g->ch : g->cin, n = pr ? g->cout : g->ch, m = pr ? g->n * g->ho * g->wo : g->n * g->h * g->w;
  for (int64_t t = begin, j0, j1; t < end; t++) {
    channel_share(c, n, t, &j0, &j1);
    if (j0 < j1)
      weft__conv2d_1x1_cols_f32(c->kt, k, n, j0, j1, m, pr ? c->d : c->x, (size_t)k, pr ? c->wp : c->we,
                                pr ? c->bp : c->be, pr && g->residual ? c->x : NULL, (size_t)g->cin,
                                pr ? WEFT_CONV_ACT_NONE : WEFT_CONV_ACT_RELU6, pr ? c->y : c->e, (size_t)n);
  }
  return WEFT_OK;
}

/* output rows r = n * ho + oy in [begin, end), from e (or x) as one ring
 * holding the whole map */
static weft_status staged_depthwise(void* p, int64_t begin, int64_t end) {
  const struct ir_ctx* c = p;
  const weft_ir_geom* g = c->g;
  size_t ptrs = sizeof(float*) * (size_t)(g->kh * g->kw * g->wo);
  char* buf = malloc(ptrs + sizeof(float) * (size_t)g->ch);
  if (!buf) return weft__error(WEFT_OUT_OF_MEMORY, "_inverted_residual: out of memory (the block's row buffers)");
  struct ir_scratch s = {.ptr = (const float**)buf, .zero = (float*)(buf + ptrs), .cap = g->h};
  memset(s.zero, 0, sizeof(float) * (size_t)g->ch);
  for (int64_t r = begin; r < end; r++) {
    int64_t n = r / g->ho;
    const float* xn = c->x + n * g->h * g->w * g->cin;
    s.ring = c->e ? c->e + n * g->h * g->w * g->ch : NULL;
    dw_row(c, &s, xn, r % g->ho, c->d + r * g->wo * g->ch);
  }
  free(buf);
  return WEFT_OK;
}

static weft_status run_staged(struct ir_ctx* c) {
  const weft_ir_geom* g = c->g;
  size_t e = g->expand ? (size_t)(g->n * g->h * g->w * g->ch) : 0, d = (size_t)(g->n * g->ho * g->wo * g->ch);
  float* buf = malloc(sizeof(float) * (e + d));
  if (!buf) return weft__error(WEFT_OUT_OF_MEMORY, "_inverted_residual: out of memory (the block's maps)");
  c->e = g->expand ? buf : NULL, c->d = buf + e;
  weft_status s = g->expand ? weft_parallel_for(0, c->tasks, 1, staged_1x1, c) : WEFT_OK;
  if (s == WEFT_OK) s = weft_parallel_for(0, g->n * g->ho, 1, staged_depthwise, c);
  c->projecting = true;
  if (s == WEFT_OK) s = weft_parallel_for(0, c->tasks, 1, staged_1x1, c);
  free(buf);
  return s;
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
  struct ir_ctx c = {kt, g, chunks_per_image(g), weft__ir_band_rows(g), x, we, be, wdp, bd, wp, bp, y, NULL, NULL,
                     weft__ir_tasks(g), false};
  weft_status s = weft__ir_staged(g) ? run_staged(&c) : weft_parallel_for(0, g->n * c.chunks, 1, run_tasks, &c);
  free(wdp);
  return s;
}
