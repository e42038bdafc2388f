/* Householder QR and least squares on one column-major matrix (see qr.h).
 * The loops are written once, in qr_impl.inc, and compiled here once per
 * element type; this file holds what does not depend on it. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "kernels/kernels.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/qr.h"

/* NB columns per panel (dgeqrf's ilaenv block size); below BLOCK_MIN
 * columns the panel is the whole matrix (dgeqrf's crossover, nx = 128) */
enum { NB = 32, BLOCK_MIN = 128 };

static weft_status oom(void) { return weft__error(WEFT_OUT_OF_MEMORY, "linalg: out of memory"); }

/* a running ||x|| kept as scale * sqrt(ssq), as dnrm2 keeps it, so that
 * neither huge nor tiny entries overflow or flush to zero */
static double scaled_norm(double scale, double ssq) { return scale * sqrt(ssq); }
static void scaled_add(double v, double* scale, double* ssq) {
  if (v == 0) return;
  double a = fabs(v);
  if (*scale < a) {
    *ssq = 1 + *ssq * (*scale / a) * (*scale / a);
    *scale = a;
  } else {
    *ssq += (a / *scale) * (a / *scale);
  }
}

/* dlaic1: one step of incremental condition estimation. Given x (||x|| = 1)
 * with sest the estimate of the largest (job 1) or smallest (job 2)
 * singular value of a triangular L, alpha = x . w for the next column
 * (w, gamma), the estimate sestpr for [L w; 0 gamma] with its vector
 * [s x; c]; eps is the unit roundoff of the element type. */
static void laic1_max(double eps, double alpha, double gamma, double sest, double* sestpr, double* s, double* c) {
  double absalp = fabs(alpha), absgam = fabs(gamma), absest = fabs(sest);
  if (sest == 0) {
    double s1 = fmax(absgam, absalp);
    if (s1 == 0) {
      *s = 0, *c = 1, *sestpr = 0;
      return;
    }
    *s = alpha / s1, *c = gamma / s1;
    double tmp = sqrt(*s * *s + *c * *c);
    *s /= tmp, *c /= tmp, *sestpr = s1 * tmp;
  } else if (absgam <= eps * absest) {
    double tmp = fmax(absest, absalp), s1 = absest / tmp, s2 = absalp / tmp;
    *s = 1, *c = 0, *sestpr = tmp * sqrt(s1 * s1 + s2 * s2);
  } else if (absalp <= eps * absest) {
    if (absgam <= absest) *s = 1, *c = 0, *sestpr = absest;
    else *s = 0, *c = 1, *sestpr = absgam;
  } else if (absest <= eps * absalp || absest <= eps * absgam) {
    if (absgam <= absalp) {
      double tmp = absgam / absalp, sc = sqrt(1 + tmp * tmp);
      *sestpr = absalp * sc, *c = (gamma / absalp) / sc, *s = copysign(1.0, alpha) / sc;
    } else {
      double tmp = absalp / absgam, cc = sqrt(1 + tmp * tmp);
      *sestpr = absgam * cc, *s = (alpha / absgam) / cc, *c = copysign(1.0, gamma) / cc;
    }
  } else {
    double z1 = alpha / absest, z2 = gamma / absest;
    double b = (1 - z1 * z1 - z2 * z2) * 0.5, cc = z1 * z1;
    double t = b > 0 ? cc / (b + sqrt(b * b + cc)) : sqrt(b * b + cc) - b;
    double sine = -z1 / t, cosine = -z2 / (1 + t), tmp = sqrt(sine * sine + cosine * cosine);
    *s = sine / tmp, *c = cosine / tmp, *sestpr = sqrt(t + 1) * absest;
  }
}

