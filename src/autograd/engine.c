/* The engine (torch/csrc/autograd/engine.cpp, seed 004): a graph task from
 * the roots, dependency counts by one walk over next edges, a ready queue
 * ordered by sequence number (highest first: the most recent forward op runs
 * first), one input buffer per node summing the gradients that reach it (a
 * multi-output node, split or unbind, has one per output: an edge names the
 * output it feeds by its input_nr, and an output nothing reached stays
 * undefined for the formula to fill with zeros). Runs on the calling thread;
 * kernels inside nodes may use the pool. */
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd_internal.h"

/* ---- per-task state of a node, found through a small open-addressing map ---- */
typedef struct {
  weft_node* node;
  int32_t deps;
  bool exec;        /* grad(): leads to a captured input */
  bool visited;
  bool captured;    /* grad(): a captured input's edge points here */
  weft_tensor* buffer;  /* the gradient of the node's output */
  weft_tensor** outs;   /* multi-output nodes instead: one per output_nr (owned) */
} slot;

typedef struct {
  slot* slots;
  int64_t cap, count;
  weft_node** heap;
  int64_t nheap;
  bool retain_graph, create_graph, capturing;
  weft_tensor** results;
  const weft__edge* captures; /* grad(): the inputs' edges, results[i] gets what reaches captures[i] */
  int64_t ncap;
} graph_task;

static uint64_t hash_ptr(const void* p) { return ((uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull) >> 16; }

static slot* find(graph_task* g, const weft_node* n) {
  for (int64_t i = (int64_t)(hash_ptr(n) & (uint64_t)(g->cap - 1));; i = (i + 1) & (g->cap - 1))
    if (g->slots[i].node == n || !g->slots[i].node) return &g->slots[i];
}

static weft_status grow(graph_task* g) {
  int64_t old = g->cap;
  slot* s = g->slots;
  g->cap = old ? old * 2 : 64;
  if (!(g->slots = calloc((size_t)g->cap, sizeof *g->slots))) {
    g->slots = s;
    g->cap = old;
    return weft__error(WEFT_OUT_OF_MEMORY, "out of memory: autograd graph task");
  }
  for (int64_t i = 0; i < old; i++)
    if (s[i].node) *find(g, s[i].node) = s[i];
  free(s);
  return WEFT_OK;
}

static slot* insert(graph_task* g, weft_node* n, bool* fresh) {
  if ((g->count + 1) * 2 > g->cap && grow(g)) return NULL;
  slot* s = find(g, n);
  *fresh = !s->node;
  if (*fresh) {
    s->node = n;
    g->count++;
  }
  return s;
}

/* compute_dependencies: every node reachable from the roots, counting the edges into it. */
static weft_status compute_dependencies(graph_task* g, weft_node* const* roots, int64_t nroots) {
  int64_t cap = 64, top = 0;
  weft_node** stack = malloc(sizeof *stack * (size_t)cap);
  if (!stack) return weft__error(WEFT_OUT_OF_MEMORY, "out of memory: autograd graph task");
  bool fresh;
  for (int64_t i = 0; i < nroots; i++)
    if (roots[i] && insert(g, roots[i], &fresh) && fresh) stack[top++] = roots[i];
  weft_status st = WEFT_OK;
  while (top > 0 && !st) {
    weft_node* n = stack[--top];
    for (int32_t e = 0; e < n->nnext && !st; e++) {
      weft_node* c = n->next[e].node;
      if (!c) continue;
      slot* s = insert(g, c, &fresh);
      if (!s) { st = weft_last_status(); break; }
      s->deps++;
      if (!fresh) continue;
      if (top == cap) {
        weft_node** b = realloc(stack, sizeof *stack * (size_t)(cap *= 2));
        if (!b) { st = weft__error(WEFT_OUT_OF_MEMORY, "out of memory: autograd graph task"); break; }
        stack = b;
      }
      stack[top++] = c;
    }
  }
  free(stack);
  return st;
}

/* grad(): a node runs only when some path from it reaches a captured input. */
static bool mark_exec(graph_task* g, weft_node* n) {
  slot* s = find(g, n);
  if (!s->visited) {
    s->visited = true;
    for (int32_t e = 0; e < n->nnext; e++)
      if (n->next[e].node && mark_exec(g, n->next[e].node)) s->exec = true;
  }
  return s->exec || s->captured;
}

/* ---- the ready queue: a max-heap on sequence number ---- */
static weft_status push(graph_task* g, weft_node* n) {
  if ((g->nheap & (g->nheap - 1)) == 0) {
    weft_node** h = realloc(g->heap, sizeof *h * (size_t)(g->nheap ? g->nheap * 2 : 16));
    if (!h) return weft__error(WEFT_OUT_OF_MEMORY, "out of memory: autograd ready queue");
    g->heap = h;
  }
  int64_t i = g->nheap++;
  while (i > 0 && g->heap[(i - 1) / 2]->seq < n->seq) {
    g->heap[i] = g->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  g->heap[i] = n;
  return WEFT_OK;
}

static weft_node* pop(graph_task* g) {
  weft_node* top = g->heap[0];
  weft_node* last = g->heap[--g->nheap];
  int64_t i = 0;
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= g->nheap) break;
    if (c + 1 < g->nheap && g->heap[c + 1]->seq > g->heap[c]->seq) c++;
    if (g->heap[c]->seq <= last->seq) break;
    g->heap[i] = g->heap[c];
    i = c;
  }
  if (g->nheap > 0) g->heap[i] = last;
  return top;
}

