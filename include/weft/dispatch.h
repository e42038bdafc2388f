/* The dispatcher: PyTorch's c10 Dispatcher in C.
 *
 * Every operator has a schema (parsed from PyTorch's schema syntax) and a
 * dispatch table with one kernel per runtime dispatch key. A call computes a
 * key set from its tensor arguments and this thread's included/excluded keys,
 * takes the highest-priority key and runs that key's kernel; a kernel may
 * redispatch to the keys below its own. Kernels are unboxed (typed C
 * functions, generated entry points in src/ops/ops.def) or boxed (one
 * signature for every op, arguments on a weft_stack); the dispatcher adapts
 * between the two in both directions. */
#ifndef WEFT_DISPATCH_H
#define WEFT_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- dispatch keys ----
 * Backend components: one bit each, lowest priority first. X(ENUM, name). */
#define WEFT_BACKEND_LIST(X, P) X(P, CPU, "CPU") X(P, META, "Meta") X(P, WEBGPU, "WebGPU")

/* Functionality keys, lowest priority first. X(ENUM, name, kind, instance
 * enum prefix, instance name prefix). PER_BACKEND functionalities get one
 * runtime key per backend (Dense x CPU = CPU, AutogradFunctionality x Meta =
 * AutogradMeta); SINGLE ones are runtime keys themselves. Append new keys at
 * the priority they should have. */
#define WEFT_FUNCTIONALITY_LIST(X)                                             \
  X(DENSE, "Dense", PER_BACKEND, , "")                                         \
  X(BACKEND_SELECT, "BackendSelect", SINGLE, , "")                             \
  X(AD_INPLACE_OR_VIEW, "ADInplaceOrView", SINGLE, , "")                       \
  X(AUTOGRAD_FUNCTIONALITY, "AutogradFunctionality", PER_BACKEND, AUTOGRAD_, "Autograd") \
  X(TRACER, "Tracer", SINGLE, , "")

/* Alias keys: registering to one registers to a set of runtime keys. */
#define WEFT_ALIAS_KEY_LIST(X)                                  \
  X(AUTOGRAD, "Autograd")                                       \
  X(COMPOSITE_IMPLICIT_AUTOGRAD, "CompositeImplicitAutograd")   \
  X(COMPOSITE_EXPLICIT_AUTOGRAD, "CompositeExplicitAutograd")

#define WEFT__IF_PER_BACKEND(...) __VA_ARGS__
#define WEFT__IF_SINGLE(...)
#define WEFT__KEY_F(N, s, K, p, ps) WEFT_KEY_##N,
#define WEFT__KEY_B(p, B, bs) WEFT_KEY_##p##B,
#define WEFT__KEY_I(N, s, K, p, ps) WEFT__IF_##K(WEFT_BACKEND_LIST(WEFT__KEY_B, p))
#define WEFT__KEY_A(N, s) WEFT_KEY_##N,
typedef enum {
  WEFT_KEY_UNDEFINED = 0,
  WEFT_FUNCTIONALITY_LIST(WEFT__KEY_F)     /* functionality keys: value = functionality index */
  WEFT_KEY__END_OF_FUNCTIONALITY,
  WEFT_FUNCTIONALITY_LIST(WEFT__KEY_I)     /* per-backend runtime keys: WEFT_KEY_CPU, ... */
  WEFT_KEY__END_OF_RUNTIME,
  WEFT_ALIAS_KEY_LIST(WEFT__KEY_A)
  WEFT_KEY_COUNT
} weft_dispatch_key;

#define WEFT__BACKEND_E(p, B, bs) WEFT_BACKEND_##B,
typedef enum {
  WEFT_BACKEND_INVALID = 0,
  WEFT_BACKEND_LIST(WEFT__BACKEND_E, )
  WEFT_BACKEND__END
} weft_backend_component;
#define WEFT_NUM_BACKENDS ((int)WEFT_BACKEND__END - 1)
#define WEFT_NUM_FUNCTIONALITIES ((int)WEFT_KEY__END_OF_FUNCTIONALITY) /* Undefined included */

