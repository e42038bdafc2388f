/* The tiled GEMM family's WGSL (wgsl_gemm.h): one template, a 64 x 64 tile
 * of C per workgroup of 16 x 16 invocations, each accumulating a 4 x 4
 * block (rows lid.y + 16 r, columns lid.x + 16 c, so neighbours read
 * neighbouring words of workgroup memory); K runs in steps of 16 staged in
 * var<workgroup> tiles of A and B. Members say how an element of A, B and
 * C is found (a strided matrix here, a convolution's implicit im2col in
 * wgsl_conv.c), as tfjs's matmul_packed_webgpu.ts and ORT's conv2d_mm take
 * their loaders from the caller. Sizes are parameters: one pipeline per
 * member, dtype and epilogue. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "webgpu/wgsl_gemm.h"

enum { TILE = 64, KTILE = 16, SIDE = 16 };

bool weft__webgpu_fits(int64_t off, const int64_t* sizes, const int64_t* strides, int n) {
  if (off < 0 || off > (int64_t)UINT32_MAX) return false;
  int64_t last = off;
  for (int d = 0; d < n; d++) {
    if (sizes[d] == 0) return true; /* no element is read */
    if (strides[d] < 0 || strides[d] > (int64_t)UINT32_MAX || sizes[d] > (int64_t)UINT32_MAX) return false;
    last += (sizes[d] - 1) * strides[d];
    if (last > (int64_t)UINT32_MAX) return false;
  }
  return true;
}

bool weft__webgpu_t4_fits(const weft__webgpu_t4* t, int64_t a, int64_t b, int64_t c, int64_t d) {
  const int64_t sizes[4] = {a, b, c, d};
  return weft__webgpu_fits(t->offset, sizes, t->strides, 4);
}

int weft__webgpu_put_t4(uint32_t* q, const weft__webgpu_t4* t) {
  q[0] = (uint32_t)t->offset;
  for (int i = 0; i < 4; i++) q[1 + i] = (uint32_t)t->strides[i];
  return 5;
}

static void put_main(weft__strbuf* b) {
  weft__strbuf_put(b,
                   "@compute @workgroup_size(%d, %d, 1)\n"
                   "fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {\n"
                   "  let bt = wg.z;\n  let row0 = wg.y * %du;\n  let col0 = wg.x * %du;\n"
                   "  let t = lid.y * %du + lid.x;\n  let M = p[1];\n  let N = p[2];\n  let K = p[3];\n"
                   "  var acc: array<array<T, 4>, 4>;\n",
                   SIDE, SIDE, TILE, TILE, SIDE);
  /* stage A (64 rows x 16 k, k fastest) and B (16 k x 64 columns, columns fastest) */
  weft__strbuf_put(b,
                   "  for (var k0 = 0u; k0 < K; k0 += %du) {\n"
                   "    for (var q = 0u; q < 4u; q++) {\n"
                   "      let e = t + q * %du;\n"
                   "      let ka = e %% %du;\n      let ia = e / %du;\n      var va = T(0);\n"
                   "      if (row0 + ia < M && k0 + ka < K) { va = lda(bt, row0 + ia, k0 + ka); }\n"
                   "      ta[ka][ia] = va;\n"
                   "      let jb = e %% %du;\n      let kb = e / %du;\n      var vb = T(0);\n"
                   "      if (col0 + jb < N && k0 + kb < K) { vb = ldb(bt, k0 + kb, col0 + jb); }\n"
                   "      tb[kb][jb] = vb;\n"
                   "    }\n    workgroupBarrier();\n",
                   KTILE, SIDE * SIDE, KTILE, KTILE, TILE, TILE);
  weft__strbuf_put(b,
                   "    for (var kk = 0u; kk < %du; kk++) {\n"
                   "      var ra: array<T, 4>;\n      var rb: array<T, 4>;\n"
                   "      for (var x = 0u; x < 4u; x++) { ra[x] = ta[kk][lid.y + %du * x]; rb[x] = tb[kk][lid.x + %du * x]; }\n"
                   "      for (var x = 0u; x < 4u; x++) { for (var y = 0u; y < 4u; y++) { acc[x][y] += ra[x] * rb[y]; } }\n"
                   "    }\n    workgroupBarrier();\n  }\n",
                   KTILE, SIDE, SIDE);
  weft__strbuf_put(b,
                   "  for (var x = 0u; x < 4u; x++) {\n    for (var y = 0u; y < 4u; y++) {\n"
                   "      let i = row0 + lid.y + %du * x;\n      let j = col0 + lid.x + %du * y;\n"
                   "      if (i < M && j < N) { stc(bt, i, j, acc[x][y]); }\n    }\n  }\n}\n",
                   SIDE, SIDE);
}

static uint32_t tiles(int64_t n) { return (uint32_t)((n + TILE - 1) / TILE); }

