/* The f32 transcendental kernels (vunary_math.c) against the double
 * formula on the float input, in ulp of the float result:
 *  (a) a sweep of every STRIDE-th float32 bit pattern (both signs, the
 *      subnormals, Inf, NaN) plus dense sweeps of each function's busy range;
 *  (b) special values: ±0 (sign kept), ±Inf, NaN, the overflow and
 *      underflow thresholds, the subnormals;
 *  (c) sizes 1..tile-1, the tile and above, in place, nothing written past n;
 *  (d) the SIMD backend bitwise equal to the scalar one (no backend has an
 *      FMA and every op is IEEE-rounded, so they agree to the bit);
 *  (e) the ops on strided float32 and on float16 / bfloat16 tensors (staged
 *      through float buffers) give the bits of the per-element code.
 * WEFT_VMATH_STRIDE=n sets the sweep stride (default 1021, about 4.2M
 * values per function and backend, and 1M in the busy range; under a
 * sanitizer 65521 and 64K, to stay within seconds); WEFT_VMATH_STRIDE=257
 * gives about 16.7M. WEFT_VMATH_VERBOSE=1 prints the measured maxima. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/half.h"
#include "kernel_test_util.h"
#include "weft/weft.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif
#include "test.h"

static double r_exp(double x) { return exp(x); }
static double r_expm1(double x) { return expm1(x); }
static double r_log(double x) { return log(x); }
static double r_log1p(double x) { return log1p(x); }
static double r_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double r_tanh(double x) { return tanh(x); }
static double r_erf(double x) { return erf(x); }
/* erfc keeps the tail that 1 + erf(x/sqrt2) cancels, even in double */
static double r_gelu(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }
static double r_gelu_tanh(double x) {
  double y = sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
  return x / (1.0 + exp(-2.0 * y)); /* = x/2 (1 + tanh y) without the cancellation */
}
static double r_sin(double x) { return sin(x); }
static double r_cos(double x) { return cos(x); }
static double r_tan(double x) { return tan(x); }

struct vcase {
  const char* name;
  size_t off; /* kernel pointer in weft_kernels */
  double (*ref)(double);
  int approximate;
  double max_ulp;
  double abs_ok; /* an error below this passes whatever the ulp (trig near zeros) */
  float lo, hi;  /* busy range, swept densely */
};
#define VC(field, ref, ap, ulp, absok, lo, hi) {#field, offsetof(weft_kernels, field), ref, ap, ulp, absok, lo, hi}
static const struct vcase cases[] = {
    VC(f32_vexp, r_exp, 0, 1.5, 0, -104, 89),
    VC(f32_vexpm1, r_expm1, 0, 1.5, 0, -18, 89),
    VC(f32_vlog, r_log, 0, 1, 0, 0.25f, 4),
    VC(f32_vlog1p, r_log1p, 0, 1, 0, -1, 4),
    VC(f32_vsigmoid, r_sigmoid, 0, 1.5, 0, -105, 20),
    VC(f32_vtanh, r_tanh, 0, 1.5, 0, -10, 10),
    VC(f32_verf, r_erf, 0, 1.5, 0, -4, 4),
    VC(f32_vgelu, r_gelu, 0, 2.5, 0, -16, 8),
    VC(f32_vgelu, r_gelu_tanh, 1, 2, 0, -13, 8),
    VC(f32_vsin, r_sin, 0, 2.5, 2e-8, -100, 100),
    VC(f32_vcos, r_cos, 0, 2.5, 2e-8, -100, 100),
    VC(f32_vtan, r_tan, 0, 4, 2e-8, -100, 100),
};
#define NCASES (sizeof cases / sizeof cases[0])

/* spacing of the floats around |r| (r rounded to float; subnormal spacing below FLT_MIN) */
static double ulp_of(double r) {
  int e;
  frexp(fabs(r), &e); /* |r| = m 2^e, m in [0.5, 1) */
  if (e - 1 < -126) e = -125;
  if (e - 1 > 127) e = 128;
  return ldexp(1.0, e - 1 - 23);
}

/* error of y vs ref in ulp; INFINITY when a NaN, Inf or signed zero is wrong */
static double ulp_err(float y, double ref, double abs_ok) {
  if (isnan(ref)) return isnan(y) ? 0 : INFINITY;
  if (isnan(y)) return INFINITY;
  if (isinf(ref) || isinf(y)) return (float)ref == y ? 0 : INFINITY;
  if (ref == 0) return y == 0 && signbit(y) == signbit(ref) ? 0 : fabs(y) / ulp_of(0);
  double d = fabs((double)y - ref);
  if (d <= abs_ok) return 0;
  return d / ulp_of(ref);
}

typedef struct {
  double worst;
  float at;
  float got;
  long n;
} stat;

