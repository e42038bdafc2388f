/* The index family's WGSL (webgpu.h): gather, scatter and scatter-add over
 * an iteration shape, and nll_loss forward / backward. One template each,
 * filled from a description; sizes, strides, offsets, the indexed dim and
 * the numbers are parameters, so a pipeline serves every shape of a rank.
 * Float scatter-add has no atomic in WGSL: a compare-exchange loop on the
 * u32 bits adds each term (duplicates land in an unfixed order, as CUDA's
 * atomicAdd index_add_ / scatter_add_ / embedding backward). */
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "webgpu/webgpu.h"

static const char* type_of(weft_dtype t) { return t == WEFT_FLOAT32 ? "f32" : "i32"; }
static bool fits_u32(int64_t v) { return v >= 0 && v <= (int64_t)UINT32_MAX; }

static weft_status too_large(const char* op) {
  return weft__error(WEFT_NOT_IMPLEMENTED, "%s: a webgpu tensor this large (2**32 elements or more) is not supported",
                     op);
}

static bool index_fits(const weft__webgpu_index* d) {
  bool ok = fits_u32(d->numel) && fits_u32(d->dim_stride) && fits_u32(d->dim_size) && d->ndim <= WEFT_MAX_DIMS;
  for (int k = 0; ok && k < 3; k++) {
    ok = fits_u32(d->offset[k]);
    for (int i = 0; ok && i < d->ndim; i++) ok = fits_u32(d->sizes[i]) && fits_u32(d->strides[k][i]);
  }
  return ok;
}

/* [numel, offsets[3], sizes[nd], strides[3][nd], dim_stride, dim_size, skipping, skip, alpha, src] */
static int index_params(const weft__webgpu_index* d, weft__webgpu_program* p) {
  int n = 0, nd = d->ndim;
  p->params[n++] = (uint32_t)d->numel;
  for (int k = 0; k < 3; k++) p->params[n++] = (uint32_t)d->offset[k];
  for (int i = 0; i < nd; i++) p->params[n++] = (uint32_t)d->sizes[i];
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < nd; i++) p->params[n++] = (uint32_t)d->strides[k][i];
  int at = n;
  bool skip = d->skipping && d->skip >= INT32_MIN && d->skip <= INT32_MAX; /* others match no int32 index */
  p->params[n++] = (uint32_t)d->dim_stride;
  p->params[n++] = (uint32_t)d->dim_size;
  p->params[n++] = skip;
  p->params[n++] = skip ? (uint32_t)(int32_t)d->skip : 0u;
  p->params[n++] = d->alpha_bits;
  p->params[n++] = d->src_bits;
  p->nparams = n;
  return at;
}

/* the element's offsets: coordinates peeled off idx, last dim fastest */
static void put_offsets(weft__strbuf* b, int nd) {
  weft__strbuf_put(b, "  var o0 = p[1]; var o1 = p[2]; var o2 = p[3];\n  var rem = idx;\n"
                      "  for (var e = 0u; e < %du; e++) {\n    let d = %du - (e + 1u);\n"
                      "    let c = rem %% p[4u + d]; rem = rem / p[4u + d];\n"
                      "    o0 += c * p[%du + d]; o1 += c * p[%du + d]; o2 += c * p[%du + d];\n  }\n",
                   nd, nd, 4 + nd, 4 + 2 * nd, 4 + 3 * nd);
}

static void put_body(weft__strbuf* b, const weft__webgpu_index* d, int at) {
  const char* t = type_of(d->dtype);
  weft__strbuf_put(b, "  let j = bitcast<i32>(b2[o2]);\n"
                      "  let ok = j >= 0 && u32(j) < p[%du] && !(p[%du] != 0u && j == bitcast<i32>(p[%du]));\n",
                   at + 1, at + 2, at + 3);
  char src[48];
  if (d->src_scalar) snprintf(src, sizeof src, "bitcast<%s>(p[%du])", t, at + 5);
  else snprintf(src, sizeof src, "bitcast<%s>(b1[o1])", t);
  switch (d->mode) {
    case WEFT_WEBGPU_GATHER:
      weft__strbuf_put(b, "  var v: %s = %s(0);\n  if (ok) { v = bitcast<%s>(b1[o1 + u32(j) * p[%du]]); }\n"
                          "  b0[o0] = bitcast<u32>(v);\n", t, t, t, at);
      break;
    case WEFT_WEBGPU_SCATTER:
      weft__strbuf_put(b, "  if (ok) { b0[o0 + u32(j) * p[%du]] = bitcast<u32>(%s); }\n", at, src);
      break;
    case WEFT_WEBGPU_SCATTER_ADD:
      weft__strbuf_put(b, "  if (ok) { add(o0 + u32(j) * p[%du], bitcast<%s>(p[%du]) * %s); }\n", at, t, at + 4, src);
      break;
  }
}

/* out[i] += v: int32 wraps as the cpu's does; float32 retries its
 * compare-exchange until no other invocation wrote in between */
