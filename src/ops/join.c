/* Joining and splitting (issue 13): cat, stack, hstack, vstack, dstack
 * (+ out=), CPU and Meta; split (size or sizes), split_with_sizes, chunk,
 * unbind, tensor_split, composite over the view ops.
 *
 * cat follows PyTorch 1.13's meta function (TORCH_PRECOMPUTE_META_FUNC(cat)):
 * legacy empty 1-D [0] inputs are skipped for shapes and the dim but still
 * take part in type promotion and the output memory format
 * (cat_compute_output_memory_format: contiguous unless every input suggests
 * the same other format). The impl copies whole blocks when every input and
 * the output are contiguous in that format with the output's dtype
 * (src/ops/cpu/cat.c); anything else goes through copy_ into a narrowed view
 * of the output per input (TensorIterator: strides and casts).
 *
 * stack/hstack/vstack/dstack name themselves in cat's errors (the op the user
 * called), so they call cat's implementation rather than the cat operator. */
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "iter/iter_internal.h"
#include "ops/cpu/cat.h"
#include "ops/ops.h"
#include "weft/parallel.h"

/* ---- cat ---- */

/* cat_should_skip_tensor: the legacy empty tensor, a 1-D [0]. */
static bool skipped(const weft_tensor* t) { return t->ndim == 1 && t->sizes[0] == 0; }

typedef struct {
  int64_t dim;   /* wrapped */
  int64_t valid; /* first input not skipped; n when none */
  int64_t ndim;
  int64_t sizes[WEFT_MAX_DIMS];
  weft_dtype dtype;
  weft_memory_format format;
  weft_device device;
} cat_plan;

/* cat_compute_output_memory_format */
static weft_memory_format output_format(const weft_tensor* const* t, int64_t n) {
  int f = -1;
  for (int64_t i = 0; i < n; i++) {
    weft_memory_format g = weft_tensor_suggest_memory_format(t[i]);
    if (g == WEFT_CONTIGUOUS_FORMAT || (f >= 0 && (weft_memory_format)f != g)) return WEFT_CONTIGUOUS_FORMAT;
    f = (int)g;
  }
  return (weft_memory_format)f;
}

static weft_status sizes_error(const char* op, const weft_tensor* a, const weft_tensor* b, int64_t dim,
                               int64_t index) {
  if (a->ndim != b->ndim)
    return weft__error(WEFT_SHAPE_ERROR, "%s: Tensors must have same number of dimensions: got %d and %d", op,
                       a->ndim, b->ndim);
  for (int d = 0; d < a->ndim; d++) {
    if (d == dim || a->sizes[d] == b->sizes[d]) continue;
    return weft__error(WEFT_SHAPE_ERROR,
                       "%s: Sizes of tensors must match except in dimension %lld. Expected size %lld but got size "
                       "%lld for tensor number %lld in the list.",
                       op, (long long)dim, (long long)a->sizes[d], (long long)b->sizes[d], (long long)index);
  }
  return WEFT_OK;
}

/* The dim and output shape: legacy_cat_wrap_dim, then every input not
 * skipped against the first one (check_cat_shape_except_dim). */
static weft_status plan_shape(const char* op, const weft_tensor* const* t, int64_t n, int64_t dim, cat_plan* p) {
  p->valid = n;
  for (int64_t i = 0; i < n && p->valid == n; i++)
    if (!skipped(t[i])) p->valid = i;
  p->dim = dim;
  p->ndim = 1;
  p->sizes[0] = 0;
  if (p->valid == n) return WEFT_OK; /* every input is a [0]: the result is one too */
  const weft_tensor* v = t[p->valid];
  if (!weft__wrap_dim(op, dim, v->ndim, &p->dim)) return weft_last_status();
  int64_t at_dim = 0;
  for (int64_t i = 0; i < n; i++) {
    if (skipped(t[i])) continue;
    if (sizes_error(op, v, t[i], p->dim, i) != WEFT_OK) return weft_last_status();
    at_dim += t[i]->sizes[p->dim];
  }
  p->ndim = v->ndim;
  memcpy(p->sizes, v->sizes, sizeof(int64_t) * (size_t)v->ndim);
  p->sizes[p->dim] = at_dim;
  return WEFT_OK;
}