/* "CPU", "AutogradMeta", "CompositeImplicitAutograd", ...; "?" when out of range. */
const char* weft_dispatch_key_name(weft_dispatch_key k);
/* WEFT_OK, or WEFT_INVALID_ARGUMENT for an unknown name. */
weft_status weft_dispatch_key_from_name(const char* name, weft_dispatch_key* out);
bool weft_dispatch_key_is_runtime(weft_dispatch_key k); /* has a dispatch-table column */
bool weft_dispatch_key_is_alias(weft_dispatch_key k);
/* Functionality of a key (CPU -> Dense, AutogradCPU -> AutogradFunctionality). */
weft_dispatch_key weft_dispatch_key_functionality(weft_dispatch_key k);
weft_backend_component weft_dispatch_key_backend(weft_dispatch_key k);
/* The runtime key of functionality f on backend b (Dense, META -> Meta). */
weft_dispatch_key weft_dispatch_key_for(weft_dispatch_key f, weft_backend_component b);

/* ---- key sets ----
 * 64 bits: backend bits at [0, NUM_BACKENDS), functionality bits above
 * them; higher bits have higher priority. Per-backend keys set one bit of
 * each kind, so sets combine with | and &. */
typedef uint64_t weft_keyset;

#define WEFT_FULL_BACKEND_MASK ((((weft_keyset)1) << WEFT_NUM_BACKENDS) - 1)
/* Number of dispatch-table columns (index 0 is Undefined). */
int weft_num_runtime_entries(void);

weft_keyset weft_keyset_of(weft_dispatch_key k);  /* alias keys give 0 */
bool weft_keyset_has(weft_keyset ks, weft_dispatch_key k); /* every bit of k's set */
/* Highest-priority runtime key (a per-backend functionality resolves to its
 * highest backend); Undefined for the empty set. */
weft_dispatch_key weft_keyset_highest(weft_keyset ks);
/* getDispatchTableIndexForDispatchKeySet: offsets-and-masks math. */
int weft_keyset_table_index(weft_keyset ks);
/* Table column of a runtime key; -1 for others. */
int weft_dispatch_key_table_index(weft_dispatch_key k);
/* The runtime key owning table column i. */
weft_dispatch_key weft_table_index_key(int i);
/* Every functionality strictly below k's, with all backend bits (FULL_AFTER). */
weft_keyset weft_keyset_full_after(weft_dispatch_key k);
/* The runtime keys an alias stands for (getRuntimeDispatchKeySet); a runtime
 * key gives its own set. */
weft_keyset weft_alias_runtime_keyset(weft_dispatch_key alias);
/* Keys a tensor on device d may carry: {Dense, AutogradFunctionality} x d plus ADInplaceOrView
 * (a tensor that does not require grad drops AutogradFunctionality). */
weft_keyset weft_device_keyset(weft_device d);
/* Just the backend key of d ({CPU} or {Meta}): what BackendSelect redispatches to. */
weft_keyset weft_device_backend_keyset(weft_device d);
/* "[CPU, AutogradCPU, ADInplaceOrView]" into buf, highest priority last. */
void weft_keyset_format(weft_keyset ks, char* buf, size_t cap);

/* Autograd keys of every backend; the same plus ADInplaceOrView. */
weft_keyset weft_autograd_keyset(void);
weft_keyset weft_autograd_keyset_with_ad_inplace_or_view(void);
/* What autograd kernels redispatch with: ks & after_autograd_keyset. */
weft_keyset weft_after_autograd_keyset(void);
weft_keyset weft_after_ad_inplace_or_view_keyset(void);

/* ---- thread-local included / excluded keys ----
 * Included keys join every call's key set; excluded keys leave it. By default
 * BackendSelect and ADInplaceOrView are included (as in PyTorch). Guards nest:
 * restore them in reverse order. */
typedef struct {
  weft_keyset included, excluded;
} weft_tls_guard;
weft_keyset weft_tls_included(void);
weft_keyset weft_tls_excluded(void);
weft_tls_guard weft_tls_include(weft_keyset ks);
weft_tls_guard weft_tls_exclude(weft_keyset ks);
void weft_tls_restore(weft_tls_guard g);
/* at::AutoDispatchBelowADInplaceOrView: exclude autograd and ADInplaceOrView. */
weft_tls_guard weft_dispatch_below_ad_inplace_or_view(void);

