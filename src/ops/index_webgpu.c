/* The indexing ops on the WebGPU device (docs/webgpu.md "State"):
 * index_select, gather, scatter / scatter_add, index_add, embedding and its
 * backward, masked_fill, nll_loss and its backward, arange (cat is join.c's
 * slice copies). Each runs the op's own checks first, unchanged: its Meta
 * kernel, called on meta twins of the inputs (sizes, strides, dtypes; a
 * webgpu int32 index shows as int64, the index dtype every op accepts), which
 * also gives the result's shape and strides. Then one WGSL program of the
 * index family (src/webgpu/wgsl_index.c).
 *
 * Index tensors: int64 cannot live on the device, so a webgpu index is
 * int32; a cpu index (int64 or int32) is range-checked on the cpu with the
 * op's message and uploaded as int32. A webgpu index is not read back: one
 * outside the range moves nothing (a gather gives 0, a scatter skips it). */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "iter/iter_internal.h"
#include "ops/index_internal.h"
#include "ops/ops.h"
#include "ops/webgpu_ops.h"

typedef const weft_tensor* T;

/* ---- meta twins and the index rule ---- */

static weft_tensor* twin(T t) {
  return t ? weft_empty_strided(t->sizes, t->strides, t->ndim, t->dtype, WEFT_DEVICE_META) : NULL;
}

/* an index twin: a webgpu int32 index passes as int64 (gather's and
 * nll_loss's only dtype); a cpu index keeps its dtype and PyTorch's rules */
static weft_tensor* index_twin(T t) {
  weft_dtype dt = t->dtype == WEFT_INT32 && t->device == WEFT_DEVICE_WEBGPU ? WEFT_INT64 : t->dtype;
  return weft_empty_strided(t->sizes, t->strides, t->ndim, dt, WEFT_DEVICE_META);
}

typedef struct {
  weft_tensor* t[4];
  int n;
} twins;

static void twins_release(twins* w) {
  for (int i = 0; i < w->n; i++) weft_tensor_release(w->t[i]);
}

/* the twins of values (a NULL stays NULL) and of one index (last) */
static bool make_twins(twins* w, T a, T b, T c, T index) {
  T in[3] = {a, b, c};
  w->n = 0;
  for (int i = 0; i < 3; i++) {
    w->t[w->n] = in[i] ? twin(in[i]) : NULL;
    if (in[i] && !w->t[w->n]) return false;
    w->n++;
  }
  w->t[w->n] = index ? index_twin(index) : NULL;
  w->n++;
  return !index || w->t[3];
}

static weft_status on_device(const char* op, T t) {
  if (!t || t->device == WEFT_DEVICE_WEBGPU) return WEFT_OK;
  return weft__error(WEFT_INVALID_ARGUMENT,
                     "%s: Expected all tensors to be on the same device, but found at least two devices, webgpu and %s!",
                     op, weft_device_name(t->device));
}

static weft_status webgpu_dtype(const char* op, weft_dtype t) {
  if (t == WEFT_FLOAT32 || t == WEFT_INT32) return WEFT_OK;
  return weft__error(WEFT_NOT_IMPLEMENTED, "%s: not implemented on the webgpu device for %s yet", op,
                     weft_dtype_name(t));
}

typedef enum { OOB_SELF, OOB_DIM, OOB_SELECT, OOB_TARGET } oob_words;

static weft_status out_of_range(const char* op, oob_words w, int64_t bad, int dim, int64_t size) {
  if (w == OOB_DIM)
    return weft__error(WEFT_INDEX_ERROR, "%s: index %lld is out of bounds for dimension %d with size %lld", op,
                       (long long)bad, dim, (long long)size);
  if (w == OOB_SELECT)
    return weft__error(WEFT_INDEX_ERROR, "index_select(): index %lld is out of bounds for dimension %d with size %lld",
                       (long long)bad, dim, (long long)size);
  if (w == OOB_TARGET) return weft__error(WEFT_INDEX_ERROR, "%s: Target %lld is out of bounds.", op, (long long)bad);
  return weft__error(WEFT_INDEX_ERROR, "%s: index out of range in self", op);
}

/* The index as a contiguous webgpu int32 tensor. A cpu index is checked
 * against [0, size) first (`allowed`, nll_loss's ignore_index, passes). */
