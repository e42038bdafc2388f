/* 2-D pooling kernels (max and average), NCHW along an output row and NHWC
 * across channels; the contract is in kernels.h (weft_f32_pool_params).
 *
 *   *_cw       the scalar reference: one window at a time, any stride and
 *              dilation, PyTorch's loop order (rows, then columns).
 *   *_cw_s1    stride 1: output j's window column q is the vector at
 *              x + j + q * dw, so 4 (8) outputs are a few unaligned loads.
 *   *_cw_s2    stride 2, dilation 1: the 8 values at x + 2j + q hold window
 *              columns q (even lanes) and q + 1 (odd lanes) of 4 outputs.
 *   *_c        NHWC: the window's C values are contiguous; 16 channels a pass.
 *
 * max keeps wasm's pmax (one maxps in V8; f32x4.max is eight instructions
 * on x64) plus an OR of each loaded lane's NaN mask, ORed into the result at
 * the end: all ones is a NaN, so a window with a NaN gives NaN, as PyTorch's
 * `val > max || isnan(val)` does, and ties keep the first value. avg sums
 * in PyTorch's order (rows, then columns) and divides once, so every path
 * gives the reference's bits. */
#include <math.h>

#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

#define ROW(x, r, rs) ((const float*)((const char*)(x) + (r) * (rs)))

/* ---- the reference: one window ---- */

static float max_window(const float* x, const struct weft_f32_pool_params* p) {
  float m = -INFINITY;
  for (size_t r = 0; r < p->kh; r++) {
    const float* row = ROW(x, r, p->rs);
    for (size_t q = 0; q < p->kw; q++) {
      float v = row[q * p->dw];
      if (v > m || v != v) m = v;
    }
  }
  return m;
}

static float avg_window(const float* x, const struct weft_f32_pool_params* p) {
  float s = 0.0f;
  for (size_t r = 0; r < p->kh; r++) {
    const float* row = ROW(x, r, p->rs);
    for (size_t q = 0; q < p->kw; q++) s += row[q * p->dw];
  }
  return s / p->divisor;
}

void WEFT_UKERNEL(f32_maxpool_cw, u1)(size_t n, const float* x, float* y, const struct weft_f32_pool_params* p) {
  for (size_t j = 0; j < n; j++) y[j] = max_window(x + j * p->sw, p);
}

void WEFT_UKERNEL(f32_avgpool_cw, u1)(size_t n, const float* x, float* y, const struct weft_f32_pool_params* p) {
  for (size_t j = 0; j < n; j++) y[j] = avg_window(x + j * p->sw, p);
}

/* ---- max, NCHW ---- */

static inline wv128 nan_mask(wv128 v) { return wv_f32x4_ne(v, v); }

/* An empty window (kh or kw 0: every row stepped out by the dilation) is -inf. */
static int empty_window(size_t n, float* y, const struct weft_f32_pool_params* p) {
  if (p->kh && p->kw) return 0;
  for (size_t j = 0; j < n; j++) y[j] = -INFINITY;
  return 1;
}

/* The running max starts from the window's first element (one pmax fewer). */
void WEFT_UKERNEL(f32_maxpool_cw_s1, u8)(size_t n, const float* x, float* y, const struct weft_f32_pool_params* p) {
  if (empty_window(n, y, p)) return;
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    wv128 a0 = wv_v128_load(x + j), a1 = wv_v128_load(x + j + 4);
    wv128 n0 = nan_mask(a0), n1 = nan_mask(a1);
    for (size_t r = 0; r < p->kh; r++) {
      const float* row = ROW(x, r, p->rs) + j;
      for (size_t q = r ? 0 : 1; q < p->kw; q++) {
        const wv128 v0 = wv_v128_load(row + q * p->dw), v1 = wv_v128_load(row + q * p->dw + 4);
        a0 = wv_f32x4_pmax(a0, v0);
        a1 = wv_f32x4_pmax(a1, v1);
        n0 = wv_v128_or(n0, nan_mask(v0));
        n1 = wv_v128_or(n1, nan_mask(v1));
      }
    }
    wv_v128_store(y + j, wv_v128_or(a0, n0));
    wv_v128_store(y + j + 4, wv_v128_or(a1, n1));
  }
  for (; j + 4 <= n; j += 4) {
    wv128 a = wv_v128_load(x + j), m = nan_mask(a);
    for (size_t r = 0; r < p->kh; r++) {
      const float* row = ROW(x, r, p->rs) + j;
      for (size_t q = r ? 0 : 1; q < p->kw; q++) {
        const wv128 v = wv_v128_load(row + q * p->dw);
        a = wv_f32x4_pmax(a, v);
        m = wv_v128_or(m, nan_mask(v));
      }
    }
    wv_v128_store(y + j, wv_v128_or(a, m));
  }
  for (; j < n; j++) y[j] = max_window(x + j, p);
}

