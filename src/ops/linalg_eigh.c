/* torch.linalg.eigh and eigvalsh (issue 25), as PyTorch 1.13 has them:
 * composites over _linalg_eigh(A, UPLO, compute_v), the op with the
 * gradient. float32 and float64, any batch dims, empty and 1 x 1 included;
 * only the UPLO triangle is read. The eigenvalues come back contiguous and
 * ascending, the eigenvectors column-major per matrix (LAPACK's layout, as
 * 1.13's) or, without compute_v, an empty (0,) tensor. Each batch element is
 * solved by the float64 driver of src/ops/cpu/eigh.c, the batch in parallel;
 * an element that does not converge (NaN or inf in it) is reported with its
 * batch index, as 1.13's _LinAlgError is. The Meta kernel runs the same
 * checks and shapes. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "ops/cpu/eigh.h"
#include "ops/ops.h"
#include "weft/parallel.h"

typedef const weft_tensor* T;

static int64_t order(T a) { return a->sizes[a->ndim - 1]; }
static int64_t batch_count(T a) {
  int64_t b = 1;
  for (int i = 0; i < a->ndim - 2; i++) b *= a->sizes[i];
  return b;
}

/* 1.13's squareCheckInputs, checkUplo, then the CPU kernel's dtypes */
static weft_status check_input(const char* op, T a, const char* uplo) {
  if (a->ndim < 2)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: The input tensor A must have at least 2 dimensions.", op);
  if (a->sizes[a->ndim - 2] != order(a))
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: A must be batches of square matrices, but they are %lld by %lld "
                       "matrices", op, (long long)a->sizes[a->ndim - 2], (long long)order(a));
  char u = uplo && strlen(uplo) == 1 ? (char)toupper((unsigned char)uplo[0]) : 0;
  if (u != 'L' && u != 'U')
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: Expected UPLO argument to be 'L' or 'U', but got %s", op,
                       uplo ? uplo : "null");
  if (a->dtype != WEFT_FLOAT32 && a->dtype != WEFT_FLOAT64)
    return weft__error(WEFT_TYPE_ERROR, "\"linalg_eigh_cpu\" not implemented for '%s'", weft_dtype_name(a->dtype));
  return WEFT_OK;
}

static bool upper(const char* uplo) { return toupper((unsigned char)uplo[0]) == 'U'; }

typedef struct {
  const weft_tensor* src; /* contiguous; its lower triangle is the one to read */
  weft_tensor* w;         /* (..., n) */
  weft_tensor* vt;        /* (..., n, n) row-major: row j the eigenvector of w[j]; NULL without compute_v */
  int64_t n, *info;
} solve_ctx;

static void load(const void* p, bool f64, double* x, int64_t m) {
  for (int64_t i = 0; i < m; i++) x[i] = f64 ? ((const double*)p)[i] : (double)((const float*)p)[i];
}
static void store(void* p, bool f64, const double* x, int64_t m) {
  for (int64_t i = 0; i < m; i++) {
    if (f64)
      ((double*)p)[i] = x[i];
    else
      ((float*)p)[i] = (float)x[i];
  }
}

/* batch elements [b0, b1), in float64 scratch */
static weft_status solve_range(void* p, int64_t b0, int64_t b1) {
  solve_ctx* c = p;
  int64_t n = c->n, nn = n * n;
  bool f64 = c->src->dtype == WEFT_FLOAT64;
  size_t es = f64 ? 8 : 4;
  double* a = malloc(sizeof(double) * (size_t)(2 * nn + n));
  if (!a) return weft__error(WEFT_OUT_OF_MEMORY, "linalg.eigh: out of memory");
  double *vt = a + nn, *w = vt + nn;
  weft_status s = WEFT_OK;
  for (int64_t b = b0; b < b1 && s == WEFT_OK; b++) {
    load((const char*)weft_tensor_data_ptr(c->src) + (size_t)(b * nn) * es, f64, a, nn);
    s = weft__eigh(n, a, w, c->vt ? vt : NULL, &c->info[b]);
    store((char*)weft_tensor_data_ptr(c->w) + (size_t)(b * n) * es, f64, w, n);
    if (c->vt) store((char*)weft_tensor_data_ptr(c->vt) + (size_t)(b * nn) * es, f64, vt, nn);
  }
  free(a);
  return s;
}

