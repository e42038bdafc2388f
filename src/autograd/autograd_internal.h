/* Autograd internals (src/autograd/): the per-tensor AutogradMeta, graph
 * nodes and the formula table's expansion (torch/csrc/autograd/variable.h,
 * function.h). Not installed. */
#ifndef WEFT_AUTOGRAD_INTERNAL_H
#define WEFT_AUTOGRAD_INTERNAL_H

#include <stdatomic.h>

#include "core/internal.h"
#include "ops/ops.h"
#include "weft/autograd.h"
#include "weft/dispatch.h"

/* Tensor hooks (hooks.c): one list per leaf (on its meta) and per node (for
 * its outputs, by output_nr). While the engine runs a list (busy), a removed
 * hook is only marked dead and swept after. */
typedef struct {
  weft_grad_hook fn; /* NULL: removed while busy */
  void* ctx;
  weft_hook_free free_ctx;
  int32_t output_nr;
} weft__hook;

typedef struct {
  weft__hook* items;
  int32_t n, cap, busy;
} weft__hooks;

/* AutogradMeta: hung on weft_tensor.autograd_meta by weft__meta_get. */
typedef struct weft__meta {
  weft_tensor* grad;     /* owned */
  weft_node* grad_fn;    /* owned; NULL for leaves */
  int32_t output_nr;
  bool leaf_requires_grad;
  bool retains_grad;
  /* 1.13 runs a tensor's hooks and its retain_grad in the order each was
   * first set up: retain_grad() before any register_hook() retains the
   * gradient as it arrives, later hooks' changes aside */
  bool hooked, retain_first;
  weft__hooks hooks;     /* a leaf's hooks (a non-leaf's live on its grad_fn) */
  weft_node* grad_acc;   /* weak: the leaf's AccumulateGrad while it lives */
  weft_tensor* owner;    /* weak back-pointer */
  /* Views (DifferentiableViewMeta): the root base (owned) whose history an
   * in-place write to this view rebases, how the view was made, and the
   * version its grad_fn was computed at (a mismatch regenerates it). */
  weft_tensor* base;
  uint8_t creation;      /* weft__creation */
  uint32_t attr_version;
} weft__meta;

/* CreationMeta: which in-place writes a view allows. */
typedef enum { WEFT__VIEW_DEFAULT, WEFT__VIEW_NO_GRAD, WEFT__VIEW_MULTI_OUTPUT } weft__creation;

/* A tensor's layout in its storage, for the nodes that rebase views. */
typedef struct {
  int64_t sizes[WEFT_MAX_DIMS], strides[WEFT_MAX_DIMS], offset;
  int32_t ndim;
} weft__geom;

typedef struct {
  weft_node* node; /* owned; NULL: no gradient flows there */
  int32_t input_nr;
} weft__edge;

/* What backward needs of a tensor input besides its data: the shape its
 * gradient is summed back to and the dtype it is cast back to. */
typedef struct {
  int64_t sizes[WEFT_MAX_DIMS];
  int32_t ndim;
  weft_dtype dtype;
  weft_device device;
} weft__input_meta;

struct weft__formula;

struct weft_node {
  atomic_int refcount;
  const char* name;
  uint64_t seq;
  int32_t nnext;
  weft__edge* next;
  int8_t* edge_arg;              /* formula nodes: schema argument of each edge */
  /* a Tensor[] argument (cat, stack) has an edge per element: its index in
   * the list and what its gradient is fitted to; -1 / unused for a Tensor */
  int16_t* edge_elem;
  weft__input_meta* edge_in;
  /* formula nodes */
  const struct weft__formula* f;
  weft_ivalue* args;             /* the op's arguments; unsaved tensors are None */
  uint32_t* versions;            /* version of each saved tensor argument */
  weft__input_meta* in;          /* per schema argument (tensors only) */
  int32_t nargs;
  weft_tensor* result;           /* saved output: an alias without autograd meta */
  uint32_t result_version;
  /* a forward with statistics (save_result 2): its third output */
  weft_tensor* result2;
  uint32_t result2_version;
  /* save_result 4 of three returns (_linalg_svd's U, S, Vh): the third saved output */
  weft_tensor* result3;
  uint32_t result3_version;
  bool saved_something, released;
  weft_tensor* retained;         /* weak: a non-leaf output with retain_grad */
  /* Multi-output nodes (split, unbind: nout > 1): the engine keeps an input
   * buffer per output_nr, and each output can retain its gradient (weak) */
  int32_t nout;
  weft_tensor** retained_outs;
  /* AccumulateGrad */
  weft_tensor* variable;         /* owned */
  /* CopySlices / AsStridedBackward0: their own backward, the base's and the
   * view's layouts, and (CopySlices) the in-place op's node they wrap */
  weft_status (*apply)(weft_node* n, const weft_tensor* grad, bool create_graph, weft_tensor** out);
  weft__geom* geom;              /* [0] base, [1] view; owned */
  weft_node* fn;                 /* owned */
  weft_node* wrapper;            /* weak: the CopySlices around this in-place node, while it lives */
  weft__hooks hooks;             /* hooks of the node's outputs (register_hook on a non-leaf) */
};

/* Sequence number of AccumulateGrad: run as soon as ready, as in PyTorch. */
#define WEFT__SEQ_MAX UINT64_MAX

/* Backward context of one formula node: the saved arguments and result, the
 * incoming gradient, and the gradient of each schema argument. */
