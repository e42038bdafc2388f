/* The strided map family's WGSL (webgpu.h): one template, filled from a
 * description (operand dtypes, rank, the member's expression), as tfjs's
 * webgpu_program.ts builds getUserCode(). Shapes, strides and offsets are
 * parameters, not text, so one pipeline serves every shape of a rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "webgpu/webgpu.h"

static const char* wgsl_type(weft_dtype t) {
  return t == WEFT_FLOAT32 ? "f32" : t == WEFT_INT32 ? "i32" : "bool";
}

/* WGSL converting value v of dtype `from` to dtype `to` (PyTorch's casts:
 * float to int truncates, anything to bool is != 0). */
static void put_convert(weft__strbuf* b, weft_dtype from, weft_dtype to, const char* v) {
  if (from == to) {
    weft__strbuf_put(b, "%s", v);
  } else if (to == WEFT_BOOL) {
    weft__strbuf_put(b, "(%s != %s)", v, from == WEFT_FLOAT32 ? "0.0" : "0");
  } else if (from == WEFT_BOOL) {
    weft__strbuf_put(b, "select(%s, %s, %s)", to == WEFT_FLOAT32 ? "0.0" : "0", to == WEFT_FLOAT32 ? "1.0" : "1", v);
  } else {
    weft__strbuf_put(b, "%s(%s)", wgsl_type(to), v);
  }
}

/* Where the parameter words start: [numel, offsets, sizes, strides, scalars, extras]. */
static int scalars_at(const weft__webgpu_map* m) { return 1 + (1 + m->nin) * (1 + m->ndim) + m->ndim; }

/* ld<k>(i): element i of operand k in its memory dtype. Bools are bytes:
 * the byte of the word they share with three neighbours. */
static void put_loader(weft__strbuf* b, const weft__webgpu_map* m, int k) {
  weft_dtype t = m->dtype[k];
  weft__strbuf_put(b, "fn ld%d(i: u32) -> %s { ", k, wgsl_type(t));
  if (m->scalar[k])
    weft__strbuf_put(b, "return %s(p[%du]); }\n", t == WEFT_BOOL ? "bool" : t == WEFT_FLOAT32 ? "bitcast<f32>" : "bitcast<i32>",
                     scalars_at(m) + k);
  else if (m->alias[k] && t == WEFT_BOOL) /* the output's words are atomic */
    weft__strbuf_put(b, "return ((atomicLoad(&b0[i >> 2u]) >> ((i & 3u) * 8u)) & 0xffu) != 0u; }\n");
  else if (t == WEFT_BOOL)
    weft__strbuf_put(b, "return ((b%d[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu) != 0u; }\n", k);
  else
    weft__strbuf_put(b, "return bitcast<%s>(b%d[i]); }\n", wgsl_type(t), m->alias[k] ? 0 : k);
}

/* st(i, v): the output element. A bool output shares words with elements
 * other invocations write, so its byte is cleared and set atomically. */
static void put_storer(weft__strbuf* b, weft_dtype t) {
  weft__strbuf_put(b, "fn st(i: u32, v: %s) { ", wgsl_type(t));
  if (t == WEFT_BOOL)
    weft__strbuf_put(b, "let sh = (i & 3u) * 8u; atomicAnd(&b0[i >> 2u], ~(0xffu << sh)); "
                        "atomicOr(&b0[i >> 2u], select(0u, 1u, v) << sh); }\n");
  else
    weft__strbuf_put(b, "b0[i] = bitcast<u32>(v); }\n");
}

/* Parameter words: [numel, offset per operand, sizes[ndim], strides per operand [ndim]]. */
static void put_params(const weft__webgpu_map* m, weft__webgpu_program* p) {
  int nt = 1 + m->nin, n = 0;
  p->params[n++] = (uint32_t)m->numel;
  for (int k = 0; k < nt; k++) p->params[n++] = (uint32_t)m->offset[k];
  for (int d = 0; d < m->ndim; d++) p->params[n++] = (uint32_t)m->sizes[d];
  for (int k = 0; k < nt; k++)
    for (int d = 0; d < m->ndim; d++) p->params[n++] = (uint32_t)m->strides[k][d];
  for (int k = 0; k < nt; k++) p->params[n++] = m->scalar[k] ? m->scalar_bits[k] : 0u;
  for (int i = 0; i < m->nextra; i++) p->params[n++] = m->extra[i];
  p->nparams = n;
}

