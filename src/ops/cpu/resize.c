/* The resizing drivers: interpolate's modes and reflection / replication
 * padding, with PyTorch 1.13's index math (aten/src/ATen/native/UpSample.h:
 * area_pixel_compute_scale, area_pixel_compute_source_index, nearest_idx,
 * the cubic coefficients with A = -0.75).
 *
 * A resize is separable: per axis, every output index has k taps (an input
 * index and a weight: nearest 1, linear 2, cubic 4, indices clamped into the
 * input), computed once per call in the input's precision, as PyTorch does.
 * Sums follow PyTorch's CPU kernels, so results match its bits:
 *
 *   NCHW (linear, cubic)           out = sum_i wh[i] * (sum_j ww[j] * x[ih[i], iw[j]])
 *                                  (the generic N-d kernel). float32 NCHW:
 *                                  a task is a plane's run of output rows; the
 *                                  horizontal pass of each input row it needs
 *                                  (f32_resize_gather) is cached, so
 *                                  upsampling computes it once, then the
 *                                  vertical pass (f32_resize_blend) runs along
 *                                  the output row.
 *   NHWC linear                    out = x00 * w00 + (x01 * w01 + (x10 * w10 + x11 * w11)),
 *                                  w00 = wh0 * ww0 (the channels_last kernel's
 *                                  vector path), vectorized over channels.
 *   nearest                        copies of any element size.
 *
 * float64 takes the plain loop (weft__resize2d_reference), in parallel.
 * Backward: the scatter-add PyTorch's backward kernels do, in their order,
 * one task per plane. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "ops/cpu/resize.h"
#include "weft/parallel.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define TASK_WORK 32768 /* output elements per parallel chunk, at least */

/* ---- taps ---- */

typedef struct {
  int k;
  int64_t* idx; /* out * k input indices */
  void* w;      /* out * k weights, float or double */
} taps;

static int taps_per_output(weft_resize_mode m) { return m == WEFT_RESIZE_LINEAR ? 2 : m == WEFT_RESIZE_CUBIC ? 4 : 1; }

/* nearest_idx / nearest_exact_idx: a float scale whatever the dtype */
static int64_t nearest_src(bool exact, int64_t o, int64_t in, int64_t out, double s) {
  if (!exact && out == in) return o;
  if (!exact && out == 2 * in) return o >> 1;
  float scale = (s == s && s > 0) ? (float)(1.0 / s) : (float)in / (float)out;
  int64_t i = exact ? (int64_t)floorf((float)((o + 0.5) * scale)) : (int64_t)floorf(o * scale);
  return MIN(i, in - 1);
}

/* area_pixel_compute_scale, _source_index, compute_source_index_and_lambda
 * and the cubic taps, in T (the input's precision) */
#define DEF_TAPS(T, name)                                                                                   \
  static T name##_cc1(T x, T A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }                             \
  static T name##_cc2(T x, T A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }                       \
  static void name(weft_resize_mode mode, bool ac, int64_t in, int64_t out, double s, int64_t* idx, T* w) { \
    T scale = ac ? (out > 1 ? (T)(in - 1) / (T)(out - 1) : (T)0)                                            \
                 : ((s == s && s > 0) ? (T)(1.0 / s) : (T)in / (T)out);                                     \
    for (int64_t o = 0; o < out; o++) {                                                                     \
      bool cubic = mode == WEFT_RESIZE_CUBIC;                                                               \
      T r = ac ? scale * (T)o : (T)(scale * (o + 0.5) - 0.5);                                               \
      if (!cubic && !ac && r < 0) r = 0;                                                                    \
      if (mode == WEFT_RESIZE_NEAREST || mode == WEFT_RESIZE_NEAREST_EXACT) {                               \
        idx[o] = nearest_src(mode == WEFT_RESIZE_NEAREST_EXACT, o, in, out, s);                             \
        w[o] = 1;                                                                                           \
      } else if (!cubic) {                                                                                  \
        int64_t i0 = out == in ? o : (int64_t)r;                                                            \
        T l1 = out == in ? (T)0 : r - (T)i0;                                                                \
        idx[2 * o] = i0;                                                                                    \
        idx[2 * o + 1] = out == in ? o : i0 + (i0 < in - 1 ? 1 : 0);                                       \
        w[2 * o] = (T)1 - l1;                                                                               \
        w[2 * o + 1] = l1;                                                                                  \
      } else {                                                                                              \
        int64_t i0 = (int64_t)floorf((float)r);                                                             \
        T t = r - (T)i0, A = (T)-0.75, x2 = (T)(1.0 - t);                                                   \
        w[4 * o] = name##_cc2((T)(t + 1.0), A);                                                             \
        w[4 * o + 1] = name##_cc1(t, A);                                                                    \
        w[4 * o + 2] = name##_cc1(x2, A);                                                                   \
        w[4 * o + 3] = name##_cc2((T)(x2 + 1.0), A);                                                        \
        for (int j = 0; j < 4; j++) idx[4 * o + j] = MAX(MIN(i0 - 1 + j, in - 1), 0);                       \
      }                                                                                                     \
    }                                                                                                       \
  }
