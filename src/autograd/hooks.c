/* Tensor hooks (torch/csrc/autograd/python_hook.cpp, Tensor.register_hook):
 * a leaf keeps its hooks on its AutogradMeta (AccumulateGrad runs them on the
 * gradient before accumulating it); a non-leaf's go on its grad_fn, keyed by
 * output_nr, as PyTorch's pre-hooks, so they outlive the tensor handle as
 * they do there. */
#include <stdlib.h>

#include "autograd/autograd_internal.h"

static weft_status push_hook(weft__hooks* h, weft__hook e) {
  if (h->n == h->cap) {
    int32_t cap = h->cap ? h->cap * 2 : 4;
    weft__hook* items = realloc(h->items, sizeof *items * (size_t)cap);
    if (!items) return weft__error(WEFT_OUT_OF_MEMORY, "out of memory: register_hook");
    h->items = items;
    h->cap = cap;
  }
  h->items[h->n++] = e;
  return WEFT_OK;
}

weft_status weft_register_hook(weft_tensor* t, weft_grad_hook fn, void* ctx, weft_hook_free free_ctx) {
  if (!fn) return weft__error(WEFT_INVALID_ARGUMENT, "register_hook: the hook must not be NULL");
  weft__view_refresh(t);
  if (!t->requires_grad)
    return weft__error(WEFT_INVALID_ARGUMENT, "cannot register a hook on a tensor that doesn't require gradient");
  weft__meta* m = weft__meta_get(t);
  if (!m) return weft_last_status();
  weft__hook e = {fn, ctx, free_ctx, m->grad_fn ? m->output_nr : 0};
  weft_status s = push_hook(m->grad_fn ? &m->grad_fn->hooks : &m->hooks, e);
  if (!s) m->hooked = true;
  return s;
}

static void drop(weft__hook* e) {
  if (e->free_ctx) e->free_ctx(e->ctx);
  e->fn = NULL;
  e->free_ctx = NULL;
}

/* removes dead entries once no run is iterating the list */
static void sweep(weft__hooks* h) {
  int32_t k = 0;
  for (int32_t i = 0; i < h->n; i++)
    if (h->items[i].fn) h->items[k++] = h->items[i];
  h->n = k;
}

static bool remove_from(weft__hooks* h, const void* ctx) {
  for (int32_t i = 0; i < h->n; i++) {
    if (!h->items[i].fn || h->items[i].ctx != ctx) continue;
    drop(&h->items[i]);
    if (!h->busy) sweep(h);
    return true;
  }
  return false;
}

bool weft_remove_hook(weft_tensor* t, const void* ctx) {
  weft__meta* m = weft__meta_peek(t);
  if (!m) return false;
  return remove_from(&m->hooks, ctx) || (m->grad_fn && remove_from(&m->grad_fn->hooks, ctx));
}

void weft__hooks_free(weft__hooks* h) {
  for (int32_t i = 0; i < h->n; i++) drop(&h->items[i]);
  free(h->items);
  h->items = NULL;
  h->n = h->cap = 0;
}

/* A replacement must be a gradient of the same tensor (check_single_result). */
static weft_status check_replacement(const weft_tensor* was, const weft_tensor* r) {
  if (r->dtype != was->dtype || r->device != was->device)
    return weft__error(WEFT_INVALID_ARGUMENT, "hook has changed the type of value (was %s got %s)",
                       weft_dtype_name(was->dtype), weft_dtype_name(r->dtype));
  if (!weft__same_sizes(r, was->sizes, was->ndim))
    return weft__error(WEFT_INVALID_ARGUMENT, "hook has changed the size of value");
  return WEFT_OK;
}

static weft_status call(const weft__hook* e, weft_tensor** g) {
  weft_tensor* r = NULL;
  weft_status s = e->fn(e->ctx, *g, &r);
  if (!s && r) s = check_replacement(*g, r);
  if (s || !r) {
    weft_tensor_release(r);
    return s;
  }
  weft_tensor_release(*g);
  *g = r;
  return WEFT_OK;
}

/* Hooks registered during the run wait for the next one (n is read once);
 * the list may move (realloc), so entries are read by index. */
weft_status weft__hooks_run(weft__hooks* h, int32_t nr, weft_tensor** g) {
  if (!*g || !h->n) return WEFT_OK;
  weft_status s = WEFT_OK;
  h->busy++;
  for (int32_t i = 0, n = h->n; i < n && !s; i++) {
    weft__hook e = h->items[i];
    if (e.fn && e.output_nr == nr) s = call(&e, g);
  }
  if (--h->busy == 0) sweep(h);
  return s;
}

weft_status weft_apply_hooks(weft_tensor* t, const weft_tensor* grad, weft_tensor** out) {
  *out = weft_tensor_retain((weft_tensor*)grad);
  weft__view_refresh(t);
  weft__meta* m = weft__meta_peek(t);
  if (!m) return WEFT_OK;
  weft_status s = m->grad_fn ? weft__hooks_run(&m->grad_fn->hooks, m->output_nr, out) : weft__hooks_run(&m->hooks, 0, out);
  if (s) {
    weft_tensor_release(*out);
    *out = NULL;
  }
  return s;
}
