/* The plain-C rows of the elementwise ops: one scalar definition per op and
 * category, expanded for every dtype by X-macros.
 *
 * Integer dtypes (and bool) load into int64_t and compute with wrapping
 * (unsigned) arithmetic, then store truncated (bool: != 0), as C++ integer
 * ops on the narrow types do without the UB. Floating dtypes compute in
 * float (float16/bfloat16/float32: c10's opmath) or double. Each row has a
 * contiguous loop the compiler vectorizes and a strided one. */
#include <math.h>
#include <stdbool.h>

#include "base/half.h"
#include "kernels/kernels.h"
#include "ops/elementwise.h"

/* ---- loads and stores per dtype suffix (EW_TYPES below) ---- */
#define LD_b(p) ((int64_t)(*(p) != 0))
#define LD_u8(p) ((int64_t)*(p))
#define LD_i8(p) ((int64_t)*(p))
#define LD_i16(p) ((int64_t)*(p))
#define LD_i32(p) ((int64_t)*(p))
#define LD_i64(p) (*(p))
#define LD_h(p) weft__f16_to_f32(*(p))
#define LD_bf(p) weft__bf16_to_f32(*(p))
#define LD_f(p) (*(p))
#define LD_d(p) (*(p))
#define ST_b(p, v) (*(p) = (uint8_t)((v) != 0))
#define ST_u8(p, v) (*(p) = (uint8_t)(v))
#define ST_i8(p, v) (*(p) = (int8_t)(v))
#define ST_i16(p, v) (*(p) = (int16_t)(v))
#define ST_i32(p, v) (*(p) = (int32_t)(v))
#define ST_i64(p, v) (*(p) = (int64_t)(v))
#define ST_h(p, v) (*(p) = weft__f32_to_f16(v))
#define ST_bf(p, v) (*(p) = weft__f32_to_bf16(v))
#define ST_f(p, v) (*(p) = (v))
#define ST_d(p, v) (*(p) = (v))
#define ST_bool(p, v) (*(p) = (uint8_t)((v) != 0))

/* ---- the rows built for size (issue 26: the gzipped .wasm was over its
 * budget): float32 rows are the ones models run (comparisons of float32
 * too: the row is the input's dtype), optimized for speed; the rows of the
 * other dtypes, a quarter of the module's code when vectorized, are compiled
 * small (clang's minsize, in wasm builds: natively code size does not
 * matter). Integer and bool tensors are mostly indices and masks, small or
 * made by other kernels (arange, comparisons, index ops). ---- */
#if defined(__clang__) && defined(__wasm__)
#define ROW_SIZE_SMALL __attribute__((minsize))
#else
#define ROW_SIZE_SMALL
#endif
#define ROW_SIZE_f
#define ROW_SIZE_b ROW_SIZE_SMALL
#define ROW_SIZE_i64 ROW_SIZE_SMALL
#define ROW_SIZE_u8 ROW_SIZE_SMALL
#define ROW_SIZE_i8 ROW_SIZE_SMALL
#define ROW_SIZE_i16 ROW_SIZE_SMALL
#define ROW_SIZE_i32 ROW_SIZE_SMALL
#define ROW_SIZE_h ROW_SIZE_SMALL
#define ROW_SIZE_bf ROW_SIZE_SMALL
#define ROW_SIZE_d ROW_SIZE_SMALL

/* ---- scalar helpers ---- */
#define U64(x) ((uint64_t)(x))
#define WRAP(x) ((int64_t)(x)) /* modular: gcc/clang define the narrowing */