DEF_TAPS(float, taps_f32)
DEF_TAPS(double, taps_f64)

/* an axis's taps (k 1, weight 1, index 0 for the H axis of a 1-D resize) */
static weft_status make_taps(const weft_resize2d* g, bool rows, bool dbl, taps* t) {
  bool none = rows && g->one_d;
  int64_t in = rows ? g->h : g->w, out = rows ? g->oh : g->ow;
  t->k = none ? 1 : taps_per_output(g->mode);
  size_t n = (size_t)(out * t->k);
  t->idx = malloc(n * sizeof(int64_t) + 1);
  t->w = malloc(n * (dbl ? sizeof(double) : sizeof(float)) + 1);
  if (!t->idx || !t->w) return weft__error(WEFT_OUT_OF_MEMORY, "interpolate: out of memory");
  if (none) {
    for (int64_t o = 0; o < out; o++) {
      t->idx[o] = 0;
      if (dbl) ((double*)t->w)[o] = 1;
      else ((float*)t->w)[o] = 1;
    }
  } else if (dbl) {
    taps_f64(g->mode, g->align_corners, in, out, rows ? g->scale_h : g->scale_w, t->idx, t->w);
  } else {
    taps_f32(g->mode, g->align_corners, in, out, rows ? g->scale_h : g->scale_w, t->idx, t->w);
  }
  return WEFT_OK;
}

static void free_taps(taps* t) {
  free(t->idx);
  free(t->w);
}

/* ---- the plain loop ---- */

/* Element strides of a format: image, channel, row, column. */
typedef struct {
  int64_t n, c, h, w;
} strides4;

static strides4 strides_of(const weft_resize2d* g, int64_t h, int64_t w) {
  strides4 s;
  s.n = g->c * h * w;
  s.c = g->channels_last ? 1 : h * w;
  s.h = g->channels_last ? w * g->c : w;
  s.w = g->channels_last ? g->c : 1;
  return s;
}

/* One output value at (ih, iw) taps of plane x: the sums of the file comment. */
#define DEF_POINT(T, name)                                                                                  \
  static T name(const weft_resize2d* g, const T* x, strides4 s, const int64_t* ih, const T* wh, int kh,     \
                const int64_t* iw, const T* ww, int kw) {                                                   \
    if (g->channels_last && g->mode == WEFT_RESIZE_LINEAR) {                                                \
      T acc = 0;                                                                                            \
      for (int m = kh * kw - 1; m >= 0; m--) {                                                              \
        int i = m / kw, j = m % kw;                                                                         \
        T v = x[ih[i] * s.h + iw[j] * s.w] * (wh[i] * ww[j]);                                               \
        acc = m == kh * kw - 1 ? v : v + acc;                                                               \
      }                                                                                                     \
      return acc;                                                                                           \
    }                                                                                                       \
    T out = 0;                                                                                              \
    for (int i = 0; i < kh; i++) {                                                                          \
      const T* row = x + ih[i] * s.h;                                                                       \
      T t = row[iw[0] * s.w] * ww[0];                                                                       \
      for (int j = 1; j < kw; j++) t += row[iw[j] * s.w] * ww[j];                                           \
      out = i == 0 ? t * wh[0] : out + t * wh[i];                                                           \
    }                                                                                                       \
    return out;                                                                                             \
  }
DEF_POINT(float, point_f32)
DEF_POINT(double, point_f64)

typedef struct {
  const weft_kernels* kt;
  const weft_resize2d* g;
  weft_dtype dtype;
  size_t elem;
  const void* x;
  void* y;
  taps th, tw;
} job;