/* ---- boxed values ---- */
typedef struct {
  enum { WEFT_SCALAR_INT, WEFT_SCALAR_DOUBLE, WEFT_SCALAR_BOOL } tag;
  union {
    int64_t i;
    double d;
    bool b;
  } v;
} weft_scalar;
static inline weft_scalar weft_scalar_int(int64_t i) { weft_scalar s = {WEFT_SCALAR_INT, {.i = i}}; return s; }
static inline weft_scalar weft_scalar_double(double d) { weft_scalar s = {WEFT_SCALAR_DOUBLE, {.d = d}}; return s; }
static inline weft_scalar weft_scalar_bool(bool b) { weft_scalar s = {WEFT_SCALAR_BOOL, {.b = b}}; return s; }
double weft_scalar_to_double(weft_scalar s);

typedef enum {
  WEFT_IV_NONE,
  WEFT_IV_TENSOR,
  WEFT_IV_INT,
  WEFT_IV_DOUBLE,
  WEFT_IV_BOOL,
  WEFT_IV_INT_LIST,
  WEFT_IV_DOUBLE_LIST,
  WEFT_IV_TENSOR_LIST,
  WEFT_IV_STRING,
  WEFT_IV_DTYPE,
  WEFT_IV_MEMORY_FORMAT,
  WEFT_IV_DEVICE,
  WEFT_IV_TAG_COUNT
} weft_iv_tag;

/* One boxed value. Owns what it points to: a tensor reference, a list copy, a string copy. */
typedef struct weft_ivalue {
  weft_iv_tag tag;
  union {
    weft_tensor* t;
    int64_t i;
    double d;
    bool b;
    struct { int64_t* data; int64_t len; } ilist;
    struct { double* data; int64_t len; } dlist;
    struct { weft_tensor** data; int64_t len; } tlist;
    char* s;
    weft_dtype dtype;
    weft_memory_format mf;
    weft_device device;
  } u;
} weft_ivalue;

const char* weft_iv_tag_name(weft_iv_tag t); /* "Tensor", "int", "int[]", ... */
weft_status weft_ivalue_copy(weft_ivalue* dst, const weft_ivalue* src);
void weft_ivalue_destroy(weft_ivalue* v); /* leaves NONE */
/* PyTorch-like rendering into buf ("tensor(sizes=[2, 3], dtype=float32, device=cpu)", "[1, 2]", "None"). */
void weft_ivalue_format(const weft_ivalue* v, char* buf, size_t cap);

/* The boxed calling convention: arguments pushed in schema order; a call pops
 * them and pushes the returns. A stack starts with inline room for a few
 * values; do not copy an initialized stack by value. */
#define WEFT_STACK_INLINE 12
typedef struct weft_stack {
  weft_ivalue* v;
  int64_t size, cap;
  weft_ivalue inline_v[WEFT_STACK_INLINE];
} weft_stack;

void weft_stack_init(weft_stack* s);
void weft_stack_clear(weft_stack* s); /* destroys every value; frees growth */
weft_status weft_stack_push(weft_stack* s, weft_ivalue v); /* takes ownership of v (destroyed on failure) */
weft_status weft_stack_push_none(weft_stack* s);
weft_status weft_stack_push_tensor(weft_stack* s, const weft_tensor* t); /* retains; NULL pushes None */
weft_status weft_stack_push_tensor_owned(weft_stack* s, weft_tensor* t); /* takes the reference */
weft_status weft_stack_push_int(weft_stack* s, int64_t i);
weft_status weft_stack_push_double(weft_stack* s, double d);
weft_status weft_stack_push_bool(weft_stack* s, bool b);
weft_status weft_stack_push_scalar(weft_stack* s, weft_scalar v);
weft_status weft_stack_push_int_list(weft_stack* s, const int64_t* v, int64_t n); /* copies */
weft_status weft_stack_push_tensor_list(weft_stack* s, weft_tensor* const* v, int64_t n); /* retains */
weft_status weft_stack_push_string(weft_stack* s, const char* str); /* copies */
weft_status weft_stack_push_dtype(weft_stack* s, weft_dtype d);
weft_status weft_stack_push_memory_format(weft_stack* s, weft_memory_format f);
weft_status weft_stack_push_device(weft_stack* s, weft_device d);
/* Moves the top value out (caller owns it). The stack must not be empty. */
weft_ivalue weft_stack_pop(weft_stack* s);
/* The i-th value from the top (0 = top), borrowed. */
weft_ivalue* weft_stack_peek(weft_stack* s, int64_t i);
void weft_stack_drop(weft_stack* s, int64_t n); /* destroys the top n */
/* Pops a tensor return (caller owns it); NULL + error if the top is not a tensor. */
weft_tensor* weft_stack_pop_tensor(weft_stack* s);

