/* torch.linalg's LU- and Cholesky-based ops (issue 25): solve, inv, det,
 * slogdet, cholesky, for float32 and float64 with any batch dims, with
 * PyTorch 1.13's checks and messages (dtypes named as JS names them).
 * Each batch element is copied into a contiguous row-major matrix and
 * factored by the blocked drivers of src/ops/cpu/lu.c; a singular or
 * non-positive-definite element is reported with its batch index, as 1.13's
 * _LinAlgError is. The Meta kernels run the same checks and shapes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "ops/cpu/lu.h"
#include "ops/ops.h"

typedef const weft_tensor* T;

static bool is_meta(T t) { return t->device == WEFT_DEVICE_META; }
static int64_t rows(T t) { return t->sizes[t->ndim - 2]; }
static int64_t cols(T t) { return t->sizes[t->ndim - 1]; }
static int64_t batch_count(T t) {
  int64_t b = 1;
  for (int i = 0; i < t->ndim - 2; i++) b *= t->sizes[i];
  return b;
}

/* checkFloatingOrComplex, then the float16/bfloat16 refusal of 1.13's CPU
 * dispatch (cholesky's names its kernel) */
static weft_status check_dtype(const char* op, T a) {
  if (a->dtype == WEFT_FLOAT32 || a->dtype == WEFT_FLOAT64) return WEFT_OK;
  if (!weft_dtype_is_floating(a->dtype))
    return weft__error(WEFT_TYPE_ERROR, "%s: Expected a floating point or complex tensor as input. Got %s", op,
                       weft_dtype_name(a->dtype));
  if (strcmp(op, "linalg.cholesky") == 0)
    return weft__error(WEFT_TYPE_ERROR, "\"cholesky_cpu\" not implemented for '%s'", weft_dtype_name(a->dtype));
  return weft__error(WEFT_TYPE_ERROR, "%s: Low precision dtypes not supported. Got %s", op, weft_dtype_name(a->dtype));
}

/* squareCheckInputs + checkFloatingOrComplex */
static weft_status check_square(const char* op, T a) {
  if (a->ndim < 2)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: The input tensor A must have at least 2 dimensions.", op);
  if (rows(a) != cols(a))
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: A must be batches of square matrices, but they are %lld by %lld "
                       "matrices", op, (long long)rows(a), (long long)cols(a));
  return check_dtype(op, a);
}

/* "(Batch element i): " when the input has batch dims */
static void batch_prefix(char* buf, size_t len, T a, int64_t b) {
  if (a->ndim > 2)
    snprintf(buf, len, "(Batch element %lld): ", (long long)b);
  else
    buf[0] = 0;
}

static weft_tensor* contiguous_copy(T a) { return weft_clone(a, WEFT_CONTIGUOUS_FORMAT); }
static weft_tensor* transposed(T t) { return weft_transpose(t, -2, -1); }

/* 1.13 factors A^T where A is contiguous (LAPACK reads it as column-major
 * without a copy) and solves with the adjoint: which matrix is factored
 * decides the zero pivot a singular input reports, so weft does the same */
static bool factors_transpose(T a) { return weft_tensor_is_contiguous(a, WEFT_CONTIGUOUS_FORMAT); }
static weft_tensor* factored(T a) {
  return factors_transpose(a) ? transposed(a) : weft_tensor_retain((weft_tensor*)a);
}

static void lu_solve(weft_dtype t, bool adjoint, int64_t n, int64_t k, const void* lu, const int64_t* piv, void* b) {
  if (adjoint)
    weft__lu_solve_t(t, n, k, lu, piv, b);
  else
    weft__lu_solve(t, n, k, lu, piv, b);
}

/* src's values with each matrix (its last two dims) column-major, the
 * layout of 1.13's LAPACK-made results; takes src's reference */
