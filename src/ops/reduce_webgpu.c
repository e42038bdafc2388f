/* Reductions, softmax and the norms on the WebGPU device (docs/webgpu.md).
 * The CPU op files keep their meta steps (checks, result dtype and
 * allocation, the reduction iterator's plan) and hand the filled-in plan
 * here when the tensors are on webgpu; this file describes each op as a
 * member of the row-reduction family (src/webgpu/wgsl_reduce.c): its state,
 * how an element enters it, how two states combine, and what the row and
 * element outputs are. Float32 accumulates in float32 (the CPU's var uses
 * float64), and the tree sums in another order than the CPU's cascade. */
#include <string.h>

#include "core/internal.h"
#include "ops/ops.h"
#include "ops/reduce_webgpu.h"
#include "ops/webgpu_ops.h"

/* infinities from the generator's helpers (a constant one is a WGSL shader-creation error) */
#define NEG_INF "ninf()"
#define POS_INF "pinf()"
/* NaN wins, as the CPU's max / min */
#define NAN_MAX "if (wnan(a)) { return a; } if (wnan(b)) { return b; } return max(a, b);"
#define NAN_MIN "if (wnan(a)) { return a; } if (wnan(b)) { return b; } return min(a, b);"
/* Chan et al.'s union of two (count, mean, m2) states */
#define WELFORD                                                                                   \
  "if (b.x == 0.0) { return a; } if (a.x == 0.0) { return b; } let n = a.x + b.x; "               \
  "let d = b.y - a.y; return vec3<f32>(n, a.y + d * (b.x / n), a.z + b.z + d * d * (a.x * b.x / n));"
/* (max, sum of exp(x - max)): rescaled to the larger max; a state whose max
 * is the new one keeps its sum as it is (so infinities never meet) */
#define LSE                                                                                        \
  "var m = max(a.x, b.x); if (wnan(a.x)) { m = a.x; } if (wnan(b.x)) { m = b.x; } "              \
  "return vec2<f32>(m, select(a.y * exp(a.x - m), a.y, a.x == m) + select(b.y * exp(b.x - m), b.y, b.x == m));"

typedef struct {
  const char *state, *identity, *lift, *comb;
  int words;
} member;

static const member M_SUM = {"f32", "0.0", "a0", "return a + b;", 1};
static const member M_PROD = {"f32", "1.0", "a0", "return a * b;", 1};
static const member M_MAX = {"f32", NEG_INF, "a0", NAN_MAX, 1};
static const member M_MIN = {"f32", POS_INF, "a0", NAN_MIN, 1};
static const member M_ALL = {"f32", "1.0", "select(0.0, 1.0, a0 != 0.0)", "return min(a, b);", 1};
static const member M_ANY = {"f32", "0.0", "select(0.0, 1.0, a0 != 0.0)", "return max(a, b);", 1};
static const member M_ISUM = {"i32", "0", "a0", "return a + b;", 1};
static const member M_IPROD = {"i32", "1", "a0", "return a * b;", 1};
static const member M_IMAX = {"i32", "i32(-2147483647 - 1)", "a0", "return max(a, b);", 1};
static const member M_IMIN = {"i32", "2147483647", "a0", "return min(a, b);", 1};
static const member M_WELFORD = {"vec3<f32>", "vec3<f32>(0.0)", "vec3<f32>(1.0, a0, 0.0)", WELFORD, 3};
static const member M_NORM0 = {"f32", "0.0", "select(0.0, 1.0, a0 != 0.0)", "return a + b;", 1};
static const member M_NORM1 = {"f32", "0.0", "abs(a0)", "return a + b;", 1};
static const member M_NORM2 = {"f32", "0.0", "a0 * a0", "return a + b;", 1};
static const member M_NORMINF = {"f32", "0.0", "abs(a0)", NAN_MAX, 1};
static const member M_NORMNINF = {"f32", POS_INF, "abs(a0)", NAN_MIN, 1};
static const member M_NORMP = {"f32", "0.0", "pow(abs(a0), e0)", "return a + b;", 1};
static const member M_LSE = {"vec2<f32>", "vec2<f32>(" NEG_INF ", 0.0)", "vec2<f32>(a0, 1.0)", LSE, 2};

static void use(weft__webgpu_reduce* r, const char* name, const member* m, weft_dtype compute) {
  r->name = name;
  r->state = m->state;
  r->identity = m->identity;
  r->lift = m->lift;
  r->comb = m->comb;
  r->state_words = m->words;
  r->compute = compute;
}

/* operand k: a tensor with its offset (strides filled by the caller) */
static void operand(weft__webgpu_reduce* r, const weft_tensor* t, weft__webgpu_red_role role) {
  int k = r->nops++;
  r->role[k] = role;
  r->dtype[k] = t->dtype;
  r->buffer[k] = t->device == WEFT_DEVICE_WEBGPU ? weft__webgpu_buffer_of(t) : 0;
  r->offset[k] = t->storage_offset;
}

/* ---- running a description: one pass, or the split of a long row ---- */

enum { SPLIT_MIN = 4096, CHUNK = 1024, MAX_GROUPS = 256, FEW_ROWS = 256 };

static bool has_elem_out(const weft__webgpu_reduce* r) {
  for (int k = 0; k < r->nops; k++)
    if (r->role[k] == WEFT_WEBGPU_RED_ELEM_OUT) return true;
  return false;
}