/* ---- schemas ---- */
typedef enum {
  WEFT_TYPE_TENSOR,
  WEFT_TYPE_INT,
  WEFT_TYPE_SYMINT,
  WEFT_TYPE_FLOAT,
  WEFT_TYPE_BOOL,
  WEFT_TYPE_STR,
  WEFT_TYPE_SCALAR,
  WEFT_TYPE_SCALAR_TYPE,
  WEFT_TYPE_MEMORY_FORMAT,
  WEFT_TYPE_LAYOUT,
  WEFT_TYPE_DEVICE,
  WEFT_TYPE_GENERATOR,
  WEFT_TYPE_DIMNAME,
  WEFT_TYPE_COUNT
} weft_type_kind;

typedef struct weft_arg {
  char* name;           /* NULL for unnamed returns */
  weft_type_kind type;  /* element type for lists */
  bool is_list;         /* int[], int[2], Tensor[] */
  int list_size;        /* N of int[N]; 0 when unsized */
  bool elem_optional;   /* Tensor?[] */
  bool optional;        /* int? / int[]? */
  char* alias;          /* "a" of Tensor(a) / Tensor(a!); NULL when none */
  bool is_write;        /* Tensor(a!) */
  bool kwarg_only;      /* after '*' */
  bool has_default;
  char* default_text;   /* the default as written */
  weft_ivalue default_value;
} weft_arg;

typedef struct weft_schema {
  char* ns;        /* "aten" */
  char* name;      /* "add" */
  char* overload;  /* "Tensor" or "" */
  char* full_name; /* "aten::add.Tensor" */
  weft_arg* args;
  int nargs;
  weft_arg* returns;
  int nreturns;
  bool tuple_return; /* returns were written in parentheses */
  bool is_vararg, is_varret;
} weft_schema;

/* Parses a schema; a missing namespace becomes `default_ns`. NULL + error
 * ("schema: expected ... at position N") on malformed input. */
weft_schema* weft_schema_parse(const char* text, const char* default_ns);
void weft_schema_free(weft_schema* s);
/* Canonical text (PyTorch's FunctionSchema printing) into buf; returns the full length. */
size_t weft_schema_format(const weft_schema* s, char* buf, size_t cap);
/* "int[2]", "Tensor(a!)", "ScalarType?" */
size_t weft_arg_type_format(const weft_arg* a, char* buf, size_t cap);

/* ---- operators ---- */
typedef struct weft_op weft_op;
typedef struct weft_registration weft_registration;
typedef struct weft_kernel weft_kernel;

/* A boxed kernel: arguments on top of the stack (schema order); pops them
 * and pushes the returns. ks is the key set the kernel was chosen with. */
typedef weft_status (*weft_boxed_fn)(const weft_op* op, weft_keyset ks, weft_stack* stack, void* ctx);
/* An unboxed kernel, cast to this type; its real type is the op's typed signature. */
typedef void (*weft_unboxed_fn)(void);

enum {
  WEFT_KERNEL_TAKES_KEYSET = 1, /* unboxed fn's first parameter is the weft_keyset */
  WEFT_KERNEL_FALLTHROUGH = 2   /* skip this key: dispatch continues below it */
};

struct weft_kernel {
  weft_boxed_fn boxed;     /* boxed form (NULL for unboxed-only kernels) */
  weft_unboxed_fn unboxed; /* typed form (NULL for boxed-only kernels) */
  void* ctx;               /* passed to boxed */
  const char* name;        /* for table dumps (static string) */
  unsigned flags;
};

/* def: registers an op from its schema (namespace "aten" unless given).
 * Duplicate names are an error. Ops live until the process ends. */
weft_op* weft_op_def(const char* schema);
/* "aten::add.Tensor", "add.Tensor", or "add" (empty overload). NULL + error when unknown. */
weft_op* weft_op_find(const char* name);
const char* weft_op_name(const weft_op* op); /* "aten::add.Tensor" */
const weft_schema* weft_op_schema(const weft_op* op);
int64_t weft_op_count(void);
weft_op* weft_op_at(int64_t i); /* definition order */