static inline int64_t i_floordiv(int64_t a, int64_t b, const ew_params* p) {
  if (b == 0) {
    atomic_store_explicit(p->zero_division, 1, memory_order_relaxed);
    return 0;
  }
  if (b == -1) return WRAP(0 - U64(a)); /* INT_MIN / -1 wraps instead of trapping */
  int64_t q = a / b, r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) q -= 1;
  return q;
}
static inline int64_t i_rem(int64_t a, int64_t b, const ew_params* p) {
  if (b == 0) {
    atomic_store_explicit(p->zero_division, 1, memory_order_relaxed);
    return 0;
  }
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
/* c10's powi: negative exponents give 0 except for bases 1 and -1 */
static inline int64_t i_pow(int64_t a, int64_t b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b & 1) ? -1 : 1;
    return 0;
  }
  uint64_t r = 1, base = U64(a);
  for (uint64_t e = U64(b); e; e >>= 1) {
    if (e & 1) r *= base;
    base *= base;
  }
  return WRAP(r);
}

#define FLOAT_HELPERS(M, sfx, fl, fm, pw, ex, er, th, cs)                     \
  static inline M floordiv_##sfx(M a, M b) {                                \
    if (b == 0) return a / b;                                               \
    M mod = fm(a, b), div = (a - mod) / b;                                  \
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;                       \
    if (div == 0) return cs((M)0, a / b);                                   \
    M q = fl(div);                                                          \
    if (div - q > (M)0.5) q += 1;                                           \
    return q;                                                               \
  }                                                                         \
  static inline M rem_##sfx(M a, M b) {                                     \
    M mod = fm(a, b);                                                       \
    if (mod != 0 && ((b < 0) != (mod < 0))) mod += b;                       \
    return mod;                                                             \
  }                                                                         \
  static inline M max_##sfx(M a, M b) { return (a != a || b != b) ? (M)NAN : (a < b ? b : a); } \
  static inline M min_##sfx(M a, M b) { return (a != a || b != b) ? (M)NAN : (b < a ? b : a); } \
  static inline M pow_##sfx(M a, M b) { return pw(a, b); }                  \
  static inline M sign_##sfx(M a) { return (M)((0 < a) - (a < 0)); }       \
  static inline M relu_##sfx(M a) { return a < 0 ? (M)0 : a; }
FLOAT_HELPERS(float, f, floorf, fmodf, powf, expf, erff, tanhf, copysignf)
FLOAT_HELPERS(double, d, floor, fmod, pow, exp, erf, tanh, copysign)
/* double sigmoid and gelu by PyTorch's formulas (float ones: vunary_math.c) */
static inline double sigmoid_d(double a) { return 1 / (1 + exp(-a)); }
static inline double gelu_d(double a, int tanh_form) {
  if (tanh_form) return 0.5 * a * (1 + tanh(M_2_SQRTPI * M_SQRT1_2 * (a + 0.044715 * a * a * a)));
  return a * 0.5 * (1 + erf(a * M_SQRT1_2));
}

/* ---- activations, by PyTorch 1.13's CPU kernels' scalar formulas (order of
 * operations kept: the f32 SIMD kernels of vunary.c compute the same).
 * p->sp holds the schema's numbers in order. EX / L1P / TH: exp, log1p and
 * tanh in M (float: the vector kernels' code, so every path gives one answer). ---- */
