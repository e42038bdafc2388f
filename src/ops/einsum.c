/* einsum (issue 25): PyTorch 1.13's torch.einsum as a CompositeImplicitAutograd
 * kernel, so its gradient is that of the view ops, sum, mul and bmm it is
 * made of.
 *
 * As in ATen's einsum, every operand is first aligned to one layout: the
 * output's dims (the ellipsis where the output has it) followed by the
 * contracted ones. Repeated labels of an operand become a diagonal view,
 * missing labels size-1 dims, and a permute orders them; size-1 dims then
 * broadcast. A plan over these aligned shapes follows: dims only one operand
 * has are summed out first, then operands are contracted pairwise (left to
 * right, the running result on the left; or along `path`), each pair as one bmm of [batch, left-only, summed]
 * by [batch, summed, right-only] (a plain broadcasting mul when the pair sums
 * nothing). A dim is summed in the pair after which no other operand has it.
 * The plan is built on shapes alone, so explain() can report it (which
 * permutes, which bmm shapes) before anything runs. */
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "iter/iter_internal.h"
#include "ops/ops.h"
#include "weft/parallel.h"

#define NLABELS 52
#define ELLIPSIS 255
#define MAXD WEFT_MAX_DIMS

typedef const weft_tensor* T;

/* ---- the equation ---- */

typedef struct {
  int64_t n;          /* operands */
  uint8_t* lab;       /* every operand's labels in a row (ELLIPSIS for "...") */
  int64_t* start;     /* operand i's labels: lab[start[i] .. start[i + 1]) */
  int64_t perm_of[NLABELS]; /* label -> its dim in the aligned layout, -1 if unused */
  int64_t ell_dims;   /* dims the widest ellipsis covers */
  int64_t ell_index;  /* the first of them in the aligned layout */
  int64_t out_size;   /* the output's dims: aligned dims [0, out_size) */
  int64_t ndim;       /* aligned dims in all */
} equation;