enum { BLK = 1024 };

/* run case c of table k over xs[0..n), fold the errors into s */
static void measure(const weft_kernels* k, const struct vcase* c, const float* xs, size_t n, stat* s) {
  weft_f32_vunary_fn* fn = *(weft_f32_vunary_fn* const*)((const char*)k + c->off);
  struct weft_f32_unary_params p = {.approximate = c->approximate};
  float y[BLK];
  for (size_t i0 = 0; i0 < n; i0 += BLK) {
    size_t m = n - i0 < BLK ? n - i0 : BLK;
    fn(m, xs + i0, y, &p);
    for (size_t i = 0; i < m; i++) {
      double e = ulp_err(y[i], c->ref(xs[i0 + i]), c->abs_ok);
      if (e > s->worst) s->worst = e, s->at = xs[i0 + i], s->got = y[i];
    }
    s->n += (long)m;
  }
}

static int verbose;

static void report(const char* what, const struct vcase* c, const stat* s) {
  bool ok = s->worst <= c->max_ulp;
  if (verbose || !ok)
    fprintf(stderr, "%-13s%s %-8s max %.3f ulp at x=%a (%.9g) got %.9g want %.9g (%ld values)\n", c->name,
            c->approximate ? "(tanh)" : "      ", what, s->worst, s->at, s->at, s->got, c->ref(s->at), s->n);
  CHECK(ok);
}

static void test_sweep(void) {
  const char* env = getenv("WEFT_VMATH_STRIDE");
  uint32_t stride = env ? (uint32_t)strtoul(env, NULL, 10) : SANITIZED ? 65521 : 1021;
  int busy_reps = env ? 16 : SANITIZED ? 1 : 16;
  if (stride == 0) stride = 1;
  float* xs = malloc(sizeof(float) * BLK * 64);
  CHECK(xs != NULL);
  if (!xs) return;
  for (int bk = 0; bk < KT_NBACKENDS; bk++) {
    const weft_kernels* k = kt_backend(bk);
    for (size_t ci = 0; ci < NCASES; ci++) {
      const struct vcase* c = &cases[ci];
      stat all = {0, 0, 0, 0}, busy = {0, 0, 0, 0};
      /* (a) every stride-th pattern, in blocks */
      size_t n = 0;
      for (uint64_t b = 0; b <= UINT32_MAX; b += stride) {
        xs[n++] = kt_f32_from_bits((uint32_t)b);
        if (n == BLK * 64) measure(k, c, xs, n, &all), n = 0;
      }
      measure(k, c, xs, n, &all);
      /* the busy range, 1M evenly spaced values */
      size_t nb = (size_t)BLK * 64;
      for (int rep = 0; rep < busy_reps; rep++) {
        for (size_t i = 0; i < nb; i++)
          xs[i] = c->lo + (c->hi - c->lo) * (float)((double)(rep * nb + i) / ((double)busy_reps * nb));
        measure(k, c, xs, nb, &busy);
      }
      char what[32];
      snprintf(what, sizeof what, "%s", k->isa);
      report(what, c, &all);
      report("busy", c, &busy);
    }
  }
  free(xs);
}

static void test_specials(void) {
  static const float sp[] = {
      0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, FLT_MAX, -FLT_MAX, FLT_MIN,
      -FLT_MIN, 1e-40f, -1e-40f, 1.4e-45f, -1.4e-45f, 1e-10f, -1e-10f, 3e-8f, -3e-8f,
      /* exp / expm1 overflow and underflow thresholds */
      88.7228241f, 88.7228394f, 89.0f, -87.3365479f, -103.278931f, -103.972084f, -103.972092f, -104.0f, -110.0f,
      /* sigmoid, tanh, erf saturation; gelu tails */
      16.6355324f, 17.0f, -16.6355324f, 9.01092f, -9.01092f, 3.919206f, -3.919206f, -13.0f, -14.0f, -15.0f,
      -20.0f, 20.0f, 0.49999997f, -0.49999997f, 0.70710677f, -0.70710677f, 0.9f, -0.9f,
      /* log1p / log edges */
      -0.99999994f, -1.00000012f, 1e30f, 3.4e38f, 0.70710677f, 1.41421354f,
      /* trig: multiples of pi/2, the libm bound */
      1.57079637f, -1.57079637f, 3.14159274f, 4.71238899f, 6.28318548f, 10000.0f, 10000.001f, -10000.001f,
      1e5f, 1e20f, -1e20f, 7.85398185e-01f,
  };
  enum { NSP = sizeof sp / sizeof sp[0] };
  for (int bk = 0; bk < KT_NBACKENDS; bk++) {
    const weft_kernels* k = kt_backend(bk);
    for (size_t ci = 0; ci < NCASES; ci++) {
      const struct vcase* c = &cases[ci];
      weft_f32_vunary_fn* fn = *(weft_f32_vunary_fn* const*)((const char*)k + c->off);
      struct weft_f32_unary_params p = {.approximate = c->approximate};
      float y[NSP];
      fn(NSP, sp, y, &p);
      int ok = 1;
      for (int i = 0; i < NSP; i++) {
        double e = ulp_err(y[i], c->ref(sp[i]), c->abs_ok);
        if (!(e <= c->max_ulp)) {
          fprintf(stderr, "%s%s (%s) special x=%a: got %a want %a\n", c->name, c->approximate ? "(tanh)" : "",
                  k->isa, sp[i], y[i], c->ref(sp[i]));
          ok = 0;
        }
      }
      CHECK(ok);
    }
  }
}