static weft_status run_split(const char* op, weft__webgpu_reduce* r) {
  r->groups = (r->count + CHUNK - 1) / CHUNK;
  if (r->groups > MAX_GROUPS) r->groups = MAX_GROUPS;
  r->chunk = (r->count + r->groups - 1) / r->groups;
  int64_t n = r->rows * r->groups * r->state_words, one = 1;
  weft_tensor* part = weft__tensor_alloc(op, &n, &one, 1, WEFT_FLOAT32, WEFT_DEVICE_WEBGPU);
  if (!part) return weft_last_status();
  weft__webgpu_program p;
  weft_status s = WEFT_OK;
  for (int mode = 1; mode <= 2 && s == WEFT_OK; mode++) {
    s = weft__webgpu_reduce_program(op, r, mode, weft__webgpu_buffer_of(part), &p);
    if (s == WEFT_OK) s = weft__webgpu_run(op, &p);
  }
  weft_tensor_release(part); /* the allocator reuses it only after the passes recorded before */
  return s;
}

/* Every operand a webgpu buffer (a cpu scalar the iterator let through has
 * none), and none bound twice when one binding writes (WebGPU refuses it). */
static weft_status check_operands(const char* op, const weft__webgpu_reduce* r) {
  for (int k = 0; k < r->nops; k++)
    if (r->buffer[k] <= 0)
      return weft__error(WEFT_INVALID_ARGUMENT, "%s: Expected all tensors to be on the same device, but found at "
                                                "least two devices, webgpu and cpu!", op);
  for (int k = 0; k < r->nops; k++)
    for (int j = 0; j < r->nops; j++)
      if (j != k && r->role[k] != WEFT_WEBGPU_RED_IN && r->buffer[j] == r->buffer[k])
        return weft__error(WEFT_NOT_IMPLEMENTED, "%s: an output sharing its storage with another operand is not "
                                                 "supported on the webgpu device yet: pass a separate tensor", op);
  return WEFT_OK;
}

weft_status weft__webgpu_reduce_run(const char* op, weft__webgpu_reduce* r) {
  if (r->rows == 0) return WEFT_OK;
  weft_status s0 = check_operands(op, r);
  if (s0 != WEFT_OK) return s0;
  if (r->lift && r->count >= SPLIT_MIN && r->rows < FEW_ROWS && !has_elem_out(r)) return run_split(op, r);
  /* a stateless pass spreads each row over chunks: a workgroup each */
  r->groups = !r->lift && r->count > CHUNK ? (r->count + CHUNK - 1) / CHUNK : 1;
  r->chunk = (r->count + r->groups - 1) / r->groups;
  weft__webgpu_program p;
  weft_status s = weft__webgpu_reduce_program(op, r, 0, 0, &p);
  return s == WEFT_OK ? weft__webgpu_run(op, &p) : s;
}

/* ---- reductions over the CPU's reduction iterator ---- */

/* the iterator's dims: reduced where output 0 has stride 0, else kept */
static void from_iter(weft__webgpu_reduce* r, const weft_iter* it) {
  r->rows = r->count = 1;
  for (int d = 0; d < it->ndim; d++) {
    bool red = it->ops[0].stride_bytes[d] == 0 && it->shape[d] != 1;
    int j = red ? r->nred++ : r->nkept++;
    (red ? r->red : r->kept)[j] = it->shape[d];
    *(red ? &r->count : &r->rows) *= it->shape[d];
    for (int k = 0; k < it->ntensors; k++) {
      int64_t es = (int64_t)weft_dtype_size(it->ops[k].dtype);
      (red ? r->rstride : r->kstride)[k][j] = it->ops[k].stride_bytes[d] / es;
    }
  }
  for (int k = 0; k < it->ntensors; k++)
    operand(r, it->ops[k].tensor, k < it->noutputs ? WEFT_WEBGPU_RED_ROW_OUT : WEFT_WEBGPU_RED_IN);
}

static const member* member_of(weft__red_kind kind, bool ints) {
  switch (kind) {
    case WEFT__RED_SUM: case WEFT__RED_MEAN: return ints ? &M_ISUM : &M_SUM;
    case WEFT__RED_PROD: return ints ? &M_IPROD : &M_PROD;
    case WEFT__RED_AMAX: return ints ? &M_IMAX : &M_MAX;
    case WEFT__RED_AMIN: return ints ? &M_IMIN : &M_MIN;
    case WEFT__RED_ALL: return &M_ALL;
    case WEFT__RED_ANY: return &M_ANY;
    case WEFT__RED_VAR: case WEFT__RED_STD: return &M_WELFORD;
    case WEFT__RED_LSE: return &M_LSE;
    case WEFT__RED_NORM0: return &M_NORM0;
    case WEFT__RED_NORM1: return &M_NORM1;
    case WEFT__RED_NORM2: return &M_NORM2;
    case WEFT__RED_NORMINF: return &M_NORMINF;
    case WEFT__RED_NORMNINF: return &M_NORMNINF;
    case WEFT__RED_NORMP: return &M_NORMP;
  }
  return &M_SUM;
}

