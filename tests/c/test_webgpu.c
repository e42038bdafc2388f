/* The WebGPU device in a build without WebGPU (native, and wasm before
 * initWebGPU): the device and its dispatch keys exist, allocation is refused
 * with a message and leaks nothing, dtypes WGSL lacks are refused first, and
 * the CPU path is untouched. The GPU itself is tested in Chromium
 * (tests/browser/webgpu.test.mjs). */
#include "test.h"
#include "webgpu/webgpu.h"

static void test_device_names(void) {
  weft_device d;
  CHECK(strcmp(weft_device_name(WEFT_DEVICE_WEBGPU), "webgpu") == 0);
  CHECK(weft_device_from_name("webgpu", &d) == WEFT_OK && d == WEFT_DEVICE_WEBGPU);
  CHECK(weft_device_from_name("cuda", &d) == WEFT_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("Expected one of cpu, meta, webgpu device type at start of device string: cuda");
  weft_clear_error();
}

static void test_allocation_refused(void) {
  int64_t sizes[2] = {2, 3};
  weft_memory_stats before = weft_memory();
  weft_tensor* t = weft_empty(sizes, 2, WEFT_FLOAT32, WEFT_DEVICE_WEBGPU, WEFT_CONTIGUOUS_FORMAT);
  CHECK(t == NULL);
  CHECK(weft_last_status() == WEFT_NOT_IMPLEMENTED);
#ifdef __EMSCRIPTEN__
  CHECK_ERROR_HAS("no WebGPU device: call await wt.initWebGPU() first");
#else
  CHECK_ERROR_HAS("this is a native build of weft, which has no WebGPU device");
#endif
  weft_clear_error();
  /* empty_strided reaches the same refusal through its own WebGPU kernel */
  int64_t strides[2] = {1, 2};
  CHECK(weft_empty_strided(sizes, strides, 2, WEFT_INT32, WEFT_DEVICE_WEBGPU) == NULL);
  CHECK(weft_last_status() == WEFT_NOT_IMPLEMENTED);
  weft_clear_error();
  weft_memory_stats after = weft_memory();
  CHECK_EQ_I64(after.storages, before.storages);
  CHECK_EQ_I64(after.tensors, before.tensors);
  CHECK_EQ_I64(after.webgpu_bytes, 0);
}

static void test_dtypes_refused(void) {
  int64_t n = 4;
  CHECK(weft_empty(&n, 1, WEFT_INT64, WEFT_DEVICE_WEBGPU, WEFT_CONTIGUOUS_FORMAT) == NULL);
  CHECK(weft_last_status() == WEFT_TYPE_ERROR);
  CHECK_ERROR_HAS("empty: a webgpu tensor holds float32, int32 or bool; int64 is not available in WGSL "
                  "(convert it on the cpu first, e.g. x.to('int32'))");
  CHECK(weft_empty(&n, 1, WEFT_FLOAT64, WEFT_DEVICE_WEBGPU, WEFT_CONTIGUOUS_FORMAT) == NULL);
  CHECK_ERROR_HAS("float64 is not available in WGSL (convert it on the cpu first, e.g. x.to('float32'))");
  weft_clear_error();
}

/* Ops without a WebGPU kernel say so in the dispatcher's words; the CPU and
 * Meta paths are unchanged beside the new key. */
static void test_dispatch(void) {
  int64_t n = 3;
  weft_tensor* a = weft_full(&n, 1, 2.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* m = weft_empty(&n, 1, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* r = weft_add(a, a, weft_scalar_int(1));
  CHECK(r && weft_tensor_device(r) == WEFT_DEVICE_CPU && weft_tensor_get_double(r, 0) == 4.0);
  weft_tensor* rm = weft_add(m, m, weft_scalar_int(1));
  CHECK(rm && weft_tensor_device(rm) == WEFT_DEVICE_META);
  weft_tensor_release(r);
  weft_tensor_release(rm);
  weft_tensor_release(m);
  weft_tensor_release(a);
  /* a factory on the WebGPU key with no kernel there names the backend */
  CHECK(weft_rand(&n, 1, WEFT_FLOAT32, WEFT_DEVICE_WEBGPU) == NULL);
  CHECK_ERROR_HAS("with arguments from the 'WebGPU' backend");
  weft_clear_error();
  /* full has one (empty + fill_): it reaches the allocation's refusal */
  CHECK(weft_full(&n, 1, 1.0, WEFT_FLOAT32, WEFT_DEVICE_WEBGPU) == NULL);
  CHECK_ERROR_HAS("no WebGPU device");
  weft_clear_error();
}

/* The strided map family's program: key, bindings, conversions, parameter
 * words and grid, without a device (the WGSL compiles in the browser test). */
static void test_map_program(void) {
  weft__webgpu_map m = {.name = "copy", .expr = "a0", .compute = WEFT_FLOAT32, .result = WEFT_FLOAT32, .nin = 1,
                        .ndim = 2, .numel = 6, .sizes = {3, 2}, .dtype = {WEFT_BOOL, WEFT_FLOAT32},
                        .buffer = {5, 9}, .offset = {1, 4}, .strides = {{2, 1}, {1, 0}}};
  weft__webgpu_program p;
  CHECK(weft__webgpu_map_program("copy_", &m, &p) == WEFT_OK);
  CHECK(strcmp(p.key, "map:copy:2:float32:bool:float32") == 0);
  CHECK(strstr(p.wgsl, "var<storage, read_write> b0: array<atomic<u32>>") != NULL); /* bool out: word atomics */
  CHECK(strstr(p.wgsl, "fn ld1(i: u32) -> f32 { return bitcast<f32>(b1[i]); }") != NULL);
  CHECK(strstr(p.wgsl, "st(o0, (r != 0.0));") != NULL);
  CHECK(strstr(p.wgsl, "@compute @workgroup_size(64)") != NULL);
  CHECK_EQ_I64(p.nbuffers, 2);
  CHECK_EQ_I64(p.buffers[0], 5);
  CHECK_EQ_I64(p.buffers[1], 9);
  /* numel, offsets, sizes, strides per operand, scalar slots */
  static const uint32_t want[] = {6, 1, 4, 3, 2, 2, 1, 1, 0, 0, 0};
  CHECK_EQ_I64(p.nparams, 11);
  for (int i = 0; i < 11; i++) CHECK_EQ_I64(p.params[i], want[i]);
  CHECK(p.grid[0] == 1 && p.grid[1] == 1 && p.grid[2] == 1);
  weft__webgpu_program_free(&p);

  /* past 65535 workgroups the grid goes 2-D; int32 <- bool converts with select */
  weft__webgpu_map big = {.name = "copy", .expr = "a0", .compute = WEFT_BOOL, .result = WEFT_BOOL, .nin = 1,
                          .ndim = 1, .numel = 65535LL * 64 + 1, .sizes = {65535LL * 64 + 1},
                          .dtype = {WEFT_INT32, WEFT_BOOL}, .strides = {{1}, {1}}};
  CHECK(weft__webgpu_map_program("copy_", &big, &p) == WEFT_OK);
  CHECK(p.grid[0] == 65535 && p.grid[1] == 2);
  CHECK(strstr(p.wgsl, "st(o0, select(0, 1, r));") != NULL);
  CHECK(strstr(p.wgsl, "((b1[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu) != 0u") != NULL);
  weft__webgpu_program_free(&p);

  /* 2**32 elements do not fit the u32 index */
  big.numel = big.sizes[0] = 1LL << 32;
  CHECK(weft__webgpu_map_program("copy_", &big, &p) == WEFT_NOT_IMPLEMENTED);
  CHECK_ERROR_HAS("copy_: a webgpu tensor this large (2**32 elements or more) is not supported");
  weft_clear_error();
}

int main(void) {
  weft_init();
  test_device_names();
  test_allocation_refused();
  test_dtypes_refused();
  test_dispatch();
  test_map_program();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
