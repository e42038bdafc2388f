/* Factories: empty, empty_strided, empty_like, full, arange, rand, randn,
 * with their kernel registrations. Allocation itself is core's
 * (weft__tensor_alloc, PyTorch's empty_strided_cpu: no dispatch); what a
 * factory adds is the layout of its memory format and the values. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "core/internal.h"
#include "core/scalar.h"
#include "iter/iter_internal.h"
#include "ops/ops.h"
#include "ops/reduce_internal.h"

/* ---- empty ---- */

weft_status weft__check_format_rank(const char* op, weft_memory_format f, int64_t ndim) {
  if (f == WEFT_CHANNELS_LAST && ndim != 4)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: required rank 4 tensor to use channels_last format", op);
  if (f == WEFT_CHANNELS_LAST_3D && ndim != 5)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: required rank 5 tensor to use channels_last_3d format", op);
  return WEFT_OK;
}

static weft_tensor* empty_impl(const int64_t* sizes, int64_t ndim, weft_dtype dtype, weft_device device,
                               weft_memory_format f) {
  if (weft_check_shape("empty", sizes, ndim) || weft__check_dtype_device("empty", dtype, device)) return NULL;
  if (weft__check_format_rank("empty", f, ndim) != WEFT_OK) return NULL;
  if (f == WEFT_PRESERVE_FORMAT || (unsigned)f >= WEFT_MEMORY_FORMAT_COUNT)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "empty: unsupported memory format %s",
                            f == WEFT_PRESERVE_FORMAT ? "Preserve" : "(invalid)");
  int64_t strides[WEFT_MAX_DIMS];
  if (!weft__strides_for_format(sizes, ndim, f, strides))
    return weft__error_null(WEFT_OVERFLOW, "empty: Stride calculation overflowed for sizes %s",
                            WEFT__LIST(sizes, ndim));
  return weft__tensor_alloc("empty", sizes, strides, ndim, dtype, device);
}

/* Dense strides keeping self's dim order (PyTorch's infer_dense_strides):
 * stable insertion sort by stride, stride-0 dims never move, equal strides
 * put the smaller size inside. */
static int stride_order_cmp(const weft_tensor* t, int d0, int d1) {
  int64_t s0 = t->strides[d0], s1 = t->strides[d1];
  if (s0 == 0 || s1 == 0) return 0;
  if (s0 != s1) return s0 < s1 ? -1 : 1;
  return t->sizes[d0] > t->sizes[d1] ? 1 : 0;
}

