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

/* ---- dtypes: X(suffix, DTYPE, storage type, math type, category) ---- */
#define EW_TYPES_I(X)                          \
  X(b, BOOL, uint8_t, int64_t, I)              \
  X(u8, UINT8, uint8_t, int64_t, I)            \
  X(i8, INT8, int8_t, int64_t, I)              \
  X(i16, INT16, int16_t, int64_t, I)           \
  X(i32, INT32, int32_t, int64_t, I)           \
  X(i64, INT64, int64_t, int64_t, I)
#define EW_TYPES_F(X)                          \
  X(h, FLOAT16, uint16_t, float, F)            \
  X(bf, BFLOAT16, uint16_t, float, F)          \
  X(f, FLOAT32, float, float, F)               \
  X(d, FLOAT64, double, double, F)

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

/* M-typed dispatch: float -> the f helper / libm's f-suffixed function */
#define GF(fn, x) _Generic((x), float: fn##_f, default: fn##_d)
#define LM(fn, x) _Generic((x), float: fn##f, default: fn)(x)
/* float math runs the f32 SIMD kernels' code one element at a time, so a
 * strided or plain row gives the bits of the vectorized one; double: libm */
#define VM(fn, x) _Generic((x), float: weft__f32_##fn##_1, default: fn)(x)
static inline float sigmoid_vm_f(float a) { return weft__f32_sigmoid_1(a); }
static inline float gelu_vm_f(float a, int tanh_form) { return weft__f32_gelu_1(a, tanh_form); }
#define GVM(fn, x) _Generic((x), float: fn##_vm_f, default: fn##_d)

/* ---- op definitions: I_op(u, v, p) and F_op(u, v, p) ---- */
#define I_ADD(u, v, p) WRAP(U64(u) + U64((p)->alpha_i) * U64(v))
#define F_ADD(u, v, p) ((u) + (__typeof__(u))(p)->alpha_d * (v))
#define I_SUB(u, v, p) WRAP(U64(u) - U64((p)->alpha_i) * U64(v))
#define F_SUB(u, v, p) ((u) - (__typeof__(u))(p)->alpha_d * (v))
#define I_MUL(u, v, p) WRAP(U64(u) * U64(v))
#define F_MUL(u, v, p) ((u) * (v))
#define F_DIV(u, v, p) ((u) / (v))
#define I_FLOOR_DIVIDE(u, v, p) i_floordiv(u, v, p)
#define F_FLOOR_DIVIDE(u, v, p) GF(floordiv, u)(u, v)
#define I_REMAINDER(u, v, p) i_rem(u, v, p)
#define F_REMAINDER(u, v, p) GF(rem, u)(u, v)
#define I_POW(u, v, p) i_pow(u, v)
#define F_POW(u, v, p) GF(pow, u)(u, v)
#define I_MAXIMUM(u, v, p) ((u) < (v) ? (v) : (u))
#define F_MAXIMUM(u, v, p) GF(max, u)(u, v)
#define I_MINIMUM(u, v, p) ((v) < (u) ? (v) : (u))
#define F_MINIMUM(u, v, p) GF(min, u)(u, v)
#define I_BITWISE_AND(u, v, p) ((u) & (v))
#define I_BITWISE_OR(u, v, p) ((u) | (v))
#define I_BITWISE_XOR(u, v, p) ((u) ^ (v))
/* comparisons and logical ops: both categories, bool result */
#define C_EQ(u, v) ((u) == (v))
#define C_NE(u, v) ((u) != (v))
#define C_LT(u, v) ((u) < (v))
#define C_LE(u, v) ((u) <= (v))
#define C_GT(u, v) ((u) > (v))
#define C_GE(u, v) ((u) >= (v))
#define C_LOGICAL_AND(u, v) ((u) != 0 && (v) != 0)
#define C_LOGICAL_OR(u, v) ((u) != 0 || (v) != 0)
#define C_LOGICAL_XOR(u, v) (((u) != 0) != ((v) != 0))
/* unary */
#define I_NEG(u, p) WRAP(0 - U64(u))
#define F_NEG(u, p) (-(u))
#define I_ABS(u, p) ((u) < 0 ? WRAP(0 - U64(u)) : (u))
#define F_ABS(u, p) LM(fabs, u)
#define I_SIGN(u, p) ((int64_t)((0 < (u)) - ((u) < 0)))
#define F_SIGN(u, p) GF(sign, u)(u)
#define I_RELU(u, p) ((u) < 0 ? 0 : (u))
#define F_RELU(u, p) GF(relu, u)(u)
#define I_FLOOR(u, p) (u)
#define F_FLOOR(u, p) LM(floor, u)
#define I_CEIL(u, p) (u)
#define F_CEIL(u, p) LM(ceil, u)
#define I_ROUND(u, p) (u)
#define F_ROUND(u, p) LM(nearbyint, u)
#define I_TRUNC(u, p) (u)
#define F_TRUNC(u, p) LM(trunc, u)
#define F_EXP(u, p) VM(exp, u)
#define F_LOG(u, p) VM(log, u)
#define F_LOG1P(u, p) VM(log1p, u)
#define F_EXPM1(u, p) VM(expm1, u)
#define F_SQRT(u, p) LM(sqrt, u)
#define F_RSQRT(u, p) ((__typeof__(u))1 / LM(sqrt, u))
#define F_SIN(u, p) VM(sin, u)
#define F_COS(u, p) VM(cos, u)
#define F_TAN(u, p) VM(tan, u)
#define F_TANH(u, p) VM(tanh, u)
#define F_SIGMOID(u, p) GVM(sigmoid, u)(u)
#define F_GELU(u, p) GVM(gelu, u)(u, (p)->approximate)
#define F_ERF(u, p) VM(erf, u)
#define F_RECIPROCAL(u, p) ((__typeof__(u))1 / (u))

