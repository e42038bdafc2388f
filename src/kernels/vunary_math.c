/* f32 transcendental kernels: exp, expm1, log, log1p, sigmoid, tanh, erf,
 * gelu (erf and tanh forms), sin, cos, tan. Written once against vec.h in
 * the XNNPACK / Sleef manner: range reduction, a minimax polynomial (fitted
 * by src/kernels/fit_vmath.py, rounded to float), reconstruction with
 * integer exponent arithmetic, and selects for the special cases. No
 * backend has an FMA, so every backend computes the same bits (the scalar
 * one is the reference; tests check SSE2 == scalar bitwise).
 *
 * Measured max error vs the double-precision formula on the float input
 * (tests/c/test_kernels_vmath.c with WEFT_VMATH_STRIDE=257: every 257th
 * float32 bit pattern, 16.7M values, plus 1M evenly spaced over each
 * function's busy range, and 2M-point sweeps of gelu over [-16, 10]; ulp of
 * the float result, subnormal results in subnormal ulps):
 *   exp 0.96, expm1 1.39, log 0.78, log1p 0.81, sigmoid 1.36, tanh 1.12,
 *   erf 1.26, gelu (erf) 2.0, gelu (tanh) 1.79 ulp;
 *   sin 2.3, cos 2.3, tan 3.6 ulp for |x| <= 10000 (1.5, 1.5, 3.4 for
 *   |x| <= 100) away from their zeros, where an absolute error below 2e-8
 *   is allowed; |x| > 10000 and Inf take libm per lane.
 * SSE2, wasm128 and scalar give the same bits (checked by the test).
 * gelu's tails keep their ulps: x/sqrt2 <= -0.5 goes through erfc(|x|/sqrt2)
 * = exp(-x^2/2) G with x^2 exact and the products in double-float, and the
 * tanh form is x sigmoid(2k(x + c x^3)) with the argument in double-float
 * (PyTorch's float 1 + erf / 1 + tanh loses every digit below about -5).
 *
 * Special values follow libm: NaN in, NaN out; exp overflows to +inf above
 * 88.72 and underflows through the subnormals to 0 below -103.97; log(0) =
 * -inf, log(<0) = NaN, log1p(-1) = -inf; expm1, log1p, tanh, erf, sin, tan
 * keep -0. gelu(-inf) is NaN and gelu(+inf) = +inf, as PyTorch's formula
 * gives. */
#include <math.h>

#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

#define F(x) wv_f32x4_splat(x)
#define I(x) wv_i32x4_splat(x)
#define ADD wv_f32x4_add
#define SUB wv_f32x4_sub
#define MUL wv_f32x4_mul
#define DIV wv_f32x4_div
#define MA wv_f32x4_muladd
#define SEL(m, a, b) wv_v128_bitselect(a, b, m) /* m ? a : b */
#define SIGN I(INT32_MIN)

/* ---- double-float helpers (exact products without an FMA) ---- */

/* a = hi + lo with 12 significant bits each, so their products are exact */
static inline wv128 vm_hi12(wv128 a) { return wv_v128_and(a, I((int32_t)0xfffff000u)); }

/* a * b = *ph + *pl exactly (Dekker) */
static inline void vm_two_prod(wv128 a, wv128 b, wv128* ph, wv128* pl) {
  wv128 ah = vm_hi12(a), al = SUB(a, ah), bh = vm_hi12(b), bl = SUB(b, bh);
  wv128 h = MUL(a, b);
  *ph = h;
  *pl = ADD(ADD(ADD(SUB(MUL(ah, bh), h), MUL(ah, bl)), MUL(al, bh)), MUL(al, bl));
}

/* a + b = *sh + *sl exactly for |a| >= |b| (Dekker) */
static inline void vm_fast_two_sum(wv128 a, wv128 b, wv128* sh, wv128* sl) {
  wv128 s = ADD(a, b);
  *sh = s;
  *sl = SUB(b, SUB(s, a));
}

/* a + b = *sh + *sl exactly (Knuth) */
static inline void vm_two_sum(wv128 a, wv128 b, wv128* sh, wv128* sl) {
  wv128 s = ADD(a, b), bb = SUB(s, a);
  *sh = s;
  *sl = ADD(SUB(a, SUB(s, bb)), SUB(b, bb));
}

/* ---- exponentials ---- */

/* a * 2^n for n in [-159, 128]: two power-of-two factors, each a normal
 * float, so only the last product rounds (once, into the subnormals when
 * the result is tiny; to inf on overflow). */
static inline wv128 vm_ldexp(wv128 a, wv128 n) {
  wv128 n1 = wv_i32x4_shr(n, 1), n2 = wv_i32x4_sub(n, n1);
  return MUL(MUL(a, wv_f32x4_exp2_i32x4(n1)), wv_f32x4_exp2_i32x4(n2));
}

