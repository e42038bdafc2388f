/* Advanced indexing (issue 13): index.Tensor, index_put_ and index_put,
 * PyTorch 1.13's x[indices] and x[indices] = values with a Tensor?[] list.
 *
 * As PyTorch's index / index_put_ (expandTensors, make_info, the
 * TensorIterator kernels): bool and uint8 masks become their nonzero
 * coordinates, one int64 index per dim they cover; the index tensors
 * broadcast together to B; the result is self's shape with the indexed dims
 * replaced by B, in place when the indexed dims are adjacent, else first.
 * Every index is checked against its dim (negative ones count from the end)
 * before anything is read or written. Each result position then reads (or
 * writes) one element of self: its non-indexed coordinates through self's
 * strides plus one element offset per B position, the sum over the indices
 * of index * stride (an int64 tensor of B's shape), so the move itself is
 * the gather / scatter driver of src/ops/cpu/index.c. The result's layout
 * is the one PyTorch's TensorIterator gives it (self seen with the result's
 * shape, stride 0 on B, and the offsets). index_put_ writes in order, on one
 * thread: with accumulate, repeated indices add up. */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "ops/cpu/index.h"
#include "ops/index_internal.h"
#include "ops/ops.h"
#include "weft/iter.h"

typedef struct {
  int n;                            /* entries after masks were expanded */
  weft_tensor* idx[WEFT_MAX_DIMS];  /* owned int64 index per self dim, or NULL */
  int bnd;
  int64_t b[WEFT_MAX_DIMS];         /* the indices' broadcast shape */
  int rnd;
  int64_t r[WEFT_MAX_DIMS];         /* the result's shape */
  int64_t self_st[WEFT_MAX_DIMS];   /* self's strides seen in the result, 0 on B */
  int b_at;                         /* the result dim B starts at */
} adv_plan;

static void plan_release(adv_plan* a) {
  for (int i = 0; i < a->n; i++) weft_tensor_release(a->idx[i]);
  a->n = 0;
}

/* expandTensors: masks to coordinates; int64 kept; anything else refused. */
static weft_status expand_masks(const weft_tensor* self, const weft_tensor* const* indices, int64_t n, adv_plan* a) {
  char b1[160], b2[160];
  if (n > self->ndim)
    return weft__error(WEFT_INDEX_ERROR, "too many indices for tensor of dimension %d (got %lld)", self->ndim,
                       (long long)n);
  for (int64_t i = 0; i < n; i++) {
    const weft_tensor* t = indices[i];
    if (t && t->dtype != WEFT_INT64 && t->dtype != WEFT_BOOL && t->dtype != WEFT_UINT8)
      return weft__error(WEFT_INDEX_ERROR, "tensors used as indices must be long, byte or bool tensors");
    int k = t && t->dtype != WEFT_INT64 ? t->ndim : 1;
    if (a->n + k > self->ndim)
      return weft__error(WEFT_INDEX_ERROR, "too many indices for tensor of dimension %d (got %d)", self->ndim, a->n + k);
    if (!t || t->dtype == WEFT_INT64) {
      a->idx[a->n++] = t ? weft_tensor_retain((weft_tensor*)t) : NULL;
      continue;
    }
    for (int j = 0; j < k; j++)
      if (t->sizes[j] != self->sizes[a->n + j])
        return weft__error(WEFT_INDEX_ERROR,
                           "The shape of the mask %s at index %d does not match the shape of the indexed tensor %s "
                           "at index %d", weft__sizes_str(t->sizes, t->ndim, b1, sizeof b1), j,
                           weft__sizes_str(self->sizes, self->ndim, b2, sizeof b2), a->n + j);
    weft_tensor* nz = weft_nonzero(t);
    if (!nz) return weft_last_status();
    for (int j = 0; j < k; j++) {
      a->idx[a->n] = weft_select(nz, 1, j);
      if (!a->idx[a->n]) {
        weft_tensor_release(nz);
        return weft_last_status();
      }
      a->n++;
    }
    weft_tensor_release(nz);
  }
  return WEFT_OK;
}

/* B: the index tensors broadcast together. */
static weft_status broadcast_indices(adv_plan* a) {
  a->bnd = 0;
  for (int i = 0; i < a->n; i++) {
    const weft_tensor* t = a->idx[i];
    if (!t) continue;
    int nd = t->ndim > a->bnd ? t->ndim : a->bnd;
    int64_t out[WEFT_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
      int da = a->bnd - nd + d, dt = t->ndim - nd + d;
      int64_t sa = da >= 0 ? a->b[da] : 1, st = dt >= 0 ? t->sizes[dt] : 1;
      if (sa != st && sa != 1 && st != 1) {
        char msg[512], buf[160];
        size_t len = (size_t)snprintf(msg, sizeof msg, "shape mismatch: indexing tensors could not be broadcast "
                                                       "together with shapes ");
        for (int j = 0, first = 1; j < a->n && len < sizeof msg; j++)
          if (a->idx[j]) {
            len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s", first ? "" : ", ",
                                    weft__sizes_str(a->idx[j]->sizes, a->idx[j]->ndim, buf, sizeof buf));
            first = 0;
          }
        return weft__error(WEFT_INDEX_ERROR, "%s", msg);
      }
      out[d] = sa == 1 ? st : sa;
    }
    a->bnd = nd;
    memcpy(a->b, out, sizeof(int64_t) * (size_t)nd);
  }
  return WEFT_OK;
}

