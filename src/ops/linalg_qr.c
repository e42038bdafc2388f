/* torch.linalg.qr (issue 25) for float32 and float64 with any batch dims,
 * with PyTorch 1.13's checks, messages (dtypes named as JS names them) and
 * result layout: Q and R column-major, as LAPACK leaves them. Each matrix is
 * copied column-major and factored by the blocked Householder driver of
 * src/ops/cpu/qr.c (dgeqrf's signs, so the values are PyTorch's); Q is
 * formed from the reflectors as dorgqr does. The Meta kernel runs the same
 * checks and shapes. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "ops/cpu/qr.h"
#include "ops/cpu/svd.h"
#include "ops/ops.h"

typedef const weft_tensor* T;

static bool is_meta(T t) { return t->device == WEFT_DEVICE_META; }
static int64_t rows(T t) { return t->sizes[t->ndim - 2]; }
static int64_t cols(T t) { return t->sizes[t->ndim - 1]; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* the product of a's batch dims (0 when one is 0, whatever its matrices) */
static int64_t batch_product(T a) {
  int64_t b = 1;
  for (int i = 0; i < a->ndim - 2; i++) b *= a->sizes[i];
  return b;
}

/* a new tensor of a's batch dims + (r, c), each matrix column-major */
static weft_tensor* empty_matrices(T a, int64_t r, int64_t c) {
  int64_t sizes[WEFT_MAX_DIMS];
  memcpy(sizes, a->sizes, sizeof(int64_t) * (size_t)(a->ndim - 2));
  sizes[a->ndim - 2] = c, sizes[a->ndim - 1] = r;
  weft_tensor* e = weft_empty(sizes, a->ndim, a->dtype, a->device, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* v = e ? weft_transpose(e, -2, -1) : NULL;
  weft_tensor_release(e);
  return v;
}

static char* matrix(weft_tensor* t, int64_t b) {
  return (char*)weft_tensor_data_ptr(t) + (size_t)(b * rows(t) * cols(t)) * weft_dtype_size(t->dtype);
}

/* 1.13's _parse_qr_mode */
static weft_status parse_mode(const char* mode, bool* compute_q, bool* reduced) {
  *compute_q = strcmp(mode, "r") != 0;
  *reduced = strcmp(mode, "complete") != 0;
  if (!strcmp(mode, "reduced") || !strcmp(mode, "complete") || !strcmp(mode, "r")) return WEFT_OK;
  return weft__error(WEFT_INVALID_ARGUMENT, "qr received unrecognized mode '%s' but expected one of 'reduced' "
                     "(default), 'r', or 'complete'", mode);
}

/* checkIsMatrix, checkFloatingOrComplex, the mode, then the CPU kernel's
 * refusal of float16 / bfloat16 (geqrf's dispatch) */
static weft_status qr_checks(T a, const char* mode, bool* compute_q, bool* reduced) {
  if (a->ndim < 2)
    return weft__error(WEFT_INVALID_ARGUMENT, "linalg.qr: The input tensor A must have at least 2 dimensions.");
  if (!weft_dtype_is_floating(a->dtype))
    return weft__error(WEFT_TYPE_ERROR, "linalg.qr: Expected a floating point or complex tensor as input. Got %s",
                       weft_dtype_name(a->dtype));
  if (parse_mode(mode, compute_q, reduced) != WEFT_OK) return weft_last_status();
  if (a->dtype != WEFT_FLOAT32 && a->dtype != WEFT_FLOAT64)
    return weft__error(WEFT_TYPE_ERROR, "\"geqrf_cpu\" not implemented for '%s'", weft_dtype_name(a->dtype));
  return WEFT_OK;
}

/* r (rr x n, leading dim rr) = the upper triangle of the factored w (m x n,
 * leading dim m), zeros below */
static void copy_upper(size_t es, int64_t m, int64_t n, int64_t rr, const char* w, char* r) {
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < rr; i++) {
      char* dst = r + (size_t)(i + j * rr) * es;
      if (i <= j && i < m)
        memcpy(dst, w + (size_t)(i + j * m) * es, es);
      else
        memset(dst, 0, es);
    }
}

/* factors every matrix of work (a column-major copy of A) in place and
 * fills r and, when given, q */