/* exp(xh + xl) = (1 + s) 2^n, s in [-0.30, 0.42], for xh in [-110, 89]:
 * n = round(xh / ln2), r = xh - n ln2 (Cody-Waite, ln2_hi has 9 trailing
 * zero bits so n * ln2_hi is exact) + xl, s = r + r^2 P(r). Callers that
 * multiply exp by m take m + m s and skip the rounding of 1 + s. */
static inline wv128 vm_expm1_core(wv128 xh, wv128 xl, wv128* n) {
  wv128 nf = wv_f32x4_round_magic(MUL(xh, F(1.44269502e+00f)), n);
  wv128 r = SUB(SUB(xh, MUL(nf, F(0x1.62e400p-1f))), MUL(nf, F(0x1.7f7d1cp-20f)));
  r = ADD(r, xl);
  wv128 q = MA(F(1.38143206e-03f), r, F(8.36885069e-03f));
  q = MA(q, r, F(4.16684002e-02f));
  q = MA(q, r, F(1.66665196e-01f));
  q = MA(q, r, F(4.99999940e-01f));
  return MA(MUL(r, r), q, r);
}
static inline wv128 vm_exp_core(wv128 xh, wv128 xl, wv128* n) { return ADD(F(1.0f), vm_expm1_core(xh, xl, n)); }

static inline wv128 vm_exp(wv128 x, const struct weft_f32_unary_params* p) {
  (void)p;
  wv128 n, xc = wv_f32x4_pmax(wv_f32x4_pmin(x, F(89.0f)), F(-110.0f)); /* NaN passes */
  wv128 e = vm_exp_core(xc, wv_v128_zero(), &n);
  return vm_ldexp(e, n);
}

/* expm1(x) = 2 ((s - 1/2) + s expm1(r)) with s = 2^(n-1): s - 1/2 is exact
 * for the n that matter, and s stays a normal float up to n = 128. */
static inline wv128 vm_expm1(wv128 x, const struct weft_f32_unary_params* p) {
  (void)p;
  wv128 n, xc = wv_f32x4_pmax(wv_f32x4_pmin(x, F(89.0f)), F(-18.0f));
  wv128 nf = wv_f32x4_round_magic(MUL(xc, F(1.44269502e+00f)), &n);
  wv128 r = SUB(SUB(xc, MUL(nf, F(0x1.62e400p-1f))), MUL(nf, F(0x1.7f7d1cp-20f)));
  wv128 q = MA(F(1.98458903e-04f), r, F(1.39408233e-03f));
  q = MA(q, r, F(8.33338965e-03f));
  q = MA(q, r, F(4.16663587e-02f));
  q = MA(q, r, F(1.66666657e-01f));
  q = MA(q, r, F(0.5f));
  wv128 em = MA(MUL(r, r), q, r);
  wv128 s = wv_f32x4_exp2_i32x4(wv_i32x4_sub(n, I(1)));
  wv128 y = MUL(ADD(SUB(s, F(0.5f)), MUL(s, em)), F(2.0f));
  /* |x| < 2^-25 rounds to x (keeps -0 and the subnormals' last bit) */
  return SEL(wv_f32x4_lt(wv_f32x4_abs(x), F(0x1p-25f)), x, y);
}

/* mult * sigmoid(v), v = vh + vl, to about an ulp: with e = exp(-|v|) =
 * (1 + s) 2^n, sigmoid = (1 + s) / (1 + e) scaled by 2^n when v < 0, else
 * 1 / (1 + e). Numerator and 1 + e are double-float; one division, then
 * the low parts' correction through a Newton reciprocal (1 + e is in
 * [1, 2]); only the last step (the scale) rounds into the subnormals. */
static inline wv128 vm_sigmoid_times(wv128 vh, wv128 vl, wv128 mult, int has_mult) {
  wv128 neg = wv_f32x4_lt(vh, wv_v128_zero());
  wv128 wh = wv_v128_or(vh, SIGN);                                     /* -|vh| */
  wv128 wl = wv_v128_xor(vl, wv_v128_xor(wv_v128_and(vh, SIGN), SIGN)); /* sign follows */
  wv128 n, s = vm_expm1_core(wv_f32x4_pmax(wh, F(-110.0f)), wl, &n);
  wv128 ph = ADD(F(1.0f), s), pl = SUB(s, SUB(ph, F(1.0f))); /* 1 + s exactly */
  wv128 eh = vm_ldexp(ph, n), el = vm_ldexp(pl, n);
  wv128 dh = ADD(F(1.0f), eh), dl = ADD(SUB(eh, SUB(dh, F(1.0f))), el);
  wv128 nh = SEL(neg, ph, F(1.0f)), nl = wv_v128_and(neg, pl);
  if (has_mult) { /* mult (nh + nl) in double-float */
    wv128 mh, ml;
    vm_two_prod(mult, nh, &mh, &ml);
    nh = mh, nl = MA(mult, nl, ml);
  }
  wv128 q = DIV(nh, dh);
  wv128 r = MA(dh, F(-0.5f), F(1.5f));
  r = MUL(r, MA(wv_f32x4_neg(dh), r, F(2.0f))); /* 1 / dh within 1.5% */
  q = MA(SUB(nl, MUL(q, dl)), r, q);
  return vm_ldexp(q, wv_v128_and(neg, n));
}

