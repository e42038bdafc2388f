/* Kernel families, naming, and the per-ISA selection table.
 *
 * A kernel is written once against vec/vec.h and compiled once per backend
 * (native: sse2 + scalar; wasm: wasm128 + scalar); WEFT_UKERNEL(f32_vadd, u8)
 * names it weft__f32_vadd__sse2_u8 / __wasm128_u8 / __scalar_u8 from the
 * backend vec.h picked. kernels.inc lists every kernel once; prototypes and
 * the tables expand from it. Counts are elements, strides bytes; no kernel
 * allocates, threads or sees a tensor; outputs may alias inputs exactly. */
#ifndef WEFT_KERNELS_H
#define WEFT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "weft/dtype.h"

#define WEFT__UK_CAT(op, isa, u) weft__##op##__##isa##_##u
#define WEFT__UK_NAME(op, isa, u) WEFT__UK_CAT(op, isa, u)
#define WEFT_UKERNEL(op, u) WEFT__UK_NAME(op, WEFT_VEC_ISA, u)

struct weft_f32_binary_params {
  float alpha; /* add/sub: a + alpha * b (1 for the other ops) */
};
struct weft_f32_unary_params {
  int approximate; /* gelu: 0 'none' (erf), 1 'tanh' */
  float a, b, c;   /* hardtanh: min, max; leaky_relu: slope; elu: alpha, scale, input_scale */
};

/* contiguous n elements x -> y (copies, casts) */
typedef void weft_xcopy_fn(size_t n, const void* x, void* y);
/* strided copy: y[i*ys] = x[i*xs], byte strides (xs 0 broadcasts) */
typedef void weft_xcopy_strided_fn(size_t n, const void* x, ptrdiff_t xs, void* y, ptrdiff_t ys);
/* y[i * c + j] = x[j][i] for i < n, j < c (2..4 rows stored interleaved) */
typedef void weft_xinterleave_fn(size_t n, size_t c, const void* const* x, void* y);
/* y[i * cout + j] = x[i * cin + j] for i < n, j < cout < cin <= 4: the first
 * cout of each cin interleaved 4-byte elements (channels of a pixel) */
typedef void weft_xpick_fn(size_t n, size_t cin, size_t cout, const void* x, void* y);
/* y[0..n) = *value */
typedef void weft_xfill_fn(size_t n, const void* value, void* y);
/* contiguous dtype conversion */
typedef void weft_vcvt_fn(size_t n, const void* x, void* y);
/* out[j*out_stride + i] = in[i*in_stride + j] for i < height, j < width (byte strides) */
typedef void weft_transpose_fn(const void* in, void* out, size_t in_stride, size_t out_stride,
                               size_t width, size_t height);
/* y = a op b; the ...c kernels read b[0] only */
typedef void weft_f32_vbinary_fn(size_t n, const float* a, const float* b, float* y,
                                 const struct weft_f32_binary_params* p);
/* y[i*c + j] = a[i*c + j] op b[j][i] for i < n, j < c (2..4): a and y
 * interleave c channels, b is c planes (vbinary.c's ..._zip) */
typedef void weft_f32_vbinary_zip_fn(size_t n, size_t c, const float* a, const float* const* b, float* y,
                                     const struct weft_f32_binary_params* p);
/* y[j][i] = a[j][i] op b[i*c + j]: a and y are c planes, b interleaves them */
typedef void weft_f32_vbinary_unzip_fn(size_t n, size_t c, const float* const* a, const float* b, float* const* y,
                                       const struct weft_f32_binary_params* p);
/* y = (a op b) as bool bytes 0/1; the ...c kernels read b[0] only */
typedef void weft_f32_vcmp_fn(size_t n, const float* a, const float* b, uint8_t* y);
typedef void weft_f32_vunary_fn(size_t n, const float* x, float* y, const struct weft_f32_unary_params* p);
/* one contiguous row (n > 0) reduced to a float (reduce.c) */
typedef float weft_f32_rsum_fn(size_t n, const float* x);
/* softmax's pass (vunary_math.c): y[i] = exp(x[i] - c) when y is not NULL,
 * returns the sum of exp(x[i] - c), cascaded as f32_rsum; for c >= every
 * x[i], results below 2^-126 flush to 0 */
typedef float weft_f32_rexpsum_fn(size_t n, const float* x, float c, float* y);
/* softmax (log_softmax when log) down w <= 64 columns of len rows, row
 * strides xs / ys in elements: each column shifted by its max (vunary_math.c) */
