/* The operator registry and dispatch tables (aten/src/ATen/core/dispatch/
 * Dispatcher.cpp, OperatorEntry.cpp): def, impl, fallbacks, table entries
 * computed with computeDispatchTableEntryWithDebug's precedence, boxed calls,
 * the missing-kernel error, the dispatch trace. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/opgen.h"

static pthread_mutex_t reg_mutex = PTHREAD_MUTEX_INITIALIZER;
static weft_op** ops;
static int64_t nops, ops_cap;
/* Backend fallbacks, by (runtime or alias) key, newest first. */
static weft_registration* fallbacks[WEFT_KEY_COUNT];

int weft__show_trace;

/* ---- lazy initialization ---- */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static atomic_int init_done;
static WEFT_THREAD_LOCAL bool in_init;

static void install_default_fallbacks(void) {
  /* As PyTorch: these keys do nothing for ops that have no kernel of their own there. */
  weft_dispatch_fallback_fallthrough(WEFT_KEY_BACKEND_SELECT);
  weft_dispatch_fallback_fallthrough(WEFT_KEY_AD_INPLACE_OR_VIEW);
  weft_dispatch_fallback_fallthrough(WEFT_KEY_AUTOGRAD);
  weft_dispatch_fallback_fallthrough(WEFT_KEY_TRACER);
}

static void init_body(void) {
  in_init = true;
  const char* env = getenv("WEFT_SHOW_DISPATCH_TRACE");
  weft__show_trace = env && env[0] && strcmp(env, "0") != 0;
  install_default_fallbacks();
  in_init = false;
  atomic_store(&init_done, 1);
}

void weft__dispatch_init(void) {
  if (atomic_load_explicit(&init_done, memory_order_acquire) || in_init) return;
  pthread_once(&init_once, init_body);
}

weft_op* weft__op_resolve(weft_op* _Atomic* slot, void (*init)(void)) {
  weft__dispatch_init();
  if (init) init();
  weft_op* op = atomic_load_explicit(slot, memory_order_acquire);
  if (!op) {
    fprintf(stderr, "weft: an operator was called before its registration\n");
    abort();
  }
  return op;
}

/* ---- table computation ---- */
static const weft_kernel* top(weft_registration* const* list, weft_dispatch_key k) {
  return list[k] ? &list[k]->kernel : NULL;
}

static bool in_alias(weft_dispatch_key k, weft_dispatch_key alias) {
  weft_keyset m = weft_keyset_of(k);
  return (weft_alias_runtime_keyset(alias) & m) == m;
}

static const weft_kernel* fallback_for(weft_dispatch_key k, weft_dispatch_key* source) {
  static const weft_dispatch_key aliases[] = {WEFT_KEY_AUTOGRAD, WEFT_KEY_COMPOSITE_EXPLICIT_AUTOGRAD,
                                              WEFT_KEY_COMPOSITE_IMPLICIT_AUTOGRAD};
  *source = k;
  if (fallbacks[k]) return &fallbacks[k]->kernel;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (fallbacks[aliases[i]] && in_alias(k, aliases[i])) {
      *source = aliases[i];
      return &fallbacks[aliases[i]]->kernel;
    }
  return NULL;
}

static weft__entry make_entry(const weft_kernel* k, weft_entry_kind kind, weft_dispatch_key source) {
  weft__entry e;
  memset(&e, 0, sizeof e);
  if (k) {
    e.k = *k;
    if (k->flags & WEFT_KERNEL_FALLTHROUGH) kind = WEFT_ENTRY_FALLTHROUGH;
  }
  e.kind = (uint8_t)kind;
  e.source = (uint8_t)source;
  return e;
}

