/* embedding, embedding_dense_backward and embedding_renorm_ (issue 24):
 * PyTorch 1.13's checks and words, dtypes named as JS names them. The
 * forward gathers whole rows (a memcpy each, threaded for big outputs; 1.13
 * runs index_select); the backward sums each row's gradients in position
 * order, one task per row, so its bits do not depend on the thread count
 * (the loops are src/ops/cpu/embedding.c's). Every index is checked before
 * anything is read or written. */
#include <string.h>

#include "core/internal.h"
#include "kernels/kernels.h"
#include "ops/cpu/embedding.h"
#include "ops/index_internal.h"
#include "ops/ops.h"
#include "weft/iter.h"

typedef const weft_tensor* T;

static bool is_meta(T t) { return t->device == WEFT_DEVICE_META; }
static bool computes(T t) { return !is_meta(t) && !weft_explaining(); }

/* checkScalarTypes(op, indices, {Long, Int}) */
static weft_status index_dtype_check(const char* op, int argn, T idx) {
  if (idx->dtype == WEFT_INT64 || idx->dtype == WEFT_INT32) return WEFT_OK;
  return weft__error(WEFT_TYPE_ERROR,
                     "Expected tensor for argument #%d 'indices' to have one of the following scalar types: int64, "
                     "int32; but got %s instead (while checking arguments for %s)",
                     argn, weft_dtype_name(idx->dtype), op);
}

static weft_status bounds_check(T idx, int64_t rows) {
  int64_t bad;
  if (!weft__index_find_bad_in(idx, 0, rows, &bad)) return WEFT_OK;
  return weft__error(WEFT_INDEX_ERROR, "index out of range in self");
}

/* ---- embedding ---- */
static weft_status gather(T w, T idx, weft_tensor* r) {
  weft_tensor* ic = weft_contiguous(idx, WEFT_CONTIGUOUS_FORMAT);
  /* rows must be contiguous for one memcpy each */
  weft_tensor* wc = w->strides[1] == 1 ? weft_tensor_retain((weft_tensor*)w) : weft_contiguous(w, WEFT_CONTIGUOUS_FORMAT);
  weft_status s = ic && wc ? WEFT_OK : weft_last_status();
  size_t es = weft_dtype_size(w->dtype);
  if (s == WEFT_OK)
    s = weft__embedding_gather(idx->numel, weft_tensor_data_ptr(ic), idx->dtype, weft_tensor_data_ptr(wc),
                               wc->strides[0] * (int64_t)es, (size_t)w->sizes[1] * es, weft_tensor_data_ptr(r));
  weft_tensor_release(ic);
  weft_tensor_release(wc);
  return s;
}

static weft_tensor* embedding_kernel(T w, T idx, int64_t padding_idx, bool scale_grad_by_freq, bool sparse) {
  (void)padding_idx, (void)scale_grad_by_freq, (void)sparse; /* they shape the gradient only */
  if (w->ndim != 2) return weft__error_null(WEFT_INVALID_ARGUMENT, "'weight' must be 2-D");
  if (index_dtype_check("embedding", 1, idx) != WEFT_OK) return NULL;
  if (!is_meta(w) && bounds_check(idx, w->sizes[0]) != WEFT_OK) return NULL;
  int64_t sizes[WEFT_MAX_DIMS];
  if (idx->ndim + 1 > WEFT_MAX_DIMS)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "embedding: indices have too many dims (%d)", idx->ndim);
  memcpy(sizes, idx->sizes, sizeof(int64_t) * (size_t)idx->ndim);
  sizes[idx->ndim] = w->sizes[1];
  weft_tensor* r = weft_empty(sizes, idx->ndim + 1, w->dtype, w->device, WEFT_CONTIGUOUS_FORMAT);
  weft_status s = r ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && weft_explaining())
    s = weft__explain_kernel("embedding", "embedding", "row_gather", w->dtype, idx->numel, w->sizes[1]);
  else if (s == WEFT_OK && computes(w) && r->numel) s = gather(w, idx, r);
  if (s == WEFT_OK) return r;
  weft_tensor_release(r);
  return NULL;
}

