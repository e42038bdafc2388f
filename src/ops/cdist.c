/* torch.cdist (issue 25): PyTorch 1.13's cdist and the ops it reaches.
 *
 *   cdist            composite: the checks of 1.13's at::cdist, then p = 2
 *                    through _euclidean_dist (the GEMM) when
 *                    use_mm_for_euclid_dist says so, else _cdist_forward
 *   _cdist_forward   the exact p-norm of every row pair, threaded over the
 *                    output rows; gradient _cdist_backward (derivatives.def)
 *   _cdist_backward  the x1 gradient of 1.13's cdist_backward kernel
 *   _euclidean_dist  |a|^2 - 2 a.b + |b|^2 as one matmul of padded operands
 *                    (1.13's formula, so float32 rounds as PyTorch's does);
 *                    gradient _euclidean_dist_backward (formulas_dataops.h)
 *
 * Batch dims broadcast; each batch element is copied contiguous first (as
 * 1.13's cdist_impl does), so the row loops read unit-stride rows. float32
 * rows with p = 1, 2, inf go through the vectorized kernel f32_cdist_rows
 * (src/kernels/cdist.c); float64 and the other p through the loops here,
 * which are also its reference in tests/c/test_cdist.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/overflow.h"
#include "kernels/kernels.h"
#include "ops/ops.h"
#include "weft/parallel.h"

typedef const weft_tensor* T;

enum { MODE_AUTO = 0, MODE_MM = 1, MODE_NO_MM = 2 };

static int64_t rows(T t) { return t->sizes[t->ndim - 2]; }
static int64_t cols(T t) { return t->sizes[t->ndim - 1]; }

/* 1.13's Note [cdist relies on cdist_impl redispatching]: the GEMM for p = 2
 * when asked, or by default when either side has more than 25 rows */
static bool use_mm(double p, int64_t mode, int64_t r1, int64_t r2) {
  return p == 2 && (mode == MODE_MM || (mode == MODE_AUTO && (r1 > 25 || r2 > 25)));
}

static weft_status check_dims(T x1, T x2) {
  if (x1->ndim < 2)
    return weft__error(WEFT_INVALID_ARGUMENT, "cdist only supports at least 2D tensors, X1 got: %dD", (int)x1->ndim);
  if (x2->ndim < 2)
    return weft__error(WEFT_INVALID_ARGUMENT, "cdist only supports at least 2D tensors, X2 got: %dD", (int)x2->ndim);
  if (cols(x1) != cols(x2))
    return weft__error(WEFT_INVALID_ARGUMENT, "X1 and X2 must have the same number of columns. X1: %lld X2: %lld",
                       (long long)cols(x1), (long long)cols(x2));
  return WEFT_OK;
}

/* cdist_impl's checks, then the kernel's dtype dispatch (float32/float64) */
static weft_status check_types(T x1, T x2, double p) {
  if (!weft_dtype_is_floating(x1->dtype))
    return weft__error(WEFT_TYPE_ERROR, "cdist only supports floating-point dtypes, X1 got: %s",
                       weft_dtype_name(x1->dtype));
  if (!weft_dtype_is_floating(x2->dtype))
    return weft__error(WEFT_TYPE_ERROR, "cdist only supports floating-point dtypes, X2 got: %s",
                       weft_dtype_name(x2->dtype));
  if (!(p >= 0)) return weft__error(WEFT_INVALID_ARGUMENT, "cdist only supports non-negative p values");
  if (x1->device != x2->device)
    return weft__error(WEFT_INVALID_ARGUMENT, "X1 and X2 must have the same device type. X1: %s X2: %s",
                       weft_device_name(x1->device), weft_device_name(x2->device));
  if (x1->dtype != x2->dtype)
    return weft__error(WEFT_TYPE_ERROR, "expected scalar type %s but found %s", weft_dtype_name(x1->dtype),
                       weft_dtype_name(x2->dtype));
  if (x1->dtype != WEFT_FLOAT32 && x1->dtype != WEFT_FLOAT64)
    return weft__error(WEFT_NOT_IMPLEMENTED, "\"cdist\" not implemented for '%s'", weft_dtype_name(x1->dtype));
  return WEFT_OK;
}

/* infer_size of the two batch shapes (x1's is PyTorch's tensor a); their
 * number of dims, -1 with the error set */