/* computeDispatchTableEntryWithDebug */
static weft__entry compute_entry(const weft_op* op, weft_dispatch_key k) {
  const weft_kernel* kern;
  /* 1. a kernel registered for k itself */
  if ((kern = top(op->kernels, k))) return make_entry(kern, WEFT_ENTRY_DIRECT, k);
  /* 2. CompositeExplicitAutograd fills the backend keys */
  const weft_kernel* cea = top(op->kernels, WEFT_KEY_COMPOSITE_EXPLICIT_AUTOGRAD);
  if (cea && in_alias(k, WEFT_KEY_COMPOSITE_EXPLICIT_AUTOGRAD))
    return make_entry(cea, WEFT_ENTRY_ALIAS, WEFT_KEY_COMPOSITE_EXPLICIT_AUTOGRAD);
  /* 3. CompositeImplicitAutograd: for an Autograd<B> key only when B has no
   * kernel of its own (nor CompositeExplicitAutograd), so autograd goes
   * through the backend kernel instead of the decomposition. */
  bool has_backend_kernel = cea != NULL;
  if (weft_dispatch_key_functionality(k) == WEFT_KEY_AUTOGRAD_FUNCTIONALITY) {
    weft_dispatch_key bk = weft_dispatch_key_for(WEFT_KEY_DENSE, weft_dispatch_key_backend(k));
    has_backend_kernel = has_backend_kernel || op->kernels[bk];
  }
  const weft_kernel* cia = top(op->kernels, WEFT_KEY_COMPOSITE_IMPLICIT_AUTOGRAD);
  if (cia && !has_backend_kernel && in_alias(k, WEFT_KEY_COMPOSITE_IMPLICIT_AUTOGRAD))
    return make_entry(cia, WEFT_ENTRY_ALIAS, WEFT_KEY_COMPOSITE_IMPLICIT_AUTOGRAD);
  /* 4. Autograd alias for Autograd<B> keys */
  const weft_kernel* ag = top(op->kernels, WEFT_KEY_AUTOGRAD);
  if (ag && in_alias(k, WEFT_KEY_AUTOGRAD)) return make_entry(ag, WEFT_ENTRY_ALIAS, WEFT_KEY_AUTOGRAD);
  /* 5. the key's backend fallback */
  weft_dispatch_key source;
  if ((kern = fallback_for(k, &source))) return make_entry(kern, WEFT_ENTRY_FALLBACK, source);
  return make_entry(NULL, WEFT_ENTRY_MISSING, k);
}

/* A call without tensors (an empty Tensor[]) has no backend: as in
 * PyTorch, a composite kernel takes it, so the op's own error ("expected a
 * non-empty list") is the one reported; else it is missing. */
static weft__entry undefined_entry(const weft_op* op) {
  static const weft_dispatch_key composite[] = {WEFT_KEY_COMPOSITE_EXPLICIT_AUTOGRAD,
                                                WEFT_KEY_COMPOSITE_IMPLICIT_AUTOGRAD};
  for (size_t i = 0; i < sizeof composite / sizeof composite[0]; i++) {
    const weft_kernel* kern = top(op->kernels, composite[i]);
    if (kern) return make_entry(kern, WEFT_ENTRY_ALIAS, composite[i]);
  }
  return make_entry(NULL, WEFT_ENTRY_MISSING, WEFT_KEY_UNDEFINED);
}

static void update_table(weft_op* op) {
  /* the runtime key of each entry, inverted once here (weft_table_index_key
   * searches every key: per entry, it was a third of the library's init) */
  weft_dispatch_key key_at[WEFT__NUM_ENTRIES];
  for (int i = 0; i < WEFT__NUM_ENTRIES; i++) key_at[i] = WEFT_KEY_UNDEFINED;
  for (int k = 1; k < WEFT_KEY__END_OF_RUNTIME; k++) { /* the lowest key of an index, as that function */
    int i = weft_dispatch_key_table_index((weft_dispatch_key)k);
    if (i >= 0 && i < WEFT__NUM_ENTRIES && key_at[i] == WEFT_KEY_UNDEFINED) key_at[i] = (weft_dispatch_key)k;
  }
  for (int i = 0; i < WEFT__NUM_ENTRIES; i++) {
    weft_dispatch_key k = key_at[i];
    op->table[i] = k == WEFT_KEY_UNDEFINED ? undefined_entry(op) : compute_entry(op, k);
  }
  for (int b = 0; b <= WEFT_NUM_BACKENDS; b++) {
    weft_keyset m = WEFT__VALID_BITS;
    int backend = b ? b : WEFT_BACKEND_CPU; /* no backend bit looks up like CPU */
    for (int i = 1; i < WEFT__NUM_ENTRIES; i++) {
      if (op->table[i].kind != WEFT_ENTRY_FALLTHROUGH) continue;
      weft_dispatch_key k = key_at[i];
      weft_backend_component kb = weft_dispatch_key_backend(k);
      if (kb == WEFT_BACKEND_INVALID || (int)kb == backend)
        m &= ~WEFT__FBIT(weft_dispatch_key_functionality(k));
    }
    op->non_fallthrough[b] = m;
  }
}

/* ---- def ---- */
/* The ops by name: open addressing over indices into ops (+1; 0 empty), at
 * most half full. A scan of every name per def was a fifth of init. */
static int64_t* name_slots;
static int64_t name_cap;

