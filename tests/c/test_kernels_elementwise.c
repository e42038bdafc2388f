/* f32 binary, comparison and unary kernels: every backend against plain C
 * references, at the tile sizes and around them, in place on a, b and both;
 * the binary _zip / _unzip forms (planes beside interleaved channels) too. */
#include <math.h>
#include <stdlib.h>

#include "kernel_test_util.h"
#include "test.h"

#define MAXN 1100

static float rand_special(void) {
  switch (kt_rand() % 16) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return 0.0f;
    case 4: return -0.0f;
    case 5: return (float)(int)(kt_rand() % 7) - 3.0f; /* equal values, ties for round */
    case 6: return ((float)(int)(kt_rand() % 20) - 10.0f) + 0.5f;
    default: return kt_randf(-10.0f, 10.0f);
  }
}
static void fill_f32(float* x, size_t n) {
  for (size_t i = 0; i < n; i++) x[i] = rand_special();
}

/* ---- binary ---- */
enum bop { ADD, SUB, MUL, DIV, MAX, MIN, RADD, RSUB, RDIV };
static float ref_binary(enum bop op, float a, float b, float alpha) {
  switch (op) {
    case ADD: return a + alpha * b;
    case SUB: return a - alpha * b;
    case MUL: return a * b;
    case DIV: return a / b;
    case MAX: return kt_ref_max(a, b);
    case MIN: return kt_ref_min(a, b);
    case RADD: return b + alpha * a;
    case RSUB: return b - alpha * a;
    case RDIV: return b / a;
  }
  return 0;
}

struct bcase {
  const char* name;
  enum bop op;
  int scalar;
  size_t off; /* offset of the kernel pointer in weft_kernels */
};
#define BC(field, op, sc) {#field, op, sc, offsetof(weft_kernels, field)}
static const struct bcase bcases[] = {
    BC(f32_vadd, ADD, 0),   BC(f32_vsub, SUB, 0),   BC(f32_vmul, MUL, 0),     BC(f32_vdiv, DIV, 0),
    BC(f32_vmax, MAX, 0),   BC(f32_vmin, MIN, 0),   BC(f32_vaddc, ADD, 1),    BC(f32_vsubc, SUB, 1),
    BC(f32_vmulc, MUL, 1),  BC(f32_vdivc, DIV, 1),  BC(f32_vmaxc, MAX, 1),    BC(f32_vminc, MIN, 1),
    BC(f32_vraddc, RADD, 1), BC(f32_vrsubc, RSUB, 1), BC(f32_vrdivc, RDIV, 1),
};

static void test_binary(void) {
  static float a[MAXN], b[MAXN], y[MAXN + 8], ref[MAXN], ia[MAXN], ib[MAXN];
  const float alphas[] = {1.0f, 2.5f, -0.5f};
  for (int bk = 0; bk < KT_NBACKENDS; bk++) {
    const weft_kernels* k = kt_backend(bk);
    for (size_t c = 0; c < sizeof bcases / sizeof bcases[0]; c++) {
      weft_f32_vbinary_fn* fn = *(weft_f32_vbinary_fn* const*)((const char*)k + bcases[c].off);
      int ok = 1;
      for (size_t si = 0; si < KT_NSIZES; si++) {
        size_t n = kt_sizes[si];
        for (size_t al = 0; al < 3; al++) {
          struct weft_f32_binary_params p = {alphas[al]};
          fill_f32(a, n);
          fill_f32(b, n);
          for (size_t i = 0; i < n; i++) ref[i] = ref_binary(bcases[c].op, a[i], b[bcases[c].scalar ? 0 : i], p.alpha);
          for (size_t i = 0; i < n + 8; i++) y[i] = 12345.0f;
          fn(n, a, b, y, &p);
          for (size_t i = 0; i < n; i++) ok &= kt_same_f32(y[i], ref[i]);
          for (size_t i = n; i < n + 8; i++) ok &= y[i] == 12345.0f;
          /* in place on a */
          memcpy(ia, a, n * 4);
          fn(n, ia, b, ia, &p);
          for (size_t i = 0; i < n; i++) ok &= kt_same_f32(ia[i], ref[i]);
          if (!bcases[c].scalar) {
            memcpy(ib, b, n * 4); /* in place on b */
            fn(n, a, ib, ib, &p);
            for (size_t i = 0; i < n; i++) ok &= kt_same_f32(ib[i], ref[i]);
            memcpy(ia, a, n * 4); /* a op a, in place */
            fn(n, ia, ia, ia, &p);
            for (size_t i = 0; i < n; i++) ok &= kt_same_f32(ia[i], ref_binary(bcases[c].op, a[i], a[i], p.alpha));
          }
        }
      }
      if (!ok) fprintf(stderr, "%s (%s) wrong\n", bcases[c].name, k->isa);
      CHECK(ok);
    }
  }
}

