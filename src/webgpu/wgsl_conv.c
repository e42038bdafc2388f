/* The convolution members of the tiled GEMM family (webgpu.h): conv2d and
 * its three gradients as implicit GEMMs. The A / B loaders compute the
 * im2col element on the fly from the tensors' own strides (zero in the
 * padding), so any memory format runs without a layout copy; groups are the
 * GEMM's batch. Geometry and operands are parameters: one pipeline per kind
 * (and bias or not). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "webgpu/wgsl_gemm.h"

/* p[4..20]: the geometry, p[21..35]: x, w, y as (offset, 4 strides), p[36..37]: bias (offset, stride) */
static const char prelude[] =
    "const GN = 4u; const GC = 5u; const GH = 6u; const GW = 7u; const GCOUT = 8u; const GKH = 9u; const GKW = 10u;\n"
    "const GSH = 11u; const GSW = 12u; const GPH = 13u; const GPW = 14u; const GDH = 15u; const GDW = 16u;\n"
    "const GCG = 17u; const GCOUTG = 18u; const GHO = 19u; const GWO = 20u;\n"
    "const TX = 21u; const TW = 26u; const TY = 31u; const TB = 36u;\n"
    "fn ix4(t: u32, n: u32, c: u32, y: u32, x: u32) -> u32 {\n"
    "  return p[t] + n * p[t + 1u] + c * p[t + 2u] + y * p[t + 3u] + x * p[t + 4u];\n}\n";

/* the input under tap (ky, kx) of output (oy, ox), zero in the padding; %s: x's binding */
static const char xin_fn[] =
    "fn xin(n: u32, c: u32, oy: u32, ox: u32, ky: u32, kx: u32) -> T {\n"
    "  let iy = i32(oy * p[GSH] + ky * p[GDH]) - i32(p[GPH]);\n"
    "  let ix = i32(ox * p[GSW] + kx * p[GDW]) - i32(p[GPW]);\n"
    "  if (iy < 0 || ix < 0 || iy >= i32(p[GH]) || ix >= i32(p[GW])) { return T(0); }\n"
    "  return bitcast<T>(%s[ix4(TX, n, c, u32(iy), u32(ix))]);\n}\n";

/* forward: i = (n, oy, ox), k = (ci, ky, kx), j = the group's output channel */
static const char forward_fns[] =
    "fn lda(bt: u32, i: u32, k: u32) -> T {\n"
    "  let ox = i %% p[GWO]; let t = i / p[GWO]; let oy = t %% p[GHO]; let n = t / p[GHO];\n"
    "  let kx = k %% p[GKW]; let t2 = k / p[GKW]; let ky = t2 %% p[GKH]; let ci = t2 / p[GKH];\n"
    "  return xin(n, bt * p[GCG] + ci, oy, ox, ky, kx);\n}\n"
    "fn ldb(bt: u32, k: u32, j: u32) -> T {\n"
    "  let kx = k %% p[GKW]; let t2 = k / p[GKW]; let ky = t2 %% p[GKH]; let ci = t2 / p[GKH];\n"
    "  return bitcast<T>(r2[ix4(TW, bt * p[GCOUTG] + j, ci, ky, kx)]);\n}\n"
    "fn stc(bt: u32, i: u32, j: u32, v: T) {\n"
    "  let ox = i %% p[GWO]; let t = i / p[GWO]; let oy = t %% p[GHO]; let n = t / p[GHO];\n"
    "  let co = bt * p[GCOUTG] + j;\n"
    "  o[ix4(TY, n, co, oy, ox)] = bitcast<u32>(v%s);\n}\n";

/* the input's gradient: i = (n, iy, ix), k = (co, ky, kx), j = the group's input channel;
 * A is grad_output at the output whose tap (ky, kx) reads (iy, ix), if any */