/* the first batch element that did not converge, as 1.13's _LinAlgError */
static weft_status convergence(T a, const int64_t* info, int64_t nb) {
  for (int64_t b = 0; b < nb; b++) {
    if (!info[b]) continue;
    char pre[48] = "";
    if (a->ndim > 2) snprintf(pre, sizeof pre, "(Batch element %lld): ", (long long)b);
    return weft__error(WEFT_INVALID_ARGUMENT, "linalg.eigh: %sThe algorithm failed to converge because the input "
                       "matrix is ill-conditioned or has too many repeated eigenvalues (error code: %lld).", pre,
                       (long long)info[b]);
  }
  return WEFT_OK;
}

/* fills w and vt from a's UPLO triangle */
static weft_status solve_all(T a, bool up, weft_tensor* w, weft_tensor* vt) {
  weft_tensor* v = up ? weft_transpose(a, -2, -1) : weft_tensor_retain((weft_tensor*)a);
  weft_tensor* src = v ? weft_clone(v, WEFT_CONTIGUOUS_FORMAT) : NULL;
  weft_tensor_release(v);
  int64_t nb = batch_count(a), n = order(a);
  int64_t* info = src ? calloc((size_t)nb, sizeof(int64_t)) : NULL;
  weft_status s = !src   ? weft_last_status()
                  : info ? WEFT_OK
                         : weft__error(WEFT_OUT_OF_MEMORY, "linalg.eigh: out of memory");
  if (s == WEFT_OK) {
    solve_ctx c = {src, w, vt, n, info};
    /* a chunk of batch elements worth ~2^16 flops at least */
    int64_t grain = 65536 / (n * n * n) + 1;
    s = weft_parallel_for(0, nb, grain, solve_range, &c);
  }
  if (s == WEFT_OK) s = convergence(a, info, nb);
  free(info);
  weft_tensor_release(src);
  return s;
}

static weft_tensor2 linalg_eigh_kernel(T a, const char* uplo, bool compute_v) {
  weft_tensor2 r = {{NULL, NULL}};
  if (check_input("linalg.eigh", a, uplo) != WEFT_OK) return r;
  int64_t empty0 = 0;
  r.t[0] = weft_empty(a->sizes, a->ndim - 1, a->dtype, a->device, WEFT_CONTIGUOUS_FORMAT);
  /* row-major V^T is column-major V */
  weft_tensor* vt = compute_v ? weft_empty(a->sizes, a->ndim, a->dtype, a->device, WEFT_CONTIGUOUS_FORMAT)
                              : weft_empty(&empty0, 1, a->dtype, a->device, WEFT_CONTIGUOUS_FORMAT);
  weft_status s = r.t[0] && vt ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && a->device != WEFT_DEVICE_META && a->numel)
    s = solve_all(a, upper(uplo), r.t[0], compute_v ? vt : NULL);
  if (s == WEFT_OK) r.t[1] = compute_v ? weft_transpose(vt, -2, -1) : weft_tensor_retain(vt);
  weft_tensor_release(vt);
  if (r.t[1]) return r;
  weft_tensor_release(r.t[0]);
  return (weft_tensor2){{NULL, NULL}};
}

/* ---- the composites (their gradient is _linalg_eigh's) ---- */
static weft_tensor2 eigh_kernel(T self, const char* uplo) { return weft_op__linalg_eigh(self, uplo, true); }

/* 1.13's _may_require_fw_or_bw_grad: the eigenvectors are computed only
 * when the backward will need them */
static weft_tensor* eigvalsh_kernel(T self, const char* uplo) {
  if (check_input("linalg.eigvalsh", self, uplo) != WEFT_OK) return NULL;
  bool grad = self->requires_grad && !(weft_tls_excluded() & weft_autograd_keyset());
  weft_tensor2 r = weft_op__linalg_eigh(self, uplo, grad);
  weft_tensor_release(r.t[1]);
  return r.t[0];
}

weft_status weft__linalg_eigh_register(void) {
  WEFT_KERNEL(op__linalg_eigh, CPU, linalg_eigh_kernel);
  WEFT_KERNEL(op__linalg_eigh, META, linalg_eigh_kernel);
  WEFT_KERNEL(linalg_eigh, COMPOSITE_IMPLICIT_AUTOGRAD, eigh_kernel);
  WEFT_KERNEL(linalg_eigvalsh, COMPOSITE_IMPLICIT_AUTOGRAD, eigvalsh_kernel);
  return WEFT_OK;
}
