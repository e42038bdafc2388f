/* The registry and calls, with test ops: table precedence, alias expansion,
 * fallthrough, boxed fallbacks wrapping unboxed kernels (and back),
 * deregistration, TLS include/exclude, redispatch, BackendSelect, trace,
 * errors. */
#include "core/internal.h"
#include "dispatch/opgen.h"
#include "test.h"

/* This test links only base, core and dispatch (CMakeLists.txt): tensors
 * come from core's plain allocation, never from an operator. */
static weft_tensor* new_tensor(const int64_t* size, int64_t n, weft_dtype dtype, weft_device device) {
  int64_t strides[WEFT_MAX_DIMS];
  weft__strides_for_format(size, n, WEFT_CONTIGUOUS_FORMAT, strides);
  return weft__tensor_alloc("empty", size, strides, n, dtype, device);
}
/* Every element of a contiguous float32 tensor = v. */
static weft_status fill_f32(weft_tensor* t, double v) {
  float* p = weft_tensor_data_ptr(t);
  for (int64_t i = 0; p && i < weft_tensor_numel(t); i++) p[i] = (float)v;
  return WEFT_OK;
}

#define TEST_OPS(X)                                                                                  \
  X(tst_unary, "test::unary(Tensor self, int tag=0) -> Tensor", TENSOR, (TENSOR, self), (INT, tag))  \
  X(tst_factory, "test::factory(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor", \
    TENSOR, (INT_LIST, size), (DTYPE, dtype), (DEVICE, device))                                      \
  X(tst_fill_, "test::fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)", STATUS, (MTENSOR, self),   \
    (SCALAR, value))                                                                                 \
  X(tst_opt, "test::opt(Tensor? a, Tensor b, float x=0.5, bool flag=True, str s='hi', "            \
             "MemoryFormat? mf=None) -> Tensor",                                                     \
    TENSOR, (OPT_TENSOR, a), (TENSOR, b), (DOUBLE, x), (BOOL, flag), (STRING, s), (MEMORY_FORMAT, mf)) \
  X(tst_pair, "test::pair(Tensor self, int k=1) -> (Tensor values, Tensor indices)", TENSOR2,           \
    (TENSOR, self), (INT, k))                                                                        \
  X(tst_cat, "test::cat(Tensor[] tensors, int dim=0) -> Tensor", TENSOR, (TENSOR_LIST, tensors), (INT, dim)) \
  X(tst_index, "test::index(Tensor self, Tensor?[] indices) -> Tensor", TENSOR, (TENSOR, self),       \
    (OPT_TENSOR_LIST, indices))                                                                      \
  X(tst_split, "test::split(Tensor self, int n) -> Tensor[]", TENSOR_LIST, (TENSOR, self), (INT, n))

TEST_OPS(WEFT_OP_DECLARE)
TEST_OPS(WEFT_OP_DEFINE)
static weft_status register_test_ops(void) {
  TEST_OPS(WEFT_OP_REGISTER)
  return WEFT_OK;
}

static char log_buf[1024];
static void note(const char* s) {
  strncat(log_buf, s, sizeof log_buf - strlen(log_buf) - 2);
  strcat(log_buf, " ");
}
static const char* take_log(void) {
  static char out[1024];
  size_t n = strlen(log_buf);
  if (n && log_buf[n - 1] == ' ') log_buf[n - 1] = '\0';
  strcpy(out, log_buf);
  log_buf[0] = '\0';
  return out;
}
#define CHECK_LOG(want)                                                                 \
  do {                                                                                  \
    const char* got_ = take_log();                                                      \
    if (strcmp(got_, want) != 0) fprintf(stderr, "  log \"%s\" != \"%s\"\n", got_, want); \
    CHECK(strcmp(got_, want) == 0);                                                     \
  } while (0)

/* ---- kernels ---- */
static weft_tensor* unary_cpu(const weft_tensor* self, int64_t tag) {
  (void)tag;
  note("cpu");
  return weft_tensor_retain((weft_tensor*)self);
}
static weft_tensor* unary_cpu2(const weft_tensor* self, int64_t tag) {
  (void)tag;
  note("cpu2");
  return weft_tensor_retain((weft_tensor*)self);
}
static weft_tensor* unary_meta(const weft_tensor* self, int64_t tag) {
  (void)tag;
  note("meta");
  return weft_tensor_retain((weft_tensor*)self);
}
static weft_tensor* unary_cea(const weft_tensor* self, int64_t tag) {
  (void)tag;
  note("cea");
  return weft_tensor_retain((weft_tensor*)self);
}
static weft_tensor* unary_cia(const weft_tensor* self, int64_t tag) {
  (void)tag;
  note("cia");
  return weft_tensor_retain((weft_tensor*)self);
}
/* VariableType-style: do autograd's part, then redispatch below autograd. */
static weft_tensor* unary_autograd(weft_keyset ks, const weft_tensor* self, int64_t tag) {
  note("autograd");
  weft_tls_guard g = weft_dispatch_below_ad_inplace_or_view();
  weft_tensor* r = weft_redispatch_tst_unary(ks & weft_after_autograd_keyset(), self, tag);
  weft_tls_restore(g);
  return r;
}
/* A boxed Tracer fallback for every op: record, then continue below Tracer. */
static weft_status tracer_fallback(const weft_op* op, weft_keyset ks, weft_stack* stack, void* ctx) {
  int* count = ctx;
  (*count)++;
  note("tracer");
  return weft_op_redispatch_boxed(op, ks & weft_keyset_full_after(WEFT_KEY_TRACER), stack);
}
/* A boxed kernel for one op: returns its first argument with tag added to a log. */
static weft_status unary_boxed(const weft_op* op, weft_keyset ks, weft_stack* stack, void* ctx) {
  (void)ks;
  (void)ctx;
  CHECK(strcmp(weft_op_name(op), "test::unary") == 0);
  weft_ivalue tag = weft_stack_pop(stack);
  CHECK(tag.tag == WEFT_IV_INT);
  char b[32];
  snprintf(b, sizeof b, "boxed%lld", (long long)tag.u.i);
  note(b);
  return WEFT_OK; /* self stays on the stack as the return */
}