static void put_add(weft__strbuf* b, weft_dtype t) {
  if (t == WEFT_INT32) {
    weft__strbuf_put(b, "fn add(i: u32, v: i32) { atomicAdd(&b0[i], bitcast<u32>(v)); }\n");
    return;
  }
  weft__strbuf_put(b, "fn add(i: u32, v: f32) {\n  var old = atomicLoad(&b0[i]);\n  loop {\n"
                      "    let r = atomicCompareExchangeWeak(&b0[i], old, bitcast<u32>(bitcast<f32>(old) + v));\n"
                      "    if (r.exchanged) { break; }\n    old = r.old_value;\n  }\n}\n");
}

static const char* mode_name(weft__webgpu_index_mode m) {
  return m == WEFT_WEBGPU_GATHER ? "gather" : m == WEFT_WEBGPU_SCATTER ? "scatter" : "scatter_add";
}

weft_status weft__webgpu_index_program(const char* op, const weft__webgpu_index* d, weft__webgpu_program* p) {
  memset(p, 0, sizeof *p);
  if (!index_fits(d)) return too_large(op);
  bool atomic = d->mode == WEFT_WEBGPU_SCATTER_ADD;
  snprintf(p->key, sizeof p->key, "index:%s:%d:%s:%s", mode_name(d->mode), d->ndim, weft_dtype_name(d->dtype),
           d->src_scalar ? "s" : "t");
  weft__strbuf b = {0};
  weft__strbuf_put(&b, "@group(0) @binding(0) var<storage, read_write> b0: array<%s>;\n",
                   atomic ? "atomic<u32>" : "u32");
  p->buffers[p->nbuffers++] = d->buffer[0];
  if (!d->src_scalar) {
    weft__strbuf_put(&b, "@group(0) @binding(%d) var<storage, read> b1: array<u32>;\n", p->nbuffers);
    p->buffers[p->nbuffers++] = d->buffer[1];
  }
  weft__strbuf_put(&b, "@group(0) @binding(%d) var<storage, read> b2: array<u32>;\n", p->nbuffers);
  p->buffers[p->nbuffers++] = d->buffer[2];
  weft__strbuf_put(&b, "@group(0) @binding(%d) var<storage, read> p: array<u32>;\n", p->nbuffers);
  if (atomic) put_add(&b, d->dtype);
  int at = index_params(d, p);
  weft__strbuf_put(&b, "@compute @workgroup_size(%d)\n"
                       "fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {\n"
                       "  let idx = gid.y * nwg.x * %du + gid.x;\n  if (idx >= p[0]) { return; }\n",
                   WEFT_WEBGPU_WORKGROUP, WEFT_WEBGPU_WORKGROUP);
  put_offsets(&b, d->ndim);
  put_body(&b, d, at);
  weft__strbuf_put(&b, "}\n");
  if (!(p->wgsl = weft__strbuf_finish(&b, op))) return weft_last_status();
  weft__webgpu_grid(p, d->numel);
  return WEFT_OK;
}

/* ---- nll_loss ---- */

/* [total, c, k, x_offset, target_offset, weight_offset, grad_offset, ignore] */
static void nll_params(const weft__webgpu_nll* d, weft__webgpu_program* p) {
  int64_t ig = d->ignore_index < INT32_MIN ? INT32_MIN : d->ignore_index > INT32_MAX ? INT32_MAX : d->ignore_index;
  const int64_t v[7] = {d->n * d->k, d->c, d->k, d->x_offset, d->target_offset, d->weight_offset, d->grad_offset};
  for (int i = 0; i < 7; i++) p->params[i] = (uint32_t)v[i];
  p->params[7] = (uint32_t)(int32_t)ig;
  p->nparams = 8;
}

/* sv[0] (and sw[0]) become the sums of the workgroup's 64 values */
static void put_tree(weft__strbuf* b, const char* arrays) {
  weft__strbuf_put(b, "  workgroupBarrier();\n  for (var s = %du; s > 0u; s = s >> 1u) {\n"
                      "    if (lid.x < s) { %s }\n    workgroupBarrier();\n  }\n",
                   WEFT_WEBGPU_WORKGROUP / 2, arrays);
}

static void put_nll_helpers(weft__strbuf* b, const weft__webgpu_nll* d) {
  weft__strbuf_put(b, "var<workgroup> sv: array<f32, %d>;\nvar<workgroup> sw: array<f32, %d>;\n"
                      "fn tgt(i: u32) -> i32 { return bitcast<i32>(tb[p[4] + i]); }\n"
                      "fn valid(t: i32) -> bool { return t != bitcast<i32>(p[7]) && t >= 0 && u32(t) < p[1]; }\n",
                   WEFT_WEBGPU_WORKGROUP, WEFT_WEBGPU_WORKGROUP);
  if (d->has_weight) weft__strbuf_put(b, "fn weight(t: i32) -> f32 { return bitcast<f32>(wb[p[5] + u32(t)]); }\n");
  else weft__strbuf_put(b, "fn weight(t: i32) -> f32 { return 1.0; }\n");
  /* the element of self / grad_input at (n, t, k) of flat target index i */
  weft__strbuf_put(b, "fn elem(i: u32, t: i32) -> u32 { return (i / p[2] * p[1] + u32(t)) * p[2] + i %% p[2]; }\n");
}