weft_status weft__gemm_program(const char* op, const weft__gemm_member* g, weft__webgpu_program* p) {
  memset(p, 0, sizeof *p);
  const int64_t mnk[4] = {g->batch, g->m, g->n, g->k};
  for (int i = 0; i < 4; i++)
    if (mnk[i] < 0 || mnk[i] > (int64_t)UINT32_MAX)
      return weft__error(WEFT_NOT_IMPLEMENTED, "%s: a webgpu tensor this large (2**32 elements or more) is not supported",
                         op);
  if (tiles(g->m) > 65535 || tiles(g->n) > 65535 || g->batch > 65535)
    return weft__error(WEFT_NOT_IMPLEMENTED,
                       "%s: a product of %lld x %lld (batch %lld) passes WebGPU's 65535 workgroups a dimension "
                       "(64 x 64 tiles): split it", op, (long long)g->m, (long long)g->n, (long long)g->batch);
  snprintf(p->key, sizeof p->key, "gemm:%s:%s", g->key, weft_dtype_name(g->dtype));
  weft__strbuf b = {0};
  weft__strbuf_put(&b, "alias T = %s;\n", g->dtype == WEFT_INT32 ? "i32" : "f32");
  weft__strbuf_put(&b, "@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n");
  p->buffers[p->nbuffers++] = g->out;
  for (int i = 0; i < g->nread; i++) {
    weft__strbuf_put(&b, "@group(0) @binding(%d) var<storage, read> r%d: array<u32>;\n", p->nbuffers, i + 1);
    p->buffers[p->nbuffers++] = g->read[i];
  }
  weft__strbuf_put(&b, "@group(0) @binding(%d) var<storage, read> p: array<u32>;\n", p->nbuffers);
  weft__strbuf_put(&b, "var<workgroup> ta: array<array<T, %d>, %d>;\nvar<workgroup> tb: array<array<T, %d>, %d>;\n",
                   TILE, KTILE, TILE, KTILE);
  weft__strbuf_put(&b, "%s", g->functions);
  put_main(&b);
  if (!(p->wgsl = weft__strbuf_finish(&b, op))) return weft_last_status();
  for (int i = 0; i < 4; i++) p->params[i] = (uint32_t)mnk[i];
  memcpy(p->params + WEFT_GEMM_FIRST_PARAM, g->params, sizeof(uint32_t) * (size_t)g->nparams);
  p->nparams = WEFT_GEMM_FIRST_PARAM + g->nparams;
  p->grid[0] = tiles(g->n) ? tiles(g->n) : 1;
  p->grid[1] = tiles(g->m) ? tiles(g->m) : 1;
  p->grid[2] = g->batch ? (uint32_t)g->batch : 1;
  p->workgroup[0] = SIDE, p->workgroup[1] = SIDE, p->workgroup[2] = 1;
  return WEFT_OK;
}

/* ---- the strided matmul member: C = alpha A B (+ beta D) ---- */

/* p[4..]: A, B, C as (offset, batch, row, column strides), alpha, beta, D's four */
static const char* matmul_functions(bool has_d) {
  return has_d
             ? "fn lda(bt: u32, i: u32, k: u32) -> T { return bitcast<T>(r1[p[4] + bt * p[5] + i * p[6] + k * p[7]]); }\n"
               "fn ldb(bt: u32, k: u32, j: u32) -> T { return bitcast<T>(r2[p[8] + bt * p[9] + k * p[10] + j * p[11]]); }\n"
               "fn stc(bt: u32, i: u32, j: u32, v: T) {\n"
               "  let d = bitcast<T>(r3[p[18] + bt * p[19] + i * p[20] + j * p[21]]);\n"
               "  o[p[12] + bt * p[13] + i * p[14] + j * p[15]] = bitcast<u32>(bitcast<T>(p[16]) * v + bitcast<T>(p[17]) * d);\n}\n"
             : "fn lda(bt: u32, i: u32, k: u32) -> T { return bitcast<T>(r1[p[4] + bt * p[5] + i * p[6] + k * p[7]]); }\n"
               "fn ldb(bt: u32, k: u32, j: u32) -> T { return bitcast<T>(r2[p[8] + bt * p[9] + k * p[10] + j * p[11]]); }\n"
               "fn stc(bt: u32, i: u32, j: u32, v: T) {\n"
               "  o[p[12] + bt * p[13] + i * p[14] + j * p[15]] = bitcast<u32>(bitcast<T>(p[16]) * v);\n}\n";
}

static bool mat_fits(const weft__webgpu_mat* t, int64_t b, int64_t r, int64_t c) {
  const int64_t sizes[3] = {b, r, c}, strides[3] = {t->sb, t->sr, t->sc};
  return weft__webgpu_fits(t->offset, sizes, strides, 3);
}

static int put_mat(uint32_t* q, const weft__webgpu_mat* t) {
  q[0] = (uint32_t)t->offset, q[1] = (uint32_t)t->sb, q[2] = (uint32_t)t->sr, q[3] = (uint32_t)t->sc;
  return 4;
}

weft_status weft__webgpu_matmul_program(const char* op, const weft__webgpu_matmul* d, weft__webgpu_program* p) {
  memset(p, 0, sizeof *p);
  if (!mat_fits(&d->a, d->batch, d->m, d->k) || !mat_fits(&d->b, d->batch, d->k, d->n) ||
      !mat_fits(&d->c, d->batch, d->m, d->n) || (d->has_d && !mat_fits(&d->d, d->batch, d->m, d->n)))
    return weft__error(WEFT_NOT_IMPLEMENTED, "%s: a webgpu tensor this large (2**32 elements or more) is not supported",
                       op);
  weft__gemm_member g = {.key = d->has_d ? "matmul:d" : "matmul", .dtype = d->dtype, .batch = d->batch, .m = d->m,
                         .n = d->n, .k = d->k, .out = d->c.buffer, .nread = d->has_d ? 3 : 2,
                         .read = {d->a.buffer, d->b.buffer, d->d.buffer}, .functions = matmul_functions(d->has_d)};
  int n = put_mat(g.params, &d->a);
  n += put_mat(g.params + n, &d->b);
  n += put_mat(g.params + n, &d->c);
  g.params[n++] = d->alpha;
  g.params[n++] = d->beta;
  if (d->has_d) n += put_mat(g.params + n, &d->d);
  g.nparams = n;
  return weft__gemm_program(op, &g, p);
}