static bool is_subscript(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
/* PyTorch's order: upper case first, so implicit outputs sort alike */
static uint8_t to_label(unsigned char c) { return (uint8_t)(c <= 'Z' ? c - 'A' : c - 'a' + 26); }
static char to_char(uint8_t l) { return (char)(l < 26 ? 'A' + l : 'a' + l - 26); }

/* "..." at s[*i]; leaves *i on its last dot */
static bool take_ellipsis(const char* s, size_t len, size_t* i) {
  if (*i + 2 >= len || s[*i + 1] != '.' || s[*i + 2] != '.') return false;
  *i += 2;
  return true;
}

static weft_status parse_inputs(const char* eq, size_t lhs_len, equation* e) {
  int64_t op = 0, k = 0;
  bool ell = false;
  e->start[0] = 0;
  for (size_t i = 0; i < lhs_len; i++) {
    unsigned char c = (unsigned char)eq[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (ell)
        return weft__error(WEFT_INVALID_ARGUMENT,
                           "einsum(): found '.' for operand %lld for which an ellipsis was already found",
                           (long long)op);
      if (!take_ellipsis(eq, lhs_len, &i))
        return weft__error(WEFT_INVALID_ARGUMENT, "einsum(): found '.' for operand %lld that is not part of any ellipsis",
                           (long long)op);
      e->lab[k++] = ELLIPSIS;
      ell = true;
    } else if (c == ',') {
      e->start[++op] = k;
      if (op >= e->n)
        return weft__error(WEFT_INVALID_ARGUMENT, "einsum(): fewer operands were provided than specified in the equation");
      ell = false;
    } else if (is_subscript(c)) {
      e->lab[k++] = to_label(c);
    } else {
      return weft__error(WEFT_INVALID_ARGUMENT,
                         "einsum(): invalid subscript given at index %zu in the equation string, subscripts must be in "
                         "[a-zA-Z]",
                         i);
    }
  }
  if (op != e->n - 1)
    return weft__error(WEFT_INVALID_ARGUMENT, "einsum(): more operands were provided than specified in the equation");
  e->start[e->n] = k;
  return WEFT_OK;
}

/* label counts, the ellipsis width, and each operand's label count against its dims */
static weft_status count_labels(const equation* e, const weft_tensor* const* t, int64_t* count, int64_t* ell_dims) {
  *ell_dims = 0;
  for (int64_t i = 0; i < e->n; i++) {
    int64_t nl = e->start[i + 1] - e->start[i], nd = t[i]->ndim;
    bool has_ell = false;
    for (int64_t k = e->start[i]; k < e->start[i + 1]; k++) {
      if (e->lab[k] == ELLIPSIS) has_ell = true;
      else count[e->lab[k]]++;
    }
    if (has_ell) nl--;
    if (has_ell && nd - nl > *ell_dims) *ell_dims = nd - nl;
    if (has_ell ? nl > nd : nl != nd)
      return weft__error(WEFT_INVALID_ARGUMENT,
                         "einsum(): the number of subscripts in the equation (%lld) %s the number of dimensions (%lld) "
                         "for operand %lld%s",
                         (long long)nl, has_ell ? "is more than" : "does not match", (long long)nd, (long long)i,
                         has_ell ? "" : " and no ellipsis was given");
  }
  return WEFT_OK;
}

/* the explicit output after "->": its labels and ellipsis take the first aligned dims */
static weft_status parse_output(const char* eq, size_t rhs_at, const int64_t* count, equation* e, bool* found_ell) {
  int64_t p = 0;
  size_t len = strlen(eq + rhs_at);
  const char* rhs = eq + rhs_at;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)rhs[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (*found_ell)
        return weft__error(WEFT_INVALID_ARGUMENT,
                           "einsum(): found '.' for output but an ellipsis (...) was already found");
      if (!take_ellipsis(rhs, len, &i))
        return weft__error(WEFT_INVALID_ARGUMENT, "einsum(): found '.' for output that is not part of any ellipsis (...)");
      e->ell_index = p;
      p += e->ell_dims;
      *found_ell = true;
      continue;
    }
    if (!is_subscript(c))
      return weft__error(WEFT_INVALID_ARGUMENT,
                         "einsum(): invalid subscript given at index %zu in the equation string, subscripts must be in "
                         "[a-zA-Z]",
                         rhs_at + i);
    uint8_t l = to_label(c);
    if (count[l] == 0 || e->perm_of[l] != -1)
      return weft__error(WEFT_INVALID_ARGUMENT, "einsum(): output subscript %c %s", c,
                         e->perm_of[l] != -1 ? "appears more than once in the output"
                                             : "does not appear in the equation for any input operand");
    e->perm_of[l] = p++;
  }
  e->out_size = p;
  return WEFT_OK;
}

/* the aligned layout: output dims (explicit, or the ellipsis then the labels
 * used once, in label order), then the ellipsis if the output lacks it, then
 * the other labels */
static weft_status layout(const char* eq, const weft_tensor* const* t, equation* e) {
  int64_t count[NLABELS] = {0};
  const char* arrow = strstr(eq, "->");
  size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
  weft_status st = parse_inputs(eq, lhs_len, e);
  if (st == WEFT_OK) st = count_labels(e, t, count, &e->ell_dims);
  if (st != WEFT_OK) return st;
  for (int l = 0; l < NLABELS; l++) e->perm_of[l] = -1;
  bool found_ell = !arrow;
  e->ell_index = 0;
  if (arrow) {
    st = parse_output(eq, lhs_len + 2, count, e, &found_ell);
    if (st != WEFT_OK) return st;
  } else {
    int64_t p = e->ell_dims;
    for (int l = 0; l < NLABELS; l++)
      if (count[l] == 1) e->perm_of[l] = p++;
    e->out_size = p;
  }
  int64_t p = e->out_size;
  if (!found_ell) e->ell_index = p, p += e->ell_dims;
  for (int l = 0; l < NLABELS; l++)
    if (count[l] > 0 && e->perm_of[l] == -1) e->perm_of[l] = p++;
  e->ndim = p;
  if (p > MAXD)
    return weft__error(WEFT_INVALID_ARGUMENT, "einsum(): the equation spans %lld dimensions, more than weft's %d",
                       (long long)p, MAXD);
  return WEFT_OK;
}

/* ---- aligning the operands ---- */

typedef struct {
  int64_t label_size[NLABELS], ell_size[MAXD];
  int64_t counts[MAXD]; /* operands whose aligned dim d is not 1 */
} sizes_seen;

