/* The row-reduction family's WGSL (webgpu.h, docs/webgpu.md): one template
 * for every reduction, softmax and norm. The iteration space is kept dims
 * (one row each) times reduced dims; each operand is an element offset with
 * strides over both. A workgroup reduces a row: its invocations fold the
 * row's elements into a running state (the member's `lift` and `comb`), then
 * a tree in workgroup memory combines the 64 states. The row's state feeds
 * row outputs (one value per row: sum, mean, rstd, ...) and element outputs
 * (softmax's and the norms' values, one per element of the row). Long rows
 * with few of them split: pass 1 reduces chunks into partial states, pass 2
 * combines a row's partials and writes its outputs. Shapes, strides and
 * offsets are parameter words, so one pipeline serves every shape. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "webgpu/webgpu.h"

enum { WG = WEFT_WEBGPU_WORKGROUP };

static const char* wtype(weft_dtype t) { return t == WEFT_FLOAT32 ? "f32" : t == WEFT_INT32 ? "i32" : "bool"; }

/* WGSL converting v from `from` to `to` (casts as PyTorch's: bool is != 0) */
static void put_conv(weft__strbuf* b, weft_dtype from, weft_dtype to, const char* v) {
  if (from == to) weft__strbuf_put(b, "%s", v);
  else if (to == WEFT_BOOL) weft__strbuf_put(b, "(%s != %s)", v, from == WEFT_FLOAT32 ? "0.0" : "0");
  else if (from == WEFT_BOOL)
    weft__strbuf_put(b, "select(%s, %s, %s)", to == WEFT_FLOAT32 ? "0.0" : "0", to == WEFT_FLOAT32 ? "1.0" : "1", v);
  else weft__strbuf_put(b, "%s(%s)", wtype(to), v);
}

/* parameter word positions: [rows, count, groups, chunk, offsets, kept sizes,
 * reduced sizes, kept strides per operand, reduced strides per operand, extras] */
typedef struct {
  int off, ks, rs, kst, rst, ext, total;
} layout;

static layout layout_of(const weft__webgpu_reduce* r) {
  layout l;
  l.off = 4;
  l.ks = l.off + r->nops;
  l.rs = l.ks + r->nkept;
  l.kst = l.rs + r->nred;
  l.rst = l.kst + r->nops * r->nkept;
  l.ext = l.rst + r->nops * r->nred;
  l.total = l.ext + r->nextra;
  return l;
}

static bool is_in(const weft__webgpu_reduce* r, int k) { return r->role[k] == WEFT_WEBGPU_RED_IN; }

/* which operands a pass binds: pass 1 of a split the inputs, pass 2 the outputs */
static bool bound(const weft__webgpu_reduce* r, int mode, int k) {
  return mode == 0 || (mode == 1) == is_in(r, k);
}

static void put_bindings(weft__strbuf* b, const weft__webgpu_reduce* r, int mode, weft__webgpu_program* p,
                         int32_t partials) {
  for (int k = 0; k < r->nops; k++) {
    if (!bound(r, mode, k)) continue;
    bool rw = !is_in(r, k), atom = rw && r->dtype[k] == WEFT_BOOL;
    weft__strbuf_put(b, "@group(0) @binding(%d) var<storage, %s> b%d: array<%s>;\n", p->nbuffers,
                     rw ? "read_write" : "read", k, atom ? "atomic<u32>" : "u32");
    p->buffers[p->nbuffers++] = r->buffer[k];
  }
  if (mode) {
    weft__strbuf_put(b, "@group(0) @binding(%d) var<storage, %s> tp: array<u32>;\n", p->nbuffers,
                     mode == 1 ? "read_write" : "read");
    p->buffers[p->nbuffers++] = partials;
  }
  weft__strbuf_put(b, "@group(0) @binding(%d) var<storage, read> p: array<u32>;\n", p->nbuffers);
}

/* ld<k>(i) in the compute dtype, st<k>(i, v) from it (bool outputs share
 * words with other rows' bytes: atomics) */