/* The meta step: checks in PyTorch's order, the shape, dtype and format. */
static weft_status plan_cat(const char* op, const weft_tensor* const* t, int64_t n, int64_t dim,
                            const weft_tensor* out, cat_plan* p) {
  if (n == 0) return weft__error(WEFT_INVALID_ARGUMENT, "%s(): expected a non-empty list of Tensors", op);
  p->dtype = t[0]->dtype;
  p->device = t[0]->device;
  for (int64_t i = 0; i < n; i++) {
    if (t[i]->ndim == 0)
      return weft__error(WEFT_INVALID_ARGUMENT, "%s: zero-dimensional tensor (at position %lld) cannot be concatenated",
                         op, (long long)i);
    if (t[i]->device != p->device)
      return weft__error(WEFT_INVALID_ARGUMENT,
                         "%s: Expected all tensors to be on the same device, but found at least two devices, %s and %s!",
                         op, weft_device_name(p->device), weft_device_name(t[i]->device));
    p->dtype = weft_promote_types(p->dtype, t[i]->dtype);
  }
  if (out && !weft_can_cast(p->dtype, out->dtype))
    return weft__error(WEFT_TYPE_ERROR, "%s(): input types can't be cast to the desired output type %s", op,
                       weft_dtype_name(out->dtype));
  if (out && out->device != p->device)
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: Expected out tensor to have device %s, but got %s instead", op,
                       weft_device_name(p->device), weft_device_name(out->device));
  if (out) p->dtype = out->dtype;
  p->format = output_format(t, n);
  return plan_shape(op, t, n, dim, p);
}

/* out= (resize_output, restrided to the format when resized), then
 * assert_no_internal_overlap and assert_no_overlap against every input. */
static weft_status prepare_out(const char* op, const weft_tensor* const* t, int64_t n, const cat_plan* p,
                               weft_tensor* out) {
  if (out->ndim != p->ndim || memcmp(out->sizes, p->sizes, sizeof(int64_t) * (size_t)p->ndim) != 0) {
    int64_t strides[WEFT_MAX_DIMS];
    weft__strides_for_format(p->sizes, p->ndim, p->format, strides);
    if (weft__tensor_resize_(out, p->sizes, strides, p->ndim, op) != WEFT_OK) return weft_last_status();
  }
  if (p->valid == n) return WEFT_OK;
  if (weft__has_internal_overlap(out))
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: unsupported operation: more than one element of the written-to tensor refers to a "
                       "single memory location. Please clone() the tensor before performing the operation.",
                       op);
  for (int64_t i = 0; i < n; i++) {
    weft__overlap o = weft__mem_overlap(out, t[i]);
    if (o == WEFT__OVERLAP_FULL || o == WEFT__OVERLAP_PARTIAL)
      return weft__error(WEFT_INVALID_ARGUMENT,
                         "%s: unsupported operation: some elements of the input tensor and the written-to tensor "
                         "refer to a single memory location. Please clone() the tensor before performing the "
                         "operation.",
                         op);
  }
  return WEFT_OK;
}

/* The dims of a format from the outermost in memory to the innermost. */
static void dims_in_memory_order(weft_memory_format f, int64_t ndim, int64_t* order) {
  for (int64_t d = 0; d < ndim; d++) order[d] = d;
  if (f == WEFT_CONTIGUOUS_FORMAT || ndim < 3) return;
  for (int64_t d = 1; d < ndim - 1; d++) order[d] = d + 1; /* N, spatial..., C */
  order[ndim - 1] = 1;
}

/* Every input (skipped ones aside) and out laid out alike: contiguous in the
 * output's format, out's dtype. */
static bool blocks_apply(const weft_tensor* const* t, int64_t n, const cat_plan* p, const weft_tensor* out) {
  /* blocks are host memcpys: on the webgpu device each slice is its copy_ */
  if (out->device == WEFT_DEVICE_WEBGPU || !weft_tensor_is_contiguous(out, p->format)) return false;
  for (int64_t i = 0; i < n; i++)
    if (!skipped(t[i]) && (t[i]->dtype != out->dtype || !weft_tensor_is_contiguous(t[i], p->format))) return false;
  return true;
}