static uint64_t name_hash(const char* s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static void name_put(int64_t* slots, int64_t cap, int64_t i) {
  uint64_t j = name_hash(ops[i]->name) & (uint64_t)(cap - 1);
  while (slots[j]) j = (j + 1) & (uint64_t)(cap - 1);
  slots[j] = i + 1;
}

/* Room for op number nops (under reg_mutex); false when out of memory. */
static bool name_reserve(void) {
  if ((nops + 1) * 2 <= name_cap) return true;
  int64_t cap = name_cap ? name_cap * 2 : 256;
  int64_t* slots = calloc((size_t)cap, sizeof *slots);
  if (!slots) return false;
  for (int64_t i = 0; i < nops; i++) name_put(slots, cap, i);
  free(name_slots);
  name_slots = slots;
  name_cap = cap;
  return true;
}

static weft_op* find_locked(const char* full) {
  if (!name_cap) return NULL;
  for (uint64_t j = name_hash(full) & (uint64_t)(name_cap - 1); name_slots[j]; j = (j + 1) & (uint64_t)(name_cap - 1))
    if (strcmp(ops[name_slots[j] - 1]->name, full) == 0) return ops[name_slots[j] - 1];
  return NULL;
}

static void op_free(weft_op* op) {
  weft_schema_free(op->schema);
  free(op->tensor_args);
  free(op);
}

static weft_op* op_new(const char* schema_text, weft__unbox_fn unbox) {
  weft_schema* s = weft_schema_parse(schema_text, "aten");
  if (!s) return NULL;
  weft_op* op = calloc(1, sizeof *op);
  if (!op || !(op->tensor_args = malloc(sizeof(int16_t) * (size_t)(s->nargs + 1)))) {
    free(op);
    weft_schema_free(s);
    return weft__error_null(WEFT_OUT_OF_MEMORY, "def: out of memory");
  }
  op->schema = s;
  op->name = s->full_name;
  op->unbox = unbox;
  for (int i = 0; i < s->nargs; i++)
    if (s->args[i].type == WEFT_TYPE_TENSOR) op->tensor_args[op->ntensor_args++] = (int16_t)i;
  return op;
}

static weft_op* op_insert(weft_op* op) {
  pthread_mutex_lock(&reg_mutex);
  if (find_locked(op->name)) {
    pthread_mutex_unlock(&reg_mutex);
    char text[512];
    weft_schema_format(op->schema, text, sizeof text);
    weft__error(WEFT_INVALID_ARGUMENT,
                "Tried to register an operator (%s) with the same name and overload name multiple "
                "times. Each overload's schema should only be registered with a single call to def().",
                text);
    op_free(op);
    return NULL;
  }
  if (!name_reserve()) {
    pthread_mutex_unlock(&reg_mutex);
    op_free(op);
    return weft__error_null(WEFT_OUT_OF_MEMORY, "def: out of memory");
  }
  if (nops == ops_cap) {
    int64_t cap = ops_cap ? ops_cap * 2 : 64;
    weft_op** g = realloc(ops, (size_t)cap * sizeof *g);
    if (!g) {
      pthread_mutex_unlock(&reg_mutex);
      op_free(op);
      return weft__error_null(WEFT_OUT_OF_MEMORY, "def: out of memory");
    }
    ops = g;
    ops_cap = cap;
  }
  update_table(op);
  ops[nops] = op;
  name_put(name_slots, name_cap, nops++);
  pthread_mutex_unlock(&reg_mutex);
  return op;
}

weft_op* weft_op_def(const char* schema) {
  weft__dispatch_init();
  weft_op* op = op_new(schema, NULL);
  return op ? op_insert(op) : NULL;
}

static bool kind_matches(int kind, const weft_arg* a) {
  weft_type_kind t = a->type;
  bool plain = !a->is_list && !a->optional;
  bool is_int = t == WEFT_TYPE_INT || t == WEFT_TYPE_SYMINT;
  switch (kind) {
    case WEFT__K_TENSOR:
    case WEFT__K_MTENSOR: return t == WEFT_TYPE_TENSOR && plain;
    case WEFT__K_OPT_TENSOR: return t == WEFT_TYPE_TENSOR && !a->is_list && a->optional;
    case WEFT__K_TENSOR_LIST: return t == WEFT_TYPE_TENSOR && a->is_list && !a->elem_optional && !a->optional;
    case WEFT__K_OPT_TENSOR_LIST: return t == WEFT_TYPE_TENSOR && a->is_list && a->elem_optional && !a->optional;
    case WEFT__K_INT: return is_int && plain;
    case WEFT__K_OPT_INT: return is_int && !a->is_list;
    case WEFT__K_INT_LIST: return is_int && a->is_list && !a->optional;
    case WEFT__K_OPT_INT_LIST: return is_int && a->is_list && a->optional;
    case WEFT__K_DOUBLE: return (t == WEFT_TYPE_FLOAT || t == WEFT_TYPE_SCALAR) && plain;
    case WEFT__K_OPT_DOUBLE: return t == WEFT_TYPE_FLOAT && !a->is_list && a->optional;
    case WEFT__K_BOOL: return t == WEFT_TYPE_BOOL && plain;
    case WEFT__K_BOOL_LIST: return t == WEFT_TYPE_BOOL && a->is_list && !a->optional;
    case WEFT__K_SCALAR: return t == WEFT_TYPE_SCALAR && plain;
    case WEFT__K_OPT_SCALAR: return t == WEFT_TYPE_SCALAR && !a->is_list && a->optional;
    case WEFT__K_DTYPE: return t == WEFT_TYPE_SCALAR_TYPE && !a->is_list;
    case WEFT__K_MEMORY_FORMAT: return t == WEFT_TYPE_MEMORY_FORMAT && !a->is_list;
    case WEFT__K_DEVICE: return t == WEFT_TYPE_DEVICE && !a->is_list;
    case WEFT__K_STRING: return t == WEFT_TYPE_STR && plain;
    default: return false;
  }
}

/* nret 1: one return (or none, written without parentheses: in-place ops
 * of private tests); more: that many Tensor returns; WEFT__RN_LIST: one
 * Tensor[] return. */
static bool returns_match(const weft_schema* s, int nret) {
  if (nret == WEFT__RN_LIST) {
    const weft_arg* r = &s->returns[0];
    return s->nreturns == 1 && r->type == WEFT_TYPE_TENSOR && r->is_list && !r->elem_optional && !r->optional;
  }
  if (nret == 1) return (s->nreturns == 1 && !s->returns[0].is_list) || (s->nreturns == 0 && !s->tuple_return);
  if (s->nreturns != nret) return false;
  for (int i = 0; i < nret; i++)
    if (s->returns[i].type != WEFT_TYPE_TENSOR || s->returns[i].is_list) return false;
  return true;
}

weft_op* weft__op_def_generated(const char* schema, weft__unbox_fn unbox, const uint8_t* kinds,
                                int nkinds, int nret) {
  weft__dispatch_init();
  weft_op* op = op_new(schema, unbox);
  if (!op) return NULL;
  const weft_schema* s = op->schema;
  int bad = s->nargs != nkinds ? -1 : 0;
  for (int i = 0; !bad && i < nkinds; i++)
    if (!kind_matches(kinds[i], &s->args[i])) bad = i + 1;
  if (!bad && !returns_match(s, nret)) bad = -2;
  if (bad) {
    if (bad > 0)
      weft__error(WEFT_INTERNAL, "def: C parameter kind of argument '%s' of %s does not match its schema type",
                  s->args[bad - 1].name, op->name);
    else
      weft__error(WEFT_INTERNAL, bad == -1 ? "def: %s: the C parameter list does not match the schema (%d vs %d)"
                                           : "def: %s: the C return does not match the schema's returns (%d vs %d)",
                  op->name, bad == -1 ? nkinds : nret, bad == -1 ? s->nargs : s->nreturns);
    op_free(op);
    return NULL;
  }
  return op_insert(op);
}

weft_status weft__kernel_register(weft_op* (*op)(void), weft_dispatch_key key, weft_unboxed_fn fn, const char* name) {
  weft_kernel k = {NULL, fn, NULL, name, 0};
  return weft__op_impl_unique(op(), key, k) ? WEFT_OK : weft_last_status();
}

weft_status weft__opgen_register(const weft__opgen_entry* e) {
  weft_op* op = weft__op_def_generated(e->schema, e->unbox, e->kinds, e->nkinds, e->nret);
  if (!op) return weft_last_status();
  atomic_store_explicit(e->slot, op, memory_order_release);
  if (weft__op_has_device_arg(op)) {
    if (!e->backend_select)
      return weft__error(WEFT_INTERNAL, "def: %s has a Device argument but no BackendSelect kernel", op->name);
    weft_kernel k = {NULL, e->backend_select, NULL, "backend_select", WEFT_KERNEL_TAKES_KEYSET};
    if (!weft_op_impl(op, WEFT_KEY_BACKEND_SELECT, k)) return weft_last_status();
  }
  return WEFT_OK;
}

bool weft__op_has_device_arg(const weft_op* op) {
  for (int i = 0; i < op->schema->nargs; i++)
    if (op->schema->args[i].type == WEFT_TYPE_DEVICE) return true;
  return false;
}

weft_op* weft_op_find(const char* name) {
  weft__dispatch_init();
  char full[256];
  if (strstr(name, "::")) snprintf(full, sizeof full, "%s", name);
  else snprintf(full, sizeof full, "aten::%s", name);
  pthread_mutex_lock(&reg_mutex);
  weft_op* op = find_locked(full);
  pthread_mutex_unlock(&reg_mutex);
  if (!op) return weft__error_null(WEFT_INVALID_ARGUMENT, "unknown operator '%s'", name);
  return op;
}

const char* weft_op_name(const weft_op* op) { return op->name; }
const weft_schema* weft_op_schema(const weft_op* op) { return op->schema; }

int64_t weft_op_count(void) {
  weft__dispatch_init();
  return nops;
}

weft_op* weft_op_at(int64_t i) {
  weft__dispatch_init();
  return i >= 0 && i < nops ? ops[i] : NULL;
}

/* ---- impl / fallback ---- */
/* unique: refuse when op already has a kernel for key (checked under the
 * same lock that adds it). */
static weft_registration* add_registration(weft_op* op, weft_dispatch_key key, weft_kernel k, bool unique) {
  weft_registration* r = malloc(sizeof *r);
  if (!r) return weft__error_null(WEFT_OUT_OF_MEMORY, "impl: out of memory");
  r->op = op;
  r->key = key;
  r->kernel = k;
  if (!r->kernel.name) r->kernel.name = k.boxed ? "boxed" : k.unboxed ? "unboxed" : "fallthrough";
  pthread_mutex_lock(&reg_mutex);
  weft_registration** list = op ? op->kernels : fallbacks;
  if (unique && list[key]) {
    weft__error(WEFT_INVALID_ARGUMENT,
                "impl: %s already has a kernel for %s (%s); a library registers each kernel once (%s)", op->name,
                weft_dispatch_key_name(key), list[key]->kernel.name, r->kernel.name);
    pthread_mutex_unlock(&reg_mutex);
    free(r);
    return NULL;
  }
  r->next = list[key];
  list[key] = r;
  if (op) {
    update_table(op);
  } else {
    for (int64_t i = 0; i < nops; i++) update_table(ops[i]);
  }
  pthread_mutex_unlock(&reg_mutex);
  return r;
}

static bool check_key(const char* what, weft_dispatch_key key) {
  if (weft_dispatch_key_is_runtime(key) || weft_dispatch_key_is_alias(key)) return true;
  weft__error(WEFT_INVALID_ARGUMENT, "%s: '%s' is not a runtime or alias dispatch key", what,
              weft_dispatch_key_name(key));
  return false;
}

static weft_registration* impl(weft_op* op, weft_dispatch_key key, weft_kernel k, bool unique) {
  weft__dispatch_init();
  if (!check_key("impl", key)) return NULL;
  if (!k.boxed && !k.unboxed && !(k.flags & WEFT_KERNEL_FALLTHROUGH))
    return weft__error_null(WEFT_INVALID_ARGUMENT, "impl: %s: the kernel has no function", op->name);
  if (!k.boxed && k.unboxed && !op->unbox)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "impl: %s has no generated signature; register a boxed kernel", op->name);
  return add_registration(op, key, k, unique);
}