static void put_access(weft__strbuf* b, const weft__webgpu_reduce* r, int mode) {
  const char* c = wtype(r->compute);
  for (int k = 0; k < r->nops; k++) {
    if (!bound(r, mode, k)) continue;
    weft_dtype t = r->dtype[k];
    if (is_in(r, k) || t != WEFT_BOOL) {
      char v[96];
      if (t == WEFT_BOOL) snprintf(v, sizeof v, "(((b%d[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu) != 0u)", k);
      else snprintf(v, sizeof v, "bitcast<%s>(b%d[i])", wtype(t), k);
      weft__strbuf_put(b, "fn ld%d(i: u32) -> %s { return ", k, c);
      put_conv(b, t, r->compute, v);
      weft__strbuf_put(b, "; }\n");
    }
    if (is_in(r, k)) continue;
    weft__strbuf_put(b, "fn st%d(i: u32, x: %s) { ", k, c);
    if (t == WEFT_BOOL) {
      weft__strbuf_put(b, "let v = ");
      put_conv(b, r->compute, WEFT_BOOL, "x");
      weft__strbuf_put(b, "; let bs = (i & 3u) * 8u; atomicAnd(&b%d[i >> 2u], ~(0xffu << bs)); "
                          "atomicOr(&b%d[i >> 2u], select(0u, 1u, v) << bs); }\n", k, k);
    } else {
      weft__strbuf_put(b, "b%d[i] = bitcast<u32>(", k);
      put_conv(b, r->compute, t, "x");
      weft__strbuf_put(b, "); }\n");
    }
  }
}

/* a state's words in the partials buffer */
static void put_partials(weft__strbuf* b, const weft__webgpu_reduce* r) {
  const char* c = wtype(r->compute);
  int w = r->state_words;
  weft__strbuf_put(b, "fn tld(i: u32) -> %s { return %s(", r->state, r->state);
  for (int j = 0; j < w; j++) weft__strbuf_put(b, "%sbitcast<%s>(tp[i * %du + %du])", j ? ", " : "", c, w, j);
  weft__strbuf_put(b, "); }\n");
}

static void put_partial_store(weft__strbuf* b, const weft__webgpu_reduce* r) {
  int w = r->state_words;
  if (w == 1) {
    weft__strbuf_put(b, "    tp[w] = bitcast<u32>(st);\n");
    return;
  }
  static const char comp[] = "xyzw";
  for (int j = 0; j < w; j++) weft__strbuf_put(b, "    tp[w * %du + %du] = bitcast<u32>(st.%c);\n", w, j, comp[j]);
}

/* var o<k>: operand k's offset at the row's first element (kept coordinates
 * peeled off the row index, dim 0 fastest) */
static void put_row_offsets(weft__strbuf* b, const weft__webgpu_reduce* r, const layout* l, int mode) {
  weft__strbuf_put(b, "  var rem = row;\n");
  for (int k = 0; k < r->nops; k++)
    if (bound(r, mode, k)) weft__strbuf_put(b, "  var o%d = p[%du];\n", k, l->off + k);
  if (!r->nkept) return;
  weft__strbuf_put(b, "  for (var d = 0u; d < %du; d++) {\n    let c = rem %% p[%du + d]; rem = rem / p[%du + d];\n",
                   r->nkept, l->ks, l->ks);
  for (int k = 0; k < r->nops; k++)
    if (bound(r, mode, k)) weft__strbuf_put(b, "    o%d += c * p[%du + d];\n", k, l->kst + k * r->nkept);
  weft__strbuf_put(b, "  }\n");
}

/* the element e of the row: i<k> offsets, then a<j> the inputs' values
 * (numbered over the inputs) for `want` operands (inputs or element outputs) */
static void put_element(weft__strbuf* b, const weft__webgpu_reduce* r, const layout* l, bool outputs) {
  weft__strbuf_put(b, "    var q = e;\n");
  for (int k = 0; k < r->nops; k++)
    if (is_in(r, k) || (outputs && r->role[k] == WEFT_WEBGPU_RED_ELEM_OUT)) weft__strbuf_put(b, "    var i%d = o%d;\n", k, k);
  weft__strbuf_put(b, "    for (var d = 0u; d < %du; d++) {\n      let c = q %% p[%du + d]; q = q / p[%du + d];\n",
                   r->nred, l->rs, l->rs);
  for (int k = 0; k < r->nops; k++)
    if (is_in(r, k) || (outputs && r->role[k] == WEFT_WEBGPU_RED_ELEM_OUT))
      weft__strbuf_put(b, "      i%d += c * p[%du + d];\n", k, l->rst + k * r->nred);
  weft__strbuf_put(b, "    }\n");
  for (int k = 0, j = 0; k < r->nops; k++)
    if (is_in(r, k)) weft__strbuf_put(b, "    let a%d = ld%d(i%d);\n", j++, k, k);
}

static void put_tree(weft__strbuf* b) {
  weft__strbuf_put(b, "  sh[lid] = s;\n  workgroupBarrier();\n"
                      "  for (var h = %du; h > 0u; h = h >> 1u) {\n"
                      "    if (lid < h) { sh[lid] = comb(sh[lid], sh[lid + h]); }\n"
                      "    workgroupBarrier();\n  }\n  let st = sh[0];\n", WG / 2);
}