static const char grad_input_fns[] =
    "fn lda(bt: u32, i: u32, k: u32) -> T {\n"
    "  let x = i % p[GW]; let t = i / p[GW]; let y = t % p[GH]; let n = t / p[GH];\n"
    "  let kx = k % p[GKW]; let t2 = k / p[GKW]; let ky = t2 % p[GKH]; let co = t2 / p[GKH];\n"
    "  let ty = i32(y + p[GPH]) - i32(ky * p[GDH]); let tx = i32(x + p[GPW]) - i32(kx * p[GDW]);\n"
    "  if (ty < 0 || tx < 0) { return T(0); }\n"
    "  let uy = u32(ty); let ux = u32(tx);\n"
    "  if (uy % p[GSH] != 0u || ux % p[GSW] != 0u) { return T(0); }\n"
    "  let oy = uy / p[GSH]; let ox = ux / p[GSW];\n"
    "  if (oy >= p[GHO] || ox >= p[GWO]) { return T(0); }\n"
    "  return bitcast<T>(r1[ix4(TY, n, bt * p[GCOUTG] + co, oy, ox)]);\n}\n"
    "fn ldb(bt: u32, k: u32, j: u32) -> T {\n"
    "  let kx = k % p[GKW]; let t2 = k / p[GKW]; let ky = t2 % p[GKH]; let co = t2 / p[GKH];\n"
    "  return bitcast<T>(r2[ix4(TW, bt * p[GCOUTG] + co, j, ky, kx)]);\n}\n"
    "fn stc(bt: u32, i: u32, j: u32, v: T) {\n"
    "  let x = i % p[GW]; let t = i / p[GW]; let y = t % p[GH]; let n = t / p[GH];\n"
    "  o[ix4(TX, n, bt * p[GCG] + j, y, x)] = bitcast<u32>(v);\n}\n";

/* grad_output as A: i = the output channel (of the group), k = (n, oy, ox) */
static const char gy_rows_fn[] =
    "fn lda(bt: u32, i: u32, k: u32) -> T {\n"
    "  let ox = k % p[GWO]; let t = k / p[GWO]; let oy = t % p[GHO]; let n = t / p[GHO];\n"
    "  return bitcast<T>(r1[ix4(TY, n, bt * p[GCOUTG] + i, oy, ox)]);\n}\n";

/* the weight's gradient: j = (ci, ky, kx) */
static const char grad_weight_fns[] =
    "fn ldb(bt: u32, k: u32, j: u32) -> T {\n"
    "  let ox = k % p[GWO]; let t = k / p[GWO]; let oy = t % p[GHO]; let n = t / p[GHO];\n"
    "  let kx = j % p[GKW]; let t2 = j / p[GKW]; let ky = t2 % p[GKH]; let ci = t2 / p[GKH];\n"
    "  return xin(n, bt * p[GCG] + ci, oy, ox, ky, kx);\n}\n"
    "fn stc(bt: u32, i: u32, j: u32, v: T) {\n"
    "  let kx = j % p[GKW]; let t2 = j / p[GKW]; let ky = t2 % p[GKH]; let ci = t2 / p[GKH];\n"
    "  o[ix4(TW, bt * p[GCOUTG] + i, ci, ky, kx)] = bitcast<u32>(v);\n}\n";

/* the bias's gradient: grad_output's rows times ones */
static const char grad_bias_fns[] =
    "fn ldb(bt: u32, k: u32, j: u32) -> T { return T(1); }\n"
    "fn stc(bt: u32, i: u32, j: u32, v: T) { o[p[TB] + i * p[TB + 1u]] = bitcast<u32>(v); }\n";

static char* functions(const weft__webgpu_conv* d, const char* op) {
  weft__strbuf b = {0};
  weft__strbuf_put(&b, "%s", prelude);
  switch (d->kind) {
    case WEFT_WEBGPU_CONV_FORWARD:
      weft__strbuf_put(&b, xin_fn, "r1");
      weft__strbuf_put(&b, forward_fns, d->has_bias ? " + bitcast<T>(r3[p[TB] + co * p[TB + 1u]])" : "");
      break;
    case WEFT_WEBGPU_CONV_GRAD_INPUT: weft__strbuf_put(&b, "%s", grad_input_fns); break;
    case WEFT_WEBGPU_CONV_GRAD_WEIGHT:
      weft__strbuf_put(&b, xin_fn, "r2");
      weft__strbuf_put(&b, "%s%s", gy_rows_fn, grad_weight_fns);
      break;
    case WEFT_WEBGPU_CONV_GRAD_BIAS: weft__strbuf_put(&b, "%s%s", gy_rows_fn, grad_bias_fns); break;
  }
  return weft__strbuf_finish(&b, op);
}