static inline wv128 vm_sigmoid(wv128 x, const struct weft_f32_unary_params* p) {
  (void)p;
  return vm_sigmoid_times(x, wv_v128_zero(), F(1.0f), 0);
}

/* tanh: x + x z P(z) below 0.9, else 1 - 2 / (exp(2|x|) + 1) with the sign of x */
static inline wv128 vm_tanh(wv128 x, const struct weft_f32_unary_params* p) {
  (void)p;
  wv128 a = wv_f32x4_abs(x), z = MUL(x, x);
  wv128 q = MA(F(1.59149495e-04f), z, F(-9.67463653e-04f));
  q = MA(q, z, F(3.25008575e-03f));
  q = MA(q, z, F(-8.71566311e-03f));
  q = MA(q, z, F(2.18312275e-02f));
  q = MA(q, z, F(-5.39626665e-02f));
  q = MA(q, z, F(1.33332938e-01f));
  q = MA(q, z, F(-3.33333313e-01f));
  wv128 small = MA(MUL(x, z), q, x);
  wv128 n, e = vm_exp_core(wv_f32x4_pmin(ADD(a, a), F(40.0f)), wv_v128_zero(), &n);
  wv128 big = SUB(F(1.0f), DIV(F(2.0f), ADD(vm_ldexp(e, n), F(1.0f))));
  big = wv_f32x4_copysign(big, x);
  return SEL(wv_f32x4_lt(a, F(0.9f)), small, big);
}

/* ---- erf and gelu ---- */

/* erf(u) = u + u Q(u^2) for |u| <= 1 */
static inline wv128 vm_erf_small(wv128 u) {
  wv128 z = MUL(u, u);
  wv128 q = MA(F(-9.641519682e-06f), z, F(1.125694907e-04f));
  q = MA(q, z, F(-8.482828853e-04f));
  q = MA(q, z, F(5.220945459e-03f));
  q = MA(q, z, F(-2.686540037e-02f));
  q = MA(q, z, F(1.128378212e-01f));
  q = MA(q, z, F(-3.761263788e-01f));
  q = MA(q, z, F(1.283791661e-01f));
  return MA(u, q, u);
}

/* Q(tau) of erfc's G but its last Horner step (Q = q tau + Q0, with Q0 =
 * VM_ERFC_Q0): callers finish it plainly or in double-float. */
#define VM_ERFC_Q0 4.972705245e-01f
static inline wv128 vm_erfc_q(wv128 tau) {
  wv128 q = MA(F(-3.199282289e-02f), tau, F(-6.410552561e-02f));
  q = MA(q, tau, F(6.820968539e-02f));
  q = MA(q, tau, F(8.895659447e-02f));
  q = MA(q, tau, F(-1.151314303e-01f));
  q = MA(q, tau, F(-1.610887796e-01f));
  q = MA(q, tau, F(1.591078341e-01f));
  q = MA(q, tau, F(5.497929454e-01f));
  q = MA(q, tau, F(6.649832726e-01f));
  return q;
}

/* erfc(a) = exp(-a^2) G(a) for a = ah + al in [0.5, 10.5]: G(a) = t Q(t - 0.48)
 * with t = 2/(2+a) kept in double-float (G would double its rounding error).
 * Returns p * G(a) * mult with exp(-(sh + sl)) = p 2^n, where sh + sl is
 * a^2 exactly (the caller's); *n finishes the product with vm_ldexp. */