static const char* row_expr_of(weft__red_kind kind) {
  switch (kind) {
    case WEFT__RED_MEAN: return "st / n";
    case WEFT__RED_VAR: return "st.z / max(n - e0, 0.0)";
    case WEFT__RED_STD: return "sqrt(st.z / max(n - e0, 0.0))";
    case WEFT__RED_LSE: return "select(st.x, log(st.y) + st.x, wfinite(st.x))"; /* +-inf, NaN: the max's */
    case WEFT__RED_NORM2: return "sqrt(st)";
    case WEFT__RED_NORMP: return "pow(st, 1.0 / e0)";
    default: return "st";
  }
}

weft_status weft__reduce_webgpu(const char* op, weft__red_kind kind, const weft_iter* it, double param) {
  if (it->ntensors != 2 || it->noutputs != 1)
    return weft__error(WEFT_INTERNAL, "%s: a webgpu reduction takes one input and one output", op);
  weft_dtype out = it->ops[0].dtype;
  bool ints = out == WEFT_INT32;
  weft__webgpu_reduce r = {0};
  static const char* keys[] = {"sum", "mean", "prod", "amax", "amin", "all", "any", "var", "std", "lse",
                               "norm0", "norm1", "norm2", "norminf", "normninf", "normp"};
  use(&r, keys[kind], member_of(kind, ints), ints ? WEFT_INT32 : WEFT_FLOAT32);
  r.row_expr[0] = row_expr_of(kind);
  from_iter(&r, it);
  /* var/std's correction, norm's p: e0 */
  r.nextra = 1;
  r.extra[0] = weft__webgpu_bits(param, WEFT_FLOAT32);
  /* an empty reduced dim leaves count 0: the identity is written (sum 0, mean nan) */
  return weft__webgpu_reduce_run(op, &r);
}

/* ---- softmax and layer norm over whole tensors ---- */

/* the dims of a tensor shaped `sizes`: those in `mask` reduced, the others
 * kept, fastest first; slot[d] is dim d's place in its list */
typedef struct {
  int ndim;
  uint32_t mask;
  int slot[WEFT_MAX_DIMS];
} dimmap;

static dimmap split_dims(weft__webgpu_reduce* r, const int64_t* sizes, int ndim, uint32_t mask) {
  dimmap m = {ndim, mask, {0}};
  r->rows = r->count = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    bool red = mask >> d & 1;
    m.slot[d] = red ? r->nred++ : r->nkept++;
    (red ? r->red : r->kept)[m.slot[d]] = sizes[d];
    *(red ? &r->count : &r->rows) *= sizes[d];
  }
  return m;
}

/* operand t with element strides st over the dims of the map */
static void add_view(weft__webgpu_reduce* r, const dimmap* m, const weft_tensor* t, const int64_t* st,
                     weft__webgpu_red_role role) {
  int k = r->nops;
  operand(r, t, role);
  for (int d = 0; d < m->ndim; d++) (m->mask >> d & 1 ? r->rstride : r->kstride)[k][m->slot[d]] = st[d];
}

/* t (shaped as the map's tensor, or its trailing dims) read with stride 0 on
 * the dims where keep says so (a weight over the normalized dims, a row
 * statistic over them) */
static void add_broadcast(weft__webgpu_reduce* r, const dimmap* m, const weft_tensor* t, uint32_t zero,
                          weft__webgpu_red_role role) {
  int64_t st[WEFT_MAX_DIMS];
  for (int d = 0; d < m->ndim; d++) {
    int td = d - (m->ndim - t->ndim);
    st[d] = (zero >> d & 1) || td < 0 ? 0 : t->strides[td];
  }
  add_view(r, m, t, st, role);
}

weft_status weft__softmax_webgpu(bool log, const weft_tensor* in, weft_tensor* out, int64_t dim) {
  weft__webgpu_reduce r = {0};
  const char* op = log ? "log_softmax" : "softmax";
  use(&r, op, &M_LSE, WEFT_FLOAT32);
  /* a row whose max is not finite is NaN throughout, as exp(x - max) makes it on the cpu */
  r.elem_expr = log ? "select(nanv(), a0 - st.x - log(st.y), wfinite(st.x))"
                    : "select(nanv(), exp(a0 - st.x) / st.y, wfinite(st.x))";
  dimmap m = split_dims(&r, in->sizes, in->ndim, in->ndim ? 1u << dim : 0u);
  add_view(&r, &m, in, in->strides, WEFT_WEBGPU_RED_IN);
  add_view(&r, &m, out, out->strides, WEFT_WEBGPU_RED_ELEM_OUT);
  return weft__webgpu_reduce_run(op, &r);
}

static uint32_t trailing(int ndim, int64_t nn) {
  uint32_t mask = 0;
  for (int d = (int)(ndim - nn); d < ndim; d++) mask |= 1u << d;
  return mask;
}

/* rows over x's normalized dims (norm): x and the weight (when given) as inputs a0, a1, eps as e0 */
static dimmap norm_rows(weft__webgpu_reduce* r, const weft_tensor* x, const weft_tensor* w, uint32_t norm, double eps) {
  r->nextra = 1;
  r->extra[0] = weft__webgpu_bits(eps, WEFT_FLOAT32);
  dimmap m = split_dims(r, x->sizes, x->ndim, norm);
  add_view(r, &m, x, x->strides, WEFT_WEBGPU_RED_IN);
  if (w) add_broadcast(r, &m, w, ~norm, WEFT_WEBGPU_RED_IN);
  return m;
}

