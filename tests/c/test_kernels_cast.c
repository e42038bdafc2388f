/* Casts: all 100 dtype pairs, SIMD vs generic (bit-exact), strided vs
 * contiguous, edge values, PyTorch's semantics spot-checked, float16 checked
 * against the compiler's _Float16 where it has one. */
#include <math.h>
#include <stdlib.h>

#include "base/half.h"
#include "kernel_test_util.h"
#include "test.h"

#define N 523

static const float f32_edges[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 3.7f, -3.7f,
                                  NAN, -NAN, INFINITY, -INFINITY, 1e-45f, -1e-45f, 1e-40f, 1.17549435e-38f,
                                  3.4028235e38f, -3.4028235e38f, 65504.0f, 65519.0f, 65520.0f, 65536.0f,
                                  -65520.0f, 5.96046448e-8f, 2.98023224e-8f, 4.4703484e-8f, 6.1035156e-5f,
                                  6.0975552e-5f, 127.0f, 128.0f, 255.0f, 256.0f, 300.0f, -129.0f, 32767.0f,
                                  32768.0f, -32769.0f, 2147483520.0f, 2147483648.0f, -2147483648.0f,
                                  -2147483904.0f, 1e10f, -1e10f, 9.3e18f, -9.3e18f, 1.00390625f, 1.01171875f,
                                  1.00048828125f, 1.00146484375f};

/* fill x (n elements of dtype t) with edges then random bits */
static void fill_input(weft_dtype t, void* x, size_t n) {
  size_t es = weft_dtype_size(t);
  kt_fill_bytes(x, n * es);
  size_t ne = sizeof f32_edges / sizeof f32_edges[0];
  for (size_t i = 0; i < ne && i < n; i++) {
    float f = f32_edges[i];
    char* p = (char*)x + i * es;
    switch (t) {
      case WEFT_BOOL: p[0] = (char)(i % 3); break; /* 0, 1 and a non-canonical 2 */
      case WEFT_FLOAT16: { uint16_t h = weft__f32_to_f16(f); memcpy(p, &h, 2); break; }
      case WEFT_BFLOAT16: { uint16_t h = weft__f32_to_bf16(f); memcpy(p, &h, 2); break; }
      case WEFT_FLOAT32: memcpy(p, &f, 4); break;
      case WEFT_FLOAT64: { double d = f; memcpy(p, &d, 8); break; }
      case WEFT_INT32: { int32_t v = (int32_t)(i * 2654435761u); memcpy(p, &v, 4); break; }
      default: break;
    }
  }
  if (t == WEFT_BOOL)
    for (size_t i = ne; i < n; i++) ((unsigned char*)x)[i] &= 1;
}

static void test_all_pairs(void) {
  for (int s = 0; s < WEFT_DTYPE_COUNT; s++) {
    for (int d = 0; d < WEFT_DTYPE_COUNT; d++) {
      size_t ss = weft_dtype_size(s), ds = weft_dtype_size(d);
      char* x = malloc(N * ss);
      char* want = malloc(N * ds);
      char* got = malloc(N * ds + 16);
      char* strided = malloc(2 * N * ds);
      fill_input(s, x, N);
      weft__cast_ref_kernel(s, d)(N, x, want);
      for (int b = 0; b < KT_NBACKENDS; b++) {
        for (size_t si = 0; si < KT_NSIZES; si++) {
          size_t n = kt_sizes[si] < N ? kt_sizes[si] : N;
          memset(got, 0x5A, N * ds + 16);
          weft__cast_kernel(kt_backend(b), s, d)(n, x, got);
          int ok = memcmp(got, want, n * ds) == 0;
          for (size_t i = n * ds; i < N * ds + 16; i++) ok &= got[i] == 0x5A;
          if (!ok) fprintf(stderr, "cast %s -> %s (%s) n=%zu differs\n", weft_dtype_name(s),
                           weft_dtype_name(d), kt_backend(b)->isa, n);
          CHECK(ok);
        }
      }
      /* strided: every other output slot, input reversed via a negative stride */
      weft__cast_strided_kernel(s, d)(N, x + (N - 1) * ss, -(ptrdiff_t)ss, strided, 2 * (ptrdiff_t)ds);
      int ok = 1;
      for (size_t i = 0; i < N; i++) ok &= memcmp(strided + 2 * i * ds, want + (N - 1 - i) * ds, ds) == 0;
      CHECK(ok);
      free(x);
      free(want);
      free(got);
      free(strided);
    }
  }
}

