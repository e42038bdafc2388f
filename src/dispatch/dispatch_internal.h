/* Dispatcher internals shared by src/dispatch, the generated op code
 * (src/dispatch/opgen.h) and tests: the op struct, thread-local key sets and
 * the inline hot path (key set -> table index -> kernel). */
#ifndef WEFT_DISPATCH_INTERNAL_H
#define WEFT_DISPATCH_INTERNAL_H

#include <stdatomic.h>

#include "core/internal.h"
#include "weft/dispatch.h"

#if defined(__GNUC__)
#define WEFT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define WEFT_UNLIKELY(x) (x)
#endif

/* Table offsets of each functionality, at compile time: a per-backend
 * functionality takes NUM_BACKENDS columns, any other one column
 * (initializeFunctionalityOffsetsAndMasks). */
#define WEFT__WIDTH_PER_BACKEND WEFT_NUM_BACKENDS
#define WEFT__WIDTH_SINGLE 1
#define WEFT__OFF(N, s, K, p, ps) \
  WEFT__OFF_##N, WEFT__OFF_LAST_##N = WEFT__OFF_##N + WEFT__WIDTH_##K - 1,
enum { WEFT__OFF_UNDEFINED = 0, WEFT_FUNCTIONALITY_LIST(WEFT__OFF) WEFT__NUM_ENTRIES };
#undef WEFT__OFF

#define WEFT__FBIT(f) (((weft_keyset)1) << (WEFT_NUM_BACKENDS + (int)(f) - 1))
#define WEFT__BBIT(b) (((weft_keyset)1) << ((int)(b) - 1))
#define WEFT__VALID_BITS ((((weft_keyset)1) << (WEFT_NUM_BACKENDS + WEFT_NUM_FUNCTIONALITIES - 1)) - 1)
/* c10::default_included_set: stored XORed so zeroed TLS means "default". */
#define WEFT__DEFAULT_INCLUDED (WEFT__FBIT(WEFT_KEY_BACKEND_SELECT) | WEFT__FBIT(WEFT_KEY_AD_INPLACE_OR_VIEW))
#define WEFT__DEFAULT_EXCLUDED ((weft_keyset)0)

typedef struct {
  uint16_t offset;
  weft_keyset mask;
} weft__offset_and_mask;
extern const weft__offset_and_mask weft__offsets_and_masks[WEFT_NUM_FUNCTIONALITIES];

typedef struct {
  weft_keyset included_x, excluded_x; /* XOR the defaults */
  int tracing;                        /* weft_trace_start() on */
  int depth;                          /* kernel nesting while tracing */
} weft__dispatch_tls;
extern WEFT_THREAD_LOCAL weft__dispatch_tls weft__dtls;
extern int weft__show_trace; /* WEFT_SHOW_DISPATCH_TRACE */

static inline int weft__highest_bit(uint64_t x) { return x ? 64 - __builtin_clzll(x) : 0; }

static inline int weft__table_index(weft_keyset ks) {
  const weft__offset_and_mask* om = &weft__offsets_and_masks[weft__highest_bit(ks >> WEFT_NUM_BACKENDS)];
  return om->offset + weft__highest_bit((ks & om->mask) >> 1);
}

/* One dispatch-table column: the kernel and how it was chosen. */
typedef struct {
  weft_kernel k;
  uint8_t kind;   /* weft_entry_kind */
  uint8_t source; /* weft_dispatch_key */
} weft__entry;

/* The generated adapter calling an op's typed kernel k from a boxed call. */
typedef weft_status (*weft__unbox_fn)(const weft_op* op, const weft_kernel* k, weft_keyset ks,
                                      weft_stack* stack);

struct weft_registration {
  weft_registration* next; /* older registration for the same key */
  weft_op* op;             /* NULL for a fallback */
  weft_dispatch_key key;
  weft_kernel kernel;
};

struct weft_op {
  char* name; /* "aten::add.Tensor" */
  weft_schema* schema;
  weft__unbox_fn unbox; /* NULL for ops defined without generated code */
  /* Keys left after removing fallthrough ones, by backend index (0: none, i: backend i). */
  weft_keyset non_fallthrough[WEFT_NUM_BACKENDS + 1];
  weft__entry table[WEFT__NUM_ENTRIES];
  weft_registration* kernels[WEFT_KEY_COUNT]; /* newest first */
  int16_t* tensor_args; /* schema positions of Tensor / Tensor? / Tensor[] args */
  int ntensor_args;
};