static int batch_shape(T x1, T x2, int64_t* out) {
  int na = x1->ndim - 2, nb = x2->ndim - 2, n = na > nb ? na : nb;
  for (int i = n - 1; i >= 0; i--) {
    int ia = i - (n - na), ib = i - (n - nb);
    int64_t sa = ia >= 0 ? x1->sizes[ia] : 1, sb = ib >= 0 ? x2->sizes[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      weft__error(WEFT_INVALID_ARGUMENT,
                  "cdist: The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                  "dimension %d",
                  (long long)sa, (long long)sb, i);
      return -1;
    }
    out[i] = sa == 1 ? sb : sa;
  }
  return n;
}

/* saturating: a broadcast of expanded views can name more elements than
 * int64 holds (the output's allocation then reports it) */
static int64_t product(const int64_t* s, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p = weft__mul_saturate(p, s[i]);
  return p;
}

/* t expanded to batch + its last two dims, copied contiguous and viewed as
 * (B, rows, cols) */
static weft_tensor* batched(T t, const int64_t* batch, int nb) {
  int64_t sizes[WEFT_MAX_DIMS], flat[3] = {product(batch, nb), rows(t), cols(t)};
  memcpy(sizes, batch, sizeof(int64_t) * (size_t)nb);
  sizes[nb] = rows(t), sizes[nb + 1] = cols(t);
  weft_tensor* e = weft_expand(t, sizes, nb + 2);
  weft_tensor* c = e ? weft_contiguous(e, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_tensor* v = c ? weft_reshape(c, flat, 3) : NULL;
  weft_tensor_release(e);
  weft_tensor_release(c);
  return v;
}

/* ---- the row loops (1.13's Distance kernels: forward map/reduce/finish,
 * backward per p) ---- */
typedef struct {
  const void *x1, *x2, *grad, *dist;
  void* out;
  int64_t r1, r2, c;
  double p;
  bool f64;
  int kind; /* float32 rows through f32_cdist_rows: 1, 2, 3 for p = 1, 2, inf; 0 the loops below */
} dist_job;

#define DIST_LOOPS(S, TY)                                                                          \
  static TY dist_##S(const TY* a, const TY* b, int64_t c, TY p) {                                  \
    TY acc = 0;                                                                                    \
    if (p == 0) {                                                                                  \
      for (int64_t k = 0; k < c; k++) acc += a[k] != b[k];                                         \
      return acc;                                                                                  \
    }                                                                                              \
    if (p == 1) {                                                                                  \
      for (int64_t k = 0; k < c; k++) acc += (TY)fabs((double)(a[k] - b[k]));                      \
      return acc;                                                                                  \
    }                                                                                              \
    if (p == 2) {                                                                                  \
      for (int64_t k = 0; k < c; k++) acc += (a[k] - b[k]) * (a[k] - b[k]);                        \
      return (TY)sqrt((double)acc);                                                                \
    }                                                                                              \
    if (isinf(p)) {                                                                                \
      for (int64_t k = 0; k < c; k++) {                                                            \
        TY d = (TY)fabs((double)(a[k] - b[k]));                                                    \
        if (!(d <= acc)) acc = d; /* NaN propagates, as vec::maximum does */                      \
      }                                                                                            \
      return acc;                                                                                  \
    }                                                                                              \
    for (int64_t k = 0; k < c; k++) acc += (TY)pow(fabs((double)(a[k] - b[k])), (double)p);       \
    return (TY)pow((double)acc, 1.0 / (double)p);                                                  \
  }                                                                                                \
  /* the x1 gradient of one difference d (1.13's *dist_calc::backward) */                         \
  static TY dist_bw_##S(TY d, TY g, TY dist, TY p) {                                               \
    TY sg = (TY)((0 < d) - (d < 0));                                                               \
    if (p == 1) return g * sg;                                                                     \
    if (p < 2) {                                                                                   \
      if (dist == 0 || (d == 0 && p < 1)) return 0;                                                \
      return sg * (TY)pow(fabs((double)d), (double)(p - 1)) * g / (TY)pow((double)dist, (double)(p - 1)); \
    }                                                                                              \
    if (p == 2) return dist == 0 ? 0 : g * d / dist;                                               \
    if (isinf(p)) {                                                                                \
      TY off = (TY)ceil(fabs(fabs((double)d) - (double)dist));                                     \
      return g * sg * (1 - (off < 1 ? off : 1));                                                   \
    }                                                                                              \
    if (dist == 0) return 0;                                                                       \
    return d * (TY)pow(fabs((double)d), (double)(p - 2)) * g / (TY)pow((double)dist, (double)(p - 1)); \
  }                                                                                                \
  static void fwd_rows_##S(const dist_job* j, int64_t begin, int64_t end) {                        \
    const TY *x1 = j->x1, *x2 = j->x2;                                                             \
    TY* out = j->out;                                                                              \
    for (int64_t row = begin; row < end; row++) {                                                  \
      const TY* a = x1 + row * j->c;                                                               \
      const TY* b = x2 + row / j->r1 * j->r2 * j->c;                                               \
      for (int64_t q = 0; q < j->r2; q++) out[row * j->r2 + q] = dist_##S(a, b + q * j->c, j->c, (TY)j->p); \
    }                                                                                              \
  }                                                                                                \
  static void bwd_rows_##S(const dist_job* j, int64_t begin, int64_t end) {                        \
    const TY *x1 = j->x1, *x2 = j->x2, *g = j->grad, *dist = j->dist;                              \
    TY* out = j->out;                                                                              \
    for (int64_t row = begin; row < end; row++) {                                                  \
      const TY* a = x1 + row * j->c;                                                               \
      const TY* b = x2 + row / j->r1 * j->r2 * j->c;                                               \
      TY* o = out + row * j->c;                                                                    \
      for (int64_t k = 0; k < j->c; k++) o[k] = 0;                                                 \
      for (int64_t q = 0; q < j->r2; q++) {                                                        \
        TY gq = g[row * j->r2 + q], dq = dist[row * j->r2 + q];                                    \
        for (int64_t k = 0; k < j->c; k++) o[k] += dist_bw_##S(a[k] - b[q * j->c + k], gq, dq, (TY)j->p); \
      }                                                                                            \
    }                                                                                              \
  }
