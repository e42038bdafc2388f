/* copy_ on the iterator (PyTorch's Copy.cpp copy_impl + cpu/CopyKernel.cpp).
 *
 * The iterator broadcasts src to dst, checks overlaps and picks the layout;
 * the loop2d below picks one inner kernel per for_each from the iterator's
 * strides (weft_iter_loop_kind, the same answer explain() gives):
 *   vectorized        contiguous rows: memcpy, or a dtype conversion
 *   scalar-broadcast  src stride 0: convert one value, fill the row
 *   transpose         the inner 2-D block is a transpose: blocked transpose
 *   strided           anything else
 * The kernels sit behind the copy_kernels table so SIMD versions replace
 * the plain C ones in one place. */
#include <string.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "iter/copy_iter.h"
#include "weft/iter.h"

/* ---- plain C kernels: counts in elements, strides in bytes ---- */

typedef struct {
  void (*contig)(size_t n, const char* x, char* y, size_t es);
  void (*fill)(size_t n, const char* value, char* y, size_t es);
  void (*strided)(size_t n, const char* x, int64_t xs, char* y, int64_t ys, size_t es);
  /* in: h rows of w elements, row stride in_stride; out: w rows of h. */
  void (*transpose)(const char* in, char* out, int64_t in_stride, int64_t out_stride, size_t w,
                    size_t h, size_t es);
  void (*convert)(size_t n, const char* x, int64_t xs, weft_dtype xt, char* y, int64_t ys, weft_dtype yt);
} copy_kernels;

static void plain_contig(size_t n, const char* x, char* y, size_t es) { memmove(y, x, n * es); }

static void plain_fill(size_t n, const char* value, char* y, size_t es) {
  switch (es) {
    case 1: memset(y, (unsigned char)value[0], n); return;
#define FILL(T)                                   \
  {                                               \
    T v;                                          \
    memcpy(&v, value, sizeof v);                  \
    for (size_t i = 0; i < n; i++) ((T*)y)[i] = v; \
    return;                                       \
  }
    case 2: FILL(uint16_t)
    case 4: FILL(uint32_t)
    case 8: FILL(uint64_t)
#undef FILL
  }
}

static void plain_strided(size_t n, const char* x, int64_t xs, char* y, int64_t ys, size_t es) {
  switch (es) {
#define STRIDED(T)                                                                  \
  for (size_t i = 0; i < n; i++) *(T*)(y + (int64_t)i * ys) = *(const T*)(x + (int64_t)i * xs); \
  return;
    case 1: STRIDED(uint8_t)
    case 2: STRIDED(uint16_t)
    case 4: STRIDED(uint32_t)
    case 8: STRIDED(uint64_t)
#undef STRIDED
  }
}

enum { TILE = 32 };

/* Cache-blocked: TILE x TILE tiles, each read by rows and written by rows. */
static void plain_transpose(const char* in, char* out, int64_t in_stride, int64_t out_stride,
                            size_t w, size_t h, size_t es) {
  for (size_t r0 = 0; r0 < h; r0 += TILE) {
    size_t r1 = r0 + TILE < h ? r0 + TILE : h;
    for (size_t c0 = 0; c0 < w; c0 += TILE) {
      size_t c1 = c0 + TILE < w ? c0 + TILE : w;
      for (size_t c = c0; c < c1; c++) {
        plain_strided(r1 - r0, in + (int64_t)r0 * in_stride + (int64_t)(c * es), in_stride,
                      out + (int64_t)c * out_stride + (int64_t)(r0 * es), (int64_t)es, es);
      }
    }
  }
}

static void plain_convert(size_t n, const char* x, int64_t xs, weft_dtype xt, char* y, int64_t ys,
                          weft_dtype yt) {
  for (size_t i = 0; i < n; i++) {
    weft__store(y + (int64_t)i * ys, yt, weft__load(x + (int64_t)i * xs, xt));
  }
}

static const copy_kernels k_plain = {plain_contig, plain_fill, plain_strided, plain_transpose,
                                     plain_convert};

/* ---- loop2d ---- */

