/* Views and in-place writes (torch/csrc/autograd/variable.cpp: as_view,
 * rebase_history, VariableHooks::grad_fn; functions/tensor.cpp: CopySlices).
 * A view remembers its root base; an in-place write to a view moves the
 * base's history onto a CopySlices node wrapping the write's node, and a
 * view whose storage was written since its grad_fn was made gets a fresh
 * AsStridedBackward0 from the base, so both see the write. */
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd_internal.h"

static void geom_of(const weft_tensor* t, weft__geom* g) {
  memcpy(g->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
  memcpy(g->strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
  g->ndim = t->ndim;
  g->offset = t->storage_offset;
}

/* ---- as_view ---- */
static weft__creation creation_of(const weft__meta* in, int64_t n) {
  if (!weft__caller_grad_enabled()) return WEFT__VIEW_NO_GRAD;
  if (n > 1) return WEFT__VIEW_MULTI_OUTPUT;
  return in ? (weft__creation)in->creation : WEFT__VIEW_DEFAULT;
}

static void track_one(const weft_tensor* in, weft_tensor* out, int64_t j, weft__creation how) {
  if (!out || out == in || out->storage != in->storage) return; /* reshape/to/contiguous that copied */
  const weft__meta* im = weft__meta_peek(in);
  weft_tensor* base = im && im->base ? im->base : (weft_tensor*)in;
  weft__meta* m = weft__meta_get(out);
  if (!m) return; /* untracked: in-place writes to it then act on the view alone */
  weft_tensor_release(m->base);
  m->base = weft_tensor_retain(base);
  m->creation = (uint8_t)how;
  m->attr_version = weft_tensor_version(out);
  if (how == WEFT__VIEW_MULTI_OUTPUT) m->output_nr = (int32_t)j;
  /* a view made under noGrad of a tensor that requires grad still requires grad (PyTorch) */
  if (how == WEFT__VIEW_NO_GRAD && base->requires_grad) out->requires_grad = true;
}

void weft__view_track(const weft_tensor* in, weft_tensor* const* outs, int64_t n) {
  if (!weft_dtype_is_floating(in->dtype)) return;
  weft__creation how = creation_of(weft__meta_peek(in), n);
  for (int64_t j = 0; j < n; j++) track_one(in, outs[j], j, how);
}

/* ---- as_strided between a base and its view, in a zeroed buffer ---- */
/* The storage range [lo, hi) a layout touches. */
static void extent(const weft__geom* g, int64_t* lo, int64_t* hi) {
  int64_t a = g->offset, b = g->offset;
  for (int32_t d = 0; d < g->ndim; d++) {
    if (g->sizes[d] == 0) {
      *lo = *hi = g->offset;
      return;
    }
    int64_t span = (g->sizes[d] - 1) * g->strides[d];
    if (span < 0) a += span;
    else b += span;
  }
  *lo = a;
  *hi = b + 1;
}

/* Zeros covering the base's storage range; *lo is the range's first element. */
static weft_tensor* zero_storage(const weft_node* n, const weft_tensor* like, int64_t* lo) {
  int64_t hi;
  extent(&n->geom[0], lo, &hi);
  int64_t len = hi - *lo;
  return weft_full(&len, 1, 0.0, like->dtype, like->device);
}

static weft_tensor* on(const weft_tensor* buf, const weft__geom* g, int64_t lo) {
  return weft__tensor_new(buf->storage, g->sizes, g->strides, g->ndim, g->offset - lo + buf->storage_offset,
                          buf->dtype);
}

/* The base (geom[0]) and the view (geom[1]) over one zeroed buffer covering
 * the base's storage range; both hold the buffer's storage. NULLs on failure. */
static weft_status zeroed_base_and_view(const weft_node* n, const weft_tensor* like, weft_tensor** base,
                                        weft_tensor** view) {
  int64_t lo;
  weft_tensor* buf = zero_storage(n, like, &lo);
  *base = buf ? on(buf, &n->geom[0], lo) : NULL;
  *view = *base ? on(buf, &n->geom[1], lo) : NULL;
  weft_tensor_release(buf);
  if (*view) return WEFT_OK;
  weft_tensor_release(*base);
  *base = NULL;
  return weft_last_status();
}

/* ---- the same with recorded ops (createGraph): the storage range as a flat
 * gradient, written and read through index_put / index at each element's
 * storage position (PyTorch's as_strided_backward builds it from
 * differentiable ops the same way), so the result differentiates again ---- */

/* Each element's storage position minus lo, in g's shape (a constant int64 index). */
static weft_tensor* positions(const weft__geom* g, int64_t lo) {
  weft_tensor* p = weft_empty(g->sizes, g->ndim, WEFT_INT64, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  if (!p) return NULL;
  int64_t* d = weft_tensor_data_ptr(p);
  int64_t idx[WEFT_MAX_DIMS] = {0}, numel = 1;
  for (int32_t k = 0; k < g->ndim; k++) numel *= g->sizes[k];
  for (int64_t i = 0; i < numel; i++) {
    int64_t off = g->offset - lo;
    for (int32_t k = 0; k < g->ndim; k++) off += idx[k] * g->strides[k];
    d[i] = off;
    for (int32_t k = g->ndim - 1; k >= 0 && ++idx[k] == g->sizes[k]; k--) idx[k] = 0;
  }
  return p;
}

/* put(flat, positions of g, values): values (g's shape) written at g's places of a flat buffer. */
static weft_tensor* put_at(const weft_tensor* flat, const weft__geom* g, int64_t lo, const weft_tensor* values,
                           bool accumulate) {
  int64_t all = -1;
  weft_tensor* p = positions(g, lo);
  weft_tensor* p1 = p ? weft_reshape(p, &all, 1) : NULL;
  weft_tensor* v1 = p1 ? weft_reshape(values, &all, 1) : NULL;
  const weft_tensor* idx[1] = {p1};
  weft_tensor* r = v1 ? weft_index_put(flat, idx, 1, v1, accumulate) : NULL;
  weft_tensor_release(p);
  weft_tensor_release(p1);
  weft_tensor_release(v1);
  return r;
}

/* flat[positions of g]: g's elements of a flat buffer, in g's shape. */
static weft_tensor* take_at(const weft_tensor* flat, const weft__geom* g, int64_t lo) {
  weft_tensor* p = positions(g, lo);
  const weft_tensor* idx[1] = {p};
  weft_tensor* r = p ? weft_index_tensor(flat, idx, 1) : NULL;
  weft_tensor_release(p);
  return r;
}

/* The base-shaped gradient with the view's part replaced: the view's
 * gradient summed into zeros (AsStridedBackward0: replace NULL, so from
 * zeros) or the base's gradient with that part overwritten (CopySlices). */
static weft_tensor* recorded_base_grad(const weft_node* n, const weft_tensor* base_grad, const weft_tensor* view_grad) {
  int64_t lo;
  weft_tensor* flat = zero_storage(n, view_grad, &lo);
  weft_tensor* b = flat && base_grad ? put_at(flat, &n->geom[0], lo, base_grad, false) : weft_tensor_retain(flat);
  weft_tensor* w = b ? put_at(b, &n->geom[1], lo, view_grad, !base_grad) : NULL;
  weft_tensor* r = w ? take_at(w, &n->geom[0], lo) : NULL;
  weft_tensor_release(flat);
  weft_tensor_release(b);
  weft_tensor_release(w);
  return r;
}

/* CopySlices recorded: the base's gradient at the view's place, through the write's node. */
static weft_status copy_slices_recorded(weft_node* n, const weft_tensor* grad, weft_tensor** out) {
  int64_t lo;
  weft_tensor* flat = zero_storage(n, grad, &lo);
  weft_tensor* b = flat ? put_at(flat, &n->geom[0], lo, grad, false) : NULL;
  weft_tensor* slice = b ? take_at(b, &n->geom[1], lo) : NULL;
  weft_status s = slice ? weft__apply_formula(n->fn, &slice, true, out) : weft_last_status();
  weft_tensor* part = s || out[0] ? NULL : weft_zeros_like(slice, (weft_dtype)-1, (weft_memory_format)-1);
  weft_tensor* r = s ? NULL : recorded_base_grad(n, grad, out[0] ? out[0] : part);
  if (!s && !r) s = weft_last_status();
  weft_tensor_release(out[0]);
  out[0] = r;
  weft_tensor* tmp[] = {flat, b, slice, part};
  for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) weft_tensor_release(tmp[i]);
  return s;
}

/* AsStridedBackward0: the view's gradient placed where the view sits in the base. */
static weft_status as_strided_apply(weft_node* n, const weft_tensor* grad, bool create_graph, weft_tensor** out) {
  if (!n->next[0].node) return WEFT_OK;
  if (create_graph) return (out[0] = recorded_base_grad(n, NULL, grad)) ? WEFT_OK : weft_last_status();
  weft_tensor *b, *v;
  weft_status s = zeroed_base_and_view(n, grad, &b, &v);
  if (!s) s = weft_copy_(v, grad);
  weft_tensor_release(v);
  if (s) weft_tensor_release(b);
  else out[0] = b;
  return s;
}

/* CopySlices: the base's gradient with the view's part replaced by what the
 * in-place node gives for its self; its other inputs get their gradients. */
static weft_status copy_slices_apply(weft_node* n, const weft_tensor* grad, bool create_graph, weft_tensor** out) {
  if (create_graph) return copy_slices_recorded(n, grad, out);
  weft_tensor *b, *v, *slice = NULL;
  weft_status s = zeroed_base_and_view(n, grad, &b, &v);
  if (!s) s = weft_copy_(b, grad);
  if (!s && !(slice = weft_clone(v, (weft_memory_format)-1))) s = weft_last_status();
  if (!s) s = weft__apply_formula(n->fn, &slice, create_graph, out);
  /* the write replaced the view's elements: their gradient is the write's gradient for self */
  if (!s) s = out[0] ? weft_copy_(v, out[0]) : weft_fill_(v, 0.0);
  weft_tensor_release(out[0]);
  out[0] = s ? NULL : weft_tensor_retain(b);
  weft_tensor_release(slice);
  weft_tensor_release(v);
  weft_tensor_release(b);
  return s;
}

static weft_node* geom_node(const char* name, const weft_tensor* base, const weft_tensor* view,
                            weft_status (*apply)(weft_node*, const weft_tensor*, bool, weft_tensor**), int32_t nnext) {
  weft_node* n = weft__node_new(name, nnext, weft__next_seq());
  if (!n) return NULL;
  if (!(n->geom = calloc(2, sizeof *n->geom))) {
    weft_node_release(n);
    return weft__error_null(WEFT_OUT_OF_MEMORY, "out of memory: autograd node");
  }
  geom_of(base, &n->geom[0]);
  geom_of(view, &n->geom[1]);
  n->apply = apply;
  return n;
}

weft_node* weft__view_node_over(weft_node* cs) {
  weft_node* n = weft__node_new("AsStridedBackward0", 1, weft__next_seq());
  if (!n) return NULL;
  if (!(n->geom = malloc(2 * sizeof *n->geom))) {
    weft_node_release(n);
    return weft__error_null(WEFT_OUT_OF_MEMORY, "out of memory: autograd node");
  }
  memcpy(n->geom, cs->geom, 2 * sizeof *n->geom);
  n->apply = as_strided_apply;
  n->next[0] = (weft__edge){weft_node_retain(cs), 0};
  return n;
}

/* ---- a view's grad_fn after writes ---- */
static void set_grad_fn(weft_tensor* t, weft__meta* m, weft_node* n) {
  weft_tensor** r = m->grad_fn ? weft__retained_slot(m->grad_fn, m->output_nr) : NULL;
  if (r && *r == t) {
    *r = NULL;
    n->retained = t;
  }
  weft_node_release(m->grad_fn);
  m->grad_fn = n;
  m->output_nr = 0;
  t->requires_grad = true;
}

void weft__view_refresh(weft_tensor* t) {
  weft__meta* m = weft__meta_peek(t);
  if (!m || !m->base) return;
  uint32_t now = weft_tensor_version(t);
  if (now == m->attr_version) return;
  if (!m->base->requires_grad) {
    m->attr_version = now;
    return;
  }
  weft_node* n = geom_node("AsStridedBackward0", m->base, t, as_strided_apply, 1);
  if (!n) return; /* the old grad_fn stays; the error is in weft_last_error */
  if (weft__gradient_edge(m->base, &n->next[0])) {
    weft_node_release(n);
    return;
  }
  set_grad_fn(t, m, n);
  m->attr_version = now;
}

/* ---- check_inplace ---- */
static weft_status view_rebase_error(const weft__meta* m) {
  if (m->creation == WEFT__VIEW_NO_GRAD)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
                       "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
                       "your code by moving both the view and the inplace either both inside the noGrad block "
                       "(if you don't want the inplace to be tracked) or both outside (if you want the inplace to "
                       "be tracked).");
  const char* tail = "This view is the output of a function that returns multiple views. Such functions do not "
                     "allow the output views to be modified inplace. You should replace the inplace operation by "
                     "an out-of-place one.";
  if (!m->grad_fn) /* split of a tensor that did not require grad: PyTorch words it so too */
    return weft__error(WEFT_INVALID_ARGUMENT, "A view was created in no_grad mode and is being modified inplace "
                       "with grad mode enabled. %s", tail);
  return weft__error(WEFT_INVALID_ARGUMENT, "Output %d of %s is a view and is being modified inplace. %s",
                     m->output_nr, m->grad_fn->name, tail);
}

weft_status weft__check_inplace(weft_tensor* self) {
  weft__view_refresh(self);
  weft__meta* m = weft__meta_peek(self);
  if (m && m->base) {
    if (m->creation != WEFT__VIEW_DEFAULT) return view_rebase_error(m);
    if (self->requires_grad && weft_is_leaf(m->base))
      return weft__error(WEFT_INVALID_ARGUMENT,
                         "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
  if (self->requires_grad && weft_is_leaf(self))
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "a leaf Variable that requires grad is being used in an in-place operation.");
  return WEFT_OK;
}

/* ---- rebase_history ---- */
/* The base's history continues at CopySlices(n): n's self edge becomes the
 * base's old history (the view's own history is part of it). */
static weft_status rebase_view(weft_tensor* self, weft__meta* m, weft_node* n) {
  weft_tensor* base = m->base;
  if (n->nnext == 0 || n->edge_arg[0] != 0) {
    weft_node_release(n);
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: an in-place write to a view needs the gradient of its self",
                       n->name);
  }
  weft_node* cs = geom_node("CopySlices", base, self, copy_slices_apply, n->nnext);
  weft__meta* bm = cs ? weft__meta_get(base) : NULL;
  weft__edge old;
  weft_status s = bm ? weft__gradient_edge(base, &old) : weft_last_status();
  if (s) {
    weft_node_release(cs);
    weft_node_release(n);
    return s;
  }
  weft_node_release(n->next[0].node);
  n->next[0] = old;
  for (int32_t e = 0; e < n->nnext; e++) {
    cs->next[e] = n->next[e];
    weft_node_retain(cs->next[e].node);
  }
  cs->fn = n;
  n->wrapper = cs;
  set_grad_fn(base, bm, cs);
  self->requires_grad = true; /* its grad_fn comes from the base at the next look (version changed) */
  return WEFT_OK;
}

weft_status weft__rebase_history(weft_tensor* self, weft_node* n) {
  weft__meta* m = weft__meta_get(self);
  if (!m) {
    weft_node_release(n);
    return weft_last_status();
  }
  if (m->base && m->creation == WEFT__VIEW_DEFAULT) return rebase_view(self, m, n);
  set_grad_fn(self, m, n);
  m->attr_version = weft_tensor_version(self);
  return WEFT_OK;
}