/* ---- row templates ---- */
#define AT(T, base, i, s) ((T*)((base) + (ptrdiff_t)(i) * (s)))

#define ROW_BIN(OP, sfx, ST, MT, CAT)                                                               \
  static void row_##OP##_##sfx(size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs, \
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
  static void row_##OP##_##sfx(size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs, \
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
  static void row_##OP##_##sfx(size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs, \
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

#define ROW_LNOT(sfx, ST, MT)                                                                       \
  static void row_LOGICAL_NOT_##sfx(size_t n, char* y, ptrdiff_t ys, char* const* x,                \
                                    const ptrdiff_t* xs, const ew_params* p) {                      \
    (void)p;                                                                                        \
    for (size_t i = 0; i < n; i++) {                                                                \
      MT u = LD_##sfx(AT(const ST, x[0], i, xs[0]));                                                \
      *AT(char, y, i, ys) = (char)(u == 0);                                                         \
    }                                                                                               \
  }

/* where: x[0] the bool condition, x[1] / x[2] in the result dtype (bits copied) */
#define ROW_WHERE(sfx, ST, MT)                                                                      \
  static void row_WHERE_##sfx(size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs, \
                              const ew_params* p) {                                                 \
    (void)p;                                                                                        \
    for (size_t i = 0; i < n; i++) {                                                                \
      const ST* s = *AT(const uint8_t, x[0], i, xs[0]) ? AT(const ST, x[1], i, xs[1])               \
                                                       : AT(const ST, x[2], i, xs[2]);              \
      *AT(ST, y, i, ys) = *s;                                                                       \
    }                                                                                               \
  }