/* (c) sizes, in place, no write past n; (d) backend vs scalar bitwise */
static void test_sizes_and_backends(void) {
  enum { MAXN = 1100 };
  static float x[MAXN], y[MAXN + 8], y2[MAXN + 8], z[MAXN];
  for (size_t ci = 0; ci < NCASES; ci++) {
    const struct vcase* c = &cases[ci];
    struct weft_f32_unary_params p = {.approximate = c->approximate};
    for (int bk = 0; bk < KT_NBACKENDS; bk++) {
      const weft_kernels* k = kt_backend(bk);
      weft_f32_vunary_fn* fn = *(weft_f32_vunary_fn* const*)((const char*)k + c->off);
      weft_f32_vunary_fn* ref1 = *(weft_f32_vunary_fn* const*)((const char*)weft__kernels_scalar() + c->off);
      int ok = 1;
      for (size_t si = 0; si < KT_NSIZES; si++) {
        size_t n = kt_sizes[si];
        for (size_t i = 0; i < n; i++)
          x[i] = kt_rand() % 8 == 0 ? kt_f32_from_bits(kt_rand() ^ (kt_rand() << 16)) : kt_randf(c->lo, c->hi);
        for (size_t i = 0; i < n + 8; i++) y[i] = 4242.0f;
        fn(n, x, y, &p);
        for (size_t i = n; i < n + 8; i++) ok &= y[i] == 4242.0f;
        for (size_t i = 0; i < n; i++) { /* one element at a time: the lane tail path */
          ref1(1, x + i, y2 + i, &p);
          ok &= kt_same_f32(y[i], y2[i]);
          ok &= ulp_err(y[i], c->ref(x[i]), c->abs_ok) <= c->max_ulp;
        }
        memcpy(z, x, n * sizeof(float));
        fn(n, z, z, &p); /* in place */
        for (size_t i = 0; i < n; i++) ok &= kt_same_f32(z[i], y[i]);
      }
      if (!ok) fprintf(stderr, "%s%s (%s): sizes / in place / backend mismatch\n", c->name,
                       c->approximate ? "(tanh)" : "", k->isa);
      CHECK(ok);
    }
  }
  /* bitwise over a sweep: the SIMD table against the scalar one */
  const weft_kernels *kb = weft__kernels(), *ks = weft__kernels_scalar();
  if (kb == ks) return;
  enum { N = 4096 };
  static float xs[N], ya[N], yb[N];
  for (size_t ci = 0; ci < NCASES; ci++) {
    const struct vcase* c = &cases[ci];
    struct weft_f32_unary_params p = {.approximate = c->approximate};
    weft_f32_vunary_fn* fa = *(weft_f32_vunary_fn* const*)((const char*)kb + c->off);
    weft_f32_vunary_fn* fb = *(weft_f32_vunary_fn* const*)((const char*)ks + c->off);
    long diff = 0;
    for (int rep = 0; rep < (SANITIZED ? 6 : 64); rep++) {
      for (size_t i = 0; i < N; i++)
        xs[i] = rep % 2 ? kt_f32_from_bits(kt_rand() ^ (kt_rand() << 16)) : kt_randf(c->lo, c->hi);
      fa(N, xs, ya, &p);
      fb(N, xs, yb, &p);
      for (size_t i = 0; i < N; i++) diff += !kt_same_f32(ya[i], yb[i]);
    }
    if (diff) fprintf(stderr, "%s: %s and scalar differ in %ld values\n", c->name, kb->isa, diff);
    CHECK(diff == 0);
  }
}