static weft_tensor* factory_cpu(const int64_t* size, int64_t n, weft_dtype dtype, weft_device device) {
  note("factory_cpu");
  CHECK(device == WEFT_DEVICE_CPU);
  return new_tensor(size, n, (int)dtype < 0 ? WEFT_FLOAT32 : dtype, WEFT_DEVICE_CPU);
}
static weft_tensor* factory_meta(const int64_t* size, int64_t n, weft_dtype dtype, weft_device device) {
  note("factory_meta");
  CHECK(device == WEFT_DEVICE_META);
  return new_tensor(size, n, (int)dtype < 0 ? WEFT_FLOAT32 : dtype, WEFT_DEVICE_META);
}

static weft_status fill_cpu(weft_tensor* self, weft_scalar v) {
  note("fill_cpu");
  return fill_f32(self, weft_scalar_to_double(v));
}
static weft_status fill_boxed(const weft_op* op, weft_keyset ks, weft_stack* stack, void* ctx) {
  (void)op;
  (void)ks;
  (void)ctx;
  note("fill_boxed");
  weft_ivalue v = weft_stack_pop(stack);
  CHECK(v.tag == WEFT_IV_DOUBLE);
  return fill_f32(weft_stack_peek(stack, 0)->u.t, v.u.d);
}

static weft_tensor* opt_cpu(const weft_tensor* a, const weft_tensor* b, double x, bool flag, const char* s,
                            weft_memory_format mf) {
  char buf[128];
  snprintf(buf, sizeof buf, "opt a=%s x=%g flag=%d s=%s mf=%d", a ? "T" : "None", x, flag, s, (int)mf);
  note(buf);
  return weft_tensor_retain((weft_tensor*)b);
}

/* k < 0 fails; else (self, a new [k] tensor) */
static weft_tensor2 pair_cpu(const weft_tensor* self, int64_t k) {
  note("pair_cpu");
  weft_tensor2 r = {{NULL, NULL}};
  if (k < 0) {
    weft__error(WEFT_INVALID_ARGUMENT, "pair: k must be >= 0");
    return r;
  }
  r.t[0] = weft_tensor_retain((weft_tensor*)self);
  r.t[1] = weft__tensor_alloc("pair", &k, (const int64_t[]){1}, 1, WEFT_INT64, WEFT_DEVICE_CPU);
  return r;
}
/* cat: notes the list's length; returns its last tensor (or fails on an empty list) */
static weft_tensor* cat_kernel(const char* name, const weft_tensor* const* t, int64_t n, int64_t dim) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s n=%lld dim=%lld", name, (long long)n, (long long)dim);
  note(buf);
  if (n == 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "cat: expected a non-empty list of Tensors");
  return weft_tensor_retain((weft_tensor*)t[n - 1]);
}
static weft_tensor* cat_cpu(const weft_tensor* const* t, int64_t n, int64_t dim) {
  return cat_kernel("cat_cpu", t, n, dim);
}
static weft_tensor* cat_meta(const weft_tensor* const* t, int64_t n, int64_t dim) {
  return cat_kernel("cat_meta", t, n, dim);
}
/* index: notes which entries are None; returns self */
static weft_tensor* index_cpu(const weft_tensor* self, const weft_tensor* const* ix, int64_t n) {
  char buf[64] = "index";
  for (int64_t i = 0; i < n; i++) strcat(buf, ix[i] ? " T" : " None");
  note(buf);
  return weft_tensor_retain((weft_tensor*)self);
}
/* split: n new references to self (n < 0 fails, n == 0 is an empty list) */
static weft_tensor_list split_cpu(const weft_tensor* self, int64_t n) {
  note("split_cpu");
  if (n < 0) {
    weft__error(WEFT_INVALID_ARGUMENT, "split: n must be >= 0");
    return (weft_tensor_list){NULL, 0};
  }
  weft_tensor_list r = weft_tensor_list_new(n);
  for (int64_t i = 0; r.t && i < n; i++) r.t[i] = weft_tensor_retain((weft_tensor*)self);
  return r;
}
/* the boxed form of split: n + 1 references */
static weft_status split_boxed(const weft_op* op, weft_keyset ks, weft_stack* stack, void* ctx) {
  (void)op;
  (void)ks;
  (void)ctx;
  note("split_boxed");
  int64_t n = weft_stack_pop(stack).u.i;
  weft_ivalue self = weft_stack_pop(stack);
  if (n < 0) {
    weft_ivalue_destroy(&self);
    return weft__error(WEFT_INVALID_ARGUMENT, "split: n must be >= 0");
  }
  weft_tensor* ts[8];
  for (int64_t i = 0; i <= n; i++) ts[i] = self.u.t;
  weft_status st = weft_stack_push_tensor_list(stack, ts, n + 1);
  weft_ivalue_destroy(&self);
  return st;
}
/* a boxed kernel of cat: leaves its first tensor */
static weft_status cat_boxed(const weft_op* op, weft_keyset ks, weft_stack* stack, void* ctx) {
  (void)op;
  (void)ks;
  (void)ctx;
  note("cat_boxed");
  weft_stack_drop(stack, 1); /* dim */
  weft_ivalue l = weft_stack_pop(stack);
  weft_tensor* first = l.u.tlist.len ? weft_tensor_retain(l.u.tlist.data[0]) : NULL;
  weft_ivalue_destroy(&l);
  if (!first) return weft__error(WEFT_INVALID_ARGUMENT, "cat: expected a non-empty list of Tensors");
  return weft_stack_push_tensor_owned(stack, first);
}

/* the boxed form: pops k, leaves (self, a [k+1] tensor) */
static weft_status pair_boxed(const weft_op* op, weft_keyset ks, weft_stack* stack, void* ctx) {
  (void)op;
  (void)ks;
  (void)ctx;
  note("pair_boxed");
  weft_ivalue k = weft_stack_pop(stack);
  int64_t n = k.u.i + 1;
  if (k.u.i < 0) {
    weft_stack_drop(stack, 1);
    return weft__error(WEFT_INVALID_ARGUMENT, "pair: k must be >= 0");
  }
  return weft_stack_push_tensor_owned(stack, weft__tensor_alloc("pair", &n, (const int64_t[]){1}, 1, WEFT_INT64,
                                                                WEFT_DEVICE_CPU));
}

