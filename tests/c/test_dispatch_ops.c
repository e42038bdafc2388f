/* The library's ops through the dispatcher: the contiguous -> clone ->
 * empty_like -> empty -> copy_ chain in the trace, Meta tensors for every
 * factory and view, boxed calls by name, table introspection. */
#include "dispatch/dispatch_internal.h"
#include "test.h"

static bool same_layout(const weft_tensor* a, const weft_tensor* b) {
  if (!a || !b || weft_tensor_dim(a) != weft_tensor_dim(b)) return false;
  for (int64_t i = 0; i < weft_tensor_dim(a); i++)
    if (weft_tensor_sizes(a)[i] != weft_tensor_sizes(b)[i] || weft_tensor_strides(a)[i] != weft_tensor_strides(b)[i])
      return false;
  return weft_tensor_storage_offset(a) == weft_tensor_storage_offset(b) && weft_tensor_dtype(a) == weft_tensor_dtype(b);
}

static void test_contiguous_trace(void) {
  const int64_t size[] = {1, 64, 5, 4};
  weft_tensor* x = weft_rand(size, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_trace_start();
  weft_tensor* y = weft_contiguous(x, WEFT_CHANNELS_LAST);
  weft_trace_stop();
  CHECK_STRIDES(y, 1280, 1, 256, 64);
  CHECK(weft_tensor_get_double(y, 77) == weft_tensor_get_double(x, 77));
  static const struct {
    const char* op;
    weft_dispatch_key key;
    int depth;
    bool redispatch;
  } want[] = {
      {"aten::contiguous", WEFT_KEY_CPU, 0, false}, /* CompositeImplicitAutograd fills CPU (no grad: no Autograd key) */
      {"aten::clone", WEFT_KEY_CPU, 1, false},
      {"aten::empty_like", WEFT_KEY_CPU, 2, false},
      {"aten::empty.memory_format", WEFT_KEY_BACKEND_SELECT, 3, false},
      {"aten::empty.memory_format", WEFT_KEY_CPU, 4, true},
      {"aten::copy_", WEFT_KEY_CPU, 2, false},
  };
  int64_t n = weft_trace_count();
  const weft_trace_entry* tr = weft_trace_entries();
  CHECK_EQ_I64(n, 6);
  for (int64_t i = 0; i < n && i < 6; i++) {
    bool ok = strcmp(tr[i].op, want[i].op) == 0 && tr[i].key == want[i].key && tr[i].depth == want[i].depth &&
              tr[i].redispatch == want[i].redispatch;
    if (!ok)
      fprintf(stderr, "  trace %lld: %s %s %d %d\n", (long long)i, tr[i].op, weft_dispatch_key_name(tr[i].key),
              tr[i].depth, tr[i].redispatch);
    CHECK(ok);
  }
  /* already contiguous: one call, no copy */
  weft_trace_start();
  weft_tensor* z = weft_contiguous(y, WEFT_CHANNELS_LAST);
  weft_trace_stop();
  CHECK(z == y);
  CHECK_EQ_I64(weft_trace_count(), 1);
  weft_tensor_release(z);
  weft_tensor_release(y);
  weft_tensor_release(x);
}

static void check_meta_factory(weft_tensor* t, weft_tensor* ref) {
  CHECK(t != NULL);
  if (!t) {
    fprintf(stderr, "  %s\n", weft_last_error());
    weft_tensor_release(ref);
    return;
  }
  CHECK(weft_tensor_device(t) == WEFT_DEVICE_META);
  CHECK(weft_tensor_data_ptr(t) == NULL);
  CHECK(same_layout(t, ref));
  weft_tensor_release(t);
  weft_tensor_release(ref);
}

static void test_meta_factories(void) {
  const int64_t size[] = {2, 3, 4, 5}, strides[] = {1, 2, 6, 24};
  weft_tensor* m = weft_empty(size, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CHANNELS_LAST);
  CHECK(m && weft_tensor_device(m) == WEFT_DEVICE_META && weft_tensor_data_ptr(m) == NULL);
  CHECK_STRIDES(m, 60, 1, 15, 3);
  weft_tensor_release(m);
  check_meta_factory(weft_empty(size, 4, WEFT_FLOAT16, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT),
                     weft_empty(size, 4, WEFT_FLOAT16, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT));
  check_meta_factory(weft_empty_strided(size, strides, 4, WEFT_INT32, WEFT_DEVICE_META),
                     weft_empty_strided(size, strides, 4, WEFT_INT32, WEFT_DEVICE_CPU));
  check_meta_factory(weft_full(size, 2, 1.5, WEFT_FLOAT64, WEFT_DEVICE_META),
                     weft_full(size, 2, 1.5, WEFT_FLOAT64, WEFT_DEVICE_CPU));
  check_meta_factory(weft_arange(0, 10, 3, WEFT_INT64, WEFT_DEVICE_META),
                     weft_arange(0, 10, 3, WEFT_INT64, WEFT_DEVICE_CPU));
  check_meta_factory(weft_rand(size, 3, WEFT_FLOAT32, WEFT_DEVICE_META),
                     weft_rand(size, 3, WEFT_FLOAT32, WEFT_DEVICE_CPU));
  check_meta_factory(weft_randn(size, 1, WEFT_FLOAT32, WEFT_DEVICE_META),
                     weft_randn(size, 1, WEFT_FLOAT32, WEFT_DEVICE_CPU));

  weft_tensor* c = weft_empty(size, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  m = weft_empty(size, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  check_meta_factory(weft_empty_like(m, WEFT_BOOL, WEFT_CHANNELS_LAST), weft_empty_like(c, WEFT_BOOL, WEFT_CHANNELS_LAST));
  check_meta_factory(weft_clone(m, WEFT_CHANNELS_LAST), weft_clone(c, WEFT_CHANNELS_LAST));
  check_meta_factory(weft_contiguous(m, WEFT_CHANNELS_LAST), weft_contiguous(c, WEFT_CHANNELS_LAST));
  check_meta_factory(weft_to_dtype(m, WEFT_INT8, false), weft_to_dtype(c, WEFT_INT8, false));
  CHECK(weft_fill_(m, 3) == WEFT_OK);
  CHECK(weft_copy_(m, c) == WEFT_OK);
  /* the trace shows the backend the factory went to */
  weft_trace_start();
  weft_tensor* e = weft_empty(size, 1, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_trace_stop();
  CHECK_EQ_I64(weft_trace_count(), 2);
  CHECK(weft_trace_count() == 2 && weft_trace_entries()[1].key == WEFT_KEY_META);
  weft_tensor_release(e);
  /* a kernel's own op calls dispatch too: full's Meta kernel calls empty, then fill_ */
  weft_trace_start();
  e = weft_full(size, 2, 1.0, WEFT_FLOAT32, WEFT_DEVICE_META);
  weft_trace_stop();
  CHECK_EQ_I64(weft_trace_count(), 5);
  const weft_trace_entry* tr = weft_trace_entries();
  if (weft_trace_count() == 5) {
    CHECK(strcmp(tr[0].op, "aten::full") == 0 && tr[0].key == WEFT_KEY_BACKEND_SELECT && !tr[0].redispatch &&
          tr[0].depth == 0);
    CHECK(tr[1].key == WEFT_KEY_META && tr[1].redispatch && tr[1].depth == 1);
    CHECK(strcmp(tr[2].op, "aten::empty.memory_format") == 0 && tr[2].key == WEFT_KEY_BACKEND_SELECT &&
          tr[2].depth == 2);
    CHECK(tr[3].key == WEFT_KEY_META && tr[3].redispatch && tr[3].depth == 3);
    CHECK(strcmp(tr[4].op, "aten::fill_.Scalar") == 0 && tr[4].key == WEFT_KEY_META && tr[4].depth == 2);
  }
  weft_tensor_release(e);
  weft_tensor_release(c);
  weft_tensor_release(m);
}

typedef weft_tensor* (*view_fn)(const weft_tensor*);
static weft_tensor* v_view(const weft_tensor* t) { const int64_t s[] = {6, -1}; return weft_view(t, s, 2); }
static weft_tensor* v_reshape(const weft_tensor* t) { const int64_t s[] = {4, 30}; return weft_reshape(t, s, 2); }
static weft_tensor* v_permute(const weft_tensor* t) { const int64_t d[] = {3, 1, 0, 2}; return weft_permute(t, d, 4); }
static weft_tensor* v_transpose(const weft_tensor* t) { return weft_transpose(t, 0, -1); }
static weft_tensor* v_t(const weft_tensor* t) {
  weft_tensor* s = weft_select(t, 0, 1);
  weft_tensor* f = weft_flatten(s, 1, 2);
  weft_tensor* r = weft_t(f);
  weft_tensor_release(s);
  weft_tensor_release(f);
  return r;
}
static weft_tensor* v_expand(const weft_tensor* t) {
  const int64_t s[] = {3, 2, 3, 4, 5};
  return weft_expand(t, s, 5);
}
static weft_tensor* v_squeeze(const weft_tensor* t) {
  weft_tensor* u = weft_unsqueeze(t, 2);
  weft_tensor* r = weft_squeeze(u);
  weft_tensor_release(u);
  return r;
}
static weft_tensor* v_squeeze_dim(const weft_tensor* t) {
  weft_tensor* u = weft_unsqueeze(t, -1);
  weft_tensor* r = weft_squeeze_dim(u, -1);
  weft_tensor_release(u);
  return r;
}
static weft_tensor* v_narrow(const weft_tensor* t) { return weft_narrow(t, 2, 1, 2); }
static weft_tensor* v_slice(const weft_tensor* t) { return weft_slice(t, 3, 1, INT64_MAX, 2); }
static weft_tensor* v_select(const weft_tensor* t) { return weft_select(t, -1, 4); }
static weft_tensor* v_unflatten(const weft_tensor* t) {
  const int64_t s[] = {2, 2};
  return weft_unflatten(t, 2, s, 2);
}
static weft_tensor* v_movedim(const weft_tensor* t) {
  const int64_t src[] = {0, 1}, dst[] = {3, 0};
  return weft_movedim(t, src, dst, 2);
}
static weft_tensor* v_as_strided(const weft_tensor* t) {
  const int64_t s[] = {3, 3}, st[] = {7, 2};
  return weft_as_strided(t, s, st, 2, 5);
}

static void test_meta_views(void) {
  const int64_t size[] = {2, 3, 4, 5};
  weft_tensor* c = weft_rand(size, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* m = weft_empty(size, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  static const struct { const char* name; view_fn fn; } views[] = {
      {"view", v_view},       {"reshape", v_reshape}, {"permute", v_permute}, {"transpose", v_transpose},
      {"t", v_t},             {"expand", v_expand},   {"squeeze", v_squeeze}, {"squeeze_dim", v_squeeze_dim},
      {"narrow", v_narrow},   {"slice", v_slice},     {"select", v_select},   {"unflatten", v_unflatten},
      {"movedim", v_movedim}, {"as_strided", v_as_strided}};
  for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
    weft_tensor* a = views[i].fn(c);
    weft_tensor* b = views[i].fn(m);
    bool ok = a && b && same_layout(a, b) && weft_tensor_device(b) == WEFT_DEVICE_META &&
              weft_tensor_storage(b) == weft_tensor_storage(m);
    if (!ok) fprintf(stderr, "  meta view %s differs (%s)\n", views[i].name, weft_last_error());
    CHECK(ok);
    weft_tensor_release(a);
    weft_tensor_release(b);
  }
  /* errors come through the dispatcher unchanged */
  CHECK(weft_transpose(m, 0, 4) == NULL);
  CHECK_ERROR_HAS("Dimension out of range (expected to be in range of [-4, 3], but got 4)");
  weft_tensor_release(c);
  weft_tensor_release(m);
}

static void test_boxed_by_name(void) {
  weft_stack st;
  weft_stack_init(&st);
  const int64_t size[] = {2, 6};
  /* empty with every keyword left to its default */
  weft_op* empty = weft_op_find("empty.memory_format");
  CHECK(empty != NULL);
  weft_stack_push_int_list(&st, size, 2);
  CHECK(weft_op_prepare_args(empty, &st, 1) == WEFT_OK);
  CHECK(weft_op_call_boxed(empty, &st) == WEFT_OK);
  weft_tensor* t = weft_stack_pop_tensor(&st);
  CHECK(t && weft_tensor_dtype(t) == WEFT_FLOAT32 && weft_tensor_device(t) == WEFT_DEVICE_CPU);
  CHECK_STRIDES(t, 6, 1);
  /* view by full name */
  weft_op* view = weft_op_find("aten::view");
  const int64_t shape[] = {3, -1};
  weft_stack_push_tensor(&st, t);
  weft_stack_push_int_list(&st, shape, 2);
  CHECK(weft_op_call_boxed(view, &st) == WEFT_OK);
  weft_tensor* v = weft_stack_pop_tensor(&st);
  CHECK_SIZES(v, 3, 4);
  weft_tensor_release(v);
  /* slice with None start/end */
  weft_op* slice = weft_op_find("slice.Tensor");
  weft_stack_push_tensor(&st, t);
  weft_stack_push_int(&st, 1);
  weft_stack_push_none(&st);
  weft_stack_push_none(&st);
  weft_stack_push_int(&st, 4);
  CHECK(weft_op_prepare_args(slice, &st, 5) == WEFT_OK);
  CHECK(weft_op_call_boxed(slice, &st) == WEFT_OK);
  v = weft_stack_pop_tensor(&st);
  CHECK_SIZES(v, 2, 2);
  CHECK_STRIDES(v, 6, 4);
  weft_tensor_release(v);
  /* contiguous: memory_format defaults to contiguous_format */
  weft_op* contig = weft_op_find("contiguous");
  weft_tensor* tt = weft_t(t);
  weft_stack_push_tensor(&st, tt);
  CHECK(weft_op_prepare_args(contig, &st, 1) == WEFT_OK);
  CHECK(st.v[1].tag == WEFT_IV_MEMORY_FORMAT && st.v[1].u.mf == WEFT_CONTIGUOUS_FORMAT);
  CHECK(weft_op_call_boxed(contig, &st) == WEFT_OK);
  v = weft_stack_pop_tensor(&st);
  CHECK_STRIDES(v, 2, 1);
  weft_tensor_release(v);
  weft_tensor_release(tt);
  /* copy_ returns self */
  weft_tensor* u = weft_full(size, 2, 7, WEFT_INT32, WEFT_DEVICE_CPU);
  weft_stack_push_tensor(&st, t);
  weft_stack_push_tensor(&st, u);
  CHECK(weft_op_call_boxed(weft_op_find("copy_"), &st) == WEFT_OK);
  v = weft_stack_pop_tensor(&st);
  CHECK(v == t && weft_tensor_get_double(t, 11) == 7.0);
  weft_tensor_release(v);
  weft_tensor_release(u);
  weft_tensor_release(t);
  weft_stack_clear(&st);
}

static void test_tables(void) {
  CHECK(weft_op_count() >= 28);
  char buf[1024];
  for (int64_t i = 0; i < weft_op_count(); i++) {
    weft_op* op = weft_op_at(i);
    CHECK(weft_schema_format(weft_op_schema(op), buf, sizeof buf) < sizeof buf);
    CHECK(strncmp(buf, weft_op_name(op), strlen(weft_op_name(op))) == 0);
  }
  weft_table_entry e;
  weft_op* contig = weft_op_find("contiguous");
  weft_op_table_entry(contig, WEFT_KEY_AUTOGRAD_CPU, &e);
  CHECK(e.kind == WEFT_ENTRY_ALIAS && e.source == WEFT_KEY_COMPOSITE_IMPLICIT_AUTOGRAD);
  weft_op_table_entry(contig, WEFT_KEY_META, &e);
  CHECK(e.kind == WEFT_ENTRY_ALIAS && e.source == WEFT_KEY_COMPOSITE_IMPLICIT_AUTOGRAD);
  weft_op* clone = weft_op_find("clone");
  weft_op_table_entry(clone, WEFT_KEY_AUTOGRAD_CPU, &e);
  CHECK(e.kind == WEFT_ENTRY_FALLTHROUGH);
  weft_op_table_entry(clone, WEFT_KEY_CPU, &e);
  CHECK(e.kind == WEFT_ENTRY_ALIAS && e.source == WEFT_KEY_COMPOSITE_EXPLICIT_AUTOGRAD);
  weft_op* empty = weft_op_find("empty.memory_format");
  weft_op_table_dump(empty, buf, sizeof buf);
  CHECK(strstr(buf, "BackendSelect: direct backend_select\n") != NULL);
  CHECK(strstr(buf, "CPU: direct empty_kernel\n") != NULL);
  CHECK(strstr(buf, "Meta: direct empty_kernel\n") != NULL);
  CHECK(weft_op_find("no_such_op.Tensor") == NULL); /* add.Tensor exists since elementwise.def */
}

/* The library registers each kernel once: fill_.Scalar has exactly the
 * elementwise kernel (a second, dead one in the factories used to sit under
 * it), and registering a library kernel again is refused. */
static weft_status fill_again(weft_tensor* self, double v) {
  (void)self;
  (void)v;
  return WEFT_OK;
}

static void test_kernels_registered_once(void) {
  weft_op* fill = weft_op_find("fill_.Scalar");
  weft_table_entry e;
  weft_op_table_entry(fill, WEFT_KEY_CPU, &e);
  CHECK(e.kind == WEFT_ENTRY_DIRECT && strcmp(e.kernel, "ew_fill__cpu") == 0);
  weft_kernel k = {NULL, (weft_unboxed_fn)fill_again, NULL, "fill_again", 0};
  CHECK(weft__op_impl_unique(fill, WEFT_KEY_CPU, k) == NULL);
  CHECK_ERROR_HAS("impl: aten::fill_.Scalar already has a kernel for CPU (ew_fill__cpu)");
  weft_op_table_entry(fill, WEFT_KEY_CPU, &e);
  CHECK(strcmp(e.kernel, "ew_fill__cpu") == 0);
  /* every op of the table: at most one registration per key */
  for (int64_t i = 0; i < weft_op_count(); i++) {
    weft_op* op = weft_op_at(i);
    for (int key = 0; key < WEFT_KEY_COUNT; key++) {
      if (!weft_op_has_kernel(op, (weft_dispatch_key)key)) continue;
      const weft_registration* r = op->kernels[key];
      CHECK(r->next == NULL);
      if (r->next)
        fprintf(stderr, "  %s has two kernels for %s\n", weft_op_name(op), weft_dispatch_key_name((weft_dispatch_key)key));
    }
  }
}

int main(void) {
  int64_t base = weft_memory().tensors;
  test_kernels_registered_once();
  test_contiguous_trace();
  test_meta_factories();
  test_meta_views();
  test_boxed_by_name();
  test_tables();
  CHECK_EQ_I64(weft_memory().tensors, base);
  TEST_REPORT();
}