static weft_tensor* column_major(weft_tensor* src) {
  if (!src || src->ndim < 2) return src;
  int64_t sizes[WEFT_MAX_DIMS];
  memcpy(sizes, src->sizes, sizeof(int64_t) * (size_t)src->ndim);
  sizes[src->ndim - 2] = cols(src), sizes[src->ndim - 1] = rows(src);
  weft_tensor* e = weft_empty(sizes, src->ndim, src->dtype, src->device, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* v = e ? weft_transpose(e, -2, -1) : NULL;
  weft_status s = v ? weft_copy_(v, src) : weft_last_status();
  weft_tensor_release(e);
  weft_tensor_release(src);
  if (s == WEFT_OK) return v;
  weft_tensor_release(v);
  return NULL;
}

static char* matrix_at(weft_tensor* t, int64_t b) {
  int64_t mat = rows(t) * cols(t);
  return (char*)weft_tensor_data_ptr(t) + (size_t)(b * mat) * weft_dtype_size(t->dtype);
}

/* LU of every matrix of lu (a contiguous copy, factored in place); pivots
 * n per matrix. *bad is the first batch element with a zero pivot (-1 when
 * none) and *info its getrf info. */
static weft_status factor_all(weft_tensor* lu, int64_t* piv, int64_t* bad, int64_t* info) {
  int64_t n = rows(lu), nb = batch_count(lu);
  *bad = -1, *info = 0;
  for (int64_t b = 0; b < nb; b++) {
    int64_t inf;
    weft_status s = weft__lu_factor(lu->dtype, n, matrix_at(lu, b), piv + b * n, &inf);
    if (s != WEFT_OK) return s;
    if (inf && *bad < 0) *bad = b, *info = inf;
  }
  return WEFT_OK;
}

/* a contiguous LU of a with its pivots (malloc'd, n per matrix) */
static weft_tensor* lu_of(T a, int64_t** piv, int64_t* bad, int64_t* info) {
  weft_tensor* lu = contiguous_copy(a);
  *piv = lu ? malloc(sizeof(int64_t) * (size_t)(batch_count(a) * rows(a) + 1)) : NULL;
  if (lu && !*piv) weft__error(WEFT_OUT_OF_MEMORY, "linalg: out of memory");
  if (*piv && factor_all(lu, *piv, bad, info) == WEFT_OK) return lu;
  free(*piv);
  *piv = NULL;
  weft_tensor_release(lu);
  return NULL;
}

/* ---- inv, inv_ex ---- */
/* x (n x n, row-major) = I */
static void set_identity(weft_dtype t, int64_t n, char* x) {
  memset(x, 0, (size_t)(n * n) * weft_dtype_size(t));
  for (int64_t i = 0; i < n; i++) {
    if (t == WEFT_FLOAT64)
      ((double*)x)[i * n + i] = 1;
    else
      ((float*)x)[i * n + i] = 1;
  }
}

/* getrf's info of matrix b of lu: 1 + the index of U's first exactly-zero diagonal entry, or 0 */
static int64_t diag_info(weft_tensor* lu, int64_t b) {
  int64_t n = rows(lu);
  const char* m = matrix_at(lu, b);
  for (int64_t i = 0; i < n; i++) {
    double d = lu->dtype == WEFT_FLOAT64 ? ((const double*)m)[i * n + i] : ((const float*)m)[i * n + i];
    if (d == 0) return i + 1;
  }
  return 0;
}

/* the getrf info of every matrix, as inv_ex's int32 info */
static void put_infos(weft_tensor* info, const int64_t* infos) {
  for (int64_t b = 0; b < info->numel; b++) ((int32_t*)weft_tensor_data_ptr(info))[b] = (int32_t)infos[b];
}

/* r = A^-1 for every matrix, solved with the LU whatever its pivots (a
 * zero pivot gives 1.13's infinities and NaNs); infos (batch) the getrf
 * infos; a singular matrix is refused by op when check */
static weft_status invert_all(T a, weft_tensor* r, int64_t* infos, const char* op, bool check) {
  int64_t *piv = NULL, bad, info, n = rows(a);
  weft_tensor* f = factored(a);
  weft_tensor* lu = f ? lu_of(f, &piv, &bad, &info) : NULL;
  weft_tensor_release(f);
  weft_status s = lu ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && bad >= 0 && check) {
    char pre[48];
    batch_prefix(pre, sizeof pre, a, bad);
    s = weft__error(WEFT_INVALID_ARGUMENT, "%s: %sThe diagonal element %lld is zero, the inversion could not be "
                    "completed because the input matrix is singular.", op, pre, (long long)info);
  }
  for (int64_t b = 0; s == WEFT_OK && b < batch_count(a); b++) {
    char* x = matrix_at(r, b);
    set_identity(a->dtype, n, x);
    lu_solve(a->dtype, factors_transpose(a), n, n, matrix_at(lu, b), piv + b * n, x);
    if (infos) infos[b] = diag_info(lu, b);
  }
  free(piv);
  weft_tensor_release(lu);
  return s;
}