/* out: y, mean, rstd; x contiguous */
weft_status weft__layer_norm_webgpu(const weft_tensor* x, const weft_tensor* w, const weft_tensor* b, int64_t nn,
                                    double eps, weft_tensor* const* out) {
  static const char* names[4] = {"layer_norm", "layer_norm_w", "layer_norm_b", "layer_norm_wb"};
  static const char* elems[4] = {"(a0 - st.y) * inverseSqrt(st.z / n + e0)",
                                 "(a0 - st.y) * inverseSqrt(st.z / n + e0) * a1",
                                 "(a0 - st.y) * inverseSqrt(st.z / n + e0) + a1",
                                 "(a0 - st.y) * inverseSqrt(st.z / n + e0) * a1 + a2"};
  int variant = (w ? 1 : 0) | (b ? 2 : 0);
  weft__webgpu_reduce r = {0};
  use(&r, names[variant], &M_WELFORD, WEFT_FLOAT32);
  r.elem_expr = elems[variant];
  r.row_expr[0] = "st.y";
  r.row_expr[1] = "inverseSqrt(st.z / n + e0)";
  uint32_t norm = trailing(x->ndim, nn);
  dimmap m = norm_rows(&r, x, w, norm, eps);
  if (b) add_broadcast(&r, &m, b, ~norm, WEFT_WEBGPU_RED_IN);
  add_view(&r, &m, out[0], out[0]->strides, WEFT_WEBGPU_RED_ELEM_OUT);
  add_broadcast(&r, &m, out[1], norm, WEFT_WEBGPU_RED_ROW_OUT);
  add_broadcast(&r, &m, out[2], norm, WEFT_WEBGPU_RED_ROW_OUT);
  return weft__webgpu_reduce_run("native_layer_norm", &r);
}

/* a backward pass's rows (the dims not in mask): the output's gradient and the input as a0, a1 */
static dimmap grad_rows(weft__webgpu_reduce* r, const weft_tensor* gy, const weft_tensor* x, uint32_t mask) {
  dimmap m = split_dims(r, x->sizes, x->ndim, mask);
  add_view(r, &m, gy, gy->strides, WEFT_WEBGPU_RED_IN);
  add_view(r, &m, x, x->strides, WEFT_WEBGPU_RED_IN);
  return m;
}

/* dx: rstd * (g w - mean(g w) - xhat mean(g w xhat)) along each row */
static weft_status ln_dx(const weft_tensor* gy, const weft_tensor* x, const weft_tensor* mean, const weft_tensor* rstd,
                         const weft_tensor* w, uint32_t norm, weft_tensor* dx) {
  weft__webgpu_reduce r = {0};
  static const member with_w = {"vec2<f32>", "vec2<f32>(0.0)", "vec2<f32>(a0 * a2, a0 * a2 * (a1 - a3) * a4)",
                                "return a + b;", 2};
  static const member no_w = {"vec2<f32>", "vec2<f32>(0.0)", "vec2<f32>(a0, a0 * (a1 - a2) * a3)", "return a + b;",
                              2};
  use(&r, w ? "layer_norm_dx_w" : "layer_norm_dx", w ? &with_w : &no_w, WEFT_FLOAT32);
  r.elem_expr = w ? "a4 * (a0 * a2 - st.x / n - (a1 - a3) * a4 * st.y / n)"
                  : "a3 * (a0 - st.x / n - (a1 - a2) * a3 * st.y / n)";
  dimmap m = grad_rows(&r, gy, x, norm);
  if (w) add_broadcast(&r, &m, w, ~norm, WEFT_WEBGPU_RED_IN);
  add_broadcast(&r, &m, mean, norm, WEFT_WEBGPU_RED_IN);
  add_broadcast(&r, &m, rstd, norm, WEFT_WEBGPU_RED_IN);
  add_view(&r, &m, dx, dx->strides, WEFT_WEBGPU_RED_ELEM_OUT);
  return weft__webgpu_reduce_run("native_layer_norm_backward", &r);
}

/* dw = sum over rows of g xhat, db = sum of g: the rows are reduced here */
static weft_status ln_dwb(const weft_tensor* gy, const weft_tensor* x, const weft_tensor* mean,
                          const weft_tensor* rstd, uint32_t norm, weft_tensor* dw, weft_tensor* db) {
  weft__webgpu_reduce r = {0};
  static const member m_dwb = {"vec2<f32>", "vec2<f32>(0.0)", "vec2<f32>(a0 * (a1 - a2) * a3, a0)", "return a + b;",
                               2};
  use(&r, "layer_norm_dwb", &m_dwb, WEFT_FLOAT32);
  r.row_expr[0] = "st.x";
  r.row_expr[1] = "st.y";
  uint32_t rowdims = ~norm & ((1u << x->ndim) - 1u);
  dimmap m = grad_rows(&r, gy, x, rowdims);
  add_broadcast(&r, &m, mean, norm, WEFT_WEBGPU_RED_IN);
  add_broadcast(&r, &m, rstd, norm, WEFT_WEBGPU_RED_IN);
  add_broadcast(&r, &m, dw, rowdims, WEFT_WEBGPU_RED_ROW_OUT);
  add_broadcast(&r, &m, db, rowdims, WEFT_WEBGPU_RED_ROW_OUT);
  return weft__webgpu_reduce_run("native_layer_norm_backward", &r);
}

