/* Generic casts for all 10 x 10 dtype pairs, one element at a time: the
 * fallback for pairs without a SIMD kernel, the strided path, and the
 * reference the SIMD casts are tested against.
 *
 * PyTorch's semantics (c10::convert / static_cast):
 * - to bool: value != 0 (NaN is true); from bool: 0 / 1.
 * - integer to integer: two's-complement wrap.
 * - float to integer truncates toward zero. Out of range is undefined in
 *   PyTorch; here float -> int32 / int64 saturates and NaN gives 0 (wasm's
 *   trunc_sat, which the SIMD f32 -> i32 kernel uses as is), and float ->
 *   uint8 / int8 / int16 truncates to int64 (saturating) then wraps, which is
 *   what PyTorch does for values in range of int64 (300.0 -> uint8 44,
 *   -1.0 -> uint8 255).
 * - to float16 / bfloat16: through float32 (so float64 and int64 round
 *   twice, as c10::Half(float(x)) does), round-to-nearest-even, with
 *   base/half.h's bits (PyTorch's, NaNs included).
 * - bfloat16 -> float32 is a shift, without the double in between: float ->
 *   double quiets a signalling NaN, PyTorch's shift keeps it.
 * - integers to float32 / float64: one C conversion (round to nearest even). */
#include <math.h>

#include "base/half.h"
#include "kernels/kernels.h"

/* ---- loads: integer-like sources give int64, floating sources double ---- */
#define LD_INT(tag, T) \
  static inline int64_t ld_##tag(const char* p) { T v; memcpy(&v, p, sizeof v); return (int64_t)v; }
static inline int64_t ld_b(const char* p) { return *(const uint8_t*)p != 0; }
LD_INT(u8, uint8_t)
LD_INT(i8, int8_t)
LD_INT(i16, int16_t)
LD_INT(i32, int32_t)
LD_INT(i64, int64_t)
static inline double ld_f16(const char* p) { uint16_t h; memcpy(&h, p, 2); return weft__f16_to_f32(h); }
static inline double ld_bf16(const char* p) { uint16_t h; memcpy(&h, p, 2); return weft__bf16_to_f32(h); }
static inline double ld_f32(const char* p) { float f; memcpy(&f, p, 4); return f; }
static inline double ld_f64(const char* p) { double d; memcpy(&d, p, 8); return d; }

/* ---- float -> integer truncation without undefined behaviour ---- */
static inline int64_t trunc_sat_i64(double d) {
  if (d != d) return 0;
  if (d >= 9223372036854775808.0) return INT64_MAX;
  if (d < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)d;
}
static inline int32_t trunc_sat_i32(double d) {
  if (d != d) return 0;
  if (d >= 2147483648.0) return INT32_MAX;
  if (d <= -2147483649.0) return INT32_MIN;
  return (int32_t)d;
}

/* ---- stores: st_I_<dst> from int64, st_F_<dst> from double ---- */
#define ST(tag, T, from_int, from_flt)                                                       \
  static inline void st_I_##tag(char* p, int64_t v) { T r = (from_int); memcpy(p, &r, sizeof r); } \
  static inline void st_F_##tag(char* p, double d) { T r = (from_flt); memcpy(p, &r, sizeof r); }
ST(b, uint8_t, v != 0, d != 0)
ST(u8, uint8_t, (uint8_t)v, (uint8_t)trunc_sat_i64(d))
ST(i8, int8_t, (int8_t)v, (int8_t)trunc_sat_i64(d))
ST(i16, int16_t, (int16_t)v, (int16_t)trunc_sat_i64(d))
ST(i32, int32_t, (int32_t)v, trunc_sat_i32(d))
ST(i64, int64_t, v, trunc_sat_i64(d))
ST(f16, uint16_t, weft__f32_to_f16((float)v), weft__f32_to_f16((float)d))
ST(bf16, uint16_t, weft__f32_to_bf16((float)v), weft__f32_to_bf16((float)d))
ST(f32, float, (float)v, (float)d)
ST(f64, double, (double)v, d)

/* (tag, element size, load kind) in weft_dtype order */
#define SRC_LIST(X) \
  X(b, 1, I) X(u8, 1, I) X(i8, 1, I) X(i16, 2, I) X(i32, 4, I) X(i64, 8, I) \
  X(f16, 2, F) X(bf16, 2, F) X(f32, 4, F) X(f64, 8, F)
#define DST_LIST(X, ...) \
  X(__VA_ARGS__, b, 1) X(__VA_ARGS__, u8, 1) X(__VA_ARGS__, i8, 1) X(__VA_ARGS__, i16, 2) \
  X(__VA_ARGS__, i32, 4) X(__VA_ARGS__, i64, 8) X(__VA_ARGS__, f16, 2) X(__VA_ARGS__, bf16, 2) \
  X(__VA_ARGS__, f32, 4) X(__VA_ARGS__, f64, 8)

/* Built for size (issue 26: the gzipped .wasm was over its budget): a pair
 * with int8, int16, int32, float16, bfloat16 or float64 on either side is
 * rarely cast in a hot loop (f32 <-> f16/bf16/i32 have SIMD kernels, cast.c),
 * so its two loops are compiled small (clang's minsize, in wasm builds only);
 * pairs of bool, uint8 (images), int64 (indices) and float32 stay optimized
 * for speed. */