/* one value through the cast s -> d of every backend; all must agree */
static void cast1(weft_dtype s, weft_dtype d, const void* x, void* y) {
  weft__cast_ref_kernel(s, d)(1, x, y);
  char y2[8];
  for (int b = 0; b < KT_NBACKENDS; b++) {
    weft__cast_kernel(kt_backend(b), s, d)(1, x, y2);
    CHECK(memcmp(y, y2, weft_dtype_size(d)) == 0);
  }
}
static int32_t f32_to_i32(float f) { int32_t r; cast1(WEFT_FLOAT32, WEFT_INT32, &f, &r); return r; }
static int64_t f32_to_i64(float f) { int64_t r; cast1(WEFT_FLOAT32, WEFT_INT64, &f, &r); return r; }
static uint8_t f32_to_u8(float f) { uint8_t r; cast1(WEFT_FLOAT32, WEFT_UINT8, &f, &r); return r; }
static uint8_t f32_to_b(float f) { uint8_t r; cast1(WEFT_FLOAT32, WEFT_BOOL, &f, &r); return r; }
static uint16_t f32_to_h(float f) { uint16_t r; cast1(WEFT_FLOAT32, WEFT_FLOAT16, &f, &r); return r; }
static uint16_t f32_to_bh(float f) { uint16_t r; cast1(WEFT_FLOAT32, WEFT_BFLOAT16, &f, &r); return r; }
static float h_to_f32(uint16_t h) { float r; cast1(WEFT_FLOAT16, WEFT_FLOAT32, &h, &r); return r; }