/* ---- expansion ---- */
#define BIN_IF_OPS(X) X(ADD) X(SUB) X(MUL) X(FLOOR_DIVIDE) X(REMAINDER) X(POW) X(MAXIMUM) X(MINIMUM)
#define BIN_I_OPS(X) X(BITWISE_AND) X(BITWISE_OR) X(BITWISE_XOR)
#define BIN_F_OPS(X) X(DIV)
#define CMP_OPS(X) X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(LOGICAL_AND) X(LOGICAL_OR) X(LOGICAL_XOR)
#define UN_IF_OPS(X) X(NEG) X(ABS) X(SIGN) X(RELU) X(FLOOR) X(CEIL) X(ROUND) X(TRUNC)
#define UN_F_OPS(X)                                                                                 \
  X(EXP) X(LOG) X(LOG1P) X(EXPM1) X(SQRT) X(RSQRT) X(SIN) X(COS) X(TAN) X(TANH) X(SIGMOID) X(GELU) \
  X(ERF) X(RECIPROCAL)

#define FOR_TYPE_I(sfx, D, ST, MT, CAT)                                                             \
  BIN_IF_OPS(BIN_##CAT##_##sfx) BIN_I_OPS(BIN_##CAT##_##sfx) CMP_OPS(CMP_##sfx) UN_IF_OPS(UN_##CAT##_##sfx) \
  ROW_LNOT(sfx, ST, MT) ROW_WHERE(sfx, ST, MT)
#define FOR_TYPE_F(sfx, D, ST, MT, CAT)                                                             \
  BIN_IF_OPS(BIN_##CAT##_##sfx) BIN_F_OPS(BIN_##CAT##_##sfx) CMP_OPS(CMP_##sfx) UN_IF_OPS(UN_##CAT##_##sfx) \
  UN_F_OPS(UN_##CAT##_##sfx) ROW_LNOT(sfx, ST, MT) ROW_WHERE(sfx, ST, MT)

/* per-type one-argument adapters for the op lists */
#define BIN_I_b(OP) ROW_BIN(OP, b, uint8_t, int64_t, I)
#define BIN_I_u8(OP) ROW_BIN(OP, u8, uint8_t, int64_t, I)
#define BIN_I_i8(OP) ROW_BIN(OP, i8, int8_t, int64_t, I)
#define BIN_I_i16(OP) ROW_BIN(OP, i16, int16_t, int64_t, I)
#define BIN_I_i32(OP) ROW_BIN(OP, i32, int32_t, int64_t, I)
#define BIN_I_i64(OP) ROW_BIN(OP, i64, int64_t, int64_t, I)
#define BIN_F_h(OP) ROW_BIN(OP, h, uint16_t, float, F)
#define BIN_F_bf(OP) ROW_BIN(OP, bf, uint16_t, float, F)
#define BIN_F_f(OP) ROW_BIN(OP, f, float, float, F)
#define BIN_F_d(OP) ROW_BIN(OP, d, double, double, F)
#define CMP_b(OP) ROW_CMP(OP, b, uint8_t, int64_t, I)
#define CMP_u8(OP) ROW_CMP(OP, u8, uint8_t, int64_t, I)
#define CMP_i8(OP) ROW_CMP(OP, i8, int8_t, int64_t, I)
#define CMP_i16(OP) ROW_CMP(OP, i16, int16_t, int64_t, I)
#define CMP_i32(OP) ROW_CMP(OP, i32, int32_t, int64_t, I)
#define CMP_i64(OP) ROW_CMP(OP, i64, int64_t, int64_t, I)
#define CMP_h(OP) ROW_CMP(OP, h, uint16_t, float, F)
#define CMP_bf(OP) ROW_CMP(OP, bf, uint16_t, float, F)
#define CMP_f(OP) ROW_CMP(OP, f, float, float, F)
#define CMP_d(OP) ROW_CMP(OP, d, double, double, F)
#define UN_I_b(OP) ROW_UN(OP, b, uint8_t, int64_t, I)
#define UN_I_u8(OP) ROW_UN(OP, u8, uint8_t, int64_t, I)
#define UN_I_i8(OP) ROW_UN(OP, i8, int8_t, int64_t, I)
#define UN_I_i16(OP) ROW_UN(OP, i16, int16_t, int64_t, I)
#define UN_I_i32(OP) ROW_UN(OP, i32, int32_t, int64_t, I)
#define UN_I_i64(OP) ROW_UN(OP, i64, int64_t, int64_t, I)
#define UN_F_h(OP) ROW_UN(OP, h, uint16_t, float, F)
#define UN_F_bf(OP) ROW_UN(OP, bf, uint16_t, float, F)
#define UN_F_f(OP) ROW_UN(OP, f, float, float, F)
#define UN_F_d(OP) ROW_UN(OP, d, double, double, F)

EW_TYPES_I(FOR_TYPE_I)
EW_TYPES_F(FOR_TYPE_F)

/* ---- the table ---- */
#define ENTRY(OP, sfx, D) [EW_##OP][WEFT_##D] = row_##OP##_##sfx,
#define TAB_I(sfx, D, ST, MT, CAT)                                                                 \
  ENTRY(ADD, sfx, D) ENTRY(SUB, sfx, D) ENTRY(MUL, sfx, D) ENTRY(FLOOR_DIVIDE, sfx, D)             \
  ENTRY(REMAINDER, sfx, D) ENTRY(POW, sfx, D) ENTRY(MAXIMUM, sfx, D) ENTRY(MINIMUM, sfx, D)        \
  ENTRY(BITWISE_AND, sfx, D) ENTRY(BITWISE_OR, sfx, D) ENTRY(BITWISE_XOR, sfx, D)                  \
  TAB_COMMON(sfx, D)
#define TAB_F(sfx, D, ST, MT, CAT)                                                                 \
  ENTRY(ADD, sfx, D) ENTRY(SUB, sfx, D) ENTRY(MUL, sfx, D) ENTRY(FLOOR_DIVIDE, sfx, D)             \
  ENTRY(REMAINDER, sfx, D) ENTRY(POW, sfx, D) ENTRY(MAXIMUM, sfx, D) ENTRY(MINIMUM, sfx, D)        \
  ENTRY(DIV, sfx, D) ENTRY(EXP, sfx, D) ENTRY(LOG, sfx, D) ENTRY(LOG1P, sfx, D)                    \
  ENTRY(EXPM1, sfx, D) ENTRY(SQRT, sfx, D) ENTRY(RSQRT, sfx, D) ENTRY(SIN, sfx, D)                 \
  ENTRY(COS, sfx, D) ENTRY(TAN, sfx, D) ENTRY(TANH, sfx, D) ENTRY(SIGMOID, sfx, D)                 \
  ENTRY(GELU, sfx, D) ENTRY(ERF, sfx, D) ENTRY(RECIPROCAL, sfx, D) TAB_COMMON(sfx, D)
#define TAB_COMMON(sfx, D)                                                                         \
  ENTRY(EQ, sfx, D) ENTRY(NE, sfx, D) ENTRY(LT, sfx, D) ENTRY(LE, sfx, D) ENTRY(GT, sfx, D)        \
  ENTRY(GE, sfx, D) ENTRY(LOGICAL_AND, sfx, D) ENTRY(LOGICAL_OR, sfx, D)                           \
  ENTRY(LOGICAL_XOR, sfx, D) ENTRY(NEG, sfx, D) ENTRY(ABS, sfx, D) ENTRY(SIGN, sfx, D)             \
  ENTRY(RELU, sfx, D) ENTRY(FLOOR, sfx, D) ENTRY(CEIL, sfx, D) ENTRY(ROUND, sfx, D)                \
  ENTRY(TRUNC, sfx, D) ENTRY(LOGICAL_NOT, sfx, D) ENTRY(WHERE, sfx, D)

static ew_row_fn* const rows[EW_OP_COUNT][WEFT_DTYPE_COUNT] = {
    EW_TYPES_I(TAB_I) EW_TYPES_F(TAB_F)};

ew_row_fn* weft__ew_row(ew_op op, weft_dtype t) {
  if ((int)op < 0 || op >= EW_OP_COUNT || (int)t < 0 || t >= WEFT_DTYPE_COUNT) return NULL;
  return rows[op][t];
}