static inline wv128 vm_erfc_times(wv128 a, wv128 al, wv128 sh, wv128 sl, wv128 mult, wv128* n) {
  wv128 dh, dl, ph, pl;
  vm_two_sum(F(2.0f), a, &dh, &dl);
  dl = ADD(dl, al);
  wv128 rd = DIV(F(1.0f), dh), th = ADD(rd, rd);
  vm_two_prod(th, dh, &ph, &pl);
  wv128 tl = MUL(SUB(SUB(SUB(F(2.0f), ph), pl), MUL(th, dl)), rd);
  wv128 tau = ADD(SUB(th, F(0.48f)), tl);
  wv128 q = vm_erfc_q(tau);
  /* the last Horner step and the products in double-float */
  wv128 qh, ql, gh, gl, mh, ml;
  vm_two_prod(q, tau, &ph, &pl);
  vm_fast_two_sum(F(VM_ERFC_Q0), ph, &qh, &ql);
  ql = ADD(ql, pl);
  vm_two_prod(th, qh, &gh, &gl);
  gl = ADD(gl, MA(th, ql, MUL(tl, qh)));
  vm_two_prod(gh, mult, &mh, &ml);
  ml = MA(gl, mult, ml);
  wv128 eh = wv_f32x4_pmax(wv_f32x4_neg(sh), F(-110.0f));
  wv128 s = vm_expm1_core(eh, wv_f32x4_neg(sl), n); /* exp = (1 + s) 2^n */
  return ADD(mh, MA(mh, s, MA(ml, s, ml)));
}

/* a * a = *sh + *sl exactly */
static inline void vm_square(wv128 a, wv128* sh, wv128* sl) {
  wv128 ah = vm_hi12(a), al = SUB(a, ah), h = MUL(a, a);
  *sh = h;
  *sl = ADD(ADD(SUB(MUL(ah, ah), h), MUL(ADD(ah, ah), al)), MUL(al, al));
}

/* erfc(a) for erf = 1 - erfc, a in [1, 4]: the plain form of vm_erfc_times
 * (erfc <= 0.16 there, so its few ulps are a fraction of erf's) */
static inline wv128 vm_erfc_plain(wv128 a) {
  wv128 t = DIV(F(2.0f), ADD(F(2.0f), a)), tau = SUB(t, F(0.48f));
  wv128 q = vm_erfc_q(tau);
  q = MA(q, tau, F(VM_ERFC_Q0));
  wv128 n, s = vm_expm1_core(wv_f32x4_neg(MUL(a, a)), wv_v128_zero(), &n);
  wv128 g = MUL(t, q);
  return vm_ldexp(MA(g, s, g), n);
}

static inline wv128 vm_erf(wv128 x, const struct weft_f32_unary_params* p) {
  (void)p;
  wv128 big = wv_f32x4_ge(wv_f32x4_abs(x), F(1.0f)), y = vm_erf_small(x);
  if (!wv_v128_any_true(big)) return y; /* NaN lanes stay in the small form */
  wv128 a = wv_f32x4_pmin(wv_f32x4_abs(x), F(4.0f)); /* erf(4) rounds to 1 */
  wv128 yb = wv_f32x4_copysign(SUB(F(1.0f), vm_erfc_plain(a)), x);
  return SEL(big, yb, y);
}

/* gelu(x) = x/2 (1 + erf(x/sqrt2)): near 0 through erf; for x/sqrt2 <= -0.5
 * as x/2 erfc(|x|/sqrt2), whose exp(-x^2/2) takes x^2 exactly (no cancelled
 * 1 + erf); for x/sqrt2 >= 0.5 as x (1 - erfc/2). */
static inline wv128 vm_gelu_erf(wv128 x) {
  wv128 neg = wv_f32x4_lt(x, wv_v128_zero());
  wv128 xa = wv_f32x4_pmin(wv_f32x4_abs(x), F(15.0f)); /* gelu(-15) rounds to -0 */
  wv128 ua, ul, sh, sl, n; /* |x|/sqrt2 = ua + ul */
  vm_two_prod(xa, F(7.07106769e-01f), &ua, &ul);
  ul = MA(xa, F(1.21016175e-08f), ul);
  vm_square(xa, &sh, &sl);
  sh = MUL(sh, F(0.5f)), sl = MUL(sl, F(0.5f));
  wv128 xm = wv_f32x4_copysign(xa, x); /* keeps +inf out of the erfc term */
  wv128 ec = vm_erfc_times(ua, ul, sh, sl, MUL(xm, F(0.5f)), &n); /* x/2 erfc(|u|) / 2^n */
  wv128 big = SEL(neg, vm_ldexp(ec, n), SUB(x, vm_ldexp(ec, n)));
  wv128 eu = vm_erf_small(MUL(x, F(7.07106769e-01f)));
  wv128 small = MUL(MUL(x, F(0.5f)), ADD(F(1.0f), eu));
  wv128 y = SEL(wv_f32x4_lt(ua, F(0.5f)), small, big);
  return SEL(wv_f32x4_eq(x, F(-INFINITY)), F(NAN), y); /* PyTorch: -inf * 0 */
}

/* gelu_tanh(x) = x/2 (1 + tanh(k (x + c x^3))) = x sigmoid(v), v = x (a + b x^2)
 * with a = 2k, b = 2kc; v in double-float so the tail exp(v) keeps its bits. */