/* ---- embedding_dense_backward ---- */
static weft_status dense_backward_checks(const char* op, T g, T idx, int64_t nw) {
  char a[160], b[160];
  if (index_dtype_check("embedding_backward", 2, idx) != WEFT_OK) return weft_last_status();
  if (g->dtype != WEFT_FLOAT32 && g->dtype != WEFT_FLOAT64 && g->dtype != WEFT_FLOAT16 && g->dtype != WEFT_BFLOAT16)
    return weft__error(WEFT_TYPE_ERROR, "%s: \"embedding_backward\" not implemented for '%s'", op,
                       weft_dtype_name(g->dtype));
  if (nw < 0) return weft__error(WEFT_INVALID_ARGUMENT, "%s: num_weights must be non-negative, got %lld", op,
                                 (long long)nw);
  bool ok = g->ndim == idx->ndim + 1 && !memcmp(g->sizes, idx->sizes, sizeof(int64_t) * (size_t)idx->ndim);
  if (!ok)
    return weft__error(WEFT_SHAPE_ERROR, "%s: expected grad_output of size %s + [embedding_dim], but got %s", op,
                       weft__sizes_str(idx->sizes, idx->ndim, a, sizeof a), weft__sizes_str(g->sizes, g->ndim, b, sizeof b));
  return is_meta(g) ? WEFT_OK : bounds_check(idx, nw);
}

static weft_status accumulate(T g, T idx, int64_t nw, int64_t pad, bool sgf, weft_tensor* r) {
  weft_tensor* ic = weft_contiguous(idx, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* gc = weft_contiguous(g, WEFT_CONTIGUOUS_FORMAT);
  weft_status s = ic && gc ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK)
    s = weft__embedding_backward(weft__kernels(), idx->numel, weft_tensor_data_ptr(ic), idx->dtype, nw,
                                 r->sizes[1], pad, sgf, g->dtype, weft_tensor_data_ptr(gc), weft_tensor_data_ptr(r));
  weft_tensor_release(ic);
  weft_tensor_release(gc);
  return s;
}

static weft_tensor* embedding_dense_backward_kernel(T g, T idx, int64_t nw, int64_t pad, bool sgf) {
  const char* op = "embedding_dense_backward";
  if (dense_backward_checks(op, g, idx, nw) != WEFT_OK) return NULL;
  const int64_t sizes[2] = {nw, g->sizes[g->ndim - 1]};
  weft_tensor* r = weft_empty(sizes, 2, g->dtype, g->device, WEFT_CONTIGUOUS_FORMAT);
  weft_status s = r ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && weft_explaining())
    s = weft__explain_kernel(op, "embedding", "row_accumulate", g->dtype, nw, sizes[1]);
  else if (s == WEFT_OK && computes(g)) s = accumulate(g, idx, nw, pad, sgf, r);
  if (s == WEFT_OK) return r;
  weft_tensor_release(r);
  return NULL;
}

/* ---- embedding_renorm_ ---- */
static weft_status embedding_renorm__kernel(weft_tensor* self, T idx, double max_norm, double norm_type) {
  const char* op = "embedding_renorm_";
  if (self->ndim != 2)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "Expected 2-dimensional tensor, but got %d-dimensional tensor for argument #1 'self' (while "
                       "checking arguments for %s)",
                       self->ndim, op);
  if (index_dtype_check(op, 2, idx) != WEFT_OK) return weft_last_status();
  if (!weft_dtype_is_floating(self->dtype))
    return weft__error(WEFT_TYPE_ERROR, "%s: \"embedding_renorm_\" not implemented for '%s'", op,
                       weft_dtype_name(self->dtype));
  if (!computes(self)) return WEFT_OK;
  if (bounds_check(idx, self->sizes[0]) != WEFT_OK) return weft_last_status();
  weft_tensor* ic = weft_contiguous(idx, WEFT_CONTIGUOUS_FORMAT);
  if (!ic) return weft_last_status();
  weft_status s = weft__embedding_renorm(idx->numel, weft_tensor_data_ptr(ic), idx->dtype, weft_tensor_data_ptr(self),
                                         self->strides[0], self->strides[1], self->sizes[1], self->dtype, max_norm,
                                         norm_type);
  weft_tensor_release(ic);
  return s;
}

weft_status weft__embedding_register(void) {
  WEFT_KERNEL(embedding, CPU, embedding_kernel);
  WEFT_KERNEL(embedding, META, embedding_kernel);
  WEFT_KERNEL(embedding_dense_backward, CPU, embedding_dense_backward_kernel);
  WEFT_KERNEL(embedding_dense_backward, META, embedding_dense_backward_kernel);
  WEFT_KERNEL(embedding_renorm_, CPU, embedding_renorm__kernel);
  WEFT_KERNEL(embedding_renorm_, META, embedding_renorm__kernel);
  return WEFT_OK;
}