typedef void weft_f32_softmax_cols_fn(size_t len, size_t w, const float* x, size_t xs, float* y, size_t ys, int log);
/* y[j] += sum_i x[i * row_stride bytes + j], j < cols (reduce.c) */
typedef void weft_f32_vsum_rows_fn(size_t rows, size_t cols, const float* x, size_t row_stride, float* y);
/* scans (scan.c), accumulated in double: y[i*ys] = x[0] op ... op x[i*xs] (bytes) */
typedef void weft_f32_scan_fn(size_t n, const float* x, size_t xs, float* y, size_t ys);
/* the scan down rows, per column: y[i][j] = x[0][j] op ... op x[i][j], j < cols; row strides in bytes */
typedef void weft_f32_vscan_rows_fn(size_t rows, size_t cols, const float* x, size_t xs, float* y, size_t ys);
/* GEMM micro-kernels (gemm.c): an mr x nc (<= MR x NR) tile of C, row stride
 * cs elements, from a packed A panel (kc x MR) and B panel (kc x NR):
 * C = alpha * A B, or C += alpha * A B when accumulate; then, when clamp,
 * C = clamp(C, lo, hi) as it is stored (a fused relu / relu6; PyTorch's
 * clamp: NaN and -0 stay). Initializers that stop after accumulate leave clamp off. */
struct weft_f32_gemm_params {
  float alpha;
  int accumulate;
  int clamp;
  float lo, hi;
  const float* bias; /* not accumulating: C = alpha * A B + bias[j] (NULL: + 0) */
  /* 0: A is a packed panel; else A is read in place as mr rows lda floats
   * apart (row i, column k at a[i * lda + k]): a 1x1 NHWC convolution's
   * pixels, which need no packing */
  size_t lda;
};
struct weft_f64_gemm_params {
  double alpha;
  int accumulate;
  int clamp;
  double lo, hi;
  const double* bias;
};
/* matrix-vector products (gemv.c) for m = 1..4 rows x (row i at x + i * ldx,
 * contiguous k) into y (row i at y + i * ldy, n contiguous values), the
 * weight read once, unpacked: f32_gemv_t y = x @ W^T with W's row j (k
 * values) at w + j * ldw; f32_gemv_n y = x @ W with W's row kk (n values) at
 * w + kk * ldw. alpha, accumulate, bias and clamp as the GEMM's params. */
typedef void weft_f32_gemv_fn(size_t m, size_t n, size_t k, const float* x, size_t ldx, const float* w,
                              ptrdiff_t ldw, float* y, size_t ldy, const struct weft_f32_gemm_params* p);
/* A convolution's epilogue over n outputs in place (conv_epilogue.c):
 * y[i] = min(max(y[i] + r[i], lo), hi), r NULL adding nothing, NaN kept. */
struct weft_f32_clamp_params {
  float lo, hi;
};
struct weft_f64_clamp_params {
  double lo, hi;
};
typedef void weft_f32_vepilogue_fn(size_t n, const float* r, float* y, const struct weft_f32_clamp_params* p);
typedef void weft_f64_vepilogue_fn(size_t n, const double* r, double* y, const struct weft_f64_clamp_params* p);
typedef void weft_f32_gemm_fn(size_t mr, size_t nc, size_t kc, const float* a, const float* b, float* c, size_t cs,
                              const struct weft_f32_gemm_params* p);
typedef void weft_f64_gemm_fn(size_t mr, size_t nc, size_t kc, const double* a, const double* b, double* c,
                              size_t cs, const struct weft_f64_gemm_params* p);
/* depthwise convolution (conv.c): one NHWC output pixel over c channels,
 * y[j] = bias[j] + sum_t w[t*c + j] * x[t][j] (bias may be NULL); or n
 * outputs of one NCHW row, y[i] = bias + sum_t w[t] * x[t][i*xs] (xs in
 * elements) */
typedef void weft_f32_dwconv_row_fn(size_t n, size_t taps, const float* const* x, size_t xs, const float* w,
                                    float bias, float* y);
typedef void weft_f64_dwconv_nhwc_fn(size_t c, size_t taps, const double* const* x, const double* w,
                                     const double* bias, double* y);
typedef void weft_f64_dwconv_row_fn(size_t n, size_t taps, const double* const* x, size_t xs, const double* w,
                                    double bias, double* y);
/* n NHWC output pixels of one run (consecutive in y, c apart), each from
 * its own taps input pointers (pixel q's tap t at x[q * taps + t]), with the
 * conv epilogue in the store:
 *   y[q*c + j] = clamp(bias[j] + sum_t w[t*c + j] * x[q*taps + t][j] + r[q*c + j], lo, hi)
 * (bias, r NULL: nothing added): the taps in order, then the residual,
 * then the clamp (f32_conv_epilogue's) */
