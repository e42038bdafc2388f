/* AutogradMeta on tensors, grad mode, and the tensor-level autograd API
 * (torch/csrc/autograd/variable.cpp, grad_mode.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd_internal.h"

/* ---- lifetime ---- */
weft_tensor** weft__retained_slot(weft_node* n, int32_t output_nr) {
  return n->nout > 1 && output_nr >= 0 && output_nr < n->nout ? &n->retained_outs[output_nr] : &n->retained;
}

/* t stops retaining its grad: its node no longer points back at it */
static void forget_retained(const weft__meta* m, const weft_tensor* t) {
  if (!m->grad_fn) return;
  weft_tensor** r = weft__retained_slot(m->grad_fn, m->output_nr);
  if (*r == t) *r = NULL;
}

static void meta_free(void* p) {
  weft__meta* m = p;
  weft_tensor_release(m->grad);
  weft__hooks_free(&m->hooks);
  forget_retained(m, m->owner);
  weft_node_release(m->grad_fn);
  weft_tensor_release(m->base);
  free(m);
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init_body(void) {
  weft_init();
  atomic_store(&weft__autograd_meta_free, meta_free);
  if (weft__register_kernels() != WEFT_OK) {
    fprintf(stderr, "weft: autograd kernel registration failed: %s\n", weft_last_error());
    abort();
  }
}
/* Registration waits until the first tensor needs autograd: a program that
 * never uses it keeps the plain tables. */
void weft__autograd_init(void) { pthread_once(&init_once, init_body); }

weft__meta* weft__meta_get(weft_tensor* t) {
  if (t->autograd_meta) return t->autograd_meta;
  weft__autograd_init();
  weft__meta* m = calloc(1, sizeof *m);
  if (!m) return weft__error_null(WEFT_OUT_OF_MEMORY, "out of memory: autograd metadata");
  m->owner = t;
  t->autograd_meta = m;
  return m;
}

/* ---- grad mode: the Autograd keys excluded on this thread ---- */
bool weft_grad_enabled(void) { return (weft_tls_excluded() & weft_autograd_keyset()) == 0; }

bool weft_set_grad_enabled(bool on) {
  bool was = weft_grad_enabled();
  weft_keyset ex = weft_tls_excluded() & ~weft_autograd_keyset();
  if (!on) ex |= weft_autograd_keyset();
  weft__dtls.excluded_x = ex ^ WEFT__DEFAULT_EXCLUDED;
  return was;
}

/* ---- state ---- */
static bool is_float(weft_dtype d) {
  return d == WEFT_FLOAT32 || d == WEFT_FLOAT64 || d == WEFT_FLOAT16 || d == WEFT_BFLOAT16;
}

weft_status weft_set_requires_grad(weft_tensor* t, bool on) {
  weft__meta* pm = weft__meta_peek(t);
  if (pm && pm->grad_fn) {
    if (on) return WEFT_OK;
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "you can only change requiresGrad flags of leaf variables. If you want to use a "
                       "computed variable in a subgraph that doesn't require differentiation use "
                       "varNoGrad = var.detach().");
  }
  if (on && !is_float(t->dtype))
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "only Tensors of floating point dtype can require gradients (got %s)",
                       weft_dtype_name(t->dtype));
  if (!on && !pm) return WEFT_OK;
  weft__meta* m = weft__meta_get(t);
  if (!m) return weft_last_status();
  m->leaf_requires_grad = on;
  t->requires_grad = on;
  return WEFT_OK;
}

bool weft_requires_grad(const weft_tensor* t) { return t->requires_grad; }
bool weft_is_leaf(const weft_tensor* t) {
  weft__view_refresh((weft_tensor*)t);
  const weft__meta* m = weft__meta_peek(t);
  return !m || !m->grad_fn;
}

weft_tensor* weft_tensor_grad(const weft_tensor* t) {
  const weft__meta* m = weft__meta_peek(t);
  return m && m->grad ? weft_tensor_retain(m->grad) : NULL;
}

void weft__shape_str(const int64_t* sizes, int64_t ndim, char* buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int64_t i = 0; i < ndim && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)sizes[i]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

bool weft__same_sizes(const weft_tensor* t, const int64_t* sizes, int64_t ndim) {
  return t->ndim == ndim && memcmp(t->sizes, sizes, sizeof(int64_t) * (size_t)ndim) == 0;
}

