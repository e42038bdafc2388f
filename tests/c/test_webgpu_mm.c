/* The tiled GEMM family's programs (src/webgpu/wgsl_gemm.c, wgsl_conv.c) and
 * the pools' (wgsl_pool.c) without a device: keys, bindings, parameter words,
 * grids and the refusals of sizes past the shader's u32 indices. The WGSL
 * itself compiles and runs in Chromium (tests/browser/webgpu-mm.test.mjs);
 * the ops on a webgpu tensor refuse natively as allocation does. */
#include "test.h"
#include "webgpu/webgpu.h"

static void test_matmul_program(void) {
  /* C [2 x 130 x 70] = 2 A B^T + 0.5 D, A transposed through its strides */
  weft__webgpu_matmul m = {.dtype = WEFT_FLOAT32, .batch = 2, .m = 130, .n = 70, .k = 9,
                           .c = {3, 0, 9100, 70, 1}, .a = {4, 7, 1170, 1, 130}, .b = {5, 0, 0, 1, 9},
                           .d = {6, 0, 0, 0, 1}, .has_d = true, .alpha = 0x40000000u, .beta = 0x3f000000u};
  weft__webgpu_program p;
  CHECK(weft__webgpu_matmul_program("addmm", &m, &p) == WEFT_OK);
  CHECK(strcmp(p.key, "gemm:matmul:d:float32") == 0);
  CHECK(strstr(p.wgsl, "alias T = f32;") != NULL);
  CHECK(strstr(p.wgsl, "var<workgroup> ta: array<array<T, 64>, 16>;") != NULL);
  CHECK(strstr(p.wgsl, "@compute @workgroup_size(16, 16, 1)") != NULL);
  CHECK(strstr(p.wgsl, "workgroupBarrier();") != NULL);
  CHECK(strstr(p.wgsl, "bitcast<T>(p[17]) * d") != NULL);
  CHECK_EQ_I64(p.nbuffers, 4);
  CHECK(p.buffers[0] == 3 && p.buffers[1] == 4 && p.buffers[2] == 5 && p.buffers[3] == 6);
  /* batch, m, n, k, then A, B, C (offset, batch, row, column strides), alpha, beta, D */
  static const uint32_t want[] = {2, 130, 70, 9, 7, 1170, 1, 130, 0, 0, 1, 9, 0, 9100, 70, 1,
                                  0x40000000u, 0x3f000000u, 0, 0, 0, 1};
  CHECK_EQ_I64(p.nparams, 22);
  for (int i = 0; i < 22; i++) CHECK_EQ_I64(p.params[i], want[i]);
  CHECK(p.grid[0] == 2 && p.grid[1] == 3 && p.grid[2] == 2); /* 64 x 64 tiles by batch */
  CHECK(p.workgroup[0] == 16 && p.workgroup[1] == 16 && p.workgroup[2] == 1);
  weft__webgpu_program_free(&p);

  /* int32 without D: its own pipeline; an operand past u32 is refused */
  m.dtype = WEFT_INT32, m.has_d = false;
  CHECK(weft__webgpu_matmul_program("mm", &m, &p) == WEFT_OK);
  CHECK(strcmp(p.key, "gemm:matmul:int32") == 0 && strstr(p.wgsl, "alias T = i32;") != NULL);
  CHECK(strstr(p.wgsl, "r3") == NULL);
  weft__webgpu_program_free(&p);
  m.a.sb = 1LL << 32;
  CHECK(weft__webgpu_matmul_program("mm", &m, &p) == WEFT_NOT_IMPLEMENTED);
  CHECK_ERROR_HAS("mm: a webgpu tensor this large (2**32 elements or more) is not supported");
  weft_clear_error();
  /* more than 65535 row tiles */
  m.a.sb = 0, m.m = 65536LL * 64, m.batch = 1, m.a.sr = 0, m.c.sr = 0;
  CHECK(weft__webgpu_matmul_program("mm", &m, &p) == WEFT_NOT_IMPLEMENTED);
  CHECK_ERROR_HAS("passes WebGPU's 65535 workgroups a dimension");
  weft_clear_error();
}

