/* float16 / bfloat16 conversions bit for bit against PyTorch 1.13
 * (tests/c/half_cases.inc, made by tests/fixtures/half/gen_half.py): every
 * float16 and bfloat16 pattern to float32, float32 and float64 cases of every
 * class to both, through base/half.h, through each backend's cast kernels
 * (SIMD, scalar, the generic reference table, the strided table) and
 * through copy_ (kernel rows and the broadcast fill). The pairs PyTorch
 * composes (to float64: the float32 result widened; float16 <-> bfloat16:
 * through float32) are checked against that composition, which gen_half.py
 * asserts on PyTorch. */
#include <stdlib.h>

#include "base/half.h"
#include "kernel_test_util.h"
#include "kernels/kernels.h"
#include "test.h"
#include "weft/copy.h"
#include "weft/tensor.h"

typedef struct {
  uint32_t count, first, step;
} half_run;
typedef struct {
  uint32_t x;
  uint16_t f16, bf16;
} half_f32_case;
typedef struct {
  uint64_t x;
  uint16_t f16, bf16;
} half_f64_case;

#include "half_cases.inc"

#define NF32 (sizeof half_f32_cases / sizeof half_f32_cases[0])
#define NF64 (sizeof half_f64_cases / sizeof half_f64_cases[0])
#define NRUNS(t) (sizeof(t) / sizeof(t)[0])

static uint16_t all16[65536];
static uint32_t f16_f32_want[65536], bf16_f32_want[65536];
static uint64_t f16_f64_want[65536], bf16_f64_want[65536];
static uint16_t f16_bf16_want[65536], bf16_f16_want[65536];
static float f32_in[NF32];
static double f64_in[NF64];
static uint16_t f32_f16_want[NF32], f32_bf16_want[NF32], f64_f16_want[NF64], f64_bf16_want[NF64];

/* Each check counts its mismatches and prints the first few; `shown` is
 * reset per check. */
static int shown;
static int report(const char* what, size_t i, uint64_t in, uint64_t got, uint64_t want) {
  if (shown++ < 4)
    fprintf(stderr, "%s: case %zu, in 0x%llX: got 0x%llX, PyTorch 0x%llX\n", what, i, (unsigned long long)in,
            (unsigned long long)got, (unsigned long long)want);
  return 1;
}

/* one CHECK per group of comparisons, with its mismatch count */
#define CHECK_NONE_BAD(bad, what)                                      \
  do {                                                                 \
    if (bad) fprintf(stderr, "%s: %d mismatches\n", (what), (bad));   \
    CHECK((bad) == 0);                                                 \
    shown = 0;                                                         \
  } while (0)

static void expand_runs(const half_run* r, size_t nr, uint32_t* out) {
  size_t n = 0;
  for (size_t k = 0; k < nr; k++)
    for (uint32_t i = 0, v = r[k].first; i < r[k].count && n < 65536; i++, v += r[k].step) out[n++] = v;
  CHECK(n == 65536);
}

/* float32 bits widened to float64 as C++ does on every PyTorch target: exact,
 * a NaN quiet with its float32 payload on top */
static uint64_t widen_bits(uint32_t u) {
  uint64_t sign = (uint64_t)(u & 0x80000000u) << 32;
  if ((u & 0x7fffffffu) > 0x7f800000u) return sign | 0x7ff8000000000000ull | (uint64_t)(u & 0x7fffffu) << 29;
  double d = (double)weft__f32_from_bits(u);
  uint64_t b;
  memcpy(&b, &d, 8);
  return b;
}