DIST_LOOPS(f32, float)
DIST_LOOPS(f64, double)

/* float32 with p = 1, 2 or inf: the vectorized kernel, a row of x1 against
 * its batch element's rows of x2 */
static void fwd_rows_kernel(const dist_job* j, int64_t begin, int64_t end) {
  weft_f32_cdist_rows_fn* k = weft__kernels()->f32_cdist_rows;
  const float *x1 = j->x1, *x2 = j->x2;
  for (int64_t row = begin; row < end; row++)
    k((size_t)j->c, (size_t)j->r2, x1 + row * j->c, x2 + row / j->r1 * j->r2 * j->c, (float*)j->out + row * j->r2,
      j->kind);
}

static int kernel_kind(bool f64, double p) { return f64 ? 0 : p == 1 ? 1 : p == 2 ? 2 : isinf(p) ? 3 : 0; }

static weft_status fwd_chunk(void* ctx, int64_t begin, int64_t end) {
  const dist_job* j = ctx;
  if (j->kind)
    fwd_rows_kernel(j, begin, end);
  else if (j->f64)
    fwd_rows_f64(j, begin, end);
  else
    fwd_rows_f32(j, begin, end);
  return WEFT_OK;
}

static weft_status bwd_chunk(void* ctx, int64_t begin, int64_t end) {
  const dist_job* j = ctx;
  if (j->f64)
    bwd_rows_f64(j, begin, end);
  else
    bwd_rows_f32(j, begin, end);
  return WEFT_OK;
}

/* rows of about 32k multiply-adds per chunk */
static int64_t grain_of(int64_t per_row) { return per_row >= 32768 ? 1 : 32768 / (per_row > 0 ? per_row : 1); }

static weft_tensor* result_shaped(T x1, T x2, const int64_t* batch, int nb) {
  int64_t sizes[WEFT_MAX_DIMS];
  memcpy(sizes, batch, sizeof(int64_t) * (size_t)nb);
  sizes[nb] = rows(x1), sizes[nb + 1] = rows(x2);
  return weft_empty(sizes, nb + 2, x1->dtype, x1->device, WEFT_CONTIGUOUS_FORMAT);
}

/* the result's values, from (B, r, c) copies of x1 and x2 */
static weft_status forward_into(weft_tensor* r, T a, T b, double p, int64_t mode) {
  if (use_mm(p, mode, rows(a), rows(b))) { /* _cdist_forward asked for the GEMM (1.13's cdist_impl) */
    weft_tensor* e = weft__euclidean_dist(a, b); /* (B, r1, r2): r's shape once its batch dims are flat */
    weft_tensor* v = e ? weft_reshape(e, r->sizes, r->ndim) : NULL;
    weft_status s = v ? weft_copy_(r, v) : weft_last_status();
    weft_tensor_release(e);
    weft_tensor_release(v);
    return s;
  }
  bool f64 = a->dtype == WEFT_FLOAT64;
  dist_job j = {weft_tensor_data_ptr(a), weft_tensor_data_ptr(b), NULL, NULL, weft_tensor_data_ptr(r),
                rows(a), rows(b), cols(a), p, f64, kernel_kind(f64, p)};
  return weft_parallel_for(0, a->sizes[0] * j.r1, grain_of(j.r2 * j.c), fwd_chunk, &j);
}