static void test_conv_program(void) {
  /* x [2, 4, 7, 6] NCHW, w [6, 2, 3, 3], groups 2, stride 2, padding 1 -> y [2, 6, 4, 3] */
  weft__webgpu_conv d = {.kind = WEFT_WEBGPU_CONV_FORWARD, .n = 2, .c = 4, .h = 7, .w = 6, .cout = 6, .kh = 3, .kw = 3,
                         .sh = 2, .sw = 2, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .groups = 2, .ho = 4, .wo = 3,
                         .x = {1, 0, {168, 42, 6, 1}}, .wt = {2, 0, {18, 9, 3, 1}}, .y = {3, 0, {72, 12, 3, 1}},
                         .bias = {4, 0, {1, 0, 0, 0}}, .has_bias = true};
  weft__webgpu_program p;
  CHECK(weft__webgpu_conv_program("conv2d", &d, &p) == WEFT_OK);
  CHECK(strcmp(p.key, "gemm:conv:fwd:b:float32") == 0);
  CHECK(p.nbuffers == 4 && p.buffers[0] == 3 && p.buffers[1] == 1 && p.buffers[2] == 2 && p.buffers[3] == 4);
  /* per group: (n ho wo) = 24 rows, 3 output channels, k = 2 * 9 */
  CHECK(p.params[0] == 2 && p.params[1] == 24 && p.params[2] == 3 && p.params[3] == 18);
  CHECK(p.params[4 + 13] == 2 && p.params[4 + 14] == 3); /* channels per group in and out */
  CHECK(strstr(p.wgsl, "fn xin(") != NULL && strstr(p.wgsl, "r3[p[TB] + co * p[TB + 1u]]") != NULL);
  CHECK(p.grid[0] == 1 && p.grid[1] == 1 && p.grid[2] == 2);
  weft__webgpu_program_free(&p);

  /* the gradients: input (n h w) x c/g over (cout/g kh kw); weight cout/g x (c/g kh kw) over (n ho wo); bias */
  const weft__webgpu_conv_kind kinds[3] = {WEFT_WEBGPU_CONV_GRAD_INPUT, WEFT_WEBGPU_CONV_GRAD_WEIGHT,
                                           WEFT_WEBGPU_CONV_GRAD_BIAS};
  const char* keys[3] = {"gemm:conv:dx:float32", "gemm:conv:dw:float32", "gemm:conv:db:float32"};
  const uint32_t mnk[3][4] = {{2, 84, 2, 27}, {2, 3, 18, 24}, {1, 6, 1, 24}};
  const int32_t out[3] = {1, 2, 4};
  for (int i = 0; i < 3; i++) {
    d.kind = kinds[i];
    CHECK(weft__webgpu_conv_program("convolution_backward", &d, &p) == WEFT_OK);
    CHECK(strcmp(p.key, keys[i]) == 0);
    CHECK(p.buffers[0] == out[i]);
    for (int j = 0; j < 4; j++) CHECK_EQ_I64(p.params[j], mnk[i][j]);
    weft__webgpu_program_free(&p);
  }
}

static void test_pool_program(void) {
  /* max 3x3 stride 2 padding 1 with indices over a channels_last [1, 3, 7, 7] */
  weft__webgpu_pool d = {.kind = WEFT_WEBGPU_POOL_MAX, .indices = true, .n = 1, .c = 3, .h = 7, .w = 7, .oh = 4,
                         .ow = 4, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1, .pw = 1, .dh = 1, .dw = 1,
                         .x = {1, 0, {147, 1, 21, 3}}, .y = {2, 0, {48, 1, 12, 3}}, .idx = {3, 0, {48, 1, 12, 3}}};
  weft__webgpu_program p;
  CHECK(weft__webgpu_pool_program("max_pool2d_with_indices", &d, &p) == WEFT_OK);
  CHECK(strcmp(p.key, "pool:max:fwd:idx") == 0);
  CHECK(p.nbuffers == 3 && p.buffers[0] == 2 && p.buffers[1] == 3 && p.buffers[2] == 1);
  CHECK(strstr(p.wgsl, "var<storage, read_write> oi: array<u32>") != NULL);
  CHECK(p.params[0] == 48 && p.grid[0] == 1);
  weft__webgpu_program_free(&p);
  /* backward: one invocation per input element, reading grad_output and the indices */
  d.backward = true;
  CHECK(weft__webgpu_pool_program("max_pool2d_with_indices_backward", &d, &p) == WEFT_OK);
  CHECK(strcmp(p.key, "pool:max:back") == 0);
  CHECK(p.nbuffers == 3 && p.buffers[0] == 1 && p.buffers[1] == 2 && p.buffers[2] == 3);
  CHECK(p.params[0] == 147 && p.grid[0] == 3);
  weft__webgpu_program_free(&p);
  d.kind = WEFT_WEBGPU_POOL_ADAPTIVE;
  CHECK(weft__webgpu_pool_program("_adaptive_avg_pool2d_backward", &d, &p) == WEFT_OK);
  CHECK(p.nbuffers == 2 && strstr(p.wgsl, "fn divisor(") != NULL);
  weft__webgpu_program_free(&p);
}

/* natively the ops reach the allocation's refusal, not a trap */
static void test_native_refusal(void) {
  int64_t sizes[2] = {2, 2};
  CHECK(weft_empty(sizes, 2, WEFT_FLOAT32, WEFT_DEVICE_WEBGPU, WEFT_CONTIGUOUS_FORMAT) == NULL);
  weft_clear_error();
}

int main(void) {
  weft_init();
  test_matmul_program();
  test_conv_program();
  test_pool_program();
  test_native_refusal();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