weft_registration* weft_op_impl(weft_op* op, weft_dispatch_key key, weft_kernel k) {
  return impl(op, key, k, false);
}

weft_registration* weft__op_impl_unique(weft_op* op, weft_dispatch_key key, weft_kernel k) {
  return impl(op, key, k, true);
}

weft_registration* weft_op_impl_boxed(weft_op* op, weft_dispatch_key key, weft_boxed_fn fn, void* ctx,
                                      const char* name) {
  weft_kernel k = {fn, NULL, ctx, name, 0};
  return weft_op_impl(op, key, k);
}

weft_registration* weft_op_impl_fallthrough(weft_op* op, weft_dispatch_key key) {
  weft_kernel k = {NULL, NULL, NULL, "fallthrough", WEFT_KERNEL_FALLTHROUGH};
  return weft_op_impl(op, key, k);
}

weft_registration* weft_dispatch_fallback(weft_dispatch_key key, weft_kernel k) {
  weft__dispatch_init();
  if (!check_key("fallback", key)) return NULL;
  if (!k.boxed && !(k.flags & WEFT_KERNEL_FALLTHROUGH))
    return weft__error_null(WEFT_INVALID_ARGUMENT, "fallback: a fallback must be boxed or fallthrough");
  k.unboxed = NULL;
  return add_registration(NULL, key, k, false);
}