#define ACT_HELPERS(M, sfx, EX, L1P, TH)                                                      \
  static inline M hardtanh_##sfx(M u, M lo, M hi) {                                          \
    M y = u < lo ? lo : u; /* std::min(std::max(u, lo), hi): NaN and -0 pass */               \
    return hi < y ? hi : y;                                                                   \
  }                                                                                           \
  static inline M elu_backward_##sfx(M g, M b, const ew_params* p) {                          \
    M negcoef = (M)p->sp[0] * (M)p->sp[1], poscoef = (M)p->sp[1], negiptcoef = (M)p->sp[2];   \
    if (b > 0) return g * poscoef; /* NaN: the other branch, as the vector kernel */            \
    return p->sp[3] != 0 ? g * negiptcoef * (b + negcoef) : g * negiptcoef * negcoef * EX(b * negiptcoef); \
  }                                                                                           \
  static inline M softplus_##sfx(M x, const ew_params* p) {                                   \
    M beta = (M)p->sp[0], threshold = (M)p->sp[1];                                            \
    return (x * beta) > threshold ? x : L1P(EX(x * beta)) / beta;                             \
  }                                                                                           \
  static inline M softplus_backward_##sfx(M g, M x, const ew_params* p) {                     \
    M beta = (M)p->sp[0], threshold = (M)p->sp[1], z = EX(x * beta);                          \
    return (x * beta) > threshold ? g : g * z / (z + (M)1);                                   \
  }                                                                                           \
  static inline M silu_backward_##sfx(M g, M x) {                                             \
    M sig = (M)1 / ((M)1 + EX(-x));                                                           \
    return g * sig * ((M)1 + x * ((M)1 - sig));                                               \
  }                                                                                           \
  static inline M mish_##sfx(M x) { return x * TH(L1P(EX(x))); }                             \
  static inline M mish_backward_##sfx(M g, M x) {                                             \
    M sig = (M)1 / ((M)1 + EX(-x)), ts = TH(L1P(EX(x)));                                      \
    return g * (ts + x * sig * ((M)1 - ts * ts));                                             \
  }                                                                                           \
  static inline M hs_##sfx(M x) { /* min(max(x + 3, 0), 6) */                                 \
    M y = x + (M)3;                                                                           \
    y = y < (M)0 ? (M)0 : y;                                                                  \
    return (M)6 < y ? (M)6 : y;                                                               \
  }                                                                                           \
  static inline M hardswish_backward_##sfx(M g, M x) { /* the vector kernel's: x >= 3 -> g */ \
    if (x < (M)-3) return (M)0;                                                               \
    return x >= (M)3 ? g : g * ((x / (M)3) + (M)0.5);                                         \
  }                                                                                           \
  static inline M log_sigmoid_##sfx(M x) { /* min(x, 0) - log1p(exp(-|x|)) */                \
    M z = EX(x < 0 ? x : -x);                                                                 \
    return (x < 0 ? x : (M)0) - L1P(z);                                                       \
  }                                                                                           \
  static inline M log_sigmoid_backward_##sfx(M g, M x) { /* g sigmoid(-x) */                 \
    M z = EX(x < 0 ? x : -x);                                                                 \
    return g * (x < 0 ? (M)1 : z) / ((M)1 + z);                                               \
  }
ACT_HELPERS(float, f, weft__f32_exp_1, weft__f32_log1p_1, weft__f32_tanh_1)
ACT_HELPERS(double, d, exp, log1p, tanh)
static inline double silu_d(double x) { return x / (1 + exp(-x)); }
static inline float silu_f(float x) { return weft__f32_silu_1(x); }
/* float elu runs the SIMD kernel's code (a VMATH op) */
static inline float elu_vm_f(float x, const ew_params* p) {
  struct weft_f32_unary_params q = {0, (float)p->sp[0], (float)p->sp[1], (float)p->sp[2]};
  return weft__f32_elu_1(x, &q);
}
static inline double elu_vm_d(double x, const ew_params* p) {
  double negcoef = p->sp[0] * p->sp[1], poscoef = p->sp[1], negiptcoef = p->sp[2];
  return x > 0 ? x * poscoef : (exp(x * negiptcoef) - 1) * negcoef;
}
static inline int64_t i_hardtanh(int64_t u, int64_t lo, int64_t hi) { return u < lo ? lo : hi < u ? hi : u; }

/* M-typed dispatch: float -> the f helper / libm's f-suffixed function */
#define GF(fn, x) _Generic((x), float: fn##_f, default: fn##_d)
#define LM(fn, x) _Generic((x), float: fn##f, default: fn)(x)
/* float math runs the f32 SIMD kernels' code one element at a time, so a
 * strided or plain row gives the bits of the vectorized one; double: libm */
#define VM(fn, x) _Generic((x), float: weft__f32_##fn##_1, default: fn)(x)
static inline float sigmoid_vm_f(float a) { return weft__f32_sigmoid_1(a); }
static inline float gelu_vm_f(float a, int tanh_form) { return weft__f32_gelu_1(a, tanh_form); }
#define GVM(fn, x) _Generic((x), float: fn##_vm_f, default: fn##_d)

