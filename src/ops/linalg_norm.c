/* torch.linalg.vector_norm and matrix_norm (issue 25): composites, as in
 * PyTorch 1.13 (their gradients are norm's, amax's and amin's), with
 * 1.13's checks and messages. vector_norm is norm over the dims (all of
 * them for dim None or []), its input converted to dtype= first;
 * matrix_norm's 1 / -1 / inf / -inf are the max / min over one dim of the
 * 1-norms over the other, 'fro' is the 2-norm over both; 2, -2 and 'nuc'
 * are the max, min and sum of linalg.svdvals (src/ops/linalg_svd.c), so
 * their gradients are svdvals' (U diag(g) Vh). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "ops/ops.h"

typedef const weft_tensor* T;

static void format_ord(char* buf, size_t n, double ord) { snprintf(buf, n, "%g", ord); }

/* checkFloatingOrComplex */
static weft_status check_floating(const char* op, T t) {
  if (weft_dtype_is_floating(t->dtype)) return WEFT_OK;
  return weft__error(WEFT_TYPE_ERROR, "%s: Expected a floating point or complex tensor as input. Got %s", op,
                     weft_dtype_name(t->dtype));
}

/* check_linalg_norm_dtype: a floating dtype the input promotes to */
static weft_status check_norm_dtype(const char* op, weft_dtype self, weft_dtype dtype) {
  if ((int)dtype < 0) return WEFT_OK;
  if (!weft_dtype_is_floating(dtype))
    return weft__error(WEFT_TYPE_ERROR, "%s: dtype should be floating point or complex, but got %s", op,
                       weft_dtype_name(dtype));
  bool halves = self == WEFT_FLOAT16 || self == WEFT_BFLOAT16;
  if (self == dtype || dtype == WEFT_FLOAT64 || (dtype == WEFT_FLOAT32 && halves)) return WEFT_OK;
  return weft__error(WEFT_TYPE_ERROR, "%s: the dtype of the input (%s) should be convertible without narrowing to the "
                     "specified dtype (%s)", op, weft_dtype_name(self), weft_dtype_name(dtype));
}

/* an empty input has no identity for a negative or inf order */
static weft_status check_empty(T self, double ord, const int64_t* dim, int64_t ndim) {
  if (self->numel != 0 || !(ord < 0 || ord == INFINITY)) return WEFT_OK;
  char o[32];
  format_ord(o, sizeof o, ord);
  if (!dim || ndim == 0)
    return weft__error(WEFT_INVALID_ARGUMENT, "linalg.vector_norm cannot compute the %s norm on an empty tensor because "
                       "the operation does not have an identity", o);
  for (int64_t i = 0; i < ndim; i++) {
    int64_t d = dim[i] < 0 ? dim[i] + self->ndim : dim[i];
    if (d >= 0 && d < self->ndim && self->sizes[d] == 0)
      return weft__error(WEFT_INVALID_ARGUMENT, "linalg.vector_norm cannot compute the %s norm on the dimension %lld"
                         "because this dimension is empty and the operation does not have an identity", o,
                         (long long)dim[i]);
  }
  return WEFT_OK;
}

static weft_tensor* vector_norm_kernel(T self, weft_scalar ord, const int64_t* dim, int64_t ndim, bool keepdim,
                                       weft_dtype dtype) {
  if (check_floating("linalg.vector_norm", self) != WEFT_OK) return NULL;
  if (check_empty(self, weft_scalar_to_double(ord), dim, ndim) != WEFT_OK) return NULL;
  if (check_norm_dtype("linalg.vector_norm", self->dtype, dtype) != WEFT_OK) return NULL;
  static const int64_t none = 0;
  const int64_t* d = dim ? dim : &none;
  if ((int)dtype >= 0) return weft_norm_dim_dtype(self, &ord, d, dim ? ndim : 0, keepdim, dtype);
  return weft_norm_dim(self, &ord, d, dim ? ndim : 0, keepdim);
}