static void put_nll_forward(weft__strbuf* b, const weft__webgpu_nll* d) {
  weft__strbuf_put(b, "  var sum = 0.0; var wsum = 0.0;\n"
                      "  for (var i = gid.x; i < p[0]; i += nwg.x * %du) {\n"
                      "    let t = tgt(i);\n    var v = 0.0;\n"
                      "    if (valid(t)) { let w = weight(t); v = -w * bitcast<f32>(xb[p[3] + elem(i, t)]); "
                      "sum += v; wsum += w; }\n",
                   WEFT_WEBGPU_WORKGROUP);
  if (!d->reduce) weft__strbuf_put(b, "    ob[i] = bitcast<u32>(v);\n");
  weft__strbuf_put(b, "  }\n");
  if (!d->reduce) return;
  weft__strbuf_put(b, "  sv[lid.x] = sum; sw[lid.x] = wsum;\n");
  put_tree(b, "sv[lid.x] += sv[lid.x + s]; sw[lid.x] += sw[lid.x + s];");
  weft__strbuf_put(b, "  if (lid.x == 0u) { ob[0] = bitcast<u32>(%s); }\n", d->mean ? "sv[0] / sw[0]" : "sv[0]");
}

static void put_nll_backward(weft__strbuf* b, const weft__webgpu_nll* d) {
  weft__strbuf_put(b, "  var total = 1.0;\n");
  if (d->mean) {
    weft__strbuf_put(b, "  var wsum = 0.0;\n  for (var i = lid.x; i < p[0]; i += %du) {\n"
                        "    let t = tgt(i);\n    if (valid(t)) { wsum += weight(t); }\n  }\n  sw[lid.x] = wsum;\n",
                     WEFT_WEBGPU_WORKGROUP);
    put_tree(b, "sw[lid.x] += sw[lid.x + s];");
    weft__strbuf_put(b, "  total = sw[0];\n");
  }
  weft__strbuf_put(b, "  for (var i = gid.x; i < p[0]; i += nwg.x * %du) {\n    let t = tgt(i);\n"
                      "    if (valid(t)) {\n      let g = bitcast<f32>(gb[p[6]%s]);\n"
                      "      ob[elem(i, t)] = bitcast<u32>(-weight(t) * g / total);\n    }\n  }\n",
                   WEFT_WEBGPU_WORKGROUP, d->reduce ? "" : " + i");
}

weft_status weft__webgpu_nll_program(const char* op, const weft__webgpu_nll* d, weft__webgpu_program* p) {
  memset(p, 0, sizeof *p);
  const int64_t v[7] = {d->n * d->k, d->c, d->k, d->x_offset, d->target_offset, d->weight_offset, d->grad_offset};
  for (int i = 0; i < 7; i++)
    if (!fits_u32(v[i]) || !fits_u32(d->n * d->c * d->k)) return too_large(op);
  snprintf(p->key, sizeof p->key, "nll:%s:%s:%s:%s", d->backward ? "backward" : "forward",
           d->reduce ? (d->mean ? "mean" : "sum") : "none", d->has_weight ? "w" : "-", "f32");
  weft__strbuf b = {0};
  weft__strbuf_put(&b, "@group(0) @binding(0) var<storage, read_write> ob: array<u32>;\n"
                       "@group(0) @binding(1) var<storage, read> %s: array<u32>;\n"
                       "@group(0) @binding(2) var<storage, read> tb: array<u32>;\n",
                   d->backward ? "gb" : "xb");
  p->buffers[0] = d->out, p->buffers[1] = d->backward ? d->grad : d->x, p->buffers[2] = d->target;
  p->nbuffers = 3;
  if (d->has_weight) {
    weft__strbuf_put(&b, "@group(0) @binding(3) var<storage, read> wb: array<u32>;\n");
    p->buffers[p->nbuffers++] = d->weight;
  }
  weft__strbuf_put(&b, "@group(0) @binding(%d) var<storage, read> p: array<u32>;\n", p->nbuffers);
  put_nll_helpers(&b, d);
  weft__strbuf_put(&b, "@compute @workgroup_size(%d)\n"
                       "fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: "
                       "vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {\n",
                   WEFT_WEBGPU_WORKGROUP);
  if (d->backward) put_nll_backward(&b, d);
  else put_nll_forward(&b, d);
  weft__strbuf_put(&b, "}\n");
  if (!(p->wgsl = weft__strbuf_finish(&b, op))) return weft_last_status();
  nll_params(d, p);
  /* a sum over everything runs in one workgroup; the rest strides over a 1-D grid */
  bool one_group = d->backward ? d->mean : d->reduce;
  int64_t groups = (d->n * d->k + WEFT_WEBGPU_WORKGROUP - 1) / WEFT_WEBGPU_WORKGROUP;
  p->grid[0] = one_group || groups < 1 ? 1u : groups > 65535 ? 65535u : (uint32_t)groups;
  p->grid[1] = p->grid[2] = 1;
  return WEFT_OK;
}
