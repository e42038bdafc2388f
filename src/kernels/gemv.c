/* Matrix-vector kernels: a few (m <= 4) input rows x against a weight
 * streamed once, the products of a token-generation step. Unlike the GEMM
 * micro-kernels nothing is packed: with so few rows the weight is read once
 * either way, so packing it would double the memory traffic.
 *
 *   f32_gemv_t  y = x @ W^T, W [n x k] row-major (nn.Linear's weight): dot
 *               products along W's contiguous k. m = 1: one weight row at a
 *               time, straight through, four accumulators (dot_row); m > 1:
 *               R weight rows at once so each x vector loaded serves R rows
 *               (R = 4 for m = 2, 2 above, so R * m accumulators stay in
 *               registers); the four lanes are summed at the end as
 *               (l0 + l2) + (l1 + l3).
 *   f32_gemv_n  y = x @ W, W [k x n] row-major: each k adds x[k] * W[k, :]
 *               into a strip of 32 (m = 1: two cache lines a row, eight
 *               independent sums), 16 (m = 2) or 8 columns held in
 *               registers down all of k, so y is written once.
 *
 * For a given m every output's sum runs in the same order whatever the tile, strip or
 * thread split, and every backend (vec_scalar.h has wasm's semantics) gives
 * the same bits. Epilogue as the GEMM's: alpha * sum, then + y (accumulate)
 * or + bias[j], then the clamp. */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

/* The tiles take their shape (R, M, V) as arguments; forced inline into each
 * case they become constants, the loops over them unroll and the
 * accumulators stay in registers. Left to itself clang keeps one generic
 * copy whose accumulator arrays live in (wasm: linear) memory, 6x slower. */
#define TILE static inline __attribute__((always_inline))

static inline float epilogue(float v, float* y, size_t j, const struct weft_f32_gemm_params* p) {
  if (p->alpha != 1.0f) v *= p->alpha;
  if (p->accumulate) v = *y + v;
  else if (p->bias) v = v + p->bias[j];
  if (p->clamp) v = v < p->lo ? p->lo : v > p->hi ? p->hi : v; /* NaN compares false: kept */
  return v;
}

static inline float lanes_sum(wv128 v) {
  float l[4];
  wv_v128_store(l, v);
  return (l[0] + l[2]) + (l[1] + l[3]);
}

/* ---- x @ W^T ---- */

/* R weight rows (w, w + ldw, ...) against M x rows: acc[r][i] holds the
 * lane sums of w_r . x_i; the last k % 4 through zero-filled loads. */
TILE void dot_tile(const int R, const int M, size_t k, const float* x, size_t ldx, const float* w,
                   ptrdiff_t ldw, float* y, size_t ldy, size_t j, const struct weft_f32_gemm_params* p) {
  wv128 acc[4][4];
  for (int r = 0; r < R; r++)
    for (int i = 0; i < M; i++) acc[r][i] = wv_v128_zero();
  size_t kk = 0;
  for (; kk + 4 <= k; kk += 4) {
    wv128 xv[4];
    for (int i = 0; i < M; i++) xv[i] = wv_v128_load(x + i * ldx + kk);
    for (int r = 0; r < R; r++) {
      const wv128 wv = wv_v128_load(w + r * ldw + kk);
      for (int i = 0; i < M; i++) acc[r][i] = wv_f32x4_muladd(wv, xv[i], acc[r][i]);
    }
  }
  if (kk < k) {
    const size_t tail = (k - kk) * 4;
    wv128 xv[4];
    for (int i = 0; i < M; i++) xv[i] = wv_v128_load_partial(x + i * ldx + kk, tail);
    for (int r = 0; r < R; r++) {
      const wv128 wv = wv_v128_load_partial(w + r * ldw + kk, tail);
      for (int i = 0; i < M; i++) acc[r][i] = wv_f32x4_muladd(wv, xv[i], acc[r][i]);
    }
  }
  for (int i = 0; i < M; i++)
    for (int r = 0; r < R; r++) {
      float* yo = y + i * ldy + j + r;
      *yo = epilogue(lanes_sum(acc[r][i]), yo, j + r, p);
    }
}

/* One x row against one weight row read straight through, in four
 * accumulators (k's blocks of 16 floats dealt round-robin, the last partial
 * vector into the next in turn), combined as (a0 + a1) + (a2 + a3). With a
 * single x row the weight is the only stream: read row after row it is one
 * sequential stream, which the hardware prefetcher keeps up with, where R
 * rows side by side are R streams a row apart that, out of the caches, read
 * at about half the rate (stories15M's 32000 x 288 classifier in wasm: 6 vs
 * 16 GB/s); the four accumulators keep the adds off one dependency chain. */