/* out: dx, dw, db as the output mask asked (NULL where not); gy, x contiguous */
weft_status weft__layer_norm_backward_webgpu(const weft_tensor* gy, const weft_tensor* x, int64_t nn,
                                             const weft_tensor* mean, const weft_tensor* rstd, const weft_tensor* w,
                                             weft_tensor* const* out) {
  uint32_t norm = trailing(x->ndim, nn);
  weft_status s = out[0] ? ln_dx(gy, x, mean, rstd, w, norm, out[0]) : WEFT_OK;
  if (s != WEFT_OK || (!out[1] && !out[2])) return s;
  /* both sums come from one pass: a scratch tensor stands in for the one not asked for */
  const weft_tensor* like = out[1] ? out[1] : out[2];
  weft_tensor* scratch = weft__tensor_alloc("native_layer_norm_backward", like->sizes, like->strides, like->ndim,
                                            like->dtype, like->device);
  if (!scratch) return weft_last_status();
  s = ln_dwb(gy, x, mean, rstd, norm, out[1] ? out[1] : scratch, out[2] ? out[2] : scratch);
  weft_tensor_release(scratch);
  return s;
}

/* ---- rms_norm (the fused op and its backward) ---- */

/* out: y, rstd */
weft_status weft__rms_norm_webgpu(const weft_tensor* x, const weft_tensor* w, int64_t nn, double eps,
                                  weft_tensor* const* out) {
  static const member sq = {"f32", "0.0", "a0 * a0", "return a + b;", 1};
  weft__webgpu_reduce r = {0};
  use(&r, w ? "rms_norm_w" : "rms_norm", &sq, WEFT_FLOAT32);
  r.elem_expr = w ? "a0 * inverseSqrt(st / n + e0) * a1" : "a0 * inverseSqrt(st / n + e0)";
  r.row_expr[0] = "inverseSqrt(st / n + e0)";
  uint32_t norm = trailing(x->ndim, nn);
  dimmap m = norm_rows(&r, x, w, norm, eps);
  add_view(&r, &m, out[0], out[0]->strides, WEFT_WEBGPU_RED_ELEM_OUT);
  add_broadcast(&r, &m, out[1], norm, WEFT_WEBGPU_RED_ROW_OUT);
  return weft__webgpu_reduce_run("rms_norm", &r);
}

/* out: dx, dw (NULL where not asked); dx = rstd (g w - x rstd^2 mean(g w x)), dw = sum over rows of g x rstd */
weft_status weft__rms_norm_backward_webgpu(const weft_tensor* gy, const weft_tensor* x, int64_t nn,
                                           const weft_tensor* rstd, const weft_tensor* w, weft_tensor* const* out) {
  uint32_t norm = trailing(x->ndim, nn);
  weft_status s = WEFT_OK;
  if (out[0]) {
    static const member with_w = {"f32", "0.0", "a0 * a2 * a1", "return a + b;", 1};
    static const member no_w = {"f32", "0.0", "a0 * a1", "return a + b;", 1};
    weft__webgpu_reduce r = {0};
    use(&r, w ? "rms_norm_dx_w" : "rms_norm_dx", w ? &with_w : &no_w, WEFT_FLOAT32);
    r.elem_expr = w ? "a3 * (a0 * a2 - a1 * a3 * a3 * st / n)" : "a2 * (a0 - a1 * a2 * a2 * st / n)";
    dimmap m = grad_rows(&r, gy, x, norm);
    if (w) add_broadcast(&r, &m, w, ~norm, WEFT_WEBGPU_RED_IN);
    add_broadcast(&r, &m, rstd, norm, WEFT_WEBGPU_RED_IN);
    add_view(&r, &m, out[0], out[0]->strides, WEFT_WEBGPU_RED_ELEM_OUT);
    s = weft__webgpu_reduce_run("_rms_norm_backward", &r);
  }
  if (s != WEFT_OK || !out[1]) return s;
  static const member dw = {"f32", "0.0", "a0 * a1 * a2", "return a + b;", 1};
  weft__webgpu_reduce r = {0};
  use(&r, "rms_norm_dw", &dw, WEFT_FLOAT32);
  r.row_expr[0] = "st";
  uint32_t rowdims = ~norm & ((1u << x->ndim) - 1u);
  dimmap m = grad_rows(&r, gy, x, rowdims);
  add_broadcast(&r, &m, rstd, norm, WEFT_WEBGPU_RED_IN);
  add_broadcast(&r, &m, out[1], rowdims, WEFT_WEBGPU_RED_ROW_OUT);
  return weft__webgpu_reduce_run("_rms_norm_backward", &r);
}

/* ---- batch norm: rows are the channels (dim 1), reduced over the batch and the spatial dims ---- */

/* a per-channel 1-D tensor seen over x's dims */
static void add_channel(weft__webgpu_reduce* r, const dimmap* m, const weft_tensor* t, weft__webgpu_red_role role) {
  int64_t st[WEFT_MAX_DIMS] = {0};
  st[1] = t->strides[0];
  add_view(r, m, t, st, role);
}

static uint32_t not_channel(int ndim) { return ((1u << ndim) - 1u) & ~2u; }

/* ones / zeros for an absent weight / bias: one apply program for all */
static weft_tensor* filled(const weft_tensor* x, double v) {
  int64_t c = x->sizes[1];
  return weft_full(&c, 1, v, x->dtype, WEFT_DEVICE_WEBGPU);
}