typedef void weft_f32_dwconv_nhwc_px_fn(size_t n, size_t c, size_t taps, const float* const* x, const float* w,
                                        const float* bias, const float* r, float* y,
                                        const struct weft_f32_clamp_params* p);
/* its weight gradient over one NCHW plane: acc[t] += sum over i < ho, j < wo
 * of gy[i * wo + j] * x[t][i * xr + j * xs] (xr, xs in elements) */
typedef void weft_f32_dwconv_wgrad_fn(size_t ho, size_t wo, size_t taps, const float* const* x, size_t xr, size_t xs,
                                      const float* gy, float* acc);
typedef void weft_f64_dwconv_wgrad_fn(size_t ho, size_t wo, size_t taps, const double* const* x, size_t xr,
                                      size_t xs, const double* gy, double* acc);

/* normalizations (norm.c): moments sum(x - k), sum((x - k)^2) of a row, or
 * per column j over rows (row strides in bytes, shift k[j]), added into
 * doubles; the backward's sum(g), sum(g * (x - k)) with g = dy (* w when w);
 * y = (x * a + b) * w + c (w, c NULL: 1, 0) or per column y = x * a + b;
 * dx = dy * a * w + x * b + c (w NULL: 1) or per column dx = dy * a + x * b + c */
typedef void weft_f32_rmoments_fn(size_t n, const float* x, float k, double* out);
typedef void weft_f32_vmoments_rows_fn(size_t rows, size_t cols, const float* x, size_t xs, const float* k, double* s,
                                       double* q);
typedef void weft_f32_rdotc_fn(size_t n, const float* dy, const float* x, const float* w, float k, double* out);
typedef void weft_f32_vdotc_rows_fn(size_t rows, size_t cols, const float* dy, size_t dys, const float* x, size_t xs,
                                    const float* k, double* s, double* q);
typedef void weft_f32_vnorm_fn(size_t n, const float* x, float a, float b, const float* w, const float* c, float* y);
typedef void weft_f32_vnorm_c_fn(size_t n, const float* x, const float* a, const float* b, float* y);
typedef void weft_f32_vnorm_bwd_fn(size_t n, const float* dy, const float* x, const float* w, float a, float b,
                                   float c, float* dx);
typedef void weft_f32_vnorm_bwd_c_fn(size_t n, const float* dy, const float* x, const float* a, const float* b,
                                     const float* c, float* dx);

/* 2-D pooling (pool.c). Every window element a kernel is given lies inside
 * the input (the driver clips windows at the borders).
 *   NCHW, along one output row of one plane (f32_pool_fn): y[j], j < n, is
 *   the max / average of the kh x kw window whose first element is
 *   x[j * sw]; window row r is r * rs bytes on, column q q * dw elements on.
 *   NHWC, across channels (f32_pool_c_fn): n outputs of c channels; output j
 *   reads x + j * xs bytes, window row r + r * rs, column q + q * cs bytes,
 *   and writes y + j * ys bytes (c values).
 * max: NaN wins (PyTorch's `val > max || isnan(val)`); an empty window
 * (kh or kw 0) gives -inf. avg: the window's sum divided by divisor. */
struct weft_f32_pool_params {
  size_t kh, kw, sw, dw;
  size_t rs, cs, xs, ys;
  float divisor;
  /* max with indices: output j's element (r, q) has index
   * i0 + j * istep + r * irs + q * ics (flat h * W + w in its plane) */
  int64_t i0, istep, irs, ics;
};
typedef void weft_f32_pool_fn(size_t n, const float* x, float* y, const struct weft_f32_pool_params* p);
typedef void weft_f32_pool_c_fn(size_t n, size_t c, const float* x, float* y, const struct weft_f32_pool_params* p);
/* max with indices, NCHW along one output row (f32_pool_fn's windows): the
 * index of output j's element (r, q) is i0 + j * istep + r * irs + q * ics */
typedef void weft_f32_pool_idx_fn(size_t n, const float* x, float* y, int64_t* idx,
                                  const struct weft_f32_pool_params* p);
/* ... and the int64 index of each maximum at idx + j * ys / 4 (elements: the
 * layout of y, in int64) */
typedef void weft_f32_pool_c_idx_fn(size_t n, size_t c, const float* x, float* y, int64_t* idx,
                                    const struct weft_f32_pool_params* p);