TILE void dot_row(size_t k, const float* x, const float* w, float* y, size_t j, const struct weft_f32_gemm_params* p) {
  wv128 a[4] = {wv_v128_zero(), wv_v128_zero(), wv_v128_zero(), wv_v128_zero()};
  size_t kk = 0;
  for (; kk + 16 <= k; kk += 16)
    for (int u = 0; u < 4; u++) a[u] = wv_f32x4_muladd(wv_v128_load(w + kk + 4 * u), wv_v128_load(x + kk + 4 * u), a[u]);
  int u = 0;
  for (; kk + 4 <= k; kk += 4, u++) a[u] = wv_f32x4_muladd(wv_v128_load(w + kk), wv_v128_load(x + kk), a[u]);
  if (kk < k) {
    const size_t tail = (k - kk) * 4;
    a[u] = wv_f32x4_muladd(wv_v128_load_partial(w + kk, tail), wv_v128_load_partial(x + kk, tail), a[u]);
  }
  y[j] = epilogue(lanes_sum(wv_f32x4_add(wv_f32x4_add(a[0], a[1]), wv_f32x4_add(a[2], a[3]))), y + j, j, p);
}

/* n weight rows in tiles of R, the rest one at a time */
TILE void dot_rows(const int R, const int M, size_t n, size_t k, const float* x, size_t ldx,
                   const float* w, ptrdiff_t ldw, float* y, size_t ldy,
                   const struct weft_f32_gemm_params* p) {
  size_t j = 0;
  for (; j + (size_t)R <= n; j += (size_t)R) dot_tile(R, M, k, x, ldx, w + (ptrdiff_t)j * ldw, ldw, y, ldy, j, p);
  for (; j < n; j++) dot_tile(1, M, k, x, ldx, w + (ptrdiff_t)j * ldw, ldw, y, ldy, j, p);
}

void WEFT_UKERNEL(f32_gemv_t, u4)(size_t m, size_t n, size_t k, const float* x, size_t ldx, const float* w,
                                  ptrdiff_t ldw, float* y, size_t ldy, const struct weft_f32_gemm_params* p) {
  switch (m) {
    case 1:
      for (size_t j = 0; j < n; j++) dot_row(k, x, w + (ptrdiff_t)j * ldw, y, j, p);
      break;
    case 2: dot_rows(4, 2, n, k, x, ldx, w, ldw, y, ldy, p); break;
    case 3: dot_rows(2, 3, n, k, x, ldx, w, ldw, y, ldy, p); break;
    default: dot_rows(2, 4, n, k, x, ldx, w, ldw, y, ldy, p); break;
  }
}

/* ---- x @ W ---- */

/* V vectors (4V columns, the last nc <= 4V of them valid) of M rows of y,
 * down all k rows of W. A partial strip loads through zero-filled buffers. */
TILE void axpy_strip(const int V, const int M, size_t nc, size_t k, const float* x, size_t ldx,
                     const float* w, ptrdiff_t ldw, float* y, size_t ldy, size_t j,
                     const struct weft_f32_gemm_params* p) {
  wv128 acc[4][8];
  for (int i = 0; i < M; i++)
    for (int v = 0; v < V; v++) acc[i][v] = wv_v128_zero();
  const int full = nc == (size_t)(4 * V);
  for (size_t kk = 0; kk < k; kk++) {
    const float* wk = w + (ptrdiff_t)kk * ldw;
    wv128 wv[8];
    for (int v = 0; v < V; v++) {
      size_t left = nc > (size_t)(4 * v) ? nc - (size_t)(4 * v) : 0;
      wv[v] = full || left >= 4 ? wv_v128_load(wk + 4 * v) : wv_v128_load_partial(wk + 4 * v, left * 4);
    }
    for (int i = 0; i < M; i++) {
      const wv128 xi = wv_f32x4_splat(x[i * ldx + kk]);
      for (int v = 0; v < V; v++) acc[i][v] = wv_f32x4_muladd(xi, wv[v], acc[i][v]);
    }
  }
  for (int i = 0; i < M; i++)
    for (int v = 0; v < V && (size_t)(4 * v) < nc; v++) {
      float lanes[4];
      wv_v128_store(lanes, acc[i][v]);
      float* yv = y + i * ldy + j + 4 * v;
      for (size_t c = 0; c < 4 && 4 * (size_t)v + c < nc; c++) yv[c] = epilogue(lanes[c], yv + c, j + 4 * v + c, p);
    }
}

TILE void axpy_cols(const int V, const int M, size_t n, size_t k, const float* x, size_t ldx,
                    const float* w, ptrdiff_t ldw, float* y, size_t ldy,
                    const struct weft_f32_gemm_params* p) {
  const size_t s = 4 * (size_t)V;
  size_t j = 0;
  for (; j + s <= n; j += s) axpy_strip(V, M, s, k, x, ldx, w + j, ldw, y, ldy, j, p);
  for (; j < n; j += 4) axpy_strip(1, M, n - j < 4 ? n - j : 4, k, x, ldx, w + j, ldw, y, ldy, j, p);
}

void WEFT_UKERNEL(f32_gemv_n, u16)(size_t m, size_t n, size_t k, const float* x, size_t ldx, const float* w,
                                   ptrdiff_t ldw, float* y, size_t ldy, const struct weft_f32_gemm_params* p) {
  switch (m) {
    case 1: axpy_cols(8, 1, n, k, x, ldx, w, ldw, y, ldy, p); break;
    case 2: axpy_cols(4, 2, n, k, x, ldx, w, ldw, y, ldy, p); break;
    case 3: axpy_cols(2, 3, n, k, x, ldx, w, ldw, y, ldy, p); break;
    default: axpy_cols(2, 4, n, k, x, ldx, w, ldw, y, ldy, p); break;
  }
}