/* the GEMM's batch, m, n, k and its buffers for d's kind */
static void shape_of(const weft__webgpu_conv* d, weft__gemm_member* g) {
  int64_t cg = d->c / d->groups, coutg = d->cout / d->groups, taps = d->kh * d->kw;
  g->batch = d->groups;
  switch (d->kind) {
    case WEFT_WEBGPU_CONV_FORWARD:
      g->key = d->has_bias ? "conv:fwd:b" : "conv:fwd";
      g->m = d->n * d->ho * d->wo, g->n = coutg, g->k = cg * taps;
      g->out = d->y.buffer, g->nread = d->has_bias ? 3 : 2;
      g->read[0] = d->x.buffer, g->read[1] = d->wt.buffer, g->read[2] = d->bias.buffer;
      break;
    case WEFT_WEBGPU_CONV_GRAD_INPUT:
      g->key = "conv:dx";
      g->m = d->n * d->h * d->w, g->n = cg, g->k = coutg * taps;
      g->out = d->x.buffer, g->nread = 2, g->read[0] = d->y.buffer, g->read[1] = d->wt.buffer;
      break;
    case WEFT_WEBGPU_CONV_GRAD_WEIGHT:
      g->key = "conv:dw";
      g->m = coutg, g->n = cg * taps, g->k = d->n * d->ho * d->wo;
      g->out = d->wt.buffer, g->nread = 2, g->read[0] = d->y.buffer, g->read[1] = d->x.buffer;
      break;
    case WEFT_WEBGPU_CONV_GRAD_BIAS:
      g->key = "conv:db";
      g->batch = 1, g->m = d->cout, g->n = 1, g->k = d->n * d->ho * d->wo;
      g->out = d->bias.buffer, g->nread = 1, g->read[0] = d->y.buffer;
      break;
  }
}

weft_status weft__webgpu_conv_program(const char* op, const weft__webgpu_conv* d, weft__webgpu_program* p) {
  memset(p, 0, sizeof *p);
  bool reads_x = d->kind != WEFT_WEBGPU_CONV_GRAD_BIAS, reads_w = d->kind < WEFT_WEBGPU_CONV_GRAD_WEIGHT;
  bool ok = (!reads_x || weft__webgpu_t4_fits(&d->x, d->n, d->c, d->h, d->w)) &&
            (!reads_w || weft__webgpu_t4_fits(&d->wt, d->cout, d->c / d->groups, d->kh, d->kw)) &&
            weft__webgpu_t4_fits(&d->y, d->n, d->cout, d->ho, d->wo);
  const int64_t bsize = d->cout, bstride = d->bias.strides[0];
  if (ok && (d->has_bias || d->kind == WEFT_WEBGPU_CONV_GRAD_BIAS))
    ok = weft__webgpu_fits(d->bias.offset, &bsize, &bstride, 1);
  const int64_t geom[17] = {d->n, d->c, d->h, d->w, d->cout, d->kh, d->kw, d->sh, d->sw, d->ph, d->pw,
                            d->dh, d->dw, d->c / d->groups, d->cout / d->groups, d->ho, d->wo};
  for (int i = 0; i < 17 && ok; i++) ok = geom[i] >= 0 && geom[i] <= INT32_MAX;
  if (!ok)
    return weft__error(WEFT_NOT_IMPLEMENTED, "%s: a webgpu tensor this large (2**31 elements or more) is not supported",
                       op);
  weft__gemm_member g = {.dtype = WEFT_FLOAT32};
  shape_of(d, &g);
  int n = 0;
  for (int i = 0; i < 17; i++) g.params[n++] = (uint32_t)geom[i];
  n += weft__webgpu_put_t4(g.params + n, &d->x);
  n += weft__webgpu_put_t4(g.params + n, &d->wt);
  n += weft__webgpu_put_t4(g.params + n, &d->y);
  g.params[n++] = (uint32_t)d->bias.offset;
  g.params[n++] = (uint32_t)d->bias.strides[0];
  g.nparams = n;
  char* fns = functions(d, op);
  if (!fns) return weft_last_status();
  g.functions = fns;
  weft_status s = weft__gemm_program(op, &g, p);
  free(fns);
  return s;
}
