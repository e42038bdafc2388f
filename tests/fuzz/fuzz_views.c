/* libFuzzer target: chains of views (view, reshape, permute, transpose, t,
 * slice, select, narrow, expand, as_strided, unsqueeze, squeeze, flatten,
 * unflatten, movedim, contiguous) with random, often invalid, arguments on a
 * random layout of a random dtype.
 *
 * An independent model records what each step means (which input element
 * each output element is); after every step, for every element, the view's
 * own sizes/strides/offset must land inside its storage and on the element
 * the model names, and contiguous() and the reference copy must read the
 * same bytes. Failed steps must be clean errors; nothing may stay allocated. */
#include "fuzz.h"

#define MAX_STEPS 10
#define MAX_NUMEL 4096

enum { V_AS_STRIDED, V_LINEAR, V_PERMUTE, V_SLICE, V_SELECT, V_EXPAND, V_UNSQUEEZE, V_SQUEEZE };

/* What one step did: out element -> in element. */
typedef struct {
  int kind;
  int64_t in_nd, in_sz[WEFT_MAX_DIMS], out_nd, out_sz[WEFT_MAX_DIMS];
  int64_t perm[WEFT_MAX_DIMS];        /* V_PERMUTE: out dim k is in dim perm[k] */
  int64_t dim, start, step;           /* V_SLICE (start + i*step), V_SELECT (index start), V_UNSQUEEZE */
  bool removed[WEFT_MAX_DIMS];        /* V_SQUEEZE: in dims dropped */
  int64_t as_st[WEFT_MAX_DIMS], as_off; /* V_AS_STRIDED: into the step's input storage */
} step_t;

typedef struct {
  step_t s[MAX_STEPS + 1];
  int n;
  weft_tensor* root; /* 1-D contiguous over the storage every as_strided step reads */
} chain_t;

static int64_t numel_of(const int64_t* sz, int64_t nd) {
  int64_t n = 1;
  for (int64_t i = 0; i < nd; i++)
    if (!sz[i]) return 0; /* [2**63-1, 2**40, 0] is a valid empty shape */
  for (int64_t i = 0; i < nd; i++)
    if (__builtin_mul_overflow(n, sz[i], &n)) FUZZ_FAIL("a shape whose numel overflows int64 was made");
  return n;
}

static void delinearize(int64_t lin, const int64_t* sz, int64_t nd, int64_t* idx) {
  for (int64_t i = nd - 1; i >= 0; i--) {
    idx[i] = sz[i] ? lin % sz[i] : 0;
    lin = sz[i] ? lin / sz[i] : 0;
  }
}

/* The root storage element that output element `idx` of step k reads. */
static int64_t model_element(const chain_t* c, int k, const int64_t* idx0) {
  int64_t idx[WEFT_MAX_DIMS], in[WEFT_MAX_DIMS];
  memcpy(idx, idx0, sizeof idx);
  for (; k >= 0; k--) {
    const step_t* s = &c->s[k];
    switch (s->kind) {
      case V_AS_STRIDED: {
        int64_t e = s->as_off;
        for (int64_t i = 0; i < s->out_nd; i++) e += idx[i] * s->as_st[i];
        return e;
      }
      case V_LINEAR: {
        int64_t lin = 0;
        for (int64_t i = 0; i < s->out_nd; i++) lin = lin * s->out_sz[i] + idx[i];
        delinearize(lin, s->in_sz, s->in_nd, in);
        break;
      }
      case V_PERMUTE:
        for (int64_t i = 0; i < s->out_nd; i++) in[s->perm[i]] = idx[i];
        break;
      case V_SLICE:
        memcpy(in, idx, sizeof in);
        in[s->dim] = s->start + idx[s->dim] * s->step;
        break;
      case V_SELECT:
        for (int64_t i = 0, o = 0; i < s->in_nd; i++) in[i] = i == s->dim ? s->start : idx[o++];
        break;
      case V_EXPAND:
        for (int64_t i = 0; i < s->in_nd; i++) {
          int64_t o = i + s->out_nd - s->in_nd;
          in[i] = s->in_sz[i] == 1 ? 0 : idx[o];
        }
        break;
      case V_UNSQUEEZE:
        for (int64_t i = 0, o = 0; o < s->out_nd; o++)
          if (o != s->dim) in[i++] = idx[o];
        break;
      default: /* V_SQUEEZE */
        for (int64_t i = 0, o = 0; i < s->in_nd; i++) in[i] = s->removed[i] ? 0 : idx[o++];
        break;
    }
    memcpy(idx, in, sizeof idx);
  }
  FUZZ_FAIL("chain without a root");
}