static void setup(void) {
  expand_runs(half_f16_to_f32, NRUNS(half_f16_to_f32), f16_f32_want);
  expand_runs(half_bf16_to_f32, NRUNS(half_bf16_to_f32), bf16_f32_want);
  for (uint32_t h = 0; h < 65536; h++) {
    all16[h] = (uint16_t)h;
    f16_f64_want[h] = widen_bits(f16_f32_want[h]);
    bf16_f64_want[h] = widen_bits(bf16_f32_want[h]);
  }
  for (size_t i = 0; i < NF32; i++) {
    f32_in[i] = weft__f32_from_bits(half_f32_cases[i].x);
    f32_f16_want[i] = half_f32_cases[i].f16;
    f32_bf16_want[i] = half_f32_cases[i].bf16;
  }
  for (size_t i = 0; i < NF64; i++) {
    memcpy(&f64_in[i], &half_f64_cases[i].x, 8);
    f64_f16_want[i] = half_f64_cases[i].f16;
    f64_bf16_want[i] = half_f64_cases[i].bf16;
  }
}

/* ---- base/half.h ---- */

static void test_base(void) {
  int bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    uint32_t got = weft__f32_bits(weft__f16_to_f32((uint16_t)h));
    if (got != f16_f32_want[h]) bad += report("f16_to_f32", h, h, got, f16_f32_want[h]);
    got = weft__f32_bits(weft__bf16_to_f32((uint16_t)h));
    if (got != bf16_f32_want[h]) bad += report("bf16_to_f32", h, h, got, bf16_f32_want[h]);
  }
  CHECK_NONE_BAD(bad, "base: float16 / bfloat16 -> float32");
  bad = 0;
  for (size_t i = 0; i < NF32; i++) {
    uint16_t got = weft__f32_to_f16(f32_in[i]);
    if (got != f32_f16_want[i]) bad += report("f32_to_f16", i, half_f32_cases[i].x, got, f32_f16_want[i]);
    got = weft__f32_to_bf16(f32_in[i]);
    if (got != f32_bf16_want[i]) bad += report("f32_to_bf16", i, half_f32_cases[i].x, got, f32_bf16_want[i]);
  }
  CHECK_NONE_BAD(bad, "base: float32 -> float16 / bfloat16");
  bad = 0;
  /* float64: through float32, as every caller does */
  for (size_t i = 0; i < NF64; i++) {
    uint16_t got = weft__f32_to_f16((float)f64_in[i]);
    if (got != f64_f16_want[i]) bad += report("(float) f64 -> f16", i, half_f64_cases[i].x, got, f64_f16_want[i]);
    got = weft__f32_to_bf16((float)f64_in[i]);
    if (got != f64_bf16_want[i]) bad += report("(float) f64 -> bf16", i, half_f64_cases[i].x, got, f64_bf16_want[i]);
  }
  CHECK_NONE_BAD(bad, "base: float64 -> float16 / bfloat16");
  /* the compositions the kernel checks below rely on, from PyTorch's tables */
  for (uint32_t h = 0; h < 65536; h++) {
    f16_bf16_want[h] = weft__f32_to_bf16(weft__f32_from_bits(f16_f32_want[h]));
    bf16_f16_want[h] = weft__f32_to_f16(weft__f32_from_bits(bf16_f32_want[h]));
  }
}

/* ---- cast kernels ---- */

typedef struct {
  weft_dtype from, to;
  size_t n;
  const void* in;
  const void* want;
} pair_case;

static uint64_t load_bits(const void* p, size_t i, size_t es) {
  uint64_t v = 0;
  memcpy(&v, (const char*)p + i * es, es); /* little-endian: the low bytes */
  return v;
}

static int check_out(const char* kind, const pair_case* c, const void* got, ptrdiff_t step) {
  size_t ies = weft_dtype_size(c->from), oes = weft_dtype_size(c->to);
  int bad = 0;
  for (size_t i = 0; i < c->n; i++) {
    if (memcmp((const char*)got + (ptrdiff_t)i * step * (ptrdiff_t)oes, (const char*)c->want + i * oes, oes)) {
      char what[96];
      snprintf(what, sizeof what, "%s %s -> %s", kind, weft_dtype_name(c->from), weft_dtype_name(c->to));
      bad += report(what, i, load_bits(c->in, i, ies),
                    load_bits((const char*)got + (ptrdiff_t)i * step * (ptrdiff_t)oes, 0, oes),
                    load_bits(c->want, i, oes));
    }
  }
  return bad;
}