static void put_main(weft__strbuf* b, const weft__webgpu_map* m) {
  int nt = 1 + m->nin;
  weft__strbuf_put(b, "@compute @workgroup_size(%d)\n"
                      "fn main(@builtin(global_invocation_id) gid: vec3<u32>, "
                      "@builtin(num_workgroups) nwg: vec3<u32>) {\n"
                      "  let idx = gid.y * nwg.x * %du + gid.x;\n"
                      "  if (idx >= p[0]) { return; }\n"
                      "  var rem = idx;\n", WEFT_WEBGPU_WORKGROUP, WEFT_WEBGPU_WORKGROUP);
  for (int k = 0; k < nt; k++) weft__strbuf_put(b, "  var o%d = p[%d];\n", k, 1 + k);
  /* dim 0 is the fastest: peel coordinates off the linear index */
  weft__strbuf_put(b, "  for (var d = 0u; d < %du; d++) {\n"
                      "    let c = rem %% p[%du + d]; rem = rem / p[%du + d];\n", m->ndim, 1 + nt, 1 + nt);
  for (int k = 0; k < nt; k++)
    weft__strbuf_put(b, "    o%d += c * p[%du + d];\n", k, 1 + nt + m->ndim * (1 + k));
  weft__strbuf_put(b, "  }\n");
  for (int i = 0; i < m->nextra; i++) {
    weft__strbuf_put(b, "  let e%d = ", i);
    char v[32];
    snprintf(v, sizeof v, "p[%du]", scalars_at(m) + nt + i);
    if (m->compute == WEFT_BOOL) weft__strbuf_put(b, "%s != 0u", v);
    else weft__strbuf_put(b, "bitcast<%s>(%s)", wgsl_type(m->compute), v);
    weft__strbuf_put(b, ";\n");
  }
  for (int k = 1; k < nt; k++) {
    char v[32];
    snprintf(v, sizeof v, "ld%d(o%d)", k, k);
    weft__strbuf_put(b, "  let a%d = ", k - 1);
    put_convert(b, m->dtype[k], m->compute, v);
    weft__strbuf_put(b, ";\n");
  }
  weft__strbuf_put(b, "  let r: %s = %s;\n  st(o0, ", wgsl_type(m->result), m->expr);
  put_convert(b, m->result, m->dtype[0], "r");
  weft__strbuf_put(b, ");\n}\n");
}

static bool fits_u32(int64_t v) { return v >= 0 && v <= (int64_t)UINT32_MAX; }

static weft_status check_ranges(const char* op, const weft__webgpu_map* m) {
  bool ok = fits_u32(m->numel) && m->ndim <= WEFT_MAX_DIMS && m->nin <= WEFT_WEBGPU_MAX_INPUTS && m->nextra <= 4;
  for (int k = 0; ok && k <= m->nin; k++) {
    ok = fits_u32(m->offset[k]);
    for (int d = 0; ok && d < m->ndim; d++) ok = fits_u32(m->strides[k][d]) && fits_u32(m->sizes[d]);
  }
  return ok ? WEFT_OK
            : weft__error(WEFT_NOT_IMPLEMENTED, "%s: a webgpu tensor this large (2**32 elements or more) is not "
                                                "supported", op);
}

weft_status weft__webgpu_map_program(const char* op, const weft__webgpu_map* m, weft__webgpu_program* p) {
  memset(p, 0, sizeof *p);
  weft_status s = check_ranges(op, m);
  if (s != WEFT_OK) return s;
  int nt = 1 + m->nin;
  int n = snprintf(p->key, sizeof p->key, "map:%s:%d:%s", m->name, m->ndim, weft_dtype_name(m->compute));
  for (int k = 0; k < nt && n > 0 && (size_t)n < sizeof p->key; k++)
    n += snprintf(p->key + n, sizeof p->key - (size_t)n, ":%s", weft_dtype_name(m->dtype[k]));
  for (int k = 1; k < nt && n > 0 && (size_t)n < sizeof p->key; k++)
    if (m->scalar[k] || m->alias[k])
      n += snprintf(p->key + n, sizeof p->key - (size_t)n, ":%c%d", m->scalar[k] ? 's' : 'a', k);
  /* bindings: the output, the inputs with a buffer, then the parameters */
  weft__strbuf b = {0};
  weft__strbuf_put(&b, "@group(0) @binding(0) var<storage, read_write> b0: array<%s>;\n",
                   m->dtype[0] == WEFT_BOOL ? "atomic<u32>" : "u32");
  p->buffers[p->nbuffers++] = m->buffer[0];
  for (int k = 1; k < nt; k++) {
    if (m->scalar[k] || m->alias[k]) continue;
    weft__strbuf_put(&b, "@group(0) @binding(%d) var<storage, read> b%d: array<u32>;\n", p->nbuffers, k);
    p->buffers[p->nbuffers++] = m->buffer[k];
  }
  weft__strbuf_put(&b, "@group(0) @binding(%d) var<storage, read> p: array<u32>;\n", p->nbuffers);
  for (int k = 1; k < nt; k++) put_loader(&b, m, k);
  put_storer(&b, m->dtype[0]);
  put_main(&b, m);
  if (!(p->wgsl = weft__strbuf_finish(&b, op))) return weft_last_status();
  put_params(m, p);
  weft__webgpu_grid(p, m->numel);
  return WEFT_OK;
}

void weft__webgpu_grid(weft__webgpu_program* p, int64_t n) {
  /* a 2-D grid once the groups pass one dimension's 65535 */
  uint32_t groups = (uint32_t)((n + WEFT_WEBGPU_WORKGROUP - 1) / WEFT_WEBGPU_WORKGROUP);
  p->grid[0] = groups < 65535u ? (groups ? groups : 1u) : 65535u;
  p->grid[1] = (groups + p->grid[0] - 1) / p->grid[0];
  if (!p->grid[1]) p->grid[1] = 1;
  p->grid[2] = 1;
}

void weft__webgpu_program_free(weft__webgpu_program* p) {
  free(p->wgsl);
  p->wgsl = NULL;
}