static weft_tensor* cdist_forward_kernel(T x1, T x2, double p, int64_t compute_mode) {
  int64_t mode = compute_mode == INT64_MIN ? MODE_AUTO : compute_mode, batch[WEFT_MAX_DIMS];
  if (check_types(x1, x2, p) || check_dims(x1, x2)) return NULL;
  if (mode < 0 || mode > 2)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "possible modes: 0, 1, 2, but was: %lld", (long long)mode);
  int nb = batch_shape(x1, x2, batch);
  weft_tensor* r = nb < 0 ? NULL : result_shaped(x1, x2, batch, nb);
  if (!r || x1->device == WEFT_DEVICE_META || r->numel == 0) return r;
  weft_status s = cols(x1) == 0 ? weft_fill_(r, 0.0) : WEFT_OK;
  weft_tensor* a = s || cols(x1) == 0 ? NULL : batched(x1, batch, nb);
  weft_tensor* b = a ? batched(x2, batch, nb) : NULL;
  if (b) s = forward_into(r, a, b, p, mode);
  else if (cols(x1) != 0) s = weft_last_status();
  weft_tensor_release(a);
  weft_tensor_release(b);
  if (s == WEFT_OK) return r;
  weft_tensor_release(r);
  return NULL;
}

/* 1.13's _cdist_backward: the gradient of x1 at x1's batch-expanded shape
 * (the engine sums it back over broadcast dims) */
static weft_tensor* cdist_backward_kernel(T grad, T x1, T x2, double p, T dist) {
  int64_t batch[WEFT_MAX_DIMS];
  int nb = batch_shape(x1, x2, batch);
  if (nb < 0 || check_types(x1, x2, p)) return NULL;
  int64_t sizes[WEFT_MAX_DIMS];
  memcpy(sizes, batch, sizeof(int64_t) * (size_t)nb);
  sizes[nb] = rows(x1), sizes[nb + 1] = cols(x1);
  int64_t nbatch = product(batch, nb);
  bool empty = rows(x1) == 0 || rows(x2) == 0 || cols(x1) == 0 || nbatch == 0;
  if (empty) return weft_zeros_like(x1, (weft_dtype)-1, (weft_memory_format)-1);
  weft_tensor* r = weft_empty(sizes, nb + 2, x1->dtype, x1->device, WEFT_CONTIGUOUS_FORMAT);
  if (!r || x1->device == WEFT_DEVICE_META) return r;
  if (p == 0) return weft_fill_(r, 0.0) ? (weft_tensor_release(r), NULL) : r;
  int64_t gs[3] = {nbatch, rows(x1), rows(x2)};
  weft_tensor *a = batched(x1, batch, nb), *b = a ? batched(x2, batch, nb) : NULL;
  weft_tensor *gc = b ? weft_contiguous(grad, WEFT_CONTIGUOUS_FORMAT) : NULL, *g = gc ? weft_reshape(gc, gs, 3) : NULL;
  weft_tensor *dc = g ? weft_contiguous(dist, WEFT_CONTIGUOUS_FORMAT) : NULL, *d = dc ? weft_reshape(dc, gs, 3) : NULL;
  weft_status s = d ? WEFT_OK : weft_last_status();
  if (d) {
    dist_job j = {weft_tensor_data_ptr(a), weft_tensor_data_ptr(b), weft_tensor_data_ptr(g), weft_tensor_data_ptr(d),
                  weft_tensor_data_ptr(r), rows(x1), rows(x2), cols(x1), p, x1->dtype == WEFT_FLOAT64, 0};
    s = weft_parallel_for(0, nbatch * j.r1, grain_of(j.r2 * j.c), bwd_chunk, &j);
  }
  weft_tensor* tmp[] = {a, b, gc, g, dc, d};
  for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) weft_tensor_release(tmp[i]);
  if (s == WEFT_OK) return r;
  weft_tensor_release(r);
  return NULL;
}

/* ---- the GEMM path ---- */

/* [t * scale, first, second] along the last dim: 1.13's padded operands */
static weft_tensor* padded(T t, double scale, T first, T second) {
  weft_tensor* s = scale == 1 ? weft_tensor_retain((weft_tensor*)t) : weft_mul_scalar(t, weft_scalar_double(scale));
  const weft_tensor* parts[3] = {s, first, second};
  weft_tensor* r = s ? weft_cat(parts, 3, -1) : NULL;
  weft_tensor_release(s);
  return r;
}