/* Rows: the product of the sizes outside dim in memory order. */
static int64_t block_rows(const cat_plan* p) {
  int64_t order[WEFT_MAX_DIMS], rows = 1;
  dims_in_memory_order(p->format, p->ndim, order);
  for (int64_t k = 0; order[k] != p->dim; k++) rows *= p->sizes[order[k]];
  return rows;
}

static weft_status explain_cat(const char* op, const cat_plan* p, int64_t n, bool blocks) {
  weft__strbuf b = {0};
  weft__strbuf_put(&b, "{\"op\":\"%s\",\"kind\":\"cat\",\"path\":\"%s\",\"memoryFormat\":\"%s\",\"dtype\":\"%s\",", op,
                   blocks ? "blocks" : "copy", weft_memory_format_name(p->format), weft_dtype_name(p->dtype));
  weft__strbuf_put(&b, "\"dim\":%lld,\"inputs\":%lld,\"threads\":%d}", (long long)p->dim, (long long)n,
                   weft_get_num_threads());
  return weft__explain_record_json(weft__strbuf_finish(&b, op));
}

static weft_status copy_blocks(const weft_tensor* const* t, int64_t n, const cat_plan* p, weft_tensor* out) {
  const void* small_src[16];
  size_t small_bytes[16];
  const void** src = n <= 16 ? small_src : malloc(sizeof(void*) * (size_t)n);
  size_t* bytes = n <= 16 ? small_bytes : malloc(sizeof(size_t) * (size_t)n);
  weft_status s = src && bytes ? WEFT_OK : weft__error(WEFT_OUT_OF_MEMORY, "cat: out of memory");
  int64_t rows = block_rows(p);
  size_t es = weft_dtype_size(out->dtype);
  for (int64_t i = 0; s == WEFT_OK && i < n; i++) {
    src[i] = weft_tensor_data_ptr((weft_tensor*)t[i]);
    bytes[i] = skipped(t[i]) || rows == 0 ? 0 : (size_t)(t[i]->numel / rows) * es;
  }
  if (s == WEFT_OK) s = weft__cat_blocks(weft_tensor_data_ptr(out), src, bytes, n, rows);
  if (src != small_src) free(src);
  if (bytes != small_bytes) free(bytes);
  return s;
}

/* Strided or mixed inputs: copy_ into out's slice of each (casts included). */
static weft_status copy_slices(const weft_tensor* const* t, int64_t n, const cat_plan* p, weft_tensor* out) {
  int64_t at = 0;
  for (int64_t i = 0; i < n; i++) {
    if (skipped(t[i])) continue;
    int64_t len = t[i]->sizes[p->dim];
    weft_tensor* v = weft_narrow(out, p->dim, at, len);
    weft_status s = v ? weft_copy_(v, t[i]) : weft_last_status();
    weft_tensor_release(v);
    if (s != WEFT_OK) return s;
    at += len;
  }
  return WEFT_OK;
}

static weft_status fill(const char* op, const weft_tensor* const* t, int64_t n, const cat_plan* p, weft_tensor* out) {
  if (p->valid == n) return weft_explaining() ? explain_cat(op, p, n, true) : WEFT_OK;
  bool blocks = blocks_apply(t, n, p, out);
  if (weft_explaining() && blocks) return explain_cat(op, p, n, true);
  if (out->device == WEFT_DEVICE_META || out->numel == 0) return WEFT_OK;
  return blocks ? copy_blocks(t, n, p, out) : copy_slices(t, n, p, out);
}