/* ---- op definitions, named after the table (elementwise_table.h): I_<name>(u, [v,] p)
 * for integers and bool (int64_t), F_<name>(u, [v,] p) for floating (float or
 * double), C_<name>(u, v) for comparisons (bool result, both categories) ---- */
#define I_add(u, v, p) WRAP(U64(u) + U64((p)->alpha_i) * U64(v))
#define F_add(u, v, p) ((u) + (__typeof__(u))(p)->alpha_d * (v))
#define I_sub(u, v, p) WRAP(U64(u) - U64((p)->alpha_i) * U64(v))
#define F_sub(u, v, p) ((u) - (__typeof__(u))(p)->alpha_d * (v))
#define I_mul(u, v, p) WRAP(U64(u) * U64(v))
#define F_mul(u, v, p) ((u) * (v))
#define F_div(u, v, p) ((u) / (v))
#define I_floor_divide(u, v, p) i_floordiv(u, v, p)
#define F_floor_divide(u, v, p) GF(floordiv, u)(u, v)
#define I_remainder(u, v, p) i_rem(u, v, p)
#define F_remainder(u, v, p) GF(rem, u)(u, v)
#define I_pow(u, v, p) i_pow(u, v)
#define F_pow(u, v, p) GF(pow, u)(u, v)
#define I_maximum(u, v, p) ((u) < (v) ? (v) : (u))
#define F_maximum(u, v, p) GF(max, u)(u, v)
#define I_minimum(u, v, p) ((v) < (u) ? (v) : (u))
#define F_minimum(u, v, p) GF(min, u)(u, v)
#define I_bitwise_and(u, v, p) ((u) & (v))
#define I_bitwise_or(u, v, p) ((u) | (v))
#define I_bitwise_xor(u, v, p) ((u) ^ (v))
/* comparisons and logical ops: both categories, bool result */
#define C_eq(u, v) ((u) == (v))
#define C_ne(u, v) ((u) != (v))
#define C_lt(u, v) ((u) < (v))
#define C_le(u, v) ((u) <= (v))
#define C_gt(u, v) ((u) > (v))
#define C_ge(u, v) ((u) >= (v))
#define C_logical_and(u, v) ((u) != 0 && (v) != 0)
#define C_logical_or(u, v) ((u) != 0 || (v) != 0)
#define C_logical_xor(u, v) (((u) != 0) != ((v) != 0))
/* unary */
#define I_neg(u, p) WRAP(0 - U64(u))
#define F_neg(u, p) (-(u))
#define I_abs(u, p) ((u) < 0 ? WRAP(0 - U64(u)) : (u))
#define F_abs(u, p) LM(fabs, u)
#define I_sign(u, p) ((int64_t)((0 < (u)) - ((u) < 0)))
#define F_sign(u, p) GF(sign, u)(u)
#define I_relu(u, p) ((u) < 0 ? 0 : (u))
#define F_relu(u, p) GF(relu, u)(u)
#define I_floor(u, p) (u)
#define F_floor(u, p) LM(floor, u)
#define I_ceil(u, p) (u)
#define F_ceil(u, p) LM(ceil, u)
#define I_round(u, p) (u)
#define F_round(u, p) LM(nearbyint, u)
#define I_trunc(u, p) (u)
#define F_trunc(u, p) LM(trunc, u)
#define F_exp(u, p) VM(exp, u)
#define F_exp2(u, p) LM(exp2, u)
#define F_log(u, p) VM(log, u)
#define F_log1p(u, p) VM(log1p, u)
#define F_expm1(u, p) VM(expm1, u)
#define F_sqrt(u, p) LM(sqrt, u)
#define F_rsqrt(u, p) ((__typeof__(u))1 / LM(sqrt, u))
#define F_sin(u, p) VM(sin, u)
#define F_cos(u, p) VM(cos, u)
#define F_tan(u, p) VM(tan, u)
#define F_tanh(u, p) VM(tanh, u)
#define F_sigmoid(u, p) GVM(sigmoid, u)(u)
#define F_gelu(u, p) GVM(gelu, u)(u, (p)->approximate)
#define F_erf(u, p) VM(erf, u)
#define F_reciprocal(u, p) ((__typeof__(u))1 / (u))
/* activations (ACT_HELPERS above); hardtanh and relu6 also clamp integers */
#define F_elu(u, p) _Generic((u), float: elu_vm_f, default: elu_vm_d)(u, p)
#define F_elu_backward(u, v, p) GF(elu_backward, u)(u, v, p)
#define I_hardtanh(u, p) i_hardtanh(u, (int64_t)(p)->sp[0], (int64_t)(p)->sp[1])
#define F_hardtanh(u, p) GF(hardtanh, u)(u, (__typeof__(u))(p)->sp[0], (__typeof__(u))(p)->sp[1])
/* the vector kernel's test: NaN gives 0 */
#define F_hardtanh_backward(u, v, p) \
  (((v) > (__typeof__(v))(p)->sp[0] && (v) < (__typeof__(v))(p)->sp[1]) ? (u) : (__typeof__(u))0)
