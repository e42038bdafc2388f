/* Normalization kernels (batch_norm, layer_norm, group_norm; drivers in
 * src/ops/cpu/normalization.c), float32:
 *
 *   f32_rmoments      a contiguous row's shifted moments, sum(x - k) and
 *                     sum((x - k)^2), added into two doubles. k is a value of
 *                     the data (its first element), so the variance
 *                     q/n - (s/n)^2 does not cancel as the plain sum of
 *                     squares would when the mean is large.
 *   f32_vmoments_rows the same per column j over rows (NHWC: channels are
 *                     the inner dim), shift k[j].
 *   f32_rdotc         a row's sum(g) and sum(g * (x - k)), g = dy (* w):
 *                     what every normalization's backward reduces.
 *   f32_vdotc_rows    the same per column over rows.
 *   f32_vnorm         y = (x * a + b) * w + c (w, c vectors or NULL: 1, 0):
 *                     the normalization itself, one pass.
 *   f32_vnorm_c       y = x * a + b with per-column a, b (an NHWC row).
 *   f32_vnorm_bwd     dx = dy * a * w + x * b + c (w NULL: 1): the input's
 *                     gradient, linear in dy and x per channel or row.
 *   f32_vnorm_bwd_c   dx = dy * a + x * b + c with per-column a, b, c.
 *
 * The reductions sum 16 elements per lane in float32, then fold each block
 * into float64 accumulators (a two-level sum: the float32 error stays that of
 * 16 terms whatever n is); the lanes and blocks combine in a fixed order, so
 * every backend (vec_scalar.h has wasm's semantics) gives the same bits.
 * Tails run one element at a time in double. */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

/* v's four lanes added into two float64 pairs (lanes 0,1 and 2,3) */
static inline void fold_f64(wv128 v, wv128* lo, wv128* hi) {
  *lo = wv_f64x2_add(*lo, wv_f64x2_promote_low_f32x4(v));
  *hi = wv_f64x2_add(*hi, wv_f64x2_promote_low_f32x4(wv_i64x2_interleave_hi(v, v)));
}

static inline double lanes_f64(wv128 lo, wv128 hi) {
  double a[2], b[2];
  wv_v128_store(a, lo);
  wv_v128_store(b, hi);
  return (a[0] + a[1]) + (b[0] + b[1]);
}

/* four f64 lanes (two pairs) added into out[0..3] */
static inline void add4_f64(double* out, wv128 lo, wv128 hi) {
  double a[2], b[2];
  wv_v128_store(a, lo);
  wv_v128_store(b, hi);
  out[0] += a[0], out[1] += a[1], out[2] += b[0], out[3] += b[1];
}

void WEFT_UKERNEL(f32_rmoments, u16)(size_t n, const float* x, float k, double* out) {
  const wv128 vk = wv_f32x4_splat(k), z = wv_f64x2_splat(0.0);
  wv128 slo = z, shi = z, qlo = z, qhi = z;
  for (; n >= 64; n -= 64) {
    wv128 s0 = wv_v128_zero(), s1 = s0, q0 = s0, q1 = s0;
    for (int i = 0; i < 8; i++, x += 8) {
      wv128 d0 = wv_f32x4_sub(wv_v128_load(x), vk), d1 = wv_f32x4_sub(wv_v128_load(x + 4), vk);
      s0 = wv_f32x4_add(s0, d0);
      s1 = wv_f32x4_add(s1, d1);
      q0 = wv_f32x4_add(q0, wv_f32x4_mul(d0, d0));
      q1 = wv_f32x4_add(q1, wv_f32x4_mul(d1, d1));
    }
    fold_f64(wv_f32x4_add(s0, s1), &slo, &shi);
    fold_f64(wv_f32x4_add(q0, q1), &qlo, &qhi);
  }
  double s = lanes_f64(slo, shi), q = lanes_f64(qlo, qhi);
  for (; n > 0; n--, x++) {
    double d = (double)(*x - k);
    s += d;
    q += (double)((*x - k) * (*x - k));
  }
  out[0] += s;
  out[1] += q;
}

