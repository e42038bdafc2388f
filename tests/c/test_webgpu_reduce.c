/* The row-reduction family's WGSL generator (src/webgpu/wgsl_reduce.c):
 * its pipeline keys, parameter words, grids and the text of the one-pass
 * and split programs. The kernels themselves run in Chromium
 * (tests/browser/webgpu-reduce.test.mjs). */
#include "test.h"
#include "webgpu/webgpu.h"

/* a sum of rows of a [3, 4, 5] tensor over its last two dims into a bool output */
static weft__webgpu_reduce sample(void) {
  weft__webgpu_reduce r = {0};
  r.name = "sum";
  r.state = "f32";
  r.identity = "0.0";
  r.lift = "a0";
  r.comb = "return a + b;";
  r.state_words = 1;
  r.compute = WEFT_FLOAT32;
  r.row_expr[0] = "st";
  r.nops = 2;
  r.role[0] = WEFT_WEBGPU_RED_ROW_OUT;
  r.role[1] = WEFT_WEBGPU_RED_IN;
  r.dtype[0] = WEFT_BOOL;
  r.dtype[1] = WEFT_FLOAT32;
  r.buffer[0] = 7;
  r.buffer[1] = 8;
  r.offset[1] = 2;
  r.nkept = 1;
  r.kept[0] = 3;
  r.kstride[0][0] = 1;
  r.kstride[1][0] = 20;
  r.nred = 2;
  r.red[0] = 5;
  r.red[1] = 4;
  r.rstride[1][0] = 1;
  r.rstride[1][1] = 5;
  r.rows = 3;
  r.count = 20;
  r.groups = 1;
  r.chunk = 20;
  return r;
}

static void test_one_pass(void) {
  weft__webgpu_reduce r = sample();
  weft__webgpu_program p;
  CHECK(weft__webgpu_reduce_program("sum", &r, 0, 0, &p) == WEFT_OK);
  CHECK(strcmp(p.key, "red:sum:0:1:2:float32:rbool:ifloat32") == 0);
  CHECK(p.grid[0] == 3 && p.grid[1] == 1 && p.grid[2] == 1);
  CHECK(p.nbuffers == 2 && p.buffers[0] == 7 && p.buffers[1] == 8);
  /* [rows, count, groups, chunk, offsets(2), kept size, reduced sizes(2), kept strides(2), reduced strides(4)] */
  const uint32_t want[] = {3, 20, 1, 20, 0, 2, 3, 5, 4, 1, 20, 0, 0, 1, 5};
  CHECK(p.nparams == 15);
  for (int i = 0; i < 15; i++) CHECK_EQ_I64(p.params[i], want[i]);
  /* the tree in workgroup memory, the bool output through word atomics */
  CHECK(strstr(p.wgsl, "var<workgroup> sh: array<f32, 64>;") != NULL);
  CHECK(strstr(p.wgsl, "if (lid < h) { sh[lid] = comb(sh[lid], sh[lid + h]); }") != NULL);
  CHECK(strstr(p.wgsl, "workgroupBarrier();") != NULL);
  CHECK(strstr(p.wgsl, "atomicOr(&b0[i >> 2u]") != NULL);
  CHECK(strstr(p.wgsl, "st0(o0, st);") != NULL);
  weft__webgpu_program_free(&p);
}

static void test_split(void) {
  weft__webgpu_reduce r = sample();
  r.groups = 4;
  r.chunk = 5;
  weft__webgpu_program p;
  CHECK(weft__webgpu_reduce_program("sum", &r, 1, 9, &p) == WEFT_OK);
  /* pass 1: the input and the partials; a workgroup per (row, chunk) */
  CHECK(p.nbuffers == 2 && p.buffers[0] == 8 && p.buffers[1] == 9);
  CHECK(p.grid[0] == 12);
  CHECK(strstr(p.wgsl, "var<storage, read_write> tp: array<u32>;") != NULL);
  CHECK(strstr(p.wgsl, "tp[w] = bitcast<u32>(st);") != NULL);
  CHECK(strstr(p.wgsl, "let hi = min(lo + p[3], p[1]);") != NULL);
  weft__webgpu_program_free(&p);
  /* pass 2: the outputs and the partials, a workgroup per row */
  CHECK(weft__webgpu_reduce_program("sum", &r, 2, 9, &p) == WEFT_OK);
  CHECK(p.nbuffers == 2 && p.buffers[0] == 7 && p.buffers[1] == 9);
  CHECK(p.grid[0] == 3);
  CHECK(strstr(p.wgsl, "s = comb(s, tld(row * p[2] + j));") != NULL);
  CHECK(strcmp(p.key, "red:sum:2:1:2:float32:rbool:ifloat32") == 0);
  weft__webgpu_program_free(&p);
}

/* no lift: an elementwise pass over rows, each row in `groups` chunks of a workgroup each */
static void test_stateless(void) {
  weft__webgpu_reduce r = sample();
  r.lift = NULL;
  r.role[0] = WEFT_WEBGPU_RED_ELEM_OUT;
  r.dtype[0] = WEFT_FLOAT32;
  r.elem_expr = "a0 * 2.0";
  r.groups = 2;
  r.chunk = 10;
  weft__webgpu_program p;
  CHECK(weft__webgpu_reduce_program("mul", &r, 0, 0, &p) == WEFT_OK);
  CHECK(p.grid[0] == 6);
  CHECK(strstr(p.wgsl, "let lo = g * p[3];") != NULL);
  CHECK(strstr(p.wgsl, "for (var e = lo + lid; e < hi; e += 64u)") != NULL);
  CHECK(strstr(p.wgsl, "st0(i0, a0 * 2.0);") != NULL);
  CHECK(strstr(p.wgsl, "workgroupBarrier") == NULL);
  weft__webgpu_program_free(&p);
}

static void test_refusals(void) {
  weft__webgpu_reduce r = sample();
  r.kept[0] = 1LL << 32;
  r.rows = 1LL << 32;
  weft__webgpu_program p;
  CHECK(weft__webgpu_reduce_program("sum", &r, 0, 0, &p) == WEFT_NOT_IMPLEMENTED);
  CHECK_ERROR_HAS("sum: a webgpu tensor this large (2**32 elements or more) is not supported");
  weft_clear_error();
  r = sample();
  r.rows = 4; /* disagrees with the kept sizes */
  CHECK(weft__webgpu_reduce_program("sum", &r, 0, 0, &p) == WEFT_INTERNAL);
  weft_clear_error();
}

int main(void) {
  weft_init();
  test_one_pass();
  test_split();
  test_stateless();
  test_refusals();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
