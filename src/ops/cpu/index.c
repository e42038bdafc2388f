/* The indexing driver: see index.h. Rows of a walk are independent (they
 * differ in a coordinate other than the indexed one, so no two rows write
 * the same element), which lets gather, scatter and masked_fill split rows
 * across threads; the packing walks (masked_select, nonzero) run in order. */
#include "ops/cpu/index.h"

#include <string.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "iter/iter_internal.h"
#include "weft/iter.h"
#include "weft/parallel.h"

void weft__index_walk_init(weft_index_walk* w, const weft_tensor* t, int dim) {
  memset(w, 0, sizeof *w);
  w->nd = t->ndim ? t->ndim : 1;
  int j = 0;
  for (int d = 0; d < t->ndim; d++)
    if (d != dim) w->sizes[j++] = t->sizes[d];
  if (dim >= 0 && t->ndim) w->sizes[j++] = t->sizes[dim];
  if (!t->ndim) w->sizes[0] = 1;
  weft__index_walk_add(w, 0, t, dim);
}

void weft__index_walk_add(weft_index_walk* w, int k, const weft_tensor* t, int dim) {
  int64_t es = (int64_t)weft_dtype_size(t->dtype);
  int j = 0;
  for (int d = 0; d < t->ndim; d++)
    if (d != dim) w->strides[k][j++] = t->strides[d] * es;
  if (dim >= 0 && t->ndim) w->strides[k][j++] = t->strides[dim] * es;
  for (; j < w->nd; j++) w->strides[k][j] = 0;
  w->data[k] = (char*)weft_tensor_data_ptr(t);
}

static int64_t walk_rows(const weft_index_walk* w) {
  int64_t r = 1;
  for (int d = 0; d < w->nd - 1; d++) r *= w->sizes[d];
  return r;
}

/* The operands' row pointers of row r (C order over the outer dims). */
static void row_ptrs(const weft_index_walk* w, int64_t r, char** p) {
  for (int k = 0; k < 3; k++) p[k] = w->data[k];
  for (int d = w->nd - 2; d >= 0; d--) {
    int64_t i = r % w->sizes[d];
    r /= w->sizes[d];
    for (int k = 0; k < 3; k++)
      if (p[k]) p[k] += i * w->strides[k][d];
  }
}

static inline int64_t load_index(const char* p, weft_dtype t) {
  if (t == WEFT_INT32) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
  }
  int64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* rows per task: about 32K elements each */
static int64_t row_grain(const weft_index_walk* w) {
  int64_t inner = w->sizes[w->nd - 1];
  return inner >= 32768 ? 1 : 32768 / (inner ? inner : 1);
}

/* explain(): the walk's plan; "contiguous_rows" when the rows of the moved
 * operands (0 and 2, not the index) are dense or broadcast, else "strided" */
static weft_status explain_walk(const char* kind, const weft_index_walk* w, weft_dtype t) {
  const int in = w->nd - 1;
  const int64_t es = (int64_t)weft_dtype_size(t);
  bool dense = true;
  for (int k = 0; k < 3; k += 2)
    if (w->data[k] && w->strides[k][in] != 0 && w->strides[k][in] != es) dense = false;
  return weft__explain_kernel(NULL, kind, dense ? "contiguous_rows" : "strided", t, walk_rows(w), w->sizes[in]);
}

/* ---- gather ---- */

/* One row: out[j] = src[j * ss + idx[j] * ds]; a typed copy per element
 * size, so the compiler keeps the index load, multiply and move in
 * registers. ss is 0 when the row runs along the indexed dim (gather,
 * index_select, take) and the source's own stride along a plain dim
 * (advanced indexing's result rows). */
#define WEFT__GATHER_ROW(T)                                                                       \
  for (int64_t j = 0; j < n; j++) {                                                              \
    int64_t k = ix == WEFT_INT64 ? *(const int64_t*)(i + j * is) : *(const int32_t*)(i + j * is); \
    *(T*)(o + j * os) = *(const T*)(s + j * ss + k * ds);                                         \
  }

static void gather_row(const weft_index_move* m, char* o, const char* i, const char* s, int64_t n) {
  const int in = m->w.nd - 1;
  const int64_t os = m->w.strides[0][in], is = m->w.strides[1][in], ss = m->w.strides[2][in], ds = m->dim_stride;
  const weft_dtype ix = m->idx_dtype;
  switch (weft_dtype_size(m->dtype)) {
    case 1: WEFT__GATHER_ROW(uint8_t) break;
    case 2: WEFT__GATHER_ROW(uint16_t) break;
    case 4: WEFT__GATHER_ROW(uint32_t) break;
    default: WEFT__GATHER_ROW(uint64_t) break;
  }
}