/* ---- input buffers ---- */
static int32_t nout(const weft_node* n) { return n->nout > 1 ? n->nout : 1; }

/* The buffer of output nr (NULL + error when it cannot be made). */
static weft_tensor** buffer_at(slot* s, int32_t nr) {
  int32_t n = nout(s->node);
  if (n == 1) return &s->buffer;
  if (nr < 0 || nr >= n)
    return weft__error_null(WEFT_INTERNAL, "autograd: %s has no output %d", s->node->name, nr);
  if (!s->outs && !(s->outs = calloc((size_t)n, sizeof *s->outs)))
    return weft__error_null(WEFT_OUT_OF_MEMORY, "out of memory: autograd input buffer");
  return &s->outs[nr];
}

static weft_tensor* buffer_peek(const slot* s, int32_t nr) {
  if (nout(s->node) == 1) return s->buffer;
  return s->outs && nr >= 0 && nr < s->node->nout ? s->outs[nr] : NULL;
}

static bool has_input(const slot* s) {
  for (int32_t i = 0; i < nout(s->node); i++)
    if (buffer_peek(s, i)) return true;
  return false;
}

static void buffers_free(slot* s) {
  weft_tensor_release(s->buffer);
  s->buffer = NULL;
  for (int32_t i = 0; s->outs && i < s->node->nout; i++) weft_tensor_release(s->outs[i]);
  free(s->outs);
  s->outs = NULL;
}

/* InputBuffer::add: the first gradient of output nr is kept, later ones summed. Takes g. */
static weft_status buffer_add(slot* s, int32_t nr, weft_tensor* g) {
  weft_tensor** b = buffer_at(s, nr);
  if (!b) {
    weft_tensor_release(g);
    return weft_last_status();
  }
  if (!*b) {
    *b = g;
    return WEFT_OK;
  }
  weft_tensor* sum = weft_add(*b, g, weft_scalar_int(1));
  weft_tensor_release(g);
  if (!sum) return weft_last_status();
  weft_tensor_release(*b);
  *b = sum;
  return WEFT_OK;
}

/* ---- running one node ---- */
/* The formula's gradient for input i, summed back over broadcast dims and
 * cast back to the input's dtype (type promotion in the forward). */