/* a dim of operand i lands on aligned dim `at` with label size slot *seen;
 * sizes != 1 must agree (1 broadcasts) */
static weft_status see(int64_t size, int64_t* seen, int64_t* counts, int64_t at) {
  if (size == 1) return WEFT_OK;
  if (*seen != 1 && *seen != size) return WEFT_SHAPE_ERROR;
  *seen = size;
  counts[at]++;
  return WEFT_OK;
}

/* diagonal of dims a < b placed at a (PyTorch's diagonal(0, a, b).movedim(-1, a)) */
static weft_tensor* diagonal_at(weft_tensor* x, int64_t a, int64_t b) {
  weft_tensor* d = weft_diagonal(x, 0, a, b);
  weft_tensor_release(x);
  if (!d) return NULL;
  int64_t src = -1;
  weft_tensor* m = weft_movedim(d, &src, &a, 1);
  weft_tensor_release(d);
  return m;
}

/* operand i's ellipsis (covering `covered` of its dims): its dims are the last of the ellipsis's aligned dims */
static weft_status align_ellipsis(const equation* e, T x, int64_t i, int64_t covered, int64_t* dim, int64_t* perm,
                                  sizes_seen* s) {
  for (int64_t j = e->ell_dims - covered; j < e->ell_dims; j++) {
    int64_t size = x->sizes[*dim];
    if (see(size, &s->ell_size[j], s->counts, e->ell_index + j) != WEFT_OK)
      return weft__error(WEFT_SHAPE_ERROR,
                         "einsum(): dimension %lld covered by ellipsis in operand %lldhas size %lld which does not "
                         "broadcast with previously seen ellipsis with size %lld for the respective dimension",
                         (long long)*dim, (long long)i, (long long)size, (long long)s->ell_size[j]);
    perm[e->ell_index + j] = (*dim)++;
  }
  return WEFT_OK;
}

/* one label of operand i at its dim *dim: a new aligned dim, or a repeat taken as a diagonal */
static weft_status align_label(const equation* e, weft_tensor** x, int64_t i, uint8_t l, int64_t* dim, int64_t* perm,
                               sizes_seen* s, int64_t* diagonals) {
  int64_t at = e->perm_of[l], size = (*x)->sizes[*dim];
  if (perm[at] == -1) {
    if (see(size, &s->label_size[l], s->counts, at) != WEFT_OK)
      return weft__error(WEFT_SHAPE_ERROR,
                         "einsum(): subscript %c has size %lld for operand %lld which does not broadcast with "
                         "previously seen size %lld",
                         to_char(l), (long long)size, (long long)i, (long long)s->label_size[l]);
    perm[at] = (*dim)++;
    return WEFT_OK;
  }
  int64_t prev = (*x)->sizes[perm[at]];
  if (size != prev)
    return weft__error(WEFT_SHAPE_ERROR,
                       "einsum(): subscript %c is repeated for operand %lld but the sizes don't match, %lld != %lld",
                       to_char(l), (long long)i, (long long)size, (long long)prev);
  *x = diagonal_at(*x, perm[at], *dim);
  ++*diagonals;
  return *x ? WEFT_OK : weft_last_status();
}

/* operand i aligned: diagonals, unsqueezed missing dims, permuted (perm:
 * the permutation applied, over the unsqueezed operand) */
static weft_tensor* align(const equation* e, T x0, int64_t i, sizes_seen* s, int64_t* perm, int64_t* diagonals) {
  weft_tensor* x = weft_tensor_retain((weft_tensor*)x0);
  int64_t dim = 0, covered = x0->ndim - (e->start[i + 1] - e->start[i] - 1);
  weft_status st = WEFT_OK;
  for (int64_t d = 0; d < e->ndim; d++) perm[d] = -1;
  *diagonals = 0;
  for (int64_t k = e->start[i]; k < e->start[i + 1] && st == WEFT_OK; k++)
    st = e->lab[k] == ELLIPSIS ? align_ellipsis(e, x, i, covered, &dim, perm, s)
                               : align_label(e, &x, i, e->lab[k], &dim, perm, s, diagonals);
  for (int64_t d = 0; d < e->ndim && st == WEFT_OK; d++) {
    if (perm[d] != -1) continue;
    weft_tensor* u = weft_unsqueeze(x, -1);
    weft_tensor_release(x);
    x = u;
    perm[d] = dim++;
    if (!x) st = weft_last_status();
  }
  weft_tensor* r = st == WEFT_OK ? weft_permute(x, perm, e->ndim) : NULL;
  weft_tensor_release(x);
  return r;
}