/* cat of t into out, or into a new tensor when out is NULL; op names the errors. */
static weft_tensor* cat_named(const char* op, const weft_tensor* const* t, int64_t n, int64_t dim, weft_tensor* out) {
  cat_plan p;
  if (plan_cat(op, t, n, dim, out, &p) != WEFT_OK) return NULL;
  weft_tensor* r;
  if (out) {
    if (prepare_out(op, t, n, &p, out) != WEFT_OK) return NULL;
    r = weft_tensor_retain(out);
  } else {
    int64_t strides[WEFT_MAX_DIMS];
    weft__strides_for_format(p.sizes, p.ndim, p.format, strides);
    r = weft__tensor_alloc(op, p.sizes, strides, p.ndim, p.dtype, p.device);
    if (!r) return NULL;
  }
  if (fill(op, t, n, &p, r) != WEFT_OK) {
    weft_tensor_release(r);
    return NULL;
  }
  return r;
}

static weft_tensor* cat_kernel(const weft_tensor* const* t, int64_t n, int64_t dim) {
  return cat_named("cat", t, n, dim, NULL);
}
static weft_tensor* cat_out_kernel(const weft_tensor* const* t, int64_t n, int64_t dim, weft_tensor* out) {
  return cat_named("cat", t, n, dim, out);
}

/* ---- stack and friends: each input through a view, then cat ---- */

typedef weft_tensor* view_fn(const weft_tensor* t, int64_t arg);

/* cat_named over view(t[i], arg) for every input. */
static weft_tensor* cat_of_views(const char* op, const weft_tensor* const* t, int64_t n, view_fn* view, int64_t arg,
                                 int64_t dim, weft_tensor* out) {
  weft_tensor** v = calloc(n > 0 ? (size_t)n : 1, sizeof *v);
  if (!v) return weft__error_null(WEFT_OUT_OF_MEMORY, "%s: out of memory", op);
  weft_tensor* r = NULL;
  int64_t i = 0;
  while (i < n && (v[i] = view(t[i], arg)) != NULL) i++;
  if (i == n) r = cat_named(op, (const weft_tensor* const*)v, n, dim, out);
  for (int64_t j = 0; j < i; j++) weft_tensor_release(v[j]);
  free(v);
  return r;
}

static weft_tensor* unsqueeze_view(const weft_tensor* t, int64_t dim) { return weft_unsqueeze(t, dim); }

static weft_status check_stack_inputs(const weft_tensor* const* t, int64_t n) {
  for (int64_t i = 1; i < n; i++) {
    if (t[i]->ndim == t[0]->ndim && memcmp(t[i]->sizes, t[0]->sizes, sizeof(int64_t) * (size_t)t[0]->ndim) == 0)
      continue;
    return weft__error(WEFT_SHAPE_ERROR,
                       "stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %lld",
                       WEFT__LIST(t[0]->sizes, t[0]->ndim), WEFT__LIST(t[i]->sizes, t[i]->ndim), (long long)i);
  }
  return WEFT_OK;
}

/* PyTorch's stack: inside the shape, cat along dim then view (a cat of
 * channels_last inputs stays channels_last in memory); at the end, a cat of
 * the inputs unsqueezed there. out= always takes the unsqueezed cat. */
static weft_tensor* stack_impl(const weft_tensor* const* t, int64_t n, int64_t dim, weft_tensor* out) {
  if (n == 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "stack expects a non-empty TensorList");
  int64_t d;
  if (!weft__wrap_dim("stack", dim, t[0]->ndim + 1, &d) || check_stack_inputs(t, n) != WEFT_OK) return NULL;
  if (out || d == t[0]->ndim) return cat_of_views("stack", t, n, unsqueeze_view, d, d, out);
  weft_tensor* c = cat_named("stack", t, n, d, NULL);
  if (!c) return NULL;
  int64_t sizes[WEFT_MAX_DIMS];
  int64_t nd = t[0]->ndim;
  memcpy(sizes, t[0]->sizes, sizeof(int64_t) * (size_t)nd);
  memmove(sizes + d + 1, sizes + d, sizeof(int64_t) * (size_t)(nd - d));
  sizes[d] = n;
  weft_tensor* r = weft_view(c, sizes, nd + 1);
  weft_tensor_release(c);
  return r;
}

