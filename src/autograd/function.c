/* Graph nodes, saved variables and the dispatcher kernels of autograd: the
 * recording kernel every formula of derivatives.def registers on the
 * Autograd keys (VariableType in PyTorch), the refusal for ops without a
 * formula, and ADInplaceOrView's version bump for ops that write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd_internal.h"

/* ---- nodes ---- */
static atomic_uint_fast64_t next_seq;
uint64_t weft__next_seq(void) { return atomic_fetch_add(&next_seq, 1); }

weft_node* weft__node_new(const char* name, int32_t nnext, uint64_t seq) {
  weft_node* n = calloc(1, sizeof *n);
  if (!n || (nnext && !(n->next = calloc((size_t)nnext, sizeof *n->next)))) {
    free(n);
    return weft__error_null(WEFT_OUT_OF_MEMORY, "out of memory: autograd node");
  }
  atomic_init(&n->refcount, 1);
  n->name = name;
  n->nnext = nnext;
  n->seq = seq;
  return n;
}

weft_node* weft_node_retain(weft_node* n) {
  if (n) atomic_fetch_add_explicit(&n->refcount, 1, memory_order_relaxed);
  return n;
}

/* Only the saved tensors go: the other arguments (numbers, dims) are kept, so a
 * node that saved no tensor can run again without retainGraph, as in PyTorch. */
void weft__node_release_saved(weft_node* n) {
  for (int32_t i = 0; n->args && i < n->nargs; i++)
    if (n->args[i].tag == WEFT_IV_TENSOR) weft_ivalue_destroy(&n->args[i]);
  weft_tensor_release(n->result);
  weft_tensor_release(n->result2);
  weft_tensor_release(n->result3);
  n->result = n->result2 = n->result3 = NULL;
  n->released = true;
  if (n->fn) weft__node_release_saved(n->fn);
}

void weft_node_release(weft_node* n) {
  if (!n || atomic_fetch_sub_explicit(&n->refcount, 1, memory_order_acq_rel) != 1) return;
  for (int32_t i = 0; i < n->nnext; i++) weft_node_release(n->next[i].node);
  weft__node_release_saved(n);
  for (int32_t i = 0; n->args && i < n->nargs; i++) weft_ivalue_destroy(&n->args[i]);
  if (n->variable) {
    weft__meta* m = weft__meta_peek(n->variable);
    if (m && m->grad_acc == n) m->grad_acc = NULL;
    weft_tensor_release(n->variable);
  }
  free(n->next);
  free(n->edge_arg);
  free(n->edge_elem);
  free(n->edge_in);
  free(n->args);
  free(n->versions);
  free(n->in);
  free(n->geom);
  free(n->retained_outs);
  weft__hooks_free(&n->hooks);
  weft_node_release(n->fn);
  free(n);
}

const char* weft_node_name(const weft_node* n) { return n->name; }
int64_t weft_node_num_next(const weft_node* n) { return n->nnext; }
uint64_t weft_node_sequence_nr(const weft_node* n) { return n->seq; }
weft_tensor* weft_node_variable(const weft_node* n) { return n->variable; }
weft_node* weft_node_next(const weft_node* n, int64_t i, int64_t* input_nr) {
  if (i < 0 || i >= n->nnext) return NULL;
  if (input_nr) *input_nr = n->next[i].input_nr;
  return n->next[i].node;
}

/* ---- saved variables ---- */
/* is_result: t is n's saved output, so output 0 of n (its own meta is gone) */
static weft_status version_error(weft_node* n, const weft_tensor* t, uint32_t expected, bool is_result) {
  char shape[256], out[160] = "";
  weft__shape_str(t->sizes, t->ndim, shape, sizeof shape);
  const weft__meta* m = weft__meta_peek(t);
  if (is_result) snprintf(out, sizeof out, ", which is output 0 of %s,", n->name);
  else if (m && m->grad_fn) snprintf(out, sizeof out, ", which is output %d of %s,", m->output_nr, m->grad_fn->name);
  return weft__error(WEFT_INVALID_ARGUMENT,
                     "one of the variables needed for gradient computation has been modified by an inplace "
                     "operation: [%s %s]%s is at version %u; expected version %u instead. (needed by %s)",
                     weft_dtype_name(t->dtype), shape, out, weft_tensor_version(t), expected, n->name);
}