static inline wv128 vm_gelu_tanh(wv128 x) {
  wv128 xc = wv_f32x4_pmax(wv_f32x4_pmin(x, F(12.0f)), F(-12.0f)); /* NaN passes */
  wv128 sh, sl, mh, ml, qh, ql, vh, vl;
  vm_square(xc, &sh, &sl);
  vm_two_prod(F(7.135481387e-02f), sh, &mh, &ml);
  ml = ADD(ml, ADD(MUL(F(7.135481387e-02f), sl), MUL(F(2.398832466e-09f), sh)));
  vm_two_sum(F(1.595769167e+00f), mh, &qh, &ql);
  ql = ADD(ql, ADD(ml, F(-4.534068054e-08f)));
  vm_two_prod(xc, qh, &vh, &vl);
  vl = ADD(vl, MUL(xc, ql));
  wv128 mult = SEL(wv_f32x4_lt(x, wv_v128_zero()), xc, x); /* x < -12: rounds to -0 */
  wv128 y = vm_sigmoid_times(vh, vl, mult, 1);
  y = SEL(wv_f32x4_eq(x, F(INFINITY)), x, y);
  return SEL(wv_f32x4_eq(x, F(-INFINITY)), F(NAN), y); /* PyTorch: -inf * 0 */
}

/* ---- log ---- */

/* log(1 + f) + k ln2 + c for f = m - 1, m in [sqrt(1/2), sqrt(2)) (fdlibm's
 * form: s = f / (2 + f), log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2))) */
static inline wv128 vm_log_tail(wv128 f, wv128 kf, wv128 c) {
  wv128 s = DIV(f, ADD(F(2.0f), f)), z = MUL(s, s);
  wv128 q = MA(F(2.35835686e-01f), z, F(2.85372376e-01f));
  q = MA(q, z, F(4.00003374e-01f));
  q = MA(q, z, F(6.66666627e-01f));
  wv128 r = MUL(z, q), hfsq = MUL(MUL(F(0.5f), f), f);
  wv128 lo = ADD(MUL(kf, F(9.05800061e-06f)), c);
  return SUB(MUL(kf, F(6.93138123e-01f)), SUB(SUB(hfsq, MA(s, ADD(hfsq, r), lo)), f));
}

/* bits of a positive normal u -> exponent k (with m in [sqrt(1/2), sqrt(2))) and m */
static inline wv128 vm_log_split(wv128 u, wv128* m) {
  wv128 iu = wv_i32x4_add(u, I(0x3f800000 - 0x3f3504f3));
  *m = wv_i32x4_add(wv_v128_and(iu, I(0x007fffff)), I(0x3f3504f3));
  return wv_i32x4_sub(wv_u32x4_shr(iu, 23), I(127));
}

static inline wv128 vm_log(wv128 x, const struct weft_f32_unary_params* p) {
  (void)p;
  wv128 sub = wv_f32x4_lt(x, F(0x1p-126f)); /* subnormals: scale into the normals */
  wv128 xs = SEL(sub, MUL(x, F(0x1p23f)), x), m;
  wv128 k = wv_i32x4_sub(vm_log_split(xs, &m), wv_v128_and(sub, I(23)));
  wv128 y = vm_log_tail(SUB(m, F(1.0f)), wv_f32x4_convert_i32x4(k), wv_v128_zero());
  y = SEL(wv_f32x4_eq(x, F(INFINITY)), x, y);
  y = SEL(wv_f32x4_eq(x, wv_v128_zero()), F(-INFINITY), y);
  return SEL(wv_f32x4_ge(x, wv_v128_zero()), y, F(NAN)); /* x < 0 and NaN */
}

/* log1p(x) = log(u) + (x - (u - 1)) / u for u = 1 + x rounded (the
 * correction c is exact: x - (u-1) for u < 2.83, 1 - (u-x) above). */
static inline wv128 vm_log1p(wv128 x, const struct weft_f32_unary_params* p) {
  (void)p;
  wv128 u = ADD(F(1.0f), x), m;
  wv128 k = vm_log_split(u, &m);
  wv128 c = SEL(wv_i32x4_gt(k, I(1)), SUB(F(1.0f), SUB(u, x)), SUB(x, SUB(u, F(1.0f))));
  wv128 y = vm_log_tail(SUB(m, F(1.0f)), wv_f32x4_convert_i32x4(k), DIV(c, u));
  y = SEL(wv_f32x4_lt(wv_f32x4_abs(x), F(0x1p-25f)), x, y); /* -0, subnormals */
  y = SEL(wv_f32x4_eq(x, F(INFINITY)), x, y);
  y = SEL(wv_f32x4_eq(x, F(-1.0f)), F(-INFINITY), y);
  return SEL(wv_f32x4_ge(x, F(-1.0f)), y, F(NAN));
}

