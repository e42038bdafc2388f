/* libFuzzer target: TensorIterator build() on random operands (shapes,
 * strides, dtypes, overlapping layouts, outputs that alias or overlap
 * inputs, missing outputs) with random flags, in elementwise and reduction
 * mode. A build either fails cleanly or gives an iterator whose run — a sum
 * of the inputs (elementwise) or into the output (reduction), through the
 * iterator's own pointers and strides — matches a direct element loop over
 * the tensors, whenever the result is determinate (no partial overlap). */
#include "fuzz.h"

#define MAX_NUMEL 512

typedef struct {
  const weft_iter* it;
  bool reduce;
} run_ctx;

/* out = in1 + in2 + ... (elementwise), out += in1 + ... (reduction), in each
 * operand's memory dtype, through the iterator's pointers and strides. */
static void sum_loop(void* p, char** data, const int64_t* s, int64_t n0, int64_t n1) {
  const run_ctx* c = p;
  int nt = c->it->ntensors;
  for (int64_t j = 0; j < n1; j++)
    for (int64_t i = 0; i < n0; i++) {
      char* out = data[0] + j * s[nt] + i * s[0];
      double v = c->reduce ? fz_load(c->it->ops[0].dtype, out) : 0;
      for (int a = 1; a < nt; a++) v += fz_load(c->it->ops[a].dtype, data[a] + j * s[nt + a] + i * s[a]);
      fz_store(c->it->ops[0].dtype, out, v);
    }
}

static void element_ptrs(const weft_tensor* t, int64_t n, char** out) {
  int64_t nd = weft_tensor_dim(t), idx[WEFT_MAX_DIMS] = {0};
  size_t es = weft_tensor_element_size(t);
  char* base = weft_storage_data(weft_tensor_storage(t));
  for (int64_t j = 0; j < n; j++) {
    int64_t e = weft_tensor_storage_offset(t);
    for (int64_t i = 0; i < nd; i++) e += idx[i] * weft_tensor_strides(t)[i];
    out[j] = base + e * (int64_t)es;
    for (int64_t d = nd - 1; d >= 0 && ++idx[d] == weft_tensor_sizes(t)[d]; d--) idx[d] = 0;
  }
}

static bool same_layout(const weft_tensor* a, const weft_tensor* b) {
  int64_t nd = weft_tensor_dim(a);
  return weft_tensor_storage(a) == weft_tensor_storage(b) && nd == weft_tensor_dim(b) &&
         weft_tensor_dtype(a) == weft_tensor_dtype(b) &&
         weft_tensor_storage_offset(a) == weft_tensor_storage_offset(b) &&
         !memcmp(weft_tensor_sizes(a), weft_tensor_sizes(b), (size_t)nd * 8) &&
         !memcmp(weft_tensor_strides(a), weft_tensor_strides(b), (size_t)nd * 8);
}

/* Do any bytes of a and b meet (a != b as a whole layout)? Or a with itself. */
static bool bytes_meet(const weft_tensor* a, const weft_tensor* b) {
  if (weft_tensor_storage(a) != weft_tensor_storage(b)) return false;
  int64_t na = weft_tensor_numel(a), nb = weft_tensor_numel(b);
  static char *pa[MAX_NUMEL], *pb[MAX_NUMEL];
  element_ptrs(a, na, pa);
  element_ptrs(b, nb, pb);
  size_t ea = weft_tensor_element_size(a), eb = weft_tensor_element_size(b);
  for (int64_t i = 0; i < na; i++)
    for (int64_t j = 0; j < nb; j++) {
      if (a == b && i == j) continue;
      if (pa[i] < pb[j] + eb && pb[j] < pa[i] + ea) return true;
    }
  return false;
}

/* The expected output: a direct loop over broadcast indices (elementwise),
 * or over the input with the output's stride-0 dims (reduction). */
