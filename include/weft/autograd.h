/* Reverse-mode automatic differentiation (PyTorch 1.13's autograd).
 *
 * A tensor that requires grad carries the Autograd dispatch key; each op
 * with a derivative formula (src/autograd/derivatives.def) then records a
 * node (`MulBackward0`, ...) whose next edges lead to the nodes of its
 * inputs, and backward runs the engine over that graph. Tensors that do not
 * require grad never reach autograd. Functions returning weft_status set
 * weft_last_error() on failure; returned tensors are new references. */
#ifndef WEFT_AUTOGRAD_H
#define WEFT_AUTOGRAD_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_node weft_node;

/* ---- grad mode (thread-local, on by default) ---- */
bool weft_grad_enabled(void);
/* Returns the previous mode, to restore it (torch.set_grad_enabled). */
bool weft_set_grad_enabled(bool on);

/* ---- tensor state ---- */
/* Leaves only; float dtypes only (PyTorch's messages otherwise). */
weft_status weft_set_requires_grad(weft_tensor* t, bool requires_grad);
bool weft_requires_grad(const weft_tensor* t);
bool weft_is_leaf(const weft_tensor* t); /* no grad_fn */
/* .grad: a new reference, or NULL (no error) when there is none. */
weft_tensor* weft_tensor_grad(const weft_tensor* t);
/* Sets .grad (NULL clears it); shape, dtype and device must match t's. */
weft_status weft_set_grad(weft_tensor* t, const weft_tensor* grad);
/* Non-leaves keep their .grad during backward (a no-op on leaves). */
weft_status weft_retain_grad(weft_tensor* t);
bool weft_retains_grad(const weft_tensor* t);
/* The node that created t (borrowed; NULL for leaves) and t's output number on it. */
weft_node* weft_grad_fn(const weft_tensor* t);
int64_t weft_output_nr(const weft_tensor* t);
/* A new tensor sharing t's data and version counter, outside the graph. */
weft_tensor* weft_detach(const weft_tensor* t);
/* Cuts t out of the graph in place (a leaf that does not require grad). */
weft_status weft_detach_(weft_tensor* t);

/* ---- tensor hooks (Tensor.register_hook) ----
 * fn(ctx, grad, &replacement) runs when the gradient of t is computed: on a
 * leaf before it is accumulated into .grad, on a non-leaf before it flows on
 * into t's grad_fn. A replacement (a new reference, same shape and dtype)
 * takes grad's place; NULL keeps grad. A failing status stops the backward
 * with it. Hooks run in registration order on the thread running the
 * backward. free_ctx (may be NULL) is called once the hook is gone: removed,
 * or its tensor (leaf) or node (non-leaf) freed. */
typedef weft_status (*weft_grad_hook)(void* ctx, const weft_tensor* grad, weft_tensor** replacement);
typedef void (*weft_hook_free)(void* ctx);
weft_status weft_register_hook(weft_tensor* t, weft_grad_hook fn, void* ctx, weft_hook_free free_ctx);
/* Removes t's hook registered with ctx; false when there is none. */
bool weft_remove_hook(weft_tensor* t, const void* ctx);
/* t's hooks run on grad, as backward(inputs=) does before accumulating into
 * t.grad: the result in *out (a new reference; grad itself when no hook replaced it). */
weft_status weft_apply_hooks(weft_tensor* t, const weft_tensor* grad, weft_tensor** out);

/* ---- graph nodes ---- */
weft_node* weft_node_retain(weft_node* n);
void weft_node_release(weft_node* n); /* NULL is a no-op */
const char* weft_node_name(const weft_node* n); /* "MulBackward0", "AccumulateGrad" */
int64_t weft_node_num_next(const weft_node* n);
/* Next edge i: the node (borrowed, NULL for an input that needs no grad) and its input number. */
weft_node* weft_node_next(const weft_node* n, int64_t i, int64_t* input_nr);
uint64_t weft_node_sequence_nr(const weft_node* n);
/* AccumulateGrad's leaf (borrowed); NULL for other nodes. */
weft_tensor* weft_node_variable(const weft_node* n);

/* ---- the engine ----
 * backward: gradients of roots (grads[i] NULL: ones, for one-element roots)
 * accumulated into the .grad of the leaves. grad: d outputs / d inputs into
 * results[n_inputs] (new references; NULL for an unused input when
 * allow_unused), without touching .grad. retain_graph keeps saved tensors
 * for another pass; create_graph records the backward pass itself. */
weft_status weft_backward(weft_tensor* const* roots, weft_tensor* const* grads, int64_t n, bool retain_graph,
                          bool create_graph);
weft_status weft_autograd_grad(weft_tensor* const* outputs, weft_tensor* const* grad_outputs, int64_t n_outputs,
                               weft_tensor* const* inputs, int64_t n_inputs, bool retain_graph, bool create_graph,
                               bool allow_unused, weft_tensor** results);

#ifdef __cplusplus
}
#endif
#endif