/* output rows [r0, r1) of the plain loop (row = image * oh + oh), every channel */
#define DEF_REF_ROWS(T, name, point)                                                                        \
  static void name(const job* jb, int64_t r0, int64_t r1) {                                                 \
    const weft_resize2d* g = jb->g;                                                                         \
    strides4 xs = strides_of(g, g->h, g->w), ys = strides_of(g, g->oh, g->ow);                              \
    const int kh = jb->th.k, kw = jb->tw.k;                                                                 \
    for (int64_t r = r0; r < r1; r++) {                                                                     \
      int64_t n = r / g->oh, oh = r % g->oh;                                                                \
      for (int64_t c = 0; c < g->c; c++) {                                                                  \
        const T* xp = (const T*)jb->x + n * xs.n + c * xs.c;                                                \
        T* yp = (T*)jb->y + n * ys.n + c * ys.c + oh * ys.h;                                                \
        for (int64_t ow = 0; ow < g->ow; ow++)                                                              \
          yp[ow * ys.w] = point(g, xp, xs, jb->th.idx + oh * kh, (const T*)jb->th.w + oh * kh, kh,          \
                                jb->tw.idx + ow * kw, (const T*)jb->tw.w + ow * kw, kw);                    \
      }                                                                                                     \
    }                                                                                                       \
  }
DEF_REF_ROWS(float, ref_rows_f32, point_f32)
DEF_REF_ROWS(double, ref_rows_f64, point_f64)

/* nearest: output rows [r0, r1) copied element by element (any size) */
static void nearest_rows(const job* jb, int64_t r0, int64_t r1) {
  const weft_resize2d* g = jb->g;
  const size_t e = jb->elem;
  strides4 xs = strides_of(g, g->h, g->w), ys = strides_of(g, g->oh, g->ow);
  for (int64_t r = r0; r < r1; r++) {
    int64_t n = r / g->oh, oh = r % g->oh, ih = jb->th.idx[oh];
    const char* xr = (const char*)jb->x + (size_t)(n * xs.n + ih * xs.h) * e;
    char* yr = (char*)jb->y + (size_t)(n * ys.n + oh * ys.h) * e;
    if (g->channels_last) { /* each output pixel: its source pixel's C channels */
      for (int64_t ow = 0; ow < g->ow; ow++)
        memcpy(yr + (size_t)(ow * g->c) * e, xr + (size_t)(jb->tw.idx[ow] * g->c) * e, (size_t)g->c * e);
      continue;
    }
    for (int64_t c = 0; c < g->c; c++) {
      const char* xp = xr + (size_t)(c * xs.c) * e;
      char* yp = yr + (size_t)(c * ys.c) * e;
      switch (e) {
#define GATHER(T) \
  for (int64_t ow = 0; ow < g->ow; ow++) ((T*)yp)[ow] = ((const T*)xp)[jb->tw.idx[ow]]; \
  break;
        case 1: GATHER(uint8_t)
        case 2: GATHER(uint16_t)
        case 4: GATHER(uint32_t)
        default: GATHER(uint64_t)
#undef GATHER
      }
    }
  }
}

/* ---- float32 over the kernels ---- */

#define SLOTS 8 /* cached horizontal passes: 2 x the taps of one output row */

/* NCHW: tasks are (plane, output row); a range's rows of one plane share the
 * cache of horizontal passes. */
static weft_status nchw_f32(const job* jb, int64_t begin, int64_t end) {
  const weft_resize2d* g = jb->g;
  const int kh = jb->th.k, kw = jb->tw.k;
  float* buf = malloc((size_t)(SLOTS * g->ow) * sizeof(float) + 1);
  if (!buf) return weft__error(WEFT_OUT_OF_MEMORY, "interpolate: out of memory");
  int64_t key[SLOTS], stamp[SLOTS], now = 0, plane_of = -1;
  for (int64_t t = begin; t < end; t++) {
    int64_t plane = t / g->oh, oh = t % g->oh;
    if (plane != plane_of) {
      for (int s = 0; s < SLOTS; s++) key[s] = -1, stamp[s] = -1;
      plane_of = plane;
    }
    const float* xp = (const float*)jb->x + plane * g->h * g->w;
    const float* rows[4];
    now++;
    for (int i = 0; i < kh; i++) {
      int64_t ih = jb->th.idx[oh * kh + i];
      int hit = -1, victim = 0;
      for (int s = 0; s < SLOTS; s++) {
        if (key[s] == ih) hit = s;
        if (stamp[s] < stamp[victim]) victim = s;
      }
      if (hit < 0) { /* the least recently used slot: never one this row holds (stamp now) */
        hit = victim;
        key[hit] = ih;
        jb->kt->f32_resize_gather((size_t)g->ow, (size_t)kw, xp + ih * g->w, jb->tw.idx, jb->tw.w,
                                  buf + hit * g->ow);
      }
      stamp[hit] = now;
      rows[i] = buf + hit * g->ow;
    }
    jb->kt->f32_resize_blend((size_t)g->ow, (size_t)kh, rows, (const float*)jb->th.w + oh * kh,
                             (float*)jb->y + t * g->ow);
  }
  free(buf);
  return WEFT_OK;
}

