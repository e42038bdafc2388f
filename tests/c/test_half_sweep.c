/* The float16 / bfloat16 cast kernels against base/half.h's scalar
 * converters (whose bits test_half.c checks against PyTorch 1.13) over many
 * float32 bit patterns: a dense stride over all 2^32, every pattern in the
 * windows where the rounding changes its rule (the underflow to zero, the
 * subnormal / normal edge, the overflow to Inf, Inf / NaN), and the ties,
 * the patterns one below and one above them, of every float16 step. Each
 * through the SIMD backend and the scalar backend, at lengths that leave
 * every tail size; then every float16 pattern back to float32 and round
 * trip; then the same values through copy_ on 2 threads.
 * WEFT_FULL_SWEEP=1 in the environment runs all 2^32 patterns (a minute
 * natively; not part of the suite). */
#include <stdlib.h>

#include "base/half.h"
#include "kernel_test_util.h"
#include "test.h"
#include "weft/copy.h"
#include "weft/parallel.h"
#include "weft/tensor.h"

#define BATCH 8192
#define STRIDE 4093u /* odd: the stride visits every residue of the low bits */

static float in[BATCH];
static uint16_t out16[BATCH];
static int shown;

/* the n patterns in `in` through both backends' f32 -> f16 and f32 -> bf16 */
static int check_batch(size_t n) {
  int bad = 0;
  for (int b = 0; b < KT_NBACKENDS; b++) {
    const weft_kernels* k = kt_backend(b);
    for (int bf = 0; bf < 2; bf++) {
      /* an odd length first, so the tail path sees real patterns too */
      size_t cut = n > 7 ? n - 5 : n;
      weft_vcvt_fn* f = bf ? k->f32_bf16_cvt : k->f32_f16_cvt;
      f(cut, in, out16);
      f(n - cut, in + cut, out16 + cut);
      for (size_t i = 0; i < n; i++) {
        uint16_t want = bf ? weft__f32_to_bf16(in[i]) : weft__f32_to_f16(in[i]);
        if (out16[i] != want) {
          if (shown++ < 6)
            fprintf(stderr, "%s %s: 0x%08X -> 0x%04X, want 0x%04X\n", k->isa, bf ? "bf16" : "f16",
                    kt_f32_bits(in[i]), out16[i], want);
          bad++;
        }
      }
    }
  }
  return bad;
}

/* patterns first + i * step, both signs, batched */
static int sweep(uint64_t first, uint64_t count, uint64_t step) {
  int bad = 0;
  size_t n = 0;
  for (uint64_t i = 0; i < count; i++) {
    uint32_t u = (uint32_t)(first + i * step);
    in[n++] = kt_f32_from_bits(u);
    in[n++] = kt_f32_from_bits(u ^ 0x80000000u);
    if (n == BATCH || i + 1 == count) {
      bad += check_batch(n);
      n = 0;
    }
  }
  return bad;
}

static void test_dense(void) {
  if (getenv("WEFT_FULL_SWEEP")) {
    CHECK(sweep(0, 1ull << 31, 1) == 0); /* both signs of every magnitude pattern: all 2^32 */
    return;
  }
  CHECK(sweep(0, (1ull << 32) / STRIDE, STRIDE) == 0);
}

/* every pattern around the places the rule changes */
static void test_windows(void) {
  static const uint32_t centres[] = {
      0x33000000u, /* 2^-25: below it rounds to 0, at it ties to 0 */
      0x33C00000u, /* 1.5 * 2^-25 */
      0x38800000u, /* 2^-14: the smallest normal float16 */
      0x477FE000u, /* 65504, the largest finite float16 */
      0x477FF000u, /* 65520: from here on Inf */
      0x7F800000u, /* Inf, then the NaNs */
      0x7FC00000u, /* the quiet NaNs */
      0x7F7FFFFFu, /* FLT_MAX: bfloat16 rounds it to Inf */
      0x00000000u, /* zero and the float32 subnormals */
  };
  for (size_t c = 0; c < sizeof centres / sizeof centres[0]; c++) {
    uint32_t lo = centres[c] >= 0x8000u ? centres[c] - 0x8000u : 0;
    CHECK(sweep(lo, 0x10000u, 1) == 0);
  }
}