/* ---- the plan, on aligned shapes ---- */

typedef struct {
  bool pair;           /* a bmm (or mul) of slots a and b into slot out; else a sum of slot a */
  int64_t a, b, out;
  bool dims[MAXD];     /* dims summed (by the sum, or inside the bmm) */
  bool keepdim;
} step;

typedef struct {
  int64_t nd, out_size;
  int64_t (*shape)[MAXD]; /* per slot: the n operands, then each pair's result */
  step* steps;
  int64_t nsteps;
} plan;

/* how one pair runs: left [lro, lo, sum] x right [lro, sum, ro] as one bmm,
 * its [B, M, N] result viewed as [lro, lo, sum (as 1), ro] and permuted back */
typedef struct {
  int64_t lperm[MAXD], rperm[MAXD], view[MAXD], back[MAXD], out[MAXD];
  int64_t lshape[3], rshape[3];
  bool mul; /* nothing summed: a broadcasting mul, as sumproduct_pair does */
} pair_layout;

static void layout_pair(int64_t nd, const int64_t* a, const int64_t* b, const bool* sum, pair_layout* p) {
  int64_t lro[MAXD], lo[MAXD], sm[MAXD], ro[MAXD], nlro = 0, nlo = 0, nsm = 0, nro = 0;
  int64_t B = 1, M = 1, K = 1, N = 1;
  for (int64_t d = 0; d < nd; d++) {
    p->out[d] = sum[d] ? 1 : a[d] != 1 ? a[d] : b[d];
    if (sum[d]) sm[nsm++] = d, K *= a[d];
    else if (a[d] != 1 && b[d] != 1) lro[nlro++] = d, B *= a[d];
    else if (b[d] != 1) ro[nro++] = d, N *= b[d];
    else lo[nlo++] = d, M *= a[d];
  }
  int64_t k = 0, order[MAXD];
  memcpy(order, lro, (size_t)nlro * sizeof *order), k += nlro;
  memcpy(order + k, lo, (size_t)nlo * sizeof *order), k += nlo;
  memcpy(order + k, sm, (size_t)nsm * sizeof *order), k += nsm;
  memcpy(order + k, ro, (size_t)nro * sizeof *order);
  memcpy(p->lperm, order, (size_t)nd * sizeof *order); /* ro dims are 1 in a: any place serves */
  memcpy(p->rperm, lro, (size_t)nlro * sizeof *order);
  memcpy(p->rperm + nlro, sm, (size_t)nsm * sizeof *order);
  memcpy(p->rperm + nlro + nsm, lo, (size_t)nlo * sizeof *order); /* lo dims are 1 in b */
  memcpy(p->rperm + nlro + nsm + nlo, ro, (size_t)nro * sizeof *order);
  for (int64_t i = 0; i < nd; i++) p->view[i] = p->out[order[i]], p->back[order[i]] = i;
  p->lshape[0] = B, p->lshape[1] = M, p->lshape[2] = K;
  p->rshape[0] = B, p->rshape[1] = K, p->rshape[2] = N;
  p->mul = nsm == 0;
}

/* sum first the contracted dims only one operand has */
static void plan_presums(plan* p, int64_t n, int64_t* counts) {
  for (int64_t i = 0; i < n; i++) {
    step s = {.a = i, .keepdim = true};
    bool any = false;
    for (int64_t d = p->out_size; d < p->nd; d++) {
      if (p->shape[i][d] == 1 || counts[d] != 1) continue;
      s.dims[d] = any = true;
      p->shape[i][d] = 1;
      counts[d] = 0;
    }
    if (any) p->steps[p->nsteps++] = s;
  }
}

static weft_status pick_pair(const int64_t* path, int64_t k, int64_t m, int64_t* i, int64_t* j) {
  *i = path ? path[2 * k] : 0, *j = path ? path[2 * k + 1] : 1;
  if (*i < 0 || *j < 0 || *i >= m || *j >= m || *i == *j)
    return weft__error(WEFT_INDEX_ERROR, "einsum(): path step %lld contracts operands %lld and %lld of %lld left",
                       (long long)k, (long long)*i, (long long)*j, (long long)m);
  return WEFT_OK;
}