/* Columns q, q+1 of 4 outputs: the rows' max first (vertical), then the
 * deinterleave. With an odd kw the last column's load reaches one value
 * past output j+3's window, so that block needs an output j+4 after it
 * (the read stays inside the row). */
void WEFT_UKERNEL(f32_maxpool_cw_s2, u4)(size_t n, const float* x, float* y, const struct weft_f32_pool_params* p) {
  if (empty_window(n, y, p)) return;
  const size_t kw = p->kw, need = 4 + (kw & 1);
  size_t j = 0;
  for (; j + need <= n; j += 4) {
    wv128 acc = wv_v128_zero(), nan = acc;
    for (size_t q = 0; q < kw; q += 2) {
      const float* top = x + 2 * j + q;
      wv128 a = wv_v128_load(top), b = wv_v128_load(top + 4), na = nan_mask(a), nb = nan_mask(b);
      for (size_t r = 1; r < p->kh; r++) {
        const float* row = ROW(top, r, p->rs);
        const wv128 va = wv_v128_load(row), vb = wv_v128_load(row + 4);
        a = wv_f32x4_pmax(a, va);
        b = wv_f32x4_pmax(b, vb);
        na = wv_v128_or(na, nan_mask(va));
        nb = wv_v128_or(nb, nan_mask(vb));
      }
      const wv128 e = wv_i32x4_even(a, b);
      acc = q ? wv_f32x4_pmax(acc, e) : e;
      nan = wv_v128_or(nan, wv_i32x4_even(na, nb));
      if (q + 1 < kw) {
        acc = wv_f32x4_pmax(acc, wv_i32x4_odd(a, b));
        nan = wv_v128_or(nan, wv_i32x4_odd(na, nb));
      }
    }
    wv_v128_store(y + j, wv_v128_or(acc, nan));
  }
  for (; j < n; j++) y[j] = max_window(x + 2 * j, p);
}

/* ---- max with indices, NCHW ----
 * One window at a time in the reference; 4 outputs a vector at stride 1,
 * and at stride 2 without dilation (the deinterleave of f32_maxpool_cw_s2,
 * with the same one-output margin for an odd kw). Every window element is
 * visited in PyTorch's order (rows, then columns) and a lane takes an
 * element that is greater or NaN, so values and indices are the
 * reference's on every path. Indices are i32 lanes (a plane below 2^31
 * elements: the driver's condition), widened on the way out. */

static float max_window_idx(const float* x, int64_t i0, int64_t* idx, const struct weft_f32_pool_params* p) {
  float m = -INFINITY;
  int64_t mi = i0;
  for (size_t r = 0; r < p->kh; r++) {
    const float* row = ROW(x, r, p->rs);
    for (size_t q = 0; q < p->kw; q++) {
      float v = row[q * p->dw];
      if (v > m || v != v) m = v, mi = i0 + (int64_t)r * p->irs + (int64_t)q * p->ics;
    }
  }
  *idx = mi;
  return m;
}

static inline void take_max(wv128 v, wv128 vi, wv128* a, wv128* id) {
  const wv128 take = wv_v128_or(wv_f32x4_gt(v, *a), nan_mask(v));
  *a = wv_v128_bitselect(v, *a, take);
  *id = wv_v128_bitselect(vi, *id, take);
}

void WEFT_UKERNEL(f32_maxpool_cw_idx, u4)(size_t n, const float* x, float* y, int64_t* idx,
                                          const struct weft_f32_pool_params* p) {
  const size_t sw = p->sw, kw = p->kw;
  const int s1 = sw == 1, s2 = sw == 2 && p->dw == 1;
  const size_t need = s2 ? 4 + (kw & 1) : 4;
  size_t j = 0;
  if (p->kh && kw && (s1 || s2)) {
    const int32_t st = (int32_t)p->istep, lanes[4] = {0, st, 2 * st, 3 * st};
    const wv128 lane = wv_v128_load(lanes);
    for (; j + need <= n; j += 4) {
      const wv128 base = wv_i32x4_add(wv_i32x4_splat((int32_t)(p->i0 + (int64_t)j * p->istep)), lane);
      wv128 a = wv_f32x4_splat(-INFINITY), id = base;
      for (size_t r = 0; r < p->kh; r++) {
        const float* row = ROW(x, r, p->rs) + j * sw;
        for (size_t q = 0; q < kw; q += s1 ? 1 : 2) {
          const wv128 at = wv_i32x4_add(base, wv_i32x4_splat((int32_t)((int64_t)r * p->irs + (int64_t)q * p->ics)));
          if (s1) {
            take_max(wv_v128_load(row + q * p->dw), at, &a, &id);
            continue;
          }
          const wv128 va = wv_v128_load(row + q), vb = wv_v128_load(row + q + 4);
          take_max(wv_i32x4_even(va, vb), at, &a, &id);
          if (q + 1 < kw) take_max(wv_i32x4_odd(va, vb), wv_i32x4_add(at, wv_i32x4_splat((int32_t)p->ics)), &a, &id);
        }
      }
      int32_t li[4];
      wv_v128_store(y + j, a);
      wv_v128_store(li, id);
      for (int i = 0; i < 4; i++) idx[j + i] = li[i];
    }
  }
  for (; j < n; j++) y[j] = max_window_idx(x + j * sw, p->i0 + (int64_t)j * p->istep, idx + j, p);
}