/* ---- sin, cos, tan ---- */

#define TRIG_MAX 10000.0f /* beyond it (and Inf) libm per lane */

/* x = n pi/2 + r, |r| <= pi/4 (1.01): pi/2 in four parts, the first three
 * with <= 11 significant bits so n * part is exact for n < 2^13. */
static inline wv128 vm_trig_reduce(wv128 x, wv128* n) {
  wv128 nf = wv_f32x4_round_magic(MUL(x, F(6.36619747e-01f)), n);
  wv128 r = SUB(x, MUL(nf, F(1.570312500e+00f)));
  r = SUB(r, MUL(nf, F(4.837512970e-04f)));
  r = SUB(r, MUL(nf, F(7.549533620e-08f)));
  return SUB(r, MUL(nf, F(2.563344068e-12f)));
}

/* sin(r) and cos(r) for |r| <= pi/4 */
static inline void vm_sincos_poly(wv128 r, wv128* s, wv128* c) {
  wv128 z = MUL(r, r);
  wv128 ps = MA(F(2.71736667e-06f), z, F(-1.98392328e-04f));
  ps = MA(ps, z, F(8.33332911e-03f));
  ps = MA(ps, z, F(-1.66666672e-01f));
  *s = MA(MUL(r, z), ps, r);
  wv128 pc = MA(F(-2.71986295e-07f), z, F(2.47993721e-05f));
  pc = MA(pc, z, F(-1.38888834e-03f));
  pc = MA(pc, z, F(4.16666679e-02f));
  *c = MA(MUL(z, z), pc, SUB(F(1.0f), MUL(z, F(0.5f))));
}

/* lanes with |x| > TRIG_MAX (or Inf) from libm */
static inline wv128 vm_trig_fixup(wv128 x, wv128 y, float (*f)(float)) {
  wv128 big = wv_f32x4_gt(wv_f32x4_abs(x), F(TRIG_MAX));
  if (!wv_v128_any_true(big)) return y;
  float xv[4], yv[4];
  wv_v128_store(xv, x);
  wv_v128_store(yv, y);
  for (int i = 0; i < 4; i++)
    if (!(fabsf(xv[i]) <= TRIG_MAX)) yv[i] = f(xv[i]);
  return SEL(big, wv_v128_load(yv), y);
}

/* quadrant q: sin(x) = (q&1 ? c : s) with the sign flipped when q&2 */
static inline wv128 vm_sin_quadrant(wv128 s, wv128 c, wv128 q) {
  wv128 odd = wv_i32x4_eq(wv_v128_and(q, I(1)), I(1));
  return wv_v128_xor(SEL(odd, c, s), wv_i32x4_shl(wv_v128_and(q, I(2)), 30));
}

static inline wv128 vm_sin(wv128 x, const struct weft_f32_unary_params* p) {
  (void)p;
  wv128 n, s, c;
  vm_sincos_poly(vm_trig_reduce(x, &n), &s, &c);
  return vm_trig_fixup(x, vm_sin_quadrant(s, c, n), sinf);
}

static inline wv128 vm_cos(wv128 x, const struct weft_f32_unary_params* p) {
  (void)p;
  wv128 n, s, c;
  vm_sincos_poly(vm_trig_reduce(x, &n), &s, &c);
  return vm_trig_fixup(x, vm_sin_quadrant(s, c, wv_i32x4_add(n, I(1))), cosf);
}

static inline wv128 vm_tan(wv128 x, const struct weft_f32_unary_params* p) {
  (void)p;
  wv128 n, s, c;
  vm_sincos_poly(vm_trig_reduce(x, &n), &s, &c);
  wv128 odd = wv_i32x4_eq(wv_v128_and(n, I(1)), I(1));
  wv128 y = DIV(SEL(odd, wv_f32x4_neg(c), s), SEL(odd, s, c));
  return vm_trig_fixup(x, y, tanf);
}

/* ---- activations by PyTorch's formulas (its vectorized CPU kernels') ---- */
/* silu(x) = x / (1 + exp(-x)): -inf gives NaN and large negative x -0, as there */
static inline wv128 vm_silu(wv128 x, const struct weft_f32_unary_params* p) {
  return DIV(x, ADD(F(1.0f), vm_exp(wv_f32x4_neg(x), p)));
}
/* elu(x) = x > 0 ? x * scale : (exp(x * input_scale) - 1) * (alpha * scale),
 * p = {alpha, scale, input_scale}; exp - 1, not expm1, as PyTorch's kernel */
