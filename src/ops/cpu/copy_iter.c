/* copy_ on the iterator (PyTorch's Copy.cpp copy_impl + cpu/CopyKernel.cpp).
 *
 * The iterator broadcasts src to dst, checks overlaps and picks the layout;
 * the loop2d below picks one inner kernel per for_each from the iterator's
 * strides (weft_iter_loop_kind, the same answer explain() gives):
 *   vectorized        contiguous rows: memcpy, or a dtype conversion
 *   scalar-broadcast  src stride 0: convert one value, fill the row
 *   transpose         the inner 2-D block is a transpose: blocked transpose
 *   strided           anything else
 * An iterator whose coalesced form is one 2-D transpose skips for_each and
 * hands the whole matrix to the blocked transpose driver. */
#include <stddef.h>
#include <string.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "iter/iter_internal.h"
#include "kernels/kernels.h"
#include "ops/cpu/copy_iter.h"
#include "ops/cpu/transpose.h"
#include "weft/iter.h"

/* ---- kernels ----
 * src/kernels' (SIMD, typed by element size; casts per dtype pair).
 * Everything a copy_ calls is resolved once, in resolve_kernels. */

typedef void copy_contig_fn(size_t n, const void* x, void* y);
typedef void copy_strided_fn(size_t n, const void* x, ptrdiff_t xs, void* y, ptrdiff_t ys);
typedef void copy_fill_fn(size_t n, const void* value, void* y);

typedef struct {
  weft_dtype dst_t, src_t;
  size_t es; /* dst element size */
  /* rows of n elements, converting when the dtypes differ; NULL: plain_convert */
  copy_contig_fn* contig;
  copy_strided_fn* strided;
  copy_fill_fn* fill; /* dst dtype */
} copy_ctx;

static void plain_convert(size_t n, const char* x, int64_t xs, weft_dtype xt, char* y, int64_t ys,
                          weft_dtype yt) {
  for (size_t i = 0; i < n; i++) weft__store(y + (int64_t)i * ys, yt, weft__load(x + (int64_t)i * xs, xt));
}

/* A batch of transposes. Image b: in + b * in_bstride holds h rows of w
 * elements (row stride in_stride); out + b * out_bstride gets w rows of h.
 * The blocked, threaded driver of src/ops/cpu/transpose.c. */
typedef struct {
  int64_t in_stride, out_stride, in_bstride, out_bstride;
  size_t w, h, batch;
} transpose_shape;

static weft_status transpose_2d(const copy_ctx* c, const char* in, char* out, const transpose_shape* t) {
  return weft__transpose_2d_batched(weft__kernels(), c->es, in, out, (size_t)t->in_stride, (size_t)t->out_stride,
                                    t->w, t->h, t->batch, (ptrdiff_t)t->in_bstride, (ptrdiff_t)t->out_bstride);
}

static void resolve_kernels(copy_ctx* c) {
  const weft_kernels* k = weft__kernels();
  c->fill = weft__fill_kernel(k, c->es);
  if (c->dst_t == c->src_t) {
    c->contig = weft__copy_kernel(k, c->es);
    c->strided = weft__copy_strided_kernel(k, c->es);
  } else {
    c->contig = weft__cast_kernel(k, c->src_t, c->dst_t);
    c->strided = weft__cast_strided_kernel(c->src_t, c->dst_t);
  }
}

/* ---- loop2d ---- */

static void copy_row(const copy_ctx* c, size_t n, const char* x, int64_t xs, char* y, int64_t ys) {
  bool contiguous = xs == (int64_t)weft_dtype_size(c->src_t) && ys == (int64_t)c->es;
  if (contiguous && c->contig) c->contig(n, x, y);
  else if (c->strided) c->strided(n, x, xs, y, ys);
  else plain_convert(n, x, xs, c->src_t, y, ys, c->dst_t);
}

static void loop_rows(void* p, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  const copy_ctx* c = p;
  char *y = data[0], *x = data[1];
  for (int64_t j = 0; j < n1; j++, y += s[2], x += s[3]) copy_row(c, (size_t)n0, x, s[1], y, s[0]);
}