weft_registration* weft_dispatch_fallback_fallthrough(weft_dispatch_key key) {
  weft_kernel k = {NULL, NULL, NULL, "fallthrough", WEFT_KERNEL_FALLTHROUGH};
  return weft_dispatch_fallback(key, k);
}

void weft_registration_release(weft_registration* r) {
  if (!r) return;
  pthread_mutex_lock(&reg_mutex);
  weft_registration** p = r->op ? &r->op->kernels[r->key] : &fallbacks[r->key];
  while (*p && *p != r) p = &(*p)->next;
  if (*p) *p = r->next;
  if (r->op) {
    update_table(r->op);
  } else {
    for (int64_t i = 0; i < nops; i++) update_table(ops[i]);
  }
  pthread_mutex_unlock(&reg_mutex);
  free(r);
}

/* ---- introspection ---- */
const char* weft_entry_kind_name(weft_entry_kind k) {
  switch (k) {
    case WEFT_ENTRY_DIRECT: return "direct";
    case WEFT_ENTRY_ALIAS: return "alias";
    case WEFT_ENTRY_FALLBACK: return "fallback";
    case WEFT_ENTRY_FALLTHROUGH: return "fallthrough";
    default: return "missing";
  }
}

bool weft_op_has_kernel(const weft_op* op, weft_dispatch_key key) {
  return (int)key >= 0 && key < WEFT_KEY_COUNT && op->kernels[key] != NULL;
}