static weft_tensor* fit_to_input(weft_tensor* g, const weft__input_meta* im) {
  if (!weft__same_sizes(g, im->sizes, im->ndim)) {
    weft_tensor* r = weft__sum_to_size(g, im->sizes, im->ndim);
    weft_tensor_release(g);
    if (!(g = r)) return NULL;
  }
  if (g->dtype != im->dtype) {
    weft_tensor* r = weft_to_dtype(g, im->dtype, false);
    weft_tensor_release(g);
    g = r;
  }
  return g;
}

weft_status weft__apply_formula(weft_node* n, weft_tensor* const* grads, bool create_graph, weft_tensor** out) {
  weft__bctx c;
  memset(&c, 0, sizeof c);
  c.node = n;
  c.grad = grads[0];
  c.grads = grads;
  for (int32_t e = 0; e < n->nnext; e++)
    if (n->next[e].node) c.needs |= 1u << n->edge_arg[e];
  weft_status s = weft__unpack_saved(n, &c, create_graph);
  if (!s) s = n->f->backward(&c);
  for (int i = 0; i < c.ntemps; i++) weft_tensor_release(c.temps[i]);
  for (int i = 0; i < 16; i++) weft_tensor_release(c.saved[i]);
  weft_tensor_release(c.result);
  weft_tensor_release(c.result2);
  weft_tensor_release(c.result3);
  for (int32_t e = 0; e < n->nnext; e++) {
    int a = n->edge_arg[e], k = n->edge_elem ? n->edge_elem[e] : -1;
    weft_tensor** slot = k >= 0 ? &c.gl[k] : &c.gi[a]; /* an element of a Tensor[] or a Tensor */
    weft_tensor* g = *slot;
    *slot = NULL;
    const weft__input_meta* im = k >= 0 ? &n->edge_in[k] : &n->in[a];
    if (!s && g && n->next[e].node && !(out[e] = fit_to_input(g, im))) s = weft_last_status();
    else if (s || !n->next[e].node) weft_tensor_release(g);
  }
  for (int i = 0; i < 64; i++) weft_tensor_release(c.gl[i]); /* elements whose edge needs none */
  for (int i = 0; i < 16; i++) weft_tensor_release(c.gi[i]);
  return s;
}

/* AccumulateGrad's layout contract (PyTorch's obeys_layout_contract): a
 * dense parameter's .grad has the parameter's strides (size-1 dims aside),
 * anything else is contiguous; so the optimizer's update reads both alike. */
static bool obeys_layout(const weft_tensor* g, const weft_tensor* var) {
  if (!weft_tensor_is_non_overlapping_and_dense(var)) return g->is_contiguous;
  for (int i = 0; i < g->ndim; i++)
    if (g->sizes[i] != 1 ? g->strides[i] != var->strides[i] : g->strides[i] == 0) return false;
  return true;
}

/* a copy of g in var's layout (PyTorch's clone_obey_contract) */
static weft_tensor* clone_like(const weft_tensor* g, const weft_tensor* var) {
  if (!weft_tensor_is_non_overlapping_and_dense(var)) return weft_clone(g, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* r = weft_empty_strided(var->sizes, var->strides, var->ndim, g->dtype, g->device);
  if (r && weft_copy_(r, g) != WEFT_OK) {
    weft_tensor_release(r);
    r = NULL;
  }
  return r;
}

weft_status weft__accumulate_into_grad(weft_tensor* var, weft_tensor* g, bool create_graph) {
  if (!weft__same_sizes(g, var->sizes, var->ndim) || g->dtype != var->dtype)
    return weft__grad_mismatch("Function AccumulateGrad returned an invalid gradient", g, var);
  /* PyTorch's validate_outputs wording. A webgpu gradient reaches a cpu leaf
   * through the backward of to('webgpu'); bringing it back would need a
   * synchronous read of the device, which a browser cannot do. */
  if (g->device != var->device)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "invalid gradient at index 0 - expected device %s but got %s (a gradient cannot flow back "
                       "through to('%s') of a tensor that requires grad: move the tensor first, then call "
                       "requiresGrad_(), as Module.to('%s') does)",
                       weft_device_name(var->device), weft_device_name(g->device), weft_device_name(g->device),
                       weft_device_name(g->device));
  weft__meta* m = weft__meta_get(var);
  if (!m) return weft_last_status();
  /* outside create_graph (grad mode off) PyTorch adds into the existing .grad in place
   * (`variable_grad += new_grad`): .grad keeps its storage, and no buffer is made per backward */
  if (m->grad && !create_graph) return weft_add_(m->grad, g, weft_scalar_int(1));
  weft_tensor* fresh;
  if (m->grad) fresh = weft_add(m->grad, g, weft_scalar_int(1));
  else if (create_graph) fresh = weft_tensor_retain(g);
  /* a buffer nobody else holds, in the parameter's layout, is stolen; anything shared is copied so .grad
   * never aliases it */
  else fresh = weft_tensor_refcount(g) == 1 && obeys_layout(g, var) ? weft__alias(g) : clone_like(g, var);
  if (!fresh) return weft_last_status();
  weft_tensor_release(m->grad);
  m->grad = fresh;
  return WEFT_OK;
}