typedef struct weft__bctx {
  weft_node* node;
  const weft_tensor* grad;
  /* multi-output nodes: the gradient of each output (NULL: that output got
   * none, the formula puts zeros there); grad is grads[0] */
  weft_tensor* const* grads;
  weft_tensor* saved[16];       /* unpacked saved tensors by argument (owned) */
  weft_tensor* result;          /* unpacked saved result (owned) */
  weft_tensor* result2;         /* save_result 2: the third output; 4: the second (owned) */
  weft_tensor* result3;         /* save_result 4: the third output (owned) */
  uint32_t needs;               /* arguments whose gradient is wanted */
  weft_tensor* gi[16];          /* outputs (owned) */
  weft_tensor* gl[64];          /* outputs for the elements of a Tensor[] argument (owned) */
  weft_tensor* temps[48];       /* intermediates, released after the formula */
  /* a backward op computing several gradients in one call (the
   * normalizations'): its outputs, kept in temps, after the first G() */
  weft_tensor* trio[3];
  bool trio_done;
  int ntemps;
} weft__bctx;

typedef struct weft__formula {
  const char* node_name;
  weft_op* (*op)(void);
  uint32_t save_mask;  /* tensor arguments saved for backward */
  /* 0 none; 1 the result (of a (values, indices) op, the indices); 2 a
   * (Tensor, Tensor, Tensor) forward with statistics (native_batch_norm's
   * out, mean, invstd): the node owns output 0 and saves outputs 1 and 2
   * as RES and RES2, plain tensors (they take no gradient); 3 a (Tensor,
   * Tensor) op whose second output is the differentiable one (slogdet's
   * logabsdet): the node owns it and saves the first as RES; 4 an op of two
   * or three returns all differentiable (linalg_qr, _linalg_eigh,
   * _linalg_svd): outputs 0, 1[, 2] of one node, saved as RES, RES2[, RES3],
   * their gradients c->grads[0..] */
  uint8_t save_result;
  uint32_t diff_mask;  /* arguments with a gradient formula */
  weft_status (*backward)(weft__bctx* c);
} weft__formula;

extern const weft__formula weft__formulas[];
extern const int weft__nformulas;

/* meta.c */
weft__meta* weft__meta_get(weft_tensor* t); /* creates; NULL + OOM error */
static inline weft__meta* weft__meta_peek(const weft_tensor* t) { return (weft__meta*)t->autograd_meta; }
void weft__autograd_init(void);
/* The edge gradient flows along into t: (grad_fn, output_nr), or the
 * leaf's AccumulateGrad (created on demand); {NULL} when t needs none. */
weft_status weft__gradient_edge(weft_tensor* t, weft__edge* out);
/* Where n keeps the tensor of output output_nr that retains its grad (weak). */
weft_tensor** weft__retained_slot(weft_node* n, int32_t output_nr);
/* A handle on t's storage and layout, with no autograd meta. */
weft_tensor* weft__alias(const weft_tensor* t);
void weft__shape_str(const int64_t* sizes, int64_t ndim, char* buf, size_t cap);
bool weft__same_sizes(const weft_tensor* t, const int64_t* sizes, int64_t ndim);
/* "<what>: got float32 [2] but expected float32 [3]" */
weft_status weft__grad_mismatch(const char* what, const weft_tensor* got, const weft_tensor* want);

/* function.c */
uint64_t weft__next_seq(void);
/* Grad mode as the op's caller had it (an Autograd kernel's redispatch excludes its keys). */
bool weft__caller_grad_enabled(void);
weft_node* weft__node_new(const char* name, int32_t nnext, uint64_t seq);
void weft__node_release_saved(weft_node* n);
weft_status weft__register_kernels(void);
/* Unpacks saved tensors into c (version checks, "backward a second time"). */
weft_status weft__unpack_saved(weft_node* n, weft__bctx* c, bool create_graph);
weft_tensor* weft__sum_to_size(const weft_tensor* g, const int64_t* sizes, int64_t ndim);

/* views.c */
/* ADInplaceOrView of a view op: records the base of its outputs. */
void weft__view_track(const weft_tensor* in, weft_tensor* const* outs, int64_t n);
/* A view's grad_fn again when a write to its storage made it stale. */
void weft__view_refresh(weft_tensor* t);
/* check_inplace: PyTorch's refusals of an in-place write that needs grad. */
weft_status weft__check_inplace(weft_tensor* self);
/* An AsStridedBackward0 of the view cs (a CopySlices) wrote, over cs: how the
 * in-place node inside cs sees its saved result under createGraph. */
weft_node* weft__view_node_over(weft_node* cs);
/* rebase_history: self's history continues at n (CopySlices on the base for a view). Takes n. */
weft_status weft__rebase_history(weft_tensor* self, weft_node* n);

/* hooks.c */
/* Runs the hooks of output nr on *g (owned; may be replaced). */
weft_status weft__hooks_run(weft__hooks* h, int32_t nr, weft_tensor** g);
void weft__hooks_free(weft__hooks* h);

/* engine.c */
/* A formula node's gradients, one per next edge (fit to each input), from
 * the gradient of each of its outputs (one unless n->nout > 1). */
weft_status weft__apply_formula(weft_node* n, weft_tensor* const* grads, bool create_graph, weft_tensor** out);
weft_status weft__accumulate_into_grad(weft_tensor* var, weft_tensor* g, bool create_graph);

#endif