static weft_status gather_rows(void* ctx, int64_t begin, int64_t end) {
  const weft_index_move* m = ctx;
  char* p[3];
  for (int64_t r = begin; r < end; r++) {
    row_ptrs(&m->w, r, p);
    gather_row(m, p[0], p[1], p[2], m->w.sizes[m->w.nd - 1]);
  }
  return WEFT_OK;
}

weft_status weft__index_gather_run(const weft_index_move* m) {
  if (weft_explaining()) return explain_walk("gather", &m->w, m->dtype);
  return weft_parallel_for(0, walk_rows(&m->w), row_grain(&m->w), gather_rows, (void*)m);
}

/* ---- scatter ---- */

/* dst op= v, in dtype t, as PyTorch's CPU scatter reductions compute it
 * (float16/bfloat16 through float; bool add is or, multiply and). */
static void reduce_into(char* dst, const char* v, weft_dtype t, weft_scatter_mode mode) {
  size_t es = weft_dtype_size(t);
  if (mode == WEFT_SCATTER_ASSIGN) {
    memcpy(dst, v, es);
    return;
  }
  if (t == WEFT_FLOAT32) {
    float a, b;
    memcpy(&a, dst, 4);
    memcpy(&b, v, 4);
    a = mode == WEFT_SCATTER_ADD ? a + b : a * b;
    memcpy(dst, &a, 4);
    return;
  }
  weft__value a = weft__load(dst, t), b = weft__load(v, t), r = a;
  if (a.is_float)
    r = weft__value_from_double(mode == WEFT_SCATTER_ADD ? a.f + b.f : a.f * b.f);
  else if (t == WEFT_BOOL)
    r.i = mode == WEFT_SCATTER_ADD ? (a.i | b.i) : (a.i & b.i);
  else /* wrap like C++ integer arithmetic */
    r.i = (int64_t)(mode == WEFT_SCATTER_ADD ? (uint64_t)a.i + (uint64_t)b.i : (uint64_t)a.i * (uint64_t)b.i);
  weft__store(dst, t, r);
}

static weft_status scatter_rows(void* ctx, int64_t begin, int64_t end) {
  const weft_index_move* m = ctx;
  const int in = m->w.nd - 1;
  const int64_t n = m->w.sizes[in], ds = m->w.strides[0][in], is = m->w.strides[1][in], ss = m->w.strides[2][in];
  char* p[3];
  for (int64_t r = begin; r < end; r++) {
    row_ptrs(&m->w, r, p);
    for (int64_t j = 0; j < n; j++) {
      const char* v = p[2] ? p[2] + j * ss : (const char*)m->value;
      reduce_into(p[0] + j * ds + load_index(p[1] + j * is, m->idx_dtype) * m->dim_stride, v, m->dtype, m->mode);
    }
  }
  return WEFT_OK;
}

weft_status weft__index_scatter_run(const weft_index_move* m) {
  if (weft_explaining()) return explain_walk(m->serial ? "scatter_serial" : "scatter", &m->w, m->dtype);
  int64_t rows = walk_rows(&m->w);
  if (m->serial) return scatter_rows((void*)m, 0, rows);
  return weft_parallel_for(0, rows, row_grain(&m->w), scatter_rows, (void*)m);
}

/* ---- masked_fill ---- */

typedef struct {
  const weft_index_walk* w;
  size_t es;
  const unsigned char* value;
} fill_ctx;

static weft_status fill_rows(void* ctx, int64_t begin, int64_t end) {
  const fill_ctx* c = ctx;
  const int in = c->w->nd - 1;
  const int64_t n = c->w->sizes[in], ds = c->w->strides[0][in], ms = c->w->strides[1][in];
  char* p[3];
  for (int64_t r = begin; r < end; r++) {
    row_ptrs(c->w, r, p);
    for (int64_t j = 0; j < n; j++)
      if (p[1][j * ms]) memcpy(p[0] + j * ds, c->value, c->es);
  }
  return WEFT_OK;
}

weft_status weft__index_masked_fill_run(const weft_index_walk* w, weft_dtype dtype, const unsigned char* value) {
  if (weft_explaining()) return explain_walk("masked_fill", w, dtype);
  fill_ctx c = {w, weft_dtype_size(dtype), value};
  return weft_parallel_for(0, walk_rows(w), row_grain(w), fill_rows, &c);
}

/* ---- serial walks ---- */

/* Calls visit(ctx, p, coord) for every element of the walk in C order; a
 * stride-0 dim is walked once when skip_broadcast. Returns false when visit
 * asks to stop. */