static weft_tensor* inv_kernel(T a) {
  if (check_square("linalg.inv", a) != WEFT_OK) return NULL;
  weft_tensor* r = weft_empty(a->sizes, a->ndim, a->dtype, a->device, WEFT_CONTIGUOUS_FORMAT);
  if (!r || is_meta(a) || a->numel == 0) return column_major(r);
  if (invert_all(a, r, NULL, "linalg.inv", true) == WEFT_OK) return column_major(r);
  weft_tensor_release(r);
  return NULL;
}

/* 1.13's linalg_inv_ex: the inverse and getrf's info per matrix (int32);
 * a singular matrix gives its infinities and NaNs unless check_errors */
static weft_tensor2 inv_ex_kernel(T a, bool check_errors) {
  weft_tensor2 out = {{NULL, NULL}};
  if (check_square("linalg.inv", a) != WEFT_OK) return out; /* 1.13 checks as linalg.inv */
  out.t[0] = weft_empty(a->sizes, a->ndim, a->dtype, a->device, WEFT_CONTIGUOUS_FORMAT);
  out.t[1] = out.t[0] ? weft_empty(a->sizes, a->ndim - 2, WEFT_INT32, a->device, WEFT_CONTIGUOUS_FORMAT) : NULL;
  int64_t* infos = out.t[1] ? malloc(sizeof(int64_t) * (size_t)(out.t[1]->numel + 1)) : NULL;
  weft_status s = infos ? WEFT_OK : out.t[1] ? weft__error(WEFT_OUT_OF_MEMORY, "linalg: out of memory") : weft_last_status();
  if (s == WEFT_OK && !is_meta(a)) {
    memset(infos, 0, sizeof(int64_t) * (size_t)(out.t[1]->numel + 1));
    if (a->numel) s = invert_all(a, out.t[0], infos, "linalg.inv_ex", check_errors);
    if (s == WEFT_OK) put_infos(out.t[1], infos);
  }
  free(infos);
  if (s == WEFT_OK && (out.t[0] = column_major(out.t[0]))) return out;
  weft_tensor_release(out.t[0]);
  weft_tensor_release(out.t[1]);
  return (weft_tensor2){{NULL, NULL}};
}

/* ---- det, slogdet: the product of U's diagonal and the pivots' sign ---- */
static void diag_product(T lu, int64_t b, const int64_t* piv, double* sign, double* logabs, double* prod) {
  int64_t n = rows(lu);
  const char* m = matrix_at((weft_tensor*)lu, b);
  double sg = 1, la = 0, p = 1;
  for (int64_t i = 0; i < n; i++) {
    double d = lu->dtype == WEFT_FLOAT64 ? ((const double*)m)[i * n + i] : ((const float*)m)[i * n + i];
    if (piv[i] != i) sg = -sg, p = -p;
    sg *= d > 0 ? 1 : d < 0 ? -1 : 0;
    la += log(fabs(d));
    p *= d;
  }
  *sign = sg, *logabs = la, *prod = p;
}

static void put(weft_tensor* t, int64_t i, double v) {
  if (t->dtype == WEFT_FLOAT64)
    ((double*)weft_tensor_data_ptr(t))[i] = v;
  else
    ((float*)weft_tensor_data_ptr(t))[i] = (float)v;
}

/* fills det (when given) and sign/logabsdet (when given) */
static weft_status det_fill(T a, weft_tensor* det, weft_tensor* sign, weft_tensor* logabs) {
  int64_t *piv = NULL, bad, info;
  weft_tensor* f = factored(a); /* det(A^T) = det(A) */
  weft_tensor* lu = f ? lu_of(f, &piv, &bad, &info) : NULL;
  weft_tensor_release(f);
  if (!lu) return weft_last_status();
  for (int64_t b = 0; b < batch_count(a); b++) {
    double sg, la, p;
    diag_product(lu, b, piv + b * rows(a), &sg, &la, &p);
    if (det) put(det, b, p);
    if (sign) put(sign, b, sg);
    if (logabs) put(logabs, b, la);
  }
  free(piv);
  weft_tensor_release(lu);
  return WEFT_OK;
}

static weft_tensor* batch_shaped(T a) {
  return weft_empty(a->sizes, a->ndim - 2, a->dtype, a->device, WEFT_CONTIGUOUS_FORMAT);
}

/* an empty matrix's det is 1 (the empty product) */
static weft_status fill_empty(weft_tensor* t, double v) { return t->numel ? weft_fill_(t, v) : WEFT_OK; }