/* The _zip forms (and _unzip, below): a and y interleave c channels, b is c planes. Checked
 * against the plain reference and, bit for bit, against the array-array
 * kernel over the planes interleaved by hand (the two-pass path it
 * replaces); a guard zone after y; in place on a. */
static const struct zcase {
  const char* name;
  enum bop op;
  size_t off, unzip, plain;
} zcases[] = {
#define ZC(f, op) {#f "_zip", op, offsetof(weft_kernels, f##_zip), offsetof(weft_kernels, f##_unzip), offsetof(weft_kernels, f)}
    ZC(f32_vadd, ADD), ZC(f32_vsub, SUB), ZC(f32_vmul, MUL), ZC(f32_vdiv, DIV), ZC(f32_vmax, MAX), ZC(f32_vmin, MIN),
#undef ZC
};

static int check_zip(const weft_kernels* k, const struct zcase* z, size_t n, size_t c, float alpha) {
  static float a[4 * MAXN], planes[4][MAXN], bi[4 * MAXN], y[4 * MAXN + 8], two[4 * MAXN], ia[4 * MAXN];
  struct weft_f32_binary_params p = {alpha};
  weft_f32_vbinary_zip_fn* fn = *(weft_f32_vbinary_zip_fn* const*)((const char*)k + z->off);
  weft_f32_vbinary_fn* plain = *(weft_f32_vbinary_fn* const*)((const char*)k + z->plain);
  const float* b[4] = {planes[0], planes[1], planes[2], planes[3]};
  fill_f32(a, n * c);
  for (size_t j = 0; j < c; j++) fill_f32(planes[j], n);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < c; j++) bi[i * c + j] = planes[j][i];
  for (size_t i = 0; i < n * c + 8; i++) y[i] = 12345.0f;
  fn(n, c, a, b, y, &p);
  plain(n * c, a, bi, two, &p);
  int ok = 1;
  for (size_t i = 0; i < n * c; i++) {
    ok &= kt_same_f32(y[i], ref_binary(z->op, a[i], bi[i], alpha));
    ok &= kt_f32_bits(y[i]) == kt_f32_bits(two[i]) || (isnan(y[i]) && isnan(two[i]));
  }
  for (size_t i = n * c; i < n * c + 8; i++) ok &= y[i] == 12345.0f;
  memcpy(ia, a, n * c * 4);
  fn(n, c, ia, b, ia, &p);
  for (size_t i = 0; i < n * c; i++) ok &= kt_f32_bits(ia[i]) == kt_f32_bits(y[i]) || (isnan(ia[i]) && isnan(y[i]));
  return ok;
}

/* The _unzip forms, the mirror: a and y are c planes, b interleaves them
 * (sized exactly, so ASan sees a read past its last pixel); in place on the
 * planes of a. */
static int check_unzip(const weft_kernels* k, const struct zcase* z, size_t n, size_t c, float alpha) {
  static float a[4][MAXN], y[4][MAXN + 8], two[4 * MAXN], ai[4 * MAXN], ia[4][MAXN];
  struct weft_f32_binary_params p = {alpha};
  weft_f32_vbinary_unzip_fn* fn = *(weft_f32_vbinary_unzip_fn* const*)((const char*)k + z->unzip);
  weft_f32_vbinary_fn* plain = *(weft_f32_vbinary_fn* const*)((const char*)k + z->plain);
  float* b = malloc(n * c * 4 + 1);
  fill_f32(b, n * c);
  const float* ap[4] = {a[0], a[1], a[2], a[3]};
  float* yp[4] = {y[0], y[1], y[2], y[3]};
  float* iap[4] = {ia[0], ia[1], ia[2], ia[3]};
  for (size_t j = 0; j < c; j++) {
    fill_f32(a[j], n);
    for (size_t i = 0; i < n + 8; i++) y[j][i] = 12345.0f;
    memcpy(ia[j], a[j], n * 4);
  }
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < c; j++) ai[i * c + j] = a[j][i];
  fn(n, c, ap, b, yp, &p);
  plain(n * c, ai, b, two, &p);
  fn(n, c, (const float* const*)iap, b, iap, &p);
  int ok = 1;
  for (size_t j = 0; j < c; j++) {
    for (size_t i = 0; i < n; i++) {
      float r = two[i * c + j];
      ok &= kt_same_f32(y[j][i], ref_binary(z->op, a[j][i], b[i * c + j], alpha));
      ok &= kt_f32_bits(y[j][i]) == kt_f32_bits(r) || (isnan(y[j][i]) && isnan(r));
      ok &= kt_f32_bits(ia[j][i]) == kt_f32_bits(r) || (isnan(ia[j][i]) && isnan(r));
    }
    for (size_t i = n; i < n + 8; i++) ok &= y[j][i] == 12345.0f;
  }
  free(b);
  return ok;
}