/* the pairs, left to right (or along path): a dim is summed in the pair
 * after which no other operand has it */
static weft_status plan_pairs(plan* p, int64_t n, int64_t* counts, const int64_t* path) {
  int64_t live[64], *list = n <= 64 ? live : malloc((size_t)n * sizeof *list);
  if (!list) return weft__error(WEFT_OUT_OF_MEMORY, "out of memory: einsum");
  for (int64_t i = 0; i < n; i++) list[i] = i;
  weft_status st = WEFT_OK;
  for (int64_t k = 0, m = n; m > 1 && st == WEFT_OK; k++, m--) {
    int64_t i, j;
    if ((st = pick_pair(path, k, m, &i, &j)) != WEFT_OK) break;
    step s = {.pair = true, .a = list[i], .b = list[j], .out = n + k};
    const int64_t *a = p->shape[s.a], *b = p->shape[s.b];
    for (int64_t d = p->out_size; d < p->nd; d++)
      if (a[d] != 1 && b[d] != 1 && --counts[d] == 1) s.dims[d] = true, counts[d] = 0;
    pair_layout l;
    layout_pair(p->nd, a, b, s.dims, &l);
    memcpy(p->shape[s.out], l.out, sizeof l.out);
    p->steps[p->nsteps++] = s;
    /* drop both; the result goes first (left to right: it is the next pair's
     * left operand) or, along a path, last (opt_einsum's convention) */
    int64_t hi = i > j ? i : j, lo = i > j ? j : i, at = path ? m - 2 : 0;
    memmove(list + hi, list + hi + 1, (size_t)(m - hi - 1) * sizeof *list);
    memmove(list + lo, list + lo + 1, (size_t)(m - lo - 2) * sizeof *list);
    memmove(list + at + 1, list + at, (size_t)(m - 2 - at) * sizeof *list);
    list[at] = s.out;
  }
  if (list != live) free(list);
  return st;
}

static weft_status make_plan(plan* p, int64_t n, int64_t* counts, const int64_t* path, int64_t path_len) {
  p->nsteps = 0;
  if (path && path_len != 2 * (n - 1))
    return weft__error(WEFT_INVALID_ARGUMENT, "einsum(): path has %lld entries, a pair per contraction of %lld operands needs %lld",
                       (long long)path_len, (long long)n, (long long)(2 * (n - 1)));
  if (n > 1) {
    plan_presums(p, n, counts);
    return plan_pairs(p, n, counts, path);
  }
  step s = {.a = 0, .keepdim = false}; /* one operand: a plain sum over the contracted dims */
  for (int64_t d = p->out_size; d < p->nd; d++) s.dims[d] = true;
  if (p->nd > p->out_size) p->steps[p->nsteps++] = s;
  return WEFT_OK;
}

/* ---- explain: the plan as JSON ---- */

static void put_list(weft__strbuf* b, const char* key, const int64_t* v, int64_t n) {
  weft__strbuf_put(b, "\"%s\":[", key);
  for (int64_t i = 0; i < n; i++) weft__strbuf_put(b, "%s%lld", i ? "," : "", (long long)v[i]);
  weft__strbuf_put(b, "]");
}

static void put_dims(weft__strbuf* b, const bool* dims, int64_t nd) {
  int64_t v[MAXD], k = 0;
  for (int64_t d = 0; d < nd; d++)
    if (dims[d]) v[k++] = d;
  put_list(b, "dims", v, k);
}