/* y = (x - mean) * invstd * w + b per channel; eval: invstd from the running variance */
static weft_status bn_apply(const weft_tensor* x, const weft_tensor* mean, const weft_tensor* scale,
                            const weft_tensor* w, const weft_tensor* b, bool from_var, double eps, weft_tensor* y) {
  weft__webgpu_reduce r = {0};
  static const member none = {"f32", "0.0", NULL, "return a;", 1};
  use(&r, from_var ? "bn_apply_eval" : "bn_apply", &none, WEFT_FLOAT32);
  r.elem_expr = from_var ? "(a0 - a1) * inverseSqrt(a2 + e0) * a3 + a4" : "(a0 - a1) * a2 * a3 + a4";
  r.nextra = 1;
  r.extra[0] = weft__webgpu_bits(eps, WEFT_FLOAT32);
  dimmap m = split_dims(&r, x->sizes, x->ndim, not_channel(x->ndim));
  add_view(&r, &m, x, x->strides, WEFT_WEBGPU_RED_IN);
  add_channel(&r, &m, mean, WEFT_WEBGPU_RED_IN);
  add_channel(&r, &m, scale, WEFT_WEBGPU_RED_IN);
  add_channel(&r, &m, w, WEFT_WEBGPU_RED_IN);
  add_channel(&r, &m, b, WEFT_WEBGPU_RED_IN);
  add_view(&r, &m, y, y->strides, WEFT_WEBGPU_RED_ELEM_OUT);
  return weft__webgpu_reduce_run("native_batch_norm", &r);
}

/* the batch statistics into mean / invstd, and the running ones updated (momentum e1, unbiased variance) */
static weft_status bn_stats(const weft_tensor* x, weft_tensor* rm, weft_tensor* rv, double momentum, double eps,
                            weft_tensor* mean, weft_tensor* invstd) {
  weft__webgpu_reduce r = {0};
  use(&r, rm ? "bn_stats_running" : "bn_stats", &M_WELFORD, WEFT_FLOAT32);
  r.row_expr[0] = "st.y";
  r.row_expr[1] = "inverseSqrt(st.z / n + e0)";
  /* ld3 / ld4: the running statistics' old values (their own bindings, read and written) */
  r.row_expr[2] = "(1.0 - e1) * ld3(o3) + e1 * st.y";
  r.row_expr[3] = "(1.0 - e1) * ld4(o4) + e1 * st.z / (n - 1.0)";
  r.nextra = 2;
  r.extra[0] = weft__webgpu_bits(eps, WEFT_FLOAT32);
  r.extra[1] = weft__webgpu_bits(momentum, WEFT_FLOAT32);
  dimmap m = split_dims(&r, x->sizes, x->ndim, not_channel(x->ndim));
  add_view(&r, &m, x, x->strides, WEFT_WEBGPU_RED_IN);
  add_channel(&r, &m, mean, WEFT_WEBGPU_RED_ROW_OUT);
  add_channel(&r, &m, invstd, WEFT_WEBGPU_RED_ROW_OUT);
  if (rm) {
    add_channel(&r, &m, rm, WEFT_WEBGPU_RED_ROW_OUT);
    add_channel(&r, &m, rv, WEFT_WEBGPU_RED_ROW_OUT);
  }
  return weft__webgpu_reduce_run("native_batch_norm", &r);
}

weft_status weft__batch_norm_webgpu(const weft_tensor* x, const weft_tensor* w, const weft_tensor* b,
                                    weft_tensor* rm, weft_tensor* rv, bool training, double momentum, double eps,
                                    weft_tensor* const* out) {
  if (training && (!rm) != (!rv))
    return weft__error(WEFT_NOT_IMPLEMENTED, "native_batch_norm: on the webgpu device, running_mean and running_var "
                                             "are given together or not at all");
  weft_tensor* ones = w ? NULL : filled(x, 1.0);
  weft_tensor* zeros = b ? NULL : filled(x, 0.0);
  weft_status s = (w || ones) && (b || zeros) ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && training) s = bn_stats(x, rm, rv, momentum, eps, out[1], out[2]);
  if (s == WEFT_OK)
    s = bn_apply(x, training ? out[1] : rm, training ? out[2] : rv, w ? w : ones, b ? b : zeros, !training, eps,
                 out[0]);
  weft_tensor_release(ones);
  weft_tensor_release(zeros);
  return s;
}

