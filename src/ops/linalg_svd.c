/* torch.linalg.svd and svdvals (issue 25), as PyTorch 1.13: _linalg_svd
 * computes (its gradient is 1.13's svd_backward), linalg_svd and
 * linalg_svdvals are composites over it; svdvals asks for the vectors only
 * when a gradient will need them (1.13's _may_require_fw_or_bw_grad).
 * Every matrix of the batch goes through the one-sided Jacobi driver of
 * src/ops/cpu/svd.c, in parallel over the batch. U and Vh are column-major
 * per matrix, the strides of 1.13's LAPACK-made results. A NaN is refused
 * with 1.13's message; an inf (no NaN) gives NaN results for that matrix,
 * as S is there (LAPACK's U and Vh then are arbitrary). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "ops/cpu/svd.h"
#include "ops/ops.h"
#include "weft/parallel.h"

typedef const weft_tensor* T;

static int64_t rows(T t) { return t->sizes[t->ndim - 2]; }
static int64_t cols(T t) { return t->sizes[t->ndim - 1]; }

/* checkIsMatrix, checkFloatingOrComplex, then the CPU kernel's dispatch refusal */
static weft_status svd_checks(T a) {
  if (a->ndim < 2)
    return weft__error(WEFT_INVALID_ARGUMENT, "linalg.svd: The input tensor A must have at least 2 dimensions.");
  if (!weft_dtype_is_floating(a->dtype))
    return weft__error(WEFT_TYPE_ERROR, "linalg.svd: Expected a floating point or complex tensor as input. Got %s",
                       weft_dtype_name(a->dtype));
  if (a->dtype != WEFT_FLOAT32 && a->dtype != WEFT_FLOAT64)
    return weft__error(WEFT_TYPE_ERROR, "\"linalg_svd_cpu\" not implemented for '%s'", weft_dtype_name(a->dtype));
  return WEFT_OK;
}

/* a's batch dims, then d0 x d1 */
static weft_tensor* batch_of(T a, int extra, int64_t d0, int64_t d1) {
  int64_t sizes[WEFT_MAX_DIMS];
  int nb = a->ndim - 2;
  memcpy(sizes, a->sizes, sizeof(int64_t) * (size_t)nb);
  sizes[nb] = d0, sizes[nb + 1] = d1;
  return weft_empty(sizes, nb + extra, a->dtype, a->device, WEFT_CONTIGUOUS_FORMAT);
}

/* a (batch, r, c) matrix stored column-major: (batch, c, r) transposed */
static weft_tensor* column_major(T a, int64_t r, int64_t c) {
  weft_tensor* e = batch_of(a, 2, c, r);
  weft_tensor* v = e ? weft_transpose(e, -2, -1) : NULL;
  weft_tensor_release(e);
  return v;
}

typedef struct {
  weft_dtype t;
  int64_t m, n, k, ucols, vrows;
  bool full, uv;
  char *a, *s, *u, *vh;
  const int* kind; /* weft__svd_classify of each matrix */
} svd_job;

static void fill_nan(weft_dtype t, void* p, int64_t count) {
  for (int64_t i = 0; i < count; i++) {
    if (t == WEFT_FLOAT64)
      ((double*)p)[i] = NAN;
    else
      ((float*)p)[i] = NAN;
  }
}

static weft_status svd_range(void* ctx, int64_t begin, int64_t end) {
  const svd_job* j = ctx;
  size_t es = weft_dtype_size(j->t);
  for (int64_t b = begin; b < end; b++) {
    char* a = j->a + (size_t)(b * j->m * j->n) * es;
    char* s = j->s + (size_t)(b * j->k) * es;
    char* u = j->uv ? j->u + (size_t)(b * j->m * j->ucols) * es : NULL;
    char* vh = j->uv ? j->vh + (size_t)(b * j->n * j->vrows) * es : NULL;
    if (j->kind[b]) { /* an inf */
      fill_nan(j->t, s, j->k);
      if (u) fill_nan(j->t, u, j->m * j->ucols), fill_nan(j->t, vh, j->n * j->vrows);
      continue;
    }
    weft_status st = weft__svd(j->t, j->m, j->n, a, s, u, vh, j->full);
    if (st != WEFT_OK) return st;
  }
  return WEFT_OK;
}