static void test_semantics(void) {
  CHECK(f32_to_i32(3.7f) == 3 && f32_to_i32(-3.7f) == -3 && f32_to_i32(-0.0f) == 0);
  CHECK(f32_to_i32(NAN) == 0 && f32_to_i32(1e10f) == INT32_MAX && f32_to_i32(-1e10f) == INT32_MIN);
  CHECK(f32_to_i32(INFINITY) == INT32_MAX && f32_to_i32(-INFINITY) == INT32_MIN);
  CHECK(f32_to_i64(-1e30f) == INT64_MIN && f32_to_i64(1e30f) == INT64_MAX && f32_to_i64(-2.9f) == -2);
  CHECK(f32_to_u8(300.0f) == 44 && f32_to_u8(-1.0f) == 255 && f32_to_u8(255.9f) == 255);
  CHECK(f32_to_b(NAN) == 1 && f32_to_b(-0.0f) == 0 && f32_to_b(1e-45f) == 1 && f32_to_b(0.0f) == 0);
  int32_t i = 300;
  int8_t i8;
  cast1(WEFT_INT32, WEFT_INT8, &i, &i8);
  CHECK(i8 == 44);
  i = -129;
  cast1(WEFT_INT32, WEFT_INT8, &i, &i8);
  CHECK(i8 == 127);
  uint8_t b = 2; /* a non-canonical true byte */
  int32_t bi;
  cast1(WEFT_BOOL, WEFT_INT32, &b, &bi);
  CHECK(bi == 1);
  float bf;
  cast1(WEFT_BOOL, WEFT_FLOAT32, &b, &bf);
  CHECK(bf == 1.0f);
  int64_t big = (1LL << 53) + 1;
  float bigf;
  cast1(WEFT_INT64, WEFT_FLOAT32, &big, &bigf);
  CHECK(bigf == 9007199254740992.0f);
  /* float16: max, overflow at the tie, ties to even, subnormals, NaN, -0 */
  CHECK(f32_to_h(65504.0f) == 0x7BFF && f32_to_h(65519.0f) == 0x7BFF && f32_to_h(65520.0f) == 0x7C00);
  CHECK(f32_to_h(1.00048828125f) == 0x3C00); /* 1 + 2^-11: tie, to even */
  CHECK(f32_to_h(1.00146484375f) == 0x3C02); /* 1 + 3*2^-11: tie, to even (up) */
  CHECK(f32_to_h(5.96046448e-8f) == 0x0001 && f32_to_h(2.98023224e-8f) == 0x0000);
  CHECK(f32_to_h(4.4703484e-8f) == 0x0001 && f32_to_h(-0.0f) == 0x8000);
  CHECK(f32_to_h(NAN) == 0x7E00 && f32_to_h(INFINITY) == 0x7C00 && f32_to_h(-INFINITY) == 0xFC00);
  CHECK(f32_to_h(1e-10f) == 0x0000 && f32_to_h(-1e-10f) == 0x8000);
  CHECK(h_to_f32(0x0001) == 5.96046448e-8f && h_to_f32(0x7C00) == INFINITY && h_to_f32(0x3555) == 0.333251953125f);
  CHECK(h_to_f32(0x03FF) == 6.0975552e-5f && isnan(h_to_f32(0x7E00)) && h_to_f32(0x8000) == 0.0f);
  CHECK(signbit(h_to_f32(0x8000)));
  /* bfloat16 */
  CHECK(f32_to_bh(1.00390625f) == 0x3F80 && f32_to_bh(1.01171875f) == 0x3F82);
  CHECK(f32_to_bh(NAN) == 0x7FC0 && f32_to_bh(3.4028235e38f) == 0x7F80 && f32_to_bh(-0.0f) == 0x8000);
  /* float64 -> float16 rounds through float32, as c10::Half(float(x)) */
  double d = 1.0 + ldexp(1.0, -11) + ldexp(1.0, -40);
  uint16_t h;
  cast1(WEFT_FLOAT64, WEFT_FLOAT16, &d, &h);
  CHECK(h == 0x3C00);
}

static void test_f16_against_compiler(void) {
#if defined(__FLT16_MAX__) && !defined(__EMSCRIPTEN__)
  int ok = 1;
  for (uint32_t h = 0; h < 65536; h++) {
    _Float16 c;
    uint16_t hb = (uint16_t)h;
    memcpy(&c, &hb, 2);
    ok &= kt_same_f32(weft__f16_to_f32(hb), (float)c);
  }
  CHECK(ok);
  static float xs[1 << 16];
  static uint16_t ys[1 << 16];
  for (int round = 0; round < 16; round++) {
    for (size_t i = 0; i < (1 << 16); i++) {
      uint32_t u = kt_rand() << 1 ^ kt_rand();
      /* bias toward the f16 range so rounding is exercised */
      if (i & 1) u = (u & 0x807FFFFFu) | ((uint32_t)(100 + (kt_rand() % 60)) << 23);
      xs[i] = kt_f32_from_bits(u);
    }
    weft__kernels()->f32_f16_cvt(1 << 16, xs, ys);
    for (size_t i = 0; i < (1 << 16); i++) {
      if (xs[i] != xs[i]) continue; /* NaN payloads: 0x7E00 here, the compiler keeps bits */
      _Float16 c = (_Float16)xs[i];
      uint16_t cb;
      memcpy(&cb, &c, 2);
      ok &= cb == ys[i];
    }
  }
  CHECK(ok);
#endif
}

int main(void) {
  test_all_pairs();
  test_semantics();
  test_f16_against_compiler();
  TEST_REPORT();
}