static void test_binary_zip(void) {
  const float alphas[] = {1.0f, -0.5f};
  for (int bk = 0; bk < KT_NBACKENDS; bk++) {
    const weft_kernels* k = kt_backend(bk);
    for (size_t zc = 0; zc < sizeof zcases / sizeof zcases[0]; zc++) {
      int ok = 1;
      for (size_t c = 2; c <= 4; c++)
        for (size_t si = 0; si < KT_NSIZES; si++)
          for (size_t al = 0; al < 2; al++) {
            ok &= check_zip(k, &zcases[zc], kt_sizes[si], c, alphas[al]);
            ok &= check_unzip(k, &zcases[zc], kt_sizes[si], c, alphas[al]);
          }
      if (!ok) fprintf(stderr, "%s (%s) wrong\n", zcases[zc].name, k->isa);
      CHECK(ok);
    }
  }
}

/* ---- comparisons ---- */
static int ref_cmp(int op, float a, float b) {
  switch (op) {
    case 0: return a == b;
    case 1: return a != b;
    case 2: return a < b;
    case 3: return a <= b;
    case 4: return a > b;
    default: return a >= b;
  }
}

static void test_cmp(void) {
  static float a[MAXN], b[MAXN];
  static uint8_t y[MAXN + 16];
  for (int bk = 0; bk < KT_NBACKENDS; bk++) {
    const weft_kernels* k = kt_backend(bk);
    weft_f32_vcmp_fn* fns[6][2] = {{k->f32_veq, k->f32_veqc}, {k->f32_vne, k->f32_vnec}, {k->f32_vlt, k->f32_vltc},
                                   {k->f32_vle, k->f32_vlec}, {k->f32_vgt, k->f32_vgtc}, {k->f32_vge, k->f32_vgec}};
    for (int op = 0; op < 6; op++) {
      for (int sc = 0; sc < 2; sc++) {
        int ok = 1;
        for (size_t si = 0; si < KT_NSIZES; si++) {
          size_t n = kt_sizes[si];
          fill_f32(a, n);
          fill_f32(b, n);
          memset(y, 0x77, n + 16);
          fns[op][sc](n, a, b, y);
          for (size_t i = 0; i < n; i++) ok &= y[i] == ref_cmp(op, a[i], b[sc ? 0 : i]);
          for (size_t i = n; i < n + 16; i++) ok &= y[i] == 0x77;
        }
        if (!ok) fprintf(stderr, "cmp %d%s (%s) wrong\n", op, sc ? "c" : "", k->isa);
        CHECK(ok);
      }
    }
  }
}

/* ---- unary ---- */
/* PyTorch's clamp_min: NaN and -0 stay. On the bits: clang 14 for wasm folds
 * `x < 0 ? 0 : x` into f32.max, which gives +0 for -0. */