/* kind of every matrix; the first with a NaN is refused, as 1.13's _linalg_check_errors */
static weft_status classify_all(const svd_job* j, int64_t nb, int* kind, bool batched) {
  size_t es = weft_dtype_size(j->t);
  for (int64_t b = 0; b < nb; b++) {
    kind[b] = weft__svd_classify(j->t, j->m * j->n, j->a + (size_t)(b * j->m * j->n) * es);
    if (kind[b] < 2) continue;
    char pre[48] = "";
    if (batched) snprintf(pre, sizeof pre, "(Batch element %lld): ", (long long)b);
    return weft__error(WEFT_INVALID_ARGUMENT, "linalg.svd: %sThe algorithm failed to converge because the input "
                       "matrix contained non-finite values.", pre);
  }
  return WEFT_OK;
}

static weft_status compute(T a, weft_tensor3 r, bool full, bool uv) {
  int64_t m = rows(a), n = cols(a), nb = r.t[1]->numel / (m < n ? m : n);
  weft_tensor* ac = weft_contiguous(a, WEFT_CONTIGUOUS_FORMAT);
  int* kind = ac ? malloc(sizeof(int) * (size_t)nb) : NULL;
  if (ac && !kind) weft__error(WEFT_OUT_OF_MEMORY, "linalg.svd: out of memory");
  svd_job j = {a->dtype, m, n, r.t[1]->sizes[r.t[1]->ndim - 1], full ? m : (m < n ? m : n),
               full ? n : (m < n ? m : n), full, uv, ac ? weft_tensor_data_ptr(ac) : NULL,
               weft_tensor_data_ptr(r.t[1]), uv ? weft_tensor_data_ptr(r.t[0]) : NULL,
               uv ? weft_tensor_data_ptr(r.t[2]) : NULL, kind};
  weft_status s = kind ? classify_all(&j, nb, kind, a->ndim > 2) : weft_last_status();
  if (s == WEFT_OK) s = weft_parallel_for(0, nb, 1, svd_range, &j);
  free(kind);
  weft_tensor_release(ac);
  return s;
}

/* the vectors of an empty matrix: complete bases are identities (1.13 fills them so) */
static weft_status identity_bases(weft_tensor3 r) {
  for (int i = 0; i < 3; i += 2) {
    weft_tensor* t = r.t[i];
    int64_t d = t->sizes[t->ndim - 1];
    if (t->numel == 0 || d != t->sizes[t->ndim - 2]) continue;
    weft_tensor* e = weft_eye(d, t->dtype, t->device);
    weft_status s = e ? weft_copy_(t, e) : weft_last_status();
    weft_tensor_release(e);
    if (s != WEFT_OK) return s;
  }
  return WEFT_OK;
}

static weft_tensor3 svd_kernel(T a, bool full, bool uv) {
  weft_tensor3 r = {{NULL, NULL, NULL}, WEFT_OK};
  if ((r.status = svd_checks(a)) != WEFT_OK) return r;
  int64_t m = rows(a), n = cols(a), k = m < n ? m : n;
  static const int64_t none = 0;
  r.t[1] = batch_of(a, 1, k, 0);
  r.t[0] = uv ? column_major(a, m, full ? m : k) : weft_empty(&none, 1, a->dtype, a->device, WEFT_CONTIGUOUS_FORMAT);
  r.t[2] = uv ? column_major(a, full ? n : k, n) : weft_empty(&none, 1, a->dtype, a->device, WEFT_CONTIGUOUS_FORMAT);
  weft_status s = r.t[0] && r.t[1] && r.t[2] ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && a->device != WEFT_DEVICE_META) {
    if (r.t[1]->numel)
      s = compute(a, r, full, uv);
    else if (uv)
      s = identity_bases(r);
  }
  if (s == WEFT_OK) return r;
  weft_tensor3_release(r);
  return (weft_tensor3){{NULL, NULL, NULL}, s};
}

static weft_tensor3 linalg_svd_kernel(T a, bool full) { return weft__linalg_svd(a, full, true); }

static weft_tensor* svdvals_kernel(T a) {
  /* the vectors only when a gradient will need them (grad mode on, a requiring grad) */
  bool uv = a->requires_grad && !(weft_tls_excluded() & weft_autograd_keyset());
  weft_tensor3 r = weft__linalg_svd(a, false, uv);
  weft_tensor_release(r.t[0]);
  weft_tensor_release(r.t[2]);
  return r.t[1];
}

weft_status weft__linalg_svd_register(void) {
  WEFT_KERNEL(_linalg_svd, CPU, svd_kernel);
  WEFT_KERNEL(_linalg_svd, META, svd_kernel);
  WEFT_KERNEL(linalg_svd, COMPOSITE_IMPLICIT_AUTOGRAD, linalg_svd_kernel);
  WEFT_KERNEL(linalg_svdvals, COMPOSITE_IMPLICIT_AUTOGRAD, svdvals_kernel);
  return WEFT_OK;
}
