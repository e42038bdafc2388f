/* Dispatch keys, key-set index math against hand-computed tables, TLS
 * include/exclude guards, and the schema parser. */
#include "dispatch/dispatch_internal.h"
#include "test.h"

static void test_key_layout(void) {
  /* 3 backends (CPU, Meta, WebGPU); functionalities Dense, BackendSelect,
   * ADInplaceOrView, AutogradFunctionality, Tracer. Columns: Undefined 0,
   * Dense x3 -> 1..3, BackendSelect 4, ADInplaceOrView 5, Autograd x3 -> 6..8, Tracer 9. */
  CHECK_EQ_I64(WEFT_NUM_BACKENDS, 3);
  CHECK_EQ_I64(weft_num_runtime_entries(), 10);
  CHECK_EQ_I64(weft_dispatch_key_table_index(WEFT_KEY_CPU), 1);
  CHECK_EQ_I64(weft_dispatch_key_table_index(WEFT_KEY_META), 2);
  CHECK_EQ_I64(weft_dispatch_key_table_index(WEFT_KEY_WEBGPU), 3);
  CHECK_EQ_I64(weft_dispatch_key_table_index(WEFT_KEY_BACKEND_SELECT), 4);
  CHECK_EQ_I64(weft_dispatch_key_table_index(WEFT_KEY_AD_INPLACE_OR_VIEW), 5);
  CHECK_EQ_I64(weft_dispatch_key_table_index(WEFT_KEY_AUTOGRAD_CPU), 6);
  CHECK_EQ_I64(weft_dispatch_key_table_index(WEFT_KEY_AUTOGRAD_META), 7);
  CHECK_EQ_I64(weft_dispatch_key_table_index(WEFT_KEY_AUTOGRAD_WEBGPU), 8);
  CHECK_EQ_I64(weft_dispatch_key_table_index(WEFT_KEY_TRACER), 9);
  CHECK_EQ_I64(weft_dispatch_key_table_index(WEFT_KEY_AUTOGRAD), -1);
  CHECK_EQ_I64(weft_dispatch_key_table_index(WEFT_KEY_DENSE), -1);
  for (int i = 1; i < 10; i++) CHECK_EQ_I64(weft_dispatch_key_table_index(weft_table_index_key(i)), i);

  /* offsets and masks, as initializeFunctionalityOffsetsAndMasks computes them */
  static const struct { int offset; uint64_t mask; } want[] = {{0, 0}, {1, 7}, {4, 0}, {5, 0}, {6, 7}, {9, 0}};
  for (int f = 0; f < WEFT_NUM_FUNCTIONALITIES; f++) {
    CHECK_EQ_I64(weft__offsets_and_masks[f].offset, want[f].offset);
    CHECK_EQ_I64(weft__offsets_and_masks[f].mask, want[f].mask);
  }

  /* bits: backends 0..2, functionalities from bit 3 */
  CHECK_EQ_I64(weft_keyset_of(WEFT_KEY_CPU), 0x9);          /* Dense(bit 3) | CPU(bit 0) */
  CHECK_EQ_I64(weft_keyset_of(WEFT_KEY_META), 0xa);         /* Dense | Meta(bit 1) */
  CHECK_EQ_I64(weft_keyset_of(WEFT_KEY_WEBGPU), 0xc);       /* Dense | WebGPU(bit 2) */
  CHECK_EQ_I64(weft_keyset_of(WEFT_KEY_BACKEND_SELECT), 0x10);
  CHECK_EQ_I64(weft_keyset_of(WEFT_KEY_AD_INPLACE_OR_VIEW), 0x20);
  CHECK_EQ_I64(weft_keyset_of(WEFT_KEY_AUTOGRAD_CPU), 0x41);
  CHECK_EQ_I64(weft_keyset_of(WEFT_KEY_AUTOGRAD_META), 0x42);
  CHECK_EQ_I64(weft_keyset_of(WEFT_KEY_TRACER), 0x80);
  CHECK_EQ_I64(weft_keyset_of(WEFT_KEY_COMPOSITE_IMPLICIT_AUTOGRAD), 0);

  weft_keyset cpu = weft_device_keyset(WEFT_DEVICE_CPU), meta = weft_device_keyset(WEFT_DEVICE_META);
  weft_keyset gpu = weft_device_keyset(WEFT_DEVICE_WEBGPU);
  CHECK_EQ_I64(cpu, 0x69);
  CHECK_EQ_I64(meta, 0x6a);
  CHECK_EQ_I64(gpu, 0x6c);
  CHECK_EQ_I64(weft_keyset_table_index(cpu), 6);
  CHECK_EQ_I64(weft_keyset_table_index(meta), 7);
  CHECK_EQ_I64(weft_keyset_table_index(cpu | meta), 7); /* highest backend wins */
  CHECK_EQ_I64(weft_keyset_table_index(cpu | gpu), 8);  /* a cpu and a webgpu tensor: WebGPU's kernel checks devices */
  CHECK_EQ_I64(weft_keyset_table_index(0), 0);
  CHECK_EQ_I64(weft_keyset_table_index(0x8), 1); /* Dense without a backend: first column */
  CHECK_EQ_I64(weft_keyset_table_index(cpu | 0x80), 9);
  CHECK(weft_keyset_highest(cpu) == WEFT_KEY_AUTOGRAD_CPU);
  CHECK(weft_keyset_highest(gpu) == WEFT_KEY_AUTOGRAD_WEBGPU);
  CHECK(weft_keyset_highest(meta & ~(weft_keyset)0x40) == WEFT_KEY_AD_INPLACE_OR_VIEW);
  CHECK(weft_keyset_highest(0xa) == WEFT_KEY_META);
  CHECK(weft_keyset_highest(0xc) == WEFT_KEY_WEBGPU);
  CHECK(weft_keyset_highest(0) == WEFT_KEY_UNDEFINED);

  /* FULL_AFTER and after_autograd_keyset */
  CHECK_EQ_I64(weft_keyset_full_after(WEFT_KEY_AUTOGRAD_CPU), 0x3f);
  CHECK_EQ_I64(weft_after_autograd_keyset(), 0x3f);
  CHECK_EQ_I64(weft_keyset_full_after(WEFT_KEY_BACKEND_SELECT), 0xf);
  CHECK_EQ_I64(weft_keyset_table_index(cpu & weft_after_autograd_keyset()), 5);
  CHECK_EQ_I64(weft_keyset_table_index(gpu & weft_after_ad_inplace_or_view_keyset()), 3);
  CHECK_EQ_I64(weft_keyset_table_index(cpu & weft_after_ad_inplace_or_view_keyset()), 1);
  CHECK_EQ_I64(weft_keyset_table_index(meta & weft_after_ad_inplace_or_view_keyset()), 2);

  /* alias expansion */
  CHECK_EQ_I64(weft_alias_runtime_keyset(WEFT_KEY_AUTOGRAD), 0x47);
  CHECK_EQ_I64(weft_alias_runtime_keyset(WEFT_KEY_COMPOSITE_EXPLICIT_AUTOGRAD), 0xf);
  CHECK_EQ_I64(weft_alias_runtime_keyset(WEFT_KEY_COMPOSITE_IMPLICIT_AUTOGRAD), 0x4f);

  char buf[128];
  weft_keyset_format(cpu, buf, sizeof buf);
  CHECK(strcmp(buf, "[CPU, ADInplaceOrView, AutogradCPU]") == 0);
  CHECK(strcmp(weft_dispatch_key_name(WEFT_KEY_AUTOGRAD_META), "AutogradMeta") == 0);
  CHECK(strcmp(weft_dispatch_key_name(WEFT_KEY_WEBGPU), "WebGPU") == 0);
  CHECK(strcmp(weft_dispatch_key_name(WEFT_KEY_AUTOGRAD_WEBGPU), "AutogradWebGPU") == 0);
  weft_keyset_format(gpu, buf, sizeof buf);
  CHECK(strcmp(buf, "[WebGPU, ADInplaceOrView, AutogradWebGPU]") == 0);
  CHECK(strcmp(weft_dispatch_key_name(WEFT_KEY_COMPOSITE_IMPLICIT_AUTOGRAD), "CompositeImplicitAutograd") == 0);
  weft_dispatch_key k;
  CHECK(weft_dispatch_key_from_name("AutogradCPU", &k) == WEFT_OK && k == WEFT_KEY_AUTOGRAD_CPU);
  CHECK(weft_dispatch_key_from_name("Cuda", &k) != WEFT_OK);
  CHECK(weft_dispatch_key_for(WEFT_KEY_AUTOGRAD_FUNCTIONALITY, WEFT_BACKEND_META) == WEFT_KEY_AUTOGRAD_META);
  CHECK(weft_dispatch_key_is_runtime(WEFT_KEY_TRACER));
  CHECK(!weft_dispatch_key_is_runtime(WEFT_KEY_AUTOGRAD_FUNCTIONALITY));
  CHECK(weft_dispatch_key_is_alias(WEFT_KEY_AUTOGRAD));
}

