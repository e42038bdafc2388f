/* weft_iter_config: the builder half of TensorIterator (PyTorch's
 * TensorIteratorConfig). Setters never fail on the spot; the first misuse is
 * kept and reported by weft_iter_build. */
#include <string.h>

#include "core/internal.h"
#include "iter/iter_internal.h"
#include "weft/iter.h"

weft_iter_config weft_iter_config_init(void) {
  weft_iter_config c;
  memset(&c, 0, sizeof c);
  c.op_name = "TensorIterator";
  c.check_mem_overlap = true;
  c.check_all_same_dtype = true;
  c.check_all_same_device = true;
  c.resize_outputs = true;
  c.deferred = WEFT_OK;
  return c;
}

void weft_iter_config_destroy(weft_iter_config* c) {
  for (int i = 0; i < c->ntensors; i++) {
    if (c->owned[i]) weft_tensor_release(c->tensors[i]);
    c->tensors[i] = NULL;
    c->owned[i] = false;
  }
  c->ntensors = 0;
  c->noutputs = 0;
}

static void defer(weft_iter_config* c, weft_status s, const char* msg) {
  if (c->deferred != WEFT_OK) return;
  c->deferred = s;
  c->deferred_msg = msg;
}

/* Returns the slot index, or -1 (and releases an owned tensor) when full. */
static int add_tensor(weft_iter_config* c, weft_tensor* t, bool owned, bool output) {
  if (output && c->ntensors > c->noutputs) {
    defer(c, WEFT_INTERNAL,
          "Keep in mind that you have to add all outputs first before adding any input.");
  }
  if (c->ntensors == WEFT_ITER_MAX_OPERANDS) {
    defer(c, WEFT_INVALID_ARGUMENT, "too many operands");
    if (owned) weft_tensor_release(t);
    return -1;
  }
  int i = c->ntensors++;
  c->tensors[i] = t;
  c->owned[i] = owned && t != NULL;
  c->is_const[i] = false;
  c->is_wrapped_number[i] = false;
  if (output) c->noutputs++;
  return i;
}

static void add_input_checked(weft_iter_config* c, weft_tensor* t, bool owned, bool is_const,
                              bool wrapped) {
  if (t == NULL) {
    defer(c, WEFT_INVALID_ARGUMENT, "Found undefined input tensor!");
    return;
  }
  int i = add_tensor(c, t, owned, false);
  if (i < 0) return;
  c->is_const[i] = is_const;
  if (wrapped) {
    if (weft_tensor_dim(t) != 0) defer(c, WEFT_INVALID_ARGUMENT, "a wrapped number must be 0-dim");
    c->is_wrapped_number[i] = true;
  }
}

void weft_iter_config_add_output(weft_iter_config* c, weft_tensor* t) { add_tensor(c, t, false, true); }
void weft_iter_config_add_owned_output(weft_iter_config* c, weft_tensor* t) {
  add_tensor(c, t, true, true);
}
/* Inputs are never written through; the iterator keeps them as weft_tensor*
 * only because outputs and inputs share one operand array. */
void weft_iter_config_add_input(weft_iter_config* c, const weft_tensor* t) {
  add_input_checked(c, (weft_tensor*)t, false, false, false);
}
void weft_iter_config_add_owned_input(weft_iter_config* c, weft_tensor* t) {
  add_input_checked(c, t, true, false, false);
}
void weft_iter_config_add_const_input(weft_iter_config* c, const weft_tensor* t) {
  add_input_checked(c, (weft_tensor*)t, false, true, false);
}
void weft_iter_config_add_wrapped_number(weft_iter_config* c, const weft_tensor* t) {
  add_input_checked(c, (weft_tensor*)t, false, true, true);
}

void weft_iter_config_set_op_name(weft_iter_config* c, const char* op) { c->op_name = op; }
void weft_iter_config_check_mem_overlap(weft_iter_config* c, bool v) { c->check_mem_overlap = v; }
void weft_iter_config_check_all_same_dtype(weft_iter_config* c, bool v) { c->check_all_same_dtype = v; }
void weft_iter_config_check_all_same_device(weft_iter_config* c, bool v) { c->check_all_same_device = v; }
void weft_iter_config_promote_inputs_to_common_dtype(weft_iter_config* c, bool v) {
  c->promote_inputs_to_common_dtype = v;
  if (v) c->check_all_same_dtype = false; /* as PyTorch's setter */
}
void weft_iter_config_promote_integer_inputs_to_float(weft_iter_config* c, bool v) {
  c->promote_integer_inputs_to_float = v;
  if (v && !c->promote_inputs_to_common_dtype) {
    defer(c, WEFT_INTERNAL, "promote_integer_inputs_to_float needs promote_inputs_to_common_dtype");
  }
}
void weft_iter_config_cast_common_dtype_to_outputs(weft_iter_config* c, bool v) {
  c->cast_common_dtype_to_outputs = v;
  if (v) c->check_all_same_dtype = false;
}
void weft_iter_config_enforce_safe_casting_to_output(weft_iter_config* c, bool v) {
  c->enforce_safe_casting_to_output = v;
}
void weft_iter_config_resize_outputs(weft_iter_config* c, bool v) { c->resize_outputs = v; }
void weft_iter_config_enforce_linear_iteration(weft_iter_config* c, bool v) {
  c->enforce_linear_iteration = v;
}
void weft_iter_config_is_reduction(weft_iter_config* c, bool v) { c->is_reduction = v; }
void weft_iter_config_widen_tiny_inner(weft_iter_config* c, bool v) { c->widen_tiny_inner = v; }

void weft_iter_config_declare_static_shape(weft_iter_config* c, const int64_t* shape, int ndim) {
  if (c->resize_outputs) {
    defer(c, WEFT_INTERNAL, "resize_outputs() must be called before declare_static_shape(...)");
    return;
  }
  if (ndim < 0 || ndim > WEFT_MAX_DIMS) {
    defer(c, WEFT_INVALID_ARGUMENT, "static shape has too many dimensions");
    return;
  }
  c->has_static_shape = true;
  c->static_ndim = ndim;
  for (int i = 0; i < ndim; i++) c->static_shape[i] = shape[i];
}

void weft_iter_config_declare_static_dtype(weft_iter_config* c, weft_dtype dtype) {
  if (c->check_all_same_dtype) {
    defer(c, WEFT_INTERNAL,
          "check_all_same_dtype(false) must be called before declare_static_dtype(...)");
    return;
  }
  c->has_static_dtype = true;
  c->static_dtype = dtype;
}