static weft_tensor* stack_kernel(const weft_tensor* const* t, int64_t n, int64_t dim) {
  return stack_impl(t, n, dim, NULL);
}
static weft_tensor* stack_out_kernel(const weft_tensor* const* t, int64_t n, int64_t dim, weft_tensor* out) {
  return stack_impl(t, n, dim, out);
}

/* atleast_1d / _2d / _3d: rank-raising views (reshape of a scalar,
 * unsqueezes of 1-D and 2-D inputs as PyTorch places them). */
static weft_tensor* atleast_view(const weft_tensor* t, int64_t rank) {
  static const int64_t ones[3] = {1, 1, 1};
  if (t->ndim >= rank) return weft_tensor_retain((weft_tensor*)t);
  if (t->ndim == 0) return weft_reshape(t, ones, rank);
  if (rank == 2 || t->ndim == 2) return weft_unsqueeze(t, rank == 2 ? 0 : -1); /* [n] -> [1, n]; [a, b] -> [a, b, 1] */
  weft_tensor* row = weft_unsqueeze(t, 0); /* atleast_3d of [n]: [1, n, 1] */
  weft_tensor* r = row ? weft_unsqueeze(row, -1) : NULL;
  weft_tensor_release(row);
  return r;
}

static weft_tensor* hstack_impl(const weft_tensor* const* t, int64_t n, weft_tensor* out) {
  if (n == 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "hstack expects a non-empty TensorList");
  /* 1-D inputs (after atleast_1d) join along dim 0, others along dim 1 */
  return cat_of_views("hstack", t, n, atleast_view, 1, t[0]->ndim <= 1 ? 0 : 1, out);
}
static weft_tensor* vstack_impl(const weft_tensor* const* t, int64_t n, weft_tensor* out) {
  if (n == 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "vstack expects a non-empty TensorList");
  return cat_of_views("vstack", t, n, atleast_view, 2, 0, out);
}
static weft_tensor* dstack_impl(const weft_tensor* const* t, int64_t n, weft_tensor* out) {
  if (n == 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "dstack expects a non-empty TensorList");
  return cat_of_views("dstack", t, n, atleast_view, 3, 2, out);
}

static weft_tensor* hstack_kernel(const weft_tensor* const* t, int64_t n) { return hstack_impl(t, n, NULL); }
static weft_tensor* hstack_out_kernel(const weft_tensor* const* t, int64_t n, weft_tensor* out) {
  return hstack_impl(t, n, out);
}
static weft_tensor* vstack_kernel(const weft_tensor* const* t, int64_t n) { return vstack_impl(t, n, NULL); }
static weft_tensor* vstack_out_kernel(const weft_tensor* const* t, int64_t n, weft_tensor* out) {
  return vstack_impl(t, n, out);
}
static weft_tensor* dstack_kernel(const weft_tensor* const* t, int64_t n) { return dstack_impl(t, n, NULL); }
static weft_tensor* dstack_out_kernel(const weft_tensor* const* t, int64_t n, weft_tensor* out) {
  return dstack_impl(t, n, out);
}

/* ---- the split family: views along dim ---- */

static const weft_tensor_list no_list = {NULL, 0};

/* The failed result, after the error is set: return failed(weft__error(...)). */
static weft_tensor_list failed(weft_status s) {
  (void)s;
  return no_list;
}

/* n views of self along dim (wrapped): piece i starts at start[i] with
 * length len[i] (narrow, so every piece is within the dim). */
static weft_tensor_list pieces(const weft_tensor* self, int64_t dim, int64_t n, const int64_t* start,
                               const int64_t* len) {
  weft_tensor_list r = weft_tensor_list_new(n);
  for (int64_t i = 0; r.t && i < n; i++) {
    r.t[i] = weft_narrow(self, dim, start[i], len[i]);
    if (!r.t[i]) {
      weft_tensor_list_release(r);
      return no_list;
    }
  }
  return r;
}

/* Scratch for starts and lengths: n of each. */
static int64_t* scratch2(int64_t n) {
  int64_t* p = malloc(sizeof(int64_t) * (size_t)(2 * (n > 0 ? n : 1)));
  if (!p) weft__error(WEFT_OUT_OF_MEMORY, "split: out of memory");
  return p;
}