static void expect(const weft_iter* it, weft_tensor* const* in, int nin, bool reduce, char* want) {
  const weft_tensor* out = it->ops[0].tensor;
  weft_dtype od = weft_tensor_dtype(out);
  size_t es = weft_dtype_size(od);
  int64_t n = weft_tensor_numel(out);
  static char* po[MAX_NUMEL];
  element_ptrs(out, n, po);
  if (!reduce) {
    int64_t nd = weft_tensor_dim(out), idx[WEFT_MAX_DIMS] = {0};
    for (int64_t j = 0; j < n; j++) {
      double v = 0;
      for (int a = 0; a < nin; a++) {
        int64_t ind = weft_tensor_dim(in[a]), e = weft_tensor_storage_offset(in[a]);
        for (int64_t i = 0; i < ind; i++) {
          int64_t k = idx[nd - ind + i];
          if (weft_tensor_sizes(in[a])[i] == 1) k = 0;
          e += k * weft_tensor_strides(in[a])[i];
        }
        v += fz_load(weft_tensor_dtype(in[a]), (char*)weft_storage_data(weft_tensor_storage(in[a])) + e * (int64_t)weft_tensor_element_size(in[a]));
      }
      fz_store(od, want + j * es, v);
      for (int64_t d = nd - 1; d >= 0 && ++idx[d] == weft_tensor_sizes(out)[d]; d--) idx[d] = 0;
    }
    return;
  }
  /* reduction: out has the input's shape with stride 0 on reduced dims; the
   * element pointers repeat. Accumulate per distinct pointer, in order. */
  static char* pi[MAX_NUMEL];
  element_ptrs(in[0], weft_tensor_numel(in[0]), pi);
  for (int64_t j = 0; j < n; j++) memcpy(want + j * es, po[j], es);
  for (int64_t j = 0; j < n; j++) {
    int64_t first = j;
    for (int64_t k = 0; k < j; k++)
      if (po[k] == po[j]) { first = k; break; }
    double v = fz_load(od, want + first * es) + fz_load(weft_tensor_dtype(in[0]), pi[j]);
    fz_store(od, want + first * es, v);
  }
  for (int64_t j = 0; j < n; j++) { /* every alias of an element holds its first's value */
    for (int64_t k = 0; k < j; k++)
      if (po[k] == po[j]) { memcpy(want + j * es, want + k * es, es); break; }
  }
}

static void configure(fz* f, weft_iter_config* c, weft_tensor** in, int nin, weft_tensor* out, bool reduce) {
  weft_iter_config_set_op_name(c, "fuzz");
  if (out) weft_iter_config_add_output(c, out);
  else weft_iter_config_add_output(c, NULL);
  for (int a = 0; a < nin; a++) {
    if (!reduce && weft_tensor_dim(in[a]) == 0 && fz_u8(f) % 4 == 0) weft_iter_config_add_wrapped_number(c, in[a]);
    else weft_iter_config_add_input(c, in[a]);
  }
  if (reduce) {
    weft_iter_config_check_mem_overlap(c, false);
    weft_iter_config_resize_outputs(c, false);
    weft_iter_config_check_all_same_dtype(c, false);
    weft_iter_config_is_reduction(c, true);
    return;
  }
  uint8_t flags = fz_u8(f);
  if (flags & 1) weft_iter_config_check_mem_overlap(c, false);
  if (flags & 2) weft_iter_config_promote_inputs_to_common_dtype(c, true);
  /* (these two need promotion: without it, an internal error by contract) */
  if ((flags & 6) == 6) weft_iter_config_promote_integer_inputs_to_float(c, true);
  if ((flags & 10) == 10) weft_iter_config_cast_common_dtype_to_outputs(c, true);
  if (flags & 16) weft_iter_config_enforce_safe_casting_to_output(c, true);
  if (flags & 32) weft_iter_config_resize_outputs(c, false);
  if (flags & 64) weft_iter_config_check_all_same_dtype(c, false);
  if (flags & 128) weft_iter_config_enforce_linear_iteration(c, true);
}

static void run_and_check(const weft_iter* it, weft_tensor* const* in, int nin, bool reduce, bool determinate) {
  const weft_tensor* out = it->ops[0].tensor;
  int64_t n = weft_tensor_numel(out);
  if (!out || n > MAX_NUMEL || (reduce && weft_tensor_numel(in[0]) != n)) return;
  size_t es = weft_tensor_element_size(out);
  static char want[MAX_NUMEL * 8];
  if (determinate) expect(it, in, nin, reduce, want);
  run_ctx ctx = {it, reduce};
  if (weft_iter_for_each(it, sum_loop, &ctx, WEFT_GRAIN_SIZE) != WEFT_OK) FUZZ_FAIL("for_each: %s", weft_last_error());
  if (!determinate) return;
  static char* po[MAX_NUMEL];
  element_ptrs(out, n, po);
  for (int64_t j = 0; j < n; j++)
    if (memcmp(po[j], want + j * es, es) != 0)
      FUZZ_FAIL("%s element %lld: %g, expected %g", reduce ? "reduction" : "elementwise", (long long)j,
                fz_load(weft_tensor_dtype(out), po[j]), fz_load(weft_tensor_dtype(out), want + j * es));
}