/* ---- avg, NCHW ---- */

void WEFT_UKERNEL(f32_avgpool_cw_s1, u8)(size_t n, const float* x, float* y, const struct weft_f32_pool_params* p) {
  const wv128 d = wv_f32x4_splat(p->divisor);
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    wv128 s0 = wv_v128_zero(), s1 = s0;
    for (size_t r = 0; r < p->kh; r++) {
      const float* row = ROW(x, r, p->rs) + j;
      for (size_t q = 0; q < p->kw; q++) {
        s0 = wv_f32x4_add(s0, wv_v128_load(row + q * p->dw));
        s1 = wv_f32x4_add(s1, wv_v128_load(row + q * p->dw + 4));
      }
    }
    wv_v128_store(y + j, wv_f32x4_div(s0, d));
    wv_v128_store(y + j + 4, wv_f32x4_div(s1, d));
  }
  for (; j + 4 <= n; j += 4) {
    wv128 s = wv_v128_zero();
    for (size_t r = 0; r < p->kh; r++) {
      const float* row = ROW(x, r, p->rs) + j;
      for (size_t q = 0; q < p->kw; q++) s = wv_f32x4_add(s, wv_v128_load(row + q * p->dw));
    }
    wv_v128_store(y + j, wv_f32x4_div(s, d));
  }
  for (; j < n; j++) y[j] = avg_window(x + j, p);
}

void WEFT_UKERNEL(f32_avgpool_cw_s2, u4)(size_t n, const float* x, float* y, const struct weft_f32_pool_params* p) {
  const wv128 d = wv_f32x4_splat(p->divisor);
  const size_t kw = p->kw, need = 4 + (kw & 1);
  size_t j = 0;
  for (; j + need <= n; j += 4) {
    wv128 s = wv_v128_zero();
    for (size_t r = 0; r < p->kh; r++) {
      const float* row = ROW(x, r, p->rs) + 2 * j;
      for (size_t q = 0; q < kw; q += 2) {
        const wv128 va = wv_v128_load(row + q), vb = wv_v128_load(row + q + 4);
        s = wv_f32x4_add(s, wv_i32x4_even(va, vb));
        if (q + 1 < kw) s = wv_f32x4_add(s, wv_i32x4_odd(va, vb));
      }
    }
    wv_v128_store(y + j, wv_f32x4_div(s, d));
  }
  for (; j < n; j++) y[j] = avg_window(x + 2 * j, p);
}

/* ---- NHWC: across channels ---- */

#define PIX(x, r, q, p) ((const float*)((const char*)(x) + (r) * (p)->rs + (q) * (p)->cs))

/* V vectors (V * 4 channels from c0) of one window, max or sum */
static inline void max_c_block(const float* x, float* y, size_t c0, int nv, size_t tail,
                               const struct weft_f32_pool_params* p) {
  wv128 a[4], m[4];
  for (int v = 0; v < nv; v++) {
    const float* px = x + c0 + 4 * v;
    a[v] = tail ? wv_v128_load_partial(px, tail) : wv_v128_load(px);
    m[v] = nan_mask(a[v]);
  }
  for (size_t r = 0; r < p->kh; r++)
    for (size_t q = r ? 0 : 1; q < p->kw; q++) {
      const float* px = PIX(x, r, q, p) + c0;
      for (int v = 0; v < nv; v++) {
        const wv128 val = tail ? wv_v128_load_partial(px, tail) : wv_v128_load(px + 4 * v);
        a[v] = wv_f32x4_pmax(a[v], val);
        m[v] = wv_v128_or(m[v], nan_mask(val));
      }
    }
  for (int v = 0; v < nv; v++) {
    const wv128 r = wv_v128_or(a[v], m[v]);
    if (tail) wv_v128_store_partial(y + c0, r, tail);
    else wv_v128_store(y + c0 + 4 * v, r);
  }
}