static weft_tensor *cpu_t, *meta_t;

static weft_entry_kind entry_kind(weft_op* op, weft_dispatch_key k, weft_dispatch_key* source) {
  weft_table_entry e;
  CHECK(weft_op_table_entry(op, k, &e) == WEFT_OK);
  if (source) *source = e.source;
  return e.kind;
}

static void call_unary(const weft_tensor* t) {
  weft_tensor* r = weft_tst_unary(t, 0);
  if (!r) note("error");
  weft_tensor_release(r);
}

static void test_precedence(weft_op* op) {
  weft_registration* cpu = weft_impl_tst_unary(WEFT_KEY_CPU, unary_cpu, "unary_cpu");
  CHECK(cpu != NULL);
  call_unary(cpu_t);
  CHECK_LOG("cpu");
  CHECK(entry_kind(op, WEFT_KEY_CPU, NULL) == WEFT_ENTRY_DIRECT);
  CHECK(entry_kind(op, WEFT_KEY_AUTOGRAD_CPU, NULL) == WEFT_ENTRY_FALLTHROUGH);
  CHECK(entry_kind(op, WEFT_KEY_META, NULL) == WEFT_ENTRY_MISSING);

  /* missing kernel */
  CHECK(weft_tst_unary(meta_t, 0) == NULL);
  CHECK(weft_last_status() == WEFT_DISPATCH_ERROR);
  CHECK_ERROR_HAS("Could not run 'test::unary' with arguments from the 'Meta' backend.");
  CHECK_ERROR_HAS("'test::unary' is only available for these backends: [CPU, BackendSelect, "
                  "ADInplaceOrView, AutogradCPU, AutogradMeta, AutogradWebGPU, Tracer].");

  /* CompositeImplicitAutograd fills Meta and AutogradMeta, but not AutogradCPU (CPU has a kernel) */
  weft_registration* cia = weft_impl_tst_unary(WEFT_KEY_COMPOSITE_IMPLICIT_AUTOGRAD, unary_cia, "unary_cia");
  weft_dispatch_key src;
  CHECK(entry_kind(op, WEFT_KEY_META, &src) == WEFT_ENTRY_ALIAS && src == WEFT_KEY_COMPOSITE_IMPLICIT_AUTOGRAD);
  CHECK(entry_kind(op, WEFT_KEY_AUTOGRAD_META, &src) == WEFT_ENTRY_ALIAS);
  CHECK(entry_kind(op, WEFT_KEY_AUTOGRAD_CPU, NULL) == WEFT_ENTRY_FALLTHROUGH);
  CHECK(entry_kind(op, WEFT_KEY_CPU, NULL) == WEFT_ENTRY_DIRECT);
  CHECK(entry_kind(op, WEFT_KEY_BACKEND_SELECT, NULL) == WEFT_ENTRY_FALLTHROUGH);
  call_unary(meta_t);
  CHECK_LOG("cia");
  call_unary(cpu_t);
  CHECK_LOG("cpu");

  /* CompositeExplicitAutograd beats CompositeImplicitAutograd and stops it at AutogradMeta */
  weft_registration* cea = weft_impl_tst_unary(WEFT_KEY_COMPOSITE_EXPLICIT_AUTOGRAD, unary_cea, "unary_cea");
  CHECK(entry_kind(op, WEFT_KEY_META, &src) == WEFT_ENTRY_ALIAS && src == WEFT_KEY_COMPOSITE_EXPLICIT_AUTOGRAD);
  CHECK(entry_kind(op, WEFT_KEY_AUTOGRAD_META, NULL) == WEFT_ENTRY_FALLTHROUGH);
  call_unary(meta_t);
  CHECK_LOG("cea");

  /* a direct kernel beats both */
  weft_registration* meta = weft_impl_tst_unary(WEFT_KEY_META, unary_meta, "unary_meta");
  call_unary(meta_t);
  CHECK_LOG("meta");
  char dump[1024];
  weft_op_table_dump(op, dump, sizeof dump);
  CHECK(strstr(dump, "CPU: direct unary_cpu\n") != NULL);
  CHECK(strstr(dump, "Meta: direct unary_meta\n") != NULL);
  CHECK(strstr(dump, "AutogradCPU: fallthrough fallthrough [Autograd]\n") != NULL);

  /* releasing restores what was there before, in any order */
  weft_registration_release(meta);
  call_unary(meta_t);
  CHECK_LOG("cea");
  weft_registration_release(cea);
  call_unary(meta_t);
  CHECK_LOG("cia");
  weft_registration_release(cia);
  call_unary(meta_t);
  CHECK_LOG("error");

  /* per-key stacks: newest wins; releasing an older one keeps the newest */
  weft_registration* a = weft_impl_tst_unary(WEFT_KEY_CPU, unary_cpu2, "unary_cpu2");
  call_unary(cpu_t);
  CHECK_LOG("cpu2");
  weft_registration_release(cpu);
  call_unary(cpu_t);
  CHECK_LOG("cpu2");
  cpu = weft_impl_tst_unary(WEFT_KEY_CPU, unary_cpu, "unary_cpu");
  call_unary(cpu_t);
  CHECK_LOG("cpu");
  weft_registration_release(cpu);
  call_unary(cpu_t);
  CHECK_LOG("cpu2");
  weft_registration_release(a);
  call_unary(cpu_t);
  CHECK_LOG("error");
}