/* resizing (resize.c): y[j] = x[0][j] * w[0] + ... + x[k-1][j] * w[k-1], j < n
 * (k >= 1 rows, summed left to right); and one input row's horizontal pass,
 * y[j] = sum over m < k of x[idx[j * k + m]] * w[j * k + m], in m order */
typedef void weft_f32_resize_blend_fn(size_t n, size_t k, const float* const* x, const float* w, float* y);
/* n pixels of c channels: y[j * c + i] = sum over m < k of x[j * k + m][i] * w[j * k + m] */
typedef void weft_f32_resize_pixels_fn(size_t n, size_t c, size_t k, const float* const* x, const float* w, float* y);
typedef void weft_f32_resize_gather_fn(size_t n, size_t k, const float* x, const int64_t* idx, const float* w,
                                       float* y);

/* attention (attention.c): the online softmax of rows x n scores (row
 * stride ss elements) with running max m, sum l, and the accumulator scale
 * alpha out; y[j] = alpha * q . k[j * ks] over e (n keys); acc[0, e) +=
 * sum_j p[j] * v[j * vs]; y[j] = p[j] * (dp[j] - d) */
typedef void weft_f32_attn_softmax_fn(size_t rows, size_t n, float* s, size_t ss, float* m, float* l, float* alpha);
typedef void weft_f32_attn_dot_rows_fn(size_t n, size_t e, const float* q, const float* k, size_t ks, float alpha,
                                       float* y);
typedef void weft_f32_attn_axpy_rows_fn(size_t n, size_t e, const float* p, const float* v, size_t vs, float* acc);
typedef void weft_f32_attn_dscore_fn(size_t n, const float* p, const float* dp, float d, float* y);
/* cdist (cdist.c): out[q] = the p-norm of a - b[q*c ..] over c columns, q < r2; kind 1, 2, 3: p = 1, 2, inf */
typedef void weft_f32_cdist_rows_fn(size_t c, size_t r2, const float* a, const float* b, float* out, int kind);

/* prototypes for every backend built */
#define K(family, name, u)                                 \
  weft_##family##_fn WEFT__UK_NAME(name, sse2, u);         \
  weft_##family##_fn WEFT__UK_NAME(name, wasm128, u);      \
  weft_##family##_fn WEFT__UK_NAME(name, scalar, u);
#include "kernels/kernels.inc"
#undef K

typedef struct weft_kernels {
  const char* isa; /* "sse2", "wasm128", "scalar" */
#define K(family, name, u) weft_##family##_fn* name;
#include "kernels/kernels.inc"
#undef K
} weft_kernels;

/* The best backend this build has, and the portable one (tests, fallbacks). */
const weft_kernels* weft__kernels(void);
const weft_kernels* weft__kernels_scalar(void);

/* Element-size-typed copies of table k (size 1, 2, 4 or 8; NULL otherwise). */
weft_xcopy_fn* weft__copy_kernel(const weft_kernels* k, size_t elem_size);
weft_xcopy_strided_fn* weft__copy_strided_kernel(const weft_kernels* k, size_t elem_size);
weft_xfill_fn* weft__fill_kernel(const weft_kernels* k, size_t elem_size);
weft_transpose_fn* weft__transpose_kernel(const weft_kernels* k, size_t elem_size);

/* Casts with PyTorch's conversion semantics (see cast_ref.c), every pair:
 * the SIMD kernel of table k when one exists, else the generic one.
 * Same dtype is a copy. */
weft_vcvt_fn* weft__cast_kernel(const weft_kernels* k, weft_dtype from, weft_dtype to);
weft_xcopy_strided_fn* weft__cast_strided_kernel(weft_dtype from, weft_dtype to);
/* The generic (plain C, one element at a time) cast: the reference. */
weft_vcvt_fn* weft__cast_ref_kernel(weft_dtype from, weft_dtype to);

/* One float through the f32 transcendental kernels' code (vunary_math.c),
 * bit-identical to them: the plain-C elementwise rows use these. */
float weft__f32_exp_1(float x);
float weft__f32_expm1_1(float x);
float weft__f32_log_1(float x);
float weft__f32_log1p_1(float x);
float weft__f32_sigmoid_1(float x);
float weft__f32_tanh_1(float x);
float weft__f32_erf_1(float x);
float weft__f32_sin_1(float x);
float weft__f32_cos_1(float x);
float weft__f32_tan_1(float x);
float weft__f32_gelu_1(float x, int approximate); /* approximate: 0 'none', 1 'tanh' */
float weft__f32_silu_1(float x);
float weft__f32_elu_1(float x, const struct weft_f32_unary_params* p); /* p: a alpha, b scale, c input_scale */

#endif