static inline void avg_c_block(const float* x, float* y, size_t c0, int nv, size_t tail,
                               const struct weft_f32_pool_params* p) {
  wv128 s[4];
  for (int v = 0; v < nv; v++) s[v] = wv_v128_zero();
  for (size_t r = 0; r < p->kh; r++)
    for (size_t q = 0; q < p->kw; q++) {
      const float* px = PIX(x, r, q, p) + c0;
      for (int v = 0; v < nv; v++)
        s[v] = wv_f32x4_add(s[v], tail ? wv_v128_load_partial(px, tail) : wv_v128_load(px + 4 * v));
    }
  const wv128 d = wv_f32x4_splat(p->divisor);
  for (int v = 0; v < nv; v++) {
    const wv128 r = wv_f32x4_div(s[v], d);
    if (tail) wv_v128_store_partial(y + c0, r, tail);
    else wv_v128_store(y + c0 + 4 * v, r);
  }
}

/* every channel of n outputs: blocks of 16, then 4, then the lane tail */
#define C_LOOP(block)                                                              \
  for (size_t j = 0; j < n; j++) {                                                 \
    const float* xj = (const float*)((const char*)x + j * p->xs);                  \
    float* yj = (float*)((char*)y + j * p->ys);                                    \
    size_t k = 0;                                                                  \
    for (; k + 16 <= c; k += 16) block(xj, yj, k, 4, 0, p);                        \
    for (; k + 4 <= c; k += 4) block(xj, yj, k, 1, 0, p);                          \
    if (k < c) block(xj, yj, k, 1, (c - k) * 4, p);                                \
  }

void WEFT_UKERNEL(f32_maxpool_c, u16)(size_t n, size_t c, const float* x, float* y,
                                      const struct weft_f32_pool_params* p) {
  if (!p->kh || !p->kw) {
    for (size_t j = 0; j < n; j++) empty_window(c, (float*)((char*)y + j * p->ys), p);
    return;
  }
  C_LOOP(max_c_block)
}

void WEFT_UKERNEL(f32_avgpool_c, u16)(size_t n, size_t c, const float* x, float* y,
                                      const struct weft_f32_pool_params* p) {
  C_LOOP(avg_c_block)
}

/* With indices: per lane, a greater value or a NaN takes the element's
 * index (PyTorch's rule, so the last NaN's index wins); indices are kept as
 * i32 lanes (a plane below 2^31 elements) and widened on the way out. */
static inline void max_c_idx_block(const float* x, float* y, int64_t* idx, int64_t i0, size_t c0, size_t tail,
                                   const struct weft_f32_pool_params* p) {
  wv128 a = wv_f32x4_splat(-INFINITY), id = wv_i32x4_splat((int32_t)i0);
  for (size_t r = 0; r < p->kh; r++)
    for (size_t q = 0; q < p->kw; q++) {
      const float* px = PIX(x, r, q, p) + c0;
      const wv128 v = tail ? wv_v128_load_partial(px, tail) : wv_v128_load(px);
      const wv128 take = wv_v128_or(wv_f32x4_gt(v, a), nan_mask(v));
      a = wv_v128_bitselect(v, a, take);
      id = wv_v128_bitselect(wv_i32x4_splat((int32_t)(i0 + (int64_t)r * p->irs + (int64_t)q * p->ics)), id, take);
    }
  int32_t li[4];
  wv_v128_store(li, id);
  size_t nl = tail ? tail / 4 : 4;
  if (tail) wv_v128_store_partial(y + c0, a, tail);
  else wv_v128_store(y + c0, a);
  for (size_t i = 0; i < nl; i++) idx[c0 + i] = li[i];
}

void WEFT_UKERNEL(f32_maxpool_c_idx, u4)(size_t n, size_t c, const float* x, float* y, int64_t* idx,
                                         const struct weft_f32_pool_params* p) {
  for (size_t j = 0; j < n; j++) {
    const float* xj = (const float*)((const char*)x + j * p->xs);
    float* yj = (float*)((char*)y + j * p->ys);
    int64_t* ij = idx + j * (p->ys / 4);
    const int64_t i0 = p->i0 + (int64_t)j * p->istep;
    size_t k = 0;
    for (; k + 4 <= c; k += 4) max_c_idx_block(xj, yj, ij, i0, k, 0, p);
    if (k < c) max_c_idx_block(xj, yj, ij, i0, k, (c - k) * 4, p);
  }
}