weft_status weft_op_table_entry(const weft_op* op, weft_dispatch_key k, weft_table_entry* out) {
  int i = weft_dispatch_key_table_index(k);
  if (i < 0)
    return weft__error(WEFT_INVALID_ARGUMENT, "table: '%s' is not a runtime dispatch key",
                       weft_dispatch_key_name(k));
  const weft__entry* e = &op->table[i];
  out->key = k;
  out->kind = (weft_entry_kind)e->kind;
  out->source = (weft_dispatch_key)e->source;
  out->kernel = e->kind == WEFT_ENTRY_MISSING ? "" : e->k.name;
  out->boxed_only = e->kind != WEFT_ENTRY_MISSING && !e->k.unboxed;
  return WEFT_OK;
}

size_t weft_op_table_dump(const weft_op* op, char* buf, size_t cap) {
  size_t n = 0;
  if (cap) buf[0] = '\0';
  for (int i = 1; i < WEFT__NUM_ENTRIES; i++) {
    weft_table_entry e = {0};
    weft_op_table_entry(op, weft_table_index_key(i), &e);
    char from[64] = "";
    if (e.kind != WEFT_ENTRY_MISSING && e.source != e.key)
      snprintf(from, sizeof from, " [%s]", weft_dispatch_key_name(e.source));
    int w = snprintf(n < cap ? buf + n : NULL, n < cap ? cap - n : 0, "%s: %s %s%s\n",
                     weft_dispatch_key_name(e.key), weft_entry_kind_name(e.kind), e.kernel, from);
    if (w > 0) n += (size_t)w;
  }
  return n;
}

/* ---- errors ---- */
const weft__entry* weft__report_missing(const weft_op* op, weft_keyset ks) {
  char avail[512];
  size_t n = 0;
  avail[0] = '\0';
  for (int i = 1; i < WEFT__NUM_ENTRIES; i++) {
    if (op->table[i].kind == WEFT_ENTRY_MISSING) continue;
    int w = snprintf(avail + n, sizeof avail - n, "%s%s", n ? ", " : "",
                     weft_dispatch_key_name(weft_table_index_key(i)));
    if (w > 0 && (size_t)w < sizeof avail - n) n += (size_t)w;
  }
  weft_dispatch_key k = weft_keyset_highest(ks);
  if (k == WEFT_KEY_UNDEFINED) {
    char text[512];
    weft_schema_format(op->schema, text, sizeof text);
    weft__error(WEFT_DISPATCH_ERROR,
                "There were no tensor arguments to this function (e.g., you passed an empty list of "
                "Tensors), but no fallback function is registered for schema %s.  This usually means "
                "that this function requires a non-empty list of Tensors, or that you (the operator "
                "writer) forgot to register a fallback function.  Available functions are [%s].",
                op->name, avail);
    (void)text;
  } else {
    weft__error(WEFT_DISPATCH_ERROR,
                "Could not run '%s' with arguments from the '%s' backend. This could be because the "
                "operator doesn't exist for this backend. '%s' is only available for these "
                "backends: [%s].",
                op->name, weft_dispatch_key_name(k), op->name, avail);
  }
  return NULL;
}

weft_status weft__unbox_failed(const weft_op* op, weft_stack* stack, int64_t nargs) {
  weft_status s;
  if (stack->size < op->schema->nargs) {
    s = weft__error(WEFT_INVALID_ARGUMENT, "%s: the stack holds %lld values, the schema takes %d arguments",
                    op->name, (long long)stack->size, op->schema->nargs);
  } else {
    s = weft__error(WEFT_INVALID_ARGUMENT, "%s: arguments do not match the schema", op->name);
  }
  weft_stack_drop(stack, nargs);
  return s;
}

