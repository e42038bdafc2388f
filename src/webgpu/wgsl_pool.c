/* 2-D pooling's WGSL (webgpu.h): max (with or without int32 indices), avg
 * and adaptive avg, forward one invocation per output element, backward one
 * per element of the input's gradient gathering from the windows that hold
 * it. The window of an output follows src/ops/cpu/pool.c's (the same
 * clipping, ceil_mode and divisors), so values match the CPU's bit for bit
 * forward; backward sums the same terms in window order. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "webgpu/wgsl_gemm.h"

/* p[0]: the count; p[1..16]: geometry; p[17..31]: x, y, idx as (offset, 4 strides); p[32]: -inf
 * (a constant -inf is a shader-creation error in WGSL) */
static const char prelude[] =
    "const PC = 2u; const PH = 3u; const PW = 4u; const POH = 5u; const POW = 6u; const PKH = 7u; const PKW = 8u;\n"
    "const PSH = 9u; const PSW = 10u; const PPH = 11u; const PPW = 12u; const PDH = 13u; const PDW = 14u;\n"
    "const PCIP = 15u; const PDIV = 16u; const TX = 17u; const TY = 22u; const TI = 27u; const PNINF = 32u;\n"
    "fn ix4(t: u32, n: u32, c: u32, y: u32, x: u32) -> u32 {\n"
    "  return p[t] + n * p[t + 1u] + c * p[t + 2u] + y * p[t + 3u] + x * p[t + 4u];\n}\n"
    "fn sel(rows: bool, r: u32, c: u32) -> i32 { return i32(select(p[c], p[r], rows)); }\n"
    /* by the bits: a compiler may fold v != v to false */
    "fn nan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }\n";

/* win(rows, o): the window of output o along rows or columns as (first
 * input, count, avg's padded size) */
static const char win_max[] =
    "fn win(rows: bool, o: i32) -> vec3<i32> {\n"
    "  let inn = sel(rows, PH, PW); let k = sel(rows, PKH, PKW); let s = sel(rows, PSH, PSW);\n"
    "  let pd = sel(rows, PPH, PPW); let d = sel(rows, PDH, PDW);\n"
    "  var start = o * s - pd;\n  let end = min(start + (k - 1) * d + 1, inn);\n"
    "  if (start < 0) { start += ((d - 1 - start) / d) * d; }\n"
    "  let count = select(0, (end - start + d - 1) / d, start < end);\n"
    "  return vec3<i32>(start, count, count);\n}\n";
static const char win_avg[] =
    "fn win(rows: bool, o: i32) -> vec3<i32> {\n"
    "  let inn = sel(rows, PH, PW); let k = sel(rows, PKH, PKW); let s = sel(rows, PSH, PSW);\n"
    "  let pd = sel(rows, PPH, PPW);\n"
    "  let st = o * s - pd;\n  var end = min(st + k, inn + pd);\n  let pool = end - st;\n"
    "  let start = max(st, 0);\n  end = min(end, inn);\n"
    "  return vec3<i32>(start, max(end - start, 0), pool);\n}\n"
    "fn divisor(r: vec3<i32>, q: vec3<i32>) -> f32 {\n"
    "  if (p[PDIV] != 0u) { return f32(bitcast<i32>(p[PDIV])); }\n"
    "  if (p[PCIP] != 0u) { return f32(r.z * q.z); }\n"
    "  return f32(r.y * q.y);\n}\n";
static const char win_adaptive[] =
    "fn win(rows: bool, o: i32) -> vec3<i32> {\n"
    "  let inn = sel(rows, PH, PW); let out = sel(rows, POH, POW);\n"
    "  let start = (o / out) * inn + ((o % out) * inn) / out;\n"
    "  let end = 1 + ((o + 1) * inn - 1) / out;\n"
    "  return vec3<i32>(start, end - start, end - start);\n}\n"
    "fn divisor(r: vec3<i32>, q: vec3<i32>) -> f32 { return f32(r.y * q.y); }\n";

/* forward bodies, after (n, c, oy, ox) and the windows r, q */
static const char fwd_max[] =
    "  var m = bitcast<f32>(p[PNINF]);\n  var mi = r.x * i32(p[PW]) + q.x;\n"
    "  for (var i = 0; i < r.y; i++) {\n    let ih = r.x + i * i32(p[PDH]);\n"
    "    for (var j = 0; j < q.y; j++) {\n      let iw = q.x + j * i32(p[PDW]);\n"
    "      let v = bitcast<f32>(r1[ix4(TX, n, c, u32(ih), u32(iw))]);\n"
    "      if (v > m || nan(v)) { m = v; mi = ih * i32(p[PW]) + iw; }\n    }\n  }\n"
    "  o[ix4(TY, n, c, oy, ox)] = bitcast<u32>(m);\n";