/* impl: a kernel for a runtime or alias key; the newest registration for a key
 * wins and releasing it restores the previous one. NULL + error on failure. */
weft_registration* weft_op_impl(weft_op* op, weft_dispatch_key key, weft_kernel k);
weft_registration* weft_op_impl_boxed(weft_op* op, weft_dispatch_key key, weft_boxed_fn fn,
                                      void* ctx, const char* name);
weft_registration* weft_op_impl_fallthrough(weft_op* op, weft_dispatch_key key);
/* A boxed (or fallthrough) kernel for one key of every op that has no kernel of its own there. */
weft_registration* weft_dispatch_fallback(weft_dispatch_key key, weft_kernel k);
weft_registration* weft_dispatch_fallback_fallthrough(weft_dispatch_key key);
void weft_registration_release(weft_registration* r); /* NULL is a no-op */

/* How a table entry was resolved (computeDispatchTableEntryWithDebug). */
typedef enum {
  WEFT_ENTRY_MISSING,
  WEFT_ENTRY_DIRECT,      /* a kernel registered for this key */
  WEFT_ENTRY_ALIAS,       /* from CompositeExplicitAutograd / CompositeImplicitAutograd / Autograd */
  WEFT_ENTRY_FALLBACK,    /* the key's backend fallback */
  WEFT_ENTRY_FALLTHROUGH  /* a fallthrough kernel (direct, alias or fallback) */
} weft_entry_kind;
const char* weft_entry_kind_name(weft_entry_kind k); /* "direct", "alias", ... */

typedef struct {
  weft_dispatch_key key;    /* the runtime key of the column */
  weft_entry_kind kind;
  weft_dispatch_key source; /* key the kernel was registered for (the alias for ALIAS) */
  const char* kernel;       /* kernel name; "" when missing */
  bool boxed_only;
} weft_table_entry;
/* Entry for runtime key k. */
weft_status weft_op_table_entry(const weft_op* op, weft_dispatch_key k, weft_table_entry* out);
/* Multi-line dump, one line per runtime key; returns the full length. */
size_t weft_op_table_dump(const weft_op* op, char* buf, size_t cap);
/* Does `key` (runtime or alias) have a kernel registered directly? */
bool weft_op_has_kernel(const weft_op* op, weft_dispatch_key key);

/* ---- boxed calls ----
 * The stack holds exactly the op's arguments on top (use fill_defaults for
 * trailing ones). On success they are replaced by the returns; on error the
 * arguments are dropped and the status returned. */
weft_status weft_op_call_boxed(const weft_op* op, weft_stack* stack);
/* Look up with ks itself (the caller removed its own key and the ones above). */
weft_status weft_op_redispatch_boxed(const weft_op* op, weft_keyset ks, weft_stack* stack);
/* Given `given` arguments on top of the stack, checks their types against the
 * schema and appends defaults for the missing trailing ones. */
weft_status weft_op_prepare_args(const weft_op* op, weft_stack* stack, int64_t given);
/* The key set a call with these (already pushed) arguments dispatches on. */
weft_keyset weft_op_call_keyset(const weft_op* op, const weft_stack* stack);

/* ---- dispatch trace ----
 * While on, every call and redispatch appends (op, key, depth) for this
 * thread. WEFT_SHOW_DISPATCH_TRACE=1 in the environment prints every call to
 * stderr, like TORCH_SHOW_DISPATCH_TRACE. */
typedef struct {
  const char* op;        /* "aten::add.Tensor" */
  weft_dispatch_key key; /* the key whose kernel ran */
  int depth;             /* nesting: 0 for a call made outside any kernel */
  bool redispatch;
  bool node;             /* an autograd node run by backward: op is its name ("MulBackward0") */
} weft_trace_entry;
void weft_trace_start(void); /* clears and turns on */
void weft_trace_stop(void);
int64_t weft_trace_count(void);
const weft_trace_entry* weft_trace_entries(void);
/* The autograd engine brackets each node it runs with these, so the ops its
 * backward dispatches nest under the node; enter returns the depth to restore. */
int weft_trace_node_enter(const char* name);
void weft_trace_node_leave(int depth);

#ifdef __cplusplus
}
#endif
#endif