/* row outputs (by invocation 0) and element outputs, from the row's state */
static void put_outputs(weft__strbuf* b, const weft__webgpu_reduce* r, const layout* l) {
  weft__strbuf_put(b, "  let n = %s(p[1]);\n", wtype(r->compute));
  weft__strbuf_put(b, "  if (lid == 0u && valid) {\n");
  for (int k = 0, j = 0; k < r->nops; k++) {
    if (r->role[k] != WEFT_WEBGPU_RED_ROW_OUT) continue;
    weft__strbuf_put(b, "    st%d(o%d, %s);\n", k, k, r->row_expr[j++]);
  }
  weft__strbuf_put(b, "  }\n");
  bool elem = false;
  for (int k = 0; k < r->nops; k++) elem = elem || r->role[k] == WEFT_WEBGPU_RED_ELEM_OUT;
  if (!elem) return;
  weft__strbuf_put(b, "  if (!valid) { return; }\n  for (var e = lo + lid; e < hi; e += %du) {\n", WG);
  put_element(b, r, l, true);
  for (int k = 0; k < r->nops; k++)
    if (r->role[k] == WEFT_WEBGPU_RED_ELEM_OUT) weft__strbuf_put(b, "    st%d(i%d, %s);\n", k, k, r->elem_expr);
  weft__strbuf_put(b, "  }\n");
  (void)l;
}

static void put_main(weft__strbuf* b, const weft__webgpu_reduce* r, const layout* l, int mode) {
  weft__strbuf_put(b, "@compute @workgroup_size(%d)\n"
                      "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, "
                      "@builtin(local_invocation_index) lid: u32) {\n"
                      "  let w = wid.y * nwg.x + wid.x;\n", WG);
  for (int i = 0; i < r->nextra; i++)
    weft__strbuf_put(b, "  let e%d = bitcast<%s>(p[%du]);\n", i, wtype(r->compute), l->ext + i);
  /* a workgroup past the rows (a 2-D grid's last line) still meets the barriers */
  if (mode == 1 || !r->lift) weft__strbuf_put(b, "  let valid = w < p[0] * p[2];\n  let row = min(w / p[2], p[0] - 1u);\n"
                                                  "  let g = w %% p[2];\n");
  else weft__strbuf_put(b, "  let valid = w < p[0];\n  let row = min(w, p[0] - 1u);\n");
  put_row_offsets(b, r, l, mode);
  if (!r->lift) { /* no state: an elementwise pass with per-row operands, a workgroup per chunk of a row */
    weft__strbuf_put(b, "  let st = %s;\n  let lo = g * p[3];\n  let hi = min(lo + p[3], p[1]);\n", r->identity);
    put_outputs(b, r, l);
    weft__strbuf_put(b, "}\n");
    return;
  }
  weft__strbuf_put(b, "  var s: %s = %s;\n", r->state, r->identity);
  if (mode == 2) {
    weft__strbuf_put(b, "  for (var j = lid; j < p[2]; j += %du) { s = comb(s, tld(row * p[2] + j)); }\n", WG);
  } else {
    if (mode == 1) weft__strbuf_put(b, "  let lo = g * p[3];\n  let hi = min(lo + p[3], p[1]);\n");
    else weft__strbuf_put(b, "  let lo = 0u;\n  let hi = p[1];\n");
    weft__strbuf_put(b, "  for (var e = lo + lid; e < hi; e += %du) {\n", WG);
    put_element(b, r, l, false);
    weft__strbuf_put(b, "    s = comb(s, %s);\n  }\n", r->lift);
  }
  put_tree(b);
  if (mode == 1) {
    weft__strbuf_put(b, "  if (lid == 0u && valid) {\n");
    put_partial_store(b, r);
    weft__strbuf_put(b, "  }\n");
  } else {
    put_outputs(b, r, l);
  }
  weft__strbuf_put(b, "}\n");
}

static bool fits(int64_t v) { return v >= 0 && v <= (int64_t)UINT32_MAX; }