#define I_relu6(u, p) i_hardtanh(u, 0, 6)
#define F_relu6(u, p) GF(hardtanh, u)(u, 0, 6)
#define F_leaky_relu(u, p) ((u) > 0 ? (u) : (u) * (__typeof__(u))(p)->sp[0])
#define F_leaky_relu_backward(u, v, p) ((v) > 0 ? (u) : (u) * (__typeof__(u))(p)->sp[0])
#define F_softplus(u, p) GF(softplus, u)(u, p)
#define F_softplus_backward(u, v, p) GF(softplus_backward, u)(u, v, p)
#define F_silu(u, p) GF(silu, u)(u)
#define F_silu_backward(u, v, p) GF(silu_backward, u)(u, v)
#define F_mish(u, p) GF(mish, u)(u)
#define F_mish_backward(u, v, p) GF(mish_backward, u)(u, v)
#define F_hardswish(u, p) ((u) * GF(hs, u)(u) / (__typeof__(u))6)
#define F_hardswish_backward(u, v, p) GF(hardswish_backward, u)(u, v)
#define F_hardsigmoid(u, p) (GF(hs, u)(u) / (__typeof__(u))6)
/* PyTorch's one_sixth is 1.0f / 6.0f, a float, for double too */
#define F_hardsigmoid_backward(u, v, p) \
  (((v) > (__typeof__(v))-3 && (v) < (__typeof__(v))3) ? (u) * (__typeof__(u))(1.0f / 6.0f) : (__typeof__(u))0)
#define F_log_sigmoid(u, p) GF(log_sigmoid, u)(u)
#define F_log_sigmoid_backward(u, v, p) GF(log_sigmoid_backward, u)(u, v)
/* issue 25: libm's, in float for float rows (PyTorch's std::atan2 / std::hypot on scalar_t) */
#define F_atan2(u, v, p) _Generic((u), float: atan2f, default: atan2)(u, v)
#define F_hypot(u, v, p) _Generic((u), float: hypotf, default: hypot)(u, v)

/* ---- row templates ---- */
#define AT(T, base, i, s) ((T*)((base) + (ptrdiff_t)(i) * (s)))

#define ROW_BIN(OP, sfx, ST, MT, CAT)                                                               \
  ROW_SIZE_##sfx static void row_##OP##_##sfx(size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs, \
                               const ew_params* p) {                                                \
    const char *a = x[0], *b = x[1];                                                                \
    (void)p;                                                                                        \
    if (ys == sizeof(ST) && xs[0] == sizeof(ST) && xs[1] == sizeof(ST)) {                           \
      ST* yy = (ST*)y;                                                                              \
      const ST *aa = (const ST*)a, *bb = (const ST*)b;                                              \
      for (size_t i = 0; i < n; i++) {                                                              \
        MT u = LD_##sfx(aa + i), v = LD_##sfx(bb + i);                                              \
        ST_##sfx(yy + i, CAT##_##OP(u, v, p));                                                      \
      }                                                                                             \
    } else {                                                                                        \
      for (size_t i = 0; i < n; i++) {                                                              \
        MT u = LD_##sfx(AT(const ST, a, i, xs[0])), v = LD_##sfx(AT(const ST, b, i, xs[1]));        \
        ST_##sfx(AT(ST, y, i, ys), CAT##_##OP(u, v, p));                                            \
      }                                                                                             \
    }                                                                                               \
  }

