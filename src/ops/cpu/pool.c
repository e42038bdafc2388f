/* The 2-D pooling driver: PyTorch's windows (max: dilated, clipped by
 * stepping the start into the input; avg: clipped, with the padded size
 * kept for count_include_pad; adaptive: floor/ceil of the scaled index),
 * cut per output row into border outputs (clipped windows, one kernel call
 * each) and the interior run, where every window has the full shape and
 * one kernel call covers them all:
 *
 *   NCHW  task = (plane, output row); the interior run goes to the stride-1
 *         or stride-2 kernel (vectorized along the output width) or the
 *         general one.
 *   NHWC  task = (image, output row); each output's C channels are
 *         contiguous, so the kernel vectorizes across them.
 *
 * Max with indices: NCHW rows go to f32_maxpool_cw_idx (the clipped border
 * windows one call each, the interior run one call), NHWC to
 * f32_maxpool_c_idx. Tasks are spread over the pool with weft_parallel_for.
 * float64, int64 (avg) and max with indices over a plane of 2^31 elements
 * or more take the plain reference loop, parallel over planes. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/error.h"
#include "ops/cpu/pool.h"
#include "weft/parallel.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define TASK_WORK 16384 /* window reads per parallel chunk, at least */

/* One dim of one output's window: first input index, number of elements
 * read (step: the dilation), and avg's padded size. */
typedef struct {
  int64_t start, count, pool;
} win;

static win window(const weft_pool2d* g, bool rows, int64_t o) {
  const int64_t in = rows ? g->h : g->w, out = rows ? g->oh : g->ow;
  const int64_t k = rows ? g->kh : g->kw, s = rows ? g->sh : g->sw, p = rows ? g->ph : g->pw;
  const int64_t d = rows ? g->dh : g->dw;
  win r;
  if (g->kind == WEFT_POOL_ADAPTIVE_AVG) { /* PyTorch's start_index / end_index, overflow-free */
    r.start = (o / out) * in + ((o % out) * in) / out;
    int64_t end = 1 + ((o + 1) * in - 1) / out;
    r.count = r.pool = end - r.start;
    return r;
  }
  r.start = o * s - p;
  if (g->kind == WEFT_POOL_MAX) {
    int64_t end = MIN(r.start + (k - 1) * d + 1, in);
    while (r.start < 0) r.start += d;
    r.count = r.start < end ? (end - r.start + d - 1) / d : 0;
    r.pool = r.count;
    return r;
  }
  int64_t end = MIN(r.start + k, in + p);
  r.pool = end - r.start;
  r.start = MAX(r.start, 0);
  end = MIN(end, in);
  r.count = end > r.start ? end - r.start : 0;
  return r;
}

static int64_t divisor(const weft_pool2d* g, win r, win c) {
  if (g->kind == WEFT_POOL_AVG && g->divisor_override) return g->divisor_override;
  if (g->kind == WEFT_POOL_AVG && g->count_include_pad) return r.pool * c.pool;
  return r.count * c.count;
}

/* Outputs [*a, *b) of a row whose column windows are whole (no clipping). */
static void interior(const weft_pool2d* g, int64_t* a, int64_t* b) {
  if (g->kind == WEFT_POOL_ADAPTIVE_AVG) {
    *a = *b = 0;
    return;
  }
  int64_t eff = (g->kw - 1) * g->dw + 1, room = g->w + g->pw - eff;
  *a = (g->pw + g->sw - 1) / g->sw;
  *b = room < 0 ? 0 : MIN(room / g->sw + 1, g->ow);
  if (*a > *b) *a = *b;
}

/* ---- the plain loop ---- */

#define REF_STRIDES                                                                              \
  const int64_t H = g->h, W = g->w, C = g->c, OH = g->oh, OW = g->ow;                            \
  const int64_t xn = C * H * W, xc = g->channels_last ? 1 : H * W, xh = g->channels_last ? W * C : W; \
  const int64_t xw = g->channels_last ? C : 1;                                                   \
  const int64_t yn = C * OH * OW, yc = g->channels_last ? 1 : OH * OW;                           \
  const int64_t yh = g->channels_last ? OW * C : OW, yw = g->channels_last ? C : 1;