static weft_tensor* det_kernel(T a) {
  if (check_square("linalg.det", a) != WEFT_OK) return NULL;
  weft_tensor* r = batch_shaped(a);
  if (!r || is_meta(a) || r->numel == 0) return r;
  weft_status s = rows(a) == 0 ? fill_empty(r, 1) : det_fill(a, r, NULL, NULL);
  if (s == WEFT_OK) return r;
  weft_tensor_release(r);
  return NULL;
}

static weft_tensor2 slogdet_kernel(T a) {
  weft_tensor2 out = {{NULL, NULL}};
  if (check_square("linalg.slogdet", a) != WEFT_OK) return out;
  out.t[0] = batch_shaped(a);
  out.t[1] = out.t[0] ? batch_shaped(a) : NULL;
  weft_status s = out.t[1] ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && !is_meta(a) && out.t[0]->numel) {
    if (rows(a) == 0)
      s = fill_empty(out.t[0], 1) == WEFT_OK ? fill_empty(out.t[1], 0) : weft_last_status();
    else
      s = det_fill(a, NULL, out.t[0], out.t[1]);
  }
  if (s == WEFT_OK) return out;
  weft_tensor_release(out.t[0]);
  weft_tensor_release(out.t[1]);
  return (weft_tensor2){{NULL, NULL}};
}

/* ---- solve ---- */

/* 1.13's linalg_solve_is_vector_rhs: B is 1-D, or A's shape minus its last dim */
static bool vector_rhs(T a, T b) {
  if (b->ndim == 1) return true;
  if (a->ndim - 1 != b->ndim) return false;
  return memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)b->ndim) == 0;
}

/* the broadcast batch dims of a and b (their last two dims excluded) */
static int broadcast_batch(T a, T b, int64_t* out) {
  int na = a->ndim - 2, nb = b->ndim - 2, n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) {
    int ia = i - (n - na), ib = i - (n - nb);
    int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? b->sizes[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      weft__error(WEFT_INVALID_ARGUMENT, "linalg.solve: The size of tensor a (%lld) must match the size of tensor b "
                  "(%lld) at non-singleton dimension %d", (long long)sb, (long long)sa, i);
      return -1;
    }
    out[i] = sa == 1 ? sb : sa;
  }
  return n;
}

/* a expanded to batch + its last two dims, copied contiguous */
static weft_tensor* expand_copy(T a, const int64_t* batch, int nbatch) {
  int64_t sizes[WEFT_MAX_DIMS];
  memcpy(sizes, batch, sizeof(int64_t) * (size_t)nbatch);
  sizes[nbatch] = rows(a), sizes[nbatch + 1] = cols(a);
  weft_tensor* e = weft_expand(a, sizes, nbatch + 2);
  weft_tensor* c = e ? contiguous_copy(e) : NULL;
  weft_tensor_release(e);
  return c;
}

/* X = M^-1 B for B (..., n, k), from the LU of f (..., n, n): M is f, or
 * f^T when adjoint; batch dims broadcast */
static weft_tensor* solve_left(T a, T b, bool adjoint) {
  int64_t batch[WEFT_MAX_DIMS];
  int nbatch = broadcast_batch(a, b, batch);
  if (nbatch < 0) return NULL;
  weft_tensor *lu = expand_copy(a, batch, nbatch), *x = lu ? expand_copy(b, batch, nbatch) : NULL;
  if (!x || is_meta(a) || x->numel == 0) {
    weft_tensor_release(lu);
    return x;
  }
  int64_t n = rows(lu), nb = batch_count(lu), bad, info;
  int64_t* piv = malloc(sizeof(int64_t) * (size_t)(nb * n + 1));
  weft_status s = piv ? factor_all(lu, piv, &bad, &info) : weft__error(WEFT_OUT_OF_MEMORY, "linalg.solve: out of memory");
  if (s == WEFT_OK && bad >= 0) {
    char pre[48];
    batch_prefix(pre, sizeof pre, lu, bad);
    s = weft__error(WEFT_INVALID_ARGUMENT, "torch.linalg.solve: %sThe solver failed because the input matrix is "
                    "singular.", pre);
  }
  for (int64_t i = 0; s == WEFT_OK && i < nb; i++)
    lu_solve(lu->dtype, adjoint, n, cols(x), matrix_at(lu, i), piv + i * n, matrix_at(x, i));
  free(piv);
  weft_tensor_release(lu);
  if (s == WEFT_OK) return x;
  weft_tensor_release(x);
  return NULL;
}