static void test_pair(const pair_case* c) {
  size_t ies = weft_dtype_size(c->from), oes = weft_dtype_size(c->to);
  char* got = malloc(2 * c->n * oes);
  char label[64];
  snprintf(label, sizeof label, "cast kernels %s -> %s", weft_dtype_name(c->from), weft_dtype_name(c->to));
  int bad = 0;
  for (int b = 0; b < KT_NBACKENDS; b++) {
    char kind[64];
    snprintf(kind, sizeof kind, "cast kernel (%s)", kt_backend(b)->isa);
    memset(got, 0x5A, c->n * oes);
    weft__cast_kernel(kt_backend(b), c->from, c->to)(c->n, c->in, got);
    bad += check_out(kind, c, got, 1);
    /* odd lengths: the tails go through the zero-padded buffers */
    for (size_t n = 1; n <= 9 && n <= c->n; n += 4) {
      size_t start = c->n - n;
      pair_case tail = {c->from, c->to, n, (const char*)c->in + start * ies, (const char*)c->want + start * oes};
      memset(got, 0x5A, n * oes);
      weft__cast_kernel(kt_backend(b), c->from, c->to)(n, tail.in, got);
      bad += check_out(kind, &tail, got, 1);
    }
  }
  memset(got, 0x5A, c->n * oes);
  weft__cast_ref_kernel(c->from, c->to)(c->n, c->in, got);
  bad += check_out("cast_ref kernel", c, got, 1);
  /* the strided table: every other output slot */
  memset(got, 0x5A, 2 * c->n * oes);
  weft__cast_strided_kernel(c->from, c->to)(c->n, c->in, (ptrdiff_t)ies, got, 2 * (ptrdiff_t)oes);
  bad += check_out("cast_strided kernel", c, got, 2);
  CHECK_NONE_BAD(bad, label);
  free(got);
}