static void test_autograd_redispatch(weft_op* op) {
  weft_registration* cpu = weft_impl_tst_unary(WEFT_KEY_CPU, unary_cpu, "unary_cpu");
  /* only tensors that require grad carry the Autograd key */
  call_unary(cpu_t);
  CHECK_LOG("cpu");
  cpu_t->requires_grad = meta_t->requires_grad = true; /* what weft_set_requires_grad does, as seen by dispatch */
  weft_registration* meta = weft_impl_tst_unary(WEFT_KEY_META, unary_meta, "unary_meta");
  weft_registration* ag = weft_impl_tst_unary_ks(WEFT_KEY_AUTOGRAD, unary_autograd, "unary_autograd");
  weft_dispatch_key src;
  CHECK(entry_kind(op, WEFT_KEY_AUTOGRAD_CPU, &src) == WEFT_ENTRY_ALIAS && src == WEFT_KEY_AUTOGRAD);
  CHECK(entry_kind(op, WEFT_KEY_AUTOGRAD_META, NULL) == WEFT_ENTRY_ALIAS);

  weft_trace_start();
  call_unary(cpu_t);
  weft_trace_stop();
  CHECK_LOG("autograd cpu");
  CHECK_EQ_I64(weft_trace_count(), 2);
  const weft_trace_entry* tr = weft_trace_entries();
  if (weft_trace_count() == 2) {
    CHECK(strcmp(tr[0].op, "test::unary") == 0 && tr[0].key == WEFT_KEY_AUTOGRAD_CPU && tr[0].depth == 0 &&
          !tr[0].redispatch);
    CHECK(tr[1].key == WEFT_KEY_CPU && tr[1].depth == 1 && tr[1].redispatch);
  }
  call_unary(meta_t);
  CHECK_LOG("autograd meta");

  /* fallthrough for AutogradCPU only: the CPU path skips autograd, Meta keeps it */
  weft_registration* ft = weft_op_impl_fallthrough(op, WEFT_KEY_AUTOGRAD_CPU);
  CHECK(entry_kind(op, WEFT_KEY_AUTOGRAD_CPU, &src) == WEFT_ENTRY_FALLTHROUGH && src == WEFT_KEY_AUTOGRAD_CPU);
  call_unary(cpu_t);
  CHECK_LOG("cpu");
  call_unary(meta_t);
  CHECK_LOG("autograd meta");
  weft_registration_release(ft);
  call_unary(cpu_t);
  CHECK_LOG("autograd cpu");

  /* TLS exclude: below ADInplaceOrView, autograd is skipped */
  weft_tls_guard g = weft_dispatch_below_ad_inplace_or_view();
  call_unary(cpu_t);
  CHECK_LOG("cpu");
  weft_tls_restore(g);
  call_unary(cpu_t);
  CHECK_LOG("autograd cpu");

  /* TLS include Tracer with a boxed fallback: typed call -> boxed fallback
   * (box adapter) -> boxed redispatch -> unboxed autograd kernel (unbox
   * adapter) -> typed redispatch -> CPU */
  int count = 0;
  weft_kernel tk = {tracer_fallback, NULL, &count, "tracer_fallback", 0};
  weft_registration* tf = weft_dispatch_fallback(WEFT_KEY_TRACER, tk);
  call_unary(cpu_t); /* Tracer not in the key set yet */
  CHECK_LOG("autograd cpu");
  g = weft_tls_include(weft_keyset_of(WEFT_KEY_TRACER));
  CHECK(entry_kind(op, WEFT_KEY_TRACER, NULL) == WEFT_ENTRY_FALLBACK);
  int32_t rc = weft_tensor_refcount(cpu_t);
  weft_trace_start();
  weft_tensor* r = weft_tst_unary(cpu_t, 7);
  weft_trace_stop();
  CHECK(r == cpu_t);
  CHECK_EQ_I64(weft_tensor_refcount(cpu_t), rc + 1);
  weft_tensor_release(r);
  CHECK_LOG("tracer autograd cpu");
  CHECK_EQ_I64(count, 1);
  CHECK_EQ_I64(weft_trace_count(), 3);
  if (weft_trace_count() == 3) {
    tr = weft_trace_entries();
    CHECK(tr[0].key == WEFT_KEY_TRACER && tr[0].depth == 0);
    CHECK(tr[1].key == WEFT_KEY_AUTOGRAD_CPU && tr[1].depth == 1 && tr[1].redispatch);
    CHECK(tr[2].key == WEFT_KEY_CPU && tr[2].depth == 2);
  }
  /* boxed call by name through the same chain */
  weft_stack st;
  weft_stack_init(&st);
  weft_op* byname = weft_op_find("test::unary");
  CHECK(byname == op);
  weft_stack_push_tensor(&st, cpu_t);
  CHECK(weft_op_prepare_args(op, &st, 1) == WEFT_OK);
  CHECK_EQ_I64(st.size, 2);
  CHECK(weft_op_call_boxed(op, &st) == WEFT_OK);
  CHECK_EQ_I64(st.size, 1);
  CHECK(st.v[0].tag == WEFT_IV_TENSOR && st.v[0].u.t == cpu_t);
  weft_stack_clear(&st);
  CHECK_LOG("tracer autograd cpu");
  CHECK_EQ_I64(count, 2);
  weft_tls_restore(g);
  weft_registration_release(tf);

  /* a boxed kernel called from the typed entry (box adapter) */
  weft_registration* bx = weft_op_impl_boxed(op, WEFT_KEY_CPU, unary_boxed, NULL, "unary_boxed");
  CHECK(entry_kind(op, WEFT_KEY_CPU, NULL) == WEFT_ENTRY_DIRECT);
  r = weft_tst_unary(cpu_t, 5);
  CHECK(r == cpu_t);
  weft_tensor_release(r);
  CHECK_LOG("autograd boxed5");
  weft_table_entry te;
  weft_op_table_entry(op, WEFT_KEY_CPU, &te);
  CHECK(te.boxed_only && strcmp(te.kernel, "unary_boxed") == 0);
  weft_registration_release(bx);
  CHECK_EQ_I64(weft_tensor_refcount(cpu_t), rc);
  cpu_t->requires_grad = meta_t->requires_grad = false;

  weft_registration_release(ag);
  weft_registration_release(meta);
  weft_registration_release(cpu);
}

