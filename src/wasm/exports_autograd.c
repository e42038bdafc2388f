/* Autograd's entry points for js/autograd.js (ABI: exports.c). Handles are
 * weft_tensor* / weft_node* numbers; functions returning a handle return a
 * new reference (0 when there is none or on error: JS tells them apart with
 * weft_last_status()); statuses are ints. Lists of tensors arrive as arrays
 * of handles in memory JS allocated. */
#include <emscripten/emscripten.h>

#include <stdint.h>

#include "base/error.h"
#include "weft/weft.h"

EMSCRIPTEN_KEEPALIVE int weft_wasm_set_requires_grad(weft_tensor* t, int on) { return weft_set_requires_grad(t, on); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_requires_grad(const weft_tensor* t) { return weft_requires_grad(t); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_is_leaf(const weft_tensor* t) { return weft_is_leaf(t); }
EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_grad(const weft_tensor* t) { return weft_tensor_grad(t); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_set_grad(weft_tensor* t, const weft_tensor* g) { return weft_set_grad(t, g); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_retain_grad(weft_tensor* t) { return weft_retain_grad(t); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_retains_grad(const weft_tensor* t) { return weft_retains_grad(t); }
EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_detach(const weft_tensor* t) { return weft_detach(t); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_detach_(weft_tensor* t) { return weft_detach_(t); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_version(const weft_tensor* t) { return (int)weft_tensor_version(t); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_set_grad_enabled(int on) { return weft_set_grad_enabled(on); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_grad_enabled(void) { return weft_grad_enabled(); }

EMSCRIPTEN_KEEPALIVE weft_node* weft_wasm_grad_fn(const weft_tensor* t) { return weft_node_retain(weft_grad_fn(t)); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_output_nr(const weft_tensor* t) { return (int)weft_output_nr(t); }
EMSCRIPTEN_KEEPALIVE void weft_wasm_node_release(weft_node* n) { weft_node_release(n); }
EMSCRIPTEN_KEEPALIVE const char* weft_wasm_node_name(const weft_node* n) { return weft_node_name(n); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_node_num_next(const weft_node* n) { return (int)weft_node_num_next(n); }
/* next edge i: the node (a new reference, 0 for none); its input number via weft_wasm_node_input_nr */
EMSCRIPTEN_KEEPALIVE weft_node* weft_wasm_node_next(const weft_node* n, int i) {
  return weft_node_retain(weft_node_next(n, i, NULL));
}
EMSCRIPTEN_KEEPALIVE int weft_wasm_node_input_nr(const weft_node* n, int i) {
  int64_t nr = 0;
  weft_node_next(n, i, &nr);
  return (int)nr;
}
EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_node_variable(const weft_node* n) {
  weft_tensor* v = weft_node_variable(n);
  return v ? weft_tensor_retain(v) : NULL;
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_backward(weft_tensor** roots, weft_tensor** grads, int n, int retain, int create) {
  return weft_backward(roots, grads, n, retain, create);
}
EMSCRIPTEN_KEEPALIVE int weft_wasm_autograd_grad(weft_tensor** outs, weft_tensor** gouts, int nout, weft_tensor** ins,
                                                 int nin, int retain, int create, int allow_unused,
                                                 weft_tensor** results) {
  return weft_autograd_grad(outs, gouts, nout, ins, nin, retain, create, allow_unused, results);
}

/* ---- tensor hooks: t.registerHook(fn) ----
 * JS keeps the functions (Module.weftHooks, js/autograd.js) by id; the engine
 * calls them through this trampoline on the thread running backward, which
 * is the thread whose JS called it (the engine never runs on the pool). The
 * hook's exception stays on the JS side (rethrown by backward); here it is a
 * failing status that stops the pass. */
EM_JS(int, weft_wasm_js_hook_call, (int id, const weft_tensor* grad, weft_tensor** out), {
  return Module['weftHooks'] ? Module['weftHooks'].call(id, grad, out) : 0;
});
EM_JS(void, weft_wasm_js_hook_free, (int id), {
  if (Module['weftHooks']) Module['weftHooks'].free(id);
});

static weft_status js_hook(void* ctx, const weft_tensor* grad, weft_tensor** out) {
  if (!weft_wasm_js_hook_call((int)(uintptr_t)ctx, grad, out)) return WEFT_OK;
  return weft__error(WEFT_INVALID_ARGUMENT, "a tensor hook threw during backward");
}
static void js_hook_free(void* ctx) { weft_wasm_js_hook_free((int)(uintptr_t)ctx); }

EMSCRIPTEN_KEEPALIVE int weft_wasm_register_hook(weft_tensor* t, int id) {
  return weft_register_hook(t, js_hook, (void*)(uintptr_t)id, js_hook_free);
}
EMSCRIPTEN_KEEPALIVE int weft_wasm_remove_hook(weft_tensor* t, int id) {
  return weft_remove_hook(t, (const void*)(uintptr_t)id);
}
/* backward(inputs=): t's hooks on a gradient about to go into t.grad (a new reference; 0 on error) */
EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_apply_hooks(weft_tensor* t, const weft_tensor* grad) {
  weft_tensor* out = NULL;
  return weft_apply_hooks(t, grad, &out) ? NULL : out;
}
EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_tensor_retain(weft_tensor* t) { return weft_tensor_retain(t); }