static void laic1_min(double eps, double alpha, double gamma, double sest, double* sestpr, double* s, double* c) {
  double absalp = fabs(alpha), absgam = fabs(gamma), absest = fabs(sest);
  if (sest == 0) {
    double sine = -gamma, cosine = alpha;
    if (fmax(absgam, absalp) == 0) sine = 1, cosine = 0;
    double s1 = fmax(fabs(sine), fabs(cosine));
    *s = sine / s1, *c = cosine / s1;
    double tmp = sqrt(*s * *s + *c * *c);
    *s /= tmp, *c /= tmp, *sestpr = 0;
  } else if (absgam <= eps * absest) {
    *s = 0, *c = 1, *sestpr = absgam;
  } else if (absalp <= eps * absest) {
    if (absgam <= absest) *s = 0, *c = 1, *sestpr = absgam;
    else *s = 1, *c = 0, *sestpr = absest;
  } else if (absest <= eps * absalp || absest <= eps * absgam) {
    if (absgam <= absalp) {
      double tmp = absgam / absalp, cc = sqrt(1 + tmp * tmp);
      *sestpr = absest * (tmp / cc), *s = -(gamma / absalp) / cc, *c = copysign(1.0, alpha) / cc;
    } else {
      double tmp = absalp / absgam, sc = sqrt(1 + tmp * tmp);
      *sestpr = absest / sc, *c = (alpha / absgam) / sc, *s = -copysign(1.0, gamma) / sc;
    }
  } else {
    double z1 = alpha / absest, z2 = gamma / absest;
    double norma = fmax(1 + z1 * z1 + fabs(z1 * z2), fabs(z1 * z2) + z2 * z2);
    double test = 1 + 2 * (z1 - z2) * (z1 + z2), sine, cosine;
    if (test >= 0) {
      double b = (z1 * z1 + z2 * z2 + 1) * 0.5, cc = z2 * z2;
      double t = cc / (b + sqrt(fabs(b * b - cc)));
      sine = z1 / (1 - t), cosine = -z2 / t;
      *sestpr = sqrt(t + 4 * eps * eps * norma) * absest;
    } else {
      double b = (z2 * z2 + z1 * z1 - 1) * 0.5, cc = z1 * z1;
      double t = b >= 0 ? -cc / (b + sqrt(b * b + cc)) : b - sqrt(b * b + cc);
      sine = -z1 / t, cosine = -z2 / (1 + t);
      *sestpr = sqrt(1 + t + 4 * eps * eps * norma) * absest;
    }
    double tmp = sqrt(sine * sine + cosine * cosine);
    *s = sine / tmp, *c = cosine / tmp;
  }
}

#define QR_CAT2(a, b) a##_##b
#define QR_CAT(a, b) QR_CAT2(a, b)
#define F(name) QR_CAT(name, SUF)

#define T float
#define SUF f32
#define DT WEFT_FLOAT32
#include "ops/cpu/qr_impl.inc"
#undef T
#undef SUF
#undef DT

#define T double
#define SUF f64
#define DT WEFT_FLOAT64
#include "ops/cpu/qr_impl.inc"
#undef T
#undef SUF
#undef DT

weft_status weft__qr_factor(weft_dtype t, int64_t m, int64_t n, void* a, int64_t lda, void* tau) {
  return t == WEFT_FLOAT64 ? qr_factor_f64(m, n, a, lda, tau) : qr_factor_f32(m, n, a, lda, tau);
}

weft_status weft__qr_form_q(weft_dtype t, int64_t m, int64_t qc, int64_t k, const void* a, int64_t lda,
                            const void* tau, void* q, int64_t ldq) {
  return t == WEFT_FLOAT64 ? form_q_f64(m, qc, k, a, lda, tau, q, ldq) : form_q_f32(m, qc, k, a, lda, tau, q, ldq);
}

weft_status weft__qr_apply(weft_dtype t, bool transpose, int64_t m, int64_t nc, int64_t k, const void* a, int64_t lda,
                           const void* tau, void* c, int64_t ldc) {
  return t == WEFT_FLOAT64 ? apply_f64(transpose, m, nc, k, a, lda, tau, c, ldc)
                           : apply_f32(transpose, m, nc, k, a, lda, tau, c, ldc);
}

weft_status weft__lstsq_gels(weft_dtype t, int64_t m, int64_t n, int64_t nrhs, void* a, void* b, int64_t ldb,
                             int64_t* info) {
  return t == WEFT_FLOAT64 ? gels_f64(m, n, nrhs, a, b, ldb, info) : gels_f32(m, n, nrhs, a, b, ldb, info);
}

weft_status weft__lstsq_gelsy(weft_dtype t, int64_t m, int64_t n, int64_t nrhs, void* a, void* b, int64_t ldb,
                              double rcond, int64_t* rank) {
  return t == WEFT_FLOAT64 ? gelsy_f64(m, n, nrhs, a, b, ldb, rcond, rank)
                           : gelsy_f32(m, n, nrhs, a, b, ldb, rcond, rank);
}