/* Pieces of the given lengths from 0 (they sum to the dim's size). */
static weft_tensor_list by_lengths(const weft_tensor* self, int64_t dim, const int64_t* len, int64_t n) {
  int64_t* start = scratch2(n);
  if (!start) return no_list;
  for (int64_t i = 0, at = 0; i < n; at += len[i++]) start[i] = at;
  weft_tensor_list r = pieces(self, dim, n, start, len);
  free(start);
  return r;
}

static weft_tensor_list split_kernel(const weft_tensor* self, int64_t size, int64_t dim) {
  if (self->ndim == 0) return failed(weft__error(WEFT_INVALID_ARGUMENT, "split expects at least a 1-dimensional tensor"));
  if (size < 0)
    return failed(weft__error(WEFT_INVALID_ARGUMENT, "split expects split_size be non-negative, but got split_size=%lld",
                       (long long)size));
  int64_t d;
  if (!weft__wrap_dim("split", dim, self->ndim, &d)) return no_list;
  int64_t dim_size = self->sizes[d];
  if (size == 0 && dim_size != 0)
    return failed(weft__error(WEFT_INVALID_ARGUMENT,
                       "split: split_size can only be 0 if dimension size is 0, but got dimension size of %lld",
                       (long long)dim_size));
  /* at least one piece: a size past the dim gives the whole dim */
  int64_t n = size == 0 ? 1 : dim_size / size + (dim_size % size != 0); /* ceil without overflow */
  if (n < 1) n = 1;
  int64_t* len = scratch2(n);
  if (!len) return no_list;
  for (int64_t i = 0; i < n; i++) len[i] = i < n - 1 ? size : dim_size - size * (n - 1);
  weft_tensor_list r = by_lengths(self, d, len, n);
  free(len);
  return r;
}

static weft_tensor_list sizes_kernel(const char* op, const weft_tensor* self, const int64_t* sizes, int64_t n,
                                     int64_t dim) {
  if (self->ndim == 0) return failed(weft__error(WEFT_INVALID_ARGUMENT, "split expects at least a 1-dimensional tensor"));
  int64_t d;
  if (!weft__wrap_dim(op, dim, self->ndim, &d)) return no_list;
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++) {
    if (sizes[i] < 0)
      return failed(weft__error(WEFT_INVALID_ARGUMENT,
                         "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=%s",
                         WEFT__LIST(sizes, n)));
    sum += sizes[i];
  }
  if (sum != self->sizes[d])
    return failed(weft__error(WEFT_INVALID_ARGUMENT,
                       "split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's size at dimension "
                       "%lld), but got split_sizes=%s",
                       (long long)self->sizes[d], (long long)d, WEFT__LIST(sizes, n)));
  return by_lengths(self, d, sizes, n);
}

/* split.sizes is split_with_sizes (its autograd node, SplitWithSizesBackward0,
 * as in PyTorch); the checks first so that errors name split */
static weft_tensor_list split_sizes_kernel(const weft_tensor* self, const int64_t* sizes, int64_t n, int64_t dim) {
  if (self->ndim == 0) return failed(weft__error(WEFT_INVALID_ARGUMENT, "split expects at least a 1-dimensional tensor"));
  int64_t d;
  if (!weft__wrap_dim("split", dim, self->ndim, &d)) return no_list;
  return weft_split_with_sizes(self, sizes, n, d);
}
static weft_tensor_list split_with_sizes_kernel(const weft_tensor* self, const int64_t* sizes, int64_t n,
                                                int64_t dim) {
  return sizes_kernel("split_with_sizes", self, sizes, n, dim);
}