/* A non-leaf output t with retainGrad() (NULL: none) keeps the gradient g of its output (NULL: none reached it). */
static weft_status retain_nonleaf_grad(weft_tensor* t, const weft_tensor* g) {
  if (!t || !g) return WEFT_OK;
  weft__meta* m = weft__meta_peek(t);
  weft_tensor* fresh = m->grad ? weft_add(m->grad, g, weft_scalar_int(1)) : weft_clone(g, (weft_memory_format)-1);
  if (!fresh) return weft_last_status();
  weft_tensor_release(m->grad);
  m->grad = fresh;
  return WEFT_OK;
}

/* The gradient of output i before the node uses it: its tensor's hooks and
 * retain_grad (not under grad(), as PyTorch's capture), in the order 1.13's
 * pre-hooks run (autograd_internal.h, retain_first). */
static weft_status pre_hooks(graph_task* g, weft_node* n, int32_t i, weft_tensor** grad) {
  weft_tensor* kept = g->capturing ? NULL : *weft__retained_slot(n, i);
  bool first = kept && weft__meta_peek(kept)->retain_first;
  weft_status st = first ? retain_nonleaf_grad(kept, *grad) : WEFT_OK;
  if (!st) st = weft__hooks_run(&n->hooks, i, grad);
  if (!st && !first) st = retain_nonleaf_grad(kept, *grad);
  return st;
}

/* The node's gradients into out (one per next edge), then its saved state
 * freed unless the graph is retained. */
static weft_status apply_node(graph_task* g, weft_node* n, slot* s, weft_tensor** out) {
  if (n->variable) {
    /* a leaf's hooks see the incoming gradient, before accumulation */
    weft_status st = weft__hooks_run(&weft__meta_peek(n->variable)->hooks, 0, &s->buffer);
    return st ? st : weft__accumulate_into_grad(n->variable, s->buffer, g->create_graph);
  }
  weft_tensor** grads = nout(n) > 1 ? s->outs : &s->buffer;
  weft_status st = WEFT_OK;
  for (int32_t i = 0; i < nout(n) && !st; i++) st = pre_hooks(g, n, i, &grads[i]);
  if (!st && n->nnext > 64) st = weft__error(WEFT_INTERNAL, "autograd: too many inputs on %s", n->name);
  if (!st && n->apply) st = n->apply(n, s->buffer, g->create_graph, out);
  else if (!st) st = weft__apply_formula(n, grads, g->create_graph, out);
  if (!g->retain_graph) weft__node_release_saved(n);
  return st;
}