/* NHWC (linear): tasks are (image, output row); one kernel call per row,
 * across channels, over the taps last to first (the vector path's
 * right-to-left sum). */
static weft_status nhwc_f32(const job* jb, int64_t begin, int64_t end) {
  const weft_resize2d* g = jb->g;
  const int64_t C = g->c;
  const int kh = jb->th.k, kw = jb->tw.k, k = kh * kw;
  const float** px = malloc((size_t)(g->ow * k) * sizeof(float*) + 1);
  float* w = malloc((size_t)(g->ow * k) * sizeof(float) + 1);
  if (!px || !w) {
    free(px);
    free(w);
    return weft__error(WEFT_OUT_OF_MEMORY, "interpolate: out of memory");
  }
  for (int64_t t = begin; t < end; t++) {
    int64_t n = t / g->oh, oh = t % g->oh;
    const float* xn = (const float*)jb->x + n * g->h * g->w * C;
    const int64_t* ih = jb->th.idx + oh * kh;
    const float* wh = (const float*)jb->th.w + oh * kh;
    for (int64_t ow = 0, m = 0; ow < g->ow; ow++) {
      const int64_t* iw = jb->tw.idx + ow * kw;
      const float* ww = (const float*)jb->tw.w + ow * kw;
      for (int i = kh - 1; i >= 0; i--)
        for (int j = kw - 1; j >= 0; j--, m++) {
          px[m] = xn + (ih[i] * g->w + iw[j]) * C;
          w[m] = wh[i] * ww[j];
        }
    }
    jb->kt->f32_resize_pixels((size_t)g->ow, (size_t)C, (size_t)k, px, w, (float*)jb->y + t * g->ow * C);
  }
  free(px);
  free(w);
  return WEFT_OK;
}

static bool is_nearest(const weft_resize2d* g) {
  return g->mode == WEFT_RESIZE_NEAREST || g->mode == WEFT_RESIZE_NEAREST_EXACT;
}

static weft_status run_range(void* ctx, int64_t begin, int64_t end) {
  const job* jb = ctx;
  const weft_resize2d* g = jb->g;
  if (is_nearest(g)) {
    nearest_rows(jb, begin, end);
    return WEFT_OK;
  }
  if (jb->dtype == WEFT_FLOAT64) {
    ref_rows_f64(jb, begin, end);
    return WEFT_OK;
  }
  if (!jb->kt) {
    ref_rows_f32(jb, begin, end);
    return WEFT_OK;
  }
  return g->channels_last ? nhwc_f32(jb, begin, end) : nchw_f32(jb, begin, end);
}

/* kt NULL: the reference; serial when `serial` */
static weft_status resize(const weft_kernels* kt, const weft_resize2d* g, weft_dtype dtype, const void* x, void* y,
                          bool serial) {
  if (g->n * g->c * g->oh * g->ow == 0) return WEFT_OK;
  job jb = {kt, g, dtype, weft_dtype_size(dtype), x, y, {0}, {0}};
  bool dbl = dtype == WEFT_FLOAT64;
  weft_status s = make_taps(g, true, dbl, &jb.th);
  if (s == WEFT_OK) s = make_taps(g, false, dbl, &jb.tw);
  /* tasks: NCHW float32 kernel rows are (plane, row); the others (image, row) */
  bool planes = kt && !g->channels_last && !is_nearest(g) && dtype == WEFT_FLOAT32;
  int64_t tasks = (planes ? g->n * g->c : g->n) * g->oh;
  int64_t per = planes ? g->ow : g->ow * g->c;
  if (s == WEFT_OK)
    s = serial ? run_range(&jb, 0, tasks) : weft_parallel_for(0, tasks, MAX(1, TASK_WORK / MAX(per, 1)), run_range, &jb);
  free_taps(&jb.th);
  free_taps(&jb.tw);
  return s;
}