/* planes [p0, p1) (plane = n * C + c) */
#define DEF_REF_MAX(T, name)                                                                     \
  static void name(const weft_pool2d* g, const T* x, T* y, int64_t* idx, int64_t p0, int64_t p1) { \
    REF_STRIDES                                                                                  \
    for (int64_t pl = p0, n = p0 / C, c = p0 % C; pl < p1; pl++, n = pl / C, c = pl % C)          \
        for (int64_t oh = 0; oh < OH; oh++) {                                                    \
          win r = window(g, true, oh);                                                           \
          for (int64_t ow = 0; ow < OW; ow++) {                                                  \
            win q = window(g, false, ow);                                                        \
            T m = (T)-INFINITY;                                                                  \
            int64_t mi = r.start * W + q.start;                                                  \
            for (int64_t i = 0, ih = r.start; i < r.count; i++, ih += g->dh)                     \
              for (int64_t j = 0, iw = q.start; j < q.count; j++, iw += g->dw) {                 \
                T v = x[n * xn + c * xc + ih * xh + iw * xw];                                    \
                if (v > m || v != v) m = v, mi = ih * W + iw;                                    \
              }                                                                                  \
            int64_t o = n * yn + c * yc + oh * yh + ow * yw;                                     \
            y[o] = m;                                                                            \
            if (idx) idx[o] = mi;                                                                \
          }                                                                                      \
        }                                                                                        \
  }
DEF_REF_MAX(float, ref_max_f32)
DEF_REF_MAX(double, ref_max_f64)

/* avg and adaptive avg: the sum in T (int64 divides with truncation, as C++) */
#define DEF_REF_AVG(T, name)                                                                     \
  static void name(const weft_pool2d* g, const T* x, T* y, int64_t p0, int64_t p1) {             \
    REF_STRIDES                                                                                  \
    for (int64_t pl = p0, n = p0 / C, c = p0 % C; pl < p1; pl++, n = pl / C, c = pl % C)          \
        for (int64_t oh = 0; oh < OH; oh++) {                                                    \
          win r = window(g, true, oh);                                                           \
          for (int64_t ow = 0; ow < OW; ow++) {                                                  \
            win q = window(g, false, ow);                                                        \
            T s = 0;                                                                             \
            for (int64_t ih = r.start; ih < r.start + r.count; ih++)                             \
              for (int64_t iw = q.start; iw < q.start + q.count; iw++) s += x[n * xn + c * xc + ih * xh + iw * xw]; \
            y[n * yn + c * yc + oh * yh + ow * yw] = s / (T)divisor(g, r, q);                    \
          }                                                                                      \
        }                                                                                        \
  }
DEF_REF_AVG(float, ref_avg_f32)
DEF_REF_AVG(double, ref_avg_f64)
DEF_REF_AVG(int64_t, ref_avg_i64)

static void reference_planes(const weft_pool2d* g, weft_dtype dtype, const void* x, void* y, int64_t* idx, int64_t p0,
                             int64_t p1) {
  bool max = g->kind == WEFT_POOL_MAX;
  if (p0 >= p1) return; /* also: no channels, no division */
  switch (dtype) {
    case WEFT_FLOAT32:
      if (max) ref_max_f32(g, x, y, idx, p0, p1);
      else ref_avg_f32(g, x, y, p0, p1);
      break;
    case WEFT_FLOAT64:
      if (max) ref_max_f64(g, x, y, idx, p0, p1);
      else ref_avg_f64(g, x, y, p0, p1);
      break;
    case WEFT_INT64:
      if (!max) ref_avg_i64(g, x, y, p0, p1);
      break;
    default:
      break;
  }
}

void weft__pool2d_reference(const weft_pool2d* g, weft_dtype dtype, const void* x, void* y, int64_t* idx) {
  reference_planes(g, dtype, x, y, idx, 0, g->n * g->c);
}

typedef struct {
  const weft_pool2d* g;
  weft_dtype dtype;
  const void* x;
  void* y;
  int64_t* idx;
} ref_job;

static weft_status reference_range(void* ctx, int64_t begin, int64_t end) {
  const ref_job* r = ctx;
  reference_planes(r->g, r->dtype, r->x, r->y, r->idx, begin, end);
  return WEFT_OK;
}

/* ---- float32 over the kernels ---- */

typedef struct {
  const weft_kernels* kt;
  const weft_pool2d* g;
  const float* x;
  float* y;
  int64_t* idx;
  weft_f32_pool_fn* run; /* NCHW interior kernel */
  int64_t a, b;          /* interior outputs of every row */
} job;