static weft_status factor_all(weft_tensor* work, weft_tensor* q, weft_tensor* r) {
  int64_t m = rows(work), n = cols(work), k = min64(m, n), nb = batch_product(work);
  size_t es = weft_dtype_size(work->dtype);
  void* tau = malloc(es * (size_t)(k + 1));
  if (!tau) return weft__error(WEFT_OUT_OF_MEMORY, "linalg.qr: out of memory");
  weft_status s = WEFT_OK;
  for (int64_t b = 0; s == WEFT_OK && b < nb; b++) {
    char* w = matrix(work, b);
    s = weft__qr_factor(work->dtype, m, n, w, m, tau);
    if (s == WEFT_OK) copy_upper(es, m, n, rows(r), w, matrix(r, b));
    if (s == WEFT_OK && q) s = weft__qr_form_q(work->dtype, m, cols(q), k, w, m, tau, matrix(q, b), m);
  }
  free(tau);
  return s;
}

static weft_tensor2 qr_kernel(T a, const char* mode) {
  weft_tensor2 out = {{NULL, NULL}};
  bool compute_q = true, reduced = true;
  if (qr_checks(a, mode, &compute_q, &reduced) != WEFT_OK) return out;
  int64_t m = rows(a), n = cols(a), k = min64(m, n), zero = 0;
  out.t[0] = compute_q ? empty_matrices(a, m, reduced ? k : m) : weft_empty(&zero, 1, a->dtype, a->device,
                                                                               WEFT_CONTIGUOUS_FORMAT);
  out.t[1] = out.t[0] ? empty_matrices(a, reduced ? k : m, n) : NULL;
  bool fill = out.t[1] && !is_meta(a);
  weft_tensor* work = fill ? empty_matrices(a, m, n) : NULL;
  weft_status s = out.t[1] && (work || !fill) ? WEFT_OK : weft_last_status();
  if (work) {
    s = weft_copy_(work, a);
    if (s == WEFT_OK) s = factor_all(work, compute_q ? out.t[0] : NULL, out.t[1]);
  }
  weft_tensor_release(work);
  if (s == WEFT_OK) return out;
  weft_tensor_release(out.t[0]);
  weft_tensor_release(out.t[1]);
  return (weft_tensor2){{NULL, NULL}};
}

/* ---- lstsq ---- */

enum { GELS, GELSY, GELSD, GELSS };

typedef struct {
  bool vec;              /* b is a vector (or a batch of them): 1.13's dim_diff 1 */
  int driver;            /* GELS .. GELSS */
  int nbatch;            /* the broadcast batch dims */
  int64_t batch[WEFT_MAX_DIMS];
  int64_t m, n, nrhs, mx;
} lstsq_shape;

static weft_status lstsq_error(const char* msg) {
  return weft__error(WEFT_INVALID_ARGUMENT, "torch.linalg.lstsq: %s", msg);
}

/* the batch dims of a and b (their last two dims excluded) broadcast, as
 * 1.13's expand of both; b's are those of the matrix it was made into */
static weft_status broadcast_batch(T a, int bdims, const int64_t* bsizes, lstsq_shape* sh) {
  int na = a->ndim - 2, nb = bdims - 2, n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) {
    int ia = i - (n - na), ib = i - (n - nb);
    int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? bsizes[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      return weft__error(WEFT_INVALID_ARGUMENT, "The size of tensor a (%lld) must match the size of tensor b (%lld) "
                         "at non-singleton dimension %d", (long long)sa, (long long)sb, i);
    sh->batch[i] = sa == 1 ? sb : sa;
  }
  sh->nbatch = n;
  return WEFT_OK;
}