static const char fwd_avg[] =
    "  var s = 0.0;\n"
    "  for (var ih = r.x; ih < r.x + r.y; ih++) {\n"
    "    for (var iw = q.x; iw < q.x + q.y; iw++) { s += bitcast<f32>(r1[ix4(TX, n, c, u32(ih), u32(iw))]); }\n  }\n"
    "  o[ix4(TY, n, c, oy, ox)] = bitcast<u32>(s / divisor(r, q));\n";

/* backward bodies, after (n, c, iy, ix): acc gathers the gradient */
static const char back_taps[] = /* %s: the term for output (oy, ox); dilation 1 for avg */
    "  for (var ky = 0; ky < i32(p[PKH]); ky++) {\n"
    "    let ty = i32(iy) + i32(p[PPH]) - ky * %s;\n"
    "    if (ty < 0 || ty %% i32(p[PSH]) != 0 || ty / i32(p[PSH]) >= i32(p[POH])) { continue; }\n"
    "    let oy = u32(ty / i32(p[PSH]));\n"
    "    for (var kx = 0; kx < i32(p[PKW]); kx++) {\n"
    "      let tx = i32(ix) + i32(p[PPW]) - kx * %s;\n"
    "      if (tx < 0 || tx %% i32(p[PSW]) != 0 || tx / i32(p[PSW]) >= i32(p[POW])) { continue; }\n"
    "      let ox = u32(tx / i32(p[PSW]));\n"
    "%s"
    "    }\n  }\n";
static const char term_max[] =
    "      if (bitcast<i32>(r2[ix4(TI, n, c, oy, ox)]) == i32(iy * p[PW] + ix)) {\n"
    "        acc += bitcast<f32>(r1[ix4(TY, n, c, oy, ox)]);\n      }\n";
static const char term_avg[] =
    "      acc += bitcast<f32>(r1[ix4(TY, n, c, oy, ox)]) / divisor(win(true, i32(oy)), win(false, i32(ox)));\n";
static const char back_adaptive[] =
    "  for (var oy = 0; oy < i32(p[POH]); oy++) {\n    let r = win(true, oy);\n"
    "    if (i32(iy) < r.x || i32(iy) >= r.x + r.y) { continue; }\n"
    "    for (var ox = 0; ox < i32(p[POW]); ox++) {\n      let q = win(false, ox);\n"
    "      if (i32(ix) < q.x || i32(ix) >= q.x + q.y) { continue; }\n"
    "      acc += bitcast<f32>(r1[ix4(TY, n, c, u32(oy), u32(ox))]) / divisor(r, q);\n    }\n  }\n";

static void put_bindings(weft__strbuf* b, const weft__webgpu_pool* d, weft__webgpu_program* p) {
  weft__strbuf_put(b, "@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n");
  p->buffers[p->nbuffers++] = d->backward ? d->x.buffer : d->y.buffer;
  if (!d->backward && d->indices) {
    weft__strbuf_put(b, "@group(0) @binding(1) var<storage, read_write> oi: array<u32>;\n");
    p->buffers[p->nbuffers++] = d->idx.buffer;
  }
  weft__strbuf_put(b, "@group(0) @binding(%d) var<storage, read> r1: array<u32>;\n", p->nbuffers);
  p->buffers[p->nbuffers++] = d->backward ? d->y.buffer : d->x.buffer;
  if (d->backward && d->kind == WEFT_WEBGPU_POOL_MAX) {
    weft__strbuf_put(b, "@group(0) @binding(%d) var<storage, read> r2: array<u32>;\n", p->nbuffers);
    p->buffers[p->nbuffers++] = d->idx.buffer;
  }
  weft__strbuf_put(b, "@group(0) @binding(%d) var<storage, read> p: array<u32>;\n", p->nbuffers);
}