static struct weft_f32_pool_params params_for(const weft_pool2d* g, win r, int64_t pix) {
  struct weft_f32_pool_params p = {0};
  bool max = g->kind == WEFT_POOL_MAX;
  p.kh = (size_t)r.count;
  p.kw = (size_t)(g->kind == WEFT_POOL_ADAPTIVE_AVG ? 0 : g->kw);
  p.sw = (size_t)g->sw;
  p.dw = (size_t)(max ? g->dw : 1);
  p.rs = (size_t)((max ? g->dh : 1) * g->w * pix) * sizeof(float); /* pix: floats per input pixel */
  p.cs = p.dw * (size_t)pix * sizeof(float);
  p.xs = (size_t)(g->sw * pix) * sizeof(float);
  p.ys = (size_t)pix * sizeof(float);
  p.irs = (max ? g->dh : 1) * g->w;
  p.ics = (int64_t)p.dw;
  p.istep = g->sw;
  return p;
}

/* one clipped window: output ow of the row (ir: the row's indices, or NULL) */
static void border_cw(const job* jb, const struct weft_f32_pool_params* p0, win r, const float* xr, float* yr,
                      int64_t* ir, int64_t ow) {
  const weft_pool2d* g = jb->g;
  win q = window(g, false, ow);
  struct weft_f32_pool_params p = *p0;
  p.kw = (size_t)q.count;
  p.divisor = (float)divisor(g, r, q);
  p.i0 = r.start * g->w + q.start;
  if (ir) jb->kt->f32_maxpool_cw_idx(1, xr + q.start, yr + ow, ir + ow, &p);
  else if (g->kind == WEFT_POOL_MAX) jb->kt->f32_maxpool_cw(1, xr + q.start, yr + ow, &p);
  else jb->kt->f32_avgpool_cw(1, xr + q.start, yr + ow, &p);
}

static weft_status nchw_rows(void* ctx, int64_t begin, int64_t end) {
  const job* jb = ctx;
  const weft_pool2d* g = jb->g;
  for (int64_t t = begin; t < end; t++) {
    int64_t plane = t / g->oh, oh = t % g->oh;
    win r = window(g, true, oh);
    const float* xr = jb->x + (plane * g->h + r.start) * g->w;
    float* yr = jb->y + (plane * g->oh + oh) * g->ow;
    int64_t* ir = jb->idx ? jb->idx + (plane * g->oh + oh) * g->ow : NULL;
    struct weft_f32_pool_params p = params_for(g, r, 1);
    for (int64_t ow = 0; ow < jb->a; ow++) border_cw(jb, &p, r, xr, yr, ir, ow);
    if (jb->b > jb->a) {
      win full = {0, g->kw, g->kw};
      int64_t c0 = jb->a * g->sw - g->pw; /* the run's first window column */
      p.divisor = (float)divisor(g, r, full);
      p.i0 = r.start * g->w + c0;
      if (ir) jb->kt->f32_maxpool_cw_idx((size_t)(jb->b - jb->a), xr + c0, yr + jb->a, ir + jb->a, &p);
      else jb->run((size_t)(jb->b - jb->a), xr + c0, yr + jb->a, &p);
    }
    for (int64_t ow = jb->b; ow < g->ow; ow++) border_cw(jb, &p, r, xr, yr, ir, ow);
  }
  return WEFT_OK;
}

/* n outputs from ow on, all with column window q's shape */
static void run_c(const job* jb, const struct weft_f32_pool_params* p0, win r, win q, int64_t ow, int64_t n,
                  const float* xr, float* yr, int64_t* ir) {
  const weft_pool2d* g = jb->g;
  const int64_t C = g->c;
  struct weft_f32_pool_params p = *p0;
  p.kw = (size_t)q.count;
  p.divisor = (float)divisor(g, r, q);
  p.i0 = r.start * g->w + q.start;
  const float* x = xr + q.start * C;
  if (ir) jb->kt->f32_maxpool_c_idx((size_t)n, (size_t)C, x, yr + ow * C, ir + ow * C, &p);
  else if (g->kind == WEFT_POOL_MAX) jb->kt->f32_maxpool_c((size_t)n, (size_t)C, x, yr + ow * C, &p);
  else jb->kt->f32_avgpool_c((size_t)n, (size_t)C, x, yr + ow * C, &p);
}