/* A tensor carries the Autograd key only while it requires grad, so calls on
 * plain tensors skip autograd by the key set alone (PyTorch's TensorImpl
 * key_set_ after set_requires_grad). */
static inline weft_keyset weft__tensor_keyset(const weft_tensor* t) {
  if (!t) return 0;
  weft_keyset ks = weft_device_keyset(t->device);
  return t->requires_grad ? ks : ks & ~WEFT__FBIT(WEFT_KEY_AUTOGRAD_FUNCTIONALITY);
}

/* The call key set: tensors' keys, TLS included minus excluded, fallthrough keys removed. */
static inline weft_keyset weft__call_keyset(const weft_op* op, weft_keyset ks) {
  ks = (ks | (weft__dtls.included_x ^ WEFT__DEFAULT_INCLUDED)) &
       ~(weft__dtls.excluded_x ^ WEFT__DEFAULT_EXCLUDED);
  return ks & op->non_fallthrough[weft__highest_bit(ks & WEFT_FULL_BACKEND_MASK)];
}
static inline weft_keyset weft__redispatch_keyset(const weft_op* op, weft_keyset ks) {
  ks &= WEFT__VALID_BITS;
  return ks & op->non_fallthrough[weft__highest_bit(ks & WEFT_FULL_BACKEND_MASK)];
}

/* Sets the "Could not run ..." error; returns NULL. */
const weft__entry* weft__report_missing(const weft_op* op, weft_keyset ks);

static inline const weft__entry* weft__lookup(const weft_op* op, weft_keyset ks) {
  const weft__entry* e = &op->table[weft__table_index(ks)];
  if (WEFT_UNLIKELY(e->kind == WEFT_ENTRY_MISSING || e->kind == WEFT_ENTRY_FALLTHROUGH))
    return weft__report_missing(op, ks);
  return e;
}

static inline bool weft__tracing(void) { return weft__dtls.tracing | weft__show_trace; }
/* Records/prints one call; returns the depth to restore with weft__trace_leave. */
int weft__trace_enter(const weft_op* op, weft_keyset ks, bool redispatch);
static inline void weft__trace_leave(int depth) { weft__dtls.depth = depth; }

/* Lazily initializes the dispatcher itself (the default fallbacks). The
 * dispatcher knows no operator: a library registers its own (src/ops/ops.c). */
void weft__dispatch_init(void);
/* def for generated ops: the unbox adapter and a check of the C parameter
 * kinds and of the number of returns the C return carries (nret, opgen.h's
 * WEFT__RN_) against the schema. NULL + error on failure. */
weft_op* weft__op_def_generated(const char* schema, weft__unbox_fn unbox, const uint8_t* kinds,
                                int nkinds, int nret);
/* One generated op as data (opgen.h's WEFT_OP_DEFINE): what weft__opgen_register
 * needs to def it, publish it in its slot and, for an op with a Device
 * argument, register its BackendSelect kernel (NULL for the others). */
typedef struct weft__opgen_entry {
  const char* schema;
  weft__unbox_fn unbox;
  const uint8_t* kinds;
  int nkinds, nret;
  weft_op* _Atomic* slot;
  weft_unboxed_fn backend_select;
} weft__opgen_entry;
weft_status weft__opgen_register(const weft__opgen_entry* e);
/* Resolves a generated op slot on first use: runs init, the registration
 * function of the library the op belongs to (NULL: the slot must already be
 * set), then aborts if the slot is still empty (a call before registration
 * is a bug in the library, not bad input). */
weft_op* weft__op_resolve(weft_op* _Atomic* slot, void (*init)(void));
static inline const weft_op* weft__op_get(weft_op* _Atomic* slot, void (*init)(void)) {
  weft_op* op = atomic_load_explicit(slot, memory_order_acquire);
  return op ? op : weft__op_resolve(slot, init);
}
/* impl for a library's own kernels: NULL + error when key already has a
 * kernel for op (a kernel registered twice is a bug, not an override). */
weft_registration* weft__op_impl_unique(weft_op* op, weft_dispatch_key key, weft_kernel k);
/* WEFT_KERNEL's body: impl_unique of fn (unboxed, named name) on op() for
 * key; WEFT_OK or the error's status. */
weft_status weft__kernel_register(weft_op* (*op)(void), weft_dispatch_key key, weft_unboxed_fn fn, const char* name);

/* "Tensor", "int", ... for a schema argument type (src/dispatch/schema.c). */
const char* weft__schema_type_name(int type);

#endif