static void loop_fill(void* p, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  const copy_ctx* c = p;
  char *y = data[0], *x = data[1];
  for (int64_t j = 0; j < n1; j++, y += s[2], x += s[3]) {
    char value[8];
    /* same dtype: the bits as they are (a float16 NaN through a double lost its payload) */
    if (c->dst_t == c->src_t) memcpy(value, x, c->es);
    else weft__store(value, c->dst_t, weft__load(x, c->src_t));
    c->fill((size_t)n0, value, y);
  }
}

/* in: n0 rows (stride s[1]) of n1 elements; out: n1 rows (stride s[2]) of n0.
 * Inside a for_each chunk the driver's own parallel_for runs inline. */
static void loop_transpose(void* p, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  transpose_shape t = {s[1], s[2], 0, 0, (size_t)n1, (size_t)n0, 1};
  transpose_2d(p, data[1], data[0], &t);
}

/* A transpose whose coalesced shape is [rows', cols', batch] or [rows',
 * cols'] goes to the batched driver whole: one parallel_for over the blocks
 * of every image (NCHW -> NHWC coalesces to [C, H*W, N]). */
static bool whole_transpose(const weft_iter* it, weft_loop_kind kind, transpose_shape* t) {
  if (kind != WEFT_LOOP_TRANSPOSE || (it->ndim != 2 && it->ndim != 3)) return false;
  t->in_stride = it->ops[1].stride_bytes[0];
  t->out_stride = it->ops[0].stride_bytes[1];
  t->w = (size_t)it->shape[1];
  t->h = (size_t)it->shape[0];
  t->batch = it->ndim == 3 ? (size_t)it->shape[2] : 1;
  t->in_bstride = it->ndim == 3 ? it->ops[1].stride_bytes[2] : 0;
  t->out_bstride = it->ndim == 3 ? it->ops[0].stride_bytes[2] : 0;
  return true;
}

/* A whole-tensor transpose is cut by its driver's blocks, not by the grain. */
static int64_t copy_chunks(const weft_iter* it, weft_loop_kind kind) {
  transpose_shape t;
  if (!whole_transpose(it, kind, &t)) return weft_iter_num_chunks(it, WEFT_GRAIN_SIZE);
  int64_t grain = 1;
  int64_t blocks = weft__transpose_2d_blocks(weft_dtype_size(it->ops[0].dtype), t.w, t.h, t.batch, &grain);
  return weft__parallel_chunks(blocks, grain);
}

char* weft__copy_explain_json(weft_tensor* dst, const weft_tensor* src) {
  weft_iter it;
  if (weft__copy_iter_build(dst, src, &it) != WEFT_OK) return NULL;
  weft_loop_kind kind = weft_iter_loop_kind(&it);
  char* json = weft__iter_explain_json_ex(&it, kind, copy_chunks(&it, kind));
  weft_iter_destroy(&it);
  if (!json) weft__error(WEFT_OUT_OF_MEMORY, "explain: out of memory");
  return json;
}

static weft_status run_copy(const weft_iter* it, copy_ctx* c) {
  weft_loop_kind kind = weft_iter_loop_kind(it);
  if (weft_explaining()) return weft__explain_record(it, kind, copy_chunks(it, kind));
  resolve_kernels(c);
  transpose_shape t;
  if (whole_transpose(it, kind, &t)) return transpose_2d(c, it->ops[1].data, it->ops[0].data, &t);
  weft_loop2d_fn loop = kind == WEFT_LOOP_SCALAR_BROADCAST ? loop_fill
                        : kind == WEFT_LOOP_TRANSPOSE      ? loop_transpose
                                                           : loop_rows;
  return weft_iter_for_each(it, loop, c, WEFT_GRAIN_SIZE);
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
  copy_ctx ctx = {it.ops[0].dtype, it.ops[1].dtype, weft_dtype_size(it.ops[0].dtype), NULL, NULL, NULL};
  s = run_copy(&it, &ctx);
  weft_iter_destroy(&it);
  return s;
}