/* 1.13's checks, in its order */
static weft_status lstsq_checks(T a, T b, const char* driver, lstsq_shape* sh) {
  if (a->ndim < 2) return lstsq_error("input must have at least 2 dimensions.");
  if (b->ndim < 1) return lstsq_error("other must have at least 1 dimension.");
  if (a->dtype != b->dtype)
    return weft__error(WEFT_TYPE_ERROR, "torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
                       "input's dtype %s and other's dtype %s", weft_dtype_name(a->dtype), weft_dtype_name(b->dtype));
  int diff = a->ndim - b->ndim;
  if (diff < 0 || diff > 1)
    return lstsq_error("input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1");
  sh->vec = diff == 1;
  int64_t brows = sh->vec ? b->sizes[b->ndim - 1] : b->sizes[b->ndim - 2];
  if (rows(a) != brows)
    return lstsq_error(sh->vec ? "input.size(-2) should match other.size(-1)" : "input.size(-2) should match other.size(-2)");
  static const char* const names[] = {"gels", "gelsy", "gelsd", "gelss"};
  sh->driver = -1;
  for (int i = 0; i < 4; i++)
    if (!strcmp(driver, names[i])) sh->driver = i;
  if (sh->driver < 0) return lstsq_error("parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  if (a->dtype != WEFT_FLOAT32 && a->dtype != WEFT_FLOAT64)
    return weft__error(WEFT_TYPE_ERROR, "This function doesn't handle types other than float and double");
  sh->m = rows(a), sh->n = cols(a), sh->nrhs = sh->vec ? 1 : b->sizes[b->ndim - 1];
  sh->mx = sh->m > sh->n ? sh->m : sh->n;
  int64_t bs[WEFT_MAX_DIMS + 1];
  memcpy(bs, b->sizes, sizeof(int64_t) * (size_t)b->ndim);
  bs[b->ndim] = 1; /* a vector b as a column */
  return broadcast_batch(a, b->ndim + sh->vec, bs, sh);
}

/* batch + the two trailing sizes given */
static int shape_of(const lstsq_shape* sh, int64_t r, int64_t c, int64_t* sizes, int extra) {
  memcpy(sizes, sh->batch, sizeof(int64_t) * (size_t)sh->nbatch);
  if (extra > 0) sizes[sh->nbatch] = r;
  if (extra > 1) sizes[sh->nbatch + 1] = c;
  return sh->nbatch + extra;
}

/* x expanded to the broadcast batch + its own matrix dims, copied
 * column-major with `ld` rows per column (ld >= its rows; rows beyond are
 * zero): LAPACK's B of max(m, n) rows */
static weft_tensor* column_major_copy(const lstsq_shape* sh, T x, int64_t r, int64_t c, int64_t ld) {
  int64_t sizes[WEFT_MAX_DIMS];
  int nd = shape_of(sh, c, ld, sizes, 2);
  weft_tensor* buf = weft_full(sizes, nd, 0.0, x->dtype, x->device);
  weft_tensor* bt = buf ? weft_transpose(buf, -2, -1) : NULL;
  weft_tensor* top = bt ? weft_narrow(bt, -2, 0, r) : NULL;
  int64_t es[WEFT_MAX_DIMS];
  nd = shape_of(sh, r, c, es, 2);
  weft_tensor* e = top ? weft_expand(x, es, nd) : NULL;
  weft_status s = !e ? weft_last_status() : is_meta(x) ? WEFT_OK : weft_copy_(top, e);
  weft_tensor_release(bt), weft_tensor_release(top), weft_tensor_release(e);
  if (s == WEFT_OK) return buf;
  weft_tensor_release(buf);
  return NULL;
}

static char* block(weft_tensor* t, int64_t b, int64_t elems) {
  return (char*)weft_tensor_data_ptr(t) + (size_t)(b * elems) * weft_dtype_size(t->dtype);
}

static void put_rank(weft_tensor* rank, int64_t b, int64_t r) { ((int64_t*)weft_tensor_data_ptr(rank))[b] = r; }

/* the cut of the SVD drivers, rcond read as LAPACK reads it: dgelsd (its
 * dlalsd) takes eps for an rcond <= 0 or >= 1, dgelss eps for a negative
 * one, and never keeps a singular value at or below the safe minimum */
static void svd_cut(const lstsq_shape* sh, weft_dtype t, double rcond, double* rcut, double* floor) {
  double eps = t == WEFT_FLOAT64 ? DBL_EPSILON / 2 : FLT_EPSILON / 2; /* dlamch('E') */
  if (sh->driver == GELSD) {
    *rcut = rcond <= 0 || rcond >= 1 ? eps : rcond, *floor = 0;
  } else {
    *rcut = rcond < 0 ? eps : rcond, *floor = t == WEFT_FLOAT64 ? DBL_MIN : FLT_MIN;
  }
}

/* matrix b: *info 0, LAPACK's gels code (> 0), or -1 for a non-finite A
 * under an SVD driver; *r its rank (not gels) */
static weft_status solve_one(const lstsq_shape* sh, weft_tensor* a, weft_tensor* x, weft_tensor* sv, int64_t b,
                             double rcond, int64_t* r, int64_t* info) {
  char *ab = block(a, b, sh->m * sh->n), *xb = block(x, b, sh->mx * sh->nrhs);
  weft_dtype t = a->dtype;
  if (sh->driver == GELS) return weft__lstsq_gels(t, sh->m, sh->n, sh->nrhs, ab, xb, sh->mx, info);
  if (sh->driver == GELSY) return weft__lstsq_gelsy(t, sh->m, sh->n, sh->nrhs, ab, xb, sh->mx, rcond, r);
  if (weft__svd_classify(t, sh->m * sh->n, ab)) {
    *info = -1;
    return WEFT_OK;
  }
  double rcut, floor;
  svd_cut(sh, t, rcond, &rcut, &floor);
  int64_t k = sh->m < sh->n ? sh->m : sh->n;
  return weft__lstsq_svd(t, sh->m, sh->n, sh->nrhs, ab, xb, sh->mx, rcut, floor, block(sv, b, k), r);
}

static weft_status solve_failed(const lstsq_shape* sh, int64_t b, int64_t info) {
  char pre[48] = "";
  if (sh->nbatch) snprintf(pre, sizeof pre, "(Batch element %lld): ", (long long)b);
  if (info < 0) /* 1.13's LAPACK fails on these in ways of its own (a NaN: gelsd's info; an inf: an assert) */
    return weft__error(WEFT_INVALID_ARGUMENT, "torch.linalg.lstsq: %sThe least squares solution could not be "
                       "computed because the input matrix contains non-finite values.", pre);
  return weft__error(WEFT_INVALID_ARGUMENT, "torch.linalg.lstsq: %sThe least squares solution could not be "
                     "computed because the input matrix does not have full rank (error code: %lld).", pre,
                     (long long)info);
}

/* solve every matrix: a (batch, n, m) buffers holding A column-major, x
 * (batch, nrhs, mx) holding B column-major; rank per batch element (not
 * gels), singular values per batch element (gelsd, gelss) */
static weft_status solve_all(const lstsq_shape* sh, weft_tensor* a, weft_tensor* x, weft_tensor* rank, weft_tensor* sv,
                             double rcond) {
  int64_t nb = 1;
  for (int i = 0; i < sh->nbatch; i++) nb *= sh->batch[i];
  if (sh->m == 0 || sh->n == 0) {
    /* 1.13: the zero solution, rank 0; gels zeroes B (residuals 0), the SVD
     * drivers leave it (residuals |B|^2 when m > n) */
    weft_status s = x->numel && sh->driver <= GELSY ? weft_fill_(x, 0) : WEFT_OK;
    return s == WEFT_OK && rank && rank->numel ? weft_fill_(rank, 0) : s;
  }
  for (int64_t b = 0; b < nb; b++) {
    int64_t info = 0, r = 0;
    weft_status s = solve_one(sh, a, x, sv, b, rcond, &r, &info);
    if (s != WEFT_OK) return s;
    if (info) return solve_failed(sh, b, info);
    if (rank) put_rank(rank, b, r);
  }
  return WEFT_OK;
}

/* rows n..m of each solution buffer squared and summed: 1.13's residuals */
static weft_tensor* residuals_of(const lstsq_shape* sh, weft_tensor* x) {
  weft_tensor* rows_ = weft_narrow(x, -1, sh->n, sh->m - sh->n); /* x is (batch, nrhs, mx) */
  weft_tensor* sq = rows_ ? weft_mul(rows_, rows_) : NULL;
  int64_t dim = -1;
  weft_tensor* r = sq ? weft_sum_dim(sq, &dim, 1, false, (weft_dtype)-1) : NULL;
  weft_tensor_release(rows_), weft_tensor_release(sq);
  return r;
}

/* the solution: the first n rows of each buffer, column-major (1.13's
 * restrided view of LAPACK's B), a vector b's squeezed */
static weft_tensor* solution_of(const lstsq_shape* sh, weft_tensor* x) {
  weft_tensor* t = weft_transpose(x, -2, -1);
  weft_tensor* v = t ? weft_narrow(t, -2, 0, sh->n) : NULL;
  weft_tensor* r = v && sh->vec ? weft_squeeze_dim(v, -1) : weft_tensor_retain(v);
  weft_tensor_release(t), weft_tensor_release(v);
  return r;
}

static weft_tensor* empty_vector(T a, weft_dtype dt) {
  int64_t zero = 0;
  return weft_empty(&zero, 1, dt, a->device, WEFT_CONTIGUOUS_FORMAT);
}

/* 1.13's rule: residuals when m > n, for gels always, for gelsd / gelss
 * when every matrix has rank n (gelsy never) */
static bool has_residuals(const lstsq_shape* sh, T a, weft_tensor* rank) {
  if (sh->m <= sh->n || sh->driver == GELSY) return false;
  if (sh->driver == GELS || is_meta(a)) return true; /* Meta has no ranks: the full-rank shape */
  const int64_t* r = weft_tensor_data_ptr(rank);
  for (int64_t i = 0; i < rank->numel; i++)
    if (r[i] != sh->n) return false;
  return true;
}

static weft_tensor4 lstsq_outputs(const lstsq_shape* sh, T a, weft_tensor* x, weft_tensor* rank, weft_tensor* sv) {
  weft_tensor4 out = {{solution_of(sh, x), NULL, rank ? weft_tensor_retain(rank) : empty_vector(a, WEFT_INT64),
                       sv ? weft_tensor_retain(sv) : empty_vector(a, a->dtype)}};
  out.t[1] = has_residuals(sh, a, rank) ? residuals_of(sh, x) : empty_vector(a, a->dtype);
  for (int i = 0; i < 4; i++)
    if (!out.t[i]) {
      weft_tensor4_release(out);
      return (weft_tensor4){{NULL, NULL, NULL, NULL}};
    }
  return out;
}

static weft_tensor4 lstsq_kernel(T a, T b, double rcond, const char* driver) {
  lstsq_shape sh = {0};
  if (lstsq_checks(a, b, driver, &sh) != WEFT_OK) return (weft_tensor4){{NULL, NULL, NULL, NULL}};
  /* 1.13's default rcond: eps of the dtype times max(m, n) */
  if (rcond != rcond) rcond = (a->dtype == WEFT_FLOAT64 ? DBL_EPSILON : FLT_EPSILON) * (double)sh.mx;
  weft_tensor* b2 = sh.vec ? weft_unsqueeze(b, -1) : weft_tensor_retain((weft_tensor*)b);
  weft_tensor* x = b2 ? column_major_copy(&sh, b2, sh.m, sh.nrhs, sh.mx) : NULL;
  weft_tensor* ac = x ? column_major_copy(&sh, a, sh.m, sh.n, sh.m) : NULL;
  int64_t rs[WEFT_MAX_DIMS];
  int rnd = shape_of(&sh, 0, 0, rs, 0);
  rs[rnd] = sh.m < sh.n ? sh.m : sh.n;
  weft_tensor* rank = ac && sh.driver != GELS ? weft_empty(rs, rnd, WEFT_INT64, a->device, WEFT_CONTIGUOUS_FORMAT) : NULL;
  bool svd = sh.driver >= GELSD;
  weft_tensor* sv = rank && svd ? weft_empty(rs, rnd + 1, a->dtype, a->device, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_status s = ac && (sh.driver == GELS || rank) && (!svd || sv) ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && !is_meta(a)) s = solve_all(&sh, ac, x, rank, sv, rcond);
  weft_tensor4 out = s == WEFT_OK ? lstsq_outputs(&sh, a, x, rank, sv) : (weft_tensor4){{NULL, NULL, NULL, NULL}};
  weft_tensor_release(b2), weft_tensor_release(x), weft_tensor_release(ac), weft_tensor_release(rank);
  weft_tensor_release(sv);
  return out;
}

weft_status weft__linalg_qr_register(void) {
  WEFT_KERNEL(linalg_qr, CPU, qr_kernel);
  WEFT_KERNEL(linalg_qr, META, qr_kernel);
  WEFT_KERNEL(linalg_lstsq, CPU, lstsq_kernel);
  WEFT_KERNEL(linalg_lstsq, META, lstsq_kernel);
  return WEFT_OK;
}