void weft__infer_dense_strides(const weft_tensor* t, int64_t* out) {
  int perm[WEFT_MAX_DIMS]; /* innermost first */
  int n = t->ndim;
  for (int i = 0; i < n; i++) perm[i] = n - 1 - i;
  for (int i = 1; i < n; i++) {
    int d1 = i;
    for (int d0 = i - 1; d0 >= 0; d0--) {
      int c = stride_order_cmp(t, perm[d0], perm[d1]);
      if (c > 0) {
        int tmp = perm[d0];
        perm[d0] = perm[d1];
        perm[d1] = tmp;
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  int64_t stride = 1;
  for (int i = 0; i < n; i++) {
    out[perm[i]] = stride;
    if (t->sizes[perm[i]] > 1) stride *= t->sizes[perm[i]];
  }
}

static weft_tensor* empty_like_impl(const weft_tensor* self, weft_dtype dtype, weft_memory_format f) {
  /* checked here so the error names empty_like, not the empty it calls */
  if (weft__check_format_rank("empty_like", f, self->ndim) != WEFT_OK) return NULL;
  if (f != WEFT_PRESERVE_FORMAT) return weft_empty(self->sizes, self->ndim, dtype, self->device, f);
  if (self->is_non_overlapping_and_dense)
    return weft_empty_strided(self->sizes, self->strides, self->ndim, dtype, self->device);
  int64_t strides[WEFT_MAX_DIMS];
  weft__infer_dense_strides(self, strides);
  return weft_empty_strided(self->sizes, strides, self->ndim, dtype, self->device);
}

/* Walk every element of t in logical (row-major) order. */
typedef void (*element_fn)(void* ctx, char* p, int64_t linear);

static void for_each_element(const weft_tensor* t, element_fn fn, void* ctx) {
  char* base = weft_tensor_data_ptr(t);
  if (!base || t->numel == 0) return;
  int64_t esize = (int64_t)weft_dtype_size(t->dtype);
  int64_t idx[WEFT_MAX_DIMS] = {0};
  char* p = base;
  for (int64_t n = 0; n < t->numel; n++) {
    fn(ctx, p, n);
    for (int64_t d = t->ndim - 1; d >= 0; d--) {
      if (++idx[d] < t->sizes[d]) {
        p += t->strides[d] * esize;
        break;
      }
      p -= t->strides[d] * esize * (t->sizes[d] - 1);
      idx[d] = 0;
    }
  }
}

static weft_tensor* full_impl(const int64_t* sizes, int64_t ndim, double value, weft_dtype dtype,
                       weft_device device) {
  weft_tensor* t = weft_empty(sizes, ndim, dtype, device, WEFT_CONTIGUOUS_FORMAT);
  if (t && weft_fill_(t, value) != WEFT_OK) { /* a value the dtype cannot hold: PyTorch's overflow error */
    weft__error_rename("fill_", "full");
    weft_tensor_release(t);
    return NULL;
  }
  return t;
}

typedef struct {
  weft_dtype dtype;
  bool integral;
  int64_t istart, istep;
  double start, step;
} arange_ctx;

static void arange_one(void* ctx, char* p, int64_t i) {
  arange_ctx* c = ctx;
  weft__value v = {0, 0, 0.0};
  if (c->integral) {
    v.i = (int64_t)((uint64_t)c->istart + (uint64_t)c->istep * (uint64_t)i);
  } else {
    v.is_float = 1;
    v.f = c->start + c->step * (double)i;
  }
  weft__store(p, c->dtype, v);
}

static weft_tensor* arange_impl(double start, double end, double step, weft_dtype dtype, weft_device device) {
  if (!isfinite(start) || !isfinite(end))
    return weft__error_null(WEFT_INVALID_ARGUMENT, "arange: unsupported range: %g -> %g", start, end);
  if (step == 0 || isnan(step))
    return weft__error_null(WEFT_INVALID_ARGUMENT, "arange: step must be nonzero");
  if (!((step > 0 && end >= start) || (step < 0 && end <= start)))
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "arange: upper bound and larger bound inconsistent with step sign");
  if (dtype == WEFT_BOOL)
    return weft__error_null(WEFT_TYPE_ERROR, "arange: \"arange_cpu\" not implemented for 'bool'");
  double n = ceil((end - start) / step);
  if (!(n >= 0 && n < 9.2e18))
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "arange: invalid size, possible overflow? (start %g, end %g, step %g)", start,
                            end, step);
  int64_t size = (int64_t)n;
  weft_tensor* t = weft_empty(&size, 1, dtype, device, WEFT_CONTIGUOUS_FORMAT);
  if (!t) return NULL;
  /* saturating: a float arange from 1e300 must not convert it to int64 (UB) */
  arange_ctx c = {dtype, weft_dtype_is_integral(dtype, false), weft__f64_to_i64_sat(start), weft__f64_to_i64_sat(step),
                  start, step};
  for_each_element(t, arange_one, &c);
  return t;
}

/* ---- random numbers: mt19937, as PyTorch's CPU generator ---- */

typedef struct {
  uint32_t state[624];
  int next;
  bool has_next_normal;
  double next_normal;
} mt19937;

static mt19937 gen;
static bool gen_seeded;
static pthread_mutex_t gen_lock = PTHREAD_MUTEX_INITIALIZER;

static void mt_seed(mt19937* g, uint64_t seed) {
  g->state[0] = (uint32_t)(seed & 0xffffffffu);
  for (int i = 1; i < 624; i++)
    g->state[i] = 1812433253u * (g->state[i - 1] ^ (g->state[i - 1] >> 30)) + (uint32_t)i;
  g->next = 624;
  g->has_next_normal = false;
}

static uint32_t mt_next(mt19937* g) {
  if (g->next >= 624) {
    for (int i = 0; i < 624; i++) {
      uint32_t y = (g->state[i] & 0x80000000u) | (g->state[(i + 1) % 624] & 0x7fffffffu);
      g->state[i] = g->state[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    g->next = 0;
  }
  uint32_t y = g->state[g->next++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

static uint64_t mt_next64(mt19937* g) {
  uint64_t hi = mt_next(g), lo = mt_next(g);
  return (hi << 32) | lo;
}

/* PyTorch's default seed when the user never called manual_seed. */
static void ensure_seeded(void) {
  if (!gen_seeded) {
    mt_seed(&gen, 67280421310721ull);
    gen_seeded = true;
  }
}

void weft_manual_seed(uint64_t seed) {
  pthread_mutex_lock(&gen_lock);
  mt_seed(&gen, seed);
  gen_seeded = true;
  pthread_mutex_unlock(&gen_lock);
}

/* uniform_real_distribution: keep the dtype's mantissa digits of one draw */
static double uniform01(weft_dtype dtype) {
  switch (dtype) {
    case WEFT_FLOAT64: return (double)(mt_next64(&gen) & ((1ull << 53) - 1)) * 0x1p-53;
    case WEFT_FLOAT16: return (double)(mt_next(&gen) & ((1u << 11) - 1)) * 0x1p-11;
    case WEFT_BFLOAT16: return (double)(mt_next(&gen) & ((1u << 8) - 1)) * 0x1p-8;
    default: return (double)(mt_next(&gen) & ((1u << 24) - 1)) * 0x1p-24;
  }
}

static void rand_one(void* ctx, char* p, int64_t i) {
  (void)i;
  weft_dtype dtype = *(weft_dtype*)ctx;
  weft__store(p, dtype, weft__value_from_double(uniform01(dtype)));
}

static weft_tensor* random_tensor(const char* op, const int64_t* sizes, int64_t ndim, weft_dtype dtype,
                                  weft_device device) {
  if (weft_dtype_is_valid((int)dtype) && !weft_dtype_is_floating(dtype))
    return weft__error_null(WEFT_TYPE_ERROR, "%s: expected a floating point dtype, got %s", op,
                            weft_dtype_name(dtype));
  return weft_empty(sizes, ndim, dtype, device, WEFT_CONTIGUOUS_FORMAT);
}

static weft_tensor* rand_impl(const int64_t* sizes, int64_t ndim, weft_dtype dtype, weft_device device) {
  weft_tensor* t = random_tensor("rand", sizes, ndim, dtype, device);
  if (!t) return NULL;
  pthread_mutex_lock(&gen_lock);
  ensure_seeded();
  for_each_element(t, rand_one, &dtype);
  pthread_mutex_unlock(&gen_lock);
  return t;
}

/* PyTorch's normal_fill for contiguous float32 with >= 16 elements: uniforms
 * first, then Box-Muller over blocks of 16 (the tail block recomputed). */
static void normal_fill_16(float* data) {
  for (int j = 0; j < 8; j++) {
    float u1 = 1 - data[j];
    float u2 = data[j + 8];
    float radius = sqrtf(-2 * logf(u1));
    float theta = 2.0f * (float)M_PI * u2;
    data[j] = radius * cosf(theta);
    data[j + 8] = radius * sinf(theta);
  }
}

static void normal_fill_f32(float* data, int64_t n) {
  for (int64_t i = 0; i < n; i++) data[i] = (float)uniform01(WEFT_FLOAT32);
  for (int64_t i = 0; i + 16 <= n; i += 16) normal_fill_16(data + i);
  if (n % 16 != 0) {
    float* tail = data + n - 16;
    for (int i = 0; i < 16; i++) tail[i] = (float)uniform01(WEFT_FLOAT32);
    normal_fill_16(tail);
  }
}

/* normal_fill<double> (float64, >= 16 contiguous elements): the same, in double. */
static void normal_fill_16_f64(double* data) {
  for (int j = 0; j < 8; j++) {
    double u1 = 1 - data[j], u2 = data[j + 8];
    double radius = sqrt(-2 * log(u1)), theta = 2.0 * M_PI * u2;
    data[j] = radius * cos(theta);
    data[j + 8] = radius * sin(theta);
  }
}

static void normal_fill_f64(double* data, int64_t n) {
  for (int64_t i = 0; i < n; i++) data[i] = uniform01(WEFT_FLOAT64);
  for (int64_t i = 0; i + 16 <= n; i += 16) normal_fill_16_f64(data + i);
  if (n % 16 != 0) {
    double* tail = data + n - 16;
    for (int i = 0; i < 16; i++) tail[i] = uniform01(WEFT_FLOAT64);
    normal_fill_16_f64(tail);
  }
}

/* normal_distribution<double>: Box-Muller, the sine half kept for the next draw. */
static double normal_one(void) {
  if (gen.has_next_normal) {
    gen.has_next_normal = false;
    return gen.next_normal;
  }
  double u1 = uniform01(WEFT_FLOAT64), u2 = uniform01(WEFT_FLOAT64);
  double r = sqrt(-2.0 * log(1.0 - u2));
  double theta = 2.0 * M_PI * u1;
  gen.has_next_normal = true;
  gen.next_normal = r * sin(theta);
  return r * cos(theta);
}

static void randn_one(void* ctx, char* p, int64_t i) {
  (void)i;
  weft__store(p, *(weft_dtype*)ctx, weft__value_from_double(normal_one()));
}

static weft_tensor* randn_impl(const int64_t* sizes, int64_t ndim, weft_dtype dtype, weft_device device) {
  weft_tensor* t = random_tensor("randn", sizes, ndim, dtype, device);
  if (!t || device == WEFT_DEVICE_META) return t;
  pthread_mutex_lock(&gen_lock);
  ensure_seeded();
  /* normal_kernel: 16 or more (contiguous) float32 / float64 elements take normal_fill */
  if (dtype == WEFT_FLOAT32 && t->numel >= 16)
    normal_fill_f32(weft_tensor_data_ptr(t), t->numel);
  else if (dtype == WEFT_FLOAT64 && t->numel >= 16)
    normal_fill_f64(weft_tensor_data_ptr(t), t->numel);
  else
    for_each_element(t, randn_one, &dtype);
  pthread_mutex_unlock(&gen_lock);
  return t;
}

/* ---- linspace, logspace, eye ---- */

/* x rounded to the dtype linspace steps in: float16 / bfloat16 (c10::Half
 * arithmetic rounds each operation), float32, or double (float64 and the
 * integer dtypes). */
static double step_round(weft_dtype t, double x) {
  switch (t) {
    case WEFT_FLOAT16: return weft__f16_to_f32(weft__f32_to_f16((float)x));
    case WEFT_BFLOAT16: return weft__bf16_to_f32(weft__f32_to_bf16((float)x));
    case WEFT_FLOAT32: return (float)x;
    default: return x;
  }
}

/* PyTorch's scalar linspace: the first half counts up from start, the
 * second down from end, so both ends are exact. float32 and double use one
 * fused multiply-add (as PyTorch's x86-64 build contracts them); float16
 * and bfloat16 round the product and the sum separately. */
static double linspace_at(weft_dtype t, double start, double end, int64_t steps, int64_t i) {
  if (steps == 1) return start;
  start = step_round(t, start);
  end = step_round(t, end);
  double step = step_round(t, step_round(t, end - start) / (double)(steps - 1));
  bool up = i < steps / 2;
  double n = up ? (double)i : -(double)(steps - i - 1), base = up ? start : end;
  if (t == WEFT_FLOAT16 || t == WEFT_BFLOAT16) return step_round(t, base + step_round(t, step * n));
  if (t == WEFT_FLOAT32) return fmaf((float)step, (float)n, (float)base);
  return fma(step, n, base);
}

typedef struct {
  weft_dtype dtype;
  double start, end, base;
  int64_t steps;
  bool log;
} space_ctx;

static void space_one(void* ctx, char* p, int64_t i) {
  const space_ctx* c = ctx;
  double v = linspace_at(c->dtype, c->start, c->end, c->steps, i);
  if (c->log) v = pow(c->base, v);
  weft__store(p, c->dtype, weft_dtype_is_floating(c->dtype) ? weft__value_from_double(v)
                                                            : (weft__value){0, weft__f64_to_i64_sat(v), 0.0});
}

static weft_tensor* space_impl(const char* op, double start, double end, int64_t steps, double base, bool log,
                               weft_dtype dtype, weft_device device) {
  if (steps < 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "%s: number of steps must be non-negative", op);
  if (dtype == WEFT_BOOL)
    return weft__error_null(WEFT_TYPE_ERROR, "%s: \"%s_cpu\" not implemented for 'bool'", op, op);
  weft_tensor* t = weft_empty(&steps, 1, dtype, device, WEFT_CONTIGUOUS_FORMAT);
  if (!t) return NULL;
  /* start and end must fit the dtype (Scalar::to): fill_ says so */
  if (steps > 0 && device != WEFT_DEVICE_META && (weft_fill_(t, start) != WEFT_OK || weft_fill_(t, end) != WEFT_OK)) {
    weft_tensor_release(t);
    return NULL;
  }
  /* integer dtypes take start and end truncated first (Scalar::to<int>) */
  if (!weft_dtype_is_floating(dtype)) {
    start = trunc(start);
    end = trunc(end);
  }
  space_ctx c = {dtype, start, end, base, steps, log};
  for_each_element(t, space_one, &c);
  return t;
}

static weft_tensor* linspace_kernel(double start, double end, int64_t steps, weft_dtype dtype, weft_device device) {
  return space_impl("linspace", start, end, steps, 10.0, false, weft__dtype_or(dtype, weft_get_default_dtype()),
                    device);
}

static weft_tensor* logspace_kernel(double start, double end, int64_t steps, double base, weft_dtype dtype,
                                    weft_device device) {
  return space_impl("logspace", start, end, steps, base, true, weft__dtype_or(dtype, weft_get_default_dtype()),
                    device);
}

static weft_tensor* eye_impl(int64_t n, int64_t m, weft_dtype dtype, weft_device device) {
  if (n < 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "eye: n must be greater or equal to 0, got %lld", (long long)n);
  if (m < 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "eye: m must be greater or equal to 0, got %lld", (long long)m);
  int64_t sizes[2] = {n, m};
  weft_tensor* t = full_impl(sizes, 2, 0, dtype, device);
  if (!t || device == WEFT_DEVICE_META) return t;
  char* p = weft_tensor_data_ptr(t);
  size_t es = weft_dtype_size(dtype);
  for (int64_t i = 0; i < n && i < m; i++) weft__store(p + (size_t)(i * (m + 1)) * es, dtype, (weft__value){0, 1, 0.0});
  return t;
}

static weft_tensor* eye_kernel(int64_t n, weft_dtype dtype, weft_device device) {
  return eye_impl(n, n, weft__dtype_or(dtype, weft_get_default_dtype()), device);
}

static weft_tensor* eye_m_kernel(int64_t n, int64_t m, weft_dtype dtype, weft_device device) {
  return eye_impl(n, m, weft__dtype_or(dtype, weft_get_default_dtype()), device);
}

/* ---- the *_like factories: empty_like (preserve keeps dense strides), then values ---- */

/* op: the *_like factory called, which a bad memory format's error names */
static weft_tensor* like(const char* op, const weft_tensor* self, weft_dtype dtype, weft_memory_format f) {
  if (weft__check_format_rank(op, f, self->ndim) != WEFT_OK) return NULL;
  return weft_empty_like(self, weft__dtype_or(dtype, self->dtype), weft__format_or(f, WEFT_PRESERVE_FORMAT));
}

static weft_tensor* fill_like(const char* op, const weft_tensor* self, double v, weft_dtype dtype,
                              weft_memory_format f) {
  weft_tensor* t = like(op, self, dtype, f);
  if (t && weft_fill_(t, v) != WEFT_OK) {
    weft__error_rename("fill_", op);
    weft_tensor_release(t);
    return NULL;
  }
  return t;
}

static weft_tensor* full_like_kernel(const weft_tensor* self, double v, weft_dtype dtype, weft_memory_format f) {
  return fill_like("full_like", self, v, dtype, f);
}

static weft_tensor* zeros_like_kernel(const weft_tensor* self, weft_dtype dtype, weft_memory_format f) {
  return fill_like("zeros_like", self, 0, dtype, f);
}

static weft_tensor* ones_like_kernel(const weft_tensor* self, weft_dtype dtype, weft_memory_format f) {
  return fill_like("ones_like", self, 1, dtype, f);
}

/* ---- random fills: one draw per element in memory order, as PyTorch's
 * serial CPU kernels over a dense tensor ---- */

/* t is non-overlapping and dense: its elements are the numel from its
 * smallest address on. */
static char* dense_base(const weft_tensor* t) {
  char* p = weft_tensor_data_ptr(t);
  for (int d = 0; d < t->ndim; d++)
    if (t->strides[d] < 0) p += t->strides[d] * (t->sizes[d] - 1) * (int64_t)weft_dtype_size(t->dtype);
  return p;
}

typedef double (*draw_fn)(weft_dtype dtype);

static double draw_uniform(weft_dtype dtype) { return uniform01(dtype); }
static double draw_normal(weft_dtype dtype) {
  (void)dtype;
  return normal_one();
}

/* Fills a dense t with draws, the generator locked by the caller. */
static void fill_draws(weft_tensor* t, draw_fn draw) {
  char* p = dense_base(t);
  size_t es = weft_dtype_size(t->dtype);
  for (int64_t i = 0; i < t->numel; i++) weft__store(p + (size_t)i * es, t->dtype, weft__value_from_double(draw(t->dtype)));
}

static weft_tensor* random_like(const char* op, const weft_tensor* self, weft_dtype dtype, weft_memory_format f,
                                bool normal) {
  weft_dtype dt = weft__dtype_or(dtype, self->dtype);
  if (!weft_dtype_is_floating(dt))
    return weft__error_null(WEFT_TYPE_ERROR, "%s: \"%s\" not implemented for '%s'", op,
                            normal ? "normal_kernel_cpu" : "check_uniform_bounds", weft_dtype_name(dt));
  weft_tensor* t = like(op, self, dt, f);
  if (!t || t->device == WEFT_DEVICE_META || t->numel == 0) return t;
  pthread_mutex_lock(&gen_lock);
  ensure_seeded();
  if (normal && t->is_contiguous && t->numel >= 16 && dt == WEFT_FLOAT32)
    normal_fill_f32(weft_tensor_data_ptr(t), t->numel);
  else if (normal && t->is_contiguous && t->numel >= 16 && dt == WEFT_FLOAT64)
    normal_fill_f64(weft_tensor_data_ptr(t), t->numel);
  else
    fill_draws(t, normal ? draw_normal : draw_uniform);
  pthread_mutex_unlock(&gen_lock);
  return t;
}

static weft_tensor* rand_like_kernel(const weft_tensor* self, weft_dtype dtype, weft_memory_format f) {
  return random_like("rand_like", self, dtype, f, false);
}

static weft_tensor* randn_like_kernel(const weft_tensor* self, weft_dtype dtype, weft_memory_format f) {
  return random_like("randn_like", self, dtype, f, true);
}

/* The largest integer every value up to which the dtype holds exactly. */
static double largest_exact(weft_dtype t) {
  switch (t) {
    case WEFT_BOOL: return 1;
    case WEFT_UINT8: return 255;
    case WEFT_INT8: return 127;
    case WEFT_INT16: return 32767;
    case WEFT_INT32: return 2147483647.0;
    case WEFT_FLOAT16: return 2048;
    case WEFT_BFLOAT16: return 256;
    case WEFT_FLOAT32: return 16777216.0;
    case WEFT_FLOAT64: return 9007199254740992.0;
    default: return 9.3e18;
  }
}

/* ---- randint: random_from_to, one 32-bit draw per element (64 when the
 * range needs it) ---- */

static weft_tensor* randint_impl(int64_t low, int64_t high, const int64_t* size, int64_t n, weft_dtype dtype,
                                 weft_device device) {
  if (low >= high)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "randint: random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                            (long long)low, (long long)high);
  if (weft_dtype_is_integral(dtype, true) && dtype != WEFT_INT64) {
    double lo = dtype == WEFT_UINT8 || dtype == WEFT_BOOL ? 0 : -largest_exact(dtype) - 1;
    if ((double)low < lo || (double)low > largest_exact(dtype))
      return weft__error_null(WEFT_INVALID_ARGUMENT, "randint: from is out of bounds for %s", weft_dtype_name(dtype));
    if ((double)(high - 1) < lo || (double)(high - 1) > largest_exact(dtype))
      return weft__error_null(WEFT_INVALID_ARGUMENT, "randint: to - 1 is out of bounds for %s",
                              weft_dtype_name(dtype));
  }
  weft_tensor* t = weft_empty(size, n, dtype, device, WEFT_CONTIGUOUS_FORMAT);
  if (!t || device == WEFT_DEVICE_META) return t;
  uint64_t range = (uint64_t)high - (uint64_t)low;
  bool wide = range >= (1ull << 32) && (dtype == WEFT_INT64 || dtype == WEFT_FLOAT64 || dtype == WEFT_FLOAT32 ||
                                        dtype == WEFT_BFLOAT16);
  char* p = weft_tensor_data_ptr(t);
  size_t es = weft_dtype_size(dtype);
  pthread_mutex_lock(&gen_lock);
  ensure_seeded();
  for (int64_t i = 0; i < t->numel; i++) {
    uint64_t r = wide ? mt_next64(&gen) : mt_next(&gen);
    int64_t v = (int64_t)(r % range + (uint64_t)low);
    weft__store(p + (size_t)i * es, dtype, weft_dtype_is_floating(dtype) ? weft__value_from_double((double)v)
                                                                     : (weft__value){0, v, 0.0});
  }
  pthread_mutex_unlock(&gen_lock);
  return t;
}

static weft_tensor* randint_kernel(int64_t high, const int64_t* size, int64_t n, weft_dtype dtype, weft_device device) {
  return randint_impl(0, high, size, n, weft__dtype_or(dtype, WEFT_INT64), device);
}

static weft_tensor* randint_low_kernel(int64_t low, int64_t high, const int64_t* size, int64_t n, weft_dtype dtype,
                                       weft_device device) {
  return randint_impl(low, high, size, n, weft__dtype_or(dtype, WEFT_INT64), device);
}

/* ---- randperm: PyTorch's CPU shuffle (swap i with i + random() % (n - i)) ---- */

static weft_tensor* randperm_kernel(int64_t n, weft_dtype dtype, weft_device device) {
  dtype = weft__dtype_or(dtype, WEFT_INT64);
  if (n < 0) return weft_empty(&n, 1, dtype, device, WEFT_CONTIGUOUS_FORMAT); /* empty's error */
  if (dtype == WEFT_BOOL) return weft__error_null(WEFT_TYPE_ERROR, "randperm: \"randperm\" not implemented for 'bool'");
  if (n > 0 && (double)(n - 1) > largest_exact(dtype))
    return weft__error_null(WEFT_INVALID_ARGUMENT, "randperm: n is too large for result tensor type: '%s'",
                            weft_dtype_name(dtype));
  weft_tensor* t = weft_empty(&n, 1, dtype, device, WEFT_CONTIGUOUS_FORMAT);
  if (!t || device == WEFT_DEVICE_META || n == 0) return t;
  int64_t* v = malloc(sizeof(int64_t) * (size_t)n);
  if (!v) {
    weft_tensor_release(t);
    return weft__error_null(WEFT_OUT_OF_MEMORY, "randperm: out of memory");
  }
  for (int64_t i = 0; i < n; i++) v[i] = i;
  pthread_mutex_lock(&gen_lock);
  ensure_seeded();
  for (int64_t i = 0; i < n - 1; i++) {
    int64_t z = (int64_t)(mt_next(&gen) % (uint64_t)(n - i)), tmp = v[i];
    v[i] = v[z + i];
    v[z + i] = tmp;
  }
  pthread_mutex_unlock(&gen_lock);
  char* p = weft_tensor_data_ptr(t);
  size_t es = weft_dtype_size(dtype);
  for (int64_t i = 0; i < n; i++)
    weft__store(p + (size_t)i * es, dtype, weft_dtype_is_floating(dtype) ? weft__value_from_double((double)v[i])
                                                                     : (weft__value){0, v[i], 0.0});
  free(v);
  return t;
}

/* ---- bernoulli: one uniform per element, 1 when below p. A float64 p
 * draws a double (64 bits), other p a float (32 bits), as PyTorch's
 * bernoulli_distribution<double / float>; a scalar p always a double. ---- */

typedef struct {
  const weft_tensor* p; /* NULL: the scalar */
  double ps;
} bern_ctx;

static bool bern_draw(double p, bool wide) {
  return wide ? uniform01(WEFT_FLOAT64) < p : (float)uniform01(WEFT_FLOAT32) < (float)p;
}

/* Fills self (dense, or any layout in logical order) with draws against
 * p (broadcast to self's shape, or the scalar). */
static weft_status bernoulli_fill(const char* op, weft_tensor* self, const weft_tensor* p, double ps) {
  weft_tensor* pe = NULL;
  if (p) {
    if (!weft_dtype_is_floating(p->dtype))
      return weft__error(WEFT_TYPE_ERROR, "%s: \"bernoulli_tensor_cpu_p_\" not implemented for '%s'", op,
                         weft_dtype_name(p->dtype));
    if (self->dtype == WEFT_FLOAT16)
      return weft__error(WEFT_TYPE_ERROR, "%s: \"bernoulli_tensor_cpu_self_\" not implemented for 'float16'", op);
    pe = weft_expand(p, self->sizes, self->ndim);
    if (!pe) return weft_last_status();
  } else if (!(ps >= 0 && ps <= 1)) {
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: bernoulli_ expects p to be in [0, 1], but got p=%g", op, ps);
  }
  if (self->device == WEFT_DEVICE_META || self->numel == 0) {
    weft_tensor_release(pe);
    return WEFT_OK;
  }
  bool wide = !pe || pe->dtype == WEFT_FLOAT64;
  /* memory order for a dense self (PyTorch's iterator walks it so), else logical */
  int64_t perm[WEFT_MAX_DIMS] = {0};
  for (int d = 0; d < self->ndim; d++) perm[d] = d;
  if (self->is_non_overlapping_and_dense)
    for (int i = 1; i < self->ndim; i++) /* outermost first: larger strides first */
      for (int j = i; j > 0 && self->strides[perm[j]] > self->strides[perm[j - 1]]; j--) {
        int64_t t = perm[j];
        perm[j] = perm[j - 1];
        perm[j - 1] = t;
      }
  weft_tensor* sv = weft_permute(self, perm, self->ndim);
  weft_tensor* pv = pe ? weft_permute(pe, perm, pe->ndim) : NULL;
  weft_tensor_release(pe);
  if (!sv || (pe && !pv)) {
    weft_tensor_release(sv);
    weft_tensor_release(pv);
    return weft_last_status();
  }
  pthread_mutex_lock(&gen_lock);
  ensure_seeded();
  size_t es = weft_dtype_size(sv->dtype);
  int64_t idx[WEFT_MAX_DIMS] = {0};
  char* base = weft_tensor_data_ptr(sv);
  for (int64_t n = 0; n < sv->numel; n++) {
    int64_t off = 0;
    for (int d = 0; d < sv->ndim; d++) off += idx[d] * sv->strides[d];
    double pn = pv ? weft_tensor_get_double(pv, n) : ps;
    weft__store(base + off * (int64_t)es, sv->dtype, (weft__value){0, bern_draw(pn, wide), 0.0});
    for (int d = sv->ndim - 1; d >= 0 && ++idx[d] == sv->sizes[d]; d--) idx[d] = 0;
  }
  pthread_mutex_unlock(&gen_lock);
  weft_tensor_release(sv);
  weft_tensor_release(pv);
  return WEFT_OK;
}

static weft_tensor* bernoulli_new(const char* op, const weft_tensor* self, const weft_tensor* p, double ps) {
  weft_tensor* t = weft_empty(self->sizes, self->ndim, self->dtype, self->device, WEFT_CONTIGUOUS_FORMAT);
  if (t && bernoulli_fill(op, t, p, ps) != WEFT_OK) {
    weft_tensor_release(t);
    return NULL;
  }
  return t;
}

static weft_tensor* bernoulli_kernel(const weft_tensor* self) { return bernoulli_new("bernoulli", self, self, 0); }
static weft_tensor* bernoulli_p_kernel(const weft_tensor* self, double p) {
  return bernoulli_new("bernoulli", self, NULL, p);
}
static weft_status bernoulli_tensor__kernel(weft_tensor* self, const weft_tensor* p) {
  return bernoulli_fill("bernoulli_", self, p, 0);
}
static weft_status bernoulli_float__kernel(weft_tensor* self, double p) {
  return bernoulli_fill("bernoulli_", self, NULL, p);
}
static weft_tensor* bernoulli_out_kernel(const weft_tensor* self, weft_tensor* out) {
  weft_status s = WEFT_OK;
  if (out->ndim != self->ndim || memcmp(out->sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim) != 0) {
    int64_t strides[WEFT_MAX_DIMS];
    weft__strides_for_format(self->sizes, self->ndim, WEFT_CONTIGUOUS_FORMAT, strides);
    s = weft__tensor_resize_(out, self->sizes, strides, self->ndim, "bernoulli");
  }
  if (s == WEFT_OK) s = bernoulli_fill("bernoulli", out, self, 0);
  return s == WEFT_OK ? weft_tensor_retain(out) : NULL;
}

/* ---- multinomial ---- */

static weft_status multinomial_check(const weft_tensor* self, int64_t n_sample, bool replacement) {
  if (self->ndim < 1 || self->ndim > 2)
    return weft__error(WEFT_INVALID_ARGUMENT, "multinomial: prob_dist must be 1 or 2 dim");
  if (!weft_dtype_is_floating(self->dtype))
    return weft__error(WEFT_INVALID_ARGUMENT, "multinomial: multinomial only supports floating-point dtypes for "
                       "input, got: %s", weft_dtype_name(self->dtype));
  if (n_sample <= 0) return weft__error(WEFT_INVALID_ARGUMENT, "multinomial: cannot sample n_sample <= 0 samples");
  int64_t cats = self->sizes[self->ndim - 1];
  if (!replacement && n_sample > cats)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  if (cats > (1 << 24))
    return weft__error(WEFT_INVALID_ARGUMENT, "multinomial: number of categories cannot exceed 2^24");
  return WEFT_OK;
}

/* One row's probabilities as doubles (rounded through float unless float64). */
static void load_row(const weft_tensor* self, int64_t row, double* out) {
  int64_t cats = self->sizes[self->ndim - 1];
  int64_t s1 = self->strides[self->ndim - 1], s0 = self->ndim == 2 ? self->strides[0] : 0;
  const char* p = (const char*)weft_tensor_data_ptr(self) + row * s0 * (int64_t)weft_dtype_size(self->dtype);
  for (int64_t j = 0; j < cats; j++) out[j] = weft__load_f64(p + j * s1 * (int64_t)weft_dtype_size(self->dtype), self->dtype);
}

/* With replacement: a normalized running sum, searched with one double
 * uniform per sample (PyTorch's multinomial_with_replacement kernel). */
static weft_status sample_with_replacement(const weft_tensor* self, int64_t row, double* cum, int64_t n, int64_t* res) {
  int64_t cats = self->sizes[self->ndim - 1];
  bool dbl = self->dtype == WEFT_FLOAT64;
  load_row(self, row, cum);
  double sum = 0;
  float sumf = 0;
  for (int64_t j = 0; j < cats; j++) {
    double v = cum[j];
    if (!(v >= 0))
      return weft__error(WEFT_INVALID_ARGUMENT, "multinomial: invalid multinomial distribution (encountering "
                                                "probability entry < 0)");
    if (!isfinite(v))
      return weft__error(WEFT_INVALID_ARGUMENT, "multinomial: invalid multinomial distribution (encountering "
                                                "probability entry = infinity or NaN)");
    if (dbl) cum[j] = sum += v;
    else cum[j] = sumf += (float)v;
  }
  if (!dbl) sum = sumf;
  if (!(sum > 0))
    return weft__error(WEFT_INVALID_ARGUMENT, "multinomial: invalid multinomial distribution (sum of probabilities "
                                              "<= 0)");
  for (int64_t j = 0; j < cats; j++) cum[j] = dbl ? cum[j] / sum : (double)((float)cum[j] / sumf);
  cum[cats - 1] = 1;
  for (int64_t k = 0; k < n; k++) {
    double u = uniform01(WEFT_FLOAT64);
    int64_t lo = 0, hi = cats;
    while (hi - lo > 0) {
      int64_t mid = lo + (hi - lo) / 2;
      if (cum[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    res[k] = lo;
  }
  return WEFT_OK;
}

/* Without replacement (or one sample): the n largest p / q, q ~ Exp(1)
 * drawn for every element first (PyTorch's Gumbel-style top-k). */
static weft_status exp_scores(const weft_tensor* self, double* score) {
  int64_t rows = self->ndim == 2 ? self->sizes[0] : 1, cats = self->sizes[self->ndim - 1];
  bool dbl = self->dtype == WEFT_FLOAT64;
  double total_ok = 1;
  for (int64_t r = 0; r < rows; r++) {
    load_row(self, r, score + r * cats);
    double sum = 0;
    for (int64_t j = 0; j < cats; j++) {
      double v = score[r * cats + j];
      if (!(v >= 0) || isinf(v))
        return weft__error(WEFT_INVALID_ARGUMENT, "multinomial: probability tensor contains either `inf`, `nan` or "
                                                  "element < 0");
      sum += v;
    }
    if (sum == 0) total_ok = 0;
  }
  if (!total_ok)
    return weft__error(WEFT_INVALID_ARGUMENT, "multinomial: invalid multinomial distribution (sum of probabilities "
                                              "<= 0)");
  /* the draws fill q in self's memory order; rows are contiguous here when self is */
  bool transposed = self->ndim == 2 && self->strides[0] < self->strides[1] && rows > 1 && cats > 1;
  for (int64_t i = 0; i < rows * cats; i++) {
    int64_t at = transposed ? (i % rows) * cats + i / rows : i;
    double q = -1.0 * log(1.0 - uniform01(WEFT_FLOAT64));
    score[at] = dbl ? score[at] / q : (double)((float)score[at] / (float)q);
  }
  return WEFT_OK;
}

static void top_n(const double* score, int64_t cats, int64_t n, int64_t* res) {
  for (int64_t k = 0; k < n; k++) {
    int64_t best = -1;
    for (int64_t j = 0; j < cats; j++) {
      bool taken = false;
      for (int64_t t = 0; t < k && !taken; t++) taken = res[t] == j;
      if (!taken && (best < 0 || score[j] > score[best])) best = j;
    }
    res[k] = best;
  }
}

static weft_tensor* multinomial_impl(const weft_tensor* self, int64_t n, bool replacement, weft_tensor* out) {
  if (multinomial_check(self, n, replacement) != WEFT_OK) return NULL;
  if (out && out->dtype != WEFT_INT64)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "multinomial: multinomial expects int64 tensor out, got: %s",
                            weft_dtype_name(out->dtype));
  int64_t rows = self->ndim == 2 ? self->sizes[0] : 1, cats = self->sizes[self->ndim - 1];
  int64_t sizes[2] = {rows, n};
  bool two = self->ndim == 2;
  weft_tensor* r = weft_empty(two ? sizes : sizes + 1, two ? 2 : 1, WEFT_INT64, self->device, WEFT_CONTIGUOUS_FORMAT);
  if (!r || self->device == WEFT_DEVICE_META || r->numel == 0) goto finish;
  double* buf = malloc(sizeof(double) * (size_t)(rows * cats > 0 ? rows * cats : 1));
  if (!buf) {
    weft_tensor_release(r);
    return weft__error_null(WEFT_OUT_OF_MEMORY, "multinomial: out of memory");
  }
  int64_t* res = weft_tensor_data_ptr(r);
  weft_status s = WEFT_OK;
  pthread_mutex_lock(&gen_lock);
  ensure_seeded();
  if (!replacement || n == 1) {
    s = exp_scores(self, buf);
    for (int64_t i = 0; s == WEFT_OK && i < rows; i++) top_n(buf + i * cats, cats, n, res + i * n);
  } else {
    for (int64_t i = 0; s == WEFT_OK && i < rows; i++) s = sample_with_replacement(self, i, buf, n, res + i * n);
  }
  pthread_mutex_unlock(&gen_lock);
  free(buf);
  if (s != WEFT_OK) {
    weft_tensor_release(r);
    return NULL;
  }
finish:
  if (r && out) {
    weft_status st = weft__into_out("multinomial", r, out);
    weft_tensor_release(r);
    return st == WEFT_OK ? weft_tensor_retain(out) : NULL;
  }
  return r;
}

static weft_tensor* multinomial_kernel(const weft_tensor* self, int64_t n, bool replacement) {
  return multinomial_impl(self, n, replacement, NULL);
}
static weft_tensor* multinomial_out_kernel(const weft_tensor* self, int64_t n, bool replacement, weft_tensor* out) {
  return multinomial_impl(self, n, replacement, out);
}

/* ---- kernels: None -> defaults, lists checked ---- */

static weft_tensor* empty_kernel(const int64_t* size, int64_t n, weft_dtype dtype, weft_device device,
                                 weft_memory_format f) {
  return empty_impl(size, n, weft__dtype_or(dtype, weft_get_default_dtype()), device,
                    weft__format_or(f, WEFT_CONTIGUOUS_FORMAT));
}

static weft_tensor* empty_strided_kernel(const int64_t* size, int64_t n, const int64_t* stride, int64_t nstride,
                                         weft_dtype dtype, weft_device device) {
  if (n != nstride)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "empty_strided: mismatch in length of strides and shape (%lld vs %lld)",
                            (long long)nstride, (long long)n);
  return weft__tensor_alloc("empty_strided", size, stride, n, weft__dtype_or(dtype, weft_get_default_dtype()), device);
}

static weft_tensor* full_kernel(const int64_t* size, int64_t n, double v, weft_dtype dtype, weft_device device) {
  return full_impl(size, n, v, weft__dtype_or(dtype, weft_get_default_dtype()), device);
}

static weft_tensor* arange_kernel(double start, double end, double step, weft_dtype dtype, weft_device device) {
  return arange_impl(start, end, step, weft__dtype_or(dtype, weft_get_default_dtype()), device);
}

static weft_tensor* rand_kernel(const int64_t* size, int64_t n, weft_dtype dtype, weft_device device) {
  return rand_impl(size, n, weft__dtype_or(dtype, weft_get_default_dtype()), device);
}

static weft_tensor* randn_kernel(const int64_t* size, int64_t n, weft_dtype dtype, weft_device device) {
  return randn_impl(size, n, weft__dtype_or(dtype, weft_get_default_dtype()), device);
}

static weft_tensor* empty_like_kernel(const weft_tensor* self, weft_dtype dtype, weft_memory_format f) {
  return empty_like_impl(self, weft__dtype_or(dtype, weft_tensor_dtype(self)),
                         weft__format_or(f, WEFT_PRESERVE_FORMAT));
}

/* The public C function whose signature differs from its op's (one length
 * for both lists). */
weft_tensor* weft_empty_strided(const int64_t* sizes, const int64_t* strides, int64_t ndim, weft_dtype dtype,
                                weft_device device) {
  return weft_op_empty_strided(sizes, ndim, strides, ndim, dtype, device);
}

weft_status weft__factory_register(void) {
  /* BackendSelect (generated) redispatches to CPU or Meta; the kernels
   * serve both, since allocation knows meta storages hold no data. */
  WEFT_KERNEL(empty, CPU, empty_kernel);
  WEFT_KERNEL(empty, META, empty_kernel);
  WEFT_KERNEL(op_empty_strided, CPU, empty_strided_kernel);
  WEFT_KERNEL(op_empty_strided, META, empty_strided_kernel);
  WEFT_KERNEL(empty, WEBGPU, empty_kernel);
  WEFT_KERNEL(op_empty_strided, WEBGPU, empty_strided_kernel);
  WEFT_KERNEL(full, WEBGPU, full_kernel); /* empty + fill_, both on the device */
  WEFT_KERNEL(full, CPU, full_kernel);
  WEFT_KERNEL(full, META, full_kernel);
  WEFT_KERNEL(arange, CPU, arange_kernel);
  WEFT_KERNEL(arange, META, arange_kernel);
  WEFT_KERNEL(rand, CPU, rand_kernel);
  WEFT_KERNEL(rand, META, rand_kernel);
  WEFT_KERNEL(randn, CPU, randn_kernel);
  WEFT_KERNEL(randn, META, randn_kernel);
  WEFT_KERNEL(empty_like, COMPOSITE_EXPLICIT_AUTOGRAD, empty_like_kernel);
  WEFT_KERNEL(linspace, CPU, linspace_kernel);
  WEFT_KERNEL(linspace, META, linspace_kernel);
  WEFT_KERNEL(logspace, CPU, logspace_kernel);
  WEFT_KERNEL(logspace, META, logspace_kernel);
  WEFT_KERNEL(eye, CPU, eye_kernel);
  WEFT_KERNEL(eye, META, eye_kernel);
  WEFT_KERNEL(eye_m, CPU, eye_m_kernel);
  WEFT_KERNEL(eye_m, META, eye_m_kernel);
  WEFT_KERNEL(randint, CPU, randint_kernel);
  WEFT_KERNEL(randint, META, randint_kernel);
  WEFT_KERNEL(randint_low, CPU, randint_low_kernel);
  WEFT_KERNEL(randint_low, META, randint_low_kernel);
  WEFT_KERNEL(randperm, CPU, randperm_kernel);
  WEFT_KERNEL(randperm, META, randperm_kernel);
  WEFT_KERNEL(zeros_like, COMPOSITE_EXPLICIT_AUTOGRAD, zeros_like_kernel);
  WEFT_KERNEL(ones_like, COMPOSITE_EXPLICIT_AUTOGRAD, ones_like_kernel);
  WEFT_KERNEL(full_like, COMPOSITE_EXPLICIT_AUTOGRAD, full_like_kernel);
  WEFT_KERNEL(rand_like, COMPOSITE_EXPLICIT_AUTOGRAD, rand_like_kernel);
  WEFT_KERNEL(randn_like, COMPOSITE_EXPLICIT_AUTOGRAD, randn_like_kernel);
  WEFT_KERNEL(bernoulli, CPU, bernoulli_kernel);
  WEFT_KERNEL(bernoulli, META, bernoulli_kernel);
  WEFT_KERNEL(bernoulli_out, CPU, bernoulli_out_kernel);
  WEFT_KERNEL(bernoulli_out, META, bernoulli_out_kernel);
  WEFT_KERNEL(bernoulli_p, CPU, bernoulli_p_kernel);
  WEFT_KERNEL(bernoulli_p, META, bernoulli_p_kernel);
  WEFT_KERNEL(bernoulli_tensor_, CPU, bernoulli_tensor__kernel);
  WEFT_KERNEL(bernoulli_tensor_, META, bernoulli_tensor__kernel);
  WEFT_KERNEL(bernoulli_float_, CPU, bernoulli_float__kernel);
  WEFT_KERNEL(bernoulli_float_, META, bernoulli_float__kernel);
  WEFT_KERNEL(multinomial, CPU, multinomial_kernel);
  WEFT_KERNEL(multinomial, META, multinomial_kernel);
  WEFT_KERNEL(multinomial_out, CPU, multinomial_out_kernel);
  WEFT_KERNEL(multinomial_out, META, multinomial_out_kernel);
  return WEFT_OK;
}