void WEFT_UKERNEL(f32_rdotc, u16)(size_t n, const float* dy, const float* x, const float* w, float k, double* out) {
  const wv128 vk = wv_f32x4_splat(k), z = wv_f64x2_splat(0.0);
  wv128 slo = z, shi = z, qlo = z, qhi = z;
  for (; n >= 64; n -= 64) {
    wv128 s0 = wv_v128_zero(), s1 = s0, q0 = s0, q1 = s0;
    for (int i = 0; i < 8; i++, x += 8, dy += 8) {
      wv128 g0 = wv_v128_load(dy), g1 = wv_v128_load(dy + 4);
      if (w) {
        g0 = wv_f32x4_mul(g0, wv_v128_load(w));
        g1 = wv_f32x4_mul(g1, wv_v128_load(w + 4));
        w += 8;
      }
      s0 = wv_f32x4_add(s0, g0);
      s1 = wv_f32x4_add(s1, g1);
      q0 = wv_f32x4_add(q0, wv_f32x4_mul(g0, wv_f32x4_sub(wv_v128_load(x), vk)));
      q1 = wv_f32x4_add(q1, wv_f32x4_mul(g1, wv_f32x4_sub(wv_v128_load(x + 4), vk)));
    }
    fold_f64(wv_f32x4_add(s0, s1), &slo, &shi);
    fold_f64(wv_f32x4_add(q0, q1), &qlo, &qhi);
  }
  double s = lanes_f64(slo, shi), q = lanes_f64(qlo, qhi);
  for (; n > 0; n--, x++, dy++) {
    float g = w ? *dy * *w++ : *dy;
    s += (double)g;
    q += (double)(g * (*x - k));
  }
  out[0] += s;
  out[1] += q;
}

#define ROW_BLOCK 16

/* the column sums of both row kernels: g = dy, or (dy NULL) d = x - k itself */
static inline void column_sums(size_t rows, size_t cols, const float* dy, size_t dys, const float* x, size_t xs,
                               const float* k, double* s, double* q) {
  for (size_t r0 = 0; r0 < rows; r0 += ROW_BLOCK) {
    size_t nr = rows - r0 < ROW_BLOCK ? rows - r0 : ROW_BLOCK;
    const char *xb = (const char*)x + r0 * xs, *gb = dy ? (const char*)dy + r0 * dys : NULL;
    size_t j = 0;
    for (; j + 4 <= cols; j += 4) {
      const wv128 vk = wv_v128_load(k + j), z = wv_f64x2_splat(0.0);
      wv128 sa = wv_v128_zero(), qa = sa;
      for (size_t r = 0; r < nr; r++) {
        wv128 d = wv_f32x4_sub(wv_v128_load((const float*)(xb + r * xs) + j), vk);
        wv128 g = gb ? wv_v128_load((const float*)(gb + r * dys) + j) : d;
        sa = wv_f32x4_add(sa, g);
        qa = wv_f32x4_add(qa, wv_f32x4_mul(g, d));
      }
      wv128 slo = z, shi = z, qlo = z, qhi = z;
      fold_f64(sa, &slo, &shi);
      fold_f64(qa, &qlo, &qhi);
      add4_f64(s + j, slo, shi);
      add4_f64(q + j, qlo, qhi);
    }
    for (; j < cols; j++)
      for (size_t r = 0; r < nr; r++) {
        float d = ((const float*)(xb + r * xs))[j] - k[j], g = gb ? ((const float*)(gb + r * dys))[j] : d;
        s[j] += (double)g;
        q[j] += (double)(g * d);
      }
  }
}