static weft_status run_node(graph_task* g, weft_node* n, slot* s) {
  weft_tensor* out[64] = {0};
  /* wt.trace: the node, with the ops its backward dispatches nested under it */
  int depth = weft_trace_node_enter(n->name);
  weft_status st = apply_node(g, n, s, out);
  weft_trace_node_leave(depth);
  for (int32_t e = 0; e < n->nnext && e < 64; e++) {
    weft_node* c = n->next[e].node;
    if (!c || !out[e] || st) {
      weft_tensor_release(out[e]);
      continue;
    }
    slot* cs = find(g, c);
    st = buffer_add(cs, n->next[e].input_nr, out[e]);
    if (!st && --cs->deps == 0) st = push(g, c);
  }
  return st;
}

/* grad(): the gradients reaching n for the captured inputs whose edge points at it. */
static void capture(graph_task* g, const weft_node* n, const slot* s) {
  for (int64_t i = 0; i < g->ncap; i++)
    if (g->captures[i].node == n) g->results[i] = weft_tensor_retain(buffer_peek(s, g->captures[i].input_nr));
}

static weft_status execute(graph_task* g) {
  weft_status st = WEFT_OK;
  while (g->nheap > 0 && !st) {
    weft_node* n = pop(g);
    slot* s = find(g, n);
    if (s->captured) capture(g, n, s);
    bool run = g->capturing ? s->exec && !n->variable : true;
    if (run && has_input(s)) st = run_node(g, n, s);
    buffers_free(s);
  }
  return st;
}

static void task_free(graph_task* g) {
  for (int64_t i = 0; i < g->cap; i++)
    if (g->slots[i].node) buffers_free(&g->slots[i]);
  free(g->slots);
  free(g->heap);
}

/* ---- roots ---- */
static weft_status root_grad(weft_tensor* root, weft_tensor* given, int64_t i, weft_tensor** out) {
  if (!root->requires_grad)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "element %lld of tensors does not require grad and does not have a grad_fn", (long long)i);
  if (given) {
    if (!weft__same_sizes(given, root->sizes, root->ndim)) {
      char a[256], b[256];
      weft__shape_str(given->sizes, given->ndim, a, sizeof a);
      weft__shape_str(root->sizes, root->ndim, b, sizeof b);
      return weft__error(WEFT_INVALID_ARGUMENT,
                         "Mismatch in shape: grad_output[%lld] has a shape of %s and output[%lld] has a shape of %s.",
                         (long long)i, a, (long long)i, b);
    }
    *out = weft_tensor_retain(given);
    return WEFT_OK;
  }
  if (root->numel != 1)
    return weft__error(WEFT_INVALID_ARGUMENT, "grad can be implicitly created only for scalar outputs");
  *out = weft_full(root->sizes, root->ndim, 1.0, root->dtype, root->device);
  return *out ? WEFT_OK : weft_last_status();
}

/* Seeds the input buffers of the roots' nodes (GraphRoot's outputs). */
static weft_status seed_roots(graph_task* g, weft_tensor* const* roots, weft_tensor* const* grads, int64_t n,
                              weft__edge* edges) {
  for (int64_t i = 0; i < n; i++) {
    weft_tensor* rg = NULL;
    weft_status st = root_grad(roots[i], grads ? grads[i] : NULL, i, &rg);
    if (!st) st = weft__gradient_edge(roots[i], &edges[i]);
    if (!st && edges[i].node) st = buffer_add(find(g, edges[i].node), edges[i].input_nr, rg);
    else weft_tensor_release(rg);
    if (st) return st;
  }
  return WEFT_OK;
}

static weft_status run_task(graph_task* g, weft_tensor* const* roots, weft_tensor* const* grads, int64_t n,
                            weft__edge* edges) {
  weft_node* rn[64];
  for (int64_t i = 0; i < n; i++) {
    weft_status st = weft__gradient_edge(roots[i], &edges[i]);
    if (st) return st;
    rn[i] = edges[i].node;
  }
  weft_status st = compute_dependencies(g, rn, n);
  for (int64_t i = 0; i < n; i++) {
    weft_node_release(edges[i].node);
    edges[i].node = NULL;
  }
  if (!st) st = seed_roots(g, roots, grads, n, edges);
  for (int64_t i = 0; i < g->ncap && !st; i++) {
    if (!g->captures[i].node) continue;
    slot* s = find(g, g->captures[i].node);
    if (s->node) s->captured = true;
  }
  if (!st && g->capturing)
    for (int64_t i = 0; i < n; i++)
      if (rn[i]) mark_exec(g, rn[i]);
  /* the roots' nodes that nothing else in the graph points at start the pass */
  for (int64_t i = 0; i < n && !st; i++) {
    slot* s = edges[i].node ? find(g, edges[i].node) : NULL;
    if (s && s->deps == 0 && has_input(s)) {
      s->deps = -1; /* queued once, even when two roots share a node */
      st = push(g, edges[i].node);
    }
  }
  if (!st) st = execute(g);
  return st;
}

