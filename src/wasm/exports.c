/* The JS <-> wasm ABI (this comment), and its entry points that are not
 * operators: build id, the scratch area, name lookups, tensor metadata,
 * memory statistics, threads, the seed. Every operator, the factories and
 * views js/core.js calls included, goes through exports_dispatch.c.
 *
 * wasm32; every signature uses only i32 and f64, so no BigInt and no i64
 * legalization is involved:
 * - Handles: a weft_tensor* is a JS number. Each JS Tensor owns one reference
 *   and gives it back with weft_tensor_release. NULL (0) means failure.
 * - Operators: one typed entry point weft_wasm_op_<cname> per op-table line
 *   (src/ops/ops.def, kinds in src/dispatch/opgen.h), listed with its kinds by
 *   weft_wasm_ops_json(). It takes one parameter per (KIND, name):
 *       TENSOR, MTENSOR, OPT_TENSOR  a handle (0 = None)
 *       TENSOR_LIST, OPT_TENSOR_LIST f64*: the length, then the handles (0 = None in a
 *                                    Tensor?[]) (an argument slot)
 *       INT, OPT_INT                 f64 (None = -2**63)
 *       INT_LIST                     f64*: the length, then the values (an argument slot)
 *       DOUBLE                       f64
 *       OPT_DOUBLE                   f64 (None = NaN)
 *       BOOL                         i32
 *       SCALAR                       f64*: the tag (0 int, 1 float, 2 bool), then the
 *                                    value (an argument slot)
 *       OPT_SCALAR                   the same, or 0 (NULL) for None
 *       DTYPE, MEMORY_FORMAT         i32 (-1 = None)
 *       DEVICE                       i32
 *       STRING                       char*
 *   TENSOR lines return a new reference (0 on error), STATUS lines a status.
 *   TENSOR2 lines (two Tensor returns) return the first new reference (0 on
 *   error); JS then takes the second from weft_wasm_op_second().
 *   TENSOR_LIST lines (`-> Tensor[]`) return a malloc'd array of new
 *   references (0 on error) whose length JS takes from
 *   weft_wasm_op_list_len(); JS wraps each handle and frees the array.
 *   One parameter per argument: JS builds each caller from one converter per
 *   argument (js/ops.js).
 *   The same ops are callable boxed, by name: weft_wasm_push_* then
 *   weft_wasm_call (exports_dispatch.c); an int list pushed there has the
 *   same layout, of any length. The returns are then on the stack, one value
 *   per schema return (two tensors for TENSOR2), read by position.
 * - Integers that are int64_t in C (dims, indices, offsets, sizes) arrive as
 *   f64. JS has already checked they are integers; C converts with
 *   saturation, so 2**63 and Infinity become INT64_MAX (slice's "to the end").
 *   Enums and flags (dtype, device, format, bool) are i32.
 * - The scratch area, weft_wasm_scratch(), in f64 indices / byte offsets:
 *       f64 [ 0, 68)     ARGS  4 argument slots of 17 f64 (INT_LIST, TENSOR_LIST, SCALAR) for one call
 *       f64 [68, 116)    OUT   results of weft_wasm_meta and weft_wasm_memory
 *       u8  [928, 1184)  STR   a NUL-terminated UTF-8 name (dtype, format, device)
 *   A slot holds a list of up to WEFT_MAX_DIMS values (longer lists, of ints or tensors, go boxed,
 *   from malloc'd memory). The area is a single static buffer: only the thread
 *   that owns the JS API uses it.
 * - Errors: a NULL handle, a negative enum or a non-zero status. JS then reads
 *   weft_last_status(), weft_status_name(status) and weft_last_error(), throws
 *   a WeftError, and calls weft_clear_error(). */
#include <stddef.h>
#include <stdint.h>

#include <emscripten/emscripten.h>

#include "weft/parallel.h"
#include "weft/weft.h"
#include "parallel/worker_limit.h"
#include "webgpu/webgpu.h"

#define WEFT_WASM_ARG_SLOTS 4
#define WEFT_WASM_STR_BYTES 256

static struct wasm_scratch {
  double args[WEFT_WASM_ARG_SLOTS][1 + WEFT_MAX_DIMS];
  double out[48];
  char str[WEFT_WASM_STR_BYTES];
} scratch;

_Static_assert(WEFT_MAX_DIMS == 16 && offsetof(struct wasm_scratch, out) == 68 * 8 &&
                   offsetof(struct wasm_scratch, str) == 928,
               "js/core.js hard-codes the scratch layout");

#ifndef WEFT_BUILD_ID
#define WEFT_BUILD_ID "unknown"
#endif

/* "<package version>+<git short hash>", the same string scripts/build.sh
 * writes into dist/build-id.js; js/loader.js refuses a mismatch. */