/* out: dx, dw, db as asked. mean / s: the saved mean and invstd (train), or the running mean and variance (eval) */
weft_status weft__batch_norm_backward_webgpu(const weft_tensor* gy, const weft_tensor* x, const weft_tensor* w,
                                             const weft_tensor* mean, const weft_tensor* s, bool train, double eps,
                                             weft_tensor* const* out) {
  uint32_t red = not_channel(x->ndim);
  weft_tensor* ones = w ? NULL : filled(x, 1.0);
  if (!w && !ones) return weft_last_status();
  weft_status st = WEFT_OK;
  if (out[0]) {
    static const member sums = {"vec2<f32>", "vec2<f32>(0.0)", "vec2<f32>(a0, a0 * (a1 - a2))", "return a + b;", 2};
    static const member none = {"f32", "0.0", NULL, "return a;", 1};
    weft__webgpu_reduce r = {0};
    use(&r, train ? "bn_dx" : "bn_dx_eval", train ? &sums : &none, WEFT_FLOAT32);
    r.elem_expr = train ? "(a0 - st.x / n - (a1 - a2) * a3 * a3 * st.y / n) * a3 * a4"
                        : "a0 * inverseSqrt(a3 + e0) * a4";
    r.nextra = 1;
    r.extra[0] = weft__webgpu_bits(eps, WEFT_FLOAT32);
    dimmap m = split_dims(&r, x->sizes, x->ndim, red);
    add_view(&r, &m, gy, gy->strides, WEFT_WEBGPU_RED_IN);
    add_view(&r, &m, x, x->strides, WEFT_WEBGPU_RED_IN);
    add_channel(&r, &m, mean, WEFT_WEBGPU_RED_IN);
    add_channel(&r, &m, s, WEFT_WEBGPU_RED_IN);
    add_channel(&r, &m, w ? w : ones, WEFT_WEBGPU_RED_IN);
    add_view(&r, &m, out[0], out[0]->strides, WEFT_WEBGPU_RED_ELEM_OUT);
    st = weft__webgpu_reduce_run("native_batch_norm_backward", &r);
  }
  weft_tensor_release(ones);
  if (st != WEFT_OK || (!out[1] && !out[2])) return st;
  static const member tr = {"vec2<f32>", "vec2<f32>(0.0)", "vec2<f32>(a0 * (a1 - a2) * a3, a0)", "return a + b;", 2};
  static const member ev = {"vec2<f32>", "vec2<f32>(0.0)", "vec2<f32>(a0 * (a1 - a2) * inverseSqrt(a3 + e0), a0)",
                            "return a + b;", 2};
  weft__webgpu_reduce r = {0};
  use(&r, train ? "bn_dwb" : "bn_dwb_eval", train ? &tr : &ev, WEFT_FLOAT32);
  r.row_expr[0] = "st.x";
  r.row_expr[1] = "st.y";
  r.nextra = 1;
  r.extra[0] = weft__webgpu_bits(eps, WEFT_FLOAT32);
  const weft_tensor* like = out[1] ? out[1] : out[2];
  weft_tensor* scratch = weft__tensor_alloc("native_batch_norm_backward", like->sizes, like->strides, like->ndim,
                                            like->dtype, like->device);
  if (!scratch) return weft_last_status();
  dimmap m = split_dims(&r, x->sizes, x->ndim, red);
  add_view(&r, &m, gy, gy->strides, WEFT_WEBGPU_RED_IN);
  add_view(&r, &m, x, x->strides, WEFT_WEBGPU_RED_IN);
  add_channel(&r, &m, mean, WEFT_WEBGPU_RED_IN);
  add_channel(&r, &m, s, WEFT_WEBGPU_RED_IN);
  add_channel(&r, &m, out[1] ? out[1] : scratch, WEFT_WEBGPU_RED_ROW_OUT);
  add_channel(&r, &m, out[2] ? out[2] : scratch, WEFT_WEBGPU_RED_ROW_OUT);
  st = weft__webgpu_reduce_run("native_batch_norm_backward", &r);
  weft_tensor_release(scratch);
  return st;
}

/* ---- group norm: x seen as [N, G, C / G, spatial...], rows (image, group) ---- */

typedef struct {
  int nd;
  int64_t sizes[WEFT_MAX_DIMS];
  int64_t d; /* channels per group */
} gn_shape;

static weft_status gn_shape_of(const weft_tensor* x, int64_t group, gn_shape* g) {
  if (x->ndim + 1 > WEFT_MAX_DIMS)
    return weft__error(WEFT_NOT_IMPLEMENTED, "native_group_norm: a %d-dim input is too many dims for the webgpu "
                                             "device", x->ndim);
  g->nd = x->ndim + 1;
  g->d = x->sizes[1] / group;
  g->sizes[0] = x->sizes[0];
  g->sizes[1] = group;
  g->sizes[2] = g->d;
  for (int i = 2; i < x->ndim; i++) g->sizes[i + 1] = x->sizes[i];
  return WEFT_OK;
}

/* the strides of an input-shaped tensor, a per-channel vector, an (image, group) statistic */
static void gn_add_like(weft__webgpu_reduce* r, const dimmap* m, const gn_shape* g, const weft_tensor* t,
                        weft__webgpu_red_role role) {
  int64_t st[WEFT_MAX_DIMS] = {t->strides[0], t->strides[1] * g->d, t->strides[1]};
  for (int i = 2; i < t->ndim; i++) st[i + 1] = t->strides[i];
  add_view(r, m, t, st, role);
}
static void gn_add_channel(weft__webgpu_reduce* r, const dimmap* m, const gn_shape* g, const weft_tensor* t,
                           weft__webgpu_red_role role) {
  int64_t st[WEFT_MAX_DIMS] = {0, t->strides[0] * g->d, t->strides[0]};
  add_view(r, m, t, st, role);
}
static void gn_add_stat(weft__webgpu_reduce* r, const dimmap* m, const weft_tensor* t, weft__webgpu_red_role role) {
  int64_t st[WEFT_MAX_DIMS] = {t->strides[0], t->strides[1]};
  add_view(r, m, t, st, role);
}