typedef struct {
  const copy_kernels* k;
  weft_dtype dst_t, src_t;
  size_t es; /* dst element size */
} copy_ctx;

static void loop_vectorized(void* p, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  const copy_ctx* c = p;
  char *y = data[0], *x = data[1];
  for (int64_t j = 0; j < n1; j++, y += s[2], x += s[3]) {
    if (c->dst_t == c->src_t) c->k->contig((size_t)n0, x, y, c->es);
    else c->k->convert((size_t)n0, x, s[1], c->src_t, y, s[0], c->dst_t);
  }
}

static void loop_fill(void* p, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  const copy_ctx* c = p;
  char *y = data[0], *x = data[1];
  for (int64_t j = 0; j < n1; j++, y += s[2], x += s[3]) {
    char value[8];
    weft__store(value, c->dst_t, weft__load(x, c->src_t));
    c->k->fill((size_t)n0, value, y, c->es);
  }
}

static void loop_transpose(void* p, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  const copy_ctx* c = p;
  /* in: n0 rows (stride s[1]) of n1 elements; out: n1 rows (stride s[2]) of n0 */
  c->k->transpose(data[1], data[0], s[1], s[2], (size_t)n1, (size_t)n0, c->es);
}

static void loop_strided(void* p, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  const copy_ctx* c = p;
  char *y = data[0], *x = data[1];
  for (int64_t j = 0; j < n1; j++, y += s[2], x += s[3]) {
    if (c->dst_t == c->src_t) c->k->strided((size_t)n0, x, s[1], y, s[0], c->es);
    else c->k->convert((size_t)n0, x, s[1], c->src_t, y, s[0], c->dst_t);
  }
}

static weft_loop2d_fn pick_loop(weft_loop_kind k) {
  switch (k) {
    case WEFT_LOOP_VECTORIZED: return loop_vectorized;
    case WEFT_LOOP_SCALAR_BROADCAST: return loop_fill;
    case WEFT_LOOP_TRANSPOSE: return loop_transpose;
    default: return loop_strided;
  }
}

/* ---- copy_ ---- */

/* Same storage, offset, layout and dtype: nothing to do (copy_impl's is_same_data). */
static bool is_same_data(const weft_tensor* a, const weft_tensor* b) {
  if (a->storage != b->storage || a->storage_offset != b->storage_offset || a->dtype != b->dtype ||
      a->ndim != b->ndim)
    return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->sizes[d] != b->sizes[d] || a->strides[d] != b->strides[d]) return false;
  return true;
}

weft_status weft__copy_iter_build(weft_tensor* dst, const weft_tensor* src, weft_iter* it) {
  weft_iter_config c = weft_iter_config_init();
  weft_iter_config_set_op_name(&c, "copy_");
  weft_iter_config_add_output(&c, dst);
  weft_iter_config_add_input(&c, src);
  weft_iter_config_resize_outputs(&c, false);
  weft_iter_config_check_all_same_dtype(&c, false);
  weft_iter_config_check_all_same_device(&c, false);
  return weft_iter_build(&c, it);
}

weft_status weft__copy_iter(weft_tensor* dst, const weft_tensor* src) {
  if (dst == src) return WEFT_OK;
  if (src->device == WEFT_DEVICE_META && dst->device != WEFT_DEVICE_META) {
    return weft__error(WEFT_NOT_IMPLEMENTED, "copy_: Cannot copy out of meta tensor; no data!");
  }
  if (dst->device != WEFT_DEVICE_META && is_same_data(dst, src)) return WEFT_OK;
  weft_iter it;
  weft_status s = weft__copy_iter_build(dst, src, &it);
  if (s != WEFT_OK) return s;
  copy_ctx ctx = {&k_plain, it.ops[0].dtype, it.ops[1].dtype, weft_dtype_size(it.ops[0].dtype)};
  s = weft_iter_for_each(&it, pick_loop(weft_iter_loop_kind(&it)), &ctx, WEFT_GRAIN_SIZE);
  weft_iter_destroy(&it);
  return s;
}