static void debug_show(const char* name, const weft_tensor* t) {
  if (!getenv("FUZZ_DEBUG") || !t) return;
  fprintf(stderr, "%s %s [", name, weft_dtype_name(weft_tensor_dtype(t)));
  for (int64_t i = 0; i < weft_tensor_dim(t); i++)
    fprintf(stderr, " %lld/%lld", (long long)weft_tensor_sizes(t)[i], (long long)weft_tensor_strides(t)[i]);
  fprintf(stderr, " ] +%lld\n", (long long)weft_tensor_storage_offset(t));
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fz f = {data, size};
  static bool once;
  if (!once) weft_set_num_threads(1), once = true; /* the reduction loop accumulates in place */
  fz_begin();
  bool reduce = fz_u8(&f) % 4 == 0;
  int nin = reduce ? 1 : (int)fz_range(&f, 1, 3);
  weft_tensor* in[3];
  weft_dtype d = fz_dtype(&f);
  for (int a = 0; a < nin; a++) in[a] = fz_strided(&f, fz_bool(&f) ? d : fz_dtype(&f), 4);
  weft_tensor* out = NULL;
  switch (fz_u8(&f) % 5) {
    case 0: break; /* build allocates */
    case 1: out = weft_tensor_retain(in[fz_range(&f, 0, nin - 1)]); break; /* in place */
    case 2: { /* a view of an input's storage: overlaps */
      const weft_tensor* src = in[fz_range(&f, 0, nin - 1)];
      int64_t k = weft_tensor_dim(src);
      out = weft_as_strided(src, weft_tensor_sizes(src), weft_tensor_strides(src), k, 0);
      if (!out) fz_clean_error("as_strided");
      break;
    }
    default: out = fz_strided(&f, fz_bool(&f) ? d : fz_dtype(&f), 4);
  }
  if (reduce) { /* the output: a view with the input's shape, stride 0 on reduced dims */
    weft_tensor* r = out;
    out = NULL;
    if (r) {
      int64_t nd = weft_tensor_dim(in[0]), st[WEFT_MAX_DIMS];
      for (int64_t i = 0; i < nd; i++) st[i] = fz_range(&f, 0, 2);
      out = weft_as_strided(r, weft_tensor_sizes(in[0]), st, nd, 0);
      if (!out) fz_clean_error("reduction view");
      weft_tensor_release(r);
    }
  }
  if (reduce && !out) { /* a reduction needs its output */
    for (int a = 0; a < nin; a++) weft_tensor_release(in[a]);
    fz_end();
    return 0;
  }
  debug_show("out", out);
  for (int a = 0; a < nin; a++) debug_show("in", in[a]);
  weft_iter_config c = weft_iter_config_init();
  configure(&f, &c, in, nin, out, reduce);
  weft_iter it;
  if (weft_iter_build(&c, &it) == WEFT_OK) {
    /* after build: an output it resized has its new layout */
  /* determinate: the output does not overlap itself, nor any input other than as the same layout */
    bool determinate = out == it.ops[0].tensor && weft_tensor_numel(out) <= MAX_NUMEL;
    for (int a = 0; a < nin && determinate; a++)
      if (weft_tensor_numel(in[a]) > MAX_NUMEL || ((reduce || !same_layout(out, in[a])) && bytes_meet(out, in[a])))
        determinate = false; /* (a reduction into its own input accumulates what it reads) */
    if (determinate && !reduce && bytes_meet(out, out)) determinate = false;
    /* bfloat16 holds integers exactly up to 256 only: longer sums depend on the order */
    if (reduce && weft_tensor_dtype(out) == WEFT_BFLOAT16 && weft_tensor_numel(in[0]) > 80) determinate = false;
    run_and_check(&it, in, nin, reduce, determinate);
    weft_iter_destroy(&it);
  } else {
    fz_check_error("iter build", true);
  }
  weft_tensor_release(out);
  for (int a = 0; a < nin; a++) weft_tensor_release(in[a]);
  fz_end();
  return 0;
}