/* ---- trace ---- */
typedef struct {
  weft_trace_entry* v;
  int64_t n, cap;
} trace_buf;
static WEFT_THREAD_LOCAL trace_buf trace;

static void trace_append(weft_trace_entry e) {
  if (trace.n == trace.cap) {
    int64_t cap = trace.cap ? trace.cap * 2 : 64;
    weft_trace_entry* g = realloc(trace.v, (size_t)cap * sizeof *g);
    if (g) {
      trace.v = g;
      trace.cap = cap;
    }
  }
  if (trace.n < trace.cap) trace.v[trace.n++] = e;
}

int weft__trace_enter(const weft_op* op, weft_keyset ks, bool redispatch) {
  int depth = weft__dtls.depth;
  weft_dispatch_key k = weft_keyset_highest(ks);
  if (weft__show_trace)
    fprintf(stderr, "%*s[%s] op=[%s], key=[%s]\n", depth, "", redispatch ? "redispatch" : "call",
            op->name, weft_dispatch_key_name(k));
  if (weft__dtls.tracing) trace_append((weft_trace_entry){op->name, k, depth, redispatch, false});
  weft__dtls.depth = depth + 1;
  return depth;
}

int weft_trace_node_enter(const char* name) {
  int depth = weft__dtls.depth;
  if (!weft__tracing()) return depth;
  if (weft__show_trace) fprintf(stderr, "%*s[node] %s\n", depth, "", name);
  if (weft__dtls.tracing) trace_append((weft_trace_entry){name, WEFT_KEY_AUTOGRAD, depth, false, true});
  weft__dtls.depth = depth + 1;
  return depth;
}

void weft_trace_node_leave(int depth) { weft__dtls.depth = depth; }

void weft_trace_start(void) {
  trace.n = 0;
  weft__dtls.depth = 0;
  weft__dtls.tracing = 1;
}

void weft_trace_stop(void) { weft__dtls.tracing = 0; }
int64_t weft_trace_count(void) { return trace.n; }
const weft_trace_entry* weft_trace_entries(void) { return trace.v; }

/* ---- boxed calls ---- */
weft_keyset weft_op_call_keyset(const weft_op* op, const weft_stack* stack) {
  weft_keyset ks = 0;
  const weft_ivalue* a = stack->v + stack->size - op->schema->nargs;
  for (int i = 0; i < op->ntensor_args; i++) {
    const weft_ivalue* v = &a[op->tensor_args[i]];
    if (v->tag == WEFT_IV_TENSOR) {
      ks |= weft__tensor_keyset(v->u.t);
    } else if (v->tag == WEFT_IV_TENSOR_LIST) {
      for (int64_t j = 0; j < v->u.tlist.len; j++) ks |= weft__tensor_keyset(v->u.tlist.data[j]);
    }
  }
  return ks;
}

static weft_status run_boxed(const weft_op* op, const weft__entry* e, weft_keyset ks, weft_stack* stack,
                             bool redispatch) {
  int depth = 0;
  bool tracing = weft__tracing();
  if (WEFT_UNLIKELY(tracing)) depth = weft__trace_enter(op, ks, redispatch);
  weft_status s = e->k.unboxed ? op->unbox(op, &e->k, ks, stack) : e->k.boxed(op, ks, stack, e->k.ctx);
  if (WEFT_UNLIKELY(tracing)) weft__trace_leave(depth);
  return s;
}

static weft_status check_stack(const weft_op* op, weft_stack* stack) {
  if (stack->size >= op->schema->nargs) return WEFT_OK;
  return weft__error(WEFT_INVALID_ARGUMENT, "%s: the stack holds %lld values, the schema takes %d arguments",
                     op->name, (long long)stack->size, op->schema->nargs);
}

weft_status weft_op_call_boxed(const weft_op* op, weft_stack* stack) {
  weft_status s = check_stack(op, stack);
  if (s != WEFT_OK) return s;
  weft_keyset ks = weft__call_keyset(op, weft_op_call_keyset(op, stack));
  const weft__entry* e = weft__lookup(op, ks);
  if (!e) {
    weft_stack_drop(stack, op->schema->nargs);
    return weft_last_status();
  }
  return run_boxed(op, e, ks, stack, false);
}

weft_status weft_op_redispatch_boxed(const weft_op* op, weft_keyset ks, weft_stack* stack) {
  weft_status s = check_stack(op, stack);
  if (s != WEFT_OK) return s;
  ks = weft__redispatch_keyset(op, ks);
  const weft__entry* e = weft__lookup(op, ks);
  if (!e) {
    weft_stack_drop(stack, op->schema->nargs);
    return weft_last_status();
  }
  return run_boxed(op, e, ks, stack, true);
}