static void test_tls(void) {
  weft_keyset bs = weft_keyset_of(WEFT_KEY_BACKEND_SELECT), adv = weft_keyset_of(WEFT_KEY_AD_INPLACE_OR_VIEW);
  CHECK_EQ_I64(weft_tls_included(), bs | adv);
  CHECK_EQ_I64(weft_tls_excluded(), 0);
  weft_tls_guard g1 = weft_tls_include(weft_keyset_of(WEFT_KEY_TRACER));
  CHECK_EQ_I64(weft_tls_included(), bs | adv | 0x80);
  weft_tls_guard g2 = weft_dispatch_below_ad_inplace_or_view();
  CHECK_EQ_I64(weft_tls_excluded(), 0x60);
  weft_tls_guard g3 = weft_tls_exclude(weft_keyset_of(WEFT_KEY_TRACER));
  CHECK_EQ_I64(weft_tls_excluded(), 0xe0);
  weft_tls_restore(g3);
  CHECK_EQ_I64(weft_tls_excluded(), 0x60);
  weft_tls_restore(g2);
  CHECK_EQ_I64(weft_tls_excluded(), 0);
  weft_tls_restore(g1);
  CHECK_EQ_I64(weft_tls_included(), bs | adv);
}

static void check_roundtrip(const char* text, const char* canonical) {
  weft_schema* s = weft_schema_parse(text, "aten");
  CHECK(s != NULL);
  if (!s) {
    fprintf(stderr, "  parse failed: %s\n", weft_last_error());
    return;
  }
  char buf[1024];
  weft_schema_format(s, buf, sizeof buf);
  if (strcmp(buf, canonical) != 0) fprintf(stderr, "  got  %s\n  want %s\n", buf, canonical);
  CHECK(strcmp(buf, canonical) == 0);
  weft_schema_free(s);
}