static void test_kernels(void) {
  const pair_case cases[] = {
      {WEFT_FLOAT16, WEFT_FLOAT32, 65536, all16, f16_f32_want},
      {WEFT_BFLOAT16, WEFT_FLOAT32, 65536, all16, bf16_f32_want},
      {WEFT_FLOAT16, WEFT_FLOAT64, 65536, all16, f16_f64_want},
      {WEFT_BFLOAT16, WEFT_FLOAT64, 65536, all16, bf16_f64_want},
      {WEFT_FLOAT16, WEFT_BFLOAT16, 65536, all16, f16_bf16_want},
      {WEFT_BFLOAT16, WEFT_FLOAT16, 65536, all16, bf16_f16_want},
      {WEFT_FLOAT32, WEFT_FLOAT16, NF32, f32_in, f32_f16_want},
      {WEFT_FLOAT32, WEFT_BFLOAT16, NF32, f32_in, f32_bf16_want},
      {WEFT_FLOAT64, WEFT_FLOAT16, NF64, f64_in, f64_f16_want},
      {WEFT_FLOAT64, WEFT_BFLOAT16, NF64, f64_in, f64_bf16_want},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_pair(&cases[i]);
}

/* ---- copy_: the iterator's rows, and a broadcast source (one element
 * converted through core/scalar.h's load/store, then filled) ---- */

static weft_tensor* vec_of(weft_dtype t, size_t n, const void* data) {
  int64_t size = (int64_t)n;
  weft_tensor* x = weft_empty(&size, 1, t, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  if (x && data) memcpy(weft_tensor_data_ptr(x), data, n * weft_dtype_size(t));
  return x;
}

static void test_copy(const pair_case* c, size_t every) {
  size_t ies = weft_dtype_size(c->from), oes = weft_dtype_size(c->to);
  char label[64];
  snprintf(label, sizeof label, "copy_ %s -> %s", weft_dtype_name(c->from), weft_dtype_name(c->to));
  weft_tensor* src = vec_of(c->from, c->n, c->in);
  weft_tensor* dst = vec_of(c->to, c->n, NULL);
  CHECK(src && dst && weft_copy_(dst, src) == WEFT_OK);
  int bad = check_out("copy_", c, weft_tensor_data_ptr(dst), 1);
  /* broadcast: a 0-dim source into 3 elements */
  int64_t three = 3;
  weft_tensor* d3 = weft_empty(&three, 1, c->to, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  for (size_t i = 0; i < c->n; i += every) {
    weft_tensor* s0 = weft_empty(NULL, 0, c->from, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
    memcpy(weft_tensor_data_ptr(s0), (const char*)c->in + i * ies, ies);
    CHECK(weft_copy_(d3, s0) == WEFT_OK);
    for (int k = 0; k < 3; k++) {
      const char* got = (const char*)weft_tensor_data_ptr(d3) + k * oes;
      if (memcmp(got, (const char*)c->want + i * oes, oes)) {
        char what[96];
        snprintf(what, sizeof what, "broadcast copy_ %s -> %s", weft_dtype_name(c->from), weft_dtype_name(c->to));
        bad += report(what, i, load_bits(c->in, i, ies), load_bits(got, 0, oes), load_bits(c->want, i, oes));
      }
    }
    weft_tensor_release(s0);
  }
  CHECK_NONE_BAD(bad, label);
  weft_tensor_release(d3);
  weft_tensor_release(src);
  weft_tensor_release(dst);
}

static void test_copies(void) {
  /* the broadcast path converts one element per call: every pattern with
   * the exponent all ones (Inf, NaN) and a sample of the rest */
  const pair_case cases[] = {
      {WEFT_FLOAT16, WEFT_FLOAT32, 65536, all16, f16_f32_want},
      {WEFT_BFLOAT16, WEFT_FLOAT32, 65536, all16, bf16_f32_want},
      {WEFT_FLOAT16, WEFT_FLOAT64, 65536, all16, f16_f64_want},
      {WEFT_BFLOAT16, WEFT_FLOAT64, 65536, all16, bf16_f64_want},
      {WEFT_FLOAT32, WEFT_FLOAT16, NF32, f32_in, f32_f16_want},
      {WEFT_FLOAT32, WEFT_BFLOAT16, NF32, f32_in, f32_bf16_want},
      {WEFT_FLOAT64, WEFT_FLOAT16, NF64, f64_in, f64_f16_want},
      {WEFT_FLOAT64, WEFT_BFLOAT16, NF64, f64_in, f64_bf16_want},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_copy(&cases[i], 7);
  /* the broadcast path on every NaN and Inf pattern */
  static uint16_t special16[2 * 1024 + 2 * 256];
  static uint32_t sp_f16_f32[2 * 1024], sp_bf16_f32[2 * 256];
  size_t n16 = 0, nb = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    if ((h & 0x7c00u) == 0x7c00u) sp_f16_f32[n16] = f16_f32_want[h], special16[n16++] = (uint16_t)h;
  }
  uint16_t* specialb = special16 + n16;
  for (uint32_t h = 0; h < 65536; h++) {
    if ((h & 0x7f80u) == 0x7f80u) sp_bf16_f32[nb] = bf16_f32_want[h], specialb[nb++] = (uint16_t)h;
  }
  const pair_case sp[] = {
      {WEFT_FLOAT16, WEFT_FLOAT32, n16, special16, sp_f16_f32},
      {WEFT_BFLOAT16, WEFT_FLOAT32, nb, specialb, sp_bf16_f32},
  };
  for (size_t i = 0; i < 2; i++) test_copy(&sp[i], 1);
}

int main(void) {
  setup();
  test_base();
  test_kernels();
  test_copies();
  TEST_REPORT();
}