/* (e) through the ops: transposed float32, float16, bfloat16 */
static weft_tensor* run_op(int op, const weft_tensor* t) {
  switch (op) {
    case 0: return weft_exp(t);
    case 1: return weft_expm1(t);
    case 2: return weft_log(t);
    case 3: return weft_log1p(t);
    case 4: return weft_sigmoid(t);
    case 5: return weft_tanh(t);
    case 6: return weft_erf(t);
    case 7: return weft_gelu(t, "none");
    case 8: return weft_gelu(t, "tanh");
    case 9: return weft_sin(t);
    case 10: return weft_cos(t);
    default: return weft_tan(t);
  }
}
static float ref_op(int op, float v) {
  switch (op) {
    case 0: return weft__f32_exp_1(v);
    case 1: return weft__f32_expm1_1(v);
    case 2: return weft__f32_log_1(v);
    case 3: return weft__f32_log1p_1(v);
    case 4: return weft__f32_sigmoid_1(v);
    case 5: return weft__f32_tanh_1(v);
    case 6: return weft__f32_erf_1(v);
    case 7: return weft__f32_gelu_1(v, 0);
    case 8: return weft__f32_gelu_1(v, 1);
    case 9: return weft__f32_sin_1(v);
    case 10: return weft__f32_cos_1(v);
    default: return weft__f32_tan_1(v);
  }
}
static float load_as_f32(const char* p, weft_dtype t) {
  uint16_t h;
  if (t == WEFT_FLOAT32) return *(const float*)p;
  memcpy(&h, p, 2);
  return t == WEFT_FLOAT16 ? weft__f16_to_f32(h) : weft__bf16_to_f32(h);
}
static uint32_t stored_bits(float v, weft_dtype t) {
  if (t == WEFT_FLOAT32) return kt_f32_bits(v);
  return t == WEFT_FLOAT16 ? weft__f32_to_f16(v) : weft__f32_to_bf16(v);
}
static uint32_t load_bits(const char* p, weft_dtype t) {
  uint16_t h;
  if (t == WEFT_FLOAT32) return kt_f32_bits(*(const float*)p);
  memcpy(&h, p, 2);
  return h;
}
static int is_nan_bits(uint32_t b, weft_dtype t) {
  if (t == WEFT_FLOAT32) return (b & 0x7fffffffu) > 0x7f800000u;
  return t == WEFT_FLOAT16 ? (b & 0x7fff) > 0x7c00 : (b & 0x7fff) > 0x7f80;
}

static void test_ops_paths(void) {
  const int64_t sz[2] = {37, 45};
  const weft_dtype types[3] = {WEFT_FLOAT32, WEFT_FLOAT16, WEFT_BFLOAT16};
  for (int ti = 0; ti < 3; ti++) {
    weft_dtype t = types[ti];
    size_t es = weft_dtype_size(t);
    weft_tensor* base = weft_empty(sz, 2, t, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
    CHECK(base != NULL);
    if (!base) return;
    char* bp = weft_tensor_data_ptr(base);
    for (int64_t i = 0; i < sz[0] * sz[1]; i++) {
      float v = i % 50 == 0 ? (i % 100 ? INFINITY : NAN) : kt_randf(-12, 12);
      uint32_t b = stored_bits(v, t);
      memcpy(bp + i * (int64_t)es, &b, es); /* little-endian: the low bytes */
    }
    weft_tensor* tr = weft_slice(base, 1, 0, sz[1], 2); /* step 2: strided rows, the staged path */
    for (int op = 0; op < 12; op++) {
      weft_tensor* r = run_op(op, tr);
      if (!r && t == WEFT_FLOAT16) continue; /* PyTorch 1.13's CPU refuses Half for most of them */
      if (!r) fprintf(stderr, "op %d on %s: %s\n", op, weft_dtype_name(t), weft_last_error());
      CHECK(r != NULL);
      if (!r) continue;
      const int64_t *rs = weft_tensor_strides(r), *ts = weft_tensor_strides(tr), *n = weft_tensor_sizes(tr);
      const char *rp = weft_tensor_data_ptr(r), *tp = weft_tensor_data_ptr(tr);
      long bad = 0;
      for (int64_t i = 0; i < n[0]; i++)
        for (int64_t j = 0; j < n[1]; j++) {
          float v = load_as_f32(tp + (i * ts[0] + j * ts[1]) * (int64_t)es, t);
          uint32_t want = stored_bits(ref_op(op, v), t);
          uint32_t got = load_bits(rp + (i * rs[0] + j * rs[1]) * (int64_t)es, t);
          bad += got != want && !(is_nan_bits(got, t) && is_nan_bits(want, t));
        }
      if (bad) fprintf(stderr, "op %d on %s: %ld values differ from the per-element code\n", op, weft_dtype_name(t), bad);
      CHECK(bad == 0);
      weft_tensor_release(r);
    }
    weft_tensor_release(tr);
    weft_tensor_release(base);
  }
}

int main(void) {
  verbose = getenv("WEFT_VMATH_VERBOSE") != NULL;
  test_specials();
  test_sizes_and_backends();
  test_ops_paths();
  test_sweep();
  TEST_REPORT();
}