typedef bool (*visit_fn)(void* ctx, char* const* p, const int64_t* coord);

static bool walk_all(const weft_index_walk* w, bool skip_broadcast, visit_fn visit, void* ctx) {
  int64_t sizes[WEFT_MAX_DIMS], coord[WEFT_MAX_DIMS] = {0};
  for (int d = 0; d < w->nd; d++) {
    sizes[d] = skip_broadcast && w->strides[0][d] == 0 ? 1 : w->sizes[d];
    if (sizes[d] == 0) return true;
  }
  char* p[3] = {w->data[0], w->data[1], w->data[2]};
  for (;;) {
    if (!visit(ctx, p, coord)) return false;
    int d = w->nd - 1;
    for (; d >= 0; d--) {
      for (int k = 0; k < 3; k++)
        if (p[k]) p[k] += w->strides[k][d];
      if (++coord[d] < sizes[d]) break;
      for (int k = 0; k < 3; k++)
        if (p[k]) p[k] -= w->strides[k][d] * sizes[d];
      coord[d] = 0;
    }
    if (d < 0) return true;
  }
}

typedef struct {
  weft_dtype t;
  int64_t lo, hi, bad;
} bounds_ctx;

static bool in_bounds(void* ctx, char* const* p, const int64_t* coord) {
  (void)coord;
  bounds_ctx* c = ctx;
  int64_t v = load_index(p[0], c->t);
  c->bad = v;
  return v >= c->lo && v < c->hi;
}

bool weft__index_find_bad(const weft_index_walk* w, weft_dtype idx_dtype, int64_t lo, int64_t hi, int64_t* bad) {
  bounds_ctx c = {idx_dtype, lo, hi, 0};
  if (walk_all(w, true, in_bounds, &c)) return false;
  *bad = c.bad;
  return true;
}

typedef struct {
  int64_t size, stride;
} offset_ctx;

static bool add_offset(void* ctx, char* const* p, const int64_t* coord) {
  (void)coord;
  const offset_ctx* c = ctx;
  int64_t v = load_index(p[1], WEFT_INT64), o;
  memcpy(&o, p[0], 8);
  o += (v < 0 ? v + c->size : v) * c->stride;
  memcpy(p[0], &o, 8);
  return true;
}

void weft__index_add_offsets(const weft_index_walk* w, int64_t size, int64_t stride) {
  offset_ctx c = {size, stride};
  walk_all(w, false, add_offset, &c);
}

/* -0.0 is zero and NaN is not, as PyTorch's `!= 0` */
static bool is_nonzero(const char* p, weft_dtype t) {
  weft__value v = weft__load(p, t);
  return v.is_float ? v.f != 0.0 || v.f != v.f : v.i != 0;
}

typedef struct {
  weft_dtype t;
  int64_t n;
  int nd;
  int64_t* out;
  size_t es;
  char* packed;
  int64_t row_stride, col_stride; /* nonzero's output, in elements */
} pack_ctx;

static bool count_one(void* ctx, char* const* p, const int64_t* coord) {
  (void)coord;
  pack_ctx* c = ctx;
  c->n += is_nonzero(p[0], c->t);
  return true;
}

int64_t weft__index_count_nonzero(const weft_index_walk* w, weft_dtype dtype) {
  pack_ctx c = {dtype, 0, 0, NULL, 0, NULL, 0, 0};
  walk_all(w, false, count_one, &c);
  return c.n;
}

static bool select_one(void* ctx, char* const* p, const int64_t* coord) {
  (void)coord;
  pack_ctx* c = ctx;
  if (*p[0]) {
    memcpy(c->packed + (size_t)c->n * c->es, p[1], c->es);
    c->n++;
  }
  return true;
}

void weft__index_masked_select(const weft_index_walk* w, size_t es, char* out) {
  pack_ctx c = {WEFT_BOOL, 0, 0, NULL, es, out, 0, 0};
  walk_all(w, false, select_one, &c);
}

static bool coords_one(void* ctx, char* const* p, const int64_t* coord) {
  pack_ctx* c = ctx;
  if (is_nonzero(p[0], c->t)) {
    for (int d = 0; d < c->nd; d++) c->out[c->n * c->row_stride + d * c->col_stride] = coord[d];
    c->n++;
  }
  return true;
}

void weft__index_nonzero(const weft_index_walk* w, weft_dtype dtype, int64_t* out, int64_t row_stride,
                         int64_t col_stride) {
  pack_ctx c = {dtype, 0, w->nd, out, 0, NULL, row_stride, col_stride};
  walk_all(w, false, coords_one, &c);
}