static weft_status freed_error(void) {
  return weft__error(WEFT_INVALID_ARGUMENT,
                     "Trying to backward through the graph a second time (or directly access saved tensors "
                     "after they have already been freed). Saved intermediate values of the graph are freed "
                     "when you call backward() or autograd.grad(). Specify retainGraph: true if you need to "
                     "backward through the graph a second time or if you need to access saved tensors after "
                     "calling backward.");
}

/* The saved output, as PyTorch's SavedVariable::unpack: when the backward
 * pass is recorded it is an output of this very node again, or (an
 * in-place write to a view, n inside a CopySlices) the view of the base's
 * history after the write. */
static weft_tensor* unpack_output(weft_node* n, const weft_tensor* saved, int32_t nr, bool create_graph) {
  weft_tensor* r = weft__alias(saved);
  if (!r || !create_graph || !weft_dtype_is_floating(r->dtype)) return r; /* saved indices stay plain */
  weft__meta* m = weft__meta_get(r);
  if (!m) {
    weft_tensor_release(r);
    return NULL;
  }
  m->grad_fn = n->wrapper ? weft__view_node_over(n->wrapper) : weft_node_retain(n);
  if (!m->grad_fn) {
    weft_tensor_release(r);
    return NULL;
  }
  m->output_nr = nr;
  r->requires_grad = true;
  return r;
}

static weft_tensor* unpack_result(weft_node* n, bool create_graph) { return unpack_output(n, n->result, 0, create_graph); }

/* save_result 4: every output (two or three: linalg_qr's Q and R,
 * _linalg_eigh's values and vectors, _linalg_svd's U, S, Vh), each as the
 * output nr it is of n again under create_graph */
static weft_status unpack_outputs(weft_node* n, weft__bctx* c, bool create_graph) {
  weft_tensor* saved[3] = {n->result, n->result2, n->result3};
  uint32_t versions[3] = {n->result_version, n->result2_version, n->result3_version};
  weft_tensor** into[3] = {&c->result, &c->result2, &c->result3};
  for (int32_t i = 0; i < n->nout; i++) {
    if (weft_tensor_version(saved[i]) != versions[i]) return version_error(n, saved[i], versions[i], i == 0);
    if (!(*into[i] = unpack_output(n, saved[i], i, create_graph))) return weft_last_status();
  }
  return WEFT_OK;
}

/* save_result 2: the statistics outputs, plain (they are not differentiated) */
static weft_status unpack_stats(weft_node* n, weft__bctx* c) {
  if (weft_tensor_version(n->result) != n->result_version) return version_error(n, n->result, n->result_version, false);
  if (weft_tensor_version(n->result2) != n->result2_version)
    return version_error(n, n->result2, n->result2_version, false);
  if (!(c->result = weft__alias(n->result)) || !(c->result2 = weft__alias(n->result2))) return weft_last_status();
  return WEFT_OK;
}

weft_status weft__unpack_saved(weft_node* n, weft__bctx* c, bool create_graph) {
  if (n->released && n->saved_something) return freed_error();
  for (int32_t i = 0; i < n->nargs; i++) {
    if (!(n->f->save_mask & (1u << i)) || n->args[i].tag != WEFT_IV_TENSOR) continue;
    weft_tensor* t = n->args[i].u.t;
    if (weft_tensor_version(t) != n->versions[i]) return version_error(n, t, n->versions[i], false);
    c->saved[i] = weft_tensor_retain(t);
  }
  if (n->f->save_result == 2) return unpack_stats(n, c);
  if (n->f->save_result == 4) return unpack_outputs(n, c, create_graph);
  if (n->f->save_result) {
    if (weft_tensor_version(n->result) != n->result_version) return version_error(n, n->result, n->result_version, true);
    if (!(c->result = unpack_result(n, create_graph))) return weft_last_status();
  }
  return WEFT_OK;
}