#define ROW_CMP(OP, sfx, ST, MT, CAT)                                                               \
  ROW_SIZE_##sfx static void row_##OP##_##sfx(size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs, \
                               const ew_params* p) {                                                \
    const char *a = x[0], *b = x[1];                                                                \
    (void)p;                                                                                        \
    if (ys == 1 && xs[0] == sizeof(ST) && xs[1] == sizeof(ST)) {                                    \
      const ST *aa = (const ST*)a, *bb = (const ST*)b;                                              \
      for (size_t i = 0; i < n; i++) {                                                              \
        MT u = LD_##sfx(aa + i), v = LD_##sfx(bb + i);                                              \
        y[i] = (char)C_##OP(u, v);                                                                  \
      }                                                                                             \
    } else {                                                                                        \
      for (size_t i = 0; i < n; i++) {                                                              \
        MT u = LD_##sfx(AT(const ST, a, i, xs[0])), v = LD_##sfx(AT(const ST, b, i, xs[1]));        \
        *AT(char, y, i, ys) = (char)C_##OP(u, v);                                                   \
      }                                                                                             \
    }                                                                                               \
  }

#define ROW_UN(OP, sfx, ST, MT, CAT)                                                                \
  ROW_SIZE_##sfx static void row_##OP##_##sfx(size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs, \
                               const ew_params* p) {                                                \
    const char* a = x[0];                                                                           \
    (void)p;                                                                                        \
    if (ys == sizeof(ST) && xs[0] == sizeof(ST)) {                                                  \
      ST* yy = (ST*)y;                                                                              \
      const ST* aa = (const ST*)a;                                                                  \
      for (size_t i = 0; i < n; i++) {                                                              \
        MT u = LD_##sfx(aa + i);                                                                    \
        ST_##sfx(yy + i, CAT##_##OP(u, p));                                                         \
      }                                                                                             \
    } else {                                                                                        \
      for (size_t i = 0; i < n; i++) {                                                              \
        MT u = LD_##sfx(AT(const ST, a, i, xs[0]));                                                 \
        ST_##sfx(AT(ST, y, i, ys), CAT##_##OP(u, p));                                               \
      }                                                                                             \
    }                                                                                               \
  }

/* logical_not: any input dtype, bool result */
#define ROW_LNOT(OP, sfx, ST, MT, CAT)                                                              \
  ROW_SIZE_##sfx static void row_##OP##_##sfx(size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs, \
                               const ew_params* p) {                                                \
    (void)p;                                                                                        \
    for (size_t i = 0; i < n; i++) {                                                                \
      MT u = LD_##sfx(AT(const ST, x[0], i, xs[0]));                                                \
      *AT(char, y, i, ys) = (char)(u == 0);                                                         \
    }                                                                                               \
  }