static weft_tensor* device_index(const char* op, T idx, int64_t size, int dim, oob_words w, const int64_t* allowed) {
  if (idx->device == WEFT_DEVICE_WEBGPU) {
    if (idx->dtype != WEFT_INT32)
      return weft__error_null(WEFT_TYPE_ERROR, "%s: a webgpu index tensor must be int32, got %s", op,
                              weft_dtype_name(idx->dtype));
    return weft_contiguous(idx, WEFT_CONTIGUOUS_FORMAT);
  }
  if (idx->device != WEFT_DEVICE_CPU || (idx->dtype != WEFT_INT64 && idx->dtype != WEFT_INT32))
    return weft__error_null(WEFT_TYPE_ERROR, "%s: expected an int32 or int64 index tensor, got %s %s", op,
                            weft_device_name(idx->device), weft_dtype_name(idx->dtype));
  if (weft_explaining()) /* nothing runs: the plan needs a buffer, not the values */
    return weft_empty(idx->sizes, idx->ndim, WEFT_INT32, WEFT_DEVICE_WEBGPU, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* wide = weft_empty(idx->sizes, idx->ndim, WEFT_INT64, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  weft_status s = wide ? weft_copy_(wide, idx) : weft_last_status();
  const int64_t* v = s == WEFT_OK ? weft_tensor_data_ptr(wide) : NULL;
  for (int64_t i = 0; s == WEFT_OK && i < idx->numel; i++)
    if ((v[i] < 0 || v[i] >= size) && !(allowed && v[i] == *allowed)) s = out_of_range(op, w, v[i], dim, size);
  weft_tensor* r = s == WEFT_OK ? weft_empty(idx->sizes, idx->ndim, WEFT_INT32, WEFT_DEVICE_WEBGPU,
                                             WEFT_CONTIGUOUS_FORMAT) : NULL;
  if (r && weft_copy_(r, wide) != WEFT_OK) weft_tensor_release(r), r = NULL;
  weft_tensor_release(wide);
  return r;
}

/* ---- the index program over tensors ---- */

/* operand k: t's buffer and offset; strides over the iteration dims */
static void set_operand(weft__webgpu_index* d, int k, T t, const int64_t* strides) {
  d->buffer[k] = weft__webgpu_buffer_of(t);
  d->offset[k] = t->storage_offset;
  for (int i = 0; i < d->ndim; i++) d->strides[k][i] = strides[i];
}

static void set_shape(weft__webgpu_index* d, const int64_t* sizes, int nd) {
  d->ndim = nd;
  d->numel = 1;
  for (int i = 0; i < nd; i++) d->sizes[i] = sizes[i], d->numel *= sizes[i];
}

/* t's strides over nd iteration dims, with dim's zeroed (the index moves it) */
static void strides_without(T t, int nd, int dim, int64_t* out) {
  for (int i = 0; i < nd; i++) out[i] = i < t->ndim && i != dim ? t->strides[i] : 0;
}

/* Runs d; a source or index sharing the output's storage is read from a copy. */
static weft_status run_index(const char* op, weft__webgpu_index* d, T out) {
  if (d->numel == 0) return WEFT_OK;
  weft_tensor* snapshot = NULL;
  for (int k = 1; k < 3; k++) {
    if ((k == 1 && d->src_scalar) || d->buffer[k] != d->buffer[0]) continue;
    if (!snapshot && !(snapshot = weft__webgpu_storage_copy(op, out))) return weft_last_status();
    d->buffer[k] = weft__webgpu_buffer_of(snapshot);
  }
  weft__webgpu_program p;
  weft_status s = weft__webgpu_index_program(op, d, &p);
  if (s == WEFT_OK) s = weft__webgpu_run(op, &p);
  weft_tensor_release(snapshot);
  return s;
}

/* A webgpu result laid out as the Meta kernel's (sizes and strides). */
static weft_tensor* like_meta(weft_tensor* meta, weft_dtype dt) {
  if (!meta) return NULL;
  weft_tensor* r = weft_empty_strided(meta->sizes, meta->strides, meta->ndim, dt, WEFT_DEVICE_WEBGPU);
  weft_tensor_release(meta);
  return r;
}

static int64_t dim_size(T t, int dim) { return t->ndim ? t->sizes[dim] : 1; }
static int64_t dim_stride(T t, int dim) { return t->ndim ? t->strides[dim] : 0; }

/* ---- index_select and gather ---- */

static weft_tensor* gather_into(const char* op, weft_tensor* r, T self, int dim, T idx, oob_words w, bool along_dim) {
  weft_tensor* ix = r ? device_index(op, idx, dim_size(self, dim), dim, w, NULL) : NULL;
  weft_status s = ix ? WEFT_OK : weft_last_status();
  weft__webgpu_index d = {.name = op, .mode = WEFT_WEBGPU_GATHER, .dtype = self->dtype};
  if (s == WEFT_OK) {
    /* index_select walks the result (the index along dim), gather the index */
    set_shape(&d, r->sizes, r->ndim);
    int64_t st[WEFT_MAX_DIMS] = {0};
    set_operand(&d, 0, r, r->strides);
    strides_without(self, d.ndim, dim, st);
    set_operand(&d, 1, self, st);
    if (along_dim) {
      memset(st, 0, sizeof st);
      if (r->ndim) st[dim] = ix->ndim ? ix->strides[0] : 0;
    } else {
      memcpy(st, ix->strides, sizeof(int64_t) * (size_t)ix->ndim);
    }
    set_operand(&d, 2, ix, st);
    d.dim_stride = dim_stride(self, dim);
    d.dim_size = dim_size(self, dim);
    s = run_index(op, &d, r);
  }
  weft_tensor_release(ix);
  if (s == WEFT_OK) return r;
  weft_tensor_release(r);
  return NULL;
}

static bool wrap(const char* op, int64_t dim, T t, int* d) {
  int64_t w;
  if (!weft__wrap_dim(op, dim, t->ndim, &w)) return false;
  *d = (int)w;
  return true;
}

static weft_tensor* index_select_webgpu(T self, int64_t dim, T index) {
  const char* op = "index_select";
  twins w;
  int d;
  weft_tensor* r = NULL;
  if (on_device(op, self) == WEFT_OK && webgpu_dtype(op, self->dtype) == WEFT_OK && make_twins(&w, self, NULL, NULL, index)) {
    r = like_meta(weft_index_select(w.t[0], dim, w.t[3]), self->dtype);
    twins_release(&w);
  }
  if (!r || !wrap(op, dim, self, &d)) return weft_tensor_release(r), NULL;
  return gather_into(op, r, self, d, index, OOB_SELECT, true);
}

static weft_tensor* gather_webgpu(T self, int64_t dim, T index, bool sparse_grad) {
  const char* op = "gather";
  twins w;
  int d;
  weft_tensor* r = NULL;
  if (on_device(op, self) == WEFT_OK && webgpu_dtype(op, self->dtype) == WEFT_OK && make_twins(&w, self, NULL, NULL, index)) {
    r = like_meta(weft_gather(w.t[0], dim, w.t[3], sparse_grad), self->dtype);
    twins_release(&w);
  }
  if (!r || !wrap(op, dim, self, &d)) return weft_tensor_release(r), NULL;
  return gather_into(op, r, self, d, index, OOB_DIM, false);
}

/* ---- scatter, scatter_add, index_add ---- */

/* self[.., index[i], ..] (op)= src[i] over the iteration `over` (index's
 * shape for scatter, source's for index_add: its index runs along dim) */
static weft_status scatter_into(const char* op, weft__webgpu_index_mode mode, weft_tensor* self, int dim, T index,
                                T src, const weft_scalar* value, double alpha, T over, bool along_dim, oob_words w) {
  weft_tensor* ix = device_index(op, index, dim_size(self, dim), dim, w, NULL);
  if (!ix) return weft_last_status();
  weft__webgpu_index d = {.name = op, .mode = mode, .dtype = self->dtype};
  set_shape(&d, over->sizes, over->ndim);
  int64_t st[WEFT_MAX_DIMS] = {0};
  strides_without(self, d.ndim, dim, st);
  set_operand(&d, 0, self, st);
  if (value) {
    d.src_scalar = true;
    d.src_bits = weft__webgpu_bits(weft_scalar_to_double(*value), self->dtype);
  } else {
    memcpy(st, src->strides, sizeof(int64_t) * (size_t)src->ndim);
    set_operand(&d, 1, src, st);
  }
  memset(st, 0, sizeof st);
  if (along_dim && over->ndim) st[dim] = ix->ndim ? ix->strides[0] : 0;
  else if (!along_dim) memcpy(st, ix->strides, sizeof(int64_t) * (size_t)ix->ndim);
  set_operand(&d, 2, ix, st);
  d.dim_stride = dim_stride(self, dim);
  d.dim_size = dim_size(self, dim);
  d.alpha_bits = weft__webgpu_bits(alpha, self->dtype);
  weft_status s = run_index(op, &d, self);
  weft_tensor_release(ix);
  return s;
}

/* the checks of scatter_(src / value) and scatter_add_ on meta twins */
static weft_status scatter_checks(const char* op, weft__webgpu_index_mode mode, T self, int64_t dim, T index, T src,
                                  const weft_scalar* value) {
  weft_status s = on_device(op, self);
  if (s == WEFT_OK) s = on_device(op, src);
  if (s == WEFT_OK) s = webgpu_dtype(op, self->dtype);
  twins w;
  if (s != WEFT_OK || !make_twins(&w, self, src, NULL, index)) return s != WEFT_OK ? s : weft_last_status();
  if (mode == WEFT_WEBGPU_SCATTER_ADD) s = weft_scatter_add_(w.t[0], dim, w.t[3], w.t[1]);
  else if (value) s = weft_scatter__value(w.t[0], dim, w.t[3], *value);
  else s = weft_scatter__src(w.t[0], dim, w.t[3], w.t[1]);
  twins_release(&w);
  return s;
}

static weft_status scatter_inplace(const char* op, weft__webgpu_index_mode mode, weft_tensor* self, int64_t dim,
                                   T index, T src, const weft_scalar* value) {
  int d;
  weft_status s = scatter_checks(op, mode, self, dim, index, src, value);
  if (s != WEFT_OK || !wrap(op, dim, self, &d)) return s != WEFT_OK ? s : weft_last_status();
  if (index->numel == 0) return WEFT_OK;
  return scatter_into(op, mode, self, d, index, src, value, 1.0, index, false, OOB_DIM);
}

/* the functional forms: a contiguous copy of self, then the in-place op */
static weft_tensor* scatter_copy(const char* op, weft__webgpu_index_mode mode, T self, int64_t dim, T index, T src,
                                 const weft_scalar* value) {
  if (scatter_checks(op, mode, self, dim, index, src, value) != WEFT_OK) return NULL;
  weft_tensor* r = weft_clone(self, WEFT_CONTIGUOUS_FORMAT);
  if (r && scatter_inplace(op, mode, r, dim, index, src, value) != WEFT_OK) weft_tensor_release(r), r = NULL;
  return r;
}

static weft_status scatter__src_webgpu(weft_tensor* self, int64_t dim, T index, T src) {
  return scatter_inplace("scatter_", WEFT_WEBGPU_SCATTER, self, dim, index, src, NULL);
}
static weft_status scatter__value_webgpu(weft_tensor* self, int64_t dim, T index, weft_scalar value) {
  return scatter_inplace("scatter_", WEFT_WEBGPU_SCATTER, self, dim, index, NULL, &value);
}
static weft_status scatter_add__webgpu(weft_tensor* self, int64_t dim, T index, T src) {
  return scatter_inplace("scatter_add_", WEFT_WEBGPU_SCATTER_ADD, self, dim, index, src, NULL);
}
static weft_tensor* scatter_src_webgpu(T self, int64_t dim, T index, T src) {
  return scatter_copy("scatter", WEFT_WEBGPU_SCATTER, self, dim, index, src, NULL);
}
static weft_tensor* scatter_value_webgpu(T self, int64_t dim, T index, weft_scalar value) {
  return scatter_copy("scatter", WEFT_WEBGPU_SCATTER, self, dim, index, NULL, &value);
}
static weft_tensor* scatter_add_webgpu(T self, int64_t dim, T index, T src) {
  return scatter_copy("scatter_add", WEFT_WEBGPU_SCATTER_ADD, self, dim, index, src, NULL);
}

static weft_status index_add__webgpu(weft_tensor* self, int64_t dim, T index, T src, weft_scalar alpha) {
  const char* op = "index_add_";
  weft_status s = on_device(op, self);
  if (s == WEFT_OK) s = on_device(op, src);
  if (s == WEFT_OK) s = webgpu_dtype(op, self->dtype);
  twins w;
  if (s != WEFT_OK || !make_twins(&w, self, src, NULL, index)) return s != WEFT_OK ? s : weft_last_status();
  s = weft_index_add_(w.t[0], dim, w.t[3], w.t[1], alpha);
  twins_release(&w);
  int d;
  if (s != WEFT_OK || !wrap(op, dim, self, &d)) return s != WEFT_OK ? s : weft_last_status();
  if (index->numel == 0) return WEFT_OK;
  if (src->ndim && src->ndim != self->ndim)
    return weft__error(WEFT_NOT_IMPLEMENTED, "%s: on the webgpu device source must have self's number of dims", op);
  /* alpha as 1.13 takes it: converted to self's type */
  double a = weft_scalar_to_double(alpha);
  return scatter_into(op, WEFT_WEBGPU_SCATTER_ADD, self, d, index, src, NULL, a, src, true, OOB_SELF);
}

static weft_tensor* index_add_webgpu(T self, int64_t dim, T index, T src, weft_scalar alpha) {
  weft_tensor* r = on_device("index_add", self) == WEFT_OK ? weft_clone(self, WEFT_CONTIGUOUS_FORMAT) : NULL;
  if (r && index_add__webgpu(r, dim, index, src, alpha) != WEFT_OK) weft_tensor_release(r), r = NULL;
  return r;
}

/* ---- embedding and its backward: rows of weight, as index_select's dim 0 ---- */

static weft_tensor* embedding_webgpu(T weight, T indices, int64_t padding_idx, bool sgf, bool sparse) {
  const char* op = "embedding";
  twins w;
  weft_tensor* r = NULL;
  if (on_device(op, weight) == WEFT_OK && webgpu_dtype(op, weight->dtype) == WEFT_OK &&
      make_twins(&w, weight, NULL, NULL, indices)) {
    r = like_meta(weft_embedding(w.t[0], w.t[3], padding_idx, sgf, sparse), weight->dtype);
    twins_release(&w);
  }
  if (!r) return NULL;
  /* [indices..., D] walked as [numel, D] */
  weft_tensor* flat = weft_reshape(indices, (int64_t[]){indices->numel}, 1);
  weft_tensor* rows = flat ? weft_reshape(r, (int64_t[]){indices->numel, weight->sizes[1]}, 2) : NULL;
  weft_tensor* g = rows ? gather_into(op, rows, weight, 0, flat, OOB_SELF, true) : NULL;
  weft_tensor_release(flat);
  weft_tensor_release(g);
  if (g) return r;
  weft_tensor_release(r);
  return NULL;
}

static weft_tensor* embedding_dense_backward_webgpu(T grad, T indices, int64_t nw, int64_t pad, bool sgf) {
  const char* op = "embedding_dense_backward";
  if (on_device(op, grad) != WEFT_OK || webgpu_dtype(op, grad->dtype) != WEFT_OK) return NULL;
  twins w;
  if (!make_twins(&w, grad, NULL, NULL, indices)) return NULL;
  weft_tensor* m = weft_embedding_dense_backward(w.t[0], w.t[3], nw, pad, sgf);
  twins_release(&w);
  if (!m) return NULL;
  weft_tensor_release(m);
  if (sgf)
    return weft__error_null(WEFT_NOT_IMPLEMENTED, "%s: scale_grad_by_freq is not implemented on the webgpu device", op);
  int64_t dsz = grad->sizes[grad->ndim - 1];
  weft_tensor* r = weft_full((int64_t[]){nw, dsz}, 2, 0.0, grad->dtype, WEFT_DEVICE_WEBGPU);
  weft_tensor* g = r ? weft_reshape(grad, (int64_t[]){indices->numel, dsz}, 2) : NULL;
  weft_tensor* flat = g ? weft_reshape(indices, (int64_t[]){indices->numel}, 1) : NULL;
  weft_status s = flat ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && g->numel) {
    weft_tensor* ix = device_index(op, flat, nw, 0, OOB_SELF, NULL);
    weft__webgpu_index d = {.name = op, .mode = WEFT_WEBGPU_SCATTER_ADD, .dtype = grad->dtype, .skipping = true,
                            .skip = pad, .dim_stride = dsz, .dim_size = nw};
    d.alpha_bits = weft__webgpu_bits(1.0, grad->dtype);
    set_shape(&d, g->sizes, 2);
    set_operand(&d, 0, r, (int64_t[]){0, 1});
    set_operand(&d, 1, g, g->strides);
    s = ix ? WEFT_OK : weft_last_status();
    if (s == WEFT_OK) {
      set_operand(&d, 2, ix, (int64_t[]){ix->strides[0], 0});
      s = run_index(op, &d, r);
    }
    weft_tensor_release(ix);
  }
  weft_tensor_release(g);
  weft_tensor_release(flat);
  if (s == WEFT_OK) return r;
  weft_tensor_release(r);
  return NULL;
}

/* ---- masked_fill: the strided map family, select(self, value, mask) ---- */

static weft_status masked_fill_into(weft_tensor* self, T mask, T value) {
  const char* op = "masked_fill_";
  weft_iter_config cfg = weft_iter_config_init();
  weft_iter it;
  weft_iter_config_set_op_name(&cfg, op);
  weft_iter_config_check_mem_overlap(&cfg, false);
  weft_iter_config_add_output(&cfg, self);
  weft_iter_config_add_input(&cfg, self);
  weft_iter_config_add_input(&cfg, mask);
  weft_iter_config_add_input(&cfg, value);
  weft_iter_config_resize_outputs(&cfg, false);
  weft_iter_config_check_all_same_dtype(&cfg, false);
  weft_status s = weft_iter_build(&cfg, &it);
  if (s != WEFT_OK) return s;
  static const char* expr[] = {"select(a0, a2, a1 != 0.0)", "select(a0, a2, a1 != 0)", "select(a0, a2, a1)"};
  weft_dtype t = self->dtype;
  weft__webgpu_map m = {.name = "masked_fill", .compute = t, .result = t, .nin = 3,
                        .expr = expr[t == WEFT_FLOAT32 ? 0 : t == WEFT_INT32 ? 1 : 2]};
  weft__webgpu_describe(&it, &m, t);
  weft_tensor* snapshot = NULL;
  if (m.numel) s = weft__webgpu_resolve_aliases(op, &m, self, &snapshot);
  weft__webgpu_program p;
  if (s == WEFT_OK && m.numel) s = weft__webgpu_map_program(op, &m, &p);
  if (s == WEFT_OK && m.numel) s = weft__webgpu_run(op, &p);
  weft_tensor_release(snapshot);
  weft_iter_destroy(&it);
  return s;
}

/* the op's checks on twins; value: a tensor, or a scalar made a cpu number */
static weft_status masked_fill_checks(T self, T mask, T value_t, const weft_scalar* value) {
  const char* op = "masked_fill_";
  weft_status s = on_device(op, self);
  if (s == WEFT_OK) s = on_device(op, mask);
  if (s == WEFT_OK && value_t && value_t->ndim) s = on_device(op, value_t);
  twins w;
  if (s != WEFT_OK || !make_twins(&w, self, mask, value_t, NULL)) return s != WEFT_OK ? s : weft_last_status();
  s = value ? weft_masked_fill__scalar(w.t[0], w.t[1], *value) : weft_masked_fill__tensor(w.t[0], w.t[1], w.t[2]);
  twins_release(&w);
  return s;
}

static weft_status masked_fill_run(weft_tensor* self, T mask, T value_t, const weft_scalar* value) {
  weft_status s = masked_fill_checks(self, mask, value_t, value);
  if (s != WEFT_OK) return s;
  weft_tensor* v = value ? weft_full(NULL, 0, weft_scalar_to_double(*value), self->dtype, WEFT_DEVICE_CPU)
                         : weft_tensor_retain((weft_tensor*)value_t);
  s = v ? masked_fill_into(self, mask, v) : weft_last_status();
  weft_tensor_release(v);
  return s;
}

static weft_status masked_fill__scalar_webgpu(weft_tensor* self, T mask, weft_scalar value) {
  return masked_fill_run(self, mask, NULL, &value);
}
static weft_status masked_fill__tensor_webgpu(weft_tensor* self, T mask, T value) {
  return masked_fill_run(self, mask, value, NULL);
}

/* functional: self broadcast with mask into a new contiguous tensor, filled */
static weft_tensor* masked_fill_copy(T self, T mask, T value_t, const weft_scalar* value) {
  twins w;
  weft_tensor* r = NULL;
  if (on_device("masked_fill", self) == WEFT_OK && make_twins(&w, self, mask, value_t, NULL)) {
    r = like_meta(value ? weft_masked_fill_scalar(w.t[0], w.t[1], *value) : weft_masked_fill_tensor(w.t[0], w.t[1], w.t[2]),
                  self->dtype);
    twins_release(&w);
  }
  if (r && (weft_copy_(r, self) != WEFT_OK || masked_fill_run(r, mask, value_t, value) != WEFT_OK))
    weft_tensor_release(r), r = NULL;
  return r;
}

static weft_tensor* masked_fill_scalar_webgpu(T self, T mask, weft_scalar value) {
  return masked_fill_copy(self, mask, NULL, &value);
}
static weft_tensor* masked_fill_tensor_webgpu(T self, T mask, T value) { return masked_fill_copy(self, mask, value, NULL); }

/* ---- nll_loss ---- */

static bool nll_common(const char* op, T self, T target, T weight, const char* reduction, int64_t ignore,
                       weft__webgpu_nll* d, weft_tensor** tgt) {
  if (on_device(op, self) != WEFT_OK || on_device(op, weight) != WEFT_OK) return false;
  d->reduce = strcmp(reduction, "none") != 0;
  d->mean = strcmp(reduction, "mean") == 0;
  d->has_weight = weight != NULL;
  d->n = self->ndim == 1 ? 1 : self->sizes[0];
  d->c = self->ndim == 1 ? self->sizes[0] : self->sizes[1];
  d->k = 1;
  for (int i = 2; i < self->ndim; i++) d->k *= self->sizes[i];
  d->ignore_index = ignore;
  *tgt = device_index(op, target, d->c, 1, OOB_TARGET, &ignore);
  if (!*tgt) return false;
  d->target = weft__webgpu_buffer_of(*tgt);
  d->target_offset = (*tgt)->storage_offset;
  if (weight) d->weight = weft__webgpu_buffer_of(weight), d->weight_offset = weight->storage_offset;
  return true;
}

/* contiguous operands of the nll programs (a 1-D weight with stride 1 as is) */
static weft_tensor* dense(T t) { return t ? weft_contiguous(t, WEFT_CONTIGUOUS_FORMAT) : NULL; }

static weft_tensor* nll_loss_webgpu(T self, T target, T weight, const char* reduction, int64_t ignore) {
  const char* op = "nll_loss";
  twins w;
  weft_tensor* r = NULL;
  if (on_device(op, self) == WEFT_OK && make_twins(&w, self, weight, NULL, target)) {
    r = like_meta(weft_nll_loss(w.t[0], w.t[3], w.t[1], reduction, ignore), self->dtype);
    twins_release(&w);
  }
  weft_tensor *x = r ? dense(self) : NULL, *wt = x ? dense(weight) : NULL, *tgt = NULL;
  weft__webgpu_nll d = {.backward = false};
  bool ok = x && (!weight || wt) && nll_common(op, self, target, wt, reduction, ignore, &d, &tgt);
  if (ok && d.n * d.k > 0) {
    d.out = weft__webgpu_buffer_of(r), d.x = weft__webgpu_buffer_of(x), d.x_offset = x->storage_offset;
    weft__webgpu_program p;
    ok = weft__webgpu_nll_program(op, &d, &p) == WEFT_OK && weft__webgpu_run(op, &p) == WEFT_OK;
  } else if (ok && d.reduce) {
    ok = weft_fill_(r, d.mean ? NAN : 0.0) == WEFT_OK; /* an empty batch: 0 / 0 for 'mean' */
  }
  weft_tensor_release(x);
  weft_tensor_release(wt);
  weft_tensor_release(tgt);
  if (ok) return r;
  weft_tensor_release(r);
  return NULL;
}

static weft_tensor* nll_loss_backward_webgpu(T grad, T self, T target, T weight, const char* reduction, int64_t ignore) {
  const char* op = "nll_loss_backward";
  twins w;
  weft_tensor* m = NULL;
  if (on_device(op, grad) == WEFT_OK && make_twins(&w, grad, self, weight, target)) {
    m = weft_nll_loss_backward(w.t[0], w.t[1], w.t[3], w.t[2], reduction, ignore);
    twins_release(&w);
  }
  weft_tensor* r = m ? weft_full(m->sizes, m->ndim, 0.0, self->dtype, WEFT_DEVICE_WEBGPU) : NULL;
  weft_tensor_release(m);
  weft_tensor *g = r ? dense(grad) : NULL, *wt = g ? dense(weight) : NULL, *tgt = NULL;
  weft__webgpu_nll d = {.backward = true};
  bool ok = g && (!weight || wt) && nll_common(op, self, target, wt, reduction, ignore, &d, &tgt);
  if (ok && d.n * d.k > 0) {
    d.out = weft__webgpu_buffer_of(r), d.grad = weft__webgpu_buffer_of(g), d.grad_offset = g->storage_offset;
    weft__webgpu_program p;
    ok = weft__webgpu_nll_program(op, &d, &p) == WEFT_OK && weft__webgpu_run(op, &p) == WEFT_OK;
  }
  weft_tensor_release(g);
  weft_tensor_release(wt);
  weft_tensor_release(tgt);
  if (ok) return r;
  weft_tensor_release(r);
  return NULL;
}

/* ---- arange: made on the cpu (its values are the cpu's) and uploaded ---- */

static weft_tensor* arange_webgpu(double start, double end, double step, weft_dtype dtype, weft_device device) {
  weft_tensor* c = weft_arange(start, end, step, dtype, WEFT_DEVICE_CPU);
  weft_tensor* r = c ? weft_empty(c->sizes, c->ndim, c->dtype, device, WEFT_CONTIGUOUS_FORMAT) : NULL;
  if (r && weft_copy_(r, c) != WEFT_OK) weft_tensor_release(r), r = NULL;
  weft_tensor_release(c);
  return r;
}

weft_status weft__index_webgpu_register(void) {
  WEFT_KERNEL(index_select, WEBGPU, index_select_webgpu);
  WEFT_KERNEL(gather, WEBGPU, gather_webgpu);
  WEFT_KERNEL(scatter_src, WEBGPU, scatter_src_webgpu);
  WEFT_KERNEL(scatter__src, WEBGPU, scatter__src_webgpu);
  WEFT_KERNEL(scatter_value, WEBGPU, scatter_value_webgpu);
  WEFT_KERNEL(scatter__value, WEBGPU, scatter__value_webgpu);
  WEFT_KERNEL(scatter_add, WEBGPU, scatter_add_webgpu);
  WEFT_KERNEL(scatter_add_, WEBGPU, scatter_add__webgpu);
  WEFT_KERNEL(index_add, WEBGPU, index_add_webgpu);
  WEFT_KERNEL(index_add_, WEBGPU, index_add__webgpu);
  WEFT_KERNEL(embedding, WEBGPU, embedding_webgpu);
  WEFT_KERNEL(embedding_dense_backward, WEBGPU, embedding_dense_backward_webgpu);
  WEFT_KERNEL(masked_fill_scalar, WEBGPU, masked_fill_scalar_webgpu);
  WEFT_KERNEL(masked_fill_tensor, WEBGPU, masked_fill_tensor_webgpu);
  WEFT_KERNEL(masked_fill__scalar, WEBGPU, masked_fill__scalar_webgpu);
  WEFT_KERNEL(masked_fill__tensor, WEBGPU, masked_fill__tensor_webgpu);
  WEFT_KERNEL(nll_loss, WEBGPU, nll_loss_webgpu);
  WEFT_KERNEL(nll_loss_backward, WEBGPU, nll_loss_backward_webgpu);
  WEFT_KERNEL(arange, WEBGPU, arange_webgpu);
  return WEFT_OK;
}