static void test_boxed_calls(void) {
  weft_op* op = weft_op_find("test::opt");
  CHECK(op != NULL);
  weft_registration* r = weft_impl_tst_opt(WEFT_KEY_CPU, opt_cpu, "opt_cpu");
  weft_stack st;
  weft_stack_init(&st);
  weft_stack_push_none(&st);
  weft_stack_push_tensor(&st, cpu_t);
  CHECK(weft_op_prepare_args(op, &st, 2) == WEFT_OK);
  CHECK_EQ_I64(st.size, 6);
  CHECK(weft_op_call_boxed(op, &st) == WEFT_OK);
  CHECK_LOG("opt a=None x=0.5 flag=1 s=hi mf=-1");
  CHECK_EQ_I64(st.size, 1);
  weft_stack_clear(&st);

  /* type errors name the argument and position */
  weft_stack_push_tensor(&st, cpu_t);
  weft_stack_push_int(&st, 3);
  CHECK(weft_op_prepare_args(op, &st, 2) == WEFT_TYPE_ERROR);
  CHECK_ERROR_HAS("opt(): argument 'b' (position 2) must be Tensor, not int");
  CHECK_EQ_I64(st.size, 0);
  weft_stack_push_tensor(&st, cpu_t);
  CHECK(weft_op_prepare_args(op, &st, 1) == WEFT_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("opt() missing required argument 'b' (position 2)");
  CHECK_EQ_I64(st.size, 0);

  /* the typed entry point with a real optional tensor */
  weft_tensor* out = weft_tst_opt(cpu_t, cpu_t, 2.0, false, "x", WEFT_CHANNELS_LAST);
  CHECK(out == cpu_t);
  weft_tensor_release(out);
  CHECK_LOG("opt a=T x=2 flag=0 s=x mf=1");

  /* no kernel: the arguments are dropped and the error returned */
  weft_registration_release(r);
  weft_stack_push_none(&st);
  weft_stack_push_tensor(&st, cpu_t);
  weft_op_prepare_args(op, &st, 2);
  CHECK(weft_op_call_boxed(op, &st) == WEFT_DISPATCH_ERROR);
  CHECK_EQ_I64(st.size, 0);
  weft_stack_clear(&st);
}

static void test_factory_backend_select(void) {
  weft_op* op = weft_op_find("test::factory");
  weft_dispatch_key src;
  CHECK(entry_kind(op, WEFT_KEY_BACKEND_SELECT, &src) == WEFT_ENTRY_DIRECT);
  weft_registration* c = weft_impl_tst_factory(WEFT_KEY_CPU, factory_cpu, "factory_cpu");
  weft_registration* m = weft_impl_tst_factory(WEFT_KEY_META, factory_meta, "factory_meta");
  const int64_t size[] = {2, 3};
  weft_trace_start();
  weft_tensor* t = weft_tst_factory(size, 2, (weft_dtype)-1, WEFT_DEVICE_META);
  weft_trace_stop();
  CHECK(t != NULL && weft_tensor_device(t) == WEFT_DEVICE_META);
  CHECK_LOG("factory_meta");
  /* BackendSelect, then the Meta kernel (whose allocation is core's, not
   * an op: nested dispatch is checked in test_dispatch_ops.c) */
  CHECK_EQ_I64(weft_trace_count(), 2);
  const weft_trace_entry* tr = weft_trace_entries();
  if (weft_trace_count() == 2) {
    CHECK(tr[0].key == WEFT_KEY_BACKEND_SELECT && !tr[0].redispatch && tr[0].depth == 0);
    CHECK(tr[1].key == WEFT_KEY_META && tr[1].redispatch && tr[1].depth == 1);
  }
  weft_tensor_release(t);

  /* boxed, by name, with the device default and an int64 dtype */
  weft_stack st;
  weft_stack_init(&st);
  weft_stack_push_int_list(&st, size, 2);
  weft_stack_push_dtype(&st, WEFT_INT64);
  CHECK(weft_op_prepare_args(op, &st, 2) == WEFT_OK);
  CHECK(weft_op_call_boxed(op, &st) == WEFT_OK);
  CHECK_LOG("factory_cpu");
  t = weft_stack_pop_tensor(&st);
  CHECK(t && weft_tensor_dtype(t) == WEFT_INT64 && weft_tensor_device(t) == WEFT_DEVICE_CPU);
  weft_tensor_release(t);
  weft_stack_clear(&st);

  /* device given as a string converts */
  weft_stack_push_int_list(&st, size, 2);
  weft_stack_push_none(&st);
  weft_stack_push_string(&st, "meta");
  CHECK(weft_op_prepare_args(op, &st, 3) == WEFT_OK);
  CHECK(weft_op_call_boxed(op, &st) == WEFT_OK);
  CHECK_LOG("factory_meta");
  weft_stack_clear(&st);

  /* without BackendSelect in the key set there are no keys at all */
  weft_tls_guard g = weft_tls_exclude(weft_keyset_of(WEFT_KEY_BACKEND_SELECT));
  CHECK(weft_tst_factory(size, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU) == NULL);
  CHECK_ERROR_HAS("There were no tensor arguments to this function");
  weft_tls_restore(g);
  weft_registration_release(c);
  weft_registration_release(m);
}

static void test_status_op(void) {
  weft_registration* r = weft_impl_tst_fill_(WEFT_KEY_CPU, fill_cpu, "fill_cpu");
  const int64_t size[] = {3};
  weft_tensor* t = new_tensor(size, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(weft_tst_fill_(t, weft_scalar_double(2.5)) == WEFT_OK);
  CHECK(weft_tensor_get_double(t, 2) == 2.5);
  CHECK_LOG("fill_cpu");
  /* boxed: the mutated self comes back */
  weft_stack st;
  weft_stack_init(&st);
  weft_stack_push_tensor(&st, t);
  weft_stack_push_int(&st, 4);
  CHECK(weft_op_call_boxed(weft_op_find("test::fill_"), &st) == WEFT_OK);
  CHECK(st.size == 1 && st.v[0].u.t == t);
  CHECK(weft_tensor_get_double(t, 0) == 4.0);
  weft_stack_clear(&st);
  CHECK_LOG("fill_cpu");
  /* a boxed kernel behind the typed entry */
  weft_registration* b = weft_op_impl_boxed(weft_op_find("test::fill_"), WEFT_KEY_CPU, fill_boxed, NULL, "fill_boxed");
  CHECK(weft_tst_fill_(t, weft_scalar_double(-1)) == WEFT_OK);
  CHECK(weft_tensor_get_double(t, 1) == -1.0);
  CHECK_LOG("fill_boxed");
  CHECK_EQ_I64(weft_tensor_refcount(t), 1);
  weft_registration_release(b);
  weft_registration_release(r);
  weft_tensor_release(t);
}

/* TENSOR2: the typed entry, the unbox adapter (boxed call of an unboxed
 * kernel), the box adapter (typed call of a boxed kernel), errors, trace. */
static void test_tuple_op(void) {
  weft_op* op = weft_op_find("test::pair");
  CHECK(op != NULL && weft_op_schema(op)->nreturns == 2);
  weft_registration* r = weft_impl_tst_pair(WEFT_KEY_CPU, pair_cpu, "pair_cpu");
  int64_t before = weft_memory().tensors;
  weft_trace_start();
  weft_tensor2 p = weft_tst_pair(cpu_t, 3);
  weft_trace_stop();
  CHECK(p.t[0] == cpu_t && p.t[1] && weft_tensor_numel(p.t[1]) == 3);
  CHECK_EQ_I64(weft_trace_count(), 1);
  CHECK_LOG("pair_cpu");
  weft_tensor2_release(p);
  p = weft_tst_pair(cpu_t, -1);
  CHECK(p.t[0] == NULL && p.t[1] == NULL);
  CHECK_ERROR_HAS("pair: k must be >= 0");
  CHECK_LOG("pair_cpu");

  /* boxed: both returns on the stack, in order; k's default filled */
  weft_stack st;
  weft_stack_init(&st);
  weft_stack_push_tensor(&st, cpu_t);
  CHECK(weft_op_prepare_args(op, &st, 1) == WEFT_OK);
  CHECK(weft_op_call_boxed(op, &st) == WEFT_OK);
  CHECK_LOG("pair_cpu");
  CHECK(st.size == 2 && st.v[0].u.t == cpu_t && st.v[1].tag == WEFT_IV_TENSOR && weft_tensor_numel(st.v[1].u.t) == 1);
  weft_stack_clear(&st);
  weft_stack_push_tensor(&st, cpu_t);
  weft_stack_push_int(&st, -2);
  CHECK(weft_op_call_boxed(op, &st) == WEFT_INVALID_ARGUMENT);
  CHECK_EQ_I64(st.size, 0);
  CHECK_LOG("pair_cpu");

  /* a boxed kernel behind the typed entry */
  weft_registration* b = weft_op_impl_boxed(op, WEFT_KEY_CPU, pair_boxed, NULL, "pair_boxed");
  p = weft_tst_pair(cpu_t, 4);
  CHECK(p.t[0] == cpu_t && p.t[1] && weft_tensor_numel(p.t[1]) == 5);
  CHECK_LOG("pair_boxed");
  weft_tensor2_release(p);
  p = weft_tst_pair(cpu_t, -1);
  CHECK(p.t[0] == NULL && p.t[1] == NULL);
  CHECK_ERROR_HAS("pair: k must be >= 0");
  CHECK_LOG("pair_boxed");
  weft_registration_release(b);
  weft_registration_release(r);
  CHECK_EQ_I64(weft_memory().tensors, before);
  CHECK_EQ_I64(weft_tensor_refcount(cpu_t), 1);
}

/* TENSOR_LIST / OPT_TENSOR_LIST arguments: typed and boxed calls, the key
 * set over the list's tensors, NULL entries, the box adapter. */
static void test_list_args(void) {
  weft_op* cat = weft_op_find("test::cat");
  CHECK(cat != NULL && weft_op_schema(cat)->args[0].is_list);
  weft_registration* rc = weft_impl_tst_cat(WEFT_KEY_CPU, cat_cpu, "cat_cpu");
  weft_registration* rm = weft_impl_tst_cat(WEFT_KEY_META, cat_meta, "cat_meta");
  int64_t before = weft_memory().tensors;
  const weft_tensor* two[] = {cpu_t, cpu_t};
  weft_tensor* r = weft_tst_cat(two, 2, 1);
  CHECK(r == cpu_t);
  CHECK_LOG("cat_cpu n=2 dim=1");
  weft_tensor_release(r);
  /* the key set is the union over the list: a meta tensor anywhere picks Meta */
  const weft_tensor* mixed[] = {cpu_t, meta_t};
  r = weft_tst_cat(mixed, 2, 0);
  CHECK(r == meta_t);
  CHECK_LOG("cat_meta n=2 dim=0");
  weft_tensor_release(r);
  /* an empty list has no keys: no backend, so no kernel */
  CHECK(weft_tst_cat(NULL, 0, 0) == NULL);
  CHECK_ERROR_HAS("There were no tensor arguments to this function (e.g., you passed an empty list of Tensors)");
  CHECK_LOG("");
  /* ... unless a composite kernel takes it (the Undefined entry, as in PyTorch) */
  weft_registration* rce = weft_impl_tst_cat(WEFT_KEY_COMPOSITE_EXPLICIT_AUTOGRAD, cat_cpu, "cat_composite");
  CHECK(weft_tst_cat(NULL, 0, 0) == NULL);
  CHECK_ERROR_HAS("cat: expected a non-empty list of Tensors");
  CHECK_LOG("cat_cpu n=0 dim=0");
  r = weft_tst_cat(two, 2, 0); /* CPU's own kernel still wins for CPU tensors */
  CHECK(r == cpu_t);
  CHECK_LOG("cat_cpu n=2 dim=0");
  weft_tensor_release(r);
  weft_registration_release(rce);
  CHECK(weft_tst_cat(NULL, 0, 0) == NULL);
  CHECK_ERROR_HAS("There were no tensor arguments");

  /* boxed: the list value's keys, dim's default filled */
  weft_stack st;
  weft_stack_init(&st);
  weft_stack_push_tensor_list(&st, (weft_tensor* const*)mixed, 2);
  CHECK(weft_op_prepare_args(cat, &st, 1) == WEFT_OK);
  CHECK(weft_op_call_boxed(cat, &st) == WEFT_OK);
  CHECK_LOG("cat_meta n=2 dim=0");
  CHECK(st.size == 1 && st.v[0].tag == WEFT_IV_TENSOR && st.v[0].u.t == meta_t);
  weft_stack_clear(&st);
  /* a None in a Tensor[]: PyTorch's TypeError, nothing run */
  weft_tensor* holed[] = {cpu_t, NULL};
  weft_stack_push_tensor_list(&st, holed, 2);
  CHECK(weft_op_prepare_args(cat, &st, 1) == WEFT_TYPE_ERROR);
  CHECK_ERROR_HAS("cat(): expected Tensor as element 1 in argument 'tensors', but got None");
  CHECK_EQ_I64(st.size, 0);
  /* ... and straight to the unbox adapter (no prepare): a type mismatch */
  weft_stack_push_tensor_list(&st, holed, 2);
  weft_stack_push_int(&st, 0);
  CHECK(weft_op_call_boxed(cat, &st) != WEFT_OK);
  CHECK_EQ_I64(st.size, 0);
  CHECK_LOG("");
  /* an int where the list goes */
  weft_stack_push_int(&st, 3);
  CHECK(weft_op_prepare_args(cat, &st, 1) == WEFT_TYPE_ERROR);
  CHECK_ERROR_HAS("argument 'tensors' (position 1) must be Tensor[], not int");
  CHECK_EQ_I64(st.size, 0);

  /* a boxed kernel behind the typed entry: the list is boxed and back */
  weft_registration* b = weft_op_impl_boxed(cat, WEFT_KEY_CPU, cat_boxed, NULL, "cat_boxed");
  r = weft_tst_cat(two, 2, 0);
  CHECK(r == cpu_t);
  CHECK_LOG("cat_boxed");
  weft_tensor_release(r);
  weft_registration_release(b);

  /* Tensor?[]: None entries pass through, typed and boxed */
  weft_op* index = weft_op_find("test::index");
  weft_registration* ri = weft_impl_tst_index(WEFT_KEY_CPU, index_cpu, "index_cpu");
  const weft_tensor* ix[] = {NULL, cpu_t, NULL};
  r = weft_tst_index(cpu_t, ix, 3);
  CHECK(r == cpu_t);
  CHECK_LOG("index None T None");
  weft_tensor_release(r);
  weft_stack_push_tensor(&st, cpu_t);
  weft_stack_push_tensor_list(&st, (weft_tensor* const*)ix, 3);
  CHECK(weft_op_prepare_args(index, &st, 2) == WEFT_OK);
  CHECK(weft_op_call_boxed(index, &st) == WEFT_OK);
  CHECK_LOG("index None T None");
  weft_stack_clear(&st);
  /* a meta tensor among the indices dispatches to Meta (no kernel there) */
  const weft_tensor* mix[] = {NULL, meta_t};
  CHECK(weft_tst_index(cpu_t, mix, 2) == NULL);
  CHECK_ERROR_HAS("Could not run 'test::index'");
  weft_registration_release(ri);
  weft_registration_release(rm);
  weft_registration_release(rc);
  CHECK_EQ_I64(weft_memory().tensors, before);
  CHECK_EQ_I64(weft_tensor_refcount(cpu_t), 1);
  CHECK_EQ_I64(weft_tensor_refcount(meta_t), 1);
}

/* TENSOR_LIST returns: the typed entry, an empty list (not an error), the
 * unbox adapter (one Tensor[] value on the stack), the box adapter. */
static void test_list_return(void) {
  weft_op* op = weft_op_find("test::split");
  weft_registration* r = weft_impl_tst_split(WEFT_KEY_CPU, split_cpu, "split_cpu");
  int64_t before = weft_memory().tensors;
  weft_tensor_list l = weft_tst_split(cpu_t, 3);
  CHECK(l.t && l.n == 3 && l.t[0] == cpu_t && l.t[2] == cpu_t);
  CHECK_EQ_I64(weft_tensor_refcount(cpu_t), 4);
  CHECK_LOG("split_cpu");
  weft_tensor_list_release(l);
  CHECK_EQ_I64(weft_tensor_refcount(cpu_t), 1);
  l = weft_tst_split(cpu_t, 0);
  CHECK(l.t != NULL && l.n == 0);
  weft_tensor_list_release(l);
  CHECK_LOG("split_cpu");
  l = weft_tst_split(cpu_t, -1);
  CHECK(l.t == NULL && l.n == 0);
  CHECK_ERROR_HAS("split: n must be >= 0");
  CHECK_LOG("split_cpu");
  weft_tensor_list_release(l); /* NULL: a no-op */

  weft_stack st;
  weft_stack_init(&st);
  weft_stack_push_tensor(&st, cpu_t);
  weft_stack_push_int(&st, 2);
  CHECK(weft_op_call_boxed(op, &st) == WEFT_OK);
  CHECK_LOG("split_cpu");
  CHECK(st.size == 1 && st.v[0].tag == WEFT_IV_TENSOR_LIST && st.v[0].u.tlist.len == 2 &&
        st.v[0].u.tlist.data[1] == cpu_t);
  weft_stack_clear(&st);
  weft_stack_push_tensor(&st, cpu_t);
  weft_stack_push_int(&st, -1);
  CHECK(weft_op_call_boxed(op, &st) == WEFT_INVALID_ARGUMENT);
  CHECK_EQ_I64(st.size, 0);
  CHECK_LOG("split_cpu");

  weft_registration* b = weft_op_impl_boxed(op, WEFT_KEY_CPU, split_boxed, NULL, "split_boxed");
  l = weft_tst_split(cpu_t, 1);
  CHECK(l.t && l.n == 2 && l.t[0] == cpu_t && l.t[1] == cpu_t);
  CHECK_LOG("split_boxed");
  weft_tensor_list_release(l);
  l = weft_tst_split(cpu_t, -3);
  CHECK(l.t == NULL);
  CHECK_ERROR_HAS("split: n must be >= 0");
  CHECK_LOG("split_boxed");
  weft_registration_release(b);
  weft_registration_release(r);
  CHECK_EQ_I64(weft_memory().tensors, before);
  CHECK_EQ_I64(weft_tensor_refcount(cpu_t), 1);
}

/* A library's own registration (WEFT_KERNEL): a second kernel for the same
 * key is refused, where weft_op_impl (an override) stacks. */
static weft_status register_opt_twice(void) {
  WEFT_KERNEL(tst_opt, META, opt_cpu);
  WEFT_KERNEL(tst_opt, META, opt_cpu);
  return WEFT_OK;
}

static void test_library_registers_once(void) {
  weft_op* op = weft_op_find("test::opt");
  CHECK(!weft_op_has_kernel(op, WEFT_KEY_META));
  CHECK(register_opt_twice() == WEFT_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("impl: test::opt already has a kernel for Meta (opt_cpu); a library registers each kernel once");
  CHECK(weft_op_has_kernel(op, WEFT_KEY_META) && op->kernels[WEFT_KEY_META]->next == NULL);
  weft_registration* over = weft_impl_tst_opt(WEFT_KEY_META, opt_cpu, "override");
  CHECK(over != NULL && op->kernels[WEFT_KEY_META]->next != NULL);
  weft_registration_release(over);
  weft_registration_release(op->kernels[WEFT_KEY_META]);
  CHECK(!weft_op_has_kernel(op, WEFT_KEY_META));
}

static void test_registry_errors(void) {
  CHECK(weft_op_def("test::unary(Tensor self, int tag=0) -> Tensor") == NULL);
  CHECK_ERROR_HAS("Tried to register an operator (test::unary(Tensor self, int tag=0) -> Tensor) with the "
                  "same name and overload name multiple times");
  CHECK(weft_op_def("test::bad(Tensor self -> Tensor") == NULL);
  CHECK_ERROR_HAS("schema: expected");
  CHECK(weft_op_find("test::nope") == NULL);
  CHECK_ERROR_HAS("unknown operator 'test::nope'");
  static const uint8_t kinds[] = {WEFT__K_INT};
  CHECK(weft__op_def_generated("test::mismatch(Tensor a) -> Tensor", NULL, kinds, 1, 1) == NULL);
  CHECK_ERROR_HAS("does not match its schema type");
  CHECK(weft_op_find("test::mismatch") == NULL);
  /* the C return kind must carry the schema's returns */
  CHECK(weft__op_def_generated("test::mismatch(int a) -> (Tensor, Tensor)", NULL, kinds, 1, 1) == NULL);
  CHECK_ERROR_HAS("the C return does not match the schema's returns (1 vs 2)");
  CHECK(weft__op_def_generated("test::mismatch(int a) -> Tensor", NULL, kinds, 1, 2) == NULL);
  CHECK_ERROR_HAS("the C return does not match the schema's returns (2 vs 1)");
  CHECK(weft__op_def_generated("test::mismatch(int a) -> (Tensor, int)", NULL, kinds, 1, 2) == NULL);
  /* list kinds: Tensor[] and Tensor?[] are not interchangeable; a Tensor[] return is one list */
  static const uint8_t tl[] = {WEFT__K_TENSOR_LIST}, otl[] = {WEFT__K_OPT_TENSOR_LIST};
  CHECK(weft__op_def_generated("test::mismatch(Tensor?[] a) -> Tensor", NULL, tl, 1, 1) == NULL);
  CHECK_ERROR_HAS("does not match its schema type");
  CHECK(weft__op_def_generated("test::mismatch(Tensor[] a) -> Tensor", NULL, otl, 1, 1) == NULL);
  CHECK(weft__op_def_generated("test::mismatch(Tensor a) -> Tensor", NULL, tl, 1, 1) == NULL);
  CHECK(weft__op_def_generated("test::mismatch(Tensor[] a) -> Tensor", NULL, tl, 1, WEFT__RN_LIST) == NULL);
  CHECK_ERROR_HAS("the C return does not match the schema's returns");
  CHECK(weft__op_def_generated("test::mismatch(Tensor[] a) -> Tensor[]", NULL, tl, 1, 1) == NULL);
  CHECK(weft__op_def_generated("test::mismatch(Tensor[] a) -> Tensor?[]", NULL, tl, 1, WEFT__RN_LIST) == NULL);
  CHECK(weft_op_find("test::mismatch") == NULL);

  /* a boxed-only op (as JS would define one) */
  weft_op* op = weft_op_def("test::js_only(Tensor self) -> Tensor");
  CHECK(op != NULL);
  weft_kernel k = {NULL, (weft_unboxed_fn)unary_cpu, NULL, "x", 0};
  CHECK(weft_op_impl(op, WEFT_KEY_CPU, k) == NULL);
  CHECK_ERROR_HAS("no generated signature");
  CHECK(weft_op_impl_fallthrough(op, WEFT_KEY_DENSE) == NULL);
  CHECK_ERROR_HAS("'Dense' is not a runtime or alias dispatch key");
  CHECK(weft_op_count() >= 5);
  bool found = false;
  for (int64_t i = 0; i < weft_op_count(); i++) found |= weft_op_at(i) == op;
  CHECK(found);
}

int main(void) {
  CHECK(register_test_ops() == WEFT_OK);
  if (weft_last_status() != WEFT_OK) fprintf(stderr, "%s\n", weft_last_error());
  int64_t base_tensors = weft_memory().tensors;
  const int64_t size[] = {2, 2};
  cpu_t = new_tensor(size, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  meta_t = new_tensor(size, 2, WEFT_FLOAT32, WEFT_DEVICE_META);
  weft_op* unary = weft_op_find("test::unary");
  test_precedence(unary);
  test_autograd_redispatch(unary);
  test_boxed_calls();
  test_factory_backend_select();
  test_status_op();
  test_tuple_op();
  test_list_args();
  test_list_return();
  test_registry_errors();
  test_library_registers_once();
  CHECK_EQ_I64(weft_tensor_refcount(cpu_t), 1);
  weft_tensor_release(cpu_t);
  weft_tensor_release(meta_t);
  CHECK_EQ_I64(weft_memory().tensors, base_tensors);
  TEST_REPORT();
}