static inline wv128 vm_elu(wv128 x, const struct weft_f32_unary_params* p) {
  float negcoef = p->a * p->b;
  wv128 neg = MUL(SUB(vm_exp(MUL(x, F(p->c)), p), F(1.0f)), F(negcoef));
  return SEL(wv_f32x4_gt(x, wv_v128_zero()), MUL(x, F(p->b)), neg);
}

/* ---- kernels: two vectors per iteration, one vector, a lane tail ---- */

#define VMATH_LOOP(fn)                                                                              \
  for (; n >= 8; n -= 8, x += 8, y += 8) {                                                          \
    wv128 r0 = fn(wv_v128_load(x), p), r1 = fn(wv_v128_load(x + 4), p);                             \
    wv_v128_store(y, r0);                                                                           \
    wv_v128_store(y + 4, r1);                                                                       \
  }                                                                                                 \
  if (n >= 4) {                                                                                     \
    wv_v128_store(y, fn(wv_v128_load(x), p));                                                       \
    n -= 4, x += 4, y += 4;                                                                         \
  }                                                                                                 \
  if (n) wv_v128_store_partial(y, fn(wv_v128_load_partial(x, n * 4), p), n * 4);

#define VMATH(op)                                                                                   \
  void WEFT_UKERNEL(f32_v##op, u8)(size_t n, const float* x, float* y,                              \
                                   const struct weft_f32_unary_params* p) {                         \
    VMATH_LOOP(vm_##op)                                                                             \
  }
VMATH(exp)
VMATH(expm1)
VMATH(log)
VMATH(log1p)
VMATH(sigmoid)
VMATH(tanh)
VMATH(erf)
VMATH(sin)
VMATH(cos)
VMATH(tan)
VMATH(silu)
VMATH(elu)

/* ---- softmax: exp(x - c) and its sum in one pass ---- */

/* exp(x) for x <= 0 (NaN passes), fewer steps than vm_exp: the rounding
 * bias carries the exponent bias, so shifting t's bits gives 2^n directly
 * (n + 127 in [1, 127] here), and exp = 2^n + 2^n s with vm_expm1_core's
 * reduction and polynomial (s = r + r^2 P(r)), no rounding of 1 + s. Below
 * ln(2^-126) the result is 0 (softmax adds it to a sum >= 1); elsewhere
 * within an ulp of exp (tests/c/test_kernels_reduce.c). */
static inline wv128 vm_exp_nonpos(wv128 x) {
  const float bias = 12582912.0f + 127.0f; /* 1.5 * 2^23 + 127 */
  wv128 t = ADD(MUL(x, F(1.44269502e+00f)), F(bias));
  wv128 pow2n = wv_i32x4_shl(t, 23);
  wv128 nf = SUB(t, F(bias));
  wv128 r = SUB(SUB(x, MUL(nf, F(0x1.62e400p-1f))), MUL(nf, F(0x1.7f7d1cp-20f)));
  wv128 q = MA(F(1.38143206e-03f), r, F(8.36885069e-03f));
  q = MA(q, r, F(4.16684002e-02f));
  q = MA(q, r, F(1.66665196e-01f));
  q = MA(q, r, F(4.99999940e-01f));
  wv128 sfx = MA(MUL(r, r), q, r);
  wv128 e = MA(pow2n, sfx, pow2n);
  return wv_v128_andnot(e, wv_f32x4_lt(x, F(-87.33654f)));
}

#define REXPSUM_BLOCK 256

/* one block: y = exp(x - c) stored (when y), summed in two accumulators */
static float rexpsum_block(size_t n, const float* x, wv128 c, float* y) {
  wv128 a0 = wv_v128_zero(), a1 = a0;
  for (; n >= 8; n -= 8, x += 8) {
    wv128 e0 = vm_exp_nonpos(SUB(wv_v128_load(x), c)), e1 = vm_exp_nonpos(SUB(wv_v128_load(x + 4), c));
    a0 = ADD(a0, e0), a1 = ADD(a1, e1);
    if (y) wv_v128_store(y, e0), wv_v128_store(y + 4, e1), y += 8;
  }
  if (n >= 4) {
    wv128 e = vm_exp_nonpos(SUB(wv_v128_load(x), c));
    a0 = ADD(a0, e);
    if (y) wv_v128_store(y, e), y += 4;
    n -= 4, x += 4;
  }
  if (n) {
    /* the lanes past n hold -inf, whose exp adds 0 */
    float t[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < n; i++) t[i] = x[i];
    wv128 e = vm_exp_nonpos(SUB(wv_v128_load(t), c));
    a1 = ADD(a1, e);
    if (y) wv_v128_store_partial(y, e, n * 4);
  }
  float l[4];
  wv_v128_store(l, ADD(a0, a1));
  return (l[0] + l[1]) + (l[2] + l[3]);
}

static float rexpsum_cascade(size_t n, const float* x, wv128 c, float* y) {
  if (n <= REXPSUM_BLOCK) return rexpsum_block(n, x, c, y);
  size_t half = (n / 2 + 7) & ~(size_t)7;
  return rexpsum_cascade(half, x, c, y) + rexpsum_cascade(n - half, x + half, c, y ? y + half : NULL);
}

float WEFT_UKERNEL(f32_rexpsum, u8)(size_t n, const float* x, float c, float* y) {
  return rexpsum_cascade(n, x, F(c), y);
}

/* The columns sit in lanes, so each lane is one column's running max and
 * sum; a partial last vector's extra lanes are computed and never stored. */
#define SMC_VECS 16
void WEFT_UKERNEL(f32_softmax_cols, c64)(size_t len, size_t w, const float* x, size_t xs, float* y, size_t ys,
                                         int log) {
  size_t nv = (w + 3) / 4, last = w % 4 ? (w % 4) * 4 : 16; /* bytes of the last vector */
  wv128 mx[SMC_VECS], sum[SMC_VECS];
#define LD(p, v) ((v) + 1 < nv ? wv_v128_load((p) + 4 * (v)) : wv_v128_load_partial((p) + 4 * (v), last))
#define ST(p, v, val) \
  ((v) + 1 < nv ? wv_v128_store((p) + 4 * (v), val) : wv_v128_store_partial((p) + 4 * (v), val, last))
  for (size_t v = 0; v < nv; v++) mx[v] = LD(x, v), sum[v] = wv_v128_zero();
  for (size_t r = 1; r < len; r++)
    for (size_t v = 0; v < nv; v++) mx[v] = wv_f32x4_max(mx[v], LD(x + r * xs, v)); /* NaN wins */
  for (size_t r = 0; r < len; r++)
    for (size_t v = 0; v < nv; v++) {
      wv128 e = vm_exp_nonpos(SUB(LD(x + r * xs, v), mx[v]));
      sum[v] = ADD(sum[v], e);
      if (!log) ST(y + r * ys, v, e);
    }
  for (size_t v = 0; v < nv; v++) {
    if (log) {
      float l[4];
      wv_v128_store(l, sum[v]);
      for (int i = 0; i < 4; i++) l[i] = logf(l[i]);
      sum[v] = wv_v128_load(l);
    } else {
      sum[v] = DIV(F(1.0f), sum[v]);
    }
  }
  for (size_t r = 0; r < len; r++)
    for (size_t v = 0; v < nv; v++)
      ST(y + r * ys, v, log ? SUB(SUB(LD(x + r * xs, v), mx[v]), sum[v]) : MUL(LD(y + r * ys, v), sum[v]));
#undef LD
#undef ST
}

static inline wv128 vm_gelu_n(wv128 x, const struct weft_f32_unary_params* p) {
  (void)p;
  return vm_gelu_erf(x);
}
static inline wv128 vm_gelu_t(wv128 x, const struct weft_f32_unary_params* p) {
  (void)p;
  return vm_gelu_tanh(x);
}
/* gelu picks its form once per call: approximate 'tanh' or 'none' */
void WEFT_UKERNEL(f32_vgelu, u8)(size_t n, const float* x, float* y, const struct weft_f32_unary_params* p) {
  if (p && p->approximate) {
    VMATH_LOOP(vm_gelu_t)
  } else {
    VMATH_LOOP(vm_gelu_n)
  }
}

#if defined(WEFT_VEC_FORCE_SCALAR)
/* One float through the same code, for the plain-C rows of the elementwise
 * ops: strided, contiguous-SIMD and plain paths then give the same bits. */
#define VMATH_1(op)                                 \
  float weft__f32_##op##_1(float x) {               \
    float r[4];                                     \
    wv_v128_store(r, vm_##op(wv_f32x4_splat(x), NULL)); \
    return r[0];                                    \
  }
VMATH_1(exp)
VMATH_1(expm1)
VMATH_1(log)
VMATH_1(log1p)
VMATH_1(sigmoid)
VMATH_1(tanh)
VMATH_1(erf)
VMATH_1(sin)
VMATH_1(cos)
VMATH_1(tan)
VMATH_1(silu)
float weft__f32_elu_1(float x, const struct weft_f32_unary_params* p) {
  float r[4];
  wv_v128_store(r, vm_elu(wv_f32x4_splat(x), p));
  return r[0];
}
float weft__f32_gelu_1(float x, int approximate) {
  float r[4];
  wv_v128_store(r, approximate ? vm_gelu_tanh(wv_f32x4_splat(x)) : vm_gelu_erf(wv_f32x4_splat(x)));
  return r[0];
}
#endif