EMSCRIPTEN_KEEPALIVE const char* weft_build_id(void) {
  return WEFT_BUILD_ID;
}

EMSCRIPTEN_KEEPALIVE void* weft_wasm_scratch(void) {
  return &scratch;
}

/* ---- names: read scratch.str, return the enum or -1 with the error set ---- */

EMSCRIPTEN_KEEPALIVE int weft_wasm_dtype_from_name(void) {
  scratch.str[WEFT_WASM_STR_BYTES - 1] = '\0';
  weft_dtype d;
  return weft_dtype_from_name(scratch.str, &d) == WEFT_OK ? (int)d : -1;
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_memory_format_from_name(void) {
  scratch.str[WEFT_WASM_STR_BYTES - 1] = '\0';
  weft_memory_format f;
  return weft_memory_format_from_name(scratch.str, &f) == WEFT_OK ? (int)f : -1;
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_device_from_name(void) {
  scratch.str[WEFT_WASM_STR_BYTES - 1] = '\0';
  weft_device d;
  return weft_device_from_name(scratch.str, &d) == WEFT_OK ? (int)d : -1;
}

/* ---- metadata and statistics, written to scratch.out ---- */

/* out = [ndim, numel, storage_offset, dtype, device, element_size, 0, 0,
 *        sizes[0..16), strides[0..16)] */
EMSCRIPTEN_KEEPALIVE void weft_wasm_meta(const weft_tensor* t) {
  int64_t nd = weft_tensor_dim(t);
  const int64_t* sz = weft_tensor_sizes(t);
  const int64_t* st = weft_tensor_strides(t);
  scratch.out[0] = (double)nd;
  scratch.out[1] = (double)weft_tensor_numel(t);
  scratch.out[2] = (double)weft_tensor_storage_offset(t);
  scratch.out[3] = (double)weft_tensor_dtype(t);
  scratch.out[4] = (double)weft_tensor_device(t);
  scratch.out[5] = (double)weft_tensor_element_size(t);
  for (int64_t i = 0; i < nd; i++) {
    scratch.out[8 + i] = (double)sz[i];
    scratch.out[8 + WEFT_MAX_DIMS + i] = (double)st[i];
  }
}

/* out = [tensors, storages, bytes_in_use, peak_bytes, meta_bytes, webgpu_bytes] */
EMSCRIPTEN_KEEPALIVE void weft_wasm_memory(void) {
  weft_memory_stats m = weft_memory();
  scratch.out[0] = (double)m.tensors;
  scratch.out[1] = (double)m.storages;
  scratch.out[2] = (double)m.bytes_in_use;
  scratch.out[3] = (double)m.peak_bytes;
  scratch.out[4] = (double)m.meta_bytes;
  scratch.out[5] = (double)m.webgpu_bytes;
}

/* The GPUBuffer handle of a webgpu tensor's storage (js/webgpu.js reads
 * it); 0 for other devices. */
EMSCRIPTEN_KEEPALIVE int weft_wasm_webgpu_buffer(const weft_tensor* t) {
  return weft_tensor_device(t) == WEFT_DEVICE_WEBGPU ? weft__webgpu_buffer_of(t) : 0;
}

/* ---- threads and random numbers ---- */

EMSCRIPTEN_KEEPALIVE int weft_wasm_set_num_threads(int n) {
  return (int)weft_set_num_threads(n);
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_get_num_threads(void) {
  return weft_get_num_threads();
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_max_threads(void) {
  return weft_max_threads();
}

EMSCRIPTEN_KEEPALIVE void weft_wasm_set_worker_limit(int n) {
  weft_set_worker_limit(n);
}

/* The seed is split in two u32 halves so the whole uint64 range survives. */
EMSCRIPTEN_KEEPALIVE void weft_wasm_manual_seed(uint32_t hi, uint32_t lo) {
  weft_manual_seed(((uint64_t)hi << 32) | lo);
}

/* ---- allocation-failure injection (tests/js/fault-injection.test.mjs) ----
 * The library's fail-the-Nth allocator (include/weft/alloc.h): tensor data
 * and the tensor and storage structs all count. Storages keep the allocator
 * they were made with, so it lives as long as the module. */

static weft_fail_nth_allocator injecting;

/* n >= 1: install, failing the nth allocation from now; 0: back to the default allocator. */
EMSCRIPTEN_KEEPALIVE void weft_wasm_fail_allocation(int n) {
  if (!injecting.allocator.alloc) weft_fail_nth_allocator_init(&injecting);
  injecting.countdown = n > 0 ? n : 0;
  weft_set_allocator(n > 0 ? &injecting.allocator : NULL);
}

/* Failures injected since the module loaded. */
EMSCRIPTEN_KEEPALIVE double weft_wasm_injected_failures(void) {
  return (double)injecting.injected;
}