static weft_tensor_list chunk_kernel(const weft_tensor* self, int64_t chunks, int64_t dim) {
  if (self->ndim == 0) return failed(weft__error(WEFT_INVALID_ARGUMENT, "chunk expects at least a 1-dimensional tensor"));
  if (chunks <= 0)
    return failed(weft__error(WEFT_INVALID_ARGUMENT, "chunk expects `chunks` to be greater than 0, got: %lld",
                       (long long)chunks));
  int64_t d;
  if (!weft__wrap_dim("chunk", dim, self->ndim, &d)) return no_list;
  int64_t dim_size = self->sizes[d];
  int64_t size = dim_size / chunks + (dim_size % chunks != 0);
  /* through the split ops, whose autograd nodes chunk shows in PyTorch */
  if (size != 0 || dim_size != 0) return weft_split(self, size, d);
  /* an empty dim keeps the number of chunks: that many empty pieces */
  int64_t* len = scratch2(chunks);
  if (!len) return no_list;
  memset(len, 0, sizeof(int64_t) * (size_t)chunks);
  weft_tensor_list r = weft_split_with_sizes(self, len, chunks, d);
  free(len);
  return r;
}

static weft_tensor_list unbind_kernel(const weft_tensor* self, int64_t dim) {
  if (self->ndim == 0)
    return failed(weft__error(WEFT_INDEX_ERROR, "unbind: Dimension specified as 0 but tensor has no dimensions"));
  int64_t d;
  if (!weft__wrap_dim("unbind", dim, self->ndim, &d)) return no_list;
  weft_tensor_list r = weft_tensor_list_new(self->sizes[d]);
  for (int64_t i = 0; r.t && i < r.n; i++) {
    r.t[i] = weft_select(self, d, i);
    if (!r.t[i]) {
      weft_tensor_list_release(r);
      return no_list;
    }
  }
  return r;
}