#define HOT_b 1
#define HOT_u8 1
#define HOT_i8 0
#define HOT_i16 0
#define HOT_i32 0
#define HOT_i64 1
#define HOT_f16 0
#define HOT_bf16 0
#define HOT_f32 1
#define HOT_f64 0
#if defined(__clang__) && defined(__wasm__)
#define PAIR_SMALL __attribute__((minsize))
#else
#define PAIR_SMALL
#endif
#define PAIR_ATTR(s, d) PAIR_ATTR_I(HOT_##s, HOT_##d)
#define PAIR_ATTR_I(a, b) PAIR_ATTR_II(a, b)
#define PAIR_ATTR_II(a, b) PAIR_ATTR_##a##b
#define PAIR_ATTR_11
#define PAIR_ATTR_10 PAIR_SMALL
#define PAIR_ATTR_01 PAIR_SMALL
#define PAIR_ATTR_00 PAIR_SMALL

#define PAIR_FNS(s, ssz, k, d, dsz)                                                            \
  PAIR_ATTR(s, d) static void cast_##s##_##d(size_t n, const void* x, ptrdiff_t xs, void* y, ptrdiff_t ys) { \
    const char* src = x;                                                                      \
    char* dst = y;                                                                            \
    for (size_t i = 0; i < n; i++, src += xs, dst += ys) st_##k##_##d(dst, ld_##s(src));      \
  }                                                                                           \
  PAIR_ATTR(s, d) static void cast_c_##s##_##d(size_t n, const void* x, void* y) {            \
    const char* src = x;                                                                      \
    char* dst = y;                                                                            \
    for (size_t i = 0; i < n; i++) st_##k##_##d(dst + i * dsz, ld_##s(src + i * ssz));        \
  }
#define ROW_FNS(s, ssz, k) DST_LIST(PAIR_FNS, s, ssz, k)
SRC_LIST(ROW_FNS)

#define STRIDED_ENTRY(s, d, dsz) cast_##s##_##d,
#define STRIDED_ROW(s, ssz, k) {DST_LIST(STRIDED_ENTRY, s)},
static weft_xcopy_strided_fn* const strided_table[WEFT_DTYPE_COUNT][WEFT_DTYPE_COUNT] = {SRC_LIST(STRIDED_ROW)};

#define CONTIG_ENTRY(s, d, dsz) cast_c_##s##_##d,
#define CONTIG_ROW(s, ssz, k) {DST_LIST(CONTIG_ENTRY, s)},
static weft_vcvt_fn* const contig_table[WEFT_DTYPE_COUNT][WEFT_DTYPE_COUNT] = {SRC_LIST(CONTIG_ROW)};

static void cast_bf16_f32_bits(size_t n, const void* x, ptrdiff_t xs, void* y, ptrdiff_t ys) {
  const char* src = x;
  char* dst = y;
  for (size_t i = 0; i < n; i++, src += xs, dst += ys) {
    uint16_t h;
    memcpy(&h, src, 2);
    float f = weft__bf16_to_f32(h);
    memcpy(dst, &f, 4);
  }
}
static void cast_c_bf16_f32_bits(size_t n, const void* x, void* y) { cast_bf16_f32_bits(n, x, 2, y, 4); }

static bool valid_pair(weft_dtype from, weft_dtype to) {
  return (unsigned)from < WEFT_DTYPE_COUNT && (unsigned)to < WEFT_DTYPE_COUNT;
}

weft_xcopy_strided_fn* weft__cast_strided_kernel(weft_dtype from, weft_dtype to) {
  if (!valid_pair(from, to)) return NULL;
  if (from == to) return weft__copy_strided_kernel(weft__kernels(), weft_dtype_size(from));
  if (from == WEFT_BFLOAT16 && to == WEFT_FLOAT32) return cast_bf16_f32_bits;
  return strided_table[from][to];
}

weft_vcvt_fn* weft__cast_ref_kernel(weft_dtype from, weft_dtype to) {
  if (!valid_pair(from, to)) return NULL;
  if (from == to) return weft__copy_kernel(weft__kernels_scalar(), weft_dtype_size(from));
  if (from == WEFT_BFLOAT16 && to == WEFT_FLOAT32) return cast_c_bf16_f32_bits;
  return contig_table[from][to];
}

weft_vcvt_fn* weft__cast_kernel(const weft_kernels* k, weft_dtype from, weft_dtype to) {
  if (!valid_pair(from, to)) return NULL;
  if (from == to) return weft__copy_kernel(k, weft_dtype_size(from));
  if (from == WEFT_FLOAT32 && to == WEFT_FLOAT16) return k->f32_f16_cvt;
  if (from == WEFT_FLOAT16 && to == WEFT_FLOAT32) return k->f16_f32_cvt;
  if (from == WEFT_FLOAT32 && to == WEFT_BFLOAT16) return k->f32_bf16_cvt;
  if (from == WEFT_BFLOAT16 && to == WEFT_FLOAT32) return k->bf16_f32_cvt;
  if (from == WEFT_FLOAT32 && to == WEFT_INT32) return k->f32_i32_cvt;
  if (from == WEFT_INT32 && to == WEFT_FLOAT32) return k->i32_f32_cvt;
  return contig_table[from][to];
}
