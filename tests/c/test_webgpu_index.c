/* The WGSL of the in-place map (inputs read through the output's binding),
 * the index family and nll_loss (src/webgpu/wgsl.c, wgsl_index.c): keys,
 * bindings, parameter words and grids. Pure text generation, so it runs
 * natively; the programs themselves run in Chromium
 * (tests/browser/webgpu-index.test.mjs). */
#include "test.h"
#include "webgpu/webgpu.h"

static void test_inplace_map(void) {
  /* out = a0 * a1 with both inputs the output's own elements: one binding */
  weft__webgpu_map m = {.name = "mul_", .expr = "a0 * a1", .compute = WEFT_FLOAT32, .result = WEFT_FLOAT32, .nin = 2,
                        .ndim = 1, .numel = 5, .sizes = {5}, .dtype = {WEFT_FLOAT32, WEFT_FLOAT32, WEFT_FLOAT32},
                        .buffer = {4, 4, 4}, .strides = {{1}, {1}, {1}}, .alias = {false, true, true}};
  weft__webgpu_program p;
  CHECK(weft__webgpu_map_program("mul_", &m, &p) == WEFT_OK);
  CHECK(strcmp(p.key, "map:mul_:1:float32:float32:float32:float32:a1:a2") == 0);
  CHECK_EQ_I64(p.nbuffers, 1);
  CHECK(strstr(p.wgsl, "@binding(1) var<storage, read> p: array<u32>") != NULL);
  CHECK(strstr(p.wgsl, "fn ld1(i: u32) -> f32 { return bitcast<f32>(b0[i]); }") != NULL);
  CHECK(strstr(p.wgsl, "fn ld2(i: u32) -> f32 { return bitcast<f32>(b0[i]); }") != NULL);
  weft__webgpu_program_free(&p);
  /* a bool output is atomic words: its own bytes are read with atomicLoad */
  m.dtype[0] = m.dtype[1] = m.dtype[2] = WEFT_BOOL;
  m.compute = m.result = WEFT_BOOL;
  m.expr = "a0 && a1";
  m.alias[2] = false;
  m.buffer[2] = 7;
  CHECK(weft__webgpu_map_program("mul_", &m, &p) == WEFT_OK);
  CHECK_EQ_I64(p.nbuffers, 2);
  CHECK_EQ_I64(p.buffers[1], 7);
  CHECK(strstr(p.wgsl, "return ((atomicLoad(&b0[i >> 2u]) >> ((i & 3u) * 8u)) & 0xffu) != 0u; }") != NULL);
  CHECK(strstr(p.wgsl, "@binding(1) var<storage, read> b2: array<u32>") != NULL);
  weft__webgpu_program_free(&p);
}

static void test_index_program(void) {
  /* gather over a [2, 3] walk: src moved along dim 1 by the index */
  weft__webgpu_index d = {.name = "gather", .mode = WEFT_WEBGPU_GATHER, .dtype = WEFT_INT32, .ndim = 2, .numel = 6,
                          .sizes = {2, 3}, .buffer = {1, 2, 3}, .offset = {0, 5, 2},
                          .strides = {{3, 1}, {4, 0}, {3, 1}}, .dim_stride = 1, .dim_size = 4};
  weft__webgpu_program p;
  CHECK(weft__webgpu_index_program("gather", &d, &p) == WEFT_OK);
  CHECK(strcmp(p.key, "index:gather:2:int32:t") == 0);
  CHECK_EQ_I64(p.nbuffers, 3);
  CHECK(strstr(p.wgsl, "var<storage, read_write> b0: array<u32>") != NULL);
  CHECK(strstr(p.wgsl, "if (ok) { v = bitcast<i32>(b1[o1 + u32(j) * p[12u]]); }") != NULL);
  /* numel, offsets, sizes, strides x3, dim_stride, dim_size, skipping, skip, alpha, src */
  static const uint32_t want[] = {6, 0, 5, 2, 2, 3, 3, 1, 4, 0, 3, 1, 1, 4, 0, 0, 0, 0};
  CHECK_EQ_I64(p.nparams, 18);
  for (int i = 0; i < 18; i++) CHECK_EQ_I64(p.params[i], want[i]);
  CHECK(p.grid[0] == 1 && p.grid[1] == 1);
  weft__webgpu_program_free(&p);

  /* float scatter-add: atomic words and a compare-exchange loop; a scalar source has no binding */
  d.mode = WEFT_WEBGPU_SCATTER_ADD;
  d.dtype = WEFT_FLOAT32;
  d.src_scalar = true;
  d.skipping = true;
  d.skip = 3;
  CHECK(weft__webgpu_index_program("scatter_add_", &d, &p) == WEFT_OK);
  CHECK(strcmp(p.key, "index:scatter_add:2:float32:s") == 0);
  CHECK_EQ_I64(p.nbuffers, 2);
  CHECK(strstr(p.wgsl, "array<atomic<u32>>") != NULL);
  CHECK(strstr(p.wgsl, "atomicCompareExchangeWeak(&b0[i], old, bitcast<u32>(bitcast<f32>(old) + v))") != NULL);
  CHECK_EQ_I64(p.params[14], 1); /* skipping */
  CHECK_EQ_I64(p.params[15], 3);
  weft__webgpu_program_free(&p);

  d.dim_size = 1LL << 32;
  CHECK(weft__webgpu_index_program("scatter_add_", &d, &p) == WEFT_NOT_IMPLEMENTED);
  CHECK_ERROR_HAS("scatter_add_: a webgpu tensor this large (2**32 elements or more) is not supported");
  weft_clear_error();
}

static void test_nll_program(void) {
  weft__webgpu_nll d = {.reduce = true, .mean = true, .has_weight = true, .n = 200, .c = 5, .k = 2,
                        .ignore_index = -100, .out = 1, .x = 2, .target = 3, .weight = 4, .target_offset = 7};
  weft__webgpu_program p;
  CHECK(weft__webgpu_nll_program("nll_loss", &d, &p) == WEFT_OK);
  CHECK(strcmp(p.key, "nll:forward:mean:w:f32") == 0);
  CHECK_EQ_I64(p.nbuffers, 4);
  CHECK(p.grid[0] == 1); /* the sum: one workgroup, a tree */
  CHECK(strstr(p.wgsl, "workgroupBarrier()") != NULL && strstr(p.wgsl, "sv[0] / sw[0]") != NULL);
  CHECK_EQ_I64(p.params[0], 400);
  CHECK_EQ_I64(p.params[4], 7);
  CHECK_EQ_I64((int32_t)p.params[7], -100);
  weft__webgpu_program_free(&p);
  d.backward = true, d.mean = false, d.reduce = false, d.has_weight = false;
  CHECK(weft__webgpu_nll_program("nll_loss_backward", &d, &p) == WEFT_OK);
  CHECK(strcmp(p.key, "nll:backward:none:-:f32") == 0);
  CHECK_EQ_I64(p.nbuffers, 3);
  CHECK(p.grid[0] == 7); /* 400 targets, 64 a workgroup */
  CHECK(strstr(p.wgsl, "let g = bitcast<f32>(gb[p[6] + i]);") != NULL);
  weft__webgpu_program_free(&p);
}

int main(void) {
  weft_init();
  test_inplace_map();
  test_index_program();
  test_nll_program();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