static weft_tensor* squared_norms(T t) {
  int64_t dim = -1;
  weft_tensor* sq = weft_pow_scalar(t, weft_scalar_int(2));
  weft_tensor* n = sq ? weft_sum_dim(sq, &dim, 1, true, (weft_dtype)-1) : NULL;
  weft_tensor_release(sq);
  return n;
}

/* _euclidean_dist: sqrt(clamp_min([-2 x1, |x1|^2, 1] @ [x2, 1, |x2|^2]^T, 0)) */
static weft_tensor* euclidean_dist_kernel(T x1, T x2) {
  weft_tensor *n1 = squared_norms(x1), *n2 = n1 ? squared_norms(x2) : NULL;
  weft_tensor *o1 = n2 ? weft_ones_like(n1, (weft_dtype)-1, (weft_memory_format)-1) : NULL;
  weft_tensor *o2 = o1 ? weft_ones_like(n2, (weft_dtype)-1, (weft_memory_format)-1) : NULL;
  weft_tensor *a = o2 ? padded(x1, -2, n1, o1) : NULL, *b = a ? padded(x2, 1, o2, n2) : NULL;
  weft_tensor* bt = b ? weft_transpose(b, -2, -1) : NULL;
  weft_tensor* r = bt ? weft_matmul(a, bt) : NULL;
  if (r && (weft_clamp_min_(r, weft_scalar_int(0)) || weft_sqrt_(r))) {
    weft_tensor_release(r);
    r = NULL;
  }
  weft_tensor* tmp[] = {n1, n2, o1, o2, a, b, bt};
  for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) weft_tensor_release(tmp[i]);
  return r;
}

/* cdist_impl's GEMM branch: batch dims flattened (unless there is one batch
 * element), _euclidean_dist, the result viewed to the broadcast shape */
static weft_tensor* cdist_mm(T x1, T x2, double p) {
  int64_t batch[WEFT_MAX_DIMS], out[WEFT_MAX_DIMS];
  if (check_types(x1, x2, p)) return NULL;
  int nb = batch_shape(x1, x2, batch);
  if (nb < 0) return NULL;
  bool flat = product(batch, nb) != 1;
  weft_tensor *a = flat ? batched(x1, batch, nb) : weft_tensor_retain((weft_tensor*)x1), *b = a ? (flat ? batched(x2, batch, nb) : weft_tensor_retain((weft_tensor*)x2)) : NULL;
  weft_tensor* e = b ? weft__euclidean_dist(a, b) : NULL;
  memcpy(out, batch, sizeof(int64_t) * (size_t)nb);
  out[nb] = rows(x1), out[nb + 1] = rows(x2);
  weft_tensor* r = e ? weft_view(e, out, nb + 2) : NULL;
  weft_tensor_release(a);
  weft_tensor_release(b);
  weft_tensor_release(e);
  return r;
}

/* torch.cdist's compute_mode string as _VF.cdist's int (torch/functional.py) */
static int64_t parse_mode(const char* s) {
  if (!s || strcmp(s, "use_mm_for_euclid_dist_if_necessary") == 0) return MODE_AUTO;
  if (strcmp(s, "use_mm_for_euclid_dist") == 0) return MODE_MM;
  if (strcmp(s, "donot_use_mm_for_euclid_dist") == 0) return MODE_NO_MM;
  weft__error(WEFT_INVALID_ARGUMENT, "%s is not a valid value for compute_mode", s);
  return -1;
}

static weft_tensor* cdist_kernel(T x1, T x2, double p, const char* compute_mode) {
  int64_t mode = parse_mode(compute_mode);
  if (mode < 0 || check_dims(x1, x2)) return NULL;
  int64_t opt = mode == MODE_AUTO ? INT64_MIN : mode;
  /* empty inputs: always the op with its own gradient (1.13 keeps the graph connected) */
  if (x1->numel == 0 || x2->numel == 0 || !use_mm(p, mode, rows(x1), rows(x2)))
    return weft__cdist_forward(x1, x2, p, opt);
  return cdist_mm(x1, x2, p);
}

weft_status weft__cdist_register(void) {
  WEFT_KERNEL(cdist, COMPOSITE_IMPLICIT_AUTOGRAD, cdist_kernel);
  WEFT_KERNEL(_cdist_forward, CPU, cdist_forward_kernel);
  WEFT_KERNEL(_cdist_forward, META, cdist_forward_kernel);
  WEFT_KERNEL(_cdist_backward, CPU, cdist_backward_kernel);
  WEFT_KERNEL(_cdist_backward, META, cdist_backward_kernel);
  WEFT_KERNEL(_euclidean_dist, COMPOSITE_EXPLICIT_AUTOGRAD, euclidean_dist_kernel);
  return WEFT_OK;
}