static weft_status with_grad_mode(bool on, graph_task* g, weft_tensor* const* roots, weft_tensor* const* grads,
                                  int64_t n) {
  weft__edge edges[64];
  memset(edges, 0, sizeof edges);
  bool was = weft_set_grad_enabled(on);
  weft_status st = run_task(g, roots, grads, n, edges);
  weft_set_grad_enabled(was);
  for (int64_t i = 0; i < n; i++) weft_node_release(edges[i].node);
  return st;
}

weft_status weft_backward(weft_tensor* const* roots, weft_tensor* const* grads, int64_t n, bool retain_graph,
                          bool create_graph) {
  if (n < 1 || n > 64)
    return weft__error(WEFT_INVALID_ARGUMENT, "backward: expected 1 to 64 tensors, got %lld", (long long)n);
  graph_task g;
  memset(&g, 0, sizeof g);
  g.retain_graph = retain_graph || create_graph;
  g.create_graph = create_graph;
  weft_status st = with_grad_mode(create_graph, &g, roots, grads, n);
  task_free(&g);
  return st;
}

weft_status weft_autograd_grad(weft_tensor* const* outputs, weft_tensor* const* grad_outputs, int64_t n_outputs,
                               weft_tensor* const* inputs, int64_t n_inputs, bool retain_graph, bool create_graph,
                               bool allow_unused, weft_tensor** results) {
  if (n_inputs < 1 || n_outputs < 1 || n_outputs > 64)
    return weft__error(WEFT_INVALID_ARGUMENT, "autograd.grad: expected 1 to 64 outputs and at least one input, got %lld "
                       "and %lld", (long long)n_outputs, (long long)n_inputs);
  for (int64_t i = 0; i < n_inputs; i++) results[i] = NULL;
  weft__edge* caps = calloc((size_t)(n_inputs ? n_inputs : 1), sizeof *caps);
  if (!caps) return weft__error(WEFT_OUT_OF_MEMORY, "out of memory: autograd.grad");
  weft_status st = WEFT_OK;
  for (int64_t i = 0; i < n_inputs && !st; i++) {
    if (!inputs[i]->requires_grad) st = weft__error(WEFT_INVALID_ARGUMENT, "One of the differentiated Tensors does not require grad");
    else st = weft__gradient_edge(inputs[i], &caps[i]);
  }
  graph_task g;
  memset(&g, 0, sizeof g);
  g.retain_graph = retain_graph || create_graph;
  g.create_graph = create_graph;
  g.capturing = true;
  g.results = results;
  g.captures = caps;
  g.ncap = n_inputs;
  if (!st) st = with_grad_mode(create_graph, &g, outputs, grad_outputs, n_outputs);
  task_free(&g);
  for (int64_t i = 0; i < n_inputs; i++) weft_node_release(caps[i].node);
  free(caps);
  for (int64_t i = 0; i < n_inputs && !st; i++)
    if (!results[i] && !allow_unused)
      st = weft__error(WEFT_INVALID_ARGUMENT, "One of the differentiated Tensors appears to not have been used in "
                                              "the graph. Set allowUnused: true if this is the desired behavior.");
  if (st)
    for (int64_t i = 0; i < n_inputs; i++) {
      weft_tensor_release(results[i]);
      results[i] = NULL;
    }
  return st;
}