/* out: y, mean, rstd ([N, group]) */
weft_status weft__group_norm_webgpu(const weft_tensor* x, const weft_tensor* w, const weft_tensor* b, int64_t group,
                                    double eps, weft_tensor* const* out) {
  gn_shape g;
  weft_status s = gn_shape_of(x, group, &g);
  if (s != WEFT_OK) return s;
  weft_tensor* ones = w ? NULL : filled(x, 1.0);
  weft_tensor* zeros = b ? NULL : filled(x, 0.0);
  if ((!w && !ones) || (!b && !zeros)) s = weft_last_status();
  weft__webgpu_reduce r = {0};
  use(&r, "group_norm", &M_WELFORD, WEFT_FLOAT32);
  r.elem_expr = "(a0 - st.y) * inverseSqrt(st.z / n + e0) * a1 + a2";
  r.row_expr[0] = "st.y";
  r.row_expr[1] = "inverseSqrt(st.z / n + e0)";
  r.nextra = 1;
  r.extra[0] = weft__webgpu_bits(eps, WEFT_FLOAT32);
  dimmap m = split_dims(&r, g.sizes, g.nd, ((1u << g.nd) - 1u) & ~3u);
  gn_add_like(&r, &m, &g, x, WEFT_WEBGPU_RED_IN);
  gn_add_channel(&r, &m, &g, w ? w : ones, WEFT_WEBGPU_RED_IN);
  gn_add_channel(&r, &m, &g, b ? b : zeros, WEFT_WEBGPU_RED_IN);
  gn_add_like(&r, &m, &g, out[0], WEFT_WEBGPU_RED_ELEM_OUT);
  gn_add_stat(&r, &m, out[1], WEFT_WEBGPU_RED_ROW_OUT);
  gn_add_stat(&r, &m, out[2], WEFT_WEBGPU_RED_ROW_OUT);
  if (s == WEFT_OK) s = weft__webgpu_reduce_run("native_group_norm", &r);
  weft_tensor_release(ones);
  weft_tensor_release(zeros);
  return s;
}

/* out: dx, dw, db as asked; the layer norm formulas with a per-channel weight */
weft_status weft__group_norm_backward_webgpu(const weft_tensor* gy, const weft_tensor* x, const weft_tensor* mean,
                                             const weft_tensor* rstd, const weft_tensor* w, int64_t group,
                                             weft_tensor* const* out) {
  gn_shape g;
  weft_status s = gn_shape_of(x, group, &g);
  if (s != WEFT_OK) return s;
  if (out[0]) {
    weft_tensor* ones = w ? NULL : filled(x, 1.0);
    if (!w && !ones) return weft_last_status();
    static const member sums = {"vec2<f32>", "vec2<f32>(0.0)", "vec2<f32>(a0 * a2, a0 * a2 * (a1 - a3) * a4)",
                                "return a + b;", 2};
    weft__webgpu_reduce r = {0};
    use(&r, "group_norm_dx", &sums, WEFT_FLOAT32);
    r.elem_expr = "a4 * (a0 * a2 - st.x / n - (a1 - a3) * a4 * st.y / n)";
    dimmap m = split_dims(&r, g.sizes, g.nd, ((1u << g.nd) - 1u) & ~3u);
    gn_add_like(&r, &m, &g, gy, WEFT_WEBGPU_RED_IN);
    gn_add_like(&r, &m, &g, x, WEFT_WEBGPU_RED_IN);
    gn_add_channel(&r, &m, &g, w ? w : ones, WEFT_WEBGPU_RED_IN);
    gn_add_stat(&r, &m, mean, WEFT_WEBGPU_RED_IN);
    gn_add_stat(&r, &m, rstd, WEFT_WEBGPU_RED_IN);
    gn_add_like(&r, &m, &g, out[0], WEFT_WEBGPU_RED_ELEM_OUT);
    s = weft__webgpu_reduce_run("native_group_norm_backward", &r);
    weft_tensor_release(ones);
  }
  if (s != WEFT_OK || (!out[1] && !out[2])) return s;
  static const member dwb = {"vec2<f32>", "vec2<f32>(0.0)", "vec2<f32>(a0 * (a1 - a2) * a3, a0)", "return a + b;", 2};
  weft__webgpu_reduce r = {0};
  use(&r, "group_norm_dwb", &dwb, WEFT_FLOAT32);
  r.row_expr[0] = "st.x";
  r.row_expr[1] = "st.y";
  const weft_tensor* like = out[1] ? out[1] : out[2];
  weft_tensor* scratch = weft__tensor_alloc("native_group_norm_backward", like->sizes, like->strides, like->ndim,
                                            like->dtype, like->device);
  if (!scratch) return weft_last_status();
  dimmap m = split_dims(&r, g.sizes, g.nd, ((1u << g.nd) - 1u) & ~6u);
  gn_add_like(&r, &m, &g, gy, WEFT_WEBGPU_RED_IN);
  gn_add_like(&r, &m, &g, x, WEFT_WEBGPU_RED_IN);
  gn_add_stat(&r, &m, mean, WEFT_WEBGPU_RED_IN);
  gn_add_stat(&r, &m, rstd, WEFT_WEBGPU_RED_IN);
  gn_add_channel(&r, &m, &g, out[1] ? out[1] : scratch, WEFT_WEBGPU_RED_ROW_OUT);
  gn_add_channel(&r, &m, &g, out[2] ? out[2] : scratch, WEFT_WEBGPU_RED_ROW_OUT);
  s = weft__webgpu_reduce_run("native_group_norm_backward", &r);
  weft_tensor_release(scratch);
  return s;
}