static weft_status nhwc_rows(void* ctx, int64_t begin, int64_t end) {
  const job* jb = ctx;
  const weft_pool2d* g = jb->g;
  for (int64_t t = begin; t < end; t++) {
    int64_t img = t / g->oh, oh = t % g->oh;
    win r = window(g, true, oh);
    const float* xr = jb->x + ((img * g->h + r.start) * g->w) * g->c;
    int64_t o = (img * g->oh + oh) * g->ow * g->c;
    float* yr = jb->y + o;
    int64_t* ir = jb->idx ? jb->idx + o : NULL;
    struct weft_f32_pool_params p = params_for(g, r, g->c);
    for (int64_t ow = 0; ow < jb->a; ow++) run_c(jb, &p, r, window(g, false, ow), ow, 1, xr, yr, ir);
    if (jb->b > jb->a) run_c(jb, &p, r, window(g, false, jb->a), jb->a, jb->b - jb->a, xr, yr, ir);
    for (int64_t ow = jb->b; ow < g->ow; ow++) run_c(jb, &p, r, window(g, false, ow), ow, 1, xr, yr, ir);
  }
  return WEFT_OK;
}

static weft_f32_pool_fn* nchw_kernel(const weft_kernels* kt, const weft_pool2d* g) {
  bool max = g->kind == WEFT_POOL_MAX;
  int64_t dw = max ? g->dw : 1;
  if (g->sw == 1) return max ? kt->f32_maxpool_cw_s1 : kt->f32_avgpool_cw_s1;
  if (g->sw == 2 && dw == 1) return max ? kt->f32_maxpool_cw_s2 : kt->f32_avgpool_cw_s2;
  return max ? kt->f32_maxpool_cw : kt->f32_avgpool_cw;
}

/* The kernels keep indices in i32 lanes: a plane past that takes the plain loop. */
static bool plain_loop(const weft_pool2d* g, weft_dtype dtype, bool indices) {
  return dtype != WEFT_FLOAT32 || (indices && g->h * g->w > INT32_MAX);
}

const char* weft__pool2d_path(const weft_pool2d* g, weft_dtype dtype, bool indices) {
  if (plain_loop(g, dtype, indices)) return "reference";
  if (indices) return g->channels_last ? "nhwc_indices" : "nchw_indices";
  if (g->channels_last) return g->kind == WEFT_POOL_ADAPTIVE_AVG ? "nhwc_adaptive" : "nhwc";
  if (g->kind == WEFT_POOL_ADAPTIVE_AVG) return "nchw_adaptive";
  bool max = g->kind == WEFT_POOL_MAX;
  if (g->sw == 1) return "nchw_s1";
  if (g->sw == 2 && (max ? g->dw : 1) == 1) return "nchw_s2";
  return "nchw_generic";
}

weft_status weft__pool2d_run(const weft_kernels* kt, const weft_pool2d* g, weft_dtype dtype, const void* x, void* y,
                             int64_t* idx, const char** path) {
  *path = weft__pool2d_path(g, dtype, idx != NULL);
  if (g->n * g->c * g->oh * g->ow == 0) return WEFT_OK;
  if (plain_loop(g, dtype, idx != NULL)) { /* the plain loop, parallel over planes */
    ref_job r = {g, dtype, x, y, idx};
    int64_t per = g->oh * g->ow * (g->kind == WEFT_POOL_ADAPTIVE_AVG ? 4 : g->kh * g->kw);
    return weft_parallel_for(0, g->n * g->c, MAX(TASK_WORK / MAX(per, 1), 1), reference_range, &r);
  }
  job jb = {kt, g, x, y, idx, nchw_kernel(kt, g), 0, 0};
  interior(g, &jb.a, &jb.b);
  /* work of one task (an output row): its window reads */
  int64_t kk = g->kind == WEFT_POOL_ADAPTIVE_AVG ? ((g->h + g->oh - 1) / g->oh + 1) * ((g->w + g->ow - 1) / g->ow + 1)
                                                 : g->kh * g->kw;
  if (g->channels_last) {
    int64_t grain = TASK_WORK / MAX(g->ow * g->c * kk, 1);
    return weft_parallel_for(0, g->n * g->oh, MAX(grain, 1), nhwc_rows, &jb);
  }
  int64_t grain = TASK_WORK / MAX(g->ow * kk, 1);
  return weft_parallel_for(0, g->n * g->c * g->oh, MAX(grain, 1), nchw_rows, &jb);
}