static weft_status check(const char* op, const weft__webgpu_reduce* r) {
  bool ok = r->nops <= WEFT_WEBGPU_MAX_BUFFERS - 1 && r->nkept <= WEFT_MAX_DIMS && r->nred <= WEFT_MAX_DIMS && r->nextra <= 4 &&
            r->state_words >= 1 && r->state_words <= 4 && fits(r->rows) && fits(r->count);
  int64_t rows = 1, count = 1;
  for (int d = 0; ok && d < r->nkept; d++) ok = fits(r->kept[d]), rows *= r->kept[d];
  for (int d = 0; ok && d < r->nred; d++) ok = fits(r->red[d]), count *= r->red[d];
  for (int k = 0; ok && k < r->nops; k++) {
    ok = fits(r->offset[k]);
    for (int d = 0; ok && d < r->nkept; d++) ok = fits(r->kstride[k][d]);
    for (int d = 0; ok && d < r->nred; d++) ok = fits(r->rstride[k][d]);
  }
  if (ok && (rows != r->rows || count != r->count))
    return weft__error(WEFT_INTERNAL, "%s: a webgpu reduction's rows and counts disagree", op);
  return ok ? WEFT_OK
            : weft__error(WEFT_NOT_IMPLEMENTED, "%s: a webgpu tensor this large (2**32 elements or more) is not "
                                                "supported", op);
}

static void put_params(const weft__webgpu_reduce* r, const layout* l, weft__webgpu_program* p) {
  uint32_t* w = p->params;
  w[0] = (uint32_t)r->rows;
  w[1] = (uint32_t)r->count;
  w[2] = (uint32_t)(r->groups ? r->groups : 1);
  w[3] = (uint32_t)r->chunk;
  for (int k = 0; k < r->nops; k++) w[l->off + k] = (uint32_t)r->offset[k];
  for (int d = 0; d < r->nkept; d++) w[l->ks + d] = (uint32_t)r->kept[d];
  for (int d = 0; d < r->nred; d++) w[l->rs + d] = (uint32_t)r->red[d];
  for (int k = 0; k < r->nops; k++) {
    for (int d = 0; d < r->nkept; d++) w[l->kst + k * r->nkept + d] = (uint32_t)r->kstride[k][d];
    for (int d = 0; d < r->nred; d++) w[l->rst + k * r->nred + d] = (uint32_t)r->rstride[k][d];
  }
  for (int i = 0; i < r->nextra; i++) w[l->ext + i] = r->extra[i];
  p->nparams = l->total;
}

static void set_grid(weft__webgpu_program* p, uint64_t groups) {
  p->grid[0] = groups < 65535u ? (uint32_t)(groups ? groups : 1u) : 65535u;
  p->grid[1] = (uint32_t)((groups + p->grid[0] - 1) / p->grid[0]);
  if (!p->grid[1]) p->grid[1] = 1;
  p->grid[2] = 1;
}

weft_status weft__webgpu_reduce_program(const char* op, const weft__webgpu_reduce* r, int mode, int32_t partials,
                                        weft__webgpu_program* p) {
  memset(p, 0, sizeof *p);
  weft_status s = check(op, r);
  if (s != WEFT_OK) return s;
  layout l = layout_of(r);
  if (l.total > WEFT_WEBGPU_MAX_PARAMS)
    return weft__error(WEFT_NOT_IMPLEMENTED, "%s: too many dims for a webgpu reduction", op);
  int n = snprintf(p->key, sizeof p->key, "red:%s:%d:%d:%d:%s", r->name, mode, r->nkept, r->nred,
                   weft_dtype_name(r->compute));
  for (int k = 0; k < r->nops && n > 0 && (size_t)n < sizeof p->key; k++)
    n += snprintf(p->key + n, sizeof p->key - (size_t)n, ":%c%s", "ire"[r->role[k]], weft_dtype_name(r->dtype[k]));
  weft__strbuf b = {0};
  put_bindings(&b, r, mode, p, partials);
  weft__strbuf_put(&b, "var<workgroup> sh: array<%s, %d>;\n", r->state, WG);
  /* infinities and NaN at run time (a constant one is a shader-creation
   * error), and NaN tests on the bits (x != x may be folded away) */
  weft__strbuf_put(&b, "fn pinf() -> f32 { var u = 0x7f800000u; return bitcast<f32>(u); }\n"
                       "fn ninf() -> f32 { var u = 0xff800000u; return bitcast<f32>(u); }\n"
                       "fn nanv() -> f32 { var u = 0x7fc00000u; return bitcast<f32>(u); }\n"
                       "fn wnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }\n"
                       "fn wfinite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }\n");
  weft__strbuf_put(&b, "fn comb(a: %s, b: %s) -> %s { %s }\n", r->state, r->state, r->state, r->comb);
  put_access(&b, r, mode);
  if (mode) put_partials(&b, r);
  put_main(&b, r, &l, mode);
  char* text = weft__strbuf_finish(&b, op);
  if (!text) return weft_last_status();
  p->wgsl = text;
  put_params(r, &l, p);
  set_grid(p, mode == 1 || !r->lift ? (uint64_t)r->rows * (uint64_t)r->groups : (uint64_t)r->rows);
  return WEFT_OK;
}