/* The result's shape, self's strides in it, and where B goes: in place of
 * the indexed dims when they are adjacent, else first. */
static void result_shape(const weft_tensor* self, adv_plan* a) {
  int first = -1, last = -1;
  for (int i = 0; i < a->n; i++)
    if (a->idx[i]) {
      if (first < 0) first = i;
      last = i;
    }
  bool adjacent = true;
  for (int i = first; i <= last; i++) adjacent = adjacent && a->idx[i];
  a->b_at = adjacent ? first : 0;
  int rd = 0;
  for (int d = 0; d <= self->ndim; d++) {
    if (d == a->b_at && rd == a->b_at)
      for (int j = 0; j < a->bnd; j++) a->r[rd] = a->b[j], a->self_st[rd++] = 0;
    if (d == self->ndim || (d < a->n && a->idx[d])) continue;
    a->r[rd] = self->sizes[d];
    a->self_st[rd++] = self->strides[d];
  }
  a->rnd = rd;
}

/* The int64 element offsets of B's positions (a new contiguous tensor of B's shape). */
static weft_tensor* offsets(const weft_tensor* self, const adv_plan* a) {
  weft_tensor* lin = weft_full(a->b, a->bnd, 0, WEFT_INT64, self->device);
  for (int i = 0; lin && i < a->n; i++) {
    if (!a->idx[i] || lin->numel == 0) continue;
    weft_tensor* e = weft_expand(a->idx[i], a->b, a->bnd);
    if (!e) {
      weft_tensor_release(lin);
      return NULL;
    }
    weft_index_walk w;
    weft__index_walk_init(&w, lin, -1);
    weft__index_walk_add(&w, 1, e, -1);
    weft__index_add_offsets(&w, self->sizes[i], self->strides[i]);
    weft_tensor_release(e);
  }
  return lin;
}

/* Each index inside [-size, size) of its dim; k counts the index tensors, as PyTorch's message does. */
static weft_status check_bounds(const weft_tensor* self, const adv_plan* a) {
  for (int i = 0, k = 0; i < a->n; i++) {
    if (!a->idx[i]) continue;
    int64_t bad, size = self->sizes[i];
    if (weft__index_find_bad_in(a->idx[i], -size, size, &bad))
      return weft__error(WEFT_INDEX_ERROR, "index %lld is out of bounds for dimension %d with size %lld",
                         (long long)bad, k, (long long)size);
    k++;
  }
  return WEFT_OK;
}

/* The shared front: checks, the plan, and self and the offsets seen with the result's shape. */
static weft_status prepare(const weft_tensor* self, const weft_tensor* const* indices, int64_t n, adv_plan* a,
                           weft_tensor** self_r, weft_tensor** lin_r) {
  memset(a, 0, sizeof *a);
  *self_r = *lin_r = NULL;
  weft_status s = expand_masks(self, indices, n, a);
  if (s == WEFT_OK && a->n == 0) {
    for (int d = 0; d < self->ndim; d++) a->r[d] = self->sizes[d], a->self_st[d] = self->strides[d];
    a->rnd = self->ndim;
  } else if (s == WEFT_OK) {
    s = broadcast_indices(a);
    if (s == WEFT_OK) result_shape(self, a);
    if (s == WEFT_OK && self->device != WEFT_DEVICE_META) s = check_bounds(self, a);
  }
  weft_tensor* lin = s == WEFT_OK ? offsets(self, a) : NULL;
  if (s == WEFT_OK && !lin) s = weft_last_status();
  if (s == WEFT_OK) {
    int64_t lst[WEFT_MAX_DIMS] = {0};
    for (int j = 0; j < a->bnd; j++) lst[a->b_at + j] = lin->strides[j];
    *self_r = weft_as_strided(self, a->r, a->self_st, a->rnd, self->storage_offset);
    *lin_r = *self_r ? weft_as_strided(lin, a->r, lst, a->rnd, lin->storage_offset) : NULL;
    if (!*lin_r) s = weft_last_status();
  }
  weft_tensor_release(lin);
  if (s != WEFT_OK) {
    weft_tensor_release(*self_r);
    *self_r = NULL;
    plan_release(a);
  }
  return s;
}

/* A new tensor of the result's shape in the layout TensorIterator gives
 * the output of self_r and lin_r. */
static weft_tensor* new_result(const weft_tensor* self_r, const weft_tensor* lin_r) {
  weft_iter_config c = weft_iter_config_init();
  weft_iter_config_set_op_name(&c, "index");
  weft_iter_config_add_output(&c, NULL);
  weft_iter_config_add_input(&c, self_r);
  weft_iter_config_add_input(&c, lin_r);
  weft_iter_config_check_all_same_dtype(&c, false);
  weft_iter_config_check_mem_overlap(&c, false);
  weft_iter_config_declare_static_dtype(&c, self_r->dtype);
  weft_iter it;
  if (weft_iter_build(&c, &it) != WEFT_OK) return NULL;
  weft_tensor* r = weft_tensor_retain(it.ops[0].tensor);
  weft_iter_destroy(&it);
  return r;
}