/* where: x[0] the bool condition, x[1] / x[2] in the result dtype (bits copied) */
#define ROW_WHERE(OP, sfx, ST, MT, CAT)                                                             \
  ROW_SIZE_##sfx static void row_##OP##_##sfx(size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs, \
                               const ew_params* p) {                                                \
    (void)p;                                                                                        \
    if (ys == sizeof(ST) && xs[0] == 1 && xs[1] == sizeof(ST) && xs[2] == 0) {                      \
      /* dense, the other a scalar (relu's where(mask, grad, 0)): vectorized by the compiler */     \
      const uint8_t* c = (const uint8_t*)x[0];                                                      \
      const ST *a = (const ST*)x[1], b = *(const ST*)x[2];                                          \
      ST* yy = (ST*)y;                                                                              \
      for (size_t i = 0; i < n; i++) { /* a[i] read whatever c[i]: a select, not a branch */        \
        const ST v = a[i];                                                                          \
        yy[i] = c[i] ? v : b;                                                                       \
      }                                                                                             \
      return;                                                                                       \
    }                                                                                               \
    for (size_t i = 0; i < n; i++) { /* both read, then a select: no branch */                      \
      const ST a = *AT(const ST, x[1], i, xs[1]), b = *AT(const ST, x[2], i, xs[2]);                \
      *AT(ST, y, i, ys) = *AT(const uint8_t, x[0], i, xs[0]) ? a : b;                               \
    }                                                                                               \
  }

/* the template of each build kind (FILL has no rows) */
#define ROW_BINF ROW_BIN
#define ROW_UNF ROW_UN

/* ---- expansion: every op of the table, for every dtype of its `dtypes` column ---- */

/* X(suffix, DTYPE, storage type, math type, category, ...) */
#define EW_TYPES(X, ...)                                                                            \
  X(b, BOOL, uint8_t, int64_t, I, __VA_ARGS__)                                                      \
  X(u8, UINT8, uint8_t, int64_t, I, __VA_ARGS__)                                                    \
  X(i8, INT8, int8_t, int64_t, I, __VA_ARGS__)                                                      \
  X(i16, INT16, int16_t, int64_t, I, __VA_ARGS__)                                                   \
  X(i32, INT32, int32_t, int64_t, I, __VA_ARGS__)                                                   \
  X(i64, INT64, int64_t, int64_t, I, __VA_ARGS__)                                                   \
  X(h, FLOAT16, uint16_t, float, F, __VA_ARGS__)                                                    \
  X(bf, BFLOAT16, uint16_t, float, F, __VA_ARGS__)                                                  \
  X(f, FLOAT32, float, float, F, __VA_ARGS__)                                                       \
  X(d, FLOAT64, double, double, F, __VA_ARGS__)

/* EW__IF_<dtypes>_<category>(M, ...): M(...) when the dtypes column covers the category */
#define EW__IF_IF_I(M, ...) M(__VA_ARGS__)
#define EW__IF_IF_F(M, ...) M(__VA_ARGS__)
#define EW__IF_I_I(M, ...) M(__VA_ARGS__)
#define EW__IF_I_F(M, ...)
#define EW__IF_F_I(M, ...)
#define EW__IF_F_F(M, ...) M(__VA_ARGS__)
#define EW__IF_NONE_I(M, ...)
#define EW__IF_NONE_F(M, ...)

/* the rows: row_<name>_<suffix> */
#define EW__ROWS(name, build, dtypes, args, overloads, kname, refused, simd) EW_TYPES(EW__ROW, name, build, dtypes)
#define EW__ROW(sfx, D, ST, MT, CAT, name, build, dtypes) EW__IF_##dtypes##_##CAT(ROW_##build, name, sfx, ST, MT, CAT)
EW_OPS(EW__ROWS)

/* the table */
#define EW__ENTRIES(name, build, dtypes, args, overloads, kname, refused, simd) EW_TYPES(EW__ENTRY, name, dtypes)
#define EW__ENTRY(sfx, D, ST, MT, CAT, name, dtypes) EW__IF_##dtypes##_##CAT(EW__ENTRY_1, name, sfx, D)
#define EW__ENTRY_1(name, sfx, D) [EW_##name][WEFT_##D] = row_##name##_##sfx,
static ew_row_fn* const rows[EW_OP_COUNT][WEFT_DTYPE_COUNT] = {EW_OPS(EW__ENTRIES)};

ew_row_fn* weft__ew_row(ew_op op, weft_dtype t) {
  if ((int)op < 0 || op >= EW_OP_COUNT || (int)t < 0 || t >= WEFT_DTYPE_COUNT) return NULL;
  return rows[op][t];
}