static void put_step(weft__strbuf* b, const plan* p, const step* s) {
  if (!s->pair) {
    weft__strbuf_put(b, "{\"step\":\"sum\",\"operand\":%lld,", (long long)s->a);
    put_dims(b, s->dims, p->nd);
    weft__strbuf_put(b, ",\"keepdim\":%s}", s->keepdim ? "true" : "false");
    return;
  }
  pair_layout l;
  layout_pair(p->nd, p->shape[s->a], p->shape[s->b], s->dims, &l);
  weft__strbuf_put(b, "{\"step\":\"%s\",\"operands\":[%lld,%lld],\"result\":%lld,", l.mul ? "mul" : "bmm",
                   (long long)s->a, (long long)s->b, (long long)s->out);
  put_dims(b, s->dims, p->nd);
  if (!l.mul) {
    weft__strbuf_put(b, ",");
    put_list(b, "permuteLeft", l.lperm, p->nd);
    weft__strbuf_put(b, ",");
    put_list(b, "permuteRight", l.rperm, p->nd);
    weft__strbuf_put(b, ",");
    put_list(b, "left", l.lshape, 3);
    weft__strbuf_put(b, ",");
    put_list(b, "right", l.rshape, 3);
  }
  weft__strbuf_put(b, ",");
  put_list(b, "shape", l.out, p->nd);
  weft__strbuf_put(b, "}");
}

/* {"op":"einsum","kind":"einsum","equation","dtype","operands":[{permute,
 * diagonals,shape}],"steps":[...],"shape":[output]} */
static weft_status explain_plan(const char* eq, T x, const plan* p, int64_t n, const int64_t (*perms)[MAXD],
                                const int64_t* diagonals, const int64_t (*aligned)[MAXD]) {
  weft__strbuf b = {0};
  weft__strbuf_put(&b, "{\"op\":\"einsum\",\"kind\":\"einsum\",\"equation\":");
  weft__strbuf_put_json_str(&b, eq);
  weft__strbuf_put(&b, ",\"dtype\":\"%s\",\"operands\":[", weft_dtype_name(x->dtype));
  for (int64_t i = 0; i < n; i++) {
    weft__strbuf_put(&b, "%s{", i ? "," : "");
    put_list(&b, "permute", perms[i], p->nd);
    weft__strbuf_put(&b, ",\"diagonals\":%lld,", (long long)diagonals[i]);
    put_list(&b, "shape", aligned[i], p->nd);
    weft__strbuf_put(&b, "}");
  }
  weft__strbuf_put(&b, "],\"steps\":[");
  for (int64_t k = 0; k < p->nsteps; k++) {
    if (k) weft__strbuf_put(&b, ",");
    put_step(&b, p, &p->steps[k]);
  }
  weft__strbuf_put(&b, "],");
  put_list(&b, "shape", p->shape[n > 1 ? 2 * n - 2 : 0], p->out_size);
  weft__strbuf_put(&b, ",\"threads\":%d}", weft_get_num_threads());
  return weft__explain_record_json(weft__strbuf_finish(&b, "einsum"));
}

/* ---- running the plan ---- */

static weft_tensor* take(weft_tensor* x, weft_tensor* r) {
  weft_tensor_release(x);
  return r;
}

static weft_tensor* run_pair(int64_t nd, T a, T b, const bool* dims) {
  pair_layout l;
  layout_pair(nd, a->sizes, b->sizes, dims, &l);
  if (l.mul) return weft_mul(a, b);
  weft_tensor* x = weft_permute(a, l.lperm, nd);
  if (x) x = take(x, weft_reshape(x, l.lshape, 3));
  weft_tensor* y = weft_permute(b, l.rperm, nd);
  if (y) y = take(y, weft_reshape(y, l.rshape, 3));
  weft_tensor* z = x && y ? weft_bmm(x, y) : NULL;
  weft_tensor_release(x), weft_tensor_release(y);
  if (z) z = take(z, weft_view(z, l.view, nd));
  if (z) z = take(z, weft_permute(z, l.back, nd));
  return z;
}

static weft_tensor* run_step(const plan* p, const step* s, weft_tensor** slot) {
  if (s->pair) return run_pair(p->nd, slot[s->a], slot[s->b], s->dims);
  int64_t dims[MAXD], k = 0;
  for (int64_t d = 0; d < p->nd; d++)
    if (s->dims[d]) dims[k++] = d;
  return weft_sum_dim(slot[s->a], dims, k, s->keepdim, (weft_dtype)-1);
}