static weft_status solve_checks(T a, T b, bool left, bool vec) {
  if (check_square("linalg.solve", a) != WEFT_OK) return weft_last_status();
  if (b->dtype != a->dtype)
    return weft__error(WEFT_TYPE_ERROR, "linalg.solve: Expected A and B to have the same dtype, but found A of type "
                       "%s and B of type %s instead", weft_dtype_name(a->dtype), weft_dtype_name(b->dtype));
  int64_t br = vec ? b->sizes[b->ndim - 1] : b->ndim >= 2 ? rows(b) : 0;
  int64_t bc = vec ? 1 : b->ndim >= 2 ? cols(b) : 0;
  if (!vec && b->ndim < 2)
    return weft__error(WEFT_INVALID_ARGUMENT, "linalg.solve: The input tensor B must have at least 2 dimensions.");
  if (left ? br != rows(a) : bc != cols(a))
    return weft__error(WEFT_INVALID_ARGUMENT, "linalg.solve: Incompatible shapes of A and B for the equation %s "
                       "(%lldx%lld and %lldx%lld)", left ? "AX = B" : "XA = B", (long long)rows(a),
                       (long long)cols(a), (long long)br, (long long)bc);
  return WEFT_OK;
}

static weft_tensor* solve_kernel(T a, T b, bool left) {
  bool vec = a->ndim >= 2 && vector_rhs(a, b);
  if (solve_checks(a, b, left, vec) != WEFT_OK) return NULL;
  /* XA = B is A^T X^T = B^T */
  weft_tensor* b2 = vec ? weft_unsqueeze(b, -1) : weft_tensor_retain((weft_tensor*)b);
  weft_tensor* bl = b2 ? (left ? weft_tensor_retain(b2) : transposed(b2)) : NULL;
  /* the system's matrix is A (left) or A^T; the factored one A or A^T */
  weft_tensor* al = factored(a);
  weft_tensor* x = bl && al ? solve_left(al, bl, left == factors_transpose(a)) : NULL;
  weft_tensor* xt = x && !left ? transposed(x) : NULL;
  weft_tensor* xr = left ? weft_tensor_retain(x) : xt ? weft_contiguous(xt, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_tensor* r = xr && vec ? weft_squeeze_dim(xr, -1) : weft_tensor_retain(xr);
  if (left) r = column_major(r);
  weft_tensor* list[] = {b2, bl, al, x, xt, xr};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
  return r;
}

/* ---- cholesky ---- */
static weft_tensor* cholesky_kernel(T a, bool upper) {
  if (check_square("linalg.cholesky", a) != WEFT_OK) return NULL;
  weft_tensor* l = contiguous_copy(a);
  if (!l || is_meta(a) || a->numel == 0) return column_major(l);
  weft_status s = WEFT_OK;
  for (int64_t b = 0; s == WEFT_OK && b < batch_count(a); b++) {
    int64_t info;
    s = weft__cholesky(a->dtype, rows(a), matrix_at(l, b), &info);
    if (s != WEFT_OK || !info) continue;
    char pre[48];
    batch_prefix(pre, sizeof pre, a, b);
    s = weft__error(WEFT_INVALID_ARGUMENT, "linalg.cholesky: %sThe factorization could not be completed because the "
                    "input is not positive-definite (the leading minor of order %lld is not positive-definite).",
                    pre, (long long)info);
  }
  if (s != WEFT_OK) {
    weft_tensor_release(l);
    return NULL;
  }
  if (!upper) return column_major(l);
  weft_tensor* u = weft_transpose(l, -2, -1);
  weft_tensor_release(l);
  return column_major(u);
}

weft_status weft__linalg_decomp_register(void) {
  WEFT_KERNEL(linalg_solve, CPU, solve_kernel);
  WEFT_KERNEL(linalg_solve, META, solve_kernel);
  WEFT_KERNEL(linalg_inv, CPU, inv_kernel);
  WEFT_KERNEL(linalg_inv, META, inv_kernel);
  WEFT_KERNEL(linalg_inv_ex, CPU, inv_ex_kernel);
  WEFT_KERNEL(linalg_inv_ex, META, inv_ex_kernel);
  WEFT_KERNEL(linalg_det, CPU, det_kernel);
  WEFT_KERNEL(linalg_det, META, det_kernel);
  WEFT_KERNEL(linalg_slogdet, CPU, slogdet_kernel);
  WEFT_KERNEL(linalg_slogdet, META, slogdet_kernel);
  WEFT_KERNEL(linalg_cholesky, CPU, cholesky_kernel);
  WEFT_KERNEL(linalg_cholesky, META, cholesky_kernel);
  return WEFT_OK;
}