static void put_body(weft__strbuf* b, const weft__webgpu_pool* d) {
  bool max = d->kind == WEFT_WEBGPU_POOL_MAX;
  weft__strbuf_put(b, "%s", prelude);
  weft__strbuf_put(b, "%s", max ? win_max : d->kind == WEFT_WEBGPU_POOL_AVG ? win_avg : win_adaptive);
  weft__strbuf_put(b,
                   "@compute @workgroup_size(%d)\n"
                   "fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {\n"
                   "  let idx = gid.y * nwg.x * %du + gid.x;\n  if (idx >= p[0]) { return; }\n",
                   WEFT_WEBGPU_WORKGROUP, WEFT_WEBGPU_WORKGROUP);
  if (!d->backward) {
    weft__strbuf_put(b, "  let ox = idx %% p[POW]; let t = idx / p[POW]; let oy = t %% p[POH]; let t2 = t / p[POH];\n"
                        "  let c = t2 %% p[PC]; let n = t2 / p[PC];\n"
                        "  let r = win(true, i32(oy)); let q = win(false, i32(ox));\n");
    weft__strbuf_put(b, "%s", max ? fwd_max : fwd_avg);
    if (max && d->indices) weft__strbuf_put(b, "  oi[ix4(TI, n, c, oy, ox)] = bitcast<u32>(mi);\n");
  } else {
    weft__strbuf_put(b, "  let ix = idx %% p[PW]; let t = idx / p[PW]; let iy = t %% p[PH]; let t2 = t / p[PH];\n"
                        "  let c = t2 %% p[PC]; let n = t2 / p[PC];\n  var acc = 0.0;\n");
    if (d->kind == WEFT_WEBGPU_POOL_ADAPTIVE) weft__strbuf_put(b, "%s", back_adaptive);
    else if (max) weft__strbuf_put(b, back_taps, "i32(p[PDH])", "i32(p[PDW])", term_max);
    else weft__strbuf_put(b, back_taps, "1", "1", term_avg);
    weft__strbuf_put(b, "  o[ix4(TX, n, c, iy, ix)] = bitcast<u32>(acc);\n");
  }
  weft__strbuf_put(b, "}\n");
}

weft_status weft__webgpu_pool_program(const char* op, const weft__webgpu_pool* d, weft__webgpu_program* p) {
  memset(p, 0, sizeof *p);
  int64_t count = d->backward ? d->n * d->c * d->h * d->w : d->n * d->c * d->oh * d->ow;
  const int64_t geom[16] = {d->n, d->c, d->h, d->w, d->oh, d->ow, d->kh, d->kw, d->sh, d->sw,
                            d->ph, d->pw, d->dh, d->dw, d->count_include_pad, d->divisor_override};
  bool ok = count <= INT32_MAX && weft__webgpu_t4_fits(&d->x, d->n, d->c, d->h, d->w) && weft__webgpu_t4_fits(&d->y, d->n, d->c, d->oh, d->ow) &&
            d->h * d->w <= INT32_MAX && (d->kind != WEFT_WEBGPU_POOL_MAX || (!d->indices && !d->backward) ||
                                         weft__webgpu_t4_fits(&d->idx, d->n, d->c, d->oh, d->ow));
  for (int i = 0; i < 16 && ok; i++) ok = geom[i] >= INT32_MIN && geom[i] <= INT32_MAX;
  if (!ok)
    return weft__error(WEFT_NOT_IMPLEMENTED, "%s: a webgpu tensor this large (2**31 elements or more) is not supported",
                       op);
  snprintf(p->key, sizeof p->key, "pool:%s:%s%s", d->kind == WEFT_WEBGPU_POOL_MAX ? "max" : d->kind == WEFT_WEBGPU_POOL_AVG ? "avg" : "adaptive",
           d->backward ? "back" : "fwd", d->indices && !d->backward ? ":idx" : "");
  weft__strbuf b = {0};
  put_bindings(&b, d, p);
  put_body(&b, d);
  if (!(p->wgsl = weft__strbuf_finish(&b, op))) return weft_last_status();
  int n = 0;
  p->params[n++] = (uint32_t)count;
  for (int i = 0; i < 16; i++) p->params[n++] = (uint32_t)(int32_t)geom[i];
  n += weft__webgpu_put_t4(p->params + n, &d->x);
  n += weft__webgpu_put_t4(p->params + n, &d->y);
  n += weft__webgpu_put_t4(p->params + n, &d->idx);
  p->params[n++] = 0xff800000u;
  p->nparams = n;
  uint32_t groups = (uint32_t)((count + WEFT_WEBGPU_WORKGROUP - 1) / WEFT_WEBGPU_WORKGROUP);
  p->grid[0] = groups < 65535u ? (groups ? groups : 1u) : 65535u;
  p->grid[1] = (groups + p->grid[0] - 1) / p->grid[0];
  if (!p->grid[1]) p->grid[1] = 1;
  p->grid[2] = 1;
  return WEFT_OK;
}