static float ref_relu(float x) {
  uint32_t b;
  memcpy(&b, &x, 4);
  uint32_t mag = b & 0x7fffffffu;
  return (b >> 31) && mag != 0 && mag <= 0x7f800000u ? 0.0f : x;
}
static float ref_neg(float x) { return -x; }
static float ref_recip(float x) { return 1.0f / x; }
static float ref_rsqrt(float x) { return 1.0f / sqrtf(x); }
static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double ref_gelu(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }
static double ref_gelu_tanh(double x) {
  return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

struct ucase_exact {
  const char* name;
  size_t off;
  float (*ref)(float);
};
#define UE(field, fn) {#field, offsetof(weft_kernels, field), fn}
static const struct ucase_exact uexact[] = {
    UE(f32_vneg, ref_neg),     UE(f32_vabs, fabsf),   UE(f32_vsqrt, sqrtf),  UE(f32_vrelu, ref_relu),
    UE(f32_vfloor, floorf),    UE(f32_vceil, ceilf),  UE(f32_vtrunc, truncf), UE(f32_vround, nearbyintf),
    UE(f32_vrecip, ref_recip), UE(f32_vrsqrt, ref_rsqrt),
};

struct ucase_approx {
  const char* name;
  size_t off;
  double (*ref)(double);
  float lo, hi;
  int approximate;
};
#define UA(field, fn, lo, hi) {#field, offsetof(weft_kernels, field), fn, lo, hi, 0}
static const struct ucase_approx uapprox[] = {
    UA(f32_vexp, exp, -80, 80),      UA(f32_vlog, log, 1e-30f, 1e30f), UA(f32_vlog1p, log1p, -0.999f, 100),
    UA(f32_vexpm1, expm1, -20, 20),  UA(f32_vsigmoid, ref_sigmoid, -30, 30), UA(f32_vtanh, tanh, -10, 10),
    UA(f32_verf, erf, -5, 5),        UA(f32_vsin, sin, -100, 100),    UA(f32_vcos, cos, -100, 100),
    UA(f32_vtan, tan, -1.5f, 1.5f),  UA(f32_vgelu, ref_gelu, -10, 10),
    {"f32_vgelu tanh", offsetof(weft_kernels, f32_vgelu), ref_gelu_tanh, -10, 10, 1},
};

static void test_unary(void) {
  static float x[MAXN], y[MAXN + 8];
  for (int bk = 0; bk < KT_NBACKENDS; bk++) {
    const weft_kernels* k = kt_backend(bk);
    for (size_t c = 0; c < sizeof uexact / sizeof uexact[0]; c++) {
      weft_f32_vunary_fn* fn = *(weft_f32_vunary_fn* const*)((const char*)k + uexact[c].off);
      int ok = 1;
      for (size_t si = 0; si < KT_NSIZES; si++) {
        size_t n = kt_sizes[si];
        fill_f32(x, n);
        if (n > 20) { /* large magnitudes: already integral, and 2^23 boundaries */
          x[0] = 8388608.5f, x[1] = -8388607.5f, x[2] = 1e20f, x[3] = -0.3f, x[4] = 0.49999997f;
          x[5] = -2.5f, x[6] = 3.5f, x[7] = 16777216.0f, x[8] = 1e-40f, x[9] = -1e-40f;
        }
        for (size_t i = 0; i < n + 8; i++) y[i] = 4242.0f;
        fn(n, x, y, NULL);
        for (size_t i = 0; i < n; i++) {
          float want = uexact[c].ref(x[i]);
#ifdef __EMSCRIPTEN__
          /* known limit: clang 14 for wasm folds the scalar backend's relu into
           * f32.max, which gives +0 for -0 (the SIMD backend keeps -0) */
          if (k == weft__kernels_scalar() && uexact[c].ref == ref_relu && x[i] == 0 && y[i] == 0) want = y[i];
#endif
          if (!kt_same_f32(y[i], want)) {
            if (ok) fprintf(stderr, "%s (%s) x=%a got %a want %a\n", uexact[c].name, k->isa, x[i], y[i], want);
            ok = 0;
          }
        }
        for (size_t i = n; i < n + 8; i++) ok &= y[i] == 4242.0f;
        fn(n, x, x, NULL); /* in place */
        for (size_t i = 0; i < n; i++) ok &= kt_same_f32(x[i], y[i]);
      }
      CHECK(ok);
    }
    for (size_t c = 0; c < sizeof uapprox / sizeof uapprox[0]; c++) {
      weft_f32_vunary_fn* fn = *(weft_f32_vunary_fn* const*)((const char*)k + uapprox[c].off);
      struct weft_f32_unary_params p = {.approximate = uapprox[c].approximate};
      int ok = 1;
      for (size_t si = 0; si < KT_NSIZES; si++) {
        size_t n = kt_sizes[si];
        for (size_t i = 0; i < n; i++) x[i] = kt_randf(uapprox[c].lo, uapprox[c].hi);
        fn(n, x, y, &p);
        for (size_t i = 0; i < n; i++) {
          double want = uapprox[c].ref(x[i]);
          double tol = 1e-6 * fabs(want) + 1e-6;
          if (!(fabs(y[i] - want) <= tol) && !(isinf(want) && y[i] == want)) {
            if (ok) fprintf(stderr, "%s (%s) x=%a got %.9g want %.9g\n", uapprox[c].name, k->isa, x[i], y[i], want);
            ok = 0;
          }
        }
      }
      CHECK(ok);
    }
    /* NaN / Inf pass through the libm ones as libm says */
    float sp[4] = {NAN, INFINITY, -INFINITY, 0.0f}, out[4];
    k->f32_vexp(4, sp, out, NULL);
    CHECK(isnan(out[0]) && out[1] == INFINITY && out[2] == 0.0f && out[3] == 1.0f);
    k->f32_vsigmoid(4, sp, out, NULL);
    CHECK(isnan(out[0]) && out[1] == 1.0f && out[2] == 0.0f && out[3] == 0.5f);
  }
}

int main(void) {
  test_binary();
  test_binary_zip();
  test_cmp();
  test_unary();
  TEST_REPORT();
}