void WEFT_UKERNEL(f32_vmoments_rows, u4)(size_t rows, size_t cols, const float* x, size_t xs, const float* k,
                                        double* s, double* q) {
  column_sums(rows, cols, NULL, 0, x, xs, k, s, q);
}

void WEFT_UKERNEL(f32_vdotc_rows, u4)(size_t rows, size_t cols, const float* dy, size_t dys, const float* x, size_t xs,
                                     const float* k, double* s, double* q) {
  column_sums(rows, cols, dy, dys, x, xs, k, s, q);
}

/* y = (x * a + b) * w + c over one vector; w, c NULL: 1, 0 */
static inline wv128 norm4(wv128 v, wv128 va, wv128 vb, const float* w, const float* c) {
  v = wv_f32x4_add(wv_f32x4_mul(v, va), vb);
  if (w) v = wv_f32x4_mul(v, wv_v128_load(w));
  if (c) v = wv_f32x4_add(v, wv_v128_load(c));
  return v;
}

void WEFT_UKERNEL(f32_vnorm, u8)(size_t n, const float* x, float a, float b, const float* w, const float* c,
                                float* y) {
  const wv128 va = wv_f32x4_splat(a), vb = wv_f32x4_splat(b);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    wv128 y0 = norm4(wv_v128_load(x + i), va, vb, w ? w + i : NULL, c ? c + i : NULL);
    wv128 y1 = norm4(wv_v128_load(x + i + 4), va, vb, w ? w + i + 4 : NULL, c ? c + i + 4 : NULL);
    wv_v128_store(y + i, y0);
    wv_v128_store(y + i + 4, y1);
  }
  for (; i < n; i++) {
    float v = x[i] * a + b;
    if (w) v *= w[i];
    if (c) v += c[i];
    y[i] = v;
  }
}

void WEFT_UKERNEL(f32_vnorm_c, u8)(size_t n, const float* x, const float* a, const float* b, float* y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    wv128 y0 = wv_f32x4_add(wv_f32x4_mul(wv_v128_load(x + i), wv_v128_load(a + i)), wv_v128_load(b + i));
    wv128 y1 = wv_f32x4_add(wv_f32x4_mul(wv_v128_load(x + i + 4), wv_v128_load(a + i + 4)), wv_v128_load(b + i + 4));
    wv_v128_store(y + i, y0);
    wv_v128_store(y + i + 4, y1);
  }
  for (; i < n; i++) y[i] = x[i] * a[i] + b[i];
}

void WEFT_UKERNEL(f32_vnorm_bwd, u8)(size_t n, const float* dy, const float* x, const float* w, float a, float b,
                                    float c, float* dx) {
  const wv128 va = wv_f32x4_splat(a), vb = wv_f32x4_splat(b), vc = wv_f32x4_splat(c);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    wv128 g = wv_v128_load(dy + i);
    if (w) g = wv_f32x4_mul(g, wv_v128_load(w + i));
    wv128 v = wv_f32x4_add(wv_f32x4_add(wv_f32x4_mul(g, va), wv_f32x4_mul(wv_v128_load(x + i), vb)), vc);
    wv_v128_store(dx + i, v);
  }
  for (; i < n; i++) {
    float g = w ? dy[i] * w[i] : dy[i];
    dx[i] = (g * a + x[i] * b) + c;
  }
}

void WEFT_UKERNEL(f32_vnorm_bwd_c, u8)(size_t n, const float* dy, const float* x, const float* a, const float* b,
                                      const float* c, float* dx) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    wv128 v = wv_f32x4_add(wv_f32x4_mul(wv_v128_load(dy + i), wv_v128_load(a + i)),
                           wv_f32x4_mul(wv_v128_load(x + i), wv_v128_load(b + i)));
    wv_v128_store(dx + i, wv_f32x4_add(v, wv_v128_load(c + i)));
  }
  for (; i < n; i++) dx[i] = (dy[i] * a[i] + x[i] * b[i]) + c[i];
}