static int64_t wrap(int64_t d, int64_t nd) {
  if (nd <= 0) nd = 1;
  return d < -nd || d >= nd ? -1 : d < 0 ? d + nd : d;
}

/* Checks step k's result against the model, element by element. */
static void check_step(const chain_t* c, int k, const weft_tensor* t) {
  const step_t* s = &c->s[k];
  int64_t nd = weft_tensor_dim(t);
  const int64_t* sz = weft_tensor_sizes(t);
  const int64_t* st = weft_tensor_strides(t);
  if (nd != s->out_nd || memcmp(sz, s->out_sz, (size_t)nd * sizeof *sz) != 0) FUZZ_FAIL("step %d: shape differs from the model", k);
  int64_t n = weft_tensor_numel(t);
  if (n != numel_of(sz, nd)) FUZZ_FAIL("step %d: numel", k);
  if (!n) return;
  weft_dtype d = weft_tensor_dtype(t);
  size_t es = weft_dtype_size(d);
  const char* base = weft_storage_data(weft_tensor_storage(t));
  int64_t cap = weft_storage_nbytes(weft_tensor_storage(t)) / (int64_t)es;
  const char* root = weft_tensor_data_ptr(c->root);
  bool same = weft_tensor_storage(t) == weft_tensor_storage(c->root);
  weft_tensor* cont = weft_contiguous(t, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* ref = weft_empty(sz, nd, d, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  if (!cont || !ref || weft_copy_reference(ref, t) != WEFT_OK) FUZZ_FAIL("step %d: copies failed: %s", k, weft_last_error());
  const char* cp = weft_tensor_data_ptr(cont);
  const char* rp = weft_tensor_data_ptr(ref);
  for (int64_t j = 0; j < n; j++) {
    int64_t idx[WEFT_MAX_DIMS] = {0};
    delinearize(j, sz, nd, idx);
    int64_t a = weft_tensor_storage_offset(t);
    for (int64_t i = 0; i < nd; i++) a += idx[i] * st[i];
    if (a < 0 || a >= cap) FUZZ_FAIL("step %d: element %lld at %lld is outside its storage of %lld", k, (long long)j, (long long)a, (long long)cap);
    int64_t e = model_element(c, k, idx);
    if (same && a != e) FUZZ_FAIL("step %d: element %lld at %lld, the model says %lld", k, (long long)j, (long long)a, (long long)e);
    if (memcmp(base + a * es, root + e * es, es) != 0) FUZZ_FAIL("step %d: element %lld differs from the model", k, (long long)j);
    if (memcmp(cp + j * es, root + e * es, es) != 0) FUZZ_FAIL("step %d: contiguous() element %lld differs", k, (long long)j);
    if (memcmp(rp + j * es, root + e * es, es) != 0) FUZZ_FAIL("step %d: reference copy element %lld differs", k, (long long)j);
  }
  weft_tensor_release(cont);
  weft_tensor_release(ref);
}

/* A random list of n sizes, some -1. */
static void rand_sizes(fz* f, int64_t* v, int64_t n, int64_t lo) {
  for (int64_t i = 0; i < n; i++) v[i] = fz_arg(f, lo, 5);
}

/* Applies one random view to t; fills s (the model) and returns the result,
 * or NULL after an error. `linear_ok` tells whether the result may share no
 * storage with t (reshape, contiguous copy). */
static weft_tensor* random_step(fz* f, const weft_tensor* t, step_t* s, bool root_storage) {
  int64_t nd = weft_tensor_dim(t), a[WEFT_MAX_DIMS + 2];
  const int64_t* sz = weft_tensor_sizes(t);
  memset(s, 0, sizeof *s);
  s->in_nd = nd;
  memcpy(s->in_sz, sz, (size_t)nd * sizeof *sz);
  s->kind = V_LINEAR;
  switch (fz_u8(f) % 16) {
    case 0: { /* view */
      int64_t n = fz_range(f, 0, 4);
      rand_sizes(f, a, n, -1);
      return weft_view(t, a, n);
    }
    case 1: {
      int64_t n = fz_range(f, 0, 4);
      rand_sizes(f, a, n, -1);
      return weft_reshape(t, a, n);
    }
    case 2: {
      int64_t n = fz_range(f, 0, 4);
      for (int64_t i = 0; i < n; i++) a[i] = fz_arg(f, -nd, nd);
      for (int64_t i = 0; i < n; i++) s->perm[i] = wrap(a[i], nd);
      s->kind = V_PERMUTE;
      return weft_permute(t, a, n);
    }
    case 3: {
      int64_t d0 = fz_arg(f, -nd, nd), d1 = fz_arg(f, -nd, nd);
      for (int64_t i = 0; i < nd; i++) s->perm[i] = i;
      if (nd) {
        int64_t w0 = wrap(d0, nd), w1 = wrap(d1, nd);
        if (w0 >= 0 && w1 >= 0) s->perm[w0] = w1, s->perm[w1] = w0;
      }
      s->kind = V_PERMUTE;
      return weft_transpose(t, d0, d1);
    }
    case 4:
      for (int64_t i = 0; i < nd; i++) s->perm[i] = nd == 2 ? 1 - i : i;
      s->kind = V_PERMUTE;
      return weft_t(t);
    case 5:
    case 6: { /* slice, narrow: the start the result has is read back below */
      int64_t d = fz_arg(f, -nd, nd);
      s->kind = V_SLICE;
      s->dim = wrap(d, nd);
      if (fz_bool(f)) {
        s->step = 1;
        int64_t st = fz_arg(f, -5, 5);
        s->start = st;
        return weft_narrow(t, d, st, fz_arg(f, -1, 5));
      }
      int64_t b = fz_arg(f, -6, 6), e = fz_arg(f, -6, 6);
      s->step = fz_arg(f, -1, 3);
      s->start = b;
      return weft_slice(t, d, b, e, s->step);
    }
    case 7: {
      int64_t d = fz_arg(f, -nd, nd), i = fz_arg(f, -5, 5);
      s->kind = V_SELECT;
      s->dim = wrap(d, nd);
      s->start = i;
      return weft_select(t, d, i);
    }
    case 8: {
      int64_t n = fz_range(f, 0, nd + 2 > WEFT_MAX_DIMS ? WEFT_MAX_DIMS : nd + 2);
      rand_sizes(f, a, n, -1);
      s->kind = V_EXPAND;
      return weft_expand(t, a, n);
    }
    case 9: {
      if (!root_storage) return weft_tensor_retain((weft_tensor*)t); /* the model reads the root */
      int64_t n = fz_range(f, 0, 4), st[WEFT_MAX_DIMS];
      rand_sizes(f, a, n, -1);
      for (int64_t i = 0; i < n; i++) st[i] = fz_arg(f, -1, 6);
      int64_t off = fz_arg(f, -1, 8);
      s->kind = V_AS_STRIDED;
      memcpy(s->as_st, st, (size_t)n * sizeof *st);
      s->as_off = off;
      return weft_as_strided(t, a, st, n, off);
    }
    case 10: {
      int64_t d = fz_arg(f, -nd - 1, nd + 1);
      s->kind = V_UNSQUEEZE;
      s->dim = wrap(d, nd + 1);
      return weft_unsqueeze(t, d);
    }
    case 11:
      s->kind = V_SQUEEZE;
      for (int64_t i = 0; i < nd; i++) s->removed[i] = sz[i] == 1;
      return weft_squeeze(t);
    case 12: {
      int64_t d = fz_arg(f, -nd, nd), w = wrap(d, nd);
      s->kind = V_SQUEEZE;
      if (nd && w >= 0) s->removed[w] = sz[w] == 1;
      return weft_squeeze_dim(t, d);
    }
    case 13:
      return weft_flatten(t, fz_arg(f, -nd, nd), fz_arg(f, -nd, nd));
    case 14: {
      int64_t n = fz_range(f, 0, 3);
      rand_sizes(f, a, n, -1);
      return weft_unflatten(t, fz_arg(f, -nd, nd), a, n);
    }
    default: {
      if (fz_bool(f)) return weft_contiguous(t, fz_bool(f) && nd == 4 ? WEFT_CHANNELS_LAST : WEFT_CONTIGUOUS_FORMAT);
      int64_t n = fz_range(f, 0, 2), src[2], dst[2];
      for (int64_t i = 0; i < n; i++) src[i] = fz_arg(f, -nd, nd), dst[i] = fz_arg(f, -nd, nd);
      /* movedim: out dim dst[i] is in dim src[i]; the others keep their order */
      bool used_in[WEFT_MAX_DIMS] = {0}, used_out[WEFT_MAX_DIMS] = {0};
      s->kind = V_PERMUTE;
      for (int64_t i = 0; i < n; i++) {
        int64_t ws = wrap(src[i], nd), wd = wrap(dst[i], nd);
        if (ws < 0 || wd < 0) continue;
        s->perm[wd] = ws;
        used_in[ws] = used_out[wd] = true;
      }
      for (int64_t o = 0, i = 0; o < nd; o++) {
        if (used_out[o]) continue;
        while (i < nd && used_in[i]) i++;
        s->perm[o] = i++;
      }
      return weft_movedim(t, src, dst, n);
    }
  }
}

/* After a successful step: fill what the model needs from the result
 * (shapes, the start a slice normalized to) and check what it can. */
static void complete_model(step_t* s, const weft_tensor* r, const weft_tensor* in) {
  s->out_nd = weft_tensor_dim(r);
  memcpy(s->out_sz, weft_tensor_sizes(r), (size_t)s->out_nd * sizeof(int64_t));
  if (numel_of(s->out_sz, s->out_nd) != numel_of(s->in_sz, s->in_nd) && s->kind == V_LINEAR)
    FUZZ_FAIL("a reshaping view changed numel");
  if (s->kind == V_SLICE) {
    /* normalized start: the offset moved by start * stride along dim */
    int64_t st = weft_tensor_strides(in)[s->dim];
    int64_t moved = weft_tensor_storage_offset(r) - weft_tensor_storage_offset(in);
    int64_t start = s->start < 0 ? s->start + s->in_sz[s->dim] : s->start;
    if (start < 0) start = 0;
    if (start > s->in_sz[s->dim]) start = s->in_sz[s->dim];
    if (s->out_sz[s->dim] && st && moved != start * st) FUZZ_FAIL("slice/narrow start %lld not where the view starts", (long long)start);
    s->start = start;
    int64_t want = s->in_sz[s->dim] - start <= 0 ? 0 : (s->in_sz[s->dim] - start - 1) / s->step + 1;
    if (s->out_sz[s->dim] > want) FUZZ_FAIL("slice/narrow longer than its input allows");
  }
  if (s->kind == V_SELECT && s->start < 0) s->start += s->in_sz[s->dim];
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fz f = {data, size};
  fz_begin();
  static chain_t c;
  memset(&c, 0, sizeof c);
  weft_dtype d = fz_dtype(&f);
  int64_t n = fz_range(&f, 1, 48);
  c.root = fz_base(&f, d, n, true);
  /* step 0: an in-bounds layout over the root */
  step_t* s0 = &c.s[0];
  s0->kind = V_AS_STRIDED;
  s0->in_nd = 1, s0->in_sz[0] = n;
  s0->out_nd = fz_range(&f, 0, 4);
  int64_t span = 0;
  s0->as_off = fz_range(&f, 0, n - 1);
  for (int64_t i = 0; i < s0->out_nd; i++) {
    s0->out_sz[i] = fz_range(&f, 0, 4);
    s0->as_st[i] = fz_range(&f, 0, 5);
    span += (s0->out_sz[i] ? s0->out_sz[i] - 1 : 0) * s0->as_st[i];
  }
  if (s0->as_off + span >= n) s0->as_off = 0, memset(s0->as_st, 0, sizeof s0->as_st);
  weft_tensor* t = weft_as_strided(c.root, s0->out_sz, s0->as_st, s0->out_nd, s0->as_off);
  if (!t) FUZZ_FAIL("in-bounds as_strided failed: %s", weft_last_error());
  check_step(&c, 0, t);
  for (c.n = 1; c.n <= MAX_STEPS && f.n; c.n++) {
    bool root = weft_tensor_storage(t) == weft_tensor_storage(c.root);
    weft_tensor* r = random_step(&f, t, &c.s[c.n], root);
    if (!r) {
      fz_clean_error("view step");
      c.n--;
      continue;
    }
    if (getenv("FUZZ_DEBUG")) { /* a crash's chain, step by step */
      fprintf(stderr, "step %d kind %d -> [", c.n, c.s[c.n].kind);
      for (int64_t i = 0; i < weft_tensor_dim(r); i++) fprintf(stderr, " %lld/%lld", (long long)weft_tensor_sizes(r)[i], (long long)weft_tensor_strides(r)[i]);
      fprintf(stderr, " ] +%lld\n", (long long)weft_tensor_storage_offset(r));
    }
    complete_model(&c.s[c.n], r, t);
    weft_tensor_release(t);
    t = r;
    if (weft_tensor_numel(t) > MAX_NUMEL) break;
    check_step(&c, c.n, t);
  }
  weft_tensor_release(t);
  weft_tensor_release(c.root);
  fz_end();
  return 0;
}