/* the dim checks of 1.13's linalg_matrix_norm; wrapped dims into w */
static weft_status matrix_checks(T a, const int64_t* dim, int64_t ndim, int64_t* w) {
  if (a->ndim < 2)
    return weft__error(WEFT_INVALID_ARGUMENT, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.");
  if (ndim != 2) {
    char got[128] = "";
    for (int64_t i = 0; i < ndim && strlen(got) < 100; i++)
      snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? " " : "", (long long)dim[i]);
    return weft__error(WEFT_INVALID_ARGUMENT, "linalg.matrix_norm: dim must be a 2-tuple. Got %s", got);
  }
  for (int i = 0; i < 2; i++) {
    w[i] = dim[i] < 0 ? dim[i] + a->ndim : dim[i];
    if (w[i] < 0 || w[i] >= a->ndim)
      return weft__error(WEFT_INDEX_ERROR, "Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                         -a->ndim, a->ndim - 1, (long long)dim[i]);
  }
  if (w[0] == w[1])
    return weft__error(WEFT_INVALID_ARGUMENT, "linalg.matrix_norm: dims must be different. Got (%lld, %lld)",
                       (long long)dim[0], (long long)dim[1]);
  return check_floating("linalg.matrix_norm", a);
}

/* create_dim_backshift_permutation: the other dims in order, then w[0], w[1]; inv its inverse */
static void backshift(int ndim, const int64_t* w, int64_t* perm, int64_t* inv) {
  int k = 0;
  for (int i = 0; i < ndim; i++)
    if (i != w[0] && i != w[1]) perm[k++] = i;
  perm[k] = w[0], perm[k + 1] = w[1];
  for (int i = 0; i < ndim; i++) inv[perm[i]] = i;
}

/* 1.13's orders 2, -2 and 'nuc' (kind 2, -2, 0): the singular values of A
 * (converted to dtype) with the matrix dims moved last, then their max, min
 * or sum; keepdim puts the two dims back as 1s */
static weft_tensor* svd_norm(T a, const int64_t* w, int kind, bool keepdim, weft_dtype dtype) {
  if (a->dtype == WEFT_FLOAT16 || a->dtype == WEFT_BFLOAT16)
    return weft__error_null(WEFT_TYPE_ERROR, "linalg.matrix_norm: Low precision dtypes not supported. Got %s",
                            weft_dtype_name(a->dtype));
  if (check_norm_dtype("linalg.matrix_norm", a->dtype, dtype) != WEFT_OK) return NULL;
  /* amax / amin over no singular value: 1.13's message names the dim as passed (-1) */
  if (kind && (a->sizes[w[0]] == 0 || a->sizes[w[1]] == 0))
    return weft__error_null(WEFT_INDEX_ERROR, "%s(): Expected reduction dim -1 to have non-zero size.",
                            kind > 0 ? "amax" : "amin");
  int64_t perm[WEFT_MAX_DIMS], inv[WEFT_MAX_DIMS], last = -1;
  backshift(a->ndim, w, perm, inv);
  weft_tensor* ad = (int)dtype >= 0 ? weft_to_dtype(a, dtype, false) : weft_tensor_retain((weft_tensor*)a);
  weft_tensor* p = ad ? weft_permute(ad, perm, a->ndim) : NULL;
  weft_tensor* sv = p ? weft_linalg_svdvals(p) : NULL;
  weft_tensor* r = !sv ? NULL
                   : kind == 0 ? weft_sum_dim(sv, &last, 1, keepdim, (weft_dtype)-1)
                   : kind > 0  ? weft_amax(sv, &last, 1, keepdim)
                               : weft_amin(sv, &last, 1, keepdim);
  weft_tensor* u = r && keepdim ? weft_unsqueeze(r, -1) : NULL;
  weft_tensor* out = u ? weft_permute(u, inv, a->ndim) : keepdim ? NULL : weft_tensor_retain(r);
  weft_tensor* list[] = {ad, p, sv, r, u};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
  return out;
}

static weft_tensor* matrix_norm_kernel(T a, weft_scalar ord, const int64_t* dim, int64_t ndim, bool keepdim,
                                       weft_dtype dtype) {
  int64_t w[2];
  if (matrix_checks(a, dim, ndim, w) != WEFT_OK) return NULL;
  double o = weft_scalar_to_double(ord), ab = fabs(o);
  char os[32];
  format_ord(os, sizeof os, o);
  if (ab != 1 && ab != 2 && ab != INFINITY)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "linalg.matrix_norm: Order %s not supported.", os);
  if (ab == 2) return svd_norm(a, w, o > 0 ? 2 : -2, keepdim, dtype);
  if (check_norm_dtype("linalg.matrix_norm", a->dtype, dtype) != WEFT_OK) return NULL;
  /* 1: max over columns of the column sums; inf: over rows of the row sums */
  if (ab == INFINITY) {
    int64_t t = w[0];
    w[0] = w[1], w[1] = t;
  }
  if (!keepdim && w[0] < w[1]) w[1]--;
  weft_tensor* sums = weft_linalg_vector_norm(a, weft_scalar_double(1.0), &w[0], 1, keepdim, dtype);
  weft_tensor* r = !sums ? NULL : o > 0 ? weft_amax(sums, &w[1], 1, keepdim) : weft_amin(sums, &w[1], 1, keepdim);
  weft_tensor_release(sums);
  return r;
}

static weft_tensor* matrix_norm_str_kernel(T a, const char* ord, const int64_t* dim, int64_t ndim, bool keepdim,
                                           weft_dtype dtype) {
  int64_t w[2];
  if (matrix_checks(a, dim, ndim, w) != WEFT_OK) return NULL;
  bool fro = strcmp(ord, "fro") == 0;
  if (!fro && strcmp(ord, "nuc") != 0)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "linalg.matrix_norm: Order %s not supported.", ord);
  if (!fro) return svd_norm(a, w, 0, keepdim, dtype);
  if (check_norm_dtype("linalg.matrix_norm", a->dtype, dtype) != WEFT_OK) return NULL;
  return weft_linalg_vector_norm(a, weft_scalar_double(2.0), dim, 2, keepdim, dtype);
}

weft_status weft__linalg_norm_register(void) {
  WEFT_KERNEL(linalg_vector_norm, COMPOSITE_IMPLICIT_AUTOGRAD, vector_norm_kernel);
  WEFT_KERNEL(linalg_matrix_norm, COMPOSITE_IMPLICIT_AUTOGRAD, matrix_norm_kernel);
  WEFT_KERNEL(linalg_matrix_norm_str_ord, COMPOSITE_IMPLICIT_AUTOGRAD, matrix_norm_str_kernel);
  return WEFT_OK;
}
