/* Factories: empty, empty_strided, empty_like, full, arange, rand, randn,
 * with their kernel registrations. Allocation itself is core's
 * (weft__tensor_alloc, PyTorch's empty_strided_cpu: no dispatch); what a
 * factory adds is the layout of its memory format and the values. */
#include <math.h>
#include <pthread.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "ops/ops.h"

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

static void infer_dense_strides(const weft_tensor* t, int64_t* out) {
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
  if (f != WEFT_PRESERVE_FORMAT) return weft_empty(self->sizes, self->ndim, dtype, self->device, f);
  if (self->is_non_overlapping_and_dense)
    return weft_empty_strided(self->sizes, self->strides, self->ndim, dtype, self->device);
  int64_t strides[WEFT_MAX_DIMS];
  infer_dense_strides(self, strides);
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
  if (dtype == WEFT_FLOAT32 && t->numel >= 16)
    normal_fill_f32(weft_tensor_data_ptr(t), t->numel);
  else
    for_each_element(t, randn_one, &dtype);
  pthread_mutex_unlock(&gen_lock);
  return t;
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
  WEFT_KERNEL(full, CPU, full_kernel);
  WEFT_KERNEL(full, META, full_kernel);
  WEFT_KERNEL(arange, CPU, arange_kernel);
  WEFT_KERNEL(arange, META, arange_kernel);
  WEFT_KERNEL(rand, CPU, rand_kernel);
  WEFT_KERNEL(rand, META, rand_kernel);
  WEFT_KERNEL(randn, CPU, randn_kernel);
  WEFT_KERNEL(randn, META, randn_kernel);
  WEFT_KERNEL(empty_like, COMPOSITE_EXPLICIT_AUTOGRAD, empty_like_kernel);
  return WEFT_OK;
}