static void check_malformed(const char* text, const char* needle) {
  weft_clear_error();
  weft_schema* s = weft_schema_parse(text, "aten");
  CHECK(s == NULL);
  CHECK(weft_last_status() == WEFT_INVALID_ARGUMENT);
  CHECK_ERROR_HAS(needle);
  weft_schema_free(s);
}

static void test_schema_valid(void) {
  const char* big =
      "ns::name.overload(Tensor self, Tensor? other, Tensor(a) x, Tensor(a!) out, int dim=-1, int[] size, "
      "float f, bool b=False, Scalar alpha=1, ScalarType? dtype=None, MemoryFormat? memory_format=None, *, "
      "SymInt[] ss, int[1] d1=0, int[2] st=1, int[] l=[0,1], str mode='mean', float eps=1e-05, "
      "bool flag=True, Device? device=None, Layout? layout=None, Tensor?[] idx, Tensor[] ts, "
      "MemoryFormat mf=channels_last, ScalarType st2=long, Scalar beta=0.5) -> Tensor";
  weft_schema* s = weft_schema_parse(big, "aten");
  CHECK(s != NULL);
  if (!s) {
    fprintf(stderr, "  %s\n", weft_last_error());
    return;
  }
  CHECK(strcmp(s->full_name, "ns::name.overload") == 0);
  CHECK(strcmp(s->ns, "ns") == 0 && strcmp(s->name, "name") == 0 && strcmp(s->overload, "overload") == 0);
  CHECK_EQ_I64(s->nargs, 25);
  CHECK(s->args[0].type == WEFT_TYPE_TENSOR && !s->args[0].optional);
  CHECK(s->args[1].optional);
  CHECK(s->args[2].alias && strcmp(s->args[2].alias, "a") == 0 && !s->args[2].is_write);
  CHECK(s->args[3].is_write);
  CHECK(s->args[4].has_default && s->args[4].default_value.tag == WEFT_IV_INT && s->args[4].default_value.u.i == -1);
  CHECK(s->args[5].is_list && s->args[5].type == WEFT_TYPE_INT && s->args[5].list_size == 0);
  CHECK(s->args[7].default_value.tag == WEFT_IV_BOOL && !s->args[7].default_value.u.b);
  CHECK(s->args[8].default_value.tag == WEFT_IV_INT && s->args[8].default_value.u.i == 1);
  CHECK(s->args[9].default_value.tag == WEFT_IV_NONE && s->args[9].type == WEFT_TYPE_SCALAR_TYPE);
  CHECK(!s->args[10].kwarg_only && s->args[11].kwarg_only);
  CHECK(s->args[11].type == WEFT_TYPE_SYMINT && s->args[11].is_list);
  CHECK(s->args[12].list_size == 1 && s->args[12].default_value.u.ilist.len == 1);
  CHECK(s->args[13].default_value.u.ilist.len == 2 && s->args[13].default_value.u.ilist.data[1] == 1);
  CHECK(s->args[14].default_value.u.ilist.len == 2 && s->args[14].default_value.u.ilist.data[1] == 1);
  CHECK(s->args[15].default_value.tag == WEFT_IV_STRING && strcmp(s->args[15].default_value.u.s, "mean") == 0);
  CHECK(s->args[16].default_value.tag == WEFT_IV_DOUBLE && s->args[16].default_value.u.d == 1e-05);
  CHECK(s->args[17].default_value.u.b);
  CHECK(s->args[20].is_list && s->args[20].elem_optional && !s->args[20].optional);
  CHECK(s->args[22].default_value.tag == WEFT_IV_MEMORY_FORMAT && s->args[22].default_value.u.mf == WEFT_CHANNELS_LAST);
  CHECK(s->args[23].default_value.tag == WEFT_IV_DTYPE && s->args[23].default_value.u.dtype == WEFT_INT64);
  CHECK(s->args[24].default_value.tag == WEFT_IV_DOUBLE);
  CHECK_EQ_I64(s->nreturns, 1);
  weft_schema_free(s);

  check_roundtrip("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                  "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  check_roundtrip("contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
                  "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)");
  check_roundtrip("aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                  "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  check_roundtrip("foo(Tensor a) -> (Tensor, Tensor)", "aten::foo(Tensor a) -> (Tensor, Tensor)");
  check_roundtrip("foo_(Tensor(a!) self) -> ()", "aten::foo_(Tensor(a!) self) -> ()");
  check_roundtrip("  test::bar ( Tensor[ ] xs , int? n = None ) ->  Tensor[] ",
                  "test::bar(Tensor[] xs, int? n=None) -> Tensor[]");
  check_roundtrip("split(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
                  "aten::split(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]");
  check_roundtrip("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
                  "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor");
  check_roundtrip("empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
                  "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
                  "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
                  "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor");
  check_roundtrip("f(float x=-inf, Device d='meta', int[]? s=None) -> float",
                  "aten::f(float x=-inf, Device d='meta', int[]? s=None) -> float");
}

static void test_schema_malformed(void) {
  check_malformed("add(Tensor self,, Tensor other) -> Tensor", "position 16");
  check_malformed("add(Tensor self,, Tensor other) -> Tensor", "expected a type");
  check_malformed("add(Tensor self) Tensor", "expected '->' but found 'Tensor' at position 17");
  check_malformed("add(Tensor self", "found end of input at position 15");
  check_malformed("add(Tensr self) -> Tensor", "position 4");
  check_malformed("add(Tensor) -> Tensor", "expected an argument name but found ')' at position 10");
  check_malformed("(Tensor self) -> Tensor", "expected an operator name");
  check_malformed("add(int x=1.5) -> Tensor", "expected an integer");
  check_malformed("add(bool x=maybe) -> Tensor", "position 11");
  check_malformed("add(Tensor self) -> Tensor out junk", "expected end of input but found 'junk' at position 31");
  check_malformed("add(Tensor a, Tensor a) -> Tensor", "duplicate");
  check_malformed("add(int[] l=[1,) -> Tensor", "expected a number");
  check_malformed("add(Tensor(a self) -> Tensor", "expected ')'");
  check_malformed("add(int a=1 int b) -> Tensor", "expected ')' but found 'int' at position 12");
  check_malformed("add.(Tensor a) -> Tensor", "overload name");
  check_malformed("add(str s='x) -> Tensor", "closing quote");
  /* found by tests/fuzz (schema/crashes/list-size-overflow): a size past int wrapped to -1 */
  check_malformed("f(int[18888888888888888888] d) -> Tensor", "expected a list size of at most 2147483647");
  check_malformed("f(int[2147483648] d) -> Tensor", "at position 6");
  /* schema/crashes/list-default-overflow: one default value filled int[204] into a 32-entry buffer */
  check_malformed("f(int[204] k=0) -> Tensor", "expected a list size of at most 32 for a default");
  check_roundtrip("f(int[32] k=7) -> Tensor", "aten::f(int[32] k=7) -> Tensor");
}

int main(void) {
  test_key_layout();
  test_tls();
  test_schema_valid();
  test_schema_malformed();
  TEST_REPORT();
}