weft_status weft__resize2d_run(const weft_kernels* kt, const weft_resize2d* g, weft_dtype dtype, const void* x,
                               void* y) {
  return resize(kt, g, dtype, x, y, false);
}

weft_status weft__resize2d_reference(const weft_resize2d* g, weft_dtype dtype, const void* x, void* y) {
  return resize(NULL, g, dtype, x, y, true);
}

/* ---- backward ---- */

/* planes [p0, p1): gx[taps] += weights * gy, in PyTorch's order (linear and
 * nearest: (wh * ww) * g per output; cubic: (g * wh) * ww, x taps outer) */
#define DEF_BACK(T, name)                                                                                   \
  static void name(const job* jb, int64_t p0, int64_t p1) {                                                 \
    const weft_resize2d* g = jb->g;                                                                         \
    strides4 xs = strides_of(g, g->h, g->w), ys = strides_of(g, g->oh, g->ow);                              \
    const int kh = jb->th.k, kw = jb->tw.k;                                                                 \
    const bool cubic = g->mode == WEFT_RESIZE_CUBIC;                                                        \
    for (int64_t p = p0; p < p1; p++) {                                                                     \
      int64_t n = p / g->c, c = p % g->c;                                                                   \
      T* gx = (T*)jb->y + n * xs.n + c * xs.c;                                                              \
      const T* gy = (const T*)jb->x + n * ys.n + c * ys.c;                                                  \
      for (int64_t oh = 0; oh < g->oh; oh++) {                                                              \
        const int64_t* ih = jb->th.idx + oh * kh;                                                           \
        const T* wh = (const T*)jb->th.w + oh * kh;                                                         \
        for (int64_t ow = 0; ow < g->ow; ow++) {                                                            \
          const int64_t* iw = jb->tw.idx + ow * kw;                                                         \
          const T* ww = (const T*)jb->tw.w + ow * kw;                                                       \
          T v = gy[oh * ys.h + ow * ys.w];                                                                  \
          if (cubic) {                                                                                      \
            for (int j = 0; j < kw; j++)                                                                    \
              for (int i = 0; i < kh; i++) gx[ih[i] * xs.h + iw[j] * xs.w] += v * wh[i] * ww[j];            \
          } else {                                                                                          \
            for (int i = 0; i < kh; i++)                                                                    \
              for (int j = 0; j < kw; j++) gx[ih[i] * xs.h + iw[j] * xs.w] += wh[i] * ww[j] * v;            \
          }                                                                                                 \
        }                                                                                                   \
      }                                                                                                     \
    }                                                                                                       \
  }
DEF_BACK(float, back_f32)
DEF_BACK(double, back_f64)

static weft_status back_range(void* ctx, int64_t begin, int64_t end) {
  const job* jb = ctx;
  if (jb->dtype == WEFT_FLOAT64) back_f64(jb, begin, end);
  else back_f32(jb, begin, end);
  return WEFT_OK;
}

weft_status weft__resize2d_backward(const weft_resize2d* g, weft_dtype dtype, const void* gy, void* gx) {
  size_t e = weft_dtype_size(dtype);
  memset(gx, 0, (size_t)(g->n * g->c * g->h * g->w) * e);
  if (g->n * g->c * g->oh * g->ow == 0) return WEFT_OK;
  job jb = {NULL, g, dtype, e, gy, gx, {0}, {0}};
  bool dbl = dtype == WEFT_FLOAT64;
  weft_status s = make_taps(g, true, dbl, &jb.th);
  if (s == WEFT_OK) s = make_taps(g, false, dbl, &jb.tw);
  if (s == WEFT_OK)
    s = weft_parallel_for(0, g->n * g->c, MAX(1, TASK_WORK / MAX(g->oh * g->ow, 1)), back_range, &jb);
  free_taps(&jb.th);
  free_taps(&jb.tw);
  return s;
}

/* ---- reflection / replication padding ---- */

/* output o of an axis with left pad pl over n inputs: its input index */
static int64_t pad_src(bool reflect, int64_t o, int64_t pl, int64_t n) {
  int64_t k = o - pl;
  if (!reflect) return k < 0 ? 0 : k >= n ? n - 1 : k;
  if (k < 0) k = -k;
  return k >= n ? 2 * (n - 1) - k : k;
}