/* slot holds 2n - 1 entries, the aligned operands first; steps consume them */
static weft_tensor* run_plan(const plan* p, int64_t n, weft_tensor** slot) {
  for (int64_t k = 0; k < p->nsteps; k++) {
    const step* s = &p->steps[k];
    weft_tensor* r = run_step(p, s, slot);
    if (!r) return NULL;
    if (s->pair) {
      weft_tensor_release(slot[s->a]), weft_tensor_release(slot[s->b]);
      slot[s->a] = slot[s->b] = NULL;
      slot[s->out] = r;
    } else {
      weft_tensor_release(slot[s->a]);
      slot[s->a] = r;
    }
  }
  int64_t last = n > 1 ? 2 * n - 2 : 0;
  weft_tensor* r = slot[last];
  slot[last] = NULL;
  if (n > 1 && p->nd > p->out_size) r = take(r, weft_view(r, r->sizes, p->out_size)); /* the rest are 1 */
  return r;
}

/* ---- the kernel ---- */

typedef struct {
  equation e;
  plan p;
  int64_t (*perm)[MAXD];
  int64_t* diagonals;
  weft_tensor** slot;
} work;

static void work_free(work* w, int64_t n) {
  if (w->slot)
    for (int64_t i = 0; i < 2 * n; i++) weft_tensor_release(w->slot[i]);
  free(w->e.lab), free(w->e.start), free(w->p.shape), free(w->p.steps), free(w->perm), free(w->diagonals);
  free(w->slot);
}

static weft_status work_alloc(work* w, const char* eq, int64_t n) {
  memset(w, 0, sizeof *w);
  w->e.n = n;
  w->e.lab = malloc(strlen(eq) + 1);
  w->e.start = malloc((size_t)(n + 1) * sizeof *w->e.start);
  w->p.shape = calloc((size_t)(2 * n), sizeof *w->p.shape);
  w->p.steps = calloc((size_t)(2 * n), sizeof *w->p.steps);
  w->perm = calloc((size_t)n, sizeof *w->perm);
  w->diagonals = calloc((size_t)n, sizeof *w->diagonals);
  w->slot = calloc((size_t)(2 * n), sizeof *w->slot);
  bool ok = w->e.lab && w->e.start && w->p.shape && w->p.steps && w->perm && w->diagonals && w->slot;
  return ok ? WEFT_OK : weft__error(WEFT_OUT_OF_MEMORY, "out of memory: einsum");
}

/* every operand aligned into w->slot, with the per-dim counts of operands not 1 there */
static weft_status align_all(work* w, const weft_tensor* const* t, int64_t n, int64_t* counts) {
  sizes_seen s;
  for (int l = 0; l < NLABELS; l++) s.label_size[l] = 1;
  for (int64_t d = 0; d < MAXD; d++) s.ell_size[d] = 1, s.counts[d] = 0;
  for (int64_t i = 0; i < n; i++) {
    w->slot[i] = align(&w->e, t[i], i, &s, w->perm[i], &w->diagonals[i]);
    if (!w->slot[i]) return weft_last_status();
    memcpy(w->p.shape[i], w->slot[i]->sizes, (size_t)w->e.ndim * sizeof(int64_t));
  }
  memcpy(counts, s.counts, sizeof s.counts);
  return WEFT_OK;
}

static weft_tensor* einsum_kernel(const char* eq, const weft_tensor* const* t, int64_t n, const int64_t* path,
                                  int64_t path_len) {
  if (n == 0) return weft__error_null(WEFT_INVALID_ARGUMENT, "einsum(): must provide at least one operand");
  work w;
  int64_t counts[MAXD];
  weft_status st = work_alloc(&w, eq, n);
  if (st == WEFT_OK) st = layout(eq, t, &w.e);
  if (st == WEFT_OK) st = align_all(&w, t, n, counts);
  w.p.nd = w.e.ndim, w.p.out_size = w.e.out_size;
  if (st == WEFT_OK) st = make_plan(&w.p, n, counts, path, path_len);
  if (st == WEFT_OK && weft_explaining())
    st = explain_plan(eq, t[0], &w.p, n, (const int64_t(*)[MAXD])w.perm, w.diagonals,
                      (const int64_t(*)[MAXD])w.p.shape);
  weft_tensor* r = st == WEFT_OK ? run_plan(&w.p, n, w.slot) : NULL;
  work_free(&w, n);
  return r;
}

weft_status weft__einsum_register(void) {
  WEFT_KERNEL(einsum, COMPOSITE_IMPLICIT_AUTOGRAD, einsum_kernel);
  return WEFT_OK;
}