/* ---- sum_to_size: a broadcast gradient back to its input's shape ---- */
weft_tensor* weft__sum_to_size(const weft_tensor* g, const int64_t* sizes, int64_t ndim) {
  int64_t lead = g->ndim - ndim, dims[WEFT_MAX_DIMS], nd = 0;
  for (int64_t i = 0; i < g->ndim; i++)
    if (i < lead || (sizes[i - lead] == 1 && g->sizes[i] != 1)) dims[nd++] = i;
  if (nd == 0) return weft_tensor_retain((weft_tensor*)g);
  weft_tensor* r = weft_sum_dim(g, dims, nd, true, (weft_dtype)-1);
  if (!r || lead == 0) return r;
  weft_tensor* v = weft_view(r, sizes, ndim);
  weft_tensor_release(r);
  return v;
}

/* ---- the recording kernel ---- */
static bool list_requires_grad(const weft_ivalue* v) {
  for (int64_t j = 0; j < v->u.tlist.len; j++)
    if (v->u.tlist.data[j] && v->u.tlist.data[j]->requires_grad) return true;
  return false;
}

static uint32_t args_needing_grad(const weft__formula* f, const weft_ivalue* a, int n) {
  uint32_t needs = 0;
  for (int i = 0; i < n; i++) {
    if (!(f->diff_mask & (1u << i))) continue;
    if ((a[i].tag == WEFT_IV_TENSOR && a[i].u.t->requires_grad) ||
        (a[i].tag == WEFT_IV_TENSOR_LIST && list_requires_grad(&a[i])))
      needs |= 1u << i;
  }
  return needs;
}