typedef struct {
  const weft_pad3d* g;
  size_t elem;
  const void* x;
  void* y;
  weft_dtype dtype;
} pad_job;

/* output rows [r0, r1) (row = (plane * od + od) * oh + oh) */
static weft_status pad_rows(void* ctx, int64_t r0, int64_t r1) {
  const pad_job* pj = ctx;
  const weft_pad3d* g = pj->g;
  const size_t e = pj->elem;
  /* the columns that copy straight: input o - pl inside the input */
  const int64_t a = MIN(MAX(g->pl[2], 0), g->ow), b = MAX(MIN(g->w + g->pl[2], g->ow), a);
  for (int64_t r = r0; r < r1; r++) {
    int64_t oh = r % g->oh, od = (r / g->oh) % g->od, p = r / (g->oh * g->od);
    int64_t id = pad_src(g->reflect, od, g->pl[0], g->d), ih = pad_src(g->reflect, oh, g->pl[1], g->h);
    const char* xr = (const char*)pj->x + (size_t)(((p * g->d + id) * g->h + ih) * g->w) * e;
    char* yr = (char*)pj->y + (size_t)(r * g->ow) * e;
    if (b > a) memcpy(yr + (size_t)a * e, xr + (size_t)(a - g->pl[2]) * e, (size_t)(b - a) * e);
    for (int64_t o = 0; o < a; o++) memcpy(yr + (size_t)o * e, xr + (size_t)pad_src(g->reflect, o, g->pl[2], g->w) * e, e);
    for (int64_t o = b; o < g->ow; o++) memcpy(yr + (size_t)o * e, xr + (size_t)pad_src(g->reflect, o, g->pl[2], g->w) * e, e);
  }
  return WEFT_OK;
}

weft_status weft__pad3d_run(const weft_pad3d* g, size_t elem, const void* x, void* y) {
  int64_t rows = g->planes * g->od * g->oh;
  if (rows * g->ow == 0) return WEFT_OK;
  pad_job pj = {g, elem, x, y, WEFT_FLOAT32};
  return weft_parallel_for(0, rows, MAX(1, TASK_WORK / MAX(g->ow, 1)), pad_rows, &pj);
}

#define DEF_PAD_BACK(T, name)                                                                               \
  static void name(const pad_job* pj, int64_t p0, int64_t p1) {                                             \
    const weft_pad3d* g = pj->g;                                                                            \
    for (int64_t p = p0; p < p1; p++) {                                                                     \
      T* gx = (T*)pj->y + p * g->d * g->h * g->w;                                                           \
      const T* gy = (const T*)pj->x + p * g->od * g->oh * g->ow;                                            \
      for (int64_t od = 0; od < g->od; od++) {                                                              \
        int64_t id = pad_src(g->reflect, od, g->pl[0], g->d);                                               \
        for (int64_t oh = 0; oh < g->oh; oh++) {                                                            \
          T* gr = gx + (id * g->h + pad_src(g->reflect, oh, g->pl[1], g->h)) * g->w;                        \
          for (int64_t ow = 0; ow < g->ow; ow++) gr[pad_src(g->reflect, ow, g->pl[2], g->w)] += *gy++;      \
        }                                                                                                   \
      }                                                                                                     \
    }                                                                                                       \
  }
DEF_PAD_BACK(float, pad_back_f32)
DEF_PAD_BACK(double, pad_back_f64)

static weft_status pad_back_range(void* ctx, int64_t begin, int64_t end) {
  const pad_job* pj = ctx;
  if (pj->dtype == WEFT_FLOAT64) pad_back_f64(pj, begin, end);
  else pad_back_f32(pj, begin, end);
  return WEFT_OK;
}

weft_status weft__pad3d_backward(const weft_pad3d* g, weft_dtype dtype, const void* gy, void* gx) {
  size_t e = weft_dtype_size(dtype);
  memset(gx, 0, (size_t)(g->planes * g->d * g->h * g->w) * e);
  pad_job pj = {g, e, gy, gx, dtype};
  int64_t per = MAX(g->od * g->oh * g->ow, 1);
  return weft_parallel_for(0, g->planes, MAX(1, TASK_WORK / per), pad_back_range, &pj);
}