static bool tag_fits(const weft_arg* a, weft_ivalue* v) {
  if (v->tag == WEFT_IV_NONE) return a->optional || a->type == WEFT_TYPE_LAYOUT || a->type == WEFT_TYPE_GENERATOR;
  if (a->is_list) {
    switch (a->type) {
      case WEFT_TYPE_TENSOR: return v->tag == WEFT_IV_TENSOR_LIST;
      case WEFT_TYPE_FLOAT: return v->tag == WEFT_IV_DOUBLE_LIST || v->tag == WEFT_IV_INT_LIST;
      default: return v->tag == WEFT_IV_INT_LIST;
    }
  }
  switch (a->type) {
    case WEFT_TYPE_TENSOR: return v->tag == WEFT_IV_TENSOR;
    case WEFT_TYPE_INT:
    case WEFT_TYPE_SYMINT: return v->tag == WEFT_IV_INT;
    case WEFT_TYPE_FLOAT: return v->tag == WEFT_IV_DOUBLE || v->tag == WEFT_IV_INT;
    case WEFT_TYPE_BOOL: return v->tag == WEFT_IV_BOOL;
    case WEFT_TYPE_SCALAR: return v->tag == WEFT_IV_INT || v->tag == WEFT_IV_DOUBLE || v->tag == WEFT_IV_BOOL;
    case WEFT_TYPE_STR: return v->tag == WEFT_IV_STRING;
    case WEFT_TYPE_SCALAR_TYPE: return v->tag == WEFT_IV_DTYPE;
    case WEFT_TYPE_MEMORY_FORMAT: return v->tag == WEFT_IV_MEMORY_FORMAT;
    case WEFT_TYPE_DEVICE:
      if (v->tag == WEFT_IV_STRING) { /* "meta" -> Device */
        weft_device d;
        if (weft_device_from_name(v->u.s, &d) != WEFT_OK) return false;
        weft_ivalue_destroy(v);
        v->tag = WEFT_IV_DEVICE;
        v->u.device = d;
      }
      return v->tag == WEFT_IV_DEVICE;
    default: return true;
  }
}

/* The first NULL entry of a Tensor[] value for an argument whose elements
 * are not optional (Tensor?[] takes them), or -1. */
static int64_t null_element(const weft_arg* a, const weft_ivalue* v) {
  if (v->tag != WEFT_IV_TENSOR_LIST || a->elem_optional) return -1;
  for (int64_t j = 0; j < v->u.tlist.len; j++)
    if (!v->u.tlist.data[j]) return j;
  return -1;
}

weft_status weft_op_prepare_args(const weft_op* op, weft_stack* stack, int64_t given) {
  const weft_schema* s = op->schema;
  if (given > s->nargs || given > stack->size) {
    weft_stack_drop(stack, given);
    return weft__error(WEFT_INVALID_ARGUMENT, "%s() takes %d arguments but %lld were given", s->name,
                       s->nargs, (long long)given);
  }
  weft_ivalue* a = stack->v + stack->size - given;
  for (int64_t i = 0; i < given; i++) {
    int64_t hole = null_element(&s->args[i], &a[i]);
    if (hole >= 0) { /* PyTorch's words for torch.cat([t, None]) */
      weft_status st = weft__error(WEFT_TYPE_ERROR, "%s(): expected Tensor as element %lld in argument '%s', but got None",
                                   s->name, (long long)hole, s->args[i].name);
      weft_stack_drop(stack, given);
      return st;
    }
    if (tag_fits(&s->args[i], &a[i])) continue;
    char want[64];
    weft_arg_type_format(&s->args[i], want, sizeof want);
    weft_status st = weft__error(WEFT_TYPE_ERROR, "%s(): argument '%s' (position %lld) must be %s, not %s",
                                 s->name, s->args[i].name, (long long)(i + 1), want,
                                 weft_iv_tag_name(a[i].tag));
    weft_stack_drop(stack, given);
    return st;
  }
  for (int64_t i = given; i < s->nargs; i++) {
    weft_status st;
    if (!s->args[i].has_default) {
      st = weft__error(WEFT_INVALID_ARGUMENT, "%s() missing required argument '%s' (position %lld)",
                       s->name, s->args[i].name, (long long)(i + 1));
    } else {
      weft_ivalue v;
      st = weft_ivalue_copy(&v, &s->args[i].default_value);
      if (st == WEFT_OK) st = weft_stack_push(stack, v);
    }
    if (st != WEFT_OK) {
      weft_stack_drop(stack, i);
      return st;
    }
  }
  return WEFT_OK;
}