/* ---- backward: each output's gradient scattered over its window ----
 *
 * A task owns whole input planes (NCHW: one (image, channel) plane; NHWC:
 * an image's block of BACK_CBLOCK channels, contiguous in every pixel), so
 * overlapping windows never race: it zeroes its part of gx, then adds each
 * output's share (max: all of it at the recorded index; avg: gy / divisor
 * over the clipped window, as PyTorch's backward). */
#define BACK_CBLOCK 16

#define DEF_BACK(T, name)                                                                         \
  static void name(const weft_pool2d* g, const T* gy, const int64_t* idx, T* gx, int64_t n, int64_t c0, \
                   int64_t c1) {                                                                  \
    REF_STRIDES                                                                                   \
    T* gn = gx + n * xn;                                                                          \
    if (xw == 1) /* NCHW (or one channel): the task's planes are one run */                       \
      memset(gn + c0 * xc, 0, sizeof(T) * (size_t)((c1 - c0) * H * W));                           \
    else                                                                                          \
      for (int64_t px = 0; px < H * W; px++)                                                      \
        for (int64_t c = c0; c < c1; c++) gn[px * xw + c * xc] = 0;                               \
    if (idx) { /* per channel, outputs in order: each input adds its outputs as the avg loop does */ \
      for (int64_t c = c0; c < c1; c++)                                                           \
        for (int64_t oh = 0; oh < OH; oh++)                                                       \
          for (int64_t ow = 0; ow < OW; ow++) {                                                   \
            const int64_t o = n * yn + c * yc + oh * yh + ow * yw;                                \
            const int64_t i = idx[o]; /* an empty window's index may point past the plane */      \
            /* pixel i = (i / W, i % W) is i * xw on (xh = W * xw in both layouts) */             \
            if (i >= 0 && i < H * W) gn[c * xc + i * xw] += gy[o];                                \
          }                                                                                       \
      return;                                                                                     \
    }                                                                                             \
    for (int64_t oh = 0; oh < OH; oh++) {                                                         \
      win r = window(g, true, oh);                                                                \
      for (int64_t ow = 0; ow < OW; ow++) {                                                       \
        const int64_t o = n * yn + oh * yh + ow * yw;                                             \
        win q = window(g, false, ow);                                                             \
        T d = (T)divisor(g, r, q);                                                                \
        for (int64_t ih = r.start; ih < r.start + r.count; ih++)                                  \
          for (int64_t iw = q.start; iw < q.start + q.count; iw++)                                \
            for (int64_t c = c0; c < c1; c++) gn[c * xc + ih * xh + iw * xw] += gy[o + c * yc] / d; \
      }                                                                                           \
    }                                                                                             \
  }
DEF_BACK(float, back_f32)
DEF_BACK(double, back_f64)

typedef struct {
  const weft_pool2d* g;
  bool f64;
  const void* gy;
  const int64_t* idx;
  void* gx;
  int64_t cb; /* channels per task */
} back_job;

static weft_status back_range(void* ctx, int64_t begin, int64_t end) {
  const back_job* b = ctx;
  const int64_t nb = (b->g->c + b->cb - 1) / b->cb;
  for (int64_t t = begin; t < end; t++) {
    int64_t n = t / nb, c0 = t % nb * b->cb, c1 = MIN(c0 + b->cb, b->g->c);
    if (b->f64) back_f64(b->g, b->gy, b->idx, b->gx, n, c0, c1);
    else back_f32(b->g, b->gy, b->idx, b->gx, n, c0, c1);
  }
  return WEFT_OK;
}

weft_status weft__pool2d_backward(const weft_pool2d* g, weft_dtype dtype, const void* gy, const int64_t* idx,
                                  void* gx) {
  if (g->n * g->c * g->h * g->w == 0) return WEFT_OK;
  back_job b = {g, dtype == WEFT_FLOAT64, gy, idx, gx, g->channels_last ? BACK_CBLOCK : 1};
  int64_t tasks = g->n * ((g->c + b.cb - 1) / b.cb);
  int64_t kk = idx ? 1 : g->kind == WEFT_POOL_ADAPTIVE_AVG ? (g->h / MAX(g->oh, 1) + 1) * (g->w / MAX(g->ow, 1) + 1)
                                                           : g->kh * g->kw;
  int64_t per = b.cb * (g->h * g->w + g->oh * g->ow * kk); /* one task's reads and writes */
  return weft_parallel_for(0, tasks, MAX(TASK_WORK / MAX(per, 1), 1), back_range, &b);
}