static void input_meta(weft__input_meta* im, const weft_tensor* t) {
  memcpy(im->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
  im->ndim = t->ndim;
  im->dtype = t->dtype;
  im->device = t->device;
}

static weft_status save_args(weft_node* n, const weft__formula* f, const weft_ivalue* a, int nargs) {
  n->nargs = nargs;
  n->args = calloc((size_t)nargs, sizeof *n->args);
  n->versions = calloc((size_t)nargs, sizeof *n->versions);
  n->in = calloc((size_t)nargs, sizeof *n->in);
  if (!n->args || !n->versions || !n->in) return weft__error(WEFT_OUT_OF_MEMORY, "out of memory: autograd node");
  for (int i = 0; i < nargs; i++) {
    /* a differentiable Tensor[] is not kept: its edges carry what backward needs */
    if (a[i].tag == WEFT_IV_TENSOR_LIST && (f->diff_mask & (1u << i)) && !(f->save_mask & (1u << i))) continue;
    if (a[i].tag == WEFT_IV_TENSOR) {
      const weft_tensor* t = a[i].u.t;
      input_meta(&n->in[i], t);
      if (!(f->save_mask & (1u << i))) continue;
      n->versions[i] = weft_tensor_version(t);
      n->saved_something = true;
    }
    weft_status s = weft_ivalue_copy(&n->args[i], &a[i]);
    if (s) return s;
  }
  return WEFT_OK;
}

/* One edge per element of a differentiable Tensor[] (the formula's gl[k]). */
static weft_status add_list_edges(weft_node* n, const weft_ivalue* v, int arg, int32_t ne) {
  if (v->u.tlist.len > 64)
    return weft__error(WEFT_NOT_IMPLEMENTED, "autograd: %s of more than 64 tensors is not supported yet",
                       n->name);
  if (!n->edge_elem) {
    n->edge_elem = malloc(sizeof *n->edge_elem * (size_t)ne);
    n->edge_in = calloc((size_t)v->u.tlist.len, sizeof *n->edge_in);
    if (!n->edge_elem || !n->edge_in) return weft__error(WEFT_OUT_OF_MEMORY, "out of memory: autograd node");
    for (int32_t e = 0; e < ne; e++) n->edge_elem[e] = -1;
  }
  for (int64_t k = 0; k < v->u.tlist.len; k++) {
    input_meta(&n->edge_in[k], v->u.tlist.data[k]);
    n->edge_arg[n->nnext] = (int8_t)arg;
    n->edge_elem[n->nnext] = (int16_t)k;
    weft_status s = weft__gradient_edge(v->u.tlist.data[k], &n->next[n->nnext++]);
    if (s) return s;
  }
  return WEFT_OK;
}

static weft_status add_edges(weft_node* n, const weft__formula* f, const weft_ivalue* a, int nargs) {
  int32_t ne = 0;
  for (int i = 0; i < nargs; i++) {
    if (!(f->diff_mask & (1u << i))) continue;
    if (a[i].tag == WEFT_IV_TENSOR) ne++;
    if (a[i].tag == WEFT_IV_TENSOR_LIST) ne += (int32_t)a[i].u.tlist.len;
  }
  n->next = calloc((size_t)(ne ? ne : 1), sizeof *n->next);
  n->edge_arg = calloc((size_t)(ne ? ne : 1), 1);
  if (!n->next || !n->edge_arg) return weft__error(WEFT_OUT_OF_MEMORY, "out of memory: autograd node");
  for (int i = 0; i < nargs; i++) {
    if (!(f->diff_mask & (1u << i))) continue;
    weft_status s = WEFT_OK;
    if (a[i].tag == WEFT_IV_TENSOR) {
      n->edge_arg[n->nnext] = (int8_t)i;
      s = weft__gradient_edge(a[i].u.t, &n->next[n->nnext++]);
    } else if (a[i].tag == WEFT_IV_TENSOR_LIST) {
      s = add_list_edges(n, &a[i], i, ne);
    }
    if (s) return s;
  }
  return WEFT_OK;
}

static weft_node* record_node(const weft__formula* f, const weft_ivalue* a, int nargs) {
  weft_node* n = weft__node_new(f->node_name, 0, weft__next_seq());
  if (!n) return NULL;
  n->f = f;
  if (save_args(n, f, a, nargs) || add_edges(n, f, a, nargs)) {
    weft_node_release(n);
    return NULL;
  }
  return n;
}

/* Set while an Autograd kernel runs the op below it: grad mode is on for the
 * caller though the Autograd keys are excluded (how ADInplaceOrView tells a
 * view made with grad from one made under noGrad). */
static WEFT_THREAD_LOCAL bool below_autograd;
bool weft__caller_grad_enabled(void) { return below_autograd || weft_grad_enabled(); }

static weft_status redispatch_below(const weft_op* op, weft_keyset ks, weft_keyset after, weft_stack* st) {
  weft_tls_guard g = weft_dispatch_below_ad_inplace_or_view();
  bool was = below_autograd;
  below_autograd = true;
  weft_status s = weft_op_redispatch_boxed(op, ks & after, st);
  below_autograd = was;
  weft_tls_restore(g);
  return s;
}

/* r becomes output nr of n: its grad_fn (a new reference to n) and output_nr. */
static weft_status set_output(weft_node* n, weft_tensor* r, int32_t nr) {
  weft__meta* m = weft__meta_get(r);
  if (!m) return weft_last_status();
  weft_node_release(m->grad_fn);
  m->grad_fn = weft_node_retain(n);
  m->output_nr = nr;
  m->attr_version = weft_tensor_version(r);
  r->requires_grad = true;
  return WEFT_OK;
}

/* The result r becomes output 0 of n; kept is the return the formula saves
 * (r itself, or the indices of a (values, indices) op). */
static weft_status attach_result(weft_node* n, weft_tensor* r, const weft_tensor* kept) {
  if (n->f->save_result) {
    if (!(n->result = weft__alias(kept))) return weft_last_status();
    n->result_version = weft_tensor_version(kept);
    n->saved_something = true;
  }
  return set_output(n, r, 0);
}

/* A forward with statistics: out becomes output 0 of n, the two statistics
 * are saved (as PyTorch's result1, result2). */
static weft_status attach_stats(weft_node* n, weft_tensor* out, const weft_tensor* s1, const weft_tensor* s2) {
  if (!(n->result = weft__alias(s1)) || !(n->result2 = weft__alias(s2))) return weft_last_status();
  n->result_version = weft_tensor_version(s1);
  n->result2_version = weft_tensor_version(s2);
  n->saved_something = true;
  return set_output(n, out, 0);
}

/* save_result 4: the two or three returns (bottom of the stack first) are
 * outputs 0, 1[, 2] of n, and saved (as PyTorch's SavedVariable of an
 * output; a multi-output node, as split's) */
static weft_status attach_all(weft_node* n, weft_stack* st, int nret) {
  weft_tensor* r[3] = {NULL, NULL, NULL};
  for (int i = 0; i < nret; i++) r[i] = weft_stack_peek(st, nret - 1 - i)->u.t;
  if (!(n->retained_outs = calloc((size_t)nret, sizeof *n->retained_outs)))
    return weft__error(WEFT_OUT_OF_MEMORY, "out of memory: autograd node");
  n->nout = nret;
  weft_tensor** into[3] = {&n->result, &n->result2, &n->result3};
  uint32_t* versions[3] = {&n->result_version, &n->result2_version, &n->result3_version};
  for (int i = 0; i < nret; i++) {
    if (!(*into[i] = weft__alias(r[i]))) return weft_last_status();
    *versions[i] = weft_tensor_version(r[i]);
  }
  n->saved_something = true;
  weft_status s = WEFT_OK;
  for (int32_t i = 0; i < nret && !s; i++) s = set_output(n, r[i], i);
  return s;
}

/* A Tensor[] return (split, unbind): every piece is an output of the one
 * node n, told apart by its output_nr, as PyTorch's multi-output nodes are. */
static weft_status attach_outputs(weft_node* n, const weft_ivalue* r) {
  int64_t len = r->u.tlist.len;
  if (len > INT32_MAX) return weft__error(WEFT_NOT_IMPLEMENTED, "autograd: %s of %lld outputs", n->name, (long long)len);
  if (len > 1 && !(n->retained_outs = calloc((size_t)len, sizeof *n->retained_outs)))
    return weft__error(WEFT_OUT_OF_MEMORY, "out of memory: autograd node");
  n->nout = (int32_t)len;
  weft_status s = WEFT_OK;
  for (int64_t j = 0; j < len && !s; j++) s = set_output(n, r->u.tlist.data[j], (int32_t)j);
  return s;
}

static bool is_input(const weft_ivalue* a, int nargs, const weft_tensor* r) {
  for (int i = 0; i < nargs; i++)
    if (a[i].tag == WEFT_IV_TENSOR && a[i].u.t == r) return true;
  return false;
}

/* A (Tensor, Tensor, Tensor) op (convolution_backward) records one node for
 * its one defined output (*r; NULL when the mask asked for none): a node with
 * several outputs is not supported yet, so a recorded call that asks for
 * more than one gradient is refused. */
static weft_status defined_output(const weft_op* op, weft_stack* st, weft_tensor** r) {
  *r = NULL;
  for (int i = 0; i < 3; i++) {
    weft_ivalue* v = weft_stack_peek(st, 2 - i);
    if (v->tag != WEFT_IV_TENSOR) continue;
    if (*r)
      return weft__error(WEFT_NOT_IMPLEMENTED,
                         "%s: with inputs that require grad, ask for one output at a time (an outputMask with one "
                         "true): an autograd node with several outputs is not supported yet",
                         weft_op_schema(op)->name);
    *r = v->u.t;
  }
  return WEFT_OK;
}

static weft_status autograd_kernel(const weft_op* op, weft_keyset ks, weft_stack* st, void* ctx) {
  const weft__formula* f = ctx;
  int nargs = weft_op_schema(op)->nargs;
  const weft_ivalue* a = st->v + st->size - nargs;
  weft_node* n = NULL;
  if (args_needing_grad(f, a, nargs) && !(n = record_node(f, a, nargs))) {
    weft_stack_drop(st, nargs);
    return weft_last_status();
  }
  /* the inputs, for the returned-its-input check below (still referenced by n or the caller) */
  weft_ivalue in[16];
  memcpy(in, a, sizeof(weft_ivalue) * (size_t)nargs);
  weft_status s = redispatch_below(op, ks, weft_after_autograd_keyset(), st);
  if (s || !n) {
    weft_node_release(n);
    return s;
  }
  /* (values, indices): only the values are differentiable; the indices are on top.
   * save_result 3 is the other way round (slogdet's (sign, logabsdet)).
   * (solution, residuals, rank, singular_values): the node owns the solution */
  int nret = weft_op_schema(op)->nreturns;
  bool second = nret == 2 && f->save_result == 3;
  const weft_ivalue* top = weft_stack_peek(st, nret == 2 && !second ? 1 : nret == 4 ? 3 : 0);
  weft_tensor* r = NULL;
  if ((nret == 2 || nret == 3) && f->save_result == 4) {
    s = attach_all(n, st, nret);
    weft_node_release(n); /* the outputs hold it */
    return s;
  }
  if (nret == 3 && f->save_result == 2) { /* (out, mean, invstd): the node owns out */
    r = weft_stack_peek(st, 2)->u.t;
    s = attach_stats(n, r, weft_stack_peek(st, 1)->u.t, weft_stack_peek(st, 0)->u.t);
    weft_node_release(n);
    return s;
  } else if (nret == 3) { /* (grad_input, grad_weight, grad_bias): the one asked for */
    if ((s = defined_output(op, st, &r)) || !r) { /* an error, or nothing asked for */
      weft_node_release(n);
      if (s) weft_stack_drop(st, 3);
      return s;
    }
  } else if (top->tag == WEFT_IV_TENSOR_LIST) {
    s = attach_outputs(n, top);
    weft_node_release(n); /* the outputs hold it */
    return s;
  } else {
    r = top->u.t;
  }
  /* `to` with nothing to do returns its input: no new node */
  if (!is_input(in, nargs, r)) s = attach_result(n, r, nret == 3 ? r : weft_stack_peek(st, second ? 1 : 0)->u.t);
  weft_node_release(n); /* the output holds it */
  return s;
}

/* ---- in-place ops: the out-of-place form's formula, then the history rebased ---- */
/* A formula that needs the pre-write self keeps a copy of it (PyTorch's
 * original_self = self.clone(), recorded: under createGraph the saved value
 * differentiates into self's history before the write). */
static weft_status save_original_self(weft_node* n) {
  if (!(n->f->save_mask & 1u) || n->args[0].tag != WEFT_IV_TENSOR) return WEFT_OK;
  weft_tensor* copy = weft_clone(n->args[0].u.t, (weft_memory_format)-1);
  if (!copy) return weft_last_status();
  weft_tensor_release(n->args[0].u.t);
  n->args[0].u.t = copy;
  n->versions[0] = weft_tensor_version(copy);
  return WEFT_OK;
}

static weft_node* record_inplace(const weft__formula* f, const weft_ivalue* a, int nargs) {
  weft_tensor* self = a[0].u.t;
  if (weft__check_inplace(self)) return NULL;
  weft_node* n = record_node(f, a, nargs);
  if (n && save_original_self(n)) {
    weft_node_release(n);
    return NULL;
  }
  return n;
}

/* The write's result is self after it: saved (post-write version) and rebased onto n. */
static weft_status rebase_onto(weft_node* n, weft_tensor* self) {
  if (n->f->save_result) {
    if (!(n->result = weft__alias(self))) {
      weft_node_release(n);
      return weft_last_status();
    }
    n->result_version = weft_tensor_version(self);
    n->saved_something = true;
  }
  return weft__rebase_history(self, n);
}

static weft_status inplace_autograd_kernel(const weft_op* op, weft_keyset ks, weft_stack* st, void* ctx) {
  const weft__formula* f = ctx;
  int nargs = weft_op_schema(op)->nargs;
  const weft_ivalue* a = st->v + st->size - nargs;
  weft_tensor* self = weft_tensor_retain(a[0].u.t);
  weft_node* n = NULL;
  if (args_needing_grad(f, a, nargs) && !(n = record_inplace(f, a, nargs))) {
    weft_tensor_release(self);
    weft_stack_drop(st, nargs);
    return weft_last_status();
  }
  weft_status s = redispatch_below(op, ks, weft_after_autograd_keyset(), st);
  if (s) weft_node_release(n);
  else if (n) s = rebase_onto(n, self);
  weft_tensor_release(self);
  return s;
}

/* ---- ops without a formula ---- */
static bool any_requires_grad(const weft_ivalue* a, int nargs) {
  for (int i = 0; i < nargs; i++) {
    if (a[i].tag == WEFT_IV_TENSOR && a[i].u.t->requires_grad) return true;
    if (a[i].tag == WEFT_IV_TENSOR_LIST)
      for (int64_t j = 0; j < a[i].u.tlist.len; j++)
        if (a[i].u.tlist.data[j] && a[i].u.tlist.data[j]->requires_grad) return true;
  }
  return false;
}

static weft_status refuse(const weft_op* op, const weft_ivalue* a) {
  const weft_schema* sc = weft_op_schema(op);
  for (int i = 0; i < sc->nargs; i++) {
    if (!sc->args[i].is_write || a[i].tag != WEFT_IV_TENSOR) continue;
    if (sc->args[i].kwarg_only) {
      if (a[i].u.t->requires_grad && weft_is_leaf(a[i].u.t))
        return weft__error(WEFT_INVALID_ARGUMENT,
                           "a leaf Variable that requires grad is being used in an in-place operation.");
      return weft__error(WEFT_INVALID_ARGUMENT,
                         "%s(): functions with out=... arguments don't support automatic differentiation, "
                         "but one of the arguments requires grad.", sc->name);
    }
    /* PyTorch checks the write (leaf, view) before it finds no formula */
    weft_status s = weft__check_inplace(a[i].u.t);
    if (s) return s;
    break;
  }
  return weft__error(WEFT_INVALID_ARGUMENT, "the derivative for '%s' is not implemented.", sc->name);
}

/* PyTorch's autogradNotImplementedFallback: never a silent wrong gradient. */
static weft_status no_formula_kernel(const weft_op* op, weft_keyset ks, weft_stack* st, void* ctx) {
  int nargs = weft_op_schema(op)->nargs;
  const weft_ivalue* a = st->v + st->size - nargs;
  if (any_requires_grad(a, nargs)) {
    weft_status s = refuse(op, a);
    weft_stack_drop(st, nargs);
    return s;
  }
  return redispatch_below(op, ks, weft_after_autograd_keyset(), st);
}

/* ---- ADInplaceOrView: every write bumps the version of its storage ---- */
static weft_status inplace_kernel(const weft_op* op, weft_keyset ks, weft_stack* st, void* ctx) {
  const weft_schema* sc = weft_op_schema(op);
  const weft_ivalue* a = st->v + st->size - sc->nargs;
  for (int i = 0; i < sc->nargs; i++)
    if (sc->args[i].is_write && a[i].tag == WEFT_IV_TENSOR) weft_tensor_bump_version(a[i].u.t);
  weft_tls_guard g = weft_tls_exclude(weft_keyset_of(WEFT_KEY_AD_INPLACE_OR_VIEW));
  weft_status s = weft_op_redispatch_boxed(op, ks & weft_after_ad_inplace_or_view_keyset(), st);
  weft_tls_restore(g);
  return s;
}

/* ---- ADInplaceOrView of a view op: its outputs remember their base ---- */
static weft_status view_kernel(const weft_op* op, weft_keyset ks, weft_stack* st, void* ctx) {
  const weft_schema* sc = weft_op_schema(op);
  weft_tensor* in = weft_tensor_retain(st->v[st->size - sc->nargs].u.t);
  weft_tls_guard g = weft_tls_exclude(weft_keyset_of(WEFT_KEY_AD_INPLACE_OR_VIEW));
  weft_status s = weft_op_redispatch_boxed(op, ks & weft_after_ad_inplace_or_view_keyset(), st);
  weft_tls_restore(g);
  if (!s) {
    const weft_ivalue* r = weft_stack_peek(st, 0);
    if (r->tag == WEFT_IV_TENSOR) weft__view_track(in, (weft_tensor* const*)&r->u.t, 1);
    else if (r->tag == WEFT_IV_TENSOR_LIST) weft__view_track(in, (weft_tensor* const*)r->u.tlist.data, r->u.tlist.len);
  }
  weft_tensor_release(in);
  return s;
}

/* Tensor(a) self -> Tensor(a) or Tensor(a)[]: the output aliases its input. */
static bool is_view_op(const weft_schema* sc) {
  return sc->nargs > 0 && sc->nreturns == 1 && sc->args[0].type == WEFT_TYPE_TENSOR && !sc->args[0].is_list &&
         sc->args[0].alias && !sc->args[0].is_write && sc->returns[0].alias && !sc->returns[0].is_write;
}

/* The out-of-place form takes the same arguments, none written (not its out= variant). */
static bool same_arguments(const weft_schema* inplace, const weft_schema* oop, const char* name) {
  if (strcmp(oop->name, name) != 0 || oop->nargs != inplace->nargs) return false;
  for (int i = 0; i < oop->nargs; i++) {
    const weft_arg *a = &inplace->args[i], *b = &oop->args[i];
    if (b->is_write || a->type != b->type || a->is_list != b->is_list || a->optional != b->optional) return false;
  }
  return true;
}

/* relu_ -> relu, add_.Tensor -> add.Tensor, pow_.Scalar -> pow.Tensor_Scalar: the
 * out-of-place form whose formula an in-place op shares (NULL: copy_, zero_ have none). */
static const weft_op* out_of_place(const weft_schema* sc) {
  size_t len = strlen(sc->name);
  if (len < 2 || len >= 128 || sc->name[len - 1] != '_' || sc->name[len - 2] == '_' || !sc->args[0].is_write)
    return NULL;
  char name[128];
  memcpy(name, sc->name, len - 1);
  name[len - 1] = '\0';
  for (int64_t i = 0; i < weft_op_count(); i++) {
    const weft_op* op = weft_op_at(i);
    if (same_arguments(sc, weft_op_schema(op), name)) return op;
  }
  return NULL;
}

static bool writes(const weft_schema* sc) {
  for (int i = 0; i < sc->nargs; i++)
    if (sc->args[i].is_write) return true;
  return false;
}

static const weft__formula* formula_of(const weft_op* op) {
  for (int i = 0; i < weft__nformulas; i++)
    if (weft__formulas[i].op() == op) return &weft__formulas[i];
  return NULL;
}

/* The Autograd kernel of op: its own formula, or (in-place ops) the out-of-place form's. */
static bool register_autograd(weft_op* op) {
  const weft_schema* sc = weft_op_schema(op);
  const weft__formula* f = formula_of(op);
  const weft_op* oop = f ? NULL : out_of_place(sc);
  if (!f && oop) f = formula_of(oop);
  if (!f) return weft_op_impl_boxed(op, WEFT_KEY_AUTOGRAD, no_formula_kernel, NULL, "autograd_not_implemented");
  weft_boxed_fn k = sc->nargs > 0 && sc->args[0].is_write ? inplace_autograd_kernel : autograd_kernel;
  /* directly on the runtime keys, so they win over a CompositeImplicitAutograd kernel too */
  return weft_op_impl_boxed(op, WEFT_KEY_AUTOGRAD_CPU, k, (void*)f, f->node_name) &&
         weft_op_impl_boxed(op, WEFT_KEY_AUTOGRAD_META, k, (void*)f, f->node_name) &&
         weft_op_impl_boxed(op, WEFT_KEY_AUTOGRAD_WEBGPU, k, (void*)f, f->node_name);
}

weft_status weft__register_kernels(void) {
  for (int64_t i = 0; i < weft_op_count(); i++) {
    weft_op* op = weft_op_at(i);
    const weft_schema* sc = weft_op_schema(op);
    bool ok = register_autograd(op);
    if (ok && writes(sc))
      ok = weft_op_impl_boxed(op, WEFT_KEY_AD_INPLACE_OR_VIEW, inplace_kernel, NULL, "ad_inplace_or_view");
    else if (ok && is_view_op(sc))
      ok = weft_op_impl_boxed(op, WEFT_KEY_AD_INPLACE_OR_VIEW, view_kernel, NULL, "ad_inplace_or_view");
    if (!ok) return weft_last_status();
  }
  return WEFT_OK;
}