weft_status weft__grad_mismatch(const char* what, const weft_tensor* got, const weft_tensor* want) {
  char a[256], b[256];
  weft__shape_str(got->sizes, got->ndim, a, sizeof a);
  weft__shape_str(want->sizes, want->ndim, b, sizeof b);
  return weft__error(WEFT_INVALID_ARGUMENT, "%s: got %s %s but expected %s %s", what, weft_dtype_name(got->dtype), a,
                     weft_dtype_name(want->dtype), b);
}

weft_status weft_set_grad(weft_tensor* t, const weft_tensor* g) {
  if (g && (!weft__same_sizes(g, t->sizes, t->ndim) || g->dtype != t->dtype || g->device != t->device))
    return weft__grad_mismatch("assigned grad has data of a different size, type or device", g, t);
  if (!g && !t->autograd_meta) return WEFT_OK;
  weft__meta* m = weft__meta_get(t);
  if (!m) return weft_last_status();
  weft_tensor* old = m->grad;
  m->grad = g ? weft_tensor_retain((weft_tensor*)g) : NULL;
  weft_tensor_release(old);
  return WEFT_OK;
}

weft_status weft_retain_grad(weft_tensor* t) {
  weft__view_refresh(t);
  if (!t->requires_grad)
    return weft__error(WEFT_INVALID_ARGUMENT, "can't retainGrad on Tensor that has requiresGrad=false");
  weft__meta* m = weft__meta_get(t);
  if (!m) return weft_last_status();
  if (!m->grad_fn) return WEFT_OK; /* leaves keep their grad anyway */
  if (!m->retains_grad) m->retain_first = !m->hooked;
  m->retains_grad = true;
  *weft__retained_slot(m->grad_fn, m->output_nr) = t;
  return WEFT_OK;
}

bool weft_retains_grad(const weft_tensor* t) {
  const weft__meta* m = weft__meta_peek(t);
  return m && m->retains_grad;
}

/* A view's grad_fn is recomputed here when its storage was written since (VariableHooks::grad_fn). */
weft_node* weft_grad_fn(const weft_tensor* t) {
  weft__view_refresh((weft_tensor*)t);
  const weft__meta* m = weft__meta_peek(t);
  return m ? m->grad_fn : NULL;
}

int64_t weft_output_nr(const weft_tensor* t) {
  const weft__meta* m = weft__meta_peek(t);
  return m ? m->output_nr : 0;
}

weft_tensor* weft__alias(const weft_tensor* t) {
  return weft__tensor_new(t->storage, t->sizes, t->strides, t->ndim, t->storage_offset, t->dtype);
}

weft_tensor* weft_detach(const weft_tensor* t) { return weft__alias(t); }

weft_status weft_detach_(weft_tensor* t) {
  weft__meta* m = weft__meta_peek(t);
  if (!m) return WEFT_OK;
  if (m->base)
    return weft__error(WEFT_INVALID_ARGUMENT, "Can't detach views in-place. Use detach() instead.");
  forget_retained(m, t);
  weft_node_release(m->grad_fn);
  m->grad_fn = NULL;
  m->output_nr = 0;
  m->leaf_requires_grad = false;
  m->retains_grad = false;
  t->requires_grad = false;
  return WEFT_OK;
}

weft_status weft__gradient_edge(weft_tensor* t, weft__edge* out) {
  out->node = NULL;
  out->input_nr = 0;
  weft__view_refresh(t);
  weft__meta* m = weft__meta_peek(t);
  if (!t->requires_grad || !m) return WEFT_OK;
  if (m->grad_fn) {
    out->node = weft_node_retain(m->grad_fn);
    out->input_nr = m->output_nr;
    return WEFT_OK;
  }
  if (!m->grad_acc) {
    weft_node* n = weft__node_new("AccumulateGrad", 0, WEFT__SEQ_MAX);
    if (!n) return weft_last_status();
    n->variable = weft_tensor_retain(t);
    m->grad_acc = n; /* weak: the node clears it when it dies */
    out->node = n;
    return WEFT_OK;
  }
  out->node = weft_node_retain(m->grad_acc);
  return WEFT_OK;
}