static bool tensor_split_check(const weft_tensor* self, int64_t dim, int64_t* d) {
  if (self->ndim == 0) {
    weft__error(WEFT_INVALID_ARGUMENT,
                "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
    return false;
  }
  return weft__wrap_dim("tensor_split", dim, self->ndim, d);
}

static weft_tensor_list tensor_split_kernel(const weft_tensor* self, int64_t sections, int64_t dim) {
  int64_t d;
  if (!tensor_split_check(self, dim, &d)) return no_list;
  if (sections <= 0)
    return failed(weft__error(WEFT_INVALID_ARGUMENT, "tensor_split: number of sections must be larger than 0, got %lld",
                       (long long)sections));
  int64_t dim_size = self->sizes[d];
  int64_t* len = scratch2(sections);
  if (!len) return no_list;
  /* the first dim_size % sections pieces take one more */
  for (int64_t i = 0; i < sections; i++) len[i] = dim_size / sections + (i < dim_size % sections);
  weft_tensor_list r = by_lengths(self, d, len, sections);
  free(len);
  return r;
}

/* Python slice bounds [start, end) clamped into [0, size] (slice's rules). */
static int64_t clamp_bound(int64_t v, int64_t size) {
  if (v < 0) v += size;
  return v < 0 ? 0 : v > size ? size : v;
}

static weft_tensor_list tensor_split_indices_kernel(const weft_tensor* self, const int64_t* idx, int64_t n,
                                                    int64_t dim) {
  int64_t d;
  if (!tensor_split_check(self, dim, &d)) return no_list;
  int64_t size = self->sizes[d];
  int64_t* start = scratch2(n + 1);
  if (!start) return no_list;
  int64_t* len = start + n + 1;
  for (int64_t i = 0, from = 0; i <= n; i++) {
    int64_t b = clamp_bound(from, size), e = i < n ? clamp_bound(idx[i], size) : size;
    start[i] = b;
    len[i] = e > b ? e - b : 0;
    if (i < n) from = idx[i];
  }
  weft_tensor_list r = pieces(self, d, n + 1, start, len);
  free(start);
  return r;
}

/* tensor_split with its sections (0-dim) or indices (1-D) in an int64 tensor,
 * read from CPU memory as PyTorch does (any stride) */
static weft_tensor_list tensor_split_tensor_kernel(const weft_tensor* self, const weft_tensor* ios, int64_t dim) {
  if (ios->device != WEFT_DEVICE_CPU)
    return failed(weft__error(WEFT_INVALID_ARGUMENT,
                              "tensor_split expected tensor_indices_or_sections to be on cpu, but it's on %s",
                              weft_device_name(ios->device)));
  if (ios->dtype != WEFT_INT64)
    return failed(weft__error(WEFT_INVALID_ARGUMENT,
                              "tensor_split expected tensor_indices_or_sections to have dtype of int64, but got %s",
                              weft_dtype_name(ios->dtype)));
  if (ios->ndim > 1)
    return failed(weft__error(WEFT_INVALID_ARGUMENT,
                              "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                              "one-dimensional tensor, but got a tensor with %d dims", ios->ndim));
  const int64_t* v = weft_tensor_data_ptr(ios);
  if (ios->ndim == 0) return tensor_split_kernel(self, v[0], dim);
  int64_t n = ios->sizes[0];
  int64_t* idx = scratch2(n);
  if (!idx) return no_list;
  for (int64_t i = 0; i < n; i++) idx[i] = v[i * ios->strides[0]];
  weft_tensor_list r = tensor_split_indices_kernel(self, idx, n, dim);
  free(idx);
  return r;
}

/* cat: CPU and Meta, and CompositeExplicitAutograd for a call without
 * tensors (PyTorch's CompositeExplicitAutogradNonFunctional kernel takes the
 * empty list and reports it); the rest are composite, as in PyTorch. */
weft_status weft__join_register(void) {
  WEFT_KERNEL(cat, CPU, cat_kernel);
  WEFT_KERNEL(cat, META, cat_kernel);
  WEFT_KERNEL(cat, COMPOSITE_EXPLICIT_AUTOGRAD, cat_kernel);
  WEFT_KERNEL(cat_out, CPU, cat_out_kernel);
  WEFT_KERNEL(cat_out, META, cat_out_kernel);
  WEFT_KERNEL(cat_out, COMPOSITE_EXPLICIT_AUTOGRAD, cat_out_kernel);
  WEFT_KERNEL(cat, WEBGPU, cat_kernel); /* copy_slices: the device's copy_ per input */
  WEFT_KERNEL(cat_out, WEBGPU, cat_out_kernel);
  WEFT_KERNEL(op_stack, COMPOSITE_EXPLICIT_AUTOGRAD, stack_kernel);
  WEFT_KERNEL(op_stack_out, COMPOSITE_EXPLICIT_AUTOGRAD, stack_out_kernel);
  WEFT_KERNEL(hstack, COMPOSITE_IMPLICIT_AUTOGRAD, hstack_kernel);
  WEFT_KERNEL(hstack_out, COMPOSITE_IMPLICIT_AUTOGRAD, hstack_out_kernel);
  WEFT_KERNEL(vstack, COMPOSITE_IMPLICIT_AUTOGRAD, vstack_kernel);
  WEFT_KERNEL(vstack_out, COMPOSITE_IMPLICIT_AUTOGRAD, vstack_out_kernel);
  WEFT_KERNEL(dstack, COMPOSITE_IMPLICIT_AUTOGRAD, dstack_kernel);
  WEFT_KERNEL(dstack_out, COMPOSITE_IMPLICIT_AUTOGRAD, dstack_out_kernel);
  WEFT_KERNEL(split, COMPOSITE_EXPLICIT_AUTOGRAD, split_kernel);
  WEFT_KERNEL(split_sizes, COMPOSITE_IMPLICIT_AUTOGRAD, split_sizes_kernel);
  WEFT_KERNEL(split_with_sizes, COMPOSITE_EXPLICIT_AUTOGRAD, split_with_sizes_kernel);
  WEFT_KERNEL(chunk, COMPOSITE_IMPLICIT_AUTOGRAD, chunk_kernel);
  WEFT_KERNEL(unbind, COMPOSITE_EXPLICIT_AUTOGRAD, unbind_kernel);
  WEFT_KERNEL(tensor_split, COMPOSITE_IMPLICIT_AUTOGRAD, tensor_split_kernel);
  WEFT_KERNEL(tensor_split_indices, COMPOSITE_IMPLICIT_AUTOGRAD, tensor_split_indices_kernel);
  WEFT_KERNEL(tensor_split_tensor, COMPOSITE_IMPLICIT_AUTOGRAD, tensor_split_tensor_kernel);
  return WEFT_OK;
}