static void setup(weft_index_move* m, weft_tensor* dst, const weft_tensor* lin_r, const weft_tensor* src) {
  memset(m, 0, sizeof *m);
  weft__index_walk_init(&m->w, dst, -1);
  weft__index_walk_add(&m->w, 1, lin_r, -1);
  if (src) weft__index_walk_add(&m->w, 2, src, -1);
  m->dtype = dst->dtype;
  m->idx_dtype = WEFT_INT64;
  m->dim_stride = (int64_t)weft_dtype_size(dst->dtype);
}

weft_tensor* weft__index_tensor(const weft_tensor* self, const weft_tensor* const* indices, int64_t n) {
  adv_plan a;
  weft_tensor *self_r, *lin_r;
  if (prepare(self, indices, n, &a, &self_r, &lin_r) != WEFT_OK) return NULL;
  weft_tensor* r = new_result(self_r, lin_r);
  if (r && r->numel && self->device != WEFT_DEVICE_META) {
    weft_index_move m;
    setup(&m, r, lin_r, self_r);
    if (weft__index_gather_run(&m) != WEFT_OK) weft_tensor_release(r), r = NULL;
  }
  weft_tensor_release(self_r);
  weft_tensor_release(lin_r);
  plan_release(&a);
  return r;
}

/* values can broadcast to the result's shape (expand's rule). */
static weft_status values_fit(const weft_tensor* v, const adv_plan* a) {
  bool ok = v->ndim <= a->rnd;
  for (int d = 0; ok && d < v->ndim; d++) {
    int64_t s = v->sizes[v->ndim - 1 - d];
    ok = s == 1 || s == a->r[a->rnd - 1 - d];
  }
  if (ok) return WEFT_OK;
  char b1[160], b2[160];
  return weft__error(WEFT_SHAPE_ERROR, "shape mismatch: value tensor of shape %s cannot be broadcast to indexing result "
                     "of shape %s", weft__sizes_str(v->sizes, v->ndim, b1, sizeof b1), weft__sizes_str(a->r, a->rnd, b2, sizeof b2));
}

weft_status weft__index_put(weft_tensor* self, const weft_tensor* const* indices, int64_t n, const weft_tensor* values,
                            bool accumulate) {
  if (values->dtype != self->dtype)
    return weft__error(WEFT_TYPE_ERROR, "Index put requires the source and destination dtypes match, got %s for the "
                       "destination and %s for the source.", weft_dtype_name(self->dtype),
                       weft_dtype_name(values->dtype));
  adv_plan a;
  weft_tensor *self_r, *lin_r;
  if (prepare(self, indices, n, &a, &self_r, &lin_r) != WEFT_OK) return weft_last_status();
  weft_status s = values_fit(values, &a);
  weft_tensor* v = s == WEFT_OK ? weft_expand(values, a.r, a.rnd) : NULL;
  if (s == WEFT_OK && !v) s = weft_last_status();
  if (s == WEFT_OK && v->numel && self->device != WEFT_DEVICE_META) {
    weft_index_move m;
    setup(&m, self_r, lin_r, v);
    m.mode = accumulate ? WEFT_SCATTER_ADD : WEFT_SCATTER_ASSIGN;
    m.serial = true;
    s = weft__index_scatter_run(&m);
  }
  weft_tensor_release(v);
  weft_tensor_release(self_r);
  weft_tensor_release(lin_r);
  plan_release(&a);
  return s;
}

static weft_tensor* index_tensor_kernel(const weft_tensor* self, const weft_tensor* const* indices, int64_t n) {
  return weft__index_tensor(self, indices, n);
}

static weft_status index_put__kernel(weft_tensor* self, const weft_tensor* const* indices, int64_t n,
                                     const weft_tensor* values, bool accumulate) {
  return weft__index_put(self, indices, n, values, accumulate);
}

static weft_tensor* index_put_kernel(const weft_tensor* self, const weft_tensor* const* indices, int64_t n,
                                     const weft_tensor* values, bool accumulate) {
  weft_tensor* r = weft_clone(self, WEFT_PRESERVE_FORMAT); /* 1.13's index_put keeps self's layout */
  if (r && weft__index_put(r, indices, n, values, accumulate) != WEFT_OK) weft_tensor_release(r), r = NULL;
  return r;
}

weft_status weft__index_advanced_register(void) {
  WEFT_KERNEL(index_tensor, CPU, index_tensor_kernel);
  WEFT_KERNEL(index_tensor, META, index_tensor_kernel);
  WEFT_KERNEL(index_put_, CPU, index_put__kernel);
  WEFT_KERNEL(index_put_, META, index_put__kernel);
  WEFT_KERNEL(index_put, CPU, index_put_kernel);
  WEFT_KERNEL(index_put, META, index_put_kernel);
  return WEFT_OK;
}