/* each float16 step's tie (halfway to the next value) and its neighbours */
static void test_ties(void) {
  int bad = 0;
  size_t n = 0;
  for (uint32_t h = 0; h < 0x7C00u; h++) {
    float a = weft__f16_to_f32((uint16_t)h), b = weft__f16_to_f32((uint16_t)(h + 1));
    uint32_t mid = kt_f32_bits((float)(((double)a + (double)b) / 2)); /* exact: two float16s */
    for (int d = -1; d <= 1; d++) {
      in[n++] = kt_f32_from_bits(mid + (uint32_t)d);
      in[n++] = kt_f32_from_bits((mid + (uint32_t)d) ^ 0x80000000u);
    }
    if (n + 6 > BATCH || h + 1 == 0x7C00u) {
      bad += check_batch(n);
      n = 0;
    }
  }
  CHECK(bad == 0);
}

/* every float16 pattern to float32 on both backends, and back */
static void test_all_halves(void) {
  static uint16_t all[65536], back[65536];
  static float wide[65536];
  for (uint32_t h = 0; h < 65536; h++) all[h] = (uint16_t)h;
  for (int b = 0; b < KT_NBACKENDS; b++) {
    const weft_kernels* k = kt_backend(b);
    int bad = 0;
    k->f16_f32_cvt(65531, all, wide); /* a tail of 5 */
    k->f16_f32_cvt(5, all + 65531, wide + 65531);
    k->f32_f16_cvt(65536, wide, back);
    for (uint32_t h = 0; h < 65536; h++) {
      float want = weft__f16_to_f32((uint16_t)h);
      bool nan = (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu);
      uint16_t round = nan ? (uint16_t)((h & 0x8000u) | 0x7E00u) : (uint16_t)h;
      if (kt_f32_bits(wide[h]) != kt_f32_bits(want) || back[h] != round) {
        if (shown++ < 6)
          fprintf(stderr, "%s: f16 0x%04X -> 0x%08X (want 0x%08X) -> 0x%04X\n", k->isa, h, kt_f32_bits(wide[h]),
                  kt_f32_bits(want), back[h]);
        bad++;
      }
    }
    CHECK(bad == 0);
  }
}

/* copy_ float32 -> float16 -> float32 on 2 threads: the kernels' chunks */
static void test_threads(void) {
  const int64_t n = 1 << 20;
  weft_tensor* f = weft_empty(&n, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* h = weft_empty(&n, 1, WEFT_FLOAT16, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* g = weft_empty(&n, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  CHECK(f && h && g);
  float* fd = weft_tensor_data_ptr(f);
  for (int64_t i = 0; i < n; i++) fd[i] = kt_f32_from_bits((uint32_t)i * 4099u);
  int threads = weft_get_num_threads();
  weft_set_num_threads(2);
  CHECK(weft_copy_(h, f) == WEFT_OK && weft_copy_(g, h) == WEFT_OK);
  weft_set_num_threads(threads);
  const uint16_t* hd = weft_tensor_data_ptr(h);
  const float* gd = weft_tensor_data_ptr(g);
  int bad = 0;
  for (int64_t i = 0; i < n; i++)
    bad += hd[i] != weft__f32_to_f16(fd[i]) || kt_f32_bits(gd[i]) != kt_f32_bits(weft__f16_to_f32(hd[i]));
  CHECK(bad == 0);
  weft_tensor_release(f);
  weft_tensor_release(h);
  weft_tensor_release(g);
}

int main(void) {
  test_dense();
  test_windows();
  test_ties();
  test_all_halves();
  test_threads();
  TEST_REPORT();
}
